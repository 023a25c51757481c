//! Free space in the work, download and sstate folders against what a build needs.
//!
//! The need: the Yocto Project Reference Manual ("System Requirements") asks for at least
//! 90 Gbytes of free disk space for a build host. rtbuild splits that figure over the folders
//! a first `qcom-multimedia-image` build fills (meta-qcom's `ci/base.yml` inherits `rm_work`,
//! which keeps the build folder small): [`NEED_WORK_GIB`] for the layers and `tmp/`,
//! [`NEED_DOWNLOADS_GIB`] for sources, [`NEED_SSTATE_GIB`] for shared state. Folders on one file
//! system add up. Below the need is a warning (a warm sstate or a partial `--target` build
//! needs far less); below [`FLOOR_GIB`] is a problem, because BitBake's own disk monitor in
//! meta-qcom's `ci/base.yml` (`BB_DISKMON_DIRS`: `STOPTASKS,${TMPDIR},1G,…`) would stop the
//! build at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Check, Target};

pub(crate) const NEED_WORK_GIB: u64 = 55;
pub(crate) const NEED_DOWNLOADS_GIB: u64 = 15;
pub(crate) const NEED_SSTATE_GIB: u64 = 20;
/// BitBake's disk monitor stops tasks below 1G free (meta-qcom `ci/base.yml`).
pub(crate) const FLOOR_GIB: u64 = 1;

const GIB: u64 = 1 << 30;

/// One folder a build writes to, and the file system it lands on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Folder {
    /// `work`, `downloads` or `sstate`.
    pub role: &'static str,
    pub path: PathBuf,
    pub need_gib: u64,
    /// Bytes free to an ordinary user on its file system (`None`: could not be read).
    pub free: Option<u64>,
    /// The file system's device id, to add up folders that share one.
    pub device: Option<u64>,
}

/// The three folders of `target`, measured at their nearest existing ancestor.
pub(crate) fn folders(target: &Target) -> Vec<Folder> {
    [
        ("work", &target.work, NEED_WORK_GIB),
        ("downloads", &target.dl_dir, NEED_DOWNLOADS_GIB),
        ("sstate", &target.sstate_dir, NEED_SSTATE_GIB),
    ]
    .into_iter()
    .map(|(role, path, need_gib)| {
        let existing = path.ancestors().find(|p| p.exists()).unwrap_or(Path::new("/"));
        let free = rustix::fs::statvfs(existing).ok().map(|s| s.f_bavail * s.f_frsize);
        let device =
            std::fs::metadata(existing).ok().map(|m| std::os::unix::fs::MetadataExt::dev(&m));
        Folder { role, path: path.clone(), need_gib, free, device }
    })
    .collect()
}

/// The variable a folder's role is set by, as the warning names it (`KAS_WORK_DIR /w/rtbuild`).
fn variable(role: &str) -> &str {
    match role {
        "work" => "KAS_WORK_DIR",
        "downloads" => "DL_DIR",
        "sstate" => "SSTATE_DIR",
        other => other,
    }
}

/// One `disk` check over every file system the folders use.
pub(crate) fn evaluate(folders: &[Folder]) -> Vec<Check> {
    // File system → (free, need, folders).
    let mut systems: BTreeMap<u64, (u64, u64, Vec<&Folder>)> = BTreeMap::new();
    for (i, folder) in folders.iter().enumerate() {
        let Some(free) = folder.free else { continue };
        let key = folder.device.unwrap_or(u64::MAX - i as u64);
        let entry = systems.entry(key).or_insert((free, 0, Vec::new()));
        entry.1 += folder.need_gib;
        entry.2.push(folder);
    }
    let describe = |(free, need, list): &(u64, u64, Vec<&Folder>)| {
        let names: Vec<String> =
            list.iter().map(|f| format!("{} {}", variable(f.role), f.path.display())).collect();
        format!("{} GiB free, about {need} GiB needed, for {}", free / GIB, names.join(", "))
    };
    let floor: Vec<String> =
        systems.values().filter(|s| s.0 < FLOOR_GIB * GIB).map(describe).collect();
    if !floor.is_empty() {
        return vec![Check::problem(
            "disk",
            format!(
                "less than {FLOOR_GIB} GiB free, where BitBake's disk monitor stops every task: {}",
                floor.join("; ")
            ),
            "free space there, or put the folders elsewhere with --work-dir (KAS_WORK_DIR), --dl-dir (DL_DIR) and --sstate-dir (SSTATE_DIR)",
        )];
    }
    let short: Vec<String> = systems.values().filter(|s| s.0 < s.1 * GIB).map(describe).collect();
    if !short.is_empty() {
        return vec![Check::warning(
            "disk",
            format!(
                "a first qcom-multimedia-image build may run out of space: {}",
                short.join("; ")
            ),
            "free space, or point --work-dir (KAS_WORK_DIR), --dl-dir (DL_DIR) or --sstate-dir \
             (SSTATE_DIR) at a larger disk (a warm sstate or a --target build needs much less)",
        )];
    }
    if systems.is_empty() {
        return vec![Check::ok("disk", "free space could not be measured")];
    }
    let all: Vec<String> = systems.values().map(describe).collect();
    vec![Check::ok("disk", all.join("; "))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::doctor::Severity;

    fn folder(role: &'static str, need_gib: u64, free_gib: u64, device: u64) -> Folder {
        Folder {
            role,
            path: PathBuf::from(format!("/w/{role}")),
            need_gib,
            free: Some(free_gib * GIB),
            device: Some(device),
        }
    }

    #[test]
    fn folders_on_one_file_system_add_up() {
        let one_disk = [
            folder("work", NEED_WORK_GIB, 80, 1),
            folder("downloads", NEED_DOWNLOADS_GIB, 80, 1),
            folder("sstate", NEED_SSTATE_GIB, 80, 1),
        ];
        let check = &evaluate(&one_disk)[0];
        assert_eq!(check.status, Severity::Warning, "{check:?}");
        assert!(check.message.contains("80 GiB free, about 90 GiB needed, for KAS_WORK_DIR /w/work, DL_DIR /w/downloads, SSTATE_DIR /w/sstate"), "{}", check.message);
        let split = [
            folder("work", NEED_WORK_GIB, 60, 1),
            folder("downloads", NEED_DOWNLOADS_GIB, 40, 2),
            folder("sstate", NEED_SSTATE_GIB, 40, 2),
        ];
        assert_eq!(evaluate(&split)[0].status, Severity::Ok);
    }

    #[test]
    fn below_bitbakes_disk_monitor_floor_is_a_problem() {
        let full = [folder("work", NEED_WORK_GIB, 0, 1), folder("sstate", NEED_SSTATE_GIB, 500, 2)];
        let check = &evaluate(&full)[0];
        assert_eq!(check.status, Severity::Problem);
        assert!(
            check.message.contains("0 GiB free, about 55 GiB needed, for KAS_WORK_DIR /w/work"),
            "{}",
            check.message
        );
        assert!(!check.message.contains("SSTATE_DIR /w"), "{}", check.message);
        let fix = check.fix.as_deref().unwrap_or_default();
        assert!(fix.contains("--work-dir (KAS_WORK_DIR)"), "{fix}");
    }
}
