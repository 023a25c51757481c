use std::collections::BTreeSet;

use crate::formats::history_json::{HistoryResult, HistoryRun};
use crate::formats::verdict::{TestVerdict, Verdict};
use crate::results::history::location::Location;
use crate::results::history::store::{Filter, Store};

/// A row: scenario, test, CPU, max, p99.9, valid.
fn row(scenario: &str, test: &str, cpu: u32, max: f64, p999: f64, valid: bool) -> HistoryResult {
    HistoryResult {
        scenario: scenario.to_string(),
        test: test.to_string(),
        cpu: Some(cpu),
        max_us: Some(max),
        p999_us: Some(p999),
        valid,
        verdict: TestVerdict::Judged(Verdict::Pass),
        ..HistoryResult::default()
    }
}

fn run(
    digest: &str,
    machine: &str,
    started: Option<i64>,
    threshold_us: f64,
    valid: bool,
    results: Vec<HistoryResult>,
) -> HistoryRun {
    HistoryRun {
        digest: digest.to_string(),
        source: format!("/lab/{digest}"),
        kind: "result-folder".to_string(),
        added_unix: 50,
        machine: Some(machine.to_string()),
        started_unix: started,
        threshold_us,
        valid,
        verdict: if valid { Verdict::Pass } else { Verdict::Invalid },
        results,
        ..HistoryRun::default()
    }
}

/// Board rk (threshold 100 µs) with three series, idle cyclictest (A), idle oslat (B) and stress
/// cyclictest (C); board b2 (threshold 1000 µs) with one series, idle cyclictest, of nine runs.
/// `--regression-pct 20`. Each run's baseline and verdict is worked out beside it.
fn history() -> Vec<HistoryRun> {
    let a = |cpu, max, p999| row("idle", "cyclictest", cpu, max, p999, true);
    let b = |max, p999| row("idle", "oslat", 0, max, p999, true);
    let c = |max| row("stress", "cyclictest", 0, max, 40.0, true);
    let rk = |digest: &str, started, valid, results| {
        run(digest, "rk", Some(started), 100.0, valid, results)
    };
    let one = |max| vec![row("idle", "cyclictest", 0, max, 1.0, true)];
    let b2 = |digest: &str, started, max| run(digest, "b2", started, 1000.0, true, one(max));
    vec![
        // No earlier run: nothing to compare.
        rk("r1", 100, true, vec![a(0, 10.0, 5.0), a(1, 20.0, 8.0), b(30.0, 10.0), c(95.0)]),
        // A CPU 0: 13 against r1's 10, over +20 % (12): REGRESSION. B, C the same as r1.
        rk("r2", 200, true, vec![a(0, 13.0, 5.0), a(1, 20.0, 8.0), b(30.0, 10.0), c(95.0)]),
        // An invalid run: never flagged, never a baseline (were it one, r4's C would not cross).
        rk(
            "r3",
            300,
            false,
            vec![
                row("idle", "cyclictest", 0, 500.0, 5.0, false),
                row("stress", "cyclictest", 0, 500.0, 40.0, false),
            ],
        ),
        // A: baseline r5 (same start: each is the other's), r2, r1. CPU 0 max 13 against the
        // median of 11, 13, 10 = 11 (limit 13.2): no; CPU 1 (r5's row there is invalid, so r2
        // and r1 only) p99.9 10 against 8 (limit 9.6): REGRESSION.
        // B (r2, r1): p99.9 12 against 10 is +20 %, not more: no.
        // C (r2, r1): 101 against 95 is +6 %, but crosses the 100 µs threshold: REGRESSION.
        rk("r4", 400, true, vec![a(0, 13.0, 5.0), a(1, 20.0, 10.0), b(30.0, 12.0), c(101.0)]),
        // A: baseline r4, r2, r1: CPU 0 11 against the median 13: no (its invalid CPU 1 row is
        // not compared).
        rk("r5", 400, true, vec![a(0, 11.0, 5.0), row("idle", "cyclictest", 1, 90.0, 90.0, false)]),
        // A (r5, r4, r2, r1): CPU 0 12 against the median of 10, 11, 13, 13 = 12: no.
        // B (r4, r2, r1): 37 against 30 (limit 36): REGRESSION.
        // C (r4, r2, r1: 101, 95, 95): 102 against 95 crosses the threshold: REGRESSION.
        rk("r6", 500, true, vec![a(0, 12.0, 5.0), b(37.0, 10.0), c(102.0)]),
        // C (r6, r4, r2, r1): the median of 95, 95, 101, 102 is 98: 104 crosses: REGRESSION.
        rk("r7", 600, true, vec![c(104.0)]),
        // C, the newest five (r7, r6, r4, r2, r1): median 101, over the threshold itself, and
        // 105 is within +20 % of it: no.
        rk("r8", 700, true, vec![c(105.0)]),
        // b2: the undated u is every run's baseline (and the oldest: its start counts as 0);
        // its own baseline is the newest five of all (t8, t7, t6, t5, t4: 13, 20, 20, 10, 10,
        // median 13): 16 is over 15.6: REGRESSION.
        b2("u", None, 16.0),
        // t1 (u: 16): 20 over 19.2: REGRESSION. t2 (t1, u: median 18): no.
        b2("t1", Some(1), 20.0),
        b2("t2", Some(2), 20.0),
        // t3 (t2, t1, u: 20), t4 (t3, t2, t1, u: 18), t5 (t4, t3, t2, t1, u: 16): no.
        b2("t3", Some(3), 10.0),
        b2("t4", Some(4), 10.0),
        b2("t5", Some(5), 10.0),
        // t6 (t5, t4, t3, t2, t1: 10): REGRESSION; t7 (t6 … t2: 10): REGRESSION.
        b2("t6", Some(6), 20.0),
        b2("t7", Some(7), 20.0),
        // t8 (t7 … t3: 20, 20, 10, 10, 10, median 10): 13 over 12: REGRESSION. (Against all
        // eight earlier runs the median would be 18: only the newest five count.)
        b2("t8", Some(8), 13.0),
    ]
}

fn expected() -> BTreeSet<(String, String, String)> {
    [
        ("r2", "idle", "cyclictest"),
        ("r4", "idle", "cyclictest"),
        ("r4", "stress", "cyclictest"),
        ("r6", "idle", "oslat"),
        ("r6", "stress", "cyclictest"),
        ("r7", "stress", "cyclictest"),
        ("u", "idle", "cyclictest"),
        ("t1", "idle", "cyclictest"),
        ("t6", "idle", "cyclictest"),
        ("t7", "idle", "cyclictest"),
        ("t8", "idle", "cyclictest"),
    ]
    .into_iter()
    .map(|(run, scenario, test)| (run.to_string(), scenario.to_string(), test.to_string()))
    .collect()
}

fn flagged(trend: &super::Trend) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for (run, cells) in trend.runs.iter().zip(&trend.cells) {
        for cell in cells.iter().filter(|c| c.regression) {
            out.insert((run.digest.clone(), cell.scenario.clone(), cell.test.clone()));
        }
    }
    out
}

/// Issue 37 part 2: the trend page's own "did this series regress" pass flags exactly the runs
/// and series worked out by hand: ties in start time, a run of unknown start, a CPU a baseline
/// run lacks or has only an invalid row of, an invalid run, the threshold crossed within
/// +20 %, exactly +20 % (no regression), and only the newest five runs in a baseline. Through
/// the database (rows read a few runs a query) and from runs at hand.
#[test]
fn the_trend_flags_exactly_the_hand_worked_regressions_of_each_series() {
    let history = history();
    assert_eq!(flagged(&super::from_runs(&history, 20.0)), expected());
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(
        &Location::Sqlite(dir.path().join("h.sqlite")),
        crate::results::history::DEFAULT_WAIT,
    )
    .unwrap();
    for run in &history {
        store.add(run).unwrap();
    }
    let trend = super::read(&mut store, &Filter::default(), 20.0).unwrap();
    assert_eq!(flagged(&trend), expected());
    assert!(trend.runs.iter().all(|r| r.results.is_empty()), "no result rows held");
    // One board alone: its own flags.
    let rk = Filter { machine: Some("rk".into()), ..Filter::default() };
    let trend = super::read(&mut store, &rk, 20.0).unwrap();
    let mut want = expected();
    want.retain(|(run, _, _)| run.starts_with('r'));
    assert_eq!(flagged(&trend), want);
}
