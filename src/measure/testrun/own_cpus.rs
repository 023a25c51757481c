//! Keeping rtbuild off the CPUs it measures (issue 27). Before a local run measures, every
//! thread of the rtbuild process is confined to the housekeeping CPUs; what it starts after
//! that inherits the mask (the helper, the load starters, cyclictest's main thread; cyclictest's
//! measuring threads set their own CPU with `-a`). On any host, local or over ssh, the helper
//! pins itself with `taskset` as its first step (`--pin CPUS`, see `templates/onhost-commands.sh`), so it runs
//! off the measured CPUs even where rtbuild's own mask does not reach.

use rustix::process::Pid;
use rustix::thread::{CpuSet as KernelCpuSet, sched_setaffinity};

use crate::host::cpus::CpuLayout;
use crate::plan::CpuSet;

/// The CPUs rtbuild's own processes may use: the housekeeping CPUs that are not measured.
/// When `--measure-cpus` covers every housekeeping CPU nothing is left; then the housekeeping
/// CPUs (the main cyclictest thread's too), which is the least intrusive choice left.
pub(crate) fn allowed_set(layout: &CpuLayout, measured: &CpuSet) -> CpuSet {
    let free = layout.housekeeping.difference(measured);
    if free.is_empty() { layout.housekeeping.clone() } else { free }
}

/// The kernel refused to move a thread of rtbuild.
#[derive(Debug, thiserror::Error)]
#[error("could not confine rtbuild to CPUs {cpus} (thread {tid}: {cause})")]
pub(crate) struct PinError {
    cpus: CpuSet,
    tid: i32,
    cause: rustix::io::Errno,
}

/// Confines every thread of this process to `cpus`. Threads started afterwards inherit the
/// mask of the thread that starts them, so the main thread goes first and the thread list is
/// read again until no thread is left to move.
pub(crate) fn pin_this_process(cpus: &CpuSet) -> Result<(), PinError> {
    let mut mask = KernelCpuSet::new();
    for cpu in cpus.iter().filter(|c| (*c as usize) < KernelCpuSet::MAX_CPU) {
        mask.set(cpu as usize);
    }
    let fail = |tid: i32, cause| PinError { cpus: cpus.clone(), tid, cause };
    sched_setaffinity(None, &mask).map_err(|e| fail(0, e))?;
    let mut done: Vec<i32> = Vec::new();
    loop {
        let fresh: Vec<i32> = thread_ids().into_iter().filter(|t| !done.contains(t)).collect();
        if fresh.is_empty() {
            return Ok(());
        }
        for tid in fresh {
            match sched_setaffinity(Pid::from_raw(tid), &mask) {
                // A thread that ended meanwhile has nothing left to move.
                Ok(()) | Err(rustix::io::Errno::SRCH) => done.push(tid),
                Err(cause) => return Err(fail(tid, cause)),
            }
        }
    }
}

/// The thread ids of this process (`/proc/self/task`).
fn thread_ids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    dir.filter_map(Result::ok).filter_map(|e| e.file_name().to_str()?.parse().ok()).collect()
}

/// Where the threads of this process may run: the union of each thread's
/// `Cpus_allowed_list` (`/proc/self/task/*/status`), or `None` when /proc does not say.
pub(crate) fn this_process_allowed() -> Option<CpuSet> {
    let mut union: Option<CpuSet> = None;
    for tid in thread_ids() {
        let Ok(status) = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")) else {
            continue;
        };
        let Some(list) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")) else {
            continue;
        };
        let Ok(cpus) = CpuSet::parse(list.trim()) else { continue };
        union = Some(union.map_or(cpus.clone(), |u| u.union(&cpus)));
    }
    union
}

/// The CPU time (user + system) this process used so far, every thread's, ended ones too, in
/// seconds (`/proc/self/stat` utime and stime, in the kernel's fixed USER_HZ of 100 ticks a
/// second); `None` when /proc does not say.
pub(crate) fn this_process_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    cpu_s_of_stat(&stat)
}

/// utime + stime of a `/proc/PID/stat` line, in seconds.
fn cpu_s_of_stat(stat: &str) -> Option<f64> {
    // Fields after the command (which may hold spaces and parentheses): state is field 3,
    // utime 14 and stime 15.
    let rest = stat.rsplit_once(") ")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |at: usize| fields.get(at - 3)?.parse::<u64>().ok();
    Some((ticks(14)? + ticks(15)?) as f64 / 100.0)
}

/// The threads of this process running (state `R`) on a CPU of `cpus` when read
/// (`/proc/self/task/*/stat` field 39): a sample of where rtbuild's own threads run. A sleeping
/// thread's field 39 is the CPU it last ran on, perhaps before rtbuild pinned itself, so only
/// running threads count.
pub(crate) fn threads_last_on(cpus: &CpuSet) -> Vec<i32> {
    thread_ids()
        .into_iter()
        .filter(|tid| {
            std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))
                .ok()
                .and_then(|stat| running_on(&stat))
                .is_some_and(|cpu| cpus.contains(cpu))
        })
        .collect()
}

/// Field 39 (`processor`: the CPU the task last ran on) of a `/proc/PID/stat` line.
fn last_cpu_of_stat(stat: &str) -> Option<u32> {
    let rest = stat.rsplit_once(") ")?.1;
    rest.split_whitespace().nth(39 - 3)?.parse().ok()
}

/// The CPU of a `/proc/PID/stat` line whose task is running (state `R`); `None` when it sleeps.
fn running_on(stat: &str) -> Option<u32> {
    let state = stat.rsplit_once(") ")?.1.split_whitespace().next()?;
    if state == "R" { last_cpu_of_stat(stat) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(online: &str, rt: &str) -> CpuLayout {
        CpuLayout::new(
            &CpuSet::parse(online).unwrap(),
            &CpuSet::parse(rt).unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap()
    }

    #[test]
    fn rtbuild_keeps_to_unmeasured_housekeeping_cpus() {
        let l = layout("0-7", "6-7");
        assert_eq!(allowed_set(&l, &CpuSet::parse("6-7").unwrap()).to_string(), "0-5");
        // `--measure-cpus 0,6-7` also measures a housekeeping CPU: rtbuild leaves it too.
        assert_eq!(allowed_set(&l, &CpuSet::parse("0,6-7").unwrap()).to_string(), "1-5");
        // `--measure-cpus all`: nothing is free, the housekeeping CPUs are the fallback.
        assert_eq!(allowed_set(&l, &CpuSet::parse("0-7").unwrap()).to_string(), "0-5");
    }

    /// A `/proc/PID/stat` line of Linux 6.18 whose command holds `) ` (real layout: 52 fields).
    const STAT: &str = "4242 (rt) build) S 1 4242 4242 0 -1 4194560 2163 0 0 0 \
        250 125 0 0 20 0 3 0 123456 12345678 2345 18446744073709551615 1 1 0 0 0 0 0 4096 17664 \
        0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0";

    #[test]
    fn stat_fields_are_counted_after_the_command() {
        assert_eq!(cpu_s_of_stat(STAT), Some(3.75));
        assert_eq!(last_cpu_of_stat(STAT), Some(1));
        // Asleep: its last CPU may predate the pinning.
        assert_eq!(running_on(STAT), None);
        assert_eq!(running_on(&STAT.replacen(") S ", ") R ", 1)), Some(1));
        assert_eq!(cpu_s_of_stat("4242 (cut"), None);
    }

    #[test]
    fn this_process_has_used_cpu_time_and_runs_on_an_online_cpu() {
        let start = this_process_cpu_s().expect("/proc/self/stat");
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(this_process_cpu_s().expect("/proc/self/stat") >= start, "{x}");
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        let online = CpuSet::parse(online.trim()).unwrap();
        // The thread reading its own stat is running.
        assert!(!threads_last_on(&online).is_empty());
        assert!(threads_last_on(&CpuSet::default()).is_empty());
    }

    /// The read-back half (pinning the test binary would move the tests running beside this
    /// one; the live `rtbuild test` runs in tests/integration/testrun.rs check the pinning).
    #[test]
    fn this_process_allowed_reads_every_thread() {
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        let online = CpuSet::parse(online.trim()).unwrap();
        let allowed = this_process_allowed().expect("/proc/self/task/*/status");
        assert!(!allowed.is_empty() && allowed.is_subset(&online), "{allowed} vs {online}");
    }
}
