//! Keeping rtbuild off the CPUs it measures (issue 27). Before a local run measures, every
//! thread of the rtbuild process is confined to the housekeeping CPUs; what it starts after
//! that inherits the mask (the helper, the load starters, cyclictest's main thread; cyclictest's
//! measuring threads set their own CPU with `-a`). On any host, local or over ssh, the helper
//! pins itself with `taskset` as its first step (`--pin CPUS`, see `onhost.sh`), so it runs
//! off the measured CPUs even where rtbuild's own mask does not reach.

use rustix::process::Pid;
use rustix::thread::{CpuSet as KernelCpuSet, sched_setaffinity};

use crate::base::CpuLayout;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(online: &str, rt: &str) -> CpuLayout {
        CpuLayout::new(
            &CpuSet::parse(online).unwrap(),
            &CpuSet::parse(rt).unwrap(),
            None,
            crate::base::Board::Given,
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
