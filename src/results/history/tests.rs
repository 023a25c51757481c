//! Regression verdicts on hand-made runs (every figure stated here), and the store on an
//! SQLite file.

use crate::formats::history_json::{HistoryResult, HistoryRun};
use crate::formats::report_json::Verdict;

use super::regression::check;

fn run(digest: &str, started: i64, max: f64, p999: f64, valid: bool) -> HistoryRun {
    HistoryRun {
        digest: digest.to_string(),
        machine: Some("rb3gen2-core-kit".to_string()),
        started_unix: Some(started),
        threshold_us: 100.0,
        valid,
        verdict: if valid { Verdict::Pass } else { Verdict::Invalid },
        results: vec![HistoryResult {
            scenario: "stress".to_string(),
            test: "cyclictest".to_string(),
            cpu: Some(7),
            max_us: Some(max),
            p999_us: Some(p999),
            valid,
            verdict: Verdict::Pass.into(),
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
    failed.verdict = Verdict::Fail;
    let alone = check(&failed, &[], 20.0);
    assert_eq!(alone.verdict, "FAIL");
    assert!(super::regression::render(&alone).starts_with("FAIL run new"), "{alone:?}");
    let history = vec![run("a1", 1, 145.0, 118.0, true)];
    let compared = check(&failed, &history, 20.0);
    assert_eq!(compared.verdict, "FAIL");
    let text = super::regression::render(&compared);
    assert!(
        text.starts_with("FAIL run new (rb3gen2-core-kit): within +20 % of 1 baseline run, but over its 100 µs threshold"),
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
    let mut store = super::store::Store::open(&location, super::DEFAULT_WAIT).unwrap();
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

/// A run of `machine` at `started` (or unknown) with one row per (scenario, test) of `pairs`,
/// each on CPUs 1 and 2.
fn run_of(machine: &str, digest: &str, started: Option<i64>, max: f64, valid: bool) -> HistoryRun {
    let mut results = Vec::new();
    for scenario in ["idle", "stress"] {
        for cpu in [1, 2] {
            results.push(HistoryResult {
                scenario: scenario.to_string(),
                test: "cyclictest".to_string(),
                cpu: Some(cpu),
                max_us: Some(max + f64::from(cpu)),
                p999_us: Some(max / 2.0),
                valid,
                verdict: Verdict::Pass.into(),
                ..HistoryResult::default()
            });
        }
    }
    HistoryRun {
        digest: digest.to_string(),
        machine: Some(machine.to_string()),
        started_unix: started,
        threshold_us: 100.0,
        valid,
        verdict: if valid { Verdict::Pass } else { Verdict::Invalid },
        results,
        ..HistoryRun::default()
    }
}

#[test]
fn the_store_finds_a_baseline_a_digest_prefix_a_bundle_and_a_release_by_query() {
    let dir = tempfile::tempdir().unwrap();
    let location = super::location::Location::Sqlite(dir.path().join("h.sqlite"));
    let mut store = super::store::Store::open(&location, super::DEFAULT_WAIT).unwrap();
    // Eight valid runs of rb3 at 10..80, one invalid at 85, one of another machine, one undated.
    for n in 1..=8 {
        let mut run = run_of("rb3", &format!("a{n}00"), Some(n * 10), 40.0, true);
        run.bundle_digest = Some(if n <= 4 { "b0ff00" } else { "b10000" }.to_string());
        run.kernel_release = Some(format!("6.18.{}-rt", n % 2));
        assert!(store.add(&run).unwrap());
    }
    store.add(&run_of("rb3", "c100", Some(85), 40.0, false)).unwrap();
    store.add(&run_of("iq8275", "c200", Some(50), 40.0, true)).unwrap();
    store.add(&run_of("rb3", "c300", None, 40.0, true)).unwrap();
    let now = run_of("rb3", "d100", Some(55), 40.0, true);
    // Newest first, no later run, no invalid one, no other machine, the undated one last.
    let earlier = store.earlier_valid_runs(&now, 3).unwrap();
    let digests: Vec<&str> = earlier.iter().map(|r| r.digest.as_str()).collect();
    assert_eq!(digests, ["a500", "a400", "a300"]);
    assert_eq!(earlier[0].results.len(), 4, "each run comes with its results");
    let all: Vec<String> =
        store.earlier_valid_runs(&now, 100).unwrap().into_iter().map(|r| r.digest).collect();
    assert_eq!(all, ["a500", "a400", "a300", "a200", "a100", "c300"]);
    // The baseline pages until each pair has five runs: here all six earlier ones are needed.
    let history = super::regression::baseline_history(&mut store, &now).unwrap();
    assert_eq!(history.len(), 6);
    let check = check(&now, &history, 20.0);
    assert_eq!(check.baseline_runs, ["a500", "a400", "a300", "a200", "a100"]);

    use super::compare::Lookup;
    let prefix = |store: &mut super::store::Store, p: &str| -> Vec<String> {
        store.by_digest_prefix(p).unwrap().into_iter().map(|r| r.digest).collect()
    };
    assert_eq!(prefix(&mut store, "a3"), ["a300"]);
    assert_eq!(prefix(&mut store, "a"), ["a100", "a200"], "two are enough to be ambiguous");
    assert_eq!(prefix(&mut store, "c3"), ["c300"]);
    assert!(prefix(&mut store, "e").is_empty());
    let bundle = |store: &mut super::store::Store, p: &str| -> usize {
        store.by_bundle_prefix(p).unwrap().runs.len()
    };
    // "b0ff" must not reach "b10000": the range ends at "b1", not at "b0fg".
    assert_eq!(bundle(&mut store, "b0ff"), 4);
    assert_eq!(bundle(&mut store, "b1"), 4);
    assert_eq!(bundle(&mut store, "b"), 8);
    assert_eq!(store.by_release("6.18.1-rt").unwrap().runs.len(), 4);
    assert_eq!(store.by_digest("c200").unwrap().unwrap().machine.as_deref(), Some("iq8275"));
    assert!(store.by_digest("c2").unwrap().is_none());
}

/// A bundle's or a kernel release's side is counted by the database (one row per machine,
/// scenario, test and CPU), never by reading every result row: the figures are the highest of
/// the valid rows of valid runs, an invalid run's or row's higher figure left out, a missing
/// p99.9 left unknown; the runs come without their results.
#[test]
fn a_release_side_has_its_worst_figures_counted_by_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let location = super::location::Location::Sqlite(dir.path().join("h.sqlite"));
    let mut store = super::store::Store::open(&location, super::DEFAULT_WAIT).unwrap();
    let release = |mut run: HistoryRun| {
        run.kernel_release = Some("6.18.7-rt".to_string());
        run.bundle_digest = Some("abcdef0123".to_string());
        run
    };
    // rb3 at 40 and 60 (rows: cpu 1 = max + 1, cpu 2 = max + 2, p99.9 = max / 2, per scenario).
    store.add(&release(run_of("rb3", "a1", Some(10), 40.0, true))).unwrap();
    store.add(&release(run_of("rb3", "a2", Some(20), 60.0, true))).unwrap();
    // An invalid run at 900: left out.
    store.add(&release(run_of("rb3", "a3", Some(30), 900.0, false))).unwrap();
    // iq8275 at 30, with an invalid row of 500 on cpu 1 of `idle` and no p99.9 on cpu 2.
    let mut odd = release(run_of("iq8275", "a4", Some(40), 30.0, true));
    odd.results[0].max_us = Some(500.0);
    odd.results[0].valid = false;
    odd.results[1].p999_us = None;
    store.add(&odd).unwrap();
    // Another release: not counted.
    store.add(&run_of("rb3", "a5", Some(50), 700.0, true)).unwrap();

    use super::compare::Lookup;
    for selection in
        [store.by_release("6.18.7-rt").unwrap(), store.by_bundle_prefix("abcdef").unwrap()]
    {
        assert_eq!(selection.runs.len(), 4);
        assert!(selection.runs.iter().all(|r| r.results.is_empty()), "headers only");
        let key = |m: &str, scenario: &str, cpu: u32| {
            (Some(m.to_string()), scenario.to_string(), "cyclictest".to_string(), Some(cpu))
        };
        let want: std::collections::BTreeMap<_, _> = [
            (key("rb3", "idle", 1), (Some(61.0), Some(30.0))),
            (key("rb3", "idle", 2), (Some(62.0), Some(30.0))),
            (key("rb3", "stress", 1), (Some(61.0), Some(30.0))),
            (key("rb3", "stress", 2), (Some(62.0), Some(30.0))),
            (key("iq8275", "idle", 2), (Some(32.0), None)),
            (key("iq8275", "stress", 1), (Some(31.0), Some(15.0))),
            (key("iq8275", "stress", 2), (Some(32.0), Some(15.0))),
        ]
        .into_iter()
        .collect();
        assert_eq!(selection.worst, want);
    }
}

#[test]
fn a_long_trend_is_thinned_but_keeps_every_regression_and_invalid_run() {
    // 1,000 daily runs at 40 µs; a regression (80 µs) on days 300 and 700, invalid runs on
    // days 100, 500 and 900.
    let runs: Vec<HistoryRun> = (0..1000)
        .map(|day| {
            let max = if day == 300 || day == 700 { 80.0 } else { 40.0 };
            let valid = ![100, 500, 900].contains(&day);
            run_of("rb3", &format!("{day:04}ffff"), Some(day * 86_400), max, valid)
        })
        .collect();
    let page = super::trend::render(&runs, 20.0).unwrap();
    // Two series (idle, stress), each with its note and both regressions ringed and listed.
    assert_eq!(page.matches("<p class=\"key\">1000 runs, ").count(), 2, "{}", &page[..2000]);
    for day in [300, 700] {
        let row = format!("<code>{day:04}ffff</code>");
        assert_eq!(page.matches(&row).count(), 2, "day {day} listed in both tables");
    }
    assert_eq!(page.matches("<circle class=\"regression\"").count(), 4);
    for day in [100, 500, 900] {
        assert_eq!(page.matches(&format!("<code>{day:04}ffff</code>")).count(), 2);
    }
    assert_eq!(page.matches("class=\"invalid\"").count(), 3 * 2 * 2, "max and p99.9 crosses");
    // Each table: 2 regressions, 3 invalid runs and the 10 newest runs.
    assert_eq!(page.matches("<tr id=").count(), 2 * (2 + 3 + 10));
    // One valid point per slice (250), the regressions and the 10 newest, some of them the same.
    let drawn = page.matches("<circle class=\"dmax\"").count();
    assert!((2 * 250..=2 * (250 + 2 + 10)).contains(&drawn), "{drawn} points drawn");
}

/// A noisy lab flags most runs: days 3 and 7 of every eight are regressions (the figure more
/// than doubles), and every 50th day is invalid. The thinned page still shows a ringed point in
/// every time slice that holds a regression and a cross in every one that holds an invalid run;
/// a point's title counts the regressions it stands for; and the page stays small, its table
/// listing the 10 newest runs and the newest 40 regressions and invalid runs.
#[test]
fn a_trend_where_most_runs_are_regressions_stays_small_and_shows_each_slice() {
    // 2001 days: a span of 2000 days in 250 slices of exactly 8 days (the last also holds day
    // 2000), so each slice holds two regressions (days ≡ 3 and 7 mod 8; no invalid day is one).
    let regression = |day: i64| day % 4 == 3;
    let invalid = |day: i64| day % 50 == 0;
    let runs: Vec<HistoryRun> = (0..2001)
        .map(|day| {
            let max = if regression(day) { 90.0 } else { 40.0 };
            run_of("rb3", &format!("{day:04}eeee"), Some(day * 86_400), max, !invalid(day))
        })
        .collect();
    let page = super::trend::render(&runs, 20.0).unwrap();
    assert!(page.len() < 400_000, "{} bytes for two series of 2001 runs", page.len());
    // Per series: one ringed point per slice, standing for the slice's other regression, except
    // in the last two slices where the newest runs are drawn anyway (days 1991 and 1999 are
    // regressions among the 10 newest, each ringed on its own).
    assert_eq!(page.matches("<circle class=\"regression\"").count(), 2 * (250 + 2));
    assert_eq!(page.matches("; 1 more regression in this slice").count(), 2 * 248);
    // 41 invalid days (0, 50, … 2000), each in a slice of its own, each drawn.
    let invalid_days = (0..2001).filter(|d| invalid(*d)).count();
    assert_eq!(invalid_days, 41);
    assert_eq!(page.matches("class=\"invalid\"").count(), 2 * 41 * 2, "max and p99.9 crosses");
    // The key counts every regression and invalid run of the series, not only those drawn.
    let regressions = (0..2001).filter(|d| regression(*d)).count();
    assert!(page.contains(&format!("<span>{regressions} regressions</span>")), "{regressions}");
    assert!(page.contains("<span>41 invalid runs</span>"));
    // Each table: the 40 newest drawn regressions and invalid runs, and the 10 newest runs.
    let rows = page.matches("<tr id=").count();
    assert!((2 * 40..=2 * 50).contains(&rows), "{rows} rows");
    assert!(page.contains("<code>2000eeee</code>"), "the newest run is listed");
    assert!(!page.contains("<code>0003eeee</code>"), "an old regression is drawn, not listed");
    assert!(page.contains("0003eeee"), "… but it is drawn");
}

#[test]
fn the_trend_regressions_are_those_each_run_gets_against_all_runs_of_its_machine() {
    // Ties in start time, undated runs, invalid runs and two machines: the one-pass window must
    // give each run the verdict `check` gives it against every run of its machine.
    let mut runs = Vec::new();
    for n in 0..60i64 {
        let started = match n % 7 {
            0 => None,
            3 => Some((n / 2) * 10),
            _ => Some(n * 10 / 3),
        };
        let max = 30.0 + ((n * 37) % 23) as f64 * if n % 11 == 0 { 3.0 } else { 1.0 };
        let machine = if n % 5 == 0 { "iq8275" } else { "rb3" };
        runs.push(run_of(machine, &format!("{:04x}", n * 2654 % 65536), started, max, n % 13 != 4));
    }
    let page = super::trend::render(&runs, 10.0).unwrap();
    for run in runs.iter().filter(|r| r.valid) {
        let mine: Vec<&HistoryRun> = runs.iter().filter(|h| h.machine == run.machine).collect();
        let expected = check(run, mine, 10.0);
        for scenario in ["idle", "stress"] {
            let flagged = expected.findings.iter().any(|f| f.scenario == scenario);
            let row = page
                .split("<tr id=")
                .find(|row| {
                    row.contains(&format!("<code>{}</code>", run.digest))
                        && row.starts_with(&format!(
                            "\"s{}-",
                            ["idle", "stress"].iter().position(|s| *s == scenario).unwrap()
                                + if run.machine.as_deref() == Some("rb3") { 2 } else { 0 }
                        ))
                })
                .unwrap_or_else(|| panic!("row of {} {scenario}", run.digest));
            assert_eq!(row.contains("REGRESSION"), flagged, "{} {scenario}: {row}", run.digest);
        }
    }
    assert!(page.contains("REGRESSION"), "the data has regressions to find");
}

/// Issue 36 item 4: runs that name no board (no --machine, --board nor devicetree model) may be
/// of two different boards, so none is another's baseline, in the check, the store's baseline
/// query and the trend page, and none is called "unknown machine".
#[test]
fn runs_that_name_no_board_are_never_each_others_baseline() {
    let unnamed = |digest: &str, started: i64, max: f64| HistoryRun {
        machine: None,
        ..run(digest, started, max, 20.0, true)
    };
    let history = vec![unnamed("a1", 1, 10.0), unnamed("a2", 2, 10.0), unnamed("a3", 3, 10.0)];
    // 90 µs is +800 % over the others: compared, it would be a regression.
    let new = unnamed("new", 5, 90.0);
    let checked = check(&new, &history, 20.0);
    assert_eq!((checked.verdict.as_str(), checked.baseline_runs.len()), ("PASS", 0));
    assert!(checked.findings.is_empty(), "{checked:?}");
    let text = super::regression::render(&checked);
    assert!(
        text.starts_with("PASS run new (unnamed board): not compared, runs that name no board"),
        "{text}"
    );
    assert!(text.contains("--board NAME"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let location = super::location::Location::Sqlite(dir.path().join("h.sqlite"));
    let mut store = super::store::Store::open(&location, super::DEFAULT_WAIT).unwrap();
    for h in &history {
        store.add(h).unwrap();
    }
    assert!(store.earlier_valid_runs(&new, 10).unwrap().is_empty());

    // Named runs of one board still are each other's baseline.
    let named = |digest: &str, started: i64, max: f64| HistoryRun {
        machine: Some("rk3588-evb".into()),
        ..unnamed(digest, started, max)
    };
    let history = [named("b1", 1, 10.0), named("b2", 2, 10.0), named("b3", 3, 10.0)];
    let checked = check(&named("new", 5, 90.0), &history, 20.0);
    assert_eq!(checked.verdict, "REGRESSION", "{checked:?}");

    let mut all = vec![unnamed("a1", 1, 10.0), unnamed("a2", 2, 10.0), new];
    all.extend(history);
    let page = super::trend::render(&all, 20.0).unwrap();
    assert!(!page.contains("unknown machine"), "the trend page names no unknown machine");
    assert!(page.contains("unnamed board (run a1)") && page.contains("unnamed board (run new)"));
    assert!(page.contains("rk3588-evb"));
}

/// Issue 37 part 2: a small history whose every figure and verdict is worked out here by hand
/// (board rb3, threshold 100 µs, `--regression-pct 20`), for the trend page's two paths.
fn trend_history() -> Vec<HistoryRun> {
    let row = |scenario: &str, cpu: u32, max: f64, p999: Option<f64>, valid: bool| HistoryResult {
        scenario: scenario.to_string(),
        test: "cyclictest".to_string(),
        cpu: Some(cpu),
        max_us: Some(max),
        p999_us: p999,
        valid,
        verdict: Verdict::Pass.into(),
        ..HistoryResult::default()
    };
    let run = |digest: &str, machine: &str, started: Option<i64>, valid, results| HistoryRun {
        digest: digest.to_string(),
        source: format!("/lab/{digest}"),
        kind: "result-folder".to_string(),
        added_unix: 500,
        machine: Some(machine.to_string()),
        started_unix: started,
        threshold_us: 100.0,
        valid,
        verdict: if valid { Verdict::Pass } else { Verdict::Invalid },
        results,
        ..HistoryRun::default()
    };
    vec![
        // Start unknown: every valid run of rb3 is its baseline (e, d, b, a: c is invalid).
        run(
            "u000",
            "rb3",
            None,
            true,
            vec![
                row("stress", 1, 40.0, Some(20.0), true),
                row("stress", 2, 48.0, Some(24.0), true),
            ],
        ),
        run(
            "a000",
            "rb3",
            Some(1000),
            true,
            vec![
                row("stress", 1, 40.0, Some(20.0), true),
                row("stress", 2, 50.0, Some(25.0), true),
            ],
        ),
        // CPU 2's p99.9 is unknown: so is the run's; the invalid rows are not its worst, and its
        // `memory` series has no valid row at all.
        run(
            "b000",
            "rb3",
            Some(2000),
            true,
            vec![
                row("stress", 1, 42.0, Some(21.0), true),
                row("stress", 2, 44.0, None, true),
                row("stress", 3, 900.0, Some(90.0), false),
                row("memory", 1, 70.0, Some(35.0), false),
            ],
        ),
        // An invalid run: its worst is over all its rows.
        run(
            "c000",
            "rb3",
            Some(3000),
            false,
            vec![
                row("stress", 1, 300.0, Some(30.0), false),
                row("stress", 2, 35.0, Some(28.0), false),
            ],
        ),
        // CPU 1's 60 µs against the median 40 of b, a, u (42, 40, 40): a regression; `idle`
        // has no earlier run.
        run(
            "d000",
            "rb3",
            Some(4000),
            true,
            vec![
                row("stress", 1, 60.0, Some(22.0), true),
                row("stress", 2, 45.0, Some(24.0), true),
                row("idle", 1, 10.0, Some(5.0), true),
            ],
        ),
        // Another board: no baseline of rb3's (were it one, e's idle 11 µs would be over the
        // median 7.5 of 5 and 10).
        run("f000", "iq8275", Some(4500), true, vec![row("idle", 1, 5.0, Some(2.0), true)]),
        // stress CPU 1: 41 against the median 41 of 60, 42, 40, 40; CPU 2: 130 against 46.5
        // (45, 44, 50, 48): a regression. idle: 11 against d's 10, within 20 %.
        run(
            "e000",
            "rb3",
            Some(5000),
            true,
            vec![
                row("stress", 1, 41.0, Some(21.0), true),
                row("stress", 2, 130.0, Some(26.0), true),
                row("idle", 1, 11.0, Some(5.0), true),
            ],
        ),
    ]
}

/// Per run and series of [`trend_history`]: worst max, worst p99.9, regression, valid.
type TrendRow = (String, String, Option<f64>, Option<f64>, bool, bool);

fn trend_rows(trend: &super::trend::Trend) -> Vec<TrendRow> {
    let mut rows: Vec<TrendRow> = trend
        .runs
        .iter()
        .zip(&trend.cells)
        .flat_map(|(run, cells)| {
            cells.iter().map(|c| {
                (
                    run.digest.clone(),
                    c.scenario.clone(),
                    c.max_us,
                    c.p999_us,
                    c.regression,
                    run.valid,
                )
            })
        })
        .collect();
    rows.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    rows
}

fn trend_expected() -> Vec<TrendRow> {
    let row = |digest: &str, scenario: &str, max, p999, regression, valid| {
        (digest.to_string(), scenario.to_string(), max, p999, regression, valid)
    };
    vec![
        row("a000", "stress", Some(50.0), Some(25.0), false, true),
        row("b000", "memory", None, None, false, true),
        row("b000", "stress", Some(44.0), None, false, true),
        row("c000", "stress", Some(300.0), Some(30.0), false, false),
        row("d000", "idle", Some(10.0), Some(5.0), false, true),
        row("d000", "stress", Some(60.0), Some(24.0), true, true),
        row("e000", "idle", Some(11.0), Some(5.0), false, true),
        row("e000", "stress", Some(130.0), Some(26.0), true, true),
        row("f000", "idle", Some(5.0), Some(2.0), false, true),
        row("u000", "stress", Some(48.0), Some(24.0), false, true),
    ]
}

/// The trend page's figures and flags as the database counts them (the worst per run and
/// series by GROUP BY, the checks over valid rows read a few hundred runs at a time) are those
/// worked out by hand, and those of the per-row path over the runs with all their results; the
/// flags are what `check` gives each run against every run of its board. (The same on
/// PostgreSQL: tests/integration/history.rs.)
#[test]
fn the_trend_figures_and_regressions_counted_by_the_database_are_those_of_the_rows() {
    let history = trend_history();
    let dir = tempfile::tempdir().unwrap();
    let location = super::location::Location::Sqlite(dir.path().join("h.sqlite"));
    let mut store = super::store::Store::open(&location, super::DEFAULT_WAIT).unwrap();
    for run in &history {
        store.add(run).unwrap();
    }
    let filter = super::store::Filter::default();
    let from_db = super::trend::read(&mut store, &filter, 20.0).unwrap();
    assert!(from_db.runs.iter().all(|r| r.results.is_empty()), "no result rows held");
    assert_eq!(trend_rows(&from_db), trend_expected());
    assert_eq!(trend_rows(&super::trend::from_runs(&history, 20.0)), trend_expected());
    for run in history.iter().filter(|r| r.valid) {
        let mine: Vec<&HistoryRun> = history.iter().filter(|h| h.machine == run.machine).collect();
        let checked = check(run, mine, 20.0);
        for (digest, scenario, _, _, regression, _) in trend_expected() {
            if digest == run.digest {
                let found = checked.findings.iter().any(|f| f.scenario == scenario);
                assert_eq!(found, regression, "{digest} {scenario}");
            }
        }
    }
    // One board only: the same figures for its runs.
    let filter = super::store::Filter { machine: Some("rb3".into()), ..Default::default() };
    let rb3 = super::trend::read(&mut store, &filter, 20.0).unwrap();
    let mut want = trend_expected();
    want.retain(|row| row.0 != "f000");
    assert_eq!(trend_rows(&rb3), want);
}
