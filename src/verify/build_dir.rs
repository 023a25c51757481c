//! A BitBake build folder: the kernel's `.config` under
//! `tmp*/work/<arch>/<kernel-recipe>/<ver>/build/`, or the
//! `tmp*/work-shared/<machine>/kernel-build-artifacts/` copy when `rm_work` has emptied the
//! former; the kernel source `tmp*/work-shared/<machine>/kernel-source` (its Kconfig files explain
//! a dropped option); the image manifest `tmp*/deploy/images/<machine>/*.rootfs.manifest` (for
//! `rt-tests`); and, when present, a `bitbake -e` dump for `KERNEL_CMDLINE_EXTRA`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::plan::{Expectations, KERNEL_RECIPE};
use crate::verify::kconfig::KernelConfig;

use super::error::VerifyError;
use super::evidence::{Evidence, Found};
use super::files;

/// The names of a `bitbake -e` dump that `verify` reads from the build folder.
pub(crate) const BITBAKE_ENV_FILES: [&str; 2] = ["bitbake-env.txt", "bitbake-e.txt"];

/// Whether `dir` looks like a build folder (`TOPDIR` or `TMPDIR`).
pub(super) fn is_build_dir(dir: &Path) -> bool {
    !tmp_dirs(dir).is_empty()
}

/// `TMPDIR` candidates: `dir` itself when it has `work/`, `work-shared/` or `deploy/images/`, else its `tmp*`
/// children (and those of `dir/build`, kas's default build folder).
fn tmp_dirs(dir: &Path) -> Vec<PathBuf> {
    let is_tmp = |d: &Path| {
        d.join("work").is_dir()
            || d.join("work-shared").is_dir()
            || d.join("deploy/images").is_dir()
    };
    if is_tmp(dir) {
        return vec![dir.to_path_buf()];
    }
    let mut found = Vec::new();
    for parent in [dir.to_path_buf(), dir.join("build")] {
        for child in children(&parent) {
            let name =
                child.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.starts_with("tmp") && is_tmp(&child) {
                found.push(child);
            }
        }
    }
    found
}

fn children(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

fn newest(paths: Vec<PathBuf>) -> Option<PathBuf> {
    paths.into_iter().max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
}

/// Evidence from a build folder. `expected` narrows the search to its recipe, machine and image.
pub(super) fn evidence(
    dir: &Path,
    expected: Option<&Expectations>,
) -> Result<Evidence, VerifyError> {
    let recipe = expected.map_or(KERNEL_RECIPE, |e| e.kernel_recipe.as_str());
    let machine = expected.map(|e| e.machine.as_str());
    let tmps = tmp_dirs(dir);
    let mut work = Vec::new();
    let mut shared = Vec::new();
    let mut sources = Vec::new();
    for tmp in &tmps {
        for arch in children(&tmp.join("work")) {
            for version in children(&arch.join(recipe)) {
                let config = version.join("build/.config");
                if config.is_file() {
                    work.push(config);
                }
            }
        }
        for m in children(&tmp.join("work-shared")) {
            let config = m.join("kernel-build-artifacts/.config");
            let wanted = machine.is_none_or(|want| m.ends_with(want));
            if config.is_file() && wanted {
                shared.push(config);
            }
            if wanted && m.join("kernel-source/Kconfig").is_file() {
                sources.push(m.join("kernel-source"));
            }
        }
    }
    let (work_count, shared_count) = (work.len(), shared.len());
    let dot_config = newest(work).or_else(|| newest(shared));
    let deployed = super::deployed::evidence(&tmps, expected)?;
    let mut evidence = match (deployed, &dot_config) {
        (Some(deployed), config) => shipped(deployed, config.as_deref())?,
        (None, Some(config_path)) => {
            let data = files::read(config_path)?;
            let mut evidence = files::config_evidence(config_path, &data)?;
            if work_count + shared_count > 1 {
                evidence.notes.push(format!(
                    "{} kernel configs found; read the newest, {}",
                    work_count + shared_count,
                    config_path.display()
                ));
            }
            evidence.kernel_from = Some(format!("build folder .config {}", config_path.display()));
            evidence
        }
        (None, None) => {
            return Err(VerifyError::NoKernel {
                path: dir.to_path_buf(),
                hint: format!(
                    "looked for tmp*/deploy/images/{m}/ (qcomflash, Image, SBOM), \
                     tmp*/work/*/{recipe}/*/build/.config and \
                     tmp*/work-shared/{m}/kernel-build-artifacts/.config; has the kernel been built?",
                    m = machine.unwrap_or("*")
                ),
            });
        }
    };
    evidence.kind = "build folder".to_string();
    evidence.kernel_source = newest(sources);
    if let Some(workdir) = dot_config.as_deref().and_then(Path::parent).and_then(Path::parent) {
        evidence.fragments = recipe_fragments(workdir);
    }
    if let Some(manifest) = find_manifest(&tmps, expected) {
        let text = files::read_text(&manifest)?;
        evidence.packages =
            Some(Found::new(manifest_packages(&text), manifest.display().to_string()));
    }
    for name in BITBAKE_ENV_FILES {
        let path = dir.join(name);
        if path.is_file() {
            let text = files::read_text(&path)?;
            if let Some(value) = bitbake_var(&text, "KERNEL_CMDLINE_EXTRA") {
                let from = format!("KERNEL_CMDLINE_EXTRA in {}", path.display());
                evidence.cmdline = Some(Found::new(value, from));
            }
            break;
        }
    }
    Ok(evidence)
}

/// The deployed kernel's evidence, with the build folder's `.config` used only when it is
/// proven to be that kernel's: the same config digest (or, from an SBOM, which keeps the
/// settings but not the file, the same settings).
fn shipped(mut deployed: Evidence, dot_config: Option<&Path>) -> Result<Evidence, VerifyError> {
    let what = deployed
        .config
        .as_ref()
        .map(|c| c.from.clone())
        .or_else(|| deployed.version.as_ref().map(|v| v.from.clone()))
        .unwrap_or_default();
    deployed.kernel_from = Some(format!("deployed {} ({what})", deployed.kind));
    let Some(path) = dot_config else { return Ok(deployed) };
    let data = files::read(path)?;
    let local = KernelConfig::read(data.as_slice())
        .map_err(|source| VerifyError::Config { path: path.to_path_buf(), cause: source })?;
    let note = match &deployed.config {
        Some(shipped) if shipped.value.sha256() == local.sha256() => format!(
            "the build folder's {} is the deployed kernel's (same config digest {})",
            path.display(),
            local.sha256()
        ),
        Some(shipped) if shipped.value.same_settings(&local) => format!(
            "the build folder's {} has the settings of the deployed kernel's config",
            path.display()
        ),
        Some(shipped) => format!(
            "the build folder's {} is not the deployed kernel's config (digest {} ≠ {}): \
             stale, not used",
            path.display(),
            local.sha256(),
            shipped.value.sha256()
        ),
        None => format!(
            "the deployed kernel carries no config (no IKCONFIG, no kernel configuration in the \
             SBOM), and the build folder's {} cannot be proven to be its: not used",
            path.display()
        ),
    };
    deployed.notes.push(note);
    Ok(deployed)
}

/// The `.cfg` fragments a kernel recipe unpacked: in its `WORKDIR`, `UNPACKDIR` (`sources/`)
/// and their `configs/` folders, sorted.
fn recipe_fragments(workdir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in [workdir.to_path_buf(), workdir.join("sources")] {
        for folder in [dir.clone(), dir.join("configs")] {
            let Ok(entries) = std::fs::read_dir(&folder) else { continue };
            found.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "cfg")),
            );
        }
    }
    found.sort();
    found
}

/// The image manifest: `<image>-<machine>.rootfs.manifest` when the plan names them, else the
/// newest `*.rootfs.manifest`.
fn find_manifest(tmps: &[PathBuf], expected: Option<&Expectations>) -> Option<PathBuf> {
    let mut all = Vec::new();
    for tmp in tmps {
        for machine_dir in children(&tmp.join("deploy/images")) {
            let Ok(entries) = std::fs::read_dir(&machine_dir) else { continue };
            for entry in entries.filter_map(Result::ok) {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.ends_with(".rootfs.manifest") {
                    all.push(entry.path());
                }
            }
        }
    }
    if let Some(e) = expected {
        let want = format!("{}-{}.rootfs.manifest", e.image, e.machine);
        if let Some(exact) = all.iter().find(|p| p.file_name().is_some_and(|n| *n == *want)) {
            return Some(exact.clone());
        }
    }
    newest(all)
}

/// Package names from an image manifest (`name arch version` per line).
pub(super) fn manifest_packages(text: &str) -> BTreeSet<String> {
    text.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect()
}

/// The value of `NAME="…"` in a `bitbake -e` dump.
pub(super) fn bitbake_var(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let line = line.strip_prefix("export ").unwrap_or(line);
        let value = line.strip_prefix(name)?.strip_prefix("=\"")?.strip_suffix('"')?;
        Some(value.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bitbake_env_and_manifests() {
        let env = "# comment\nKERNEL_CMDLINE_EXTRA_X=\"no\"\nKERNEL_CMDLINE_EXTRA=\" isolcpus=7 efi=runtime\"\n";
        assert_eq!(bitbake_var(env, "KERNEL_CMDLINE_EXTRA").unwrap(), "isolcpus=7 efi=runtime");
        let packages = manifest_packages("rt-tests armv8a 2.8-r0\nstress-ng armv8a 0.18-r0\n");
        assert!(packages.contains("rt-tests") && packages.contains("stress-ng"));
    }
}
