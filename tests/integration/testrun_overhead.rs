//! What `rtbuild test` adds to the RT CPU (issue 37): recorded with the kernel's own scheduler
//! events in a private tracefs instance while a real `rtbuild test --local` measures on the last
//! CPU. Behaviour only (which tasks ran where), never a latency or a count of interrupts.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::cpus::online_cpus;
use crate::support::harness::rtbuild_bin;
use crate::support::measuring::{measuring, run_json};

/// A tracefs instance of this test's own (its buffers and events apart from the global ones
/// and from other tests' tracing), removed when dropped.
struct Instance(PathBuf);

impl Instance {
    fn new(rt: u64) -> Instance {
        let root = Path::new("/sys/kernel/tracing");
        if !root.join("instances").is_dir() {
            // The suite runs as root: mount tracefs where the kernel documents it.
            let mounted = Command::new("mount").args(["-t", "tracefs", "nodev"]).arg(root).status();
            assert!(
                mounted.is_ok_and(|s| s.success()) && root.join("instances").is_dir(),
                "cannot mount tracefs at {}: run the tests as root on a kernel with CONFIG_FTRACE",
                root.display()
            );
        }
        let dir = root.join(format!("instances/rtbuild-own-tasks-{}", std::process::id()));
        fs::create_dir(&dir).unwrap();
        let instance = Instance(dir);
        let set = |file: &str, value: &str| {
            fs::write(instance.0.join(file), value).unwrap_or_else(|e| panic!("{file}: {e}"))
        };
        set("buffer_size_kb", "16384");
        // Who runs on the RT CPU; and every fork, exec and exit (on any CPU), which tell
        // rtbuild's own tasks from cyclictest's.
        set("events/sched/sched_switch/filter", &format!("common_cpu == {rt}"));
        for event in
            ["sched_switch", "sched_process_fork", "sched_process_exec", "sched_process_exit"]
        {
            set(&format!("events/sched/{event}/enable"), "1");
        }
        set("tracing_on", "1");
        instance
    }

    /// Stops recording; the trace, and the events each CPU's buffer lost.
    fn stop(&self) -> (String, u64) {
        fs::write(self.0.join("tracing_on"), "0").unwrap();
        let lost = online_cpus()
            .iter()
            .map(|cpu| {
                let stats =
                    fs::read_to_string(self.0.join(format!("per_cpu/cpu{cpu}/stats"))).unwrap();
                stats
                    .lines()
                    .find_map(|l| l.strip_prefix("overrun:"))
                    .map_or(0, |n| n.trim().parse::<u64>().unwrap())
            })
            .sum();
        (fs::read_to_string(self.0.join("trace")).unwrap(), lost)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = fs::write(self.0.join("tracing_on"), "0");
        let _ = fs::write(self.0.join("events/enable"), "0");
        let _ = fs::remove_dir(&self.0);
    }
}

/// `key=value` of a trace line's event fields.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(&format!(" {key}="))? + key.len() + 2;
    line[at..].split_whitespace().next()
}

fn pid(line: &str, key: &str) -> u64 {
    field(line, key).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{key} in {line}"))
}

/// The programs that measure or load: they and their threads belong to the measurement.
const MEASUREMENT: [&str; 3] = ["cyclictest", "stress-ng", "stress-ng-cpu"];

/// What the trace says of the processes `root` started: rtbuild's own tasks switched in on
/// `rt` while a cyclictest lived, and cyclictest's tasks seen there.
fn own_tasks_on(trace: &str, root: u64, rt: u64) -> (BTreeMap<u64, String>, usize) {
    let mut tree = BTreeSet::from([root]);
    let mut measurement = BTreeSet::new();
    let mut cyclictest_alive = BTreeSet::new();
    let mut own_on_rt = BTreeMap::new();
    let mut cyclictest_on_rt = 0;
    let cpu_tag = format!("[{rt:03}]");
    for line in trace.lines().filter(|l| !l.starts_with('#')) {
        if line.contains(" sched_process_fork: ") {
            let (parent, child) = (pid(line, "pid"), pid(line, "child_pid"));
            if tree.contains(&parent) {
                tree.insert(child);
                if measurement.contains(&parent) {
                    measurement.insert(child);
                }
            }
        } else if line.contains(" sched_process_exec: ") {
            let task = pid(line, "pid");
            let program = field(line, "filename").unwrap_or("").rsplit('/').next().unwrap_or("");
            if tree.contains(&task) && MEASUREMENT.contains(&program) {
                measurement.insert(task);
                if program == "cyclictest" {
                    cyclictest_alive.insert(task);
                }
            }
        } else if line.contains(" sched_process_exit: ") {
            cyclictest_alive.remove(&pid(line, "pid"));
        } else if line.contains(" sched_switch: ") && line.contains(&cpu_tag) {
            let next = pid(line, "next_pid");
            if !tree.contains(&next) {
                continue;
            }
            if measurement.contains(&next) {
                cyclictest_on_rt += 1;
            } else if !cyclictest_alive.is_empty() {
                let comm = field(line, "next_comm").unwrap_or("?").to_string();
                own_on_rt.insert(next, comm);
            }
        }
    }
    (own_on_rt, cyclictest_on_rt)
}

#[test]
fn rtbuild_own_tasks_never_run_on_the_rt_cpu_while_cyclictest_measures() {
    let _one_at_a_time = measuring();
    let rt = *online_cpus().last().unwrap();
    assert!(rt > 0, "this test needs two online CPUs (an RT CPU and a housekeeping one)");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let instance = Instance::new(rt);
    let mut child = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--scenario", "idle,stress"])
        .args(["--duration", "3s", "--histogram-us", "200000", "--load", "30", "--out"])
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let root = u64::from(child.id());
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let status = child.wait().unwrap();
    let (trace, lost) = instance.stop();
    drop(instance);
    assert!(matches!(status.code(), Some(0 | 1)), "{status}: {stderr}");
    assert_eq!(lost, 0, "the trace buffer overran: the fork and exec events are incomplete");
    let (own, cyclictest_seen) = own_tasks_on(&trace, root, rt);
    // The recording saw the measurement itself on the RT CPU: it is not empty by accident.
    assert!(cyclictest_seen > 0, "no cyclictest task switched in on CPU {rt}: {stderr}");
    assert_eq!(own, BTreeMap::new(), "rtbuild's own tasks (pid: comm) ran on RT CPU {rt}");
    // The run records the same in its overhead block, with the RT CPU's interrupts.
    let json = run_json(&out);
    let overhead = &json["overhead"];
    assert_eq!(overhead["own_tasks_seen_on_rt_cpus"], 0, "{overhead}");
    assert!(overhead["rtbuild_cpu_s"].as_f64().is_some_and(|s| s >= 0.0), "{overhead}");
    assert!(overhead["rtbuild_cpu_pct"].is_number(), "{overhead}");
    assert!(overhead["measuring_s"].as_f64().is_some_and(|s| s > 0.0), "{overhead}");
    let irqs = overhead["rt_cpu_irqs"].as_array().unwrap();
    assert!(!irqs.is_empty(), "cyclictest's timer interrupts on CPU {rt}: {overhead}");
    assert!(irqs.iter().all(|i| i["cpu"] == rt), "{overhead}");
}

/// The trace reading itself, on lines in the layout Linux 6.18 writes.
#[test]
fn own_tasks_are_rtbuilds_descendants_that_are_not_the_measurement() {
    let trace = "\
# tracer: nop
         rtbuild-100     [000] ..... 10.000001: sched_process_fork: comm=rtbuild pid=100 child_comm=rtbuild child_pid=101
         rtbuild-100     [000] ..... 10.000002: sched_process_fork: comm=rtbuild pid=100 child_comm=rtbuild child_pid=102
              sh-102     [000] ..... 10.000003: sched_process_exec: filename=/usr/bin/cyclictest pid=102 old_pid=102
      cyclictest-102     [000] ..... 10.000004: sched_process_fork: comm=cyclictest pid=102 child_comm=cyclictest child_pid=103
          <idle>-0       [001] d..2. 10.000005: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=103 next_prio=0
          <idle>-0       [001] d..2. 10.000006: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=555 next_prio=120
          <idle>-0       [001] d..2. 10.000007: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rtbuild next_pid=101 next_prio=120
          <idle>-0       [000] d..2. 10.000008: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rtbuild next_pid=100 next_prio=120
      cyclictest-102     [000] ..... 10.000009: sched_process_exit: comm=cyclictest pid=102 prio=120
          <idle>-0       [001] d..2. 10.000010: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rtbuild next_pid=100 next_prio=120
";
    let (own, cyclictest) = own_tasks_on(trace, 100, 1);
    // 101 ran on CPU 1 while cyclictest lived; 100 only on CPU 0 then, and on CPU 1 after it
    // ended; 555 is no task of rtbuild's; 103 is cyclictest's thread.
    assert_eq!(own, BTreeMap::from([(101, "rtbuild".to_string())]));
    assert_eq!(cyclictest, 1);
}
