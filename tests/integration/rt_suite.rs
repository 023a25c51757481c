//! `rtbuild test --tests …` with the real rt-tests 2.4 programs on this machine: the exact
//! command lines, where each program measured, what was recorded and read back by `report`,
//! and that nothing is left running. Never a latency value: this VM is not real-time.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::harness::{Test, wait_for};
use crate::support::measuring::measuring;

const PROGRAMS: [&str; 12] = [
    "oslat",
    "cyclicdeadline",
    "pmqtest",
    "ptsematest",
    "sigwaittest",
    "svsematest",
    "signaltest",
    "pi_stress",
    "rt-migrate-test",
    "ssdd",
    "hackbench",
    "hwlatdetect",
];

fn run_json(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

/// Processes of the suite still alive (zombies do not count).
fn suite_processes() -> Vec<String> {
    let mut left = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((head, rest)) = stat.rsplit_once(") ") else { continue };
        let comm = head.split_once(" (").map_or("", |(_, c)| c);
        if PROGRAMS.contains(&comm) && !rest.starts_with('Z') {
            left.push(format!("{comm} ({})", entry.file_name().to_string_lossy()));
        }
    }
    left
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

#[test]
fn every_program_runs_on_the_rt_cpus_under_hackbench_and_report_reads_it() {
    let _one_at_a_time = measuring();
    let list = "cyclictest,pmqtest,oslat,cyclicdeadline,ptsematest,sigwaittest,svsematest,signaltest,pi_stress,rt-migrate-test,ssdd,hwlatdetect";
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "hackbench", "--tests", list])
        .args(["--duration", "1s", "--histogram-us", "200000", "--out", "res"])
        .args(["--test-args", "oslat=-D 2 -w memmove", "--test-args", "hackbench=-p"])
        .run()
        .ignore_stdout();
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    let dir = run.path().join("res");
    let json = run_json(&dir);
    assert_eq!(json["state"], "finished");
    assert_eq!(
        strings(&json["tests"]),
        [
            "oslat",
            "cyclictest",
            "pmqtest",
            "cyclicdeadline",
            "ptsematest",
            "sigwaittest",
            "svsematest",
            "signaltest",
            "pi_stress",
            "rt-migrate-test",
            "ssdd",
            "hwlatdetect"
        ]
    );
    assert_eq!(json["noise_us"], 20);
    assert_eq!(
        json["settings"]["test_args"]["oslat"],
        serde_json::json!(["-D", "2", "-w", "memmove"])
    );
    let s = &json["scenarios"][0];
    // hackbench is the load, pinned to the housekeeping CPU, run until the scenario ends.
    let load = strings(&s["argv"]["load"][0]);
    assert_eq!(load[..4], ["taskset", "-c", "0", "timeout"]);
    assert!(load[4].ends_with('s'), "{load:?}");
    assert_eq!(&load[5..], ["hackbench", "-g", "1", "-s", "512", "-l", "1000000000", "-p"]);
    let tests = s["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "oslat",
            "pmqtest",
            "cyclicdeadline",
            "ptsematest",
            "sigwaittest",
            "svsematest",
            "signaltest",
            "pi_stress",
            "rt-migrate-test",
            "ssdd",
            "hwlatdetect"
        ]
    );
    let by_name = |n: &str| tests.iter().find(|t| t["name"] == n).unwrap();
    let command = |n: &str| strings(&by_name(n)["commands"]).join("\n");
    let state = fs::read_to_string(dir.join("run.json")).unwrap();
    assert!(!state.contains("\"verdict\": \"running\""));
    assert!(
        command("oslat").starts_with("oslat -c 1 -C 0 -q --json=/tmp/rtbuild-test."),
        "{}",
        command("oslat")
    );
    assert!(command("oslat").ends_with(".oslat.json -D 2 -w memmove"), "{}", command("oslat"));
    assert!(command("pmqtest").starts_with("pmqtest -a1 -t1 -p 99 -D 1 -q --json="));
    assert!(command("signaltest").starts_with("signaltest -a1 -t 2 -p 99 -m -D 1 -q --json="));
    assert!(
        command("cyclicdeadline").starts_with("cyclicdeadline -a 1 -t 1 -i 10000 -D 1 -q --json=")
    );
    assert!(command("pi_stress").starts_with("taskset -c 1 pi_stress -u -m -D 1 -q --json="));
    assert!(command("rt-migrate-test").starts_with("rt-migrate-test -c -D 1 -q --json="));
    assert_eq!(command("hwlatdetect"), "hwlatdetect --duration 1s --threshold 20 --cpu-list 1");
    for t in tests {
        let name = t["name"].as_str().unwrap();
        if name == "hwlatdetect" {
            continue;
        }
        let verdict = t["verdict"].as_str().unwrap();
        assert!(verdict == "PASS" || verdict == "FAIL", "{name}: {t}");
        assert_eq!(t["state"], "done", "{name}");
        let stderr: Vec<String> = strings(&t["raw_files"])
            .iter()
            .filter(|f| f.ends_with("stderr.txt"))
            .map(|f| fs::read_to_string(dir.join(f)).unwrap_or_default())
            .collect();
        assert_eq!(t["invalid_reasons"], serde_json::json!([]), "{name}: {t} stderr: {stderr:?}");
        for file in strings(&t["files"]) {
            assert!(dir.join(&file).is_file(), "{name}: {file}");
        }
        assert!(!t["files"].as_array().unwrap().is_empty(), "{name}");
    }
    // Where each program measured: oslat and the latency tests on RT CPU 1.
    for name in ["oslat", "pmqtest", "ptsematest", "sigwaittest", "svsematest", "signaltest"] {
        let rows = by_name(name)["rows"].as_array().unwrap();
        assert!(!rows.is_empty(), "{name}");
        assert!(rows.iter().all(|r| r["cpu"] == 1), "{name}: {rows:?}");
    }
    assert!(!by_name("oslat")["rows"][0]["histogram"].as_array().unwrap().is_empty());
    // rt-migrate-test's verdict needs its plain output (Passed!), kept beside the JSON.
    assert_eq!(
        strings(&by_name("rt-migrate-test")["files"]),
        ["raw/hackbench.rt-migrate-test.json", "raw/hackbench.rt-migrate-test.txt"]
    );
    // This kernel has no hwlat tracer: hwlatdetect is recorded as skipped, with the reason.
    let hwlat = by_name("hwlatdetect");
    if hwlat["verdict"] == "SKIPPED" {
        assert!(hwlat["skipped"].as_str().unwrap().contains("no hwlat tracer"), "{hwlat}");
        assert!(
            run.stderr()
                .contains("hwlatdetect skipped: the kernel on this machine has no hwlat tracer")
        );
    }
    assert_eq!(suite_processes(), Vec::<String>::new(), "left running");

    // report: one verdict per test and scenario, a JUnit case each.
    let report = Test::new()
        .args(["report", "--json", "--junit", "junit.xml", "--html", "r.html"])
        .args([&dir])
        .run()
        .stderr_is("       Wrote r.html\n       Wrote junit.xml\n");
    assert!(report.code() == 0 || report.code() == 1, "{}", report.stderr());
    let out = report.json();
    let scenario = &out["inputs"][0]["scenarios"][0];
    assert_eq!(scenario["name"], "hackbench");
    let reported: Vec<&str> =
        scenario["tests"].as_array().unwrap().iter().map(|t| t["test"].as_str().unwrap()).collect();
    assert_eq!(reported, names);
    let junit = fs::read_to_string(report.path().join("junit.xml")).unwrap();
    for name in &names {
        assert!(junit.contains(&format!("name=\"hackbench: {name}")), "{name}: {junit}");
    }
    assert!(junit.contains("name=\"hackbench: cyclictest"), "{junit}");
    let html = fs::read_to_string(report.path().join("r.html")).unwrap();
    assert!(html.contains("OS noise (oslat)"), "no oslat chart");
}

#[test]
fn oslat_alone_runs_first_without_cyclictest() {
    let _one_at_a_time = measuring();
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--tests", "oslat"])
        .args(["--duration", "1", "--noise-us", "1000000", "--out", "res"])
        .run()
        .ignore_stdout()
        // The other lines carry what this machine measured and how it is set up.
        .stderr_has_line("     Testing idle: oslat for 1s on RT CPUs 1");
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    let json = run_json(&run.path().join("res"));
    let s = &json["scenarios"][0];
    assert_eq!(s["argv"]["cyclictest"], serde_json::json!([]));
    assert_eq!(s["files"], serde_json::json!([]));
    assert_eq!(s["invalid_reasons"], serde_json::json!([]));
    assert_eq!(s["tests"][0]["name"], "oslat");
    assert_eq!(s["tests"][0]["verdict"], "PASS");
    // A 1 s limit of 1 000 000 µs cannot be exceeded: the run's verdict is pass.
    assert_eq!(json["verdict"], "PASS");
    assert_eq!(run.code(), 0);
}

#[test]
fn bad_tests_and_test_args_exit_2_and_write_nothing() {
    let cases: [(&[&str], &str); 7] = [
        (
            &["--tests", "oslat,bogus"],
            "unknown test `bogus` in --tests; use cyclictest, cyclicdeadline, oslat, pmqtest, ptsematest, sigwaittest, svsematest, signaltest, pi_stress, rt-migrate-test, ssdd or hwlatdetect",
        ),
        (
            &["--tests", "hackbench"],
            "hackbench is a load, not a test; run it with --scenario hackbench and keep it out of --tests",
        ),
        (
            &["--tests", "oslat", "--test-args", "oslat=-c 0"],
            "--test-args oslat: `-c` conflicts with what rtbuild sets: rtbuild runs oslat on the RT CPUs (--rt-cpus); remove `-c` from --test-args oslat",
        ),
        (
            &["--tests", "oslat", "--test-args", "oslat=-D 1 $(reboot)"],
            "--test-args oslat: `$(reboot)` only means something to a shell, and rtbuild runs the program without one; pass one program and its arguments (wrap a pipeline in a script on the target)",
        ),
        (
            &["--tests", "oslat", "--test-args", "pmqtest=-i 100"],
            "--test-args pmqtest: pmqtest is not in --tests; add it there or drop these options",
        ),
        (
            &["--tests", "oslat", "--test-args", "oslat=-D 1", "--test-args", "oslat=-z"],
            "--test-args oslat is given twice; put all of oslat's options in one value",
        ),
        (
            &["--test-args", "hackbench=-l 5"],
            "--test-args hackbench: `-l` conflicts with what rtbuild sets: rtbuild runs hackbench until the scenario ends; remove `-l` from --test-args hackbench",
        ),
    ];
    for (args, message) in cases {
        Test::new()
            .args(["test", "--local", "--rt-cpus", "1", "--scenario", "hackbench", "--out", "res"])
            .args(args.iter().copied())
            .run()
            .usage_error(message)
            .nothing_written("res");
    }
}

#[test]
fn over_ssh_the_tests_run_on_the_target_and_are_recorded_the_same_way() {
    let _one_at_a_time = measuring();
    let sshd = crate::support::sshd::Sshd::start();
    let run = Test::new()
        .args(["test", "--target", &sshd.url(), "--ssh-config"])
        .args([sshd.config()])
        .args(["--rt-cpus", "1", "--scenario", "idle", "--tests", "oslat,svsematest,ssdd"])
        .args(["--duration", "1", "--out", "res"])
        .run()
        .ignore_stdout()
        // The other lines carry what the target measured and how it is set up.
        .stderr_has_line("     Testing idle: oslat for 1s on RT CPUs 1")
        .stderr_has_line("     Testing idle: svsematest-cpu1 for 1s on RT CPUs 1")
        .stderr_has_line("     Testing idle: ssdd for 1s on RT CPUs 1");
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["target"], sshd.url());
    let tests = json["scenarios"][0]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 3);
    for t in tests {
        assert_eq!(t["invalid_reasons"], serde_json::json!([]), "{t}");
        assert!(t["verdict"] == "PASS" || t["verdict"] == "FAIL", "{t}");
    }
    // svsematest measured over ssh too (its ftok needs `_`, which the helper sets).
    assert_eq!(tests[1]["rows"][0]["cpu"], 1);
    assert_eq!(suite_processes(), Vec::<String>::new(), "left running");
}

#[test]
fn ctrl_c_during_oslat_stops_it_and_keeps_the_record() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let _one_at_a_time = measuring();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let child = Command::new(crate::support::harness::rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle,hackbench"])
        .args(["--tests", "oslat,pmqtest", "--duration", "60", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    wait_for("oslat never started", Duration::from_secs(30), || {
        out.join("raw/idle.oslat.txt").exists().then_some(())
    });
    std::thread::sleep(Duration::from_secs(2));
    crate::support::processes::unsafe_kill(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted: stopping oslat and the load"), "{stderr}");
    assert!(start.elapsed() < Duration::from_secs(40), "the stop took too long");
    let json = run_json(&out);
    assert_eq!(json["state"], "interrupted");
    assert_eq!(json["scenarios"].as_array().unwrap().len(), 1, "hackbench must not start");
    let oslat = &json["scenarios"][0]["tests"][0];
    assert_eq!(oslat["state"], "interrupted");
    assert!(
        oslat["invalid_reasons"].to_string().contains("interrupted before the planned run time")
    );
    // oslat got SIGINT and still wrote its JSON: what it measured is kept.
    assert_eq!(oslat["files"], serde_json::json!(["raw/idle.oslat.json"]), "{oslat}");
    assert_eq!(
        json["scenarios"][0]["tests"].as_array().unwrap().len(),
        1,
        "pmqtest must not start"
    );
    assert_eq!(suite_processes(), Vec::<String>::new(), "left running");
    assert!(
        !std::fs::read_dir("/tmp").unwrap().flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with("rtbuild-test.")
                && fs::read_to_string(e.path().join("program.comm")).is_ok()
                && fs::read_to_string(e.path().join("program.pid"))
                    .is_ok_and(|p| crate::support::processes::alive(p.trim().parse().unwrap_or(0)))
        }),
        "a state folder with a live program is left"
    );
}
