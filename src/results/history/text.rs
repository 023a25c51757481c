//! The terminal views: `history list` (a run a line), `history show` (each run with its
//! per-CPU rows) and `history compare`. Text from the database is shown with control
//! characters escaped.

use super::compare::short;
use super::regression::number;
use crate::formats::history_json::{Comparison, HistoryRun};
use crate::formats::report_json::Verdict;
use crate::text::escape_controls as clean;
use crate::text::iso_from_epoch;
use crate::text::table::table;

fn or_dash(value: Option<&str>) -> String {
    value.map_or_else(|| "-".to_string(), clean)
}

fn started(run: &HistoryRun) -> String {
    run.started_unix.map_or_else(|| "-".to_string(), iso_from_epoch)
}

fn us(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), number)
}

/// A run a line, oldest first.
pub(crate) fn list(runs: &[HistoryRun]) -> String {
    if runs.is_empty() {
        return "no runs recorded".to_string();
    }
    let header = ["run", "started", "machine", "kernel", "bundle", "verdict", "worst max µs"]
        .map(str::to_string);
    let rows: Vec<[String; 7]> = runs
        .iter()
        .map(|run| {
            let worst = run
                .results
                .iter()
                .filter(|r| r.valid)
                .filter_map(|r| r.max_us)
                .fold(None, |acc: Option<f64>, v| Some(acc.map_or(v, |a| a.max(v))));
            [
                clean(short(&run.digest)),
                started(run),
                or_dash(run.machine.as_deref()),
                or_dash(run.kernel_release.as_deref()),
                run.bundle_digest.as_deref().map_or_else(|| "-".to_string(), |d| clean(short(d))),
                run.verdict.to_string(),
                // An invalid run's figures are not comparable: not shown as a worst case.
                if run.valid { us(worst) } else { "-".to_string() },
            ]
        })
        .collect();
    table(&header, &rows)
}

/// Each run with its identity and per-CPU figures.
pub(crate) fn show(runs: &[HistoryRun]) -> String {
    if runs.is_empty() {
        return "no runs recorded".to_string();
    }
    let mut out = Vec::new();
    for run in runs {
        let mut lines = vec![format!("run {}  {}", clean(&run.digest), run.verdict)];
        let mut fact = |name: &str, value: Option<&str>| {
            if let Some(value) = value {
                lines.push(format!("  {name:<20} {}", clean(value)));
            }
        };
        fact("source", Some(&run.source));
        fact("machine", run.machine.as_deref());
        fact("target", run.target.as_deref());
        fact("started", run.started_unix.map(iso_from_epoch).as_deref());
        fact("duration", run.duration_s.map(|d| format!("{d:.0} s")).as_deref());
        fact("kernel release", run.kernel_release.as_deref());
        fact("kernel version", run.kernel_version.as_deref());
        fact("kernel config", run.kernel_config_digest.as_deref());
        fact("lock", run.lock_digest.as_deref());
        fact("bundle", run.bundle_digest.as_deref());
        fact("tuning", run.tuning_fingerprint.as_deref());
        fact("boot args", run.inputs.boot_args.as_deref());
        fact("threshold", Some(&format!("{} µs", number(run.threshold_us))));
        for reason in &run.reasons {
            lines.push(format!("  reason: {}", clean(reason)));
        }
        let header = [
            "scenario",
            "test",
            "cpu",
            "samples",
            "min",
            "avg",
            "p99",
            "p99.9",
            "max",
            "overflows",
            "verdict",
        ]
        .map(str::to_string);
        let rows: Vec<[String; 11]> = run
            .results
            .iter()
            .map(|r| {
                [
                    clean(&r.scenario),
                    clean(&r.test),
                    r.cpu.map_or_else(|| "-".to_string(), |c| c.to_string()),
                    r.samples.map_or_else(|| "-".to_string(), |s| s.to_string()),
                    us(r.min_us),
                    us(r.avg_us),
                    us(r.p99_us),
                    us(r.p999_us),
                    us(r.max_us),
                    r.overflows.map_or_else(|| "-".to_string(), |s| s.to_string()),
                    // A row that cannot be trusted shows INVALID whatever its own word.
                    if r.valid { r.verdict.to_string() } else { Verdict::Invalid.to_string() },
                ]
            })
            .collect();
        lines.extend(table(&header, &rows).lines().map(|l| format!("  {l}")));
        out.push(lines.join("\n"));
    }
    out.join("\n\n")
}

/// The comparison: per scenario and CPU, then the inputs that differ.
pub(crate) fn compare(c: &Comparison) -> String {
    let mut out = vec![
        format!("A: {} ({})", clean(&c.a.selected), crate::text::counted(c.a.runs.len(), "run")),
        format!("B: {} ({})", clean(&c.b.selected), crate::text::counted(c.b.runs.len(), "run")),
    ];
    for (name, side) in [("A", &c.a), ("B", &c.b)] {
        for digest in &side.invalid_runs {
            out.push(format!("{name}: run {} is invalid and left out", clean(short(digest))));
        }
    }
    let pct = |p: Option<f64>| p.map_or_else(|| "-".to_string(), |p| format!("{p:+.1} %"));
    if c.rows.is_empty() {
        out.push("no scenario was measured validly on both sides".to_string());
    } else {
        let header = [
            "machine", "scenario", "test", "cpu", "max A", "max B", "Δ max", "p99.9 A", "p99.9 B",
            "Δ p99.9",
        ]
        .map(str::to_string);
        let rows: Vec<[String; 10]> = c
            .rows
            .iter()
            .map(|r| {
                [
                    or_dash(r.machine.as_deref()),
                    clean(&r.scenario),
                    clean(&r.test),
                    r.cpu.map_or_else(|| "-".to_string(), |c| c.to_string()),
                    us(r.a_max_us),
                    us(r.b_max_us),
                    pct(r.max_change_pct),
                    us(r.a_p999_us),
                    us(r.b_p999_us),
                    pct(r.p999_change_pct),
                ]
            })
            .collect();
        out.push(String::new());
        out.push(table(&header, &rows));
    }
    out.push(String::new());
    if c.changed_inputs.is_empty() {
        out.push("inputs: no recorded difference".to_string());
    } else {
        out.push("inputs that differ:".to_string());
        for change in &c.changed_inputs {
            out.push(format!(
                "  {}: {} → {}",
                clean(&change.input),
                or_dash(change.a.as_deref()),
                or_dash(change.b.as_deref())
            ));
        }
    }
    out.join("\n")
}
