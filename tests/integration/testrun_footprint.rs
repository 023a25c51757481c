//! `rtbuild test` keeps its own processes off the CPU it measures (issue 27): while a live
//! local run measures, every thread of rtbuild and of every process under it, except
//! cyclictest's SCHED_FIFO measuring threads, may run only on housekeeping CPUs, as
//! `/proc/<pid>/task/*/status` (`Cpus_allowed_list`) says; and `run.json` records where they
//! were allowed. A placement check, never a latency check.

use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::cpus::{housekeeping_without, online_cpus};
use crate::support::harness::{rtbuild_bin, wait_for};
use crate::support::measuring::{measuring, run_json};

/// `pid` and every live process below it.
fn with_descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((_, rest)) = stat.rsplit_once(") ") else { continue };
        if let Some(parent) = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parents.push((child, parent));
        }
    }
    let mut family = vec![pid];
    let mut i = 0;
    while i < family.len() {
        let p = family[i];
        family.extend(parents.iter().filter(|(_, parent)| *parent == p).map(|(c, _)| *c));
        i += 1;
    }
    family
}

/// One thread: its process's name, the CPUs it may use, and whether it is SCHED_FIFO.
struct Seen {
    what: String,
    allowed: Vec<u64>,
    fifo: bool,
}

fn cpus_of(list: &str) -> Vec<u64> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(a.parse::<u64>().unwrap()..=b.parse::<u64>().unwrap());
    }
    cpus
}

fn threads_of(pid: u32) -> Vec<Seen> {
    let mut seen = Vec::new();
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else { return seen };
    for task in tasks.filter_map(Result::ok) {
        let (Ok(status), Ok(stat)) = (
            fs::read_to_string(task.path().join("status")),
            fs::read_to_string(task.path().join("stat")),
        ) else {
            continue;
        };
        let Some(list) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")) else {
            continue;
        };
        // Field 41 of stat is the policy (1 = SCHED_FIFO); fields after `) ` start at 3.
        let policy = stat.rsplit_once(") ").and_then(|(_, r)| r.split_whitespace().nth(38));
        seen.push(Seen {
            what: format!("{} thread {}", comm.trim(), task.file_name().to_string_lossy()),
            allowed: cpus_of(list),
            fifo: policy == Some("1"),
        });
    }
    seen
}

#[test]
fn rtbuild_and_everything_it_starts_stay_off_the_measured_cpu() {
    let _one_at_a_time = measuring();
    let rt = *online_cpus().last().unwrap();
    assert!(rt > 0, "this test needs at least 2 online CPUs");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let mut child = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", &rt.to_string(), "--scenario", "idle"])
        .args(["--duration", "6s", "--histogram-us", "200000", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let rtbuild = child.id();
    // Measuring: cyclictest's SCHED_FIFO thread is up under rtbuild.
    wait_for("cyclictest measuring under rtbuild", Duration::from_secs(30), || {
        with_descendants(rtbuild)
            .into_iter()
            .any(|p| threads_of(p).iter().any(|t| t.fifo && t.what.starts_with("cyclictest")))
            .then_some(())
    });
    let mut looks = 0;
    let mut threads = 0;
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        for pid in with_descendants(rtbuild) {
            for t in threads_of(pid) {
                if t.fifo && t.what.starts_with("cyclictest") {
                    assert_eq!(t.allowed, [rt], "{}: a measuring thread", t.what);
                    continue;
                }
                threads += 1;
                assert!(
                    !t.allowed.contains(&rt),
                    "{} may run on the measured CPU {rt}: {:?}",
                    t.what,
                    t.allowed
                );
            }
        }
        looks += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = child.wait().unwrap();
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
    assert!(looks > 5 && threads > looks, "{looks} looks saw {threads} threads");

    let json = run_json(&out);
    let housekeeping = housekeeping_without(rt);
    let own = &json["rtbuild_cpus"];
    assert_eq!(own["pinned_to"], housekeeping, "{own}");
    assert_eq!(own["rtbuild"], housekeeping, "{own}");
    assert_eq!(own["helper"], housekeeping, "{own}");
    assert!(own["problem"].is_null(), "{own}");
    assert_eq!(json["scenarios"][0]["probe"]["helper"]["allowed"], housekeeping);
    // The progress display's calls while measuring: at least the first probe, then one per
    // tick and one per doubling of the elapsed time from 1 s (cyclictest's status snapshots
    // for the report's convergence); never one per poll of the 100 ms loop.
    let calls = own["helper_calls_measuring"].as_u64().unwrap();
    let seconds = own["measuring_s"].as_f64().unwrap();
    let doublings = seconds.max(1.0).log2().floor() + 1.0;
    assert!(
        calls >= 1 && (calls as f64) <= seconds / 5.0 + doublings + 2.0,
        "{calls} calls in {seconds} s"
    );
}
