//! The cyclictest command line rtbuild runs, and the few facts it reads back from cyclictest's
//! `--json` file to judge whether a run is valid (issue 7's parser does the statistics).

use std::collections::BTreeMap;

use serde::Serialize;

use super::length::Length;
use crate::formats::cyclictest_json;
use crate::host::cpus::CpuLayout;
use crate::plan::CpuSet;

/// cyclictest's histogram is capped at this many µs (`HIST_MAX`).
pub(crate) const HIST_MAX_US: u32 = 1_000_000;

/// How cyclictest's measurement threads are placed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Threads {
    /// One thread per measured CPU, pinned there (`-a CPUS -t N -d 0`), rtbuild's default.
    #[default]
    PerCpu,
    /// `--threads N --unpinned`: `-t N` without `-a`, as the RK3588 guide's
    /// `cyclictest -c 0 -m -t 8 -p 99` runs them: cyclictest itself places thread k on the
    /// k-th CPU (mod their count) of the CPUs its process may use, which rtbuild sets to
    /// exactly the measured CPUs (`taskset`, see the helper's `run-cyclictest`). Without
    /// `--histogram-us` no `-h` is passed, so cyclictest spreads the intervals at its default
    /// distance ([`DEFAULT_DISTANCE_US`]: thread k runs at `-i` + k × 500 µs); `-h` makes
    /// cyclictest run every thread at `-i` (it sets the distance to 0).
    Unpinned(u32),
}

/// cyclictest's own distance between thread intervals (`-d`, default 500 µs), which it
/// applies when no histogram is asked for.
pub(crate) const DEFAULT_DISTANCE_US: u32 = 500;

/// What the measurement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Measure {
    pub interval_us: u32,
    /// `-h`: the histogram's range, µs; 0 passes no `-h` (unpinned threads without
    /// `--histogram-us`, at cyclictest's own interval distance).
    pub histogram_us: u32,
    pub length: Length,
    /// `--main-cpu`: the housekeeping CPU of cyclictest's main thread [default: the last one].
    pub main_cpu: Option<u32>,
    pub threads: Threads,
}

impl Measure {
    /// The distance between thread intervals cyclictest applies: its default 500 µs for
    /// unpinned threads without a histogram, else 0 (rtbuild's `-d 0`, or `-h`'s rule).
    pub(crate) fn distance_us(&self) -> u32 {
        match self.threads {
            Threads::Unpinned(_) if self.histogram_us == 0 => DEFAULT_DISTANCE_US,
            _ => 0,
        }
    }

    /// The interval of thread `k` (cyclictest's `I:`), µs.
    pub(crate) fn thread_interval_us(&self, k: usize) -> u32 {
        let k = u32::try_from(k).unwrap_or(u32::MAX);
        self.interval_us.saturating_add(k.saturating_mul(self.distance_us()))
    }

    /// The number of measuring threads for `cpus` measured CPUs.
    pub(crate) fn thread_count(&self, cpus: usize) -> usize {
        match self.threads {
            Threads::PerCpu => cpus,
            Threads::Unpinned(n) => n as usize,
        }
    }

    /// Seconds the measurement should take on `cpus` measured CPUs: the slowest thread's
    /// (a loop count at a longer interval takes longer).
    pub(crate) fn expected_seconds(&self, cpus: usize) -> u64 {
        let slowest = self.thread_interval_us(self.thread_count(cpus).saturating_sub(1));
        self.length.seconds(slowest)
    }
}

/// The argv: memory locked, SCHED_FIFO 99, one thread per measured CPU pinned there (or
/// `--threads N --unpinned`), the main (reporting) thread moved to a housekeeping CPU, a
/// histogram (none for unpinned threads without `--histogram-us`), JSON results, quiet output,
/// equal intervals for pinned threads, the run length, then the user's checked `extra` options.
pub(super) fn argv(
    layout: &CpuLayout,
    cpus: &CpuSet,
    measure: &Measure,
    json_path: &str,
    extra: &[String],
) -> Vec<String> {
    let main_cpu = measure.main_cpu.unwrap_or_else(|| layout.main_cpu());
    let (placement, threads): (Vec<String>, usize) = match measure.threads {
        Threads::PerCpu => (vec!["-a".into(), cpus.to_string()], cpus.len()),
        Threads::Unpinned(n) => (Vec::new(), n as usize),
    };
    let mut argv: Vec<String> =
        ["cyclictest", "-m", "-p", "99"].iter().map(|s| s.to_string()).chain(placement).collect();
    argv.extend(
        [
            "-t",
            &threads.to_string(),
            &format!("--mainaffinity={main_cpu}"),
            "-i",
            &measure.interval_us.to_string(),
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    if measure.histogram_us > 0 {
        argv.extend(["-h".to_string(), measure.histogram_us.to_string()]);
    }
    argv.extend(["-q".to_string(), format!("--json={json_path}")]);
    if threads > 1 && measure.threads == Threads::PerCpu {
        argv.extend(["-d".into(), "0".into()]);
    }
    match measure.length {
        Length::Seconds(s) => argv.extend(["-D".into(), s.to_string()]),
        Length::Loops(l) => argv.extend(["-l".into(), l.to_string()]),
    }
    argv.extend(extra.iter().cloned());
    argv
}

/// The parts of cyclictest's JSON rtbuild checks, each required.
#[derive(Debug, Clone)]
pub(super) struct Results {
    pub return_code: Option<i64>,
    pub num_threads: usize,
    pub thread: BTreeMap<String, Thread>,
}

#[derive(Debug, Clone)]
pub(super) struct Thread {
    pub histogram: Option<BTreeMap<String, u64>>,
    pub cycles: u64,
    pub min: i64,
    pub max: i64,
    pub avg: Option<f64>,
    pub cpu: i64,
}

impl Thread {
    /// Samples above the histogram's range: cyclictest's JSON leaves them out of the buckets.
    /// Without a histogram (no `-h`) nothing overflowed.
    pub(super) fn overflows(&self) -> u64 {
        let Some(histogram) = &self.histogram else { return 0 };
        let counted: u64 = histogram.values().sum();
        self.cycles.saturating_sub(counted)
    }
}

/// Reads cyclictest's JSON ([`cyclictest_json`]) and takes the fields a valid run has.
pub(super) fn parse(text: &str) -> Result<Results, String> {
    let json = cyclictest_json::parse(text.as_bytes()).map_err(|e| e.to_string())?;
    let missing = |field: &str| format!("missing field `{field}`");
    let mut thread = BTreeMap::new();
    for (key, t) in json.thread.ok_or_else(|| missing("thread"))? {
        let histogram = match t.histogram {
            None => None,
            Some(buckets) => {
                if let Some(bucket) = buckets.bad.first() {
                    return Err(format!("thread {key}: histogram entry `{bucket}` is not a count"));
                }
                Some(buckets.entries.into_iter().map(|(b, count)| (b.to_string(), count)).collect())
            }
        };
        let value = Thread {
            histogram,
            cycles: t.cycles.ok_or_else(|| missing("cycles"))?,
            min: t.min.ok_or_else(|| missing("min"))?,
            max: t.max.ok_or_else(|| missing("max"))?,
            avg: t.avg,
            cpu: t.cpu.ok_or_else(|| missing("cpu"))?,
        };
        thread.insert(key, value);
    }
    Ok(Results {
        return_code: json.return_code,
        num_threads: json.num_threads.ok_or_else(|| missing("num_threads"))?,
        thread,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_per_rt_cpu_and_the_main_thread_on_housekeeping() {
        let online = CpuSet::range(0, 8);
        let layout = CpuLayout::new(
            &online,
            &CpuSet::parse("6-7").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        let measure = Measure {
            interval_us: 1000,
            histogram_us: 1000,
            length: Length::Seconds(10),
            main_cpu: None,
            threads: Threads::PerCpu,
        };
        assert_eq!(
            argv(&layout, &layout.rt, &measure, "/tmp/x/idle.json", &[]).join(" "),
            "cyclictest -m -p 99 -a 6-7 -t 2 --mainaffinity=5 -i 1000 -h 1000 -q \
             --json=/tmp/x/idle.json -d 0 -D 10"
        );
        let layout = CpuLayout::new(
            &online,
            &CpuSet::parse("7").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        let measure = Measure {
            interval_us: 200,
            histogram_us: 400,
            length: Length::Loops(100),
            main_cpu: None,
            threads: Threads::PerCpu,
        };
        let extra = ["--spike=250".to_string(), "-x".to_string()];
        let line = argv(&layout, &layout.rt, &measure, "j", &extra).join(" ");
        assert!(line.ends_with(
            "-a 7 -t 1 --mainaffinity=6 -i 200 -h 400 -q --json=j -l 100 --spike=250 -x"
        ));
    }

    #[test]
    fn measuring_every_cpu_puts_one_thread_on_each_cpu_0_included() {
        let online = CpuSet::range(0, 4);
        let layout = CpuLayout::new(
            &online,
            &CpuSet::parse("3").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        let measure = Measure {
            interval_us: 100,
            histogram_us: 800,
            length: Length::Seconds(600),
            main_cpu: None,
            threads: Threads::PerCpu,
        };
        assert_eq!(
            argv(&layout, &online, &measure, "j", &[]).join(" "),
            "cyclictest -m -p 99 -a 0-3 -t 4 --mainaffinity=2 -i 100 -h 800 -q --json=j -d 0 -D 600"
        );
    }

    #[test]
    fn the_guides_main_cpu_loops_and_unpinned_threads() {
        // IQ-8275: `cyclictest -a 3 -t 1 -m -l 100000000 -i 1000 -p 99 -h 100 --mainaffinity 2`.
        let online = CpuSet::range(0, 8);
        let layout = CpuLayout::new(
            &online,
            &CpuSet::parse("3").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        let mut measure = Measure {
            interval_us: 1000,
            histogram_us: 100,
            length: Length::Loops(100_000_000),
            main_cpu: Some(2),
            threads: Threads::PerCpu,
        };
        assert_eq!(
            argv(&layout, &layout.rt, &measure, "j", &[]).join(" "),
            "cyclictest -m -p 99 -a 3 -t 1 --mainaffinity=2 -i 1000 -h 100 -q --json=j -l 100000000"
        );
        // RK3588: `cyclictest -c 0 -m -t 8 -p 99 -D 600`: no -a, no -d 0 (default distance).
        measure.threads = Threads::Unpinned(8);
        measure.main_cpu = None;
        measure.length = Length::Seconds(600);
        let extra = ["-c".to_string(), "0".to_string()];
        assert_eq!(
            argv(&layout, &layout.rt, &measure, "j", &extra).join(" "),
            "cyclictest -m -p 99 -t 8 --mainaffinity=2 -i 1000 -h 100 -q --json=j -D 600 -c 0"
        );
    }

    /// Issue 39: unpinned threads without --histogram-us keep cyclictest's own distance (no
    /// `-h`, which would set it to 0); each thread's interval, cycles and the run's length
    /// follow it.
    #[test]
    fn unpinned_threads_without_a_histogram_keep_cyclictests_distance() {
        let online = CpuSet::range(0, 8);
        let layout = CpuLayout::new(
            &online,
            &CpuSet::parse("7").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        let mut measure = Measure {
            interval_us: 1000,
            histogram_us: 0,
            length: Length::Seconds(9),
            main_cpu: None,
            threads: Threads::Unpinned(8),
        };
        let line = argv(&layout, &online, &measure, "j", &[]).join(" ");
        assert_eq!(line, "cyclictest -m -p 99 -t 8 --mainaffinity=6 -i 1000 -q --json=j -D 9");
        let intervals: Vec<u32> = (0..8).map(|k| measure.thread_interval_us(k)).collect();
        assert_eq!(intervals, [1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500]);
        let cycles = |k| measure.length.cycles(measure.thread_interval_us(k));
        assert_eq!((cycles(0), cycles(7)), (9000, 2000));
        assert_eq!(measure.expected_seconds(8), 9);
        measure.length = Length::Loops(1000);
        // 1000 loops of the slowest thread (4.5 ms) take 4.5 s.
        assert_eq!(measure.expected_seconds(8), 5);
        // Asked for a histogram: cyclictest runs every thread at -i.
        measure.histogram_us = 100;
        assert_eq!(measure.thread_interval_us(7), 1000);
        assert!(argv(&layout, &online, &measure, "j", &[]).join(" ").contains(" -h 100 "));
    }

    #[test]
    fn reads_json_with_nan_and_counts_overflows() {
        let text = r#"{
  "file_version": 1,
  "cmdline:": "cyclictest -q",
  "return_code": 0,
  "num_threads": 2,
  "resolution_in_ns": 0,
  "thread": {
    "0": {"histogram": {"3": 90, "4": 5}, "cycles": 100, "min": 2, "max": 900, "avg": 3.10, "cpu": 1, "node": 0},
    "1": {"histogram": {}, "cycles": 0, "min": 0, "max": 0, "avg": -nan, "cpu": 2, "node": 0}
  }
}
"#;
        let results = parse(text).unwrap();
        assert_eq!(results.num_threads, 2);
        assert_eq!(results.thread["0"].overflows(), 5);
        assert_eq!(results.thread["1"].avg, None);
    }
}
