//! The files a plan carries into the generated layer: `.cfg` fragments and patches, read and
//! checked when the plan is made.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::PlanError;
use super::values::LayerFileName;
use crate::formats::kconfig_lines::{self as kconfig, Line, Setting, Value};

/// A user's kernel config fragment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Fragment {
    pub name: LayerFileName,
    pub source: PathBuf,
    pub settings: Vec<Setting>,
    /// The file's bytes, copied into the layer as they are.
    #[serde(skip)]
    pub contents: Vec<u8>,
}

/// A kernel patch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Patch {
    pub name: LayerFileName,
    pub source: PathBuf,
    #[serde(skip)]
    pub contents: Vec<u8>,
}

fn file_name(path: &Path) -> Result<LayerFileName, PlanError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(LayerFileName::new(&name)?)
}

/// Reads a fragment or patch (`what`), refusing what is not a regular file by what it is.
fn read(path: &Path, what: &'static str) -> Result<Vec<u8>, PlanError> {
    use crate::files::input;
    input::read(path, input::TEXT_LIMIT).map_err(|cause| PlanError::NotAFile { what, cause })
}

/// Whether nothing at all is at `path` (a dangling symlink is something: [`read`] names it).
fn absent(path: &Path) -> bool {
    path.symlink_metadata().is_err()
}

pub(super) fn read_fragments(paths: &[PathBuf]) -> Result<Vec<Fragment>, PlanError> {
    paths.iter().map(|path| read_fragment(path)).collect()
}

fn read_fragment(path: &Path) -> Result<Fragment, PlanError> {
    if path.extension().is_none_or(|e| e != "cfg") {
        return Err(PlanError::FragmentNotCfg { path: path.to_path_buf() });
    }
    if absent(path) {
        return Err(PlanError::FragmentMissing { path: path.to_path_buf() });
    }
    let name = file_name(path)?;
    let contents = read(path, "fragment")?;
    let text = String::from_utf8_lossy(&contents);
    let mut settings = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = kconfig::parse_line(raw).map_err(|source| PlanError::FragmentLine {
            path: path.to_path_buf(),
            line: index + 1,
            cause: source,
        })?;
        if let Line::Setting(setting) = line {
            if setting.symbol.as_str() == "CONFIG_PREEMPT_RT" && setting.value != Value::Yes {
                return Err(PlanError::PreemptRtDisabled {
                    what: format!("fragment {}:{}", path.display(), index + 1),
                    setting: setting.to_string(),
                });
            }
            settings.push(setting);
        }
    }
    if settings.is_empty() {
        return Err(PlanError::FragmentEmpty { path: path.to_path_buf() });
    }
    Ok(Fragment { name, source: path.to_path_buf(), settings, contents })
}

pub(super) fn read_patches(paths: &[PathBuf]) -> Result<Vec<Patch>, PlanError> {
    paths.iter().map(|path| read_patch(path)).collect()
}

fn read_patch(path: &Path) -> Result<Patch, PlanError> {
    if path.extension().is_none_or(|e| e != "patch" && e != "diff") {
        return Err(PlanError::PatchName { path: path.to_path_buf() });
    }
    if absent(path) {
        return Err(PlanError::PatchMissing { path: path.to_path_buf() });
    }
    let name = file_name(path)?;
    let contents = read(path, "patch")?;
    let text = String::from_utf8_lossy(&contents);
    let has_headers =
        text.lines().any(|l| l.starts_with("--- ")) && text.lines().any(|l| l.starts_with("+++ "));
    if !has_headers {
        return Err(PlanError::NotAPatch { path: path.to_path_buf() });
    }
    Ok(Patch { name, source: path.to_path_buf(), contents })
}

/// The layer keeps every input by file name, so two inputs may not share one; nor may an input
/// take the name of rtbuild's own fragment.
pub(super) fn check_unique_names(
    fragments: &[Fragment],
    patches: &[Patch],
) -> Result<(), PlanError> {
    let reserved = Path::new(crate::plan::layer_names::RT_FRAGMENT_NAME);
    let mut seen: Vec<(&LayerFileName, &Path)> = Vec::new();
    let names = fragments
        .iter()
        .map(|f| (&f.name, f.source.as_path()))
        .chain(patches.iter().map(|p| (&p.name, p.source.as_path())));
    for (name, source) in names {
        if name.as_str() == crate::plan::layer_names::RT_FRAGMENT_NAME {
            return Err(PlanError::DuplicateName {
                name: name.to_string(),
                first: reserved.to_path_buf(),
                second: source.to_path_buf(),
            });
        }
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
            return Err(PlanError::DuplicateName {
                name: name.to_string(),
                first: first.to_path_buf(),
                second: source.to_path_buf(),
            });
        }
        seen.push((name, source));
    }
    Ok(())
}
