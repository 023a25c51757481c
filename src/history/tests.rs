//! Regression verdicts on hand-made runs (every figure stated here), and the store on an
//! SQLite file.

use crate::formats::history_json::{HistoryResult, HistoryRun};

use super::regression::check;

fn run(digest: &str, started: i64, max: f64, p999: f64, valid: bool) -> HistoryRun {
    HistoryRun {
        digest: digest.to_string(),
        machine: Some("rb3gen2-core-kit".to_string()),
        started_unix: Some(started),
        threshold_us: 100.0,
        valid,
        verdict: if valid { "PASS" } else { "INVALID" }.to_string(),
        results: vec![HistoryResult {
            scenario: "stress".to_string(),
            test: "cyclictest".to_string(),
            cpu: Some(7),
            max_us: Some(max),
            p999_us: Some(p999),
            valid,
            verdict: "PASS".to_string(),
            ..HistoryResult::default()
        }],
        ..HistoryRun::default()
    }
}

#[test]
fn the_baseline_is_the_median_of_the_valid_earlier_runs() {
    // Baselines 40, 50, 60 µs max (median 50) and a far worse invalid run.
    let history = vec![
        run("a1", 1, 40.0, 20.0, true),
        run("a2", 2, 60.0, 20.0, true),
        run("a3", 3, 50.0, 20.0, true),
        run("bad", 4, 99.0, 90.0, false),
    ];
    // 59 µs is +18 %: within 20 %.
    let ok = check(&run("new", 5, 59.0, 20.0, true), &history, 20.0);
    assert_eq!(ok.verdict, "PASS", "{ok:?}");
    assert_eq!(ok.baseline_runs, ["a3", "a2", "a1"]);
    // 61 µs is +22 %.
    let worse = check(&run("new", 5, 61.0, 20.0, true), &history, 20.0);
    assert_eq!(worse.verdict, "REGRESSION");
    assert_eq!(worse.findings.len(), 1);
    let finding = &worse.findings[0];
    assert_eq!(
        (finding.metric.as_str(), finding.baseline_us, finding.current_us),
        ("max", 50.0, 61.0)
    );
    assert!(!finding.crosses_threshold);
    // A later run is no baseline for an earlier one.
    let early = check(&run("early", 0, 61.0, 20.0, true), &history, 20.0);
    assert_eq!((early.verdict.as_str(), early.baseline_runs.len()), ("PASS", 0));
    assert!(
        super::regression::render(&early)
            .starts_with("PASS run early (rb3gen2-core-kit): no earlier valid run")
    );
}

/// `history add --check` never prints PASS for a run recorded as FAIL: with or without a
/// baseline, and within the percentage, the check says the run's own FAIL.
#[test]
fn a_failed_run_is_never_a_passed_check() {
    let mut failed = run("new", 5, 150.0, 120.0, true);
    failed.verdict = "FAIL".to_string();
    let alone = check(&failed, &[], 20.0);
    assert_eq!(alone.verdict, "FAIL");
    assert!(super::regression::render(&alone).starts_with("FAIL run new"), "{alone:?}");
    let history = vec![run("a1", 1, 145.0, 118.0, true)];
    let compared = check(&failed, &history, 20.0);
    assert_eq!(compared.verdict, "FAIL");
    let text = super::regression::render(&compared);
    assert!(
        text.starts_with("FAIL run new (rb3gen2-core-kit): within +20 % of 1 baseline run(s), but over its 100 µs threshold"),
        "{text}"
    );
    assert!(!text.contains("PASS"), "{text}");
}

#[test]
fn crossing_the_threshold_is_a_regression_even_within_the_percentage() {
    let history = vec![run("a1", 1, 95.0, 90.0, true)];
    // p99.9 90 → 101 µs is +12 %, but over the 100 µs threshold.
    let crossed = check(&run("new", 2, 96.0, 101.0, true), &history, 20.0);
    assert_eq!(crossed.verdict, "REGRESSION");
    assert_eq!(crossed.findings[0].metric, "p99.9");
    assert!(crossed.findings[0].crosses_threshold);
    let text = super::regression::render(&crossed);
    assert!(
        text.starts_with("REGRESSION rb3gen2-core-kit stress cyclictest CPU 7: p99.9 101 µs, baseline 90 µs (+12.2 %: crosses the 100 µs threshold); baseline runs a1\n"),
        "{text}"
    );
}

#[test]
fn an_invalid_run_is_not_compared() {
    let history = vec![run("a1", 1, 10.0, 5.0, true)];
    let invalid = check(&run("new", 2, 500.0, 400.0, false), &history, 20.0);
    assert_eq!(invalid.verdict, "INVALID");
    assert!(invalid.findings.is_empty());
}

#[test]
fn the_sqlite_store_keeps_every_field_and_each_digest_once() {
    let dir = tempfile::tempdir().unwrap();
    let location = super::location::Location::Sqlite(dir.path().join("sub/h.sqlite"));
    let mut store = super::store::Store::open(&location).unwrap();
    let mut first = run("d1", 10, 40.0, 20.0, true);
    first.kernel_release = Some("6.6.52-rt43".to_string());
    first.inputs.tuning = vec!["isolated 7".to_string()];
    first.reasons = vec!["a reason".to_string()];
    assert!(store.add(&first).unwrap());
    assert!(!store.add(&first).unwrap(), "the same digest again");
    assert!(store.add(&run("d2", 20, 41.0, 20.0, false)).unwrap());
    assert_eq!(store.counts().unwrap(), (2, 2));
    let runs = store.runs(&super::store::Filter::default()).unwrap();
    assert_eq!(runs[0], first);
    assert!(!runs[1].valid && !runs[1].results[0].valid);
    let since = super::store::Filter { since_unix: Some(15), ..Default::default() };
    assert_eq!(store.runs(&since).unwrap().len(), 1);
}
