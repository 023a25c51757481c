//! Today's lab, as test data: LAVA 2026.07 (`lava_common`, `lava_dispatcher`, the device-type
//! templates) and the lab's test plans (lava-test-plans at meta-qcom master's and wrynose's
//! pins, qcom-linux-testkit), from `lava-2026.07.tar.gz` and `lab-plans-snapshot.tar.gz` in
//! `../shared/upstream/` (its README says what each holds).
//!
//! Unpacked once per test process into `target/tmp/lab-snapshots/<pid>`; folders of processes
//! that are gone are removed first. Nothing is copied into the project.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::upstream::snapshot_dir;

/// The unpacked snapshots.
pub(crate) struct LabSnapshots {
    pub dir: PathBuf,
}

pub(crate) fn snapshots() -> &'static LabSnapshots {
    static SNAPSHOTS: OnceLock<LabSnapshots> = OnceLock::new();
    SNAPSHOTS.get_or_init(|| {
        let parent = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lab-snapshots");
        std::fs::create_dir_all(&parent).unwrap();
        remove_stale(&parent);
        let dir = parent.join(std::process::id().to_string());
        if dir.exists() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
        std::fs::create_dir(&dir).unwrap();
        for archive in ["lava-2026.07.tar.gz", "lab-plans-snapshot.tar.gz"] {
            let file = snapshot_dir().join(archive);
            assert!(file.is_file(), "the lab snapshot {} is missing", file.display());
            let out =
                Command::new("tar").arg("-xzf").arg(&file).arg("-C").arg(&dir).output().unwrap();
            assert!(
                out.status.success(),
                "tar {archive}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // Readable by the unprivileged test user too (testkit's scripts run as it).
        let out = Command::new("chmod").args(["-R", "a+rX"]).arg(&dir).output().unwrap();
        assert!(out.status.success());
        LabSnapshots { dir }
    })
}

impl LabSnapshots {
    /// LAVA 2026.07's source folder: what `PYTHONPATH` names.
    pub(crate) fn lava(&self) -> PathBuf {
        let dir = self.dir.join("lava-2026.07");
        assert!(
            dir.join("lava_common/schemas/__init__.py").is_file(),
            "no LAVA in {}",
            dir.display()
        );
        dir
    }

    /// lava-test-plans at `rev` (`a20c74e`: meta-qcom master's pin; `62f75dd`: wrynose's).
    pub(crate) fn test_plans(&self, rev: &str) -> PathBuf {
        let dir = self.dir.join(format!("lava-test-plans-{rev}"));
        assert!(dir.join("lava_test_plans").is_dir(), "no lava-test-plans in {}", dir.display());
        dir
    }

    /// qcom-linux-testkit a12072a.
    pub(crate) fn testkit(&self) -> PathBuf {
        let dir = self.dir.join("qcom-linux-testkit-a12072a");
        assert!(
            dir.join("Runner/suites/Kernel/RT-tests").is_dir(),
            "no testkit in {}",
            dir.display()
        );
        dir
    }
}

/// Runs python3 (Debian's, with its python3-* packages) on `script` with LAVA 2026.07 importable.
pub(crate) fn lava_python(script: &str) -> Command {
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg("-c").arg(script).env("PYTHONPATH", snapshots().lava());
    cmd
}

fn remove_stale(parent: &Path) {
    for entry in std::fs::read_dir(parent).unwrap().flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
