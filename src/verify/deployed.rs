//! The kernel that ships: what a build deployed to `tmp*/deploy/images/<machine>/`. On a warm
//! build the kernel comes from sstate and `${B}` is empty, `work-shared` is not restored, and a
//! `.config` from an earlier cold build may still be there; so after a build the verdict comes
//! from here. In order: the qcomflash folder of the image (its `vmlinux`, else the UKI in
//! `efi.bin`), else a deployed kernel image (`Image`, `Image.gz`, `vmlinux`), and for the
//! config, when the kernel has no IKCONFIG, the image SBOM's kernel configuration
//! (`SPDX_INCLUDE_KERNEL_CONFIG`, see [`crate::formats::spdx_json`]).

use std::path::{Path, PathBuf};

use crate::formats::spdx_json::SpdxFile;
use crate::plan::Expectations;
use crate::verify::kconfig::KernelConfig;

use super::error::{ArchiveError, VerifyError};
use super::evidence::{Evidence, Found};
use super::{archive, files};
use crate::files::limits::MAX_SBOM;

/// Kernel images a kernel recipe deploys under their link names.
const KERNEL_IMAGES: [&str; 3] = ["Image", "Image.gz", "vmlinux"];

/// The deployed kernel, when the build deployed one. `Ok(None)`: nothing deployed yet.
pub(super) fn evidence(
    tmps: &[PathBuf],
    expected: Option<&Expectations>,
) -> Result<Option<Evidence>, VerifyError> {
    for tmp in tmps {
        for dir in machine_dirs(&tmp.join("deploy/images"), expected) {
            if let Some(found) = in_deploy_dir(&dir, expected)? {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}

fn machine_dirs(images: &Path, expected: Option<&Expectations>) -> Vec<PathBuf> {
    if let Some(e) = expected {
        let dir = images.join(&e.machine);
        return if dir.is_dir() { vec![dir] } else { Vec::new() };
    }
    let Ok(entries) = std::fs::read_dir(images) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs
}

fn in_deploy_dir(
    dir: &Path,
    expected: Option<&Expectations>,
) -> Result<Option<Evidence>, VerifyError> {
    let stem = expected.map(|e| format!("{}-{}.rootfs", e.image, e.machine));
    let named = |suffix: &str| -> Option<PathBuf> {
        match &stem {
            Some(stem) => Some(dir.join(format!("{stem}{suffix}"))).filter(|p| p.exists()),
            None => newest_with_suffix(dir, &format!(".rootfs{suffix}")),
        }
    };
    // A qcomflash folder without a kernel in it (no vmlinux, no UKI) is not a deployed kernel.
    let from_qcomflash = match named(".qcomflash").filter(|p| p.is_dir()) {
        Some(folder) => match archive::qcomflash_dir_evidence(&folder) {
            Ok(evidence) => Some(evidence),
            Err(VerifyError::NoKernel { .. }) => None,
            Err(other) => return Err(other),
        },
        None => None,
    };
    let mut evidence = match from_qcomflash {
        Some(evidence) => Some(evidence),
        None => match KERNEL_IMAGES.iter().map(|n| dir.join(n)).find(|p| p.is_file()) {
            Some(image) => {
                let data = files::read(&image)?;
                Some(files::image_evidence(&image, &data, &image.display().to_string())?)
            }
            None => None,
        },
    };
    let sbom = named(".spdx.json").filter(|p| p.is_file());
    if let Some(sbom) = &sbom
        && evidence.as_ref().is_none_or(|e| e.config.is_none())
        && let Some(config) = sbom_config(sbom)?
    {
        let e = evidence.get_or_insert_with(|| Evidence::new("image SBOM"));
        e.config = Some(Found::new(config, format!("{} → kernel configuration", sbom.display())));
    }
    Ok(evidence)
}

/// The kernel config an image SBOM carries, when it carries one.
pub(super) fn sbom_config(path: &Path) -> Result<Option<KernelConfig>, VerifyError> {
    let unreadable = |cause| VerifyError::Unreadable { path: path.to_path_buf(), cause };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() || meta.len() > MAX_SBOM {
        return Err(unreadable(std::io::Error::other(format!(
            "not a regular file of at most {} MiB",
            MAX_SBOM >> 20
        ))));
    }
    let data = files::read(path)?;
    let doc = SpdxFile::parse(&data)
        .map_err(|cause| VerifyError::Spdx { path: path.to_path_buf(), cause })?;
    let Some(text) = doc.kernel_config() else { return Ok(None) };
    KernelConfig::parse(text.as_bytes()).map(Some).map_err(|cause| VerifyError::Archive {
        path: path.to_path_buf(),
        what: "SPDX document",
        cause: ArchiveError::SpdxConfig { cause },
    })
}

fn newest_with_suffix(dir: &Path, suffix: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(suffix)))
        .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
}
