//! What every test that measures with cyclictest shares: one measurement at a time, the
//! reasons tolerated on a shared VM, and the run record it leaves.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::shared_lock::{self, SharedLock};

/// Runs that measure with cyclictest hold this lock, in every test process: two SCHED_FIFO 99
/// measurements pinned to the same CPU of this 2-CPU machine would starve each other and fail
/// the cycle-count checks for a reason that has nothing to do with the code under test.
pub(crate) fn measuring() -> SharedLock {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    shared_lock::hold(&LOCK, "measuring")
}

/// Reasons that depend on how this shared VM happened to schedule (lost cycles, spikes above
/// the histogram, a stress-ng duty cycle other work took the CPU from): tolerated, since tests
/// never judge latency or this VM's spare CPU time.
pub(crate) fn latency_dependent(reason: &str) -> bool {
    reason.contains("expected cycles")
        || reason.contains("histogram")
        || reason.contains("where --load asked")
}

pub(crate) fn run_json(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

/// Checks the line a finished `rtbuild test` (without `--json`) ends its stderr with, and that
/// its verdict agrees with the exit code (0 for PASS only); returns the verdict. Which verdict
/// depends on the latencies this machine measured: PASS, FAIL or INVALID.
#[track_caller]
pub(crate) fn result_line(code: i32, stderr: &str, threshold: &str, out: &str) -> String {
    let last = stderr.lines().last().unwrap_or_default();
    let Some((verdict, tail)) =
        last.strip_prefix("      Result ").and_then(|rest| rest.split_once(" against "))
    else {
        panic!("stderr does not end with the Result line:\n{stderr}");
    };
    assert_eq!(tail, format!("{threshold}; results in {out}"), "{stderr}");
    assert!(["PASS", "FAIL", "INVALID"].contains(&verdict), "{stderr}");
    assert_eq!(code == 0, verdict == "PASS", "exit code {code} for {verdict}:\n{stderr}");
    verdict.to_string()
}
