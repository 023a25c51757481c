//! What `rtbuild test` adds to the RT CPU, against the same cyclictest command line run bare
//! (issue 37; not a test: prints figures, gates nothing).
//!
//! On the last online CPU (needs root, cyclictest, tracefs and two CPUs): first
//! `rtbuild test --local --rt-cpus N --scenario idle --duration S` (`RTBUILD_BENCH_OVERHEAD_S`,
//! default 30), then the cyclictest argv that run recorded, started bare with the same
//! affinity. For each, over cyclictest's lifetime (this bench polls for it every 10 ms):
//! - the RT CPU's interrupt deltas from `/proc/interrupts` (timer `LOC`, `RES`, `CAL`, `TLB`
//!   and all);
//! - `/proc/schedstat` on the RT CPU: `schedule()` calls and wakeups;
//! - the scheduler events of a private tracefs instance: tasks switched in on the RT CPU and
//!   wakeups aimed at it, by command, cyclictest's apart from everything else;
//!
//! and rtbuild's own `overhead` block (its CPU time and share, its threads seen on the RT CPU).
//! The machine is shared: run it more than once and read the figures side by side.
//!
//! Run: `cargo bench --bench overhead`.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The per-CPU interrupt counts of one CPU: name → count.
fn interrupts(cpu: usize) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    let mut counts = BTreeMap::new();
    for line in lines {
        let Some((name, rest)) = line.split_once(':') else { continue };
        let fields: Vec<&str> = rest.split_whitespace().take(cpus).collect();
        if let Some(count) = fields.get(cpu).and_then(|f| f.parse().ok()) {
            counts.insert(name.trim().to_string(), count);
        }
    }
    counts
}

/// `/proc/schedstat` of one CPU: (schedule() calls, wakeups), or `None` on a kernel built
/// without `CONFIG_SCHEDSTATS` (no such file: its figures are "n/a", never a zero).
fn schedstat(cpu: usize) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/schedstat").ok()?;
    let tag = format!("cpu{cpu} ");
    let line = text.lines().find(|l| l.starts_with(&tag))?;
    let f: Vec<u64> = line.split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    // cpuN yld_count legacy sched_count sched_goidle ttwu_count ttwu_local …
    Some((*f.get(2)?, *f.get(4)?))
}

struct Window {
    irqs: BTreeMap<String, u64>,
    sched: Option<(u64, u64)>,
    seconds: f64,
}

/// A cyclictest process's pid, if one runs.
fn cyclictest_pid() -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.filter_map(Result::ok).find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        (comm.trim() == "cyclictest").then_some(pid)
    })
}

/// The RT CPU's interrupts and schedstat at one moment.
type Snapshot = (BTreeMap<String, u64>, Option<(u64, u64)>, Instant);

/// Waits for `child` while snapshotting the RT CPU when cyclictest appears and when it ends.
fn watch(mut child: Child, cpu: usize) -> Option<Window> {
    let mut start: Option<Snapshot> = None;
    let mut end: Option<Snapshot> = None;
    loop {
        let running = cyclictest_pid().is_some();
        if start.is_none() && running {
            start = Some((interrupts(cpu), schedstat(cpu), Instant::now()));
        } else if start.is_some() && !running && end.is_none() {
            end = Some((interrupts(cpu), schedstat(cpu), Instant::now()));
        }
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let (irq0, sched0, t0) = start?;
    let (irq1, sched1, t1) =
        end.unwrap_or_else(|| (interrupts(cpu), schedstat(cpu), Instant::now()));
    let irqs = irq1
        .iter()
        .map(|(k, v)| (k.clone(), v - irq0.get(k).copied().unwrap_or(0).min(*v)))
        .collect();
    Some(Window {
        irqs,
        sched: sched0.zip(sched1).map(|(a, b)| (b.0 - a.0, b.1 - a.1)),
        seconds: (t1 - t0).as_secs_f64(),
    })
}

/// A private tracefs instance recording who runs on, and who is woken onto, the RT CPU.
struct Trace(PathBuf);

impl Trace {
    fn start(cpu: usize) -> Option<Trace> {
        let dir = PathBuf::from(format!(
            "/sys/kernel/tracing/instances/rtbuild-bench-{}",
            std::process::id()
        ));
        std::fs::create_dir(&dir).ok()?;
        let trace = Trace(dir);
        let set = |f: &str, v: &str| std::fs::write(trace.0.join(f), v).is_ok();
        let ok = set("buffer_size_kb", "16384")
            && set("events/sched/sched_switch/filter", &format!("common_cpu == {cpu}"))
            && set("events/sched/sched_wakeup/filter", &format!("target_cpu == {cpu}"))
            && ["sched_switch", "sched_wakeup", "sched_process_exec", "sched_process_exit"]
                .iter()
                .all(|e| set(&format!("events/sched/{e}/enable"), "1"))
            && set("tracing_on", "1");
        ok.then_some(trace)
    }

    /// Switches in and wakeups on the RT CPU while a cyclictest lived, by command.
    fn counts(&self) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
        let _ = std::fs::write(self.0.join("tracing_on"), "0");
        let text = std::fs::read_to_string(self.0.join("trace")).unwrap_or_default();
        let (mut switches, mut wakeups) = (BTreeMap::new(), BTreeMap::new());
        let mut alive = false;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let field = |key: &str| {
                line.split_whitespace().find_map(|w| w.strip_prefix(key)).unwrap_or("?").to_string()
            };
            if line.contains(" sched_process_exec: ") && field("filename=").ends_with("/cyclictest")
            {
                alive = true;
            } else if line.contains(" sched_process_exit: ") && field("comm=") == "cyclictest" {
                alive = false;
            } else if alive && line.contains(" sched_switch: ") {
                *switches.entry(field("next_comm=")).or_insert(0) += 1;
            } else if alive && line.contains(" sched_wakeup: ") {
                *wakeups.entry(field("comm=")).or_insert(0) += 1;
            }
        }
        (switches, wakeups)
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("tracing_on"), "0");
        let _ = std::fs::write(self.0.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn show(name: &str, w: &Window, trace: &(BTreeMap<String, u64>, BTreeMap<String, u64>)) {
    let irq = |k: &str| w.irqs.get(k).copied().unwrap_or(0);
    let all: u64 = w.irqs.values().sum();
    println!(
        "  {name:<8} {:6.1} s  LOC {:7} RES {:5} CAL {:5} TLB {:4} all {:7}  {}",
        w.seconds,
        irq("LOC"),
        irq("RES"),
        irq("CAL"),
        irq("TLB"),
        all,
        w.sched.map_or("schedstat n/a (kernel without CONFIG_SCHEDSTATS)".to_string(), |(s, k)| {
            format!("schedule() {s:7} wakeups {k:7}")
        })
    );
    let others = |m: &BTreeMap<String, u64>| {
        m.iter()
            .filter(|(c, _)| !c.starts_with("cyclictest") && !c.starts_with("swapper"))
            .map(|(c, n)| format!("{c} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let cyclic = |m: &BTreeMap<String, u64>| m.get("cyclictest").copied().unwrap_or(0);
    println!(
        "           switched in: cyclictest {}, others: {}",
        cyclic(&trace.0),
        if others(&trace.0).is_empty() { "none".to_string() } else { others(&trace.0) }
    );
    println!(
        "           woken onto it: cyclictest {}, others: {}",
        cyclic(&trace.1),
        if others(&trace.1).is_empty() { "none".to_string() } else { others(&trace.1) }
    );
}

fn main() {
    let seconds: u64 =
        std::env::var("RTBUILD_BENCH_OVERHEAD_S").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let cpu: usize =
        online.trim().rsplit([',', '-']).next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "RT CPU {cpu}, {seconds} s each; load average at start: {}",
        loadavg.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    if cpu == 0 || !rustix::process::geteuid().is_root() {
        println!("not measured: needs root and two online CPUs");
        return;
    }
    if cyclictest_pid().is_some() {
        println!("not measured: another cyclictest runs (this bench watches cyclictest by name)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("res");
    let Some(trace) = Trace::start(cpu) else {
        println!("not measured: no tracefs instance (mount -t tracefs nodev /sys/kernel/tracing)");
        return;
    };
    let child = Command::new(env!("CARGO_BIN_EXE_rtbuild"))
        .args(["test", "--local", "--rt-cpus", &cpu.to_string(), "--scenario", "idle"])
        .args(["--duration", &format!("{seconds}s"), "--histogram-us", "200000", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("rtbuild");
    let with_rtbuild = watch(child, cpu);
    let with_trace = trace.counts();
    drop(trace);
    let record: serde_json::Value = std::fs::read_to_string(out.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let argv: Vec<String> = record["scenarios"][0]["argv"]["cyclictest"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let (Some(with_rtbuild), Some((program, args))) = (with_rtbuild, argv.split_first()) else {
        println!("not measured: the rtbuild run did not measure (is cyclictest installed?)");
        return;
    };
    println!("cyclictest command line (both): {}", argv.join(" "));
    // Bare: the same argv, its output to a file as rtbuild's goes, started from a shell on the
    // housekeeping CPUs (as a user would with taskset).
    let bare_out = dir.path().join("bare.json");
    let Some(trace) = Trace::start(cpu) else { return };
    let housekeeping = record["housekeeping"].as_str().unwrap_or("0").to_string();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a.starts_with("--json=") {
                format!("--json={}", bare_out.display())
            } else {
                a.clone()
            }
        })
        .collect();
    let child = Command::new("taskset")
        .args(["-c", &housekeeping, program])
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cyclictest");
    let Some(bare) = watch(child, cpu) else {
        println!("not measured: bare cyclictest did not run");
        return;
    };
    let bare_trace = trace.counts();
    drop(trace);
    show("bare", &bare, &bare_trace);
    show("rtbuild", &with_rtbuild, &with_trace);
    let o = &record["overhead"];
    println!(
        "rtbuild's overhead block: measuring {} s, rtbuild CPU {} s = {} % of one CPU, own threads seen on the RT CPU {}",
        o["measuring_s"], o["rtbuild_cpu_s"], o["rtbuild_cpu_pct"], o["own_tasks_seen_on_rt_cpus"]
    );
    let _ = Path::new(&bare_out).exists();
}
