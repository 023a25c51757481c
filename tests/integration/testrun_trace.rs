//! `rtbuild test --trace-above-us` with the real cyclictest and this machine's real tracefs,
//! locally and over ssh to an sshd on loopback: the trace file and the spike entry exist, and
//! every tracing setting reads back as before — behaviour, never latency values. The limit is
//! 5 µs, which cyclictest's first samples cross on any machine, so the breach comes at once.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::harness::{Test, rtbuild_bin, wait_for};
use crate::support::measuring::{measuring, result_line, run_json};
use crate::support::processes::unsafe_kill;
use crate::support::target::local_and_ssh;
use crate::support::tracefs::{tracefs, tracing_settings};

/// The checks every traced run must pass: `-b 5 --tracemark` on cyclictest's command line,
/// the breach recorded with its kept trace, and the report's spike for it.
fn check_traced(dir: &Path) -> Value {
    let json = run_json(dir);
    assert_eq!(json["settings"]["trace_above_us"], 5, "{json}");
    assert_eq!(json["settings"]["analyzer"], "ftrace");
    assert_eq!(json["tracing"]["restored"], true, "{json}");
    assert!(json["tracing"]["events"].to_string().contains("sched:sched_switch"), "{json}");
    let s = &json["scenarios"][0];
    let argv: Vec<&str> =
        s["argv"]["cyclictest"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert!(argv.ends_with(&["-b", "5", "--tracemark"]), "{argv:?}");
    assert_eq!(s["trace"]["file"], "trace-idle.txt", "{s}");
    assert_eq!(s["trace"]["cpu"], 1, "{s}");
    assert!(s["trace"]["latency_us"].as_f64().unwrap() > 5.0, "{s}");
    let trace = fs::read_to_string(dir.join("trace-idle.txt")).unwrap();
    assert!(trace.starts_with("# tracer: nop"), "{trace}");
    assert!(trace.contains("tracing_mark_write: hit latency threshold ("), "{trace}");
    // The breach ends cyclictest early; that alone does not make the run invalid.
    let reasons = s["invalid_reasons"].to_string();
    assert!(!reasons.contains("expected cycles"), "{reasons}");
    assert!(!reasons.contains("before it could be observed"), "{reasons}");

    // The run stopped at its first breach, so it is invalid: the verdict fails (exit 1).
    let report = Test::new().args(["report"]).arg_path(dir).args(["--json"]).run().code_is(1);
    let report_json = report.json();
    let spikes = report_json["spikes"].as_array().unwrap();
    assert_eq!(spikes.len(), 1, "{report_json}");
    let spike = &spikes[0];
    assert_eq!(spike["scenario"], "idle");
    assert_eq!(spike["cpu"], 1);
    assert_eq!(spike["latency_us"], s["trace"]["latency_us"]);
    assert!(!spike["explanation"].as_str().unwrap().is_empty());
    let events = spike["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["kind"] == "mark"), "{spike}");
    for e in events {
        for key in ["ts", "kind", "name", "duration_us"] {
            assert!(e.get(key).is_some(), "{e} lacks {key}");
        }
    }
    let html = dir.join("report.html");
    Test::new()
        .args(["report"])
        .arg_path(dir)
        .args(["--html"])
        .arg_path(&html)
        .args(["--junit"])
        .arg_path(&dir.join("junit.xml"))
        .run()
        .code_is(1)
        .stderr_is(&format!(
            "       Wrote {}\n       Wrote {}\n",
            html.display(),
            dir.join("junit.xml").display()
        ))
        .stdout_contains("threshold 100 µs");
    let page = fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h3 class=\"spike\">Spike: "), "no spike section");
    assert!(page.contains("hit latency threshold ("), "no trace excerpt");
    crate::support::harness::assert_junit_valid(&dir.join("junit.xml"));
    let junit = fs::read_to_string(dir.join("junit.xml")).unwrap();
    // The case's one-line summary first, then each spike's explanation.
    assert!(junit.contains("<system-out>cyclictest: max "), "{junit}");
    assert!(junit.contains(" us\nspike: "), "{junit}");
    assert!(junit.contains("(trace-idle.txt): "), "{junit}");
    json
}

local_and_ssh! {
    /// The same run locally and over ssh: the breach's trace is kept and explained, the run is
    /// recorded against its target, and every tracing setting reads back as before.
    fn a_breach_keeps_its_trace_explains_it_and_restores_tracing(target) {
        let _one_at_a_time = measuring();
        let before = tracing_settings();
        let run = Test::new()
            .args(["test"])
            .args(target.args())
            .args(["--rt-cpus", "1", "--scenario", "idle", "--duration", "60s"])
            .args(["--histogram-us", "200000", "--trace-above-us", "5", "--out", "res"])
            .run()
            .stdout_is("res\n");
        assert_eq!(run.code(), 1, "{}", run.stderr());
        let stderr = run.stderr();
        assert!(stderr.contains("Restored the tracing settings in "), "{stderr}");
        assert!(stderr.contains("Traced idle: "), "{stderr}");
        // cyclictest stops at its first latency above 5 µs: a stop below the 100 µs threshold
        // leaves the run short of its duration (INVALID), one above it is a breach (FAIL). Which
        // comes first is this machine's latency, so either is right; PASS never is.
        let verdict = result_line(run.code(), &stderr, "100 µs (default, SIL 2)", "res");
        assert!(["FAIL", "INVALID"].contains(&verdict.as_str()), "{verdict}: {stderr}");
        let json = check_traced(&run.path().join("res"));
        assert_eq!(json["target"], target.recorded());
        assert_eq!(tracing_settings(), before);
    }
}

#[test]
fn ctrl_c_during_a_traced_run_restores_tracing() {
    let _one_at_a_time = measuring();
    let before = tracing_settings();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    // A limit no sample reaches: the run measures until the signal.
    let child = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "60s"])
        .args(["--histogram-us", "200000", "--trace-above-us", "1000000", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the run never started measuring", Duration::from_secs(30), || {
        out.join("raw/idle.hist.txt").exists().then_some(())
    });
    assert_ne!(tracing_settings(), before, "tracing was not set up while measuring");
    std::thread::sleep(Duration::from_secs(2));
    unsafe_kill(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    let json = run_json(&out);
    assert_eq!(json["state"], "interrupted");
    assert_eq!(json["tracing"]["restored"], true, "{json}");
    assert!(json["scenarios"][0].get("trace").is_none(), "no breach, no trace");
    assert!(!out.join("trace-idle.txt").exists());
    assert_eq!(tracing_settings(), before);
}

#[test]
fn a_second_ctrl_c_still_restores_tracing() {
    let _one_at_a_time = measuring();
    let before = tracing_settings();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let child = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "stress", "--duration", "60s"])
        .args(["--histogram-us", "200000", "--trace-above-us", "1000000", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the run never started measuring", Duration::from_secs(30), || {
        out.join("raw/stress.hist.txt").exists().then_some(())
    });
    std::thread::sleep(Duration::from_secs(1));
    unsafe_kill(child.id(), "INT");
    std::thread::sleep(Duration::from_millis(50));
    unsafe_kill(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert_eq!(tracing_settings(), before, "{stderr}");
}

#[test]
fn tracing_that_cannot_be_used_is_refused_with_exit_2_and_nothing_written() {
    let base = ["test", "--local", "--rt-cpus", "1", "--duration", "2s", "--out", "res"];
    Test::new()
        .args(base)
        .args(["--trace-above-us", "50", "--cyclictest-args", "-b 100"])
        .run()
        .usage_error("--cyclictest-args `-b` conflicts with --trace-above-us, which sets -b and --tracemark itself; drop it from --cyclictest-args")
        .nothing_written("res");
    Test::new()
        .args(base)
        .args(["--trace-above-us", "50", "--cyclictest-args", "--tracemark"])
        .run()
        .code_is(2)
        .stderr_contains("--tracemark")
        .nothing_written("res");
    Test::new()
        .args(base)
        .args(["--trace-above-us", "50", "--tests", "oslat"])
        .run()
        .usage_error("--trace-above-us traces cyclictest's breach, but --tests has no cyclictest; add cyclictest to --tests or drop --trace-above-us")
        .nothing_written("res");
    for bad in ["0", "-3", "1000001", "fast"] {
        Test::new()
            .args(base)
            .args([format!("--trace-above-us={bad}")])
            .run()
            .code_is(2)
            .stderr_contains("--trace-above-us")
            .nothing_written("res");
    }
    Test::new()
        .args(base)
        .args(["--analyzer", "rtla"])
        .run()
        .code_is(2)
        .stderr_contains("--trace-above-us")
        .nothing_written("res");
    Test::new()
        .args(base)
        .args(["--trace-above-us", "50", "--analyzer", "lttng"])
        .run()
        .code_is(2)
        .stderr_contains("ftrace, rtla")
        .nothing_written("res");
}

#[test]
fn rtla_without_timerlat_or_rtla_is_refused_and_tracing_is_untouched() {
    let _one_at_a_time = measuring();
    let before = tracing_settings();
    let tracers = fs::read_to_string(tracefs().join("available_tracers")).unwrap();
    let has_rtla = Command::new("sh").args(["-c", "command -v rtla"]).status().unwrap().success();
    let why = if !tracers.split_whitespace().any(|t| t == "timerlat") {
        "has no timerlat tracer (CONFIG_TIMERLAT_TRACER"
    } else {
        assert!(!has_rtla, "this machine has timerlat and rtla: the refusal cannot be shown here");
        "rtla is not installed"
    };
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", "1", "--duration", "2s", "--out", "res"])
        .args(["--trace-above-us", "50", "--analyzer", "rtla"])
        .run()
        .code_is(2)
        .nothing_written("res");
    let stderr = run.stderr();
    assert!(stderr.starts_with("error: --trace-above-us: this machine: "), "{stderr}");
    assert!(stderr.contains(why), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(tracing_settings(), before);
}

/// Runs `rtbuild ARGS` as root in a private mount namespace where tracefs is not mounted:
/// `hide` runs there first (a shell snippet), and afterwards the namespace says whether
/// /sys/kernel/tracing is still a mount point (`still-mounted`).
fn without_tracefs(hide: &str, args: &[&str], cwd: &Path) -> std::process::Output {
    let script = format!(
        "umount /sys/kernel/tracing 2>/dev/null; mount -t tmpfs none /sys/kernel/debug || exit 97; {hide}
\"$@\"; rc=$?
mountpoint -q /sys/kernel/tracing && echo still-mounted >&2
exit $rc"
    );
    Command::new("unshare")
        .args(["-m", "sh", "-c", &script, "sh"])
        .arg(rtbuild_bin())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

#[test]
fn tracefs_is_mounted_when_needed_and_unmounted_afterwards() {
    let _one_at_a_time = measuring();
    let tmp = tempfile::tempdir().unwrap();
    let args = ["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "60s"];
    let output = without_tracefs(
        "",
        &[&args[..], &["--histogram-us", "200000", "--trace-above-us", "5", "--out", "res"]]
            .concat(),
        tmp.path(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("still-mounted"), "{stderr}");
    let json = run_json(&tmp.path().join("res"));
    assert_eq!(json["tracing"]["mounted"], true, "{json}");
    assert_eq!(json["tracing"]["tracefs"], "/sys/kernel/tracing");
    assert_eq!(json["tracing"]["restored"], true, "{json}");
    assert!(tmp.path().join("res/trace-idle.txt").is_file(), "{stderr}");
}

#[test]
fn tracing_that_cannot_be_mounted_is_refused_with_exit_2() {
    let _one_at_a_time = measuring();
    let tmp = tempfile::tempdir().unwrap();
    // An empty read-only /sys/kernel: no tracefs, and nowhere to mount one.
    let output = without_tracefs(
        "mount -t tmpfs -o ro none /sys/kernel || exit 98",
        &["test", "--local", "--rt-cpus", "1", "--trace-above-us", "50", "--out", "res"],
        tmp.path(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "error: --trace-above-us: this machine: could not mount tracefs on /sys/kernel/tracing; mount it by hand (mount -t tracefs nodev /sys/kernel/tracing) or drop --trace-above-us\n"
    );
    assert!(!tmp.path().join("res").exists());
}

/// What the recording fake prints: the line formats of rtla timerlat top's auto-analysis
/// (kernel `Documentation/tools/rtla/rtla-timerlat-top.rst`), with figures of its own.
const FAKE_RTLA_OUTPUT: &str = "                                     Timer Latency
  0 00:00:02   |          IRQ Timer Latency (us)        |         Thread Timer Latency (us)
CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max
  1 #1999      |        2         0         1        81 |      120         3         9       120
rtla timerlat hit stop tracing
## CPU 1 hit stop tracing, analyzing it ##
  IRQ handler delay:                                        80.10 us (66.75 %)
  IRQ latency:                                              81.00 us
  Timerlat IRQ duration:                                    10.20 us (8.50 %)
  Blocking thread:                                          20.50 us (17.08 %)
                         stress-ng:4242                     20.50 us
    Blocking thread stacktrace
                -> timerlat_irq
                -> hrtimer_interrupt
------------------------------------------------------------------------
    Thread latency:                                        120.00 us (100%)

  Saving trace to timerlat_trace.txt
";

/// A FAKE rtla (recording its argv and working folder in `record`) in `tmp/bin`, and a fake
/// tracefs folder whose available_tracers lists timerlat, for `--analyzer rtla` on this
/// kernel, which has no timerlat tracer. Returns (bin, tracefs, record).
fn fake_rtla(tmp: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let fake_tracefs = tmp.join("tracefs");
    fs::create_dir(&fake_tracefs).unwrap();
    for (file, text) in [
        ("trace_marker", ""),
        ("tracing_on", "1\n"),
        ("current_tracer", "nop\n"),
        ("available_tracers", "timerlat osnoise function nop\n"),
        ("buffer_size_kb", "1408\n"),
        ("tracing_cpumask", "3\n"),
        ("set_event", ""),
        ("trace", ""),
    ] {
        fs::write(fake_tracefs.join(file), text).unwrap();
    }
    let bin = tmp.join("bin");
    fs::create_dir(&bin).unwrap();
    let record = tmp.join("rtla-calls.txt");
    let script = format!(
        "#!/bin/sh\n{{ echo \"cwd $PWD\"; echo \"argv $*\"; }} >> \"$FAKE_RTLA_RECORD\"\n[ -z \"${{FAKE_RTLA_TRACING_OFF:-}}\" ] || echo 0 > \"$RTBUILD_TRACEFS/tracing_on\"\necho 'trace of the fake' > timerlat_trace.txt\ncat <<'OUT'\n{FAKE_RTLA_OUTPUT}OUT\n"
    );
    fs::write(bin.join("rtla"), script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(bin.join("rtla"), fs::Permissions::from_mode(0o755)).unwrap();
    (bin, fake_tracefs, record)
}

/// `rtbuild test --analyzer rtla` on this machine with the fake rtla in `bin` and the fake
/// tracefs, a 2 s idle scenario with `--trace-above-us 50`, into `res`.
fn traced_by_fake_rtla(bin: &Path, fake_tracefs: &Path, record: &Path) -> Test {
    Test::new()
        .path_prepend(bin)
        .env("RTBUILD_TRACEFS", fake_tracefs)
        .env("FAKE_RTLA_RECORD", record)
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "2s"])
        .args(["--histogram-us", "200000", "--trace-above-us", "50", "--analyzer", "rtla"])
        .args(["--out", "res"])
}

#[test]
fn analyzer_rtla_with_a_recording_fake_rtla_keeps_its_auto_analysis() {
    // This kernel has no timerlat tracer, so a FAKE rtla (recording its argv and working
    // folder) and a fake tracefs folder whose available_tracers lists timerlat
    // (RTBUILD_TRACEFS) stand in; cyclictest and the rest of the run are real.
    let _one_at_a_time = measuring();
    let before = tracing_settings();
    let tmp = tempfile::tempdir().unwrap();
    let (bin, fake_tracefs, record) = fake_rtla(tmp.path());
    let run = traced_by_fake_rtla(&bin, &fake_tracefs, &record).run().stdout_is("res\n");
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    result_line(run.code(), &run.stderr(), "100 µs (default, SIL 2)", "res");
    let calls = fs::read_to_string(&record).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 2, "{calls}");
    assert!(lines[0].starts_with("cwd /tmp/rtbuild-test."), "{calls}");
    assert_eq!(lines[1], "argv timerlat top -a 50 -c 1 -d 2s -q");

    let dir = run.path().join("res");
    let json = run_json(&dir);
    assert_eq!(json["settings"]["analyzer"], "rtla");
    assert_eq!(json["tracing"]["tracefs"], fake_tracefs.display().to_string());
    assert_eq!(json["tracing"]["restored"], true, "{:#}", json["tracing"]);
    let s = &json["scenarios"][0];
    let argv = s["argv"]["cyclictest"].to_string();
    assert!(!argv.contains("\"-b\"") && !argv.contains("tracemark"), "{argv}");
    assert!(s["commands"].to_string().contains("rtla timerlat top -a 50 -c 1 -d 2s -q"), "{s}");
    assert_eq!(s["trace"]["file"], "trace-idle.txt");
    assert_eq!(s["trace"]["cpu"], 1);
    assert_eq!(s["trace"]["latency_us"], 120.0);
    assert_eq!(fs::read_to_string(dir.join("trace-idle.txt")).unwrap(), FAKE_RTLA_OUTPUT);
    assert_eq!(
        fs::read_to_string(dir.join("trace-idle.timerlat.txt")).unwrap(),
        "trace of the fake\n"
    );

    // The fake's 120 µs breach is above the 100 µs limit: the verdict fails (exit 1).
    let report = Test::new().args(["report"]).arg_path(&dir).args(["--json"]).run().code_is(1);
    let report_json = report.json();
    let spike = &report_json["spikes"][0];
    assert_eq!(spike["analyzer"], "rtla");
    assert_eq!(spike["cpu"], 1);
    assert_eq!(spike["latency_us"], 120.0);
    assert!(
        spike["explanation"]
            .as_str()
            .unwrap()
            .starts_with("rtla timerlat auto-analysis: CPU 1 hit stop tracing, analyzing it: IRQ handler delay: 80.10 us (66.75 %);"),
        "{spike}"
    );
    assert_eq!(tracing_settings(), before, "rtla mode changes no tracing setting itself");
}

/// rtla records in an instance of its own, yet on the lab's arm64 PREEMPT_RT guest the
/// top-level `tracing_on` read 0 after an rtla run that stopped at its threshold: rtbuild saves
/// the top-level settings before rtla and puts them back after it, reading each back, instead of
/// assuming rtla changed nothing. A FAKE rtla that switches the (fake) top-level tracing off
/// stands in for that run.
#[test]
fn tracing_switched_off_by_a_recording_fake_rtla_is_put_back_and_read_back() {
    let _one_at_a_time = measuring();
    let tmp = tempfile::tempdir().unwrap();
    let (bin, fake_tracefs, record) = fake_rtla(tmp.path());
    let run = traced_by_fake_rtla(&bin, &fake_tracefs, &record)
        .env("FAKE_RTLA_TRACING_OFF", "1")
        .run()
        .stdout_is("res\n")
        .stderr_has_line(&format!(
            "    Restored the tracing settings in {}",
            fake_tracefs.display()
        ));
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    assert_eq!(fs::read_to_string(&record).unwrap().lines().count(), 2, "rtla ran once");
    assert_eq!(fs::read_to_string(fake_tracefs.join("tracing_on")).unwrap().trim(), "1");
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["tracing"]["restored"], true, "{:#}", json["tracing"]);
    assert_eq!(json["tracing"]["restore_problems"], serde_json::json!([]), "{:#}", json["tracing"]);
}

#[test]
fn a_second_traced_run_on_the_same_machine_is_refused_while_the_first_traces() {
    let _one_at_a_time = measuring();
    let before = tracing_settings();
    // The lock a running traced run holds, naming its (live) state folder.
    let owner = tempfile::Builder::new().prefix("rtbuild-test.").tempdir_in("/tmp").unwrap();
    let lock = Path::new("/tmp/rtbuild-trace.lock");
    fs::create_dir(lock).expect("no other traced rtbuild run on this machine");
    fs::write(lock.join("owner"), format!("{}\n", owner.path().display())).unwrap();
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", "1", "--duration", "2s", "--out", "res"])
        .args(["--trace-above-us", "50"])
        .run();
    let stderr = run.stderr();
    let _ = fs::remove_dir_all(lock);
    let run = run.code_is(2).nothing_written("res");
    assert!(
        stderr.starts_with(&format!(
            "error: --trace-above-us: this machine: tracing is in use by another rtbuild run ({}); ",
            owner.path().display()
        )),
        "{stderr}"
    );
    drop(run);
    assert_eq!(tracing_settings(), before);

    // A lock whose run is gone is stale: the next run takes it over and gives it back.
    drop(owner);
    fs::create_dir(lock).unwrap();
    fs::write(lock.join("owner"), "/tmp/rtbuild-test.gone\n").unwrap();
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "60s"])
        .args(["--histogram-us", "200000", "--trace-above-us", "5", "--out", "res"])
        .run()
        .stdout_is("res\n");
    assert_eq!(run.code(), 1, "{}", run.stderr());
    result_line(run.code(), &run.stderr(), "100 µs (default, SIL 2)", "res");
    assert!(run.path().join("res/trace-idle.txt").is_file());
    assert!(!lock.exists(), "the lock is given back");
    assert_eq!(tracing_settings(), before);
}
