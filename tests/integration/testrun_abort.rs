//! Issue 13 item 6: a second Ctrl-C during `rtbuild test` skips the niceties but still kills
//! the load and the priority-99 cyclictest (locally and over ssh), removes the target's
//! `/tmp/rtbuild-test.*` folder, keeps the running scenario's JSON and marks `run.json`
//! interrupted. Real cyclictest and stress-ng; the checks are about what is left running and
//! what is on disk, never latency.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::fake_tree::fake_tree;
use crate::support::fixtures::write_executable;
use crate::support::harness::{rtbuild_bin, wait_for};
use crate::support::measuring::{measuring, run_json};
use crate::support::processes::{alive, exit_and_stderr, processes_with_args, unsafe_kill};
use crate::support::target::local_and_ssh;
use crate::support::tracefs::tracing_settings;

local_and_ssh! {
    fn a_second_ctrl_c_kills_cyclictest_and_the_load_and_marks_the_run_interrupted(target) {
        let _one_at_a_time = measuring();
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fake_tree(&root, "0-1");
        double_interrupt(&target.args_with_sysroot(&root), &root, tmp.path());
    }
}

/// The target's state folder of the run, from the cyclictest command `run.json` records.
fn state_dir(out: &Path) -> PathBuf {
    let json = run_json(out);
    let argv = json["scenarios"][0]["argv"]["cyclictest"].as_array().unwrap();
    let arg = argv
        .iter()
        .filter_map(|a| a.as_str())
        .find_map(|a| a.strip_prefix("--json="))
        .unwrap_or_else(|| panic!("no --json= in {argv:?}"));
    let dir = Path::new(arg).parent().unwrap().to_path_buf();
    assert!(dir.starts_with("/tmp") && dir.to_string_lossy().contains("rtbuild-test."), "{arg}");
    dir
}

/// Starts a 60 s stress run, sends SIGINT twice in a row once it measures, and checks that
/// nothing is left running and what is on disk.
fn double_interrupt(host: &[String], root: &Path, tmp: &Path) {
    let out = tmp.join("res");
    let mut child = Command::new(rtbuild_bin())
        .arg("test")
        .args(host)
        .args(["--rt-cpus", "1", "--scenario", "stress,idle", "--duration", "60s"])
        .args(["--histogram-us", "200000", "--out"])
        .arg(&out)
        .env("RTBUILD_SYSROOT", root)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // This run's stress-ng is the one whose timeout is the run's length plus two minutes.
    let load = wait_for("the run never started measuring", Duration::from_secs(60), || {
        let load = processes_with_args("stress-ng", &["--timeout", "180s"]);
        (!load.is_empty() && out.join("raw/stress.hist.txt").exists()).then_some(load)
    });
    let state = state_dir(&out);
    let json_arg = format!("--json={}", state.join("stress.json").display());
    let cyclictest = wait_for("cyclictest never started", Duration::from_secs(60), || {
        Some(processes_with_args("cyclictest", &[&json_arg])).filter(|found| !found.is_empty())
    });
    std::thread::sleep(Duration::from_secs(2));

    unsafe_kill(child.id(), "INT");
    std::thread::sleep(Duration::from_millis(50));
    unsafe_kill(child.id(), "INT");
    let (status, stderr) = exit_and_stderr(
        &mut child,
        Duration::from_secs(45),
        "rtbuild did not exit within 45 s of the second Ctrl-C",
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted again: killing cyclictest and the load"), "{stderr}");

    for pid in load.iter().chain(&cyclictest) {
        assert!(!alive(u64::from(*pid)), "process {pid} left running\n{stderr}");
    }
    assert!(processes_with_args("stress-ng", &["--timeout", "180s"]).is_empty(), "{stderr}");
    assert!(processes_with_args("cyclictest", &[&json_arg]).is_empty(), "{stderr}");
    assert!(!state.exists(), "{} left behind\n{stderr}", state.display());

    let json = run_json(&out);
    assert_eq!(json["state"], "interrupted", "{json}");
    assert_eq!(json["verdict"], "INVALID", "{json}");
    let s = &json["scenarios"][0];
    assert_eq!(s["name"], "stress");
    assert_eq!(s["state"], "interrupted", "{json}");
    assert!(json["scenarios"].as_array().unwrap().len() == 1, "idle must not start: {json}");
    let kept = std::fs::read_to_string(out.join("raw/stress.json")).unwrap_or_default();
    assert!(kept.contains("\"thread\""), "the scenario's JSON was not kept: {kept:?}\n{stderr}");
}

/// A RECORDING FAKE load (scenario `custom`): it appends a line to MARK when rtbuild's
/// clean-up after the first Ctrl-C asks it to stop (SIGTERM to its process group), and keeps
/// running, so the clean-up is still waiting for it when the test sends the second Ctrl-C.
const FAKE_LOAD_RECORDING_SIGTERM: &str = "#!/bin/sh\n\
# RECORDING FAKE load: records the clean-up's SIGTERM in $1, and does not stop for it.\n\
trap 'echo cleanup-started >> \"$1\"' TERM\n\
while :; do sleep 0.1; done\n";

/// Issue 23 item 9, made deterministic: the second Ctrl-C arrives while rtbuild is still
/// cleaning up after the first (its helper `sh` is waiting for the load to stop, which the
/// recording fake load refuses). rtbuild exits 130 only when no cyclictest, helper `sh` or load
/// it started is left, and the tracing settings `--trace-above-us` changed read back as they
/// were before the run.
#[test]
fn a_second_ctrl_c_during_the_first_ones_clean_up_leaves_nothing_running_fake_load_recording_sigterm()
 {
    let _one_at_a_time = measuring();
    let before = tracing_settings();
    let tmp = tempfile::tempdir().unwrap();
    let load = tmp.path().join("fake-load-recording-sigterm");
    write_executable(&load, FAKE_LOAD_RECORDING_SIGTERM);
    let mark = tmp.path().join("cleanup-started");
    let (load_arg, mark_arg) = (load.display().to_string(), mark.display().to_string());
    let out = tmp.path().join("res");
    let mut child = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "custom,idle"])
        .args(["--load-cmd", &format!("{load_arg} {mark_arg}"), "--duration", "60s"])
        .args(["--histogram-us", "200000", "--trace-above-us", "1000000", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let loads = wait_for("the run never started measuring", Duration::from_secs(60), || {
        let found = processes_with_args("sh", &[&load_arg, &mark_arg]);
        (!found.is_empty() && out.join("raw/custom.hist.txt").exists()).then_some(found)
    });
    let state = state_dir(&out);
    let state_arg = state.display().to_string();
    let json_arg = format!("--json={}", state.join("custom.json").display());
    let cyclictest = wait_for("cyclictest never started", Duration::from_secs(60), || {
        Some(processes_with_args("cyclictest", &[&json_arg])).filter(|found| !found.is_empty())
    });
    assert_ne!(tracing_settings(), before, "tracing was not set up while measuring");

    unsafe_kill(child.id(), "INT");
    // The clean-up has begun once the load got its SIGTERM; it now waits for the load.
    wait_for(
        "the first Ctrl-C's clean-up never asked the load to stop",
        Duration::from_secs(60),
        || mark.exists().then_some(()),
    );
    let helpers = processes_with_args("sh", &[&state_arg]);
    assert!(!helpers.is_empty(), "no helper sh was cleaning up when the second Ctrl-C came");
    unsafe_kill(child.id(), "INT");
    let (status, stderr) = exit_and_stderr(
        &mut child,
        Duration::from_secs(45),
        "rtbuild did not exit within 45 s of the second Ctrl-C",
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted again: killing cyclictest and the load"), "{stderr}");

    // Checked at once after the exit: nothing rtbuild started outlives it.
    for pid in loads.iter().chain(&cyclictest).chain(&helpers) {
        assert!(!alive(u64::from(*pid)), "process {pid} left running\n{stderr}");
    }
    assert!(processes_with_args("sh", &[&load_arg, &mark_arg]).is_empty(), "{stderr}");
    assert!(processes_with_args("cyclictest", &[&json_arg]).is_empty(), "{stderr}");
    assert!(processes_with_args("sh", &[&state_arg]).is_empty(), "{stderr}");
    assert!(!state.exists(), "{} left behind\n{stderr}", state.display());
    assert_eq!(tracing_settings(), before, "tracing not restored\n{stderr}");
    let json = run_json(&out);
    assert_eq!(json["state"], "interrupted", "{json}");
    assert_eq!(json["verdict"], "INVALID", "{json}");
    assert_eq!(json["scenarios"].as_array().unwrap().len(), 1, "idle must not start: {json}");
    // The run loop, unblocked once the abort finished, must not write its own state over it.
    assert_eq!(json["scenarios"][0]["state"], "interrupted", "{json}");
}
