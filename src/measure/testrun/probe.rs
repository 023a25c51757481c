//! A look at the running processes, taken once while cyclictest measures: each cyclictest
//! thread and each load process with its allowed CPUs, current CPU, policy and RT priority
//! (`/proc/<pid>/task/<tid>/stat` fields 39-41, `Cpus_allowed_list`).

use super::cyclictest::Threads;
use super::scenario::LoadPlace;
pub(super) use crate::formats::run_json::{Probe, Task, ThreadPlacement};
use crate::host::cpus::CpuLayout;
use crate::plan::CpuSet;

impl Probe {
    /// Whether cyclictest's measuring (SCHED_FIFO) threads were up when this was taken.
    pub(super) fn measuring(&self) -> bool {
        self.cyclictest.iter().any(|t| t.policy == Some(1))
    }

    /// Reads the helper's `ctpid N` and `ct|load TID|ALLOWED|STAT…|COMM` lines.
    pub(crate) fn parse(text: &str) -> Probe {
        let mut probe = Probe::default();
        for line in text.lines() {
            if let Some(pid) = line.strip_prefix("ctpid ") {
                probe.cyclictest_pid = pid.trim().parse().ok();
                continue;
            }
            let Some((kind, rest)) = line.split_once(' ') else { continue };
            let parts: Vec<&str> = rest.splitn(4, '|').collect();
            let [tid, allowed, stat, name] = parts[..] else { continue };
            let Ok(tid) = tid.parse() else { continue };
            // `stat` starts at field 3 (state); processor is field 39, rt_priority 40, policy 41.
            let fields: Vec<&str> = stat.split_whitespace().collect();
            let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse().ok());
            let task = Task {
                tid,
                name: name.to_string(),
                allowed: allowed.to_string(),
                cpu: field(39),
                policy: field(41),
                rt_priority: field(40),
            };
            match kind {
                "ct" => probe.cyclictest.push(task),
                "load" => probe.load.push(task),
                "helper" => probe.helper = Some(task),
                _ => {}
            }
        }
        probe
    }

    /// Why the helper that took the probe could run outside `pinned_to` (the CPUs rtbuild
    /// keeps its own processes to), if it could.
    pub(crate) fn helper_problem(&self, pinned_to: &CpuSet) -> Option<String> {
        let helper = self.helper.as_ref()?;
        let allowed = CpuSet::parse(&helper.allowed).unwrap_or_default();
        (!allowed.is_subset(pinned_to)).then(|| {
            format!(
                "rtbuild's helper on the target may run on CPUs {}, not only on CPUs {pinned_to} away from the measured ones (taskset could not pin it)",
                helper.allowed
            )
        })
    }

    /// Why the probe shows a run that does not measure what it should: one SCHED_FIFO 99
    /// thread pinned to each of `measured` CPUs, the main thread off the RT CPUs, the load off
    /// the RT CPUs. `pinned_load` is false for an unpinned load (stress-isolated,
    /// `--load-unpinned`), which must stay off the RT CPUs by the kernel's isolation alone.
    pub(crate) fn problems(
        &self,
        layout: &CpuLayout,
        measured: &CpuSet,
        threads: Threads,
        has_load: bool,
        place: LoadPlace,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        let allowed = |t: &Task| CpuSet::parse(&t.allowed).unwrap_or_default();
        if self.cyclictest.is_empty() {
            problems
                .push("cyclictest was not seen running; its threads could not be checked".into());
        } else {
            // The measuring threads: SCHED_FIFO, never the main thread (the process itself).
            let workers: Vec<&Task> = self
                .cyclictest
                .iter()
                .filter(|t| t.policy == Some(1) && Some(t.tid) != self.cyclictest_pid)
                .collect();
            let wanted = match threads {
                Threads::PerCpu => measured.len(),
                Threads::Unpinned(n) => n as usize,
            };
            // cyclictest's threads end at a `-b` breach (`--trace-above-us`): a look taken
            // while it winds down sees fewer of them, which says nothing about the run.
            let winding_down = self.after_breach && workers.len() < wanted;
            if workers.len() != wanted && !winding_down {
                problems.push(format!(
                    "{} cyclictest threads ran SCHED_FIFO, expected {wanted} ({})",
                    workers.len(),
                    match threads {
                        Threads::PerCpu => "one per measured CPU",
                        Threads::Unpinned(_) => "--threads",
                    }
                ));
            }
            let pinned = threads == Threads::PerCpu;
            let mut covered = CpuSet::default();
            for w in &workers {
                if w.rt_priority != Some(99) {
                    problems.push(format!(
                        "cyclictest thread {} ran at priority {:?}, not 99",
                        w.tid, w.rt_priority
                    ));
                }
                let cpus = allowed(w);
                if pinned && (cpus.len() != 1 || !cpus.is_subset(measured)) {
                    problems.push(format!(
                        "cyclictest thread {} may run on CPUs {}, not on one measured CPU of {measured}",
                        w.tid, w.allowed
                    ));
                }
                if !pinned && !cpus.is_subset(measured) {
                    problems.push(format!(
                        "cyclictest thread {} may run on CPUs {}, outside the measured CPUs {measured}",
                        w.tid, w.allowed
                    ));
                }
                if let Some(cpu) = w.cpu.filter(|c| !measured.contains(*c)) {
                    problems.push(format!(
                        "cyclictest thread {} ran on CPU {cpu}, outside the measured CPUs {measured}",
                        w.tid
                    ));
                }
                covered = covered.union(&cpus);
            }
            // Pinned threads: rtbuild keeps the main thread off the RT CPUs (--mainaffinity),
            // which is checked. Unpinned threads: cyclictest's process gets the measured CPUs
            // and its main thread, which does not measure, may sit on any of them: not judged.
            if let Some(main) =
                self.cyclictest.iter().find(|t| pinned && Some(t.tid) == self.cyclictest_pid)
            {
                let on_rt = allowed(main).intersection(&layout.rt);
                if !on_rt.is_empty() {
                    problems.push(format!(
                        "cyclictest's main thread may run on RT CPUs {on_rt}; it must stay on housekeeping CPUs"
                    ));
                }
            }
            // Unpinned threads are placed round the measured CPUs, at least one thread each.
            if workers.len() == wanted && covered != *measured {
                problems.push(format!(
                    "cyclictest threads covered CPUs {covered}, not every measured CPU {measured}"
                ));
            }
        }
        if has_load {
            if self.load.is_empty() {
                problems.push("no load process was running while cyclictest measured".into());
            }
            for task in &self.load {
                if place == LoadPlace::Everywhere {
                    // `system-load` loads the measured CPUs on purpose.
                    continue;
                }
                if place == LoadPlace::Housekeeping
                    && !allowed(task).is_subset(&layout.housekeeping)
                {
                    problems.push(format!(
                        "load process {} ({}) may run on CPUs {}, outside housekeeping CPUs {}",
                        task.tid, task.name, task.allowed, layout.housekeeping
                    ));
                }
                if let Some(cpu) = task.cpu
                    && layout.rt.contains(cpu)
                {
                    problems.push(format!(
                        "load process {} ({}) ran on RT CPU {cpu}",
                        task.tid, task.name
                    ));
                }
            }
        }
        problems
    }
}

/// cyclictest's thread numbers by thread id, from its output: the `T: k (TID) …` lines (on
/// stdout at the end of `-q` without a histogram, on stderr in every SIGUSR1 status block) or
/// the `# Thread Ids: TID…` line `-b` prints at a breach (a plain `-q -h` run prints neither on
/// stdout), in thread order.
pub(super) fn thread_numbers(stdout: &str) -> std::collections::BTreeMap<u32, usize> {
    let mut numbers = std::collections::BTreeMap::new();
    for line in stdout.lines() {
        if let Some(ids) = line.strip_prefix("# Thread Ids:") {
            for (k, tid) in ids.split_whitespace().enumerate() {
                if let Ok(tid) = tid.parse() {
                    numbers.insert(tid, k);
                }
            }
        } else if let Some(rest) = line.strip_prefix("T:") {
            // `T: 0 ( 4670) P:99 I:1000 …`
            let Some((k, rest)) = rest.split_once('(') else { continue };
            let Some((tid, _)) = rest.split_once(')') else { continue };
            if let (Ok(k), Ok(tid)) = (k.trim().parse(), tid.trim().parse()) {
                numbers.insert(tid, k);
            }
        }
    }
    numbers
}

/// Where each measuring (SCHED_FIFO) thread of cyclictest could run and ran, over every
/// probe; numbered by cyclictest's own output where it names them, in thread-id order.
pub(super) fn placement(probes: &[Probe], stdout: &str) -> Vec<ThreadPlacement> {
    let numbers = thread_numbers(stdout);
    let mut by_tid: std::collections::BTreeMap<u32, (CpuSet, CpuSet, usize)> =
        std::collections::BTreeMap::new();
    // Measuring threads only: cyclictest's main thread (the process id) is never one.
    let measuring = probes.iter().flat_map(|p| {
        p.cyclictest.iter().filter(move |t| t.policy == Some(1) && Some(t.tid) != p.cyclictest_pid)
    });
    for task in measuring {
        let entry = by_tid.entry(task.tid).or_default();
        entry.0 = entry.0.union(&CpuSet::parse(&task.allowed).unwrap_or_default());
        if let Some(cpu) = task.cpu {
            entry.1 = entry.1.union(&CpuSet::from_cpus([cpu]));
        }
        entry.2 += 1;
    }
    let mut list: Vec<ThreadPlacement> = by_tid
        .into_iter()
        .map(|(tid, (allowed, ran_on, looks))| ThreadPlacement {
            thread: numbers.get(&tid).copied(),
            tid,
            allowed: allowed.to_string(),
            ran_on: ran_on.to_string(),
            looks,
        })
        .collect();
    list.sort_by_key(|p| (p.thread.unwrap_or(usize::MAX), p.tid));
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(cpu: u32, prio: u32, policy: u32) -> String {
        // Fields 3..=41: state first, then zeros, with processor/rt_priority/policy at the end.
        let mut fields = vec!["S".to_string()];
        fields.extend((4..39).map(|_| "0".to_string()));
        fields.extend([cpu.to_string(), prio.to_string(), policy.to_string(), "0".into()]);
        fields.join(" ")
    }

    #[test]
    fn a_correct_run_has_no_problems_and_a_wrong_one_names_each() {
        let layout = CpuLayout::new(
            &CpuSet::range(0, 4),
            &CpuSet::parse("2-3").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        let good = format!(
            "ctpid 10\nct 10|1|{}|cyclictest\nct 11|2|{}|cyclictest\nct 12|3|{}|cyclic|test\nload 20|0|{}|stress-ng\n",
            stat(1, 0, 0),
            stat(2, 99, 1),
            stat(3, 99, 1),
            stat(0, 0, 0)
        );
        let probe = Probe::parse(&good);
        assert_eq!(probe.cyclictest.len(), 3);
        assert_eq!(probe.cyclictest[1].cpu, Some(2));
        assert_eq!(probe.cyclictest[2].name, "cyclic|test");
        assert_eq!(
            probe.problems(&layout, &layout.rt, Threads::PerCpu, true, LoadPlace::Housekeeping),
            Vec::<String>::new()
        );

        let bad = format!(
            "ctpid 10\nct 10|0-3|{}|cyclictest\nct 11|2|{}|cyclictest\nload 20|0-3|{}|stress-ng\n",
            stat(3, 0, 0),
            stat(2, 80, 1),
            stat(3, 0, 0)
        );
        let problems = Probe::parse(&bad).problems(
            &layout,
            &layout.rt,
            Threads::PerCpu,
            true,
            LoadPlace::Housekeeping,
        );
        assert_eq!(
            problems,
            [
                "1 cyclictest threads ran SCHED_FIFO, expected 2 (one per measured CPU)",
                "cyclictest thread 11 ran at priority Some(80), not 99",
                "cyclictest's main thread may run on RT CPUs 2-3; it must stay on housekeeping CPUs",
                "load process 20 (stress-ng) may run on CPUs 0-3, outside housekeeping CPUs 0-1",
                "load process 20 (stress-ng) ran on RT CPU 3",
            ]
        );
        assert_eq!(
            Probe::default().problems(
                &layout,
                &layout.rt,
                Threads::PerCpu,
                true,
                LoadPlace::Housekeeping
            ),
            [
                "cyclictest was not seen running; its threads could not be checked",
                "no load process was running while cyclictest measured"
            ]
        );
    }

    /// A two-CPU board whose RT CPU is 1 (housekeeping CPU 0).
    fn two_cpus_rt_1() -> CpuLayout {
        CpuLayout::new(
            &CpuSet::range(0, 2),
            &CpuSet::parse("1").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap()
    }

    /// Issue 39: eight unpinned threads on a two-CPU claim. Started with rtbuild's own
    /// housekeeping mask they could all run only on CPU 0: each is named, and the claimed CPU
    /// 1 is uncovered. Placed on the claimed CPUs, the run is clean, and the placement record
    /// numbers the threads from cyclictest's own output.
    #[test]
    fn unpinned_threads_outside_the_measured_cpus_are_named() {
        let layout = two_cpus_rt_1();
        let all = CpuSet::range(0, 2);
        let probe = |allowed: [&str; 2], cpus: [u32; 2]| {
            Probe::parse(&format!(
                "ctpid 10\nct 10|0|{}|cyclictest\nct 11|{}|{}|cyclictest\nct 12|{}|{}|cyclictest\n",
                stat(0, 0, 0),
                allowed[0],
                stat(cpus[0], 99, 1),
                allowed[1],
                stat(cpus[1], 99, 1)
            ))
        };
        let narrowed = probe(["0", "0"], [0, 0]);
        assert_eq!(
            narrowed.problems(
                &layout,
                &layout.rt,
                Threads::Unpinned(2),
                false,
                LoadPlace::Housekeeping
            ),
            [
                "cyclictest thread 11 may run on CPUs 0, outside the measured CPUs 1",
                "cyclictest thread 11 ran on CPU 0, outside the measured CPUs 1",
                "cyclictest thread 12 may run on CPUs 0, outside the measured CPUs 1",
                "cyclictest thread 12 ran on CPU 0, outside the measured CPUs 1",
                "cyclictest threads covered CPUs 0, not every measured CPU 1",
            ]
        );
        let right = probe(["0", "1"], [0, 1]);
        assert_eq!(
            right.problems(&layout, &all, Threads::Unpinned(2), false, LoadPlace::Housekeeping),
            Vec::<String>::new()
        );
        let stdout = "T: 0 (   11) P:99 I:1000 C:   10 Min: 1 Act: 2 Avg: 2 Max: 3\n\
                      T: 1 (   12) P:99 I:1500 C:    7 Min: 1 Act: 2 Avg: 2 Max: 3\n";
        let placed = placement(&[right.clone(), right], stdout);
        assert_eq!(
            placed,
            [
                ThreadPlacement {
                    thread: Some(0),
                    tid: 11,
                    allowed: "0".into(),
                    ran_on: "0".into(),
                    looks: 2
                },
                ThreadPlacement {
                    thread: Some(1),
                    tid: 12,
                    allowed: "1".into(),
                    ran_on: "1".into(),
                    looks: 2
                },
            ]
        );
        assert_eq!(thread_numbers("# Thread Ids: 40 41\n"), [(40, 0), (41, 1)].into());
    }

    /// Issue 39: a look taken while cyclictest's threads end at a `--trace-above-us` breach
    /// sees fewer of them; that is not a reason to call the run invalid (the breach is a FAIL
    /// with its trace). Without a breach the same look is.
    #[test]
    fn threads_ending_at_a_breach_are_not_an_invalid_run() {
        let layout = two_cpus_rt_1();
        let mut ending = Probe::parse(&format!("ctpid 10\nct 10|0|{}|cyclictest\n", stat(0, 0, 0)));
        let check = |p: &Probe| {
            p.problems(&layout, &layout.rt, Threads::PerCpu, false, LoadPlace::Housekeeping)
        };
        assert_eq!(
            check(&ending),
            ["0 cyclictest threads ran SCHED_FIFO, expected 1 (one per measured CPU)"]
        );
        ending.after_breach = true;
        assert_eq!(check(&ending), Vec::<String>::new());
    }

    /// Issue 39, a target run: a histogram's stdout names no thread ids, so the numbers come
    /// from the `T: k (TID)` lines of the status blocks cyclictest printed on its stderr while
    /// rtbuild measured (before, run.json's `thread_placement[].thread` was null there).
    #[test]
    fn thread_numbers_of_a_histogram_run_come_from_the_status_blocks() {
        let look = Probe::parse(&format!(
            "ctpid 30\nct 30|0|{}|cyclictest\nct 31|1|{}|cyclictest\nct 32|1|{}|cyclictest\n",
            stat(0, 0, 0),
            stat(1, 99, 1),
            stat(1, 99, 1)
        ));
        let histogram = "# Histogram\n000000 000000\t000000\n000001 000010\t000012\n\
                         # Total: 000000010 000000012\n# Max Latencies: 00001 00001\n";
        assert!(
            placement(std::slice::from_ref(&look), histogram).iter().all(|p| p.thread.is_none())
        );
        let stderr = "#---------------------------\n# cyclictest current status:\n\
T: 0 (   31) P:99 I:1000 C:   1000 Min:      3 Act:    5 Avg:    4 Max:      20\n\
T: 1 (   32) P:99 I:1000 C:    999 Min:      3 Act:    5 Avg:    4 Max:      21\n\
#---------------------------\n";
        let placed = placement(&[look], &format!("{histogram}\n{stderr}"));
        let numbers: Vec<(u32, Option<usize>)> = placed.iter().map(|p| (p.tid, p.thread)).collect();
        assert_eq!(numbers, [(31, Some(0)), (32, Some(1))]);
    }

    /// Issue 39: eight unpinned threads at 10 ms on measured CPUs 0-1 (RT CPU 1), as /proc
    /// showed them: cyclictest's main thread (the process id, not a measuring thread) is
    /// allowed the measured CPUs and sat on the RT CPU. Nothing is said about it, and it is no
    /// entry of `thread_placement`, even when it shows as SCHED_FIFO.
    #[test]
    fn the_main_thread_of_unpinned_threads_is_not_judged() {
        let layout = two_cpus_rt_1();
        let measured = CpuSet::range(0, 2);
        for main_policy in [0, 1] {
            let mut text =
                format!("ctpid 500\nct 500|0-1|{}|cyclictest\n", stat(1, 0, main_policy));
            for k in 0..8u32 {
                let cpu = k % 2;
                text.push_str(&format!("ct {}|{cpu}|{}|cyclictest\n", 501 + k, stat(cpu, 99, 1)));
            }
            let look = Probe::parse(&text);
            assert_eq!(
                look.problems(
                    &layout,
                    &measured,
                    Threads::Unpinned(8),
                    false,
                    LoadPlace::Housekeeping
                ),
                Vec::<String>::new(),
                "main thread policy {main_policy}"
            );
            let placed = placement(&[look], "");
            assert_eq!(placed.len(), 8);
            assert!(placed.iter().all(|p| p.tid != 500), "{placed:?}");
        }
    }

    #[test]
    fn a_helper_outside_its_cpus_is_named() {
        let pinned = CpuSet::parse("0-1").unwrap();
        let at =
            |allowed: &str| Probe::parse(&format!("helper 42|{allowed}|{}|sh\n", stat(0, 0, 0)));
        assert_eq!(at("0-1").helper.as_ref().map(|t| t.tid), Some(42));
        assert_eq!(at("0-1").helper_problem(&pinned), None);
        assert_eq!(at("1").helper_problem(&pinned), None);
        assert_eq!(
            at("0-3").helper_problem(&pinned).as_deref(),
            Some(
                "rtbuild's helper on the target may run on CPUs 0-3, not only on CPUs 0-1 away from the measured ones (taskset could not pin it)"
            )
        );
        // A probe without the helper's line (an older helper) says nothing.
        assert_eq!(Probe::default().helper_problem(&pinned), None);
    }
}
