//! Issue 39, the run side: `rtbuild test` measures what it says it measured, and a run that
//! departs from what was asked is refused before it starts or judged invalid with the reason.
//! Real cyclictest and stress-ng on this machine; a recording fake stress-ng where the point
//! is a load that does not load; a fake target tree (RTBUILD_SYSROOT) for a kernel that
//! isolates other CPUs. Never a latency value.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::support::cpus::{cpu_list, online_cpus};
use crate::support::harness::Test;
use crate::support::measuring::{latency_dependent, measuring, run_json};
use crate::support::processes::{processes_with_args, unsafe_kill};

/// One cyclictest thread as the test itself read it from /proc while the run measured.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    tid: u64,
    allowed: String,
    policy: u64,
}

/// `Cpus_allowed_list` and the scheduling policy (stat field 41) of every thread of `pid`.
fn threads_of(pid: u32) -> Vec<Seen> {
    let mut seen = Vec::new();
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else { return seen };
    for task in dir.filter_map(Result::ok) {
        let Ok(tid) = task.file_name().to_string_lossy().parse::<u64>() else { continue };
        let status = fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let stat = fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let Some(allowed) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(") ") else { continue };
        // `rest` starts at field 3; policy is field 41.
        let Some(policy) = rest.split_whitespace().nth(41 - 3).and_then(|p| p.parse().ok()) else {
            continue;
        };
        seen.push(Seen { tid, allowed: allowed.trim().to_string(), policy });
    }
    seen.sort_by_key(|s| s.tid);
    seen
}

/// Watches /proc, while `run` runs, for the cyclictest whose argv holds `marker` (an interval
/// no other test uses) and returns its SCHED_FIFO threads once `want` of them are up.
fn watch_cyclictest<R>(marker: &[&str], want: usize, run: impl FnOnce() -> R) -> (R, Vec<Seen>) {
    let done = Arc::new(AtomicBool::new(false));
    let marker: Vec<String> = marker.iter().map(|s| s.to_string()).collect();
    let watcher = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let marker: Vec<&str> = marker.iter().map(String::as_str).collect();
            while !done.load(Ordering::SeqCst) {
                for pid in processes_with_args("cyclictest", &marker) {
                    let workers: Vec<Seen> =
                        threads_of(pid).into_iter().filter(|t| t.policy == 1).collect();
                    if workers.len() == want {
                        return workers;
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Vec::new()
        })
    };
    let result = run();
    done.store(true, Ordering::SeqCst);
    (result, watcher.join().unwrap())
}

/// Whether one line of `stderr` starts with `start` and ends with `end`, a measured figure
/// between them.
fn has_line_between(stderr: &str, start: &str, end: &str) -> bool {
    stderr
        .lines()
        .any(|l| l.len() > start.len() + end.len() && l.starts_with(start) && l.ends_with(end))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

/// The RK3588 guide's eight unpinned threads with `--measure-cpus all`: cyclictest's process
/// gets every online CPU (not rtbuild's housekeeping-only mask), so its threads, read from
/// /proc by this test during the run, spread over every CPU; run.json records the same
/// affinity per thread; and without --histogram-us the threads keep cyclictest's own interval
/// distance (its `-d` default, 500 µs), as its own output shows.
#[test]
fn eight_unpinned_threads_run_on_every_measured_cpu_at_cyclictests_own_intervals() {
    let _one_at_a_time = measuring();
    let online = online_cpus();
    let n = std::thread::available_parallelism().unwrap().get();
    assert_eq!(online.len(), n, "online CPUs and available parallelism differ");
    let rt = *online.last().unwrap();
    let (run, seen) = watch_cyclictest(&["-i", "1009"], 8, || {
        Test::new()
            .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--measure-cpus", "all"])
            .args(["--threads", "8", "--unpinned", "--scenario", "idle", "--duration", "4"])
            .args(["--interval-us", "1009", "--out", "res"])
            .run()
            .ignore_stdout()
            // What it says it measures (the figures and host warnings around it vary).
            .stderr_has_line(&format!(
                "   Measuring idle for 4s on CPUs {} (RT CPUs {rt})",
                cpu_list(&online)
            ))
    });
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    // Read from /proc by the test: 8 SCHED_FIFO threads, each allowed one CPU, together every
    // online CPU, as evenly as 8 threads over n CPUs go.
    assert_eq!(seen.len(), 8, "the test never saw cyclictest's 8 threads");
    let mut per_cpu: BTreeMap<String, usize> = BTreeMap::new();
    for t in &seen {
        assert!(!t.allowed.contains([',', '-']), "thread {t:?} may use several CPUs");
        *per_cpu.entry(t.allowed.clone()).or_default() += 1;
    }
    let used: Vec<u64> = per_cpu.keys().map(|c| c.parse().unwrap()).collect();
    let mut used_sorted = used.clone();
    used_sorted.sort_unstable();
    assert_eq!(used_sorted, online, "threads must cover every measured CPU: {seen:?}");
    let (lo, hi) = (8 / n, 8_usize.div_ceil(n));
    assert!(per_cpu.values().all(|c| (lo..=hi).contains(c)), "{per_cpu:?}");

    let dir = run.path().join("res");
    let json = run_json(&dir);
    let s = &json["scenarios"][0];
    let reasons = strings(&s["invalid_reasons"]);
    assert!(reasons.iter().all(|r| latency_dependent(r)), "{reasons:?}");
    assert_eq!(json["measure_cpus"], cpu_list(&online));
    assert_eq!(s["cyclictest_affinity"], cpu_list(&online), "{s:#}");
    // run.json's per-thread record is what /proc said.
    let placement = s["thread_placement"].as_array().unwrap();
    for t in &seen {
        let entry = placement.iter().find(|p| p["tid"] == t.tid).unwrap_or_else(|| {
            panic!("thread {} missing from thread_placement: {placement:?}", t.tid)
        });
        assert_eq!(entry["allowed"], t.allowed.as_str(), "{entry}");
        assert_eq!(entry["ran_on"], t.allowed.as_str(), "a pinned-by-cyclictest thread: {entry}");
    }
    let numbers: Vec<u64> = placement.iter().map(|p| p["thread"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (0..8).collect::<Vec<_>>(), "{placement:?}");

    // No -h: cyclictest's own distance. Its own stdout says each thread's interval.
    let argv = strings(&s["argv"]["cyclictest"]);
    assert!(!argv.contains(&"-h".to_string()) && !argv.contains(&"-d".to_string()), "{argv:?}");
    let stdout = fs::read_to_string(dir.join("raw/idle.hist.txt")).unwrap();
    for k in 0..8u64 {
        let interval = 1009 + 500 * k;
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("T: {k} "))
                    && l.contains(&format!(" I:{interval} "))),
            "thread {k} at I:{interval} in {stdout}"
        );
        assert_eq!(s["threads"][k as usize]["interval_us"], interval, "{:#}", s["threads"]);
    }
}

/// `--rt-cpus R --threads 8 --unpinned` claims to measure CPU R: all eight threads are
/// allowed exactly CPU R (read from /proc during the run), never rtbuild's own CPUs.
#[test]
fn unpinned_threads_without_measure_cpus_all_run_on_the_rt_cpu() {
    let _one_at_a_time = measuring();
    let rt = *online_cpus().last().unwrap();
    let (run, seen) = watch_cyclictest(&["-i", "1013"], 8, || {
        Test::new()
            .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--threads", "8"])
            .args(["--unpinned", "--scenario", "idle", "--duration", "3"])
            .args(["--interval-us", "1013", "--histogram-us", "200000", "--out", "res"])
            .run()
            .ignore_stdout()
            .stderr_has_line(&format!("   Measuring idle for 3s on RT CPUs {rt}"))
    });
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    assert_eq!(seen.len(), 8, "the test never saw cyclictest's 8 threads");
    for t in &seen {
        assert_eq!(t.allowed, rt.to_string(), "{seen:?}");
    }
    let json = run_json(&run.path().join("res"));
    let s = &json["scenarios"][0];
    let reasons = strings(&s["invalid_reasons"]);
    assert!(reasons.iter().all(|r| latency_dependent(r)), "{reasons:?}");
    assert_eq!(s["cyclictest_affinity"], rt.to_string());
    for p in s["thread_placement"].as_array().unwrap() {
        assert_eq!(p["allowed"], rt.to_string(), "{p}");
    }
    // A histogram run (as on a target) prints no thread ids on stdout: the numbers come from
    // cyclictest's status blocks on its stderr, and the main thread is no entry.
    let placement = s["thread_placement"].as_array().unwrap();
    let numbers: Vec<Option<u64>> = placement.iter().map(|p| p["thread"].as_u64()).collect();
    assert_eq!(numbers, (0..8).map(Some).collect::<Vec<_>>(), "{placement:?}");
}

/// Fewer unpinned threads than measured CPUs would leave a claimed CPU unmeasured: refused.
#[test]
fn fewer_unpinned_threads_than_measured_cpus_is_refused() {
    let online = online_cpus();
    let all = cpu_list(&online);
    let rt = online.last().unwrap().to_string();
    Test::new()
        .args(["test", "--local", "--rt-cpus", &rt, "--measure-cpus", "all", "--threads", "1"])
        .args(["--unpinned", "--scenario", "idle", "--duration", "2", "--out", "res"])
        .run()
        .usage_error(&format!(
            "--threads 1 --unpinned leaves measured CPUs without a thread: cyclictest places one thread per CPU of {all} in turn, so {all} need at least {n}; pass --threads {n} or more, or --measure-cpus with at most 1 CPUs",
            n = online.len()
        ))
        .nothing_written("res");
}

/// A recording fake stress-ng that records its argv and sleeps: a load that does not load.
const FAKE_STRESS_NG: &str =
    "#!/bin/sh\nprintf '%s\\n' \"$*\" >>\"$FAKE_STRESS_RECORD\"\nexec sleep 300\n";

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// The stress scenario asks each housekeeping CPU for --load %: a load that reaches nothing
/// (the recording fake) makes the run invalid, naming each CPU, the level asked and reached.
#[test]
fn a_load_that_does_not_reach_the_asked_level_is_invalid_recording_fake_stress_ng() {
    let _one_at_a_time = measuring();
    let online = online_cpus();
    let rt = *online.last().unwrap();
    let housekeeping: Vec<u64> = online.iter().copied().filter(|c| *c != rt).collect();
    let test = Test::new().file("bin/stress-ng", FAKE_STRESS_NG);
    make_executable(&test.path().join("bin/stress-ng"));
    let record = test.path().join("stress-ng.argv");
    let bin = test.path().join("bin");
    let run = test
        .path_prepend(bin)
        .env("FAKE_STRESS_RECORD", &record)
        .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--scenario", "stress"])
        .args(["--load", "60", "--duration", "3", "--out", "res"])
        .run()
        .ignore_stdout()
        .code_is(1);
    let recorded = fs::read_to_string(&record).unwrap();
    assert_eq!(recorded.lines().count(), housekeeping.len(), "{recorded}");
    assert!(recorded.lines().all(|l| l.starts_with("--cpu 1 --cpu-load 60 --timeout ")));
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["verdict"], "INVALID");
    let s = &json["scenarios"][0];
    let levels = s["load_levels"].as_array().unwrap();
    assert_eq!(levels.len(), housekeeping.len(), "{levels:?}");
    let reasons = strings(&s["invalid_reasons"]);
    for (level, cpu) in levels.iter().zip(&housekeeping) {
        assert_eq!(level["cpus"], cpu.to_string());
        assert_eq!(level["asked_percent"], 60);
        let reached = level["reached_percent"].as_f64().unwrap();
        assert!(reached < 50.0, "a sleeping fake reached {reached} %");
        let want = format!(
            "the load on CPU {cpu} reached {reached} % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims"
        );
        assert!(reasons.contains(&want), "{want} not in {reasons:?}");
        run.stderr().contains(&want).then_some(()).expect("the reason is shown");
    }
}

/// The real stress-ng, held back cpulimit-style (the test stops and continues its processes,
/// 30 ms of every 100 ms running): asked 80 %, it reaches far less, and the run says so.
#[test]
fn a_throttled_real_stress_ng_is_an_invalid_run() {
    let _one_at_a_time = measuring();
    let online = online_cpus();
    let rt = *online.last().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let throttle = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            // The run's stress-ng: --cpu-load 80 with the timeout of a 7 s run (127 s).
            let mine =
                || processes_with_args("stress-ng", &["--cpu-load", "80", "--timeout", "127s"]);
            let mut throttled = 0;
            while !done.load(Ordering::SeqCst) {
                // The parent and its workers: stress-ng renames its workers' argv
                // (`stress-ng-cpu [run]`), so they are found as the parent's children.
                let mut pids = mine();
                for parent in pids.clone() {
                    let children =
                        std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
                            .unwrap_or_default();
                    pids.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
                }
                if pids.is_empty() {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                // The workers are children of the stress-ng parent: all share the argv.
                for pid in &pids {
                    let _ = std::process::Command::new("kill")
                        .args(["-STOP", &pid.to_string()])
                        .status();
                }
                std::thread::sleep(Duration::from_millis(70));
                for pid in &pids {
                    let _ = std::process::Command::new("kill")
                        .args(["-CONT", &pid.to_string()])
                        .status();
                }
                throttled += 1;
                std::thread::sleep(Duration::from_millis(30));
            }
            throttled
        })
    };
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--scenario", "stress"])
        .args(["--load", "80", "--duration", "7", "--out", "res"])
        .run()
        .ignore_stdout();
    done.store(true, Ordering::SeqCst);
    let throttled = throttle.join().unwrap();
    assert!(throttled > 10, "the throttle never held stress-ng back ({throttled} rounds)");
    // Nothing of it is left stopped.
    for pid in processes_with_args("stress-ng", &["--cpu-load", "80", "--timeout", "127s"]) {
        unsafe_kill(pid, "KILL");
    }
    assert_eq!(run.code(), 1, "{}", run.stderr());
    // The user is told why and what it means, on stderr (the reached figure varies).
    let stderr = run.stderr();
    assert!(
        has_line_between(
            &stderr,
            "warning: stress: the load on CPU ",
            " % where --load asked 80 % (tolerance ±10 points): the run is not under the load it claims"
        ),
        "{stderr}"
    );
    let run =
        run.stderr_has_line("      Result INVALID against 100 µs (default, SIL 2); results in res");
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["verdict"], "INVALID");
    let s = &json["scenarios"][0];
    let reasons = strings(&s["invalid_reasons"]);
    for level in s["load_levels"].as_array().unwrap() {
        let reached = level["reached_percent"].as_f64().unwrap();
        assert!(reached < 70.0, "throttled to 30 % of the time, it reached {reached} %");
        let cpu = level["cpus"].as_str().unwrap();
        assert!(
            reasons.iter().any(|r| r.starts_with(&format!(
                "the load on CPU {cpu} reached {reached} % where --load asked 80 %"
            ))),
            "{reasons:?}"
        );
    }
}

/// A target tree whose kernel isolates CPU `isolated` (sysfs and command line), with this
/// machine's online CPUs.
fn tree_isolating(test: Test, isolated: &str) -> Test {
    let online = fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    test.file("root/sys/devices/system/cpu/online", online)
        .file("root/sys/devices/system/cpu/isolated", format!("{isolated}\n"))
        .file("root/sys/devices/system/cpu/nohz_full", format!("{isolated}\n"))
        .file(
            "root/proc/cmdline",
            format!("root=/dev/sda2 isolcpus={isolated} nohz_full={isolated}\n"),
        )
}

/// The kernel isolates another CPU than the one measured (the IQ-8275 line on a QCS6490
/// plan): refused before the run, naming both sides and the fix; nothing is written.
#[test]
fn measuring_a_cpu_the_kernel_does_not_isolate_is_refused_before_the_run() {
    let online = online_cpus();
    let rt = *online.last().unwrap();
    // A CPU the fake kernel isolates that is not the RT CPU (it need not be online).
    let other = rt + 2;
    let test = tree_isolating(Test::new(), &other.to_string());
    let root = test.path().join("root");
    test.env("RTBUILD_SYSROOT", &root)
        .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--scenario", "idle"])
        .args(["--duration", "2", "--out", "res"])
        .run()
        .usage_error(&format!(
            "this machine: --rt-cpus names RT CPUs {rt} isolated, but the kernel isolates {other} (isolated: {other}, nohz_full: {other}; /proc/cmdline: isolcpus={other} nohz_full={other}); measuring there would not measure the isolated CPUs. Boot this machine with the plan's isolation (`rtbuild tune --rt-cpus {rt} --bootargs` prints it), or pass --rt-cpus with the CPUs the kernel isolates"
        ))
        .nothing_written("res");
}

/// A catalog machine's plan expects its RT CPUs isolated: a kernel that isolates nothing (or
/// other CPUs) is refused; the kernel the plan describes runs, and run.json says what was read.
#[test]
fn a_machine_plan_needs_the_kernel_to_isolate_exactly_its_rt_cpus() {
    let _one_at_a_time = measuring();
    let online = online_cpus();
    let rt = *online.last().unwrap();
    let housekeeping = cpu_list(&online[..online.len() - 1]);
    let machine = format!(
        "name: vm-iso\ndescription: test VM\nkas_file: ci/vm.yml\nsoc: X\nsoc_family: x\ncpus: {}\nrt:\n  rt_cpus: \"{rt}\"\n  housekeeping: \"{housekeeping}\"\n  rcu_expedited: \"{rt}\"\n  cpuidle_off: \"{rt}\"\nserial_console: ttyS0\nstorage: ufs\n",
        online.len()
    );
    let args = |test: Test| {
        let root = test.path().join("root");
        test.env("RTBUILD_SYSROOT", root)
            .args(["test", "--local", "--machine", "vm-iso", "--machines-dir", "machines"])
            .args(["--scenario", "idle", "--duration", "2", "--histogram-us", "200000"])
            .args(["--out", "res"])
    };
    // The kernel isolates nothing.
    let online_text = fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let none = Test::new()
        .file("machines/vm-iso.yaml", &machine)
        .file("root/sys/devices/system/cpu/online", &online_text)
        .file("root/proc/cmdline", "root=/dev/sda2\n");
    args(none)
        .run()
        .usage_error(&format!(
            "this machine: the plan of vm-iso expects RT CPUs {rt} isolated, but the kernel isolates none (isolated: none, nohz_full: none; /proc/cmdline: no isolcpus= or nohz_full=); measuring there would not measure the isolated CPUs. Boot this machine with the plan's isolation (`rtbuild tune --machine vm-iso --bootargs` prints it), or pass --rt-cpus with the CPUs the kernel isolates"
        ))
        .nothing_written("res");
    // The kernel isolates exactly the plan's RT CPU: the run goes ahead and records it.
    let right = tree_isolating(Test::new().file("machines/vm-iso.yaml", &machine), &rt.to_string());
    let run = args(right)
        .run()
        .ignore_stdout()
        .stderr_has_line(&format!("   Measuring idle for 2s on RT CPUs {rt}"));
    assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
    let json = run_json(&run.path().join("res"));
    let iso = &json["kernel_isolation"];
    assert_eq!(iso["isolated"], rt.to_string(), "{iso}");
    assert_eq!(iso["cmdline_isolcpus"], rt.to_string(), "{iso}");
    assert!(iso["required"].as_str().unwrap().contains("the plan of vm-iso"), "{iso}");
}

/// stress-isolated leaves its load to the kernel's isolation: on a kernel that isolates nothing
/// it is refused before the run, with the fix, not judged after it.
#[test]
fn an_unpinned_load_without_isolation_is_refused_before_the_run() {
    let rt = online_cpus().last().unwrap().to_string();
    let test = Test::new();
    let root = test.path().join("root");
    let online = fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    test.file("root/sys/devices/system/cpu/online", online)
        .env("RTBUILD_SYSROOT", &root)
        .args(["test", "--local", "--rt-cpus", &rt, "--scenario", "idle,stress-isolated"])
        .args(["--duration", "2", "--out", "res"])
        .run()
        .usage_error(&format!(
            "this machine: scenario stress-isolated runs its load unpinned, so only the kernel's isolation keeps it off the RT CPUs, but RT CPUs {rt} are not isolated (the kernel isolates none (isolated: none, nohz_full: none; /proc/cmdline: no isolcpus= or nohz_full=)); boot with isolcpus={rt} (`rtbuild tune --rt-cpus {rt} --bootargs` prints the arguments), or choose a scenario whose load is pinned (full, stress, custom without --load-unpinned)"
        ))
        .nothing_written("res");
}

/// `--trace-above-us` at the limit: the breach is a FAIL with its trace, never an invalid
/// run (issue 39: a look at cyclictest while its threads ended at the breach used to count
/// "0 cyclictest threads ran SCHED_FIFO"; the unit test `threads_ending_at_a_breach_are_not_an_
/// invalid_run` shows that look, which this fast VM rarely catches). 5 µs, which cyclictest's
/// first samples cross on any machine, as in testrun_trace.rs.
#[test]
fn a_breach_above_the_limit_is_a_fail_with_its_trace() {
    let _one_at_a_time = measuring();
    let run = Test::new()
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "60s"])
        .args(["--histogram-us", "200000", "--trace-above-us", "5", "--max-us", "5"])
        .args(["--out", "res"])
        .run()
        .ignore_stdout()
        .stderr_has_line("   Measuring idle for 1m 00s on RT CPUs 1")
        .stderr_has_line("      Result FAIL against 5 µs (--max-us); results in res")
        .code_is(1);
    let stderr = run.stderr();
    assert!(
        has_line_between(
            &stderr,
            "      Traced idle: a ",
            " µs sample crossed --trace-above-us 5; cyclictest stopped, kept trace-idle.txt"
        ),
        "{stderr}"
    );
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["verdict"], "FAIL", "{json:#}");
    let s = &json["scenarios"][0];
    assert_eq!(s["invalid_reasons"], serde_json::json!([]), "{s:#}");
    assert_eq!(s["trace"]["file"], "trace-idle.txt");
    assert!(run.path().join("res/trace-idle.txt").is_file());
}
