//! qcom-linux-testkit's RT-tests (a12072a, from `../shared/upstream/lab-plans-snapshot.tar.gz`),
//! what Qualcomm's lab gates on: its twelve `run.sh` scripts run here, as the lab runs them,
//! against Debian's rt-tests (installed by `.ci/setup`), with short durations; `rtbuild report`
//! then reads what they left (`.res` verdicts, `result.txt` KPI lines, the raw outputs) beside
//! its own kind of input and gives its statistics and verdict. Latency values measured on this
//! VM are never judged: the test checks that every program's result was read and that each
//! testkit verdict reached the report.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::lab_snapshots::snapshots;
use crate::support::measuring::measuring;

/// One program: its folder, testkit's `TESTNAME`, the arguments and environment for a short run.
type Program =
    (&'static str, &'static str, &'static [&'static str], &'static [(&'static str, &'static str)]);

const SUITE: [Program; 12] = [
    ("Cyclictest", "CyclicTest", &["--duration", "2s"], &[]),
    ("CyclicDeadline", "CyclicDeadline", &["--duration", "2s"], &[]),
    ("Hackbench", "Hackbench", &["--loops", "10", "--grps", "2"], &[("ITERATIONS", "2")]),
    ("OSLat", "OSLat", &["--duration", "2s"], &[]),
    ("PI_Stress", "PI_Stress", &["--duration", "2s"], &[]),
    ("PMQTest", "PMQTest", &["--duration", "2s"], &[]),
    ("PTSEMATest", "PTSEMATest", &["--duration", "2s"], &[]),
    ("RTMigrateTest", "RTMigrateTest", &["--duration", "2s"], &[]),
    ("SSDD", "SSDD", &["--forks", "2", "--ssdd-iters", "1000"], &[]),
    ("SVSematest", "SVSematest", &["--duration", "2s"], &[]),
    ("SignalTest", "SignalTest", &["--duration", "2s"], &[]),
    ("SigwaitTest", "SigwaitTest", &["--duration", "2s"], &[]),
];

fn run_suite(suite: &Path) {
    for (folder, _, args, env) in SUITE {
        let mut cmd = Command::new("timeout");
        cmd.args(["--kill-after=10", "300", "sh"]).arg(suite.join(folder).join("run.sh"));
        cmd.args(args).current_dir(suite.join(folder));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        // testkit's scripts always exit 0 (LAVA-friendly); the verdict is in the .res file.
        assert!(
            out.status.success(),
            "{folder}/run.sh: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn testkit_rt_tests_run_here_and_report_reads_their_results() {
    // The rt-tests programs measure on this machine's CPUs, at real-time priorities.
    let _one_at_a_time = measuring();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("cp")
        .arg("-a")
        .arg(snapshots().testkit().join("Runner"))
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let suite = dir.path().join("Runner/suites/Kernel/RT-tests");
    run_suite(&suite);

    // What testkit itself says, program by program.
    let mut verdicts = Vec::new();
    for (folder, testname, _, _) in SUITE {
        let res = std::fs::read_to_string(suite.join(folder).join(format!("{testname}.res")))
            .unwrap_or_else(|e| panic!("{folder}: no {testname}.res: {e}"));
        let verdict = res.split_whitespace().nth(1).unwrap_or_default().to_string();
        assert!(["PASS", "FAIL", "SKIP"].contains(&verdict.as_str()), "{folder}: {res}");
        verdicts.push((folder, testname, verdict));
    }

    let run = Test::new()
        .args(["report", "--json", "--threshold-us", "1000000", "--noise-us", "1000000"])
        .arg_path(&suite)
        .run()
        .stderr_is("");
    let code = run.code();
    let report: Value = run.json();
    assert_eq!(report["inputs"][0]["kind"], "testkit", "{report}");
    let scenario = &report["inputs"][0]["scenarios"][0];
    assert_eq!(scenario["name"], "testkit");
    let reasons = scenario["reasons"].to_string() + &report["reasons"].to_string();
    let tests = scenario["tests"].as_array().cloned().unwrap_or_default();
    for (folder, testname, verdict) in &verdicts {
        let program = match *folder {
            "Cyclictest" => "cyclictest",
            "CyclicDeadline" => "cyclicdeadline",
            "Hackbench" => "hackbench",
            "OSLat" => "oslat",
            "PI_Stress" => "pi_stress",
            "PMQTest" => "pmqtest",
            "PTSEMATest" => "ptsematest",
            "RTMigrateTest" => "rt-migrate-test",
            "SSDD" => "ssdd",
            "SVSematest" => "svsematest",
            "SignalTest" => "signaltest",
            _ => "sigwaittest",
        };
        if verdict == "FAIL" {
            assert!(
                reasons.contains(&format!("{testname}.res says FAIL")),
                "{testname}: {reasons}"
            );
        }
        if program == "cyclictest" {
            // rtbuild's own statistics from testkit's cyclictest JSON.
            if verdict == "PASS" {
                let threads = scenario["threads"].as_array().unwrap();
                assert!(
                    !threads.is_empty() && threads[0]["samples"].as_u64().unwrap() > 0,
                    "{scenario}"
                );
            }
            continue;
        }
        let test = tests
            .iter()
            .find(|t| t["test"] == program)
            .unwrap_or_else(|| panic!("{program} is not in the report: {scenario}"));
        if verdict == "PASS" && program != "hackbench" {
            // A passing run left its raw output, and rtbuild read it.
            assert!(!test["files"].as_array().unwrap().is_empty(), "{program}: {test}");
        }
    }
    // The verdict and the exit code agree.
    assert_eq!(code, if report["verdict"] == "PASS" { 0 } else { 1 }, "{report}");
}
