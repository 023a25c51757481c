//! Whether a scenario's measurement can be trusted, from cyclictest's exit status, stderr and
//! JSON: it ran, measured on the RT CPUs with the right thread count and completed its cycles.
//! Samples above the histogram do not make it invalid: cyclictest counts them and its max is
//! exact, so they are a note (percentiles above the histogram are bounds) and the max decides
//! PASS or FAIL, as in `rtbuild report`. (The probe adds what only a live look can see.)

use super::cyclictest::{self, Threads};
use crate::formats::judge::{Against, Findings, max_against};
use crate::formats::run_json::{ScenarioRecord, ThreadSummary};
use crate::plan::CpuSet;

/// How one scenario's measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    Completed,
    Interrupted,
    ConnectionLost,
}

pub(super) struct Inputs<'a> {
    /// The `--json` file, when cyclictest wrote one.
    pub json: Option<&'a str>,
    pub stderr: &'a str,
    /// The CPUs cyclictest was asked to measure, one thread each (unless `threads` is unpinned).
    pub measure_cpus: &'a CpuSet,
    pub threads: Threads,
    pub interval_us: u32,
    /// cyclictest's distance between thread intervals: thread k runs at `interval_us` + k ×
    /// this (500 for unpinned threads without a histogram, else 0).
    pub distance_us: u32,
    /// The run is a loop count (`-l`): every thread completes the same number of cycles.
    pub loops: bool,
    pub histogram_us: u32,
    /// Cycles thread 0 (at `interval_us`) should complete.
    pub expected_cycles: u64,
    /// cyclictest's (or ssh's) exit code; `None` when killed by a signal.
    pub status: Option<i32>,
    pub ending: Ending,
    pub host: &'a str,
    /// cyclictest stopped at its `-b` breach (`--trace-above-us`): fewer cycles are expected.
    pub stopped_at_breach: bool,
}

pub(super) struct Judged {
    pub reasons: Vec<String>,
    /// What the figures' reader must know (overflows), without making the run invalid.
    pub notes: Vec<String>,
    pub threads: Vec<ThreadSummary>,
}

pub(super) fn judge(i: &Inputs<'_>) -> Judged {
    let mut reasons = Vec::new();
    match i.ending {
        Ending::Interrupted => reasons.push("interrupted before the planned run time".into()),
        Ending::ConnectionLost => {
            reasons.push(format!("lost the connection to {} during the measurement", i.host));
        }
        Ending::Completed => {}
    }
    if i.ending == Ending::Completed && i.status != Some(0) {
        reasons.push(format!(
            "cyclictest exited with {}: {}",
            i.status.map_or("a signal".to_string(), |c| format!("code {c}")),
            crate::text::shown_tail(i.stderr, 2)
        ));
    }
    let Some(text) = i.json else {
        reasons.push(
            "cyclictest wrote no JSON results, so it did not measure (an unknown option makes it print its help and exit 0)"
                .into(),
        );
        return Judged { reasons, notes: Vec::new(), threads: Vec::new() };
    };
    let results = match cyclictest::parse(text) {
        Ok(r) => r,
        Err(err) => {
            reasons.push(format!("cyclictest's JSON results are unreadable: {err}"));
            return Judged { reasons, notes: Vec::new(), threads: Vec::new() };
        }
    };
    if let Some(code) = results.return_code.filter(|c| *c != 0) {
        reasons.push(format!("cyclictest reported return code {code}"));
    }
    let cpus = i.measure_cpus;
    let wanted = match i.threads {
        Threads::PerCpu => cpus.len(),
        Threads::Unpinned(n) => n as usize,
    };
    if results.num_threads != wanted {
        let ran = crate::text::counted(results.num_threads, "thread");
        reasons.push(format!("cyclictest ran {ran}, expected {wanted}"));
    }
    let mut threads = Vec::new();
    let mut notes = Vec::new();
    for (key, t) in &results.thread {
        let k: u32 = key.parse().unwrap_or(0);
        let interval_us = i.interval_us.saturating_add(k.saturating_mul(i.distance_us));
        // A thread at a longer interval completes fewer cycles in the same time.
        let expected = if i.loops {
            i.expected_cycles
        } else {
            i.expected_cycles.saturating_mul(u64::from(i.interval_us))
                / u64::from(interval_us.max(1))
        };
        // Without `-h` cyclictest 2.4 writes empty buckets: nothing is known to overflow.
        let overflows = if i.histogram_us == 0 { 0 } else { t.overflows() };
        if i.ending == Ending::Completed
            && !i.stopped_at_breach
            && t.cycles.saturating_mul(10) < expected.saturating_mul(9)
        {
            reasons
                .push(format!("thread {key} completed {} of {expected} expected cycles", t.cycles));
        }
        // A figure that is no latency (a negative min or max, an average that is not a finite
        // number ≥ 0 where cycles ran) is unknown: the measurement cannot be trusted.
        let avg_bad =
            t.cycles > 0 && t.avg.is_none_or(|a| !crate::formats::report_json::is_latency(a));
        for (name, bad, shown) in [
            ("min", t.min < 0, t.min.to_string()),
            ("max", t.max < 0, t.max.to_string()),
            ("avg", avg_bad, t.avg.map_or_else(|| "nan".to_string(), |a| a.to_string())),
        ] {
            if bad {
                reasons.push(format!(
                    "thread {key}: cyclictest wrote {name} `{shown}`, which is not a latency (a finite number ≥ 0), so it is unknown"
                ));
            }
        }
        if overflows > 0 {
            notes.push(crate::catalog::latency::overflow_note(
                format!("thread {key}"),
                overflows,
                i.histogram_us,
                t.max,
            ));
        }
        // Pinned or not, every thread must have measured on a CPU the run claims.
        if u32::try_from(t.cpu).map_or(true, |c| !cpus.contains(c)) {
            reasons.push(format!(
                "thread {key} measured on CPU {}, not one of the measured CPUs {cpus}",
                t.cpu
            ));
        }
        threads.push(ThreadSummary {
            thread: key.parse().unwrap_or(0),
            cpu: t.cpu,
            cycles: t.cycles,
            min_us: t.min,
            avg_us: t.avg,
            max_us: t.max,
            overflows,
            // `-i` for pinned threads and with `-h`; spread by cyclictest's distance else.
            interval_us: Some(interval_us),
        });
    }
    threads.sort_by_key(|t| t.thread);
    Judged { reasons, notes, threads }
}

/// What a run's scenarios show, for the one judge ([`crate::formats::judge`]): invalid when a
/// scenario or test is, or cyclictest left an output without a known maximum; failed when a
/// scenario's maximum is over `threshold_us` or a scenario or test failed.
pub(super) fn findings(scenarios: &[ScenarioRecord], threshold_us: u64) -> Findings {
    let mut found = Findings::default();
    for s in scenarios {
        found.invalid |=
            !s.invalid_reasons.is_empty() || s.tests.iter().any(|t| !t.invalid_reasons.is_empty());
        found.failed |=
            !s.fail_reasons.is_empty() || s.tests.iter().any(|t| !t.fail_reasons.is_empty());
        // cyclictest's maximum, where it left an output (a scenario of other tests has none).
        if s.max_us.is_some() || !s.files.is_empty() {
            match max_against(s.max_us.map(|m| m as f64), threshold_us as f64) {
                Against::Missing | Against::NotALatency(_) => found.invalid = true,
                Against::Over(_) => found.failed = true,
                Against::Within(_) => {}
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::cpus::CpuLayout;
    use crate::measure::testrun::session::tests::scenario;

    fn data(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
        std::fs::read_to_string(path).unwrap()
    }

    fn judge_with(json: Option<&str>, status: Option<i32>, expected: u64) -> Vec<String> {
        judged_with(json, status, expected).reasons
    }

    fn judged_with(json: Option<&str>, status: Option<i32>, expected: u64) -> Judged {
        let layout = CpuLayout::new(
            &CpuSet::range(0, 2),
            &CpuSet::parse("1").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        judge(&Inputs {
            json,
            stderr: "Unable to change scheduling policy!\nProbably missing capabilities\n",
            measure_cpus: &layout.rt,
            threads: Threads::PerCpu,
            interval_us: 1000,
            distance_us: 0,
            loops: false,
            histogram_us: 1000,
            expected_cycles: expected,
            status,
            ending: Ending::Completed,
            host: "t",
            stopped_at_breach: false,
        })
    }

    /// Unpinned threads at cyclictest's own distance: thread 1 at 1500 µs completes two thirds
    /// of thread 0's cycles, which is what is expected of it; a thread on a CPU the run does
    /// not claim is named whether pinned or not.
    #[test]
    fn unpinned_threads_are_judged_at_their_own_interval_and_on_the_claimed_cpus() {
        let json = r#"{"return_code": 0, "num_threads": 2, "thread": {
            "0": {"histogram": {}, "cycles": 3000, "min": 2, "max": 9, "avg": 3.0, "cpu": 1},
            "1": {"histogram": {}, "cycles": 2000, "min": 2, "max": 9, "avg": 3.0, "cpu": 0}}}"#;
        let cpus = CpuSet::parse("1").unwrap();
        let judged = judge(&Inputs {
            json: Some(json),
            stderr: "",
            measure_cpus: &cpus,
            threads: Threads::Unpinned(2),
            interval_us: 1000,
            distance_us: 500,
            loops: false,
            histogram_us: 0,
            expected_cycles: 3000,
            status: Some(0),
            ending: Ending::Completed,
            host: "t",
            stopped_at_breach: false,
        });
        assert_eq!(judged.reasons, ["thread 1 measured on CPU 0, not one of the measured CPUs 1"]);
        let intervals: Vec<Option<u32>> = judged.threads.iter().map(|t| t.interval_us).collect();
        assert_eq!(intervals, [Some(1000), Some(1500)]);
    }

    #[test]
    fn a_real_cyclictest_2_4_run_is_valid() {
        let json = data("cyclictest-2.4-json-1thread-cpu1.json");
        assert_eq!(judge_with(Some(&json), Some(0), 3000), Vec::<String>::new());
    }

    #[test]
    fn each_invalid_run_is_named() {
        let json = data("cyclictest-2.4-json-1thread-cpu1.json");
        assert_eq!(
            judge_with(None, Some(0), 3000),
            [
                "cyclictest wrote no JSON results, so it did not measure (an unknown option makes it print its help and exit 0)"
            ]
        );
        assert_eq!(
            judge_with(Some(&json), Some(1), 3000)[0],
            "cyclictest exited with code 1: Unable to change scheduling policy! / Probably missing capabilities"
        );
        assert_eq!(
            judge_with(Some(&json), Some(0), 10_000),
            ["thread 0 completed 3000 of 10000 expected cycles"]
        );
        let overflow = data("cyclictest-2.4-json-2threads-overflow.json");
        assert_eq!(
            judge_with(Some(&overflow), Some(0), 5000),
            [
                "cyclictest ran 2 threads, expected 1",
                "thread 0 measured on CPU 0, not one of the measured CPUs 1",
                // Without -d 0 the second thread ran at 1500 µs: the wrong interval shows here.
                "thread 1 completed 3334 of 5000 expected cycles",
            ]
        );
        // Samples above the histogram are counted and the max is exact: a note, not a reason.
        assert_eq!(
            judged_with(Some(&overflow), Some(0), 5000).notes,
            [
                "thread 0: 2 samples above the 1000 µs histogram: percentiles above 1000 µs are bounds (≥1000); the max (1250 µs) is cyclictest's own",
                "thread 1: 11 samples above the 1000 µs histogram: percentiles above 1000 µs are bounds (≥1000); the max (3000 µs) is cyclictest's own",
            ]
        );
        assert_eq!(
            judge_with(Some("{not json"), Some(0), 1)[0],
            "cyclictest's JSON results are unreadable: key must be a string at line 1 column 2"
        );
    }

    /// The one judge's rules as `test` meets them: a cyclictest output without a maximum is
    /// unknown (INVALID, as `report` says of it); a scenario of other tests only has no maximum
    /// to know; a scenario failed by its kernel log and invalid at once is INVALID.
    #[test]
    fn an_unknown_maximum_is_invalid_and_invalid_beats_fail() {
        let measured =
            ScenarioRecord { files: vec!["raw/idle.json".into()], ..ScenarioRecord::default() };
        assert_eq!(findings(&[measured], 100).verdict(), crate::formats::verdict::Verdict::Invalid);
        let others_only = ScenarioRecord::default();
        assert_eq!(findings(&[others_only], 100).verdict(), crate::formats::verdict::Verdict::Pass);
        let both = ScenarioRecord {
            fail_reasons: vec!["BUG: scheduling while atomic".into()],
            ..scenario(40, &["thread 0 completed 30 of 3000 expected cycles"])
        };
        assert_eq!(findings(&[both], 100).verdict(), crate::formats::verdict::Verdict::Invalid);
        assert_eq!(
            findings(&[scenario(100, &[])], 100).verdict(),
            crate::formats::verdict::Verdict::Pass
        );
        assert_eq!(
            findings(&[scenario(101, &[])], 100).verdict(),
            crate::formats::verdict::Verdict::Fail
        );
    }
}
