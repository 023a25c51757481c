//! Issue 24 item 7 on `rtbuild test`: `--stop-urm` stops Qualcomm's URM for the run and starts
//! it again afterwards (also after Ctrl-C), and `--overcommit-never` adds
//! `vm.overcommit_memory=2` to `--tune`, read back and reverted.
//!
//! No machine here runs systemd with a `urm.service`, so the service manager is a recording
//! fake `systemctl` first on PATH (every test name says so); cyclictest, the on-target helper
//! and the tune script are real. `--tune` runs against a fake /proc + /sys (`RTBUILD_SYSROOT`),
//! never this machine's.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::fake_tree::fake_tree;
use crate::support::harness::{Test, rtbuild_bin, wait_for};
use crate::support::measuring::{measuring, run_json};
use crate::support::processes::{exit_and_stderr, unsafe_kill};

/// A recording fake service manager with one unit, urm.service, whose state (`active` or
/// `inactive`) is the file `urm.state` beside it; every call is appended to `systemctl.log`.
struct FakeSystemctl {
    dir: tempfile::TempDir,
}

impl FakeSystemctl {
    fn new(state: &str) -> FakeSystemctl {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir_all(d.join("bin")).unwrap();
        fs::write(d.join("urm.state"), format!("{state}\n")).unwrap();
        let script = format!(
            "#!/bin/sh\n\
             echo \"$*\" >>'{d}/systemctl.log'\n\
             case \"$1 $*\" in\n\
             *urm.service*) ;;\n\
             *) exit 4 ;;\n\
             esac\n\
             case \"$1\" in\n\
             is-active) [ \"$(cat '{d}/urm.state')\" = active ] ;;\n\
             stop) echo inactive >'{d}/urm.state' ;;\n\
             start) echo active >'{d}/urm.state' ;;\n\
             *) exit 1 ;;\n\
             esac\n",
            d = d.display()
        );
        let path = d.join("bin/systemctl");
        fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        FakeSystemctl { dir }
    }

    fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    fn state(&self) -> String {
        fs::read_to_string(self.dir.path().join("urm.state")).unwrap().trim().to_string()
    }

    /// The calls that changed the service, in order (`is-active` reads left out).
    fn changes(&self) -> Vec<String> {
        fs::read_to_string(self.dir.path().join("systemctl.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with("is-active"))
            .map(str::to_string)
            .collect()
    }
}

fn short_run(fake: &FakeSystemctl) -> Test {
    Test::new()
        .path_prepend(fake.bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "2s"])
        .args(["--histogram-us", "200000", "--max-us", "1000000", "--out", "res", "--stop-urm"])
}

#[test]
fn stop_urm_stops_a_running_urm_for_the_run_and_starts_it_again_with_a_fake_service_manager() {
    let _one_at_a_time = measuring();
    let fake = FakeSystemctl::new("active");
    let run = short_run(&fake).run().ignore_stdout();
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["state"], "finished", "{json:#}");
    assert_eq!(
        json["urm_stop"],
        serde_json::json!({
            "service": "urm.service", "stopped": true, "restored": true, "problem": null
        }),
        "{}",
        run.stderr()
    );
    assert_eq!(fake.changes(), ["stop urm.service", "start urm.service"]);
    assert_eq!(fake.state(), "active");
    // The fingerprints were taken while URM was stopped: no warning that it re-tunes.
    assert!(json["fingerprint"]["urm"].is_null(), "{:#}", json["fingerprint"]);
    assert!(!run.stderr().contains("re-tunes governors"), "{}", run.stderr());
}

#[test]
fn stop_urm_without_a_running_urm_notes_it_and_changes_nothing_with_a_fake_service_manager() {
    let _one_at_a_time = measuring();
    let fake = FakeSystemctl::new("inactive");
    let run = short_run(&fake).run().ignore_stdout();
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    assert!(run.stderr().contains("--stop-urm: urm.service is not running on this machine"));
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["urm_stop"]["stopped"], false, "{json:#}");
    assert_eq!(json["urm_stop"]["restored"], false, "{json:#}");
    assert!(fake.changes().is_empty(), "{:?}", fake.changes());
    assert_eq!(fake.state(), "inactive");
}

/// A run without `--stop-urm` leaves URM alone and records nothing of it.
#[test]
fn without_stop_urm_the_service_is_left_alone_with_a_fake_service_manager() {
    let _one_at_a_time = measuring();
    let fake = FakeSystemctl::new("active");
    let run = Test::new()
        .path_prepend(fake.bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "2s"])
        .args(["--histogram-us", "200000", "--max-us", "1000000", "--out", "res"])
        .run()
        .ignore_stdout();
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let json = run_json(&run.path().join("res"));
    assert!(json.get("urm_stop").is_none(), "{json:#}");
    assert!(fake.changes().is_empty(), "{:?}", fake.changes());
    assert_eq!(json["fingerprint"]["urm"], "urm.service active");
    assert!(run.stderr().contains("pass --stop-urm to stop it for the run"), "{}", run.stderr());
}

/// Ctrl-C in the middle of a measurement: the run stops cleanly and URM is started again.
#[test]
fn a_ctrl_c_during_a_run_with_stop_urm_starts_urm_again_with_a_fake_service_manager() {
    let _one_at_a_time = measuring();
    let fake = FakeSystemctl::new("active");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let path = format!("{}:{}", fake.bin().display(), std::env::var("PATH").unwrap_or_default());
    let mut child = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "60s"])
        .args(["--histogram-us", "200000", "--stop-urm", "--out"])
        .arg(&out)
        .env("PATH", path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the run never started measuring", Duration::from_secs(90), || {
        out.join("raw/idle.hist.txt").exists().then_some(())
    });
    assert_eq!(fake.state(), "inactive", "URM runs during the measurement");
    unsafe_kill(child.id(), "INT");
    let (status, stderr) = exit_and_stderr(
        &mut child,
        Duration::from_secs(90),
        "rtbuild did not stop within 90 s of Ctrl-C",
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    let json = run_json(&out);
    assert_eq!(json["state"], "interrupted", "{json:#}");
    assert_eq!(json["urm_stop"]["restored"], true, "{json:#}\n{stderr}");
    assert_eq!(fake.changes(), ["stop urm.service", "start urm.service"]);
    assert_eq!(fake.state(), "active");
}

fn overcommit(root: &Path) -> String {
    fs::read_to_string(root.join("proc/sys/vm/overcommit_memory")).unwrap().trim().to_string()
}

/// `test --tune --overcommit-never` on a fake /proc: the knob is set with the others, read
/// back, recorded, and reverted after the run.
#[test]
fn test_tune_overcommit_never_sets_reads_back_and_reverts_the_knob() {
    let _one_at_a_time = measuring();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fake_tree(&root, "0-1");
    fs::create_dir_all(root.join("proc/sys/vm")).unwrap();
    fs::write(root.join("proc/sys/vm/overcommit_memory"), "0\n").unwrap();
    let run = Test::new()
        .env("RTBUILD_SYSROOT", &root)
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "2s"])
        .args(["--histogram-us", "200000", "--max-us", "1000000", "--out", "res"])
        .args(["--tune", "--overcommit-never"])
        .run()
        .ignore_stdout()
        // The other lines carry what this machine measured and how it is set up.
        .stderr_has_line("      Tuning this machine (saved values are restored afterwards)")
        .stderr_has_line("    Reverted the tuning rtbuild applied");
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let dir = run.path().join("res");
    let json = run_json(&dir);
    let tuning = &json["tuning"];
    assert_eq!(tuning["applied"], true, "{tuning:#}");
    assert_eq!(tuning["overcommit_never"], true, "{tuning:#}");
    assert_eq!(tuning["reverted"], true, "{tuning:#}\n{}", run.stderr());
    let problems = tuning["verify_problems"].as_array().unwrap();
    assert!(!problems.iter().any(|p| p.as_str().unwrap().contains("overcommit")), "{tuning:#}");
    let apply = fs::read_to_string(dir.join("tune-apply.txt")).unwrap();
    assert!(apply.contains("set /proc/sys/vm/overcommit_memory 2 (was 0)"), "{apply}");
    assert_eq!(overcommit(&root), "0", "reverted after the run");

    // Without --overcommit-never the knob is not touched, and the record says nothing of it.
    let run = Test::new()
        .env("RTBUILD_SYSROOT", &root)
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "2s"])
        .args(["--histogram-us", "200000", "--max-us", "1000000", "--out", "res", "--tune"])
        .run()
        .ignore_stdout()
        .stderr_has_line("      Tuning this machine (saved values are restored afterwards)")
        .stderr_has_line("    Reverted the tuning rtbuild applied");
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    let dir = run.path().join("res");
    let json = run_json(&dir);
    assert!(json["tuning"].get("overcommit_never").is_none(), "{:#}", json["tuning"]);
    let apply = fs::read_to_string(dir.join("tune-apply.txt")).unwrap();
    assert!(!apply.contains("overcommit"), "{apply}");
    assert_eq!(overcommit(&root), "0");
}

/// `--overcommit-never` is a knob of the tuning: without `--tune` it is refused (exit 2).
#[test]
fn overcommit_never_without_tune_is_refused() {
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", "1", "--overcommit-never", "--out", "res"])
        .run()
        .code_is(2);
    assert!(run.stderr().contains("--tune"), "{}", run.stderr());
    assert!(!run.path().join("res").exists());
}
