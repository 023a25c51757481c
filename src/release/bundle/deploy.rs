//! Finding the qcomflash output in a build folder, as meta-qcom's `image_types_qcom` leaves it:
//! `tmp/deploy/images/<machine>/<image>-<machine>.rootfs-<DATETIME>.qcomflash/` plus the relative
//! symlink `<image>-<machine>.rootfs.qcomflash` (and the same pair for `.qcomflash.tar.gz`,
//! which rtbuild does not need). The symlink is followed; the timestamp in the folder name is the
//! build time.

use std::path::{Path, PathBuf};

use super::BundleError;

/// The qcomflash folder of one build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Qcomflash {
    /// The real (timestamped) folder.
    pub folder: PathBuf,
    /// Its name, e.g. `core-image-base-rb3gen2-core-kit.rootfs-20260101120000.qcomflash`.
    pub name: String,
    /// `DATETIME` from the name, `YYYYMMDDhhmmss`, when the name has one.
    pub datetime: Option<String>,
}

/// The deploy folder of `machine` in a kas build folder.
pub(crate) fn deploy_dir(build_dir: &Path, machine: &str) -> PathBuf {
    build_dir.join("tmp/deploy/images").join(machine)
}

/// Finds `<image>-<machine>.rootfs.qcomflash` under `build_dir` and follows it.
pub(crate) fn find(build_dir: &Path, machine: &str, image: &str) -> Result<Qcomflash, BundleError> {
    let link = deploy_dir(build_dir, machine).join(format!("{image}-{machine}.rootfs.qcomflash"));
    let folder = std::fs::canonicalize(&link)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| BundleError::NoQcomflash { path: link.clone() })?;
    let name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!("{image}-{machine}.rootfs-");
    let datetime = name
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(".qcomflash"))
        .filter(|d| d.len() == 14 && d.bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_string);
    Ok(Qcomflash { folder, name, datetime })
}

/// `YYYYMMDDhhmmss` → `YYYY-MM-DDThh:mm:ssZ` (BitBake's DATETIME, taken from `time.gmtime()`).
pub(super) fn iso_datetime(datetime: &str) -> String {
    let d = datetime;
    format!("{}-{}-{}T{}:{}:{}Z", &d[0..4], &d[4..6], &d[6..8], &d[8..10], &d[10..12], &d[12..14])
}

/// The kernel version and `.config` of the newest linux-qcom-rt build under
/// `tmp*/work/*/linux-qcom-rt/<version>/build/.config`, when the build folder still has it.
pub(super) fn kernel_config(build_dir: &Path) -> Option<(String, PathBuf)> {
    let mut found: Vec<(std::time::SystemTime, String, PathBuf)> = Vec::new();
    for tmp in read_dirs(build_dir).into_iter().filter(|p| name_of(p).starts_with("tmp")) {
        for arch in read_dirs(&tmp.join("work")) {
            for version in read_dirs(&arch.join(crate::plan::KERNEL_RECIPE)) {
                let config = version.join("build/.config");
                if let Ok(meta) = std::fs::metadata(&config) {
                    let mtime = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                    found.push((mtime, name_of(&version), config));
                }
            }
        }
    }
    found.sort();
    found.pop().map(|(_, version, config)| (version, config))
}

fn read_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs
}

fn name_of(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(iso_datetime("20261129234448"), "2026-11-29T23:44:48Z");
    }

    #[test]
    fn follows_the_symlink_and_reads_the_timestamp() {
        let dir = tempfile::tempdir().unwrap();
        let deploy = deploy_dir(dir.path(), "m");
        let real = deploy.join("img-m.rootfs-20260102030405.qcomflash");
        std::fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink(
            "img-m.rootfs-20260102030405.qcomflash",
            deploy.join("img-m.rootfs.qcomflash"),
        )
        .unwrap();
        let q = find(dir.path(), "m", "img").unwrap();
        assert_eq!(q.datetime.as_deref(), Some("20260102030405"));
        assert_eq!(q.name, "img-m.rootfs-20260102030405.qcomflash");
        let err = find(dir.path(), "m", "other").unwrap_err().to_string();
        assert!(err.starts_with("no qcomflash output at "), "{err}");
    }
}
