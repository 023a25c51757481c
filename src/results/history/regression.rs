//! `history add --check` and `report --history`: a run against the recent valid runs of the
//! same machine, scenario and test. The baseline of each figure is the median over the newest
//! [`BASELINE_RUNS`] such runs (started before this one); a figure regresses when it exceeds
//! the baseline by more than `regression_pct`, or is over the threshold where the baseline was
//! not. Invalid runs are never part of a baseline, and an invalid run is not compared.
//!
//! The check's verdict is in rtbuild's one vocabulary: INVALID for an invalid run, REGRESSION
//! when a figure regressed, else the run's own verdict (PASS, or FAIL for a run over its
//! threshold: a check never calls a failed run PASS), also when no earlier run could be compared.

use super::HistoryError;
use super::compare::{changed_inputs, figure, short};
use super::store::Store;
use crate::formats::history_json::{Finding, HistoryRun, RegressionCheck};
use crate::formats::judge;
use crate::formats::report_json::Verdict;
use crate::text::escape_controls as clean;

/// How many earlier valid runs form a baseline.
pub(crate) const BASELINE_RUNS: usize = 5;

/// The default `--regression-pct`.
pub(crate) const DEFAULT_PCT: f64 = 20.0;

/// The largest `--regression-pct` taken: a run eleven times its baseline is a regression at any
/// setting, and a larger or non-finite figure would silently pass every run.
pub(crate) const MAX_PCT: f64 = 1000.0;

/// `--regression-pct` as every command takes it (`history add --check`, `history report`,
/// `report --history`): a finite percentage from 0 to [`MAX_PCT`].
pub(crate) fn check_pct(pct: f64) -> Result<f64, HistoryError> {
    if pct.is_finite() && (0.0..=MAX_PCT).contains(&pct) {
        Ok(pct)
    } else {
        // A huge figure in full would be 300 digits: such a one is shown in exponent form.
        let shown = if pct.abs() >= 1e6 { format!("{pct:e}") } else { format!("{pct}") };
        Err(HistoryError::Input(format!(
            "--regression-pct {shown} is not usable; pass a percentage from 0 to {MAX_PCT}, such as 20"
        )))
    }
}

/// The runs a check of `run` needs from `store`: the newest earlier valid runs of its machine,
/// read a page at a time until each of its valid rows has [`BASELINE_RUNS`] of them or none are
/// left, so a long history costs a few pages, not every run the machine ever had.
pub(crate) fn baseline_history(
    store: &mut Store,
    run: &HistoryRun,
) -> Result<Vec<HistoryRun>, HistoryError> {
    let mut limit = 8 * BASELINE_RUNS;
    loop {
        let runs = store.earlier_valid_runs(run, limit)?;
        let enough = run.results.iter().filter(|r| r.valid).all(|row| {
            runs.iter()
                .filter(|h| {
                    h.results
                        .iter()
                        .any(|r| r.valid && r.scenario == row.scenario && r.test == row.test)
                })
                .count()
                >= BASELINE_RUNS
        });
        if enough || runs.len() < limit {
            return Ok(runs);
        }
        limit *= 4;
    }
}

/// What a run that names no board (no `--machine`, `--board` nor devicetree model) is called.
pub(crate) const UNNAMED: &str = "unnamed board";

/// The metrics compared.
const METRICS: [&str; 2] = ["max", "p99.9"];

/// Checks `run` against `history` (which may contain `run` itself; it is skipped).
pub(crate) fn check<'a>(
    run: &HistoryRun,
    history: impl IntoIterator<Item = &'a HistoryRun>,
    pct: f64,
) -> RegressionCheck {
    let mut out = RegressionCheck {
        run: run.digest.clone(),
        machine: run.machine.clone(),
        regression_pct: pct,
        threshold_us: run.threshold_us,
        ..RegressionCheck::default()
    };
    if !run.valid {
        out.verdict = judge::checked(run.verdict, run.valid, false);
        return out;
    }
    let earlier: Vec<&HistoryRun> = history
        .into_iter()
        .filter(|h| {
            // A run that names no board has no baseline: two unnamed runs may be two boards.
            h.digest != run.digest
                && h.valid
                && run.machine.is_some()
                && h.machine == run.machine
                && match (h.started_unix, run.started_unix) {
                    (Some(then), Some(now)) => then <= now,
                    _ => true,
                }
        })
        .collect();
    let mut baseline_runs: Vec<&HistoryRun> = Vec::new();
    // The newest earlier runs that measured a scenario and test validly, found once per pair
    // (a run has a row per CPU of each).
    let mut newest_with: std::collections::HashMap<(&str, &str), Vec<&HistoryRun>> =
        std::collections::HashMap::new();
    // The baseline runs' figures of each pair by CPU and metric, gathered once per pair (a run
    // has a row per CPU: looking them up row by row would read every baseline row again for
    // each of the run's rows).
    type Figures = std::collections::HashMap<(Option<u32>, &'static str), Vec<f64>>;
    let mut figures_of: std::collections::HashMap<(&str, &str), Figures> =
        std::collections::HashMap::new();
    for row in run.results.iter().filter(|r| r.valid) {
        let with: Vec<&HistoryRun> = newest_with
            .entry((&row.scenario, &row.test))
            .or_insert_with(|| {
                let mut with: Vec<&HistoryRun> = earlier
                    .iter()
                    .copied()
                    .filter(|h| {
                        h.results
                            .iter()
                            .any(|r| r.valid && r.scenario == row.scenario && r.test == row.test)
                    })
                    .collect();
                with.sort_by(|a, b| {
                    (b.started_unix.unwrap_or(0), &b.digest)
                        .cmp(&(a.started_unix.unwrap_or(0), &a.digest))
                });
                with.truncate(BASELINE_RUNS);
                with
            })
            .clone();
        for h in &with {
            if !baseline_runs.iter().any(|b| b.digest == h.digest) {
                baseline_runs.push(h);
            }
        }
        let figures = figures_of.entry((&row.scenario, &row.test)).or_insert_with(|| {
            let mut figures = Figures::new();
            let rows = with.iter().flat_map(|h| &h.results);
            for r in rows.filter(|r| r.valid && r.scenario == row.scenario && r.test == row.test) {
                for metric in METRICS {
                    if let Some(value) = figure(r, metric) {
                        figures.entry((r.cpu, metric)).or_default().push(value);
                    }
                }
            }
            figures
        });
        for metric in METRICS {
            let Some(current) = figure(row, metric) else { continue };
            let mut values = figures.get(&(row.cpu, metric)).cloned().unwrap_or_default();
            let Some(baseline) = median(&mut values) else { continue };
            let crosses = current > run.threshold_us && baseline <= run.threshold_us;
            if regressed(current, baseline, pct, run.threshold_us) {
                out.findings.push(Finding {
                    scenario: row.scenario.clone(),
                    test: row.test.clone(),
                    cpu: row.cpu,
                    metric: metric.to_string(),
                    current_us: current,
                    baseline_us: baseline,
                    change_pct: if baseline > 0.0 {
                        (current - baseline) / baseline * 100.0
                    } else {
                        0.0
                    },
                    crosses_threshold: crosses,
                    baseline_runs: with.iter().map(|h| h.digest.clone()).collect(),
                });
            }
        }
    }
    baseline_runs
        .sort_by_key(|h| std::cmp::Reverse((h.started_unix.unwrap_or(0), h.digest.clone())));
    if let Some(newest) = baseline_runs.first() {
        out.changed_inputs = changed_inputs(newest, run, &[]);
    }
    out.baseline_runs = baseline_runs.iter().map(|h| h.digest.clone()).collect();
    out.verdict = judge::checked(run.verdict, run.valid, !out.findings.is_empty());
    out
}

/// Whether a figure regressed against its baseline: more than `pct` % over it, or over the
/// threshold where the baseline was not.
pub(crate) fn regressed(current: f64, baseline: f64, pct: f64, threshold_us: f64) -> bool {
    current > baseline * (1.0 + pct / 100.0) || (current > threshold_us && baseline <= threshold_us)
}

/// The median of `values` (sorted in place); none of none.
pub(crate) fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

/// The check as text: one `REGRESSION` line per finding, naming the baseline runs, then the
/// inputs that changed.
pub(crate) fn render(check: &RegressionCheck) -> String {
    // Names come from result folders and the database: their control characters are escaped,
    // so no name can start a line of its own (a forged `PASS`) or send an escape sequence.
    let machine = clean(check.machine.as_deref().unwrap_or(UNNAMED));
    let run = clean(short(&check.run));
    let mut out = String::new();
    let verdict = check.verdict;
    if verdict == Verdict::Invalid {
        out.push_str(&format!("INVALID run {run} ({machine}): not compared with the history\n"));
    } else if check.machine.is_none() {
        out.push_str(&format!(
            "{verdict} run {run} ({machine}): not compared, runs that name no board are never each other's baseline; name it with `rtbuild test --machine NAME` or `--board NAME`\n"
        ));
    } else if check.baseline_runs.is_empty() {
        out.push_str(&format!(
            "{verdict} run {run} ({machine}): no earlier valid run of this machine, scenario and test to compare with\n"
        ));
    }
    for f in &check.findings {
        let cpu = f.cpu.map_or_else(|| "all CPUs".to_string(), |c| format!("CPU {c}"));
        let runs: Vec<String> = f.baseline_runs.iter().map(|d| clean(short(d))).collect();
        let mut why = Vec::new();
        if f.change_pct > check.regression_pct {
            why.push(format!("more than +{} %", check.regression_pct));
        }
        if f.crosses_threshold {
            why.push(format!("crosses the {} µs threshold", number(check.threshold_us)));
        }
        let why = why.join(", ");
        out.push_str(&format!(
            "REGRESSION {machine} {} {} {cpu}: {} {} µs, baseline {} µs ({:+.1} %: {why}); baseline runs {}\n",
            clean(&f.scenario),
            clean(&f.test),
            clean(&f.metric),
            number(f.current_us),
            number(f.baseline_us),
            f.change_pct,
            runs.join(", "),
        ));
    }
    let compared = !check.baseline_runs.is_empty();
    if compared && matches!(verdict, Verdict::Pass | Verdict::Fail) {
        let over = if verdict == Verdict::Fail {
            format!(", but over its {} µs threshold", number(check.threshold_us))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{verdict} run {run} ({machine}): within +{} % of {}{over}\n",
            check.regression_pct,
            crate::text::counted(check.baseline_runs.len(), "baseline run")
        ));
    }
    if verdict == Verdict::Regression {
        if check.changed_inputs.is_empty() {
            out.push_str("changed inputs: none recorded\n");
        }
        for change in &check.changed_inputs {
            out.push_str(&format!(
                "changed input {}: {} → {}\n",
                clean(&change.input),
                clean(change.a.as_deref().unwrap_or("unknown")),
                clean(change.b.as_deref().unwrap_or("unknown"))
            ));
        }
    }
    out
}

/// `45`, `45.5`: as few digits as the figure needs.
pub(crate) fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value:.1}")
    }
}
