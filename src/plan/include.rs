//! `--include`: a kas file the generated kas file includes after rtbuild's own, either one of
//! meta-qcom's `ci/NAME.yml` files or a local kas file, checked when the plan is made.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::PlanError;
use super::values::ConfPath;
use crate::files::limits::LOCAL_LIMIT;

/// One `--include`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum Include {
    /// One of meta-qcom's own kas files, named as in the repository (`ci/performance.yml`).
    MetaQcom(String),
    /// A local kas file: its absolute path with symlinks resolved (letters, digits and
    /// `-_./+@%,` only), a regular file holding a kas `header:`.
    Local(ConfPath),
}

impl Include {
    /// What `rtbuild-plan.json` records: the meta-qcom name, or the local file's path.
    pub(crate) fn recorded(&self) -> String {
        match self {
            Include::MetaQcom(name) => name.clone(),
            Include::Local(path) => path.to_string(),
        }
    }
}

/// Whether `text` names a meta-qcom kas file (`ci/NAME.yml`, one path component under `ci/`),
/// rather than a local file. A local file under a folder named `ci` is written `./ci/NAME.yml`.
pub(crate) fn names_meta_qcom_file(text: &str) -> bool {
    text.trim().strip_prefix("ci/").is_some_and(|name| !name.contains('/'))
}

/// Checks one `--include`: a meta-qcom name made only of plain characters, or a local kas file
/// (relative paths are relative to the current folder; the project file makes its own relative
/// to itself).
pub(super) fn check(text: &str) -> Result<Include, PlanError> {
    if names_meta_qcom_file(text) {
        return meta_qcom_file(text).map(Include::MetaQcom);
    }
    local_file(Path::new(text)).map(Include::Local)
}

/// `ci/NAME.yml`, named as in the repository (no `..`, no absolute path, plain characters), so
/// it can only ever name a file of meta-qcom's `ci/`.
fn meta_qcom_file(text: &str) -> Result<String, PlanError> {
    let name = text.trim().strip_prefix("ci/").unwrap_or("");
    let plain = !name.is_empty()
        && name.ends_with(".yml")
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if plain {
        Ok(format!("ci/{name}"))
    } else {
        Err(PlanError::Include(text.chars().take(80).collect()))
    }
}

/// A local kas file: `.yml`/`.yaml`, a regular file of at most 1 MiB read through
/// `base::input`, YAML whose top level is a mapping with a `header:` carrying a numeric
/// `version`. Its resolved path must be plain, as every path rtbuild writes into kas YAML.
fn local_file(path: &Path) -> Result<ConfPath, PlanError> {
    let shown = || one_line(&path.to_string_lossy());
    if path.extension().is_none_or(|e| e != "yml" && e != "yaml") {
        return Err(PlanError::IncludeName { path: shown() });
    }
    let text = crate::files::input::read_to_string(path, LOCAL_LIMIT)
        .map_err(|cause| PlanError::IncludeUnreadable { cause })?;
    if let Err(reason) = kas_header(&text) {
        return Err(PlanError::IncludeNotKas { path: shown(), reason: one_line(&reason) });
    }
    let real = std::fs::canonicalize(path)
        .map_err(|err| PlanError::IncludeNotAFile { message: format!("`{}`: {err}", shown()) })?;
    Ok(ConfPath::new("--include path", &real)?)
}

/// `text` on one line: control characters escaped, at most 200 characters.
pub(super) fn one_line(text: &str) -> String {
    crate::text::escape_controls(text).chars().take(200).collect()
}

/// Whether `text` is a kas configuration: a YAML mapping with `header: version: N`.
fn kas_header(text: &str) -> Result<(), String> {
    let doc: serde_yaml::Value =
        crate::text::yaml::from_str(text).map_err(|e| format!("not YAML ({e})"))?;
    let version = doc
        .as_mapping()
        .ok_or("its top level is not a mapping")?
        .get("header")
        .ok_or("it has no `header:`")?
        .get("version")
        .ok_or("its `header:` has no `version:`")?;
    match version.as_u64() {
        Some(v) if v >= 1 => Ok(()),
        _ => Err("its `header: version:` is not a kas format number".to_string()),
    }
}

/// The local includes among `includes`, by path.
pub(crate) fn local_paths(includes: &[Include]) -> Vec<PathBuf> {
    includes
        .iter()
        .filter_map(|i| match i {
            Include::Local(path) => Some(path.as_path().to_path_buf()),
            Include::MetaQcom(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_qcom_names_and_local_paths_are_told_apart() {
        assert!(names_meta_qcom_file("ci/performance.yml"));
        assert!(!names_meta_qcom_file("./ci/performance.yml"));
        assert!(!names_meta_qcom_file("ci/sub/x.yml"));
        assert!(!names_meta_qcom_file("extra.yml"));
        assert!(!names_meta_qcom_file("/abs/ci/x.yml"));
    }

    #[test]
    fn a_kas_file_needs_a_header_with_a_version() {
        assert!(kas_header("header:\n  version: 14\n").is_ok());
        for (text, why) in [
            ("- a\n- b\n", "top level is not a mapping"),
            ("machine: x\n", "no `header:`"),
            ("header:\n  includes: []\n", "no `version:`"),
            ("header:\n  version: fourteen\n", "not a kas format number"),
            ("header: [\n", "not YAML"),
        ] {
            let err = kas_header(text).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }
}
