//! The terminal report: verdict first, then the summary (one row per scenario and CPU, as the
//! seed guides tabulate), then one table per scenario with a row per thread and one for all
//! threads, then reasons and notes. Unknown figures print as `-`, percentiles
//! above a histogram limit as `≥limit`.

use std::fmt::Write;

use super::judge::fmt;
use super::summary::{self, SummaryRow};
use crate::formats::report_json::{LatencyReport, ScenarioReport, ThreadReport};
use crate::text::escape_controls;

const HEADER: [&str; 13] = [
    "thread",
    "cpu",
    "samples",
    "min",
    "avg",
    "median",
    "p99",
    "p99.9",
    "p99.99",
    "max",
    "stddev",
    "overflows",
    ">thr",
];

/// The whole report as text for the terminal. Every string in it that came from input (file
/// and scenario names, `run.json` fields, error messages quoting files, trace explanations) is
/// escaped where it is written ([`escape_controls`]: `\n`, `\u{1b}`, `\u{202e}`), so an input
/// can neither forge a line (a `PASS` row) nor drive or reorder the terminal.
pub(crate) fn render(report: &LatencyReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}  threshold {} µs ({}){}",
        report.verdict,
        fmt(report.threshold_us),
        escape_controls(&report.threshold_source),
        report
            .machine
            .as_ref()
            .map_or_else(String::new, |m| format!(", machine {}", escape_controls(m)))
    );
    if !report.summary.is_empty() {
        out.push('\n');
        out.push_str(&summary_table(&report.summary));
    }
    if !report.results.is_empty() {
        out.push_str("\nResults (the Qualcomm guide's table)\n");
        out.push_str(&results_table(&report.results));
    }
    for input in &report.inputs {
        let facts: Vec<(String, String)> = super::system::facts(input)
            .iter()
            .map(|(label, value)| (escape_controls(label), escape_controls(value)))
            .collect();
        if facts.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\nSystem ({})", escape_controls(&input.path));
        let width = facts.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
        for (label, value) in facts {
            let _ = writeln!(out, "  {label:<width$}  {value}");
        }
    }
    for input in &report.inputs {
        for scenario in &input.scenarios {
            out.push('\n');
            scenario_text(&mut out, scenario);
            for spike in report
                .spikes
                .iter()
                .filter(|sp| sp.input == input.path && sp.scenario == scenario.name)
            {
                let _ = writeln!(
                    out,
                    "  spike: {} on CPU {} ({}): {}",
                    spike.latency_us.map_or_else(|| "?".to_string(), |l| format!("{} µs", fmt(l))),
                    spike.cpu.map_or_else(|| "?".to_string(), |c| c.to_string()),
                    escape_controls(&spike.trace_file),
                    escape_controls(&spike.explanation)
                );
            }
        }
    }
    if !report.reasons.is_empty() {
        let _ = writeln!(out, "\n{} because:", report.verdict);
        for reason in &report.reasons {
            let _ = writeln!(out, "  - {}", escape_controls(reason));
        }
    }
    out.trim_end().to_string()
}

/// The summary table: scenario, CPU, samples, min, avg, max, p99.9 (µs); reference rows say
/// where their figures come from.
pub(crate) fn summary_table(rows: &[SummaryRow]) -> String {
    let mut table: Vec<Vec<String>> = vec![
        ["scenario", "cpu", "samples", "min", "avg", "max", "p99.9"]
            .iter()
            .map(|h| h.to_string())
            .collect(),
    ];
    let mut sources = Vec::new();
    for row in rows {
        table.push(vec![
            escape_controls(&row.scenario),
            summary::cpu_cell(row, "-"),
            row.samples.map_or_else(|| "-".to_string(), |n| n.to_string()),
            summary::cell(row.min_us, "-"),
            summary::cell(row.avg_us, "-"),
            summary::cell(row.max_us, "-"),
            summary::p999_cell(row, "-"),
        ]);
        sources.push(
            (row.kind == "reference").then(|| escape_controls(summary::reference_label(row))),
        );
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::from("Summary (latencies in µs)\n");
    for (i, r) in table.iter().enumerate() {
        let mut line = String::new();
        for (c, (cell, w)) in r.iter().zip(&widths).enumerate() {
            line.push_str("  ");
            if c == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(w - cell.chars().count()));
            } else {
                crate::text::table::pad_left(&mut line, cell, *w);
            }
        }
        if let Some(Some(source)) = i.checked_sub(1).map(|i| &sources[i]) {
            line.push_str("  ");
            line.push_str(source);
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// Whether the maximum still rose, per thread: each half's maximum and each power-of-two
/// block's (`cycles 0-1 5, 1-2 7, 2-4 7, …`), or why it is not known. Information, not a
/// verdict.
pub(crate) fn convergence_lines(s: &ScenarioReport) -> Vec<String> {
    let known: Vec<String> = s
        .threads
        .iter()
        .filter_map(|t| {
            let c = t.convergence.as_ref()?;
            let who = match (t.cpu, t.thread) {
                (Some(cpu), _) => format!("CPU{cpu}"),
                (None, Some(i)) => format!("thread {i}"),
                (None, None) => "all".to_string(),
            };
            let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), fmt);
            let rising = if c.still_rising {
                format!(" ({})", crate::formats::report_json::STILL_RISING)
            } else {
                String::new()
            };
            if let Some(snapshots) = c.snapshots {
                return Some(snapshot_line(&who, snapshots, c, &rising));
            }
            let blocks: Vec<String> = c
                .blocks
                .iter()
                .map(|b| format!("{}-{} {}", b.from_cycle, b.to_cycle, cell(b.max_us)))
                .collect();
            Some(format!(
                "convergence {who}: max of the halves {} | {} µs (second half from cycle {}); max per block of cycles: {}{}",
                cell(c.first_half_max_us),
                cell(c.second_half_max_us),
                c.half_at,
                blocks.join(", "),
                rising
            ))
        })
        .collect();
    if known.is_empty() && !s.threads.is_empty() {
        return vec![match &s.convergence_unknown {
            Some(why) => format!(
                "convergence: not known (a histogram or summary keeps no sample order; cyclictest's -v output does, as do the status snapshots `rtbuild test` and `rtbuild lava` jobs take while it measures, but {why})"
            ),
            None => "convergence: not known (a histogram or summary keeps no sample order; cyclictest's -v output does)"
                .to_string(),
        }];
    }
    known
}

/// A histogram run's convergence from cyclictest's status snapshots: coarser than `-v`
/// samples (the maximum so far at each snapshot, not each block's), and said so.
fn snapshot_line(
    who: &str,
    snapshots: u64,
    c: &crate::formats::report_json::Convergence,
    rising: &str,
) -> String {
    let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), fmt);
    let halves = match (c.rose_in_second_half, c.first_half_max_us) {
        (Some(true), first) => format!(
            "max of the halves {} | {} µs (second half from cycle {})",
            cell(first),
            cell(c.second_half_max_us),
            c.half_at
        ),
        (Some(false), first) => format!(
            "max of the halves {} | at most {} µs (second half from cycle {}: no new maximum)",
            cell(first),
            cell(first),
            c.half_at
        ),
        (None, _) => "max of the halves not known (no snapshot in the first half)".to_string(),
    };
    let steps: Vec<String> = c
        .running_max
        .iter()
        .map(|r| {
            if r.cycle == c.cycles && r.snapshot_cycle == c.cycles {
                format!("end {} {}", r.cycle, cell(r.max_us))
            } else {
                format!("{} {} (at {})", r.cycle, cell(r.max_us), r.snapshot_cycle)
            }
        })
        .collect();
    format!(
        "convergence {who} (from {}, not every sample): {halves}; max so far by cycle (the snapshot at or before it; at the end the final figures): {}{rising}",
        crate::text::counted(snapshots, "status snapshot"),
        steps.join(", ")
    )
}

/// `INVALID` for a reason that makes the scenario's run untrustworthy, else `FAIL`.
pub(crate) fn reason_word(
    s: &ScenarioReport,
    reason: &str,
) -> crate::formats::report_json::Verdict {
    use crate::formats::report_json::Verdict;
    let invalid = s.invalid_reasons.iter().any(|r| r == reason)
        || s.tests.iter().any(|t| {
            t.invalid_reasons
                .iter()
                .any(|r| reason.strip_prefix(&format!("{}: ", t.test)) == Some(r))
        });
    if invalid { Verdict::Invalid } else { Verdict::Fail }
}

fn scenario_text(out: &mut String, s: &ScenarioReport) {
    match &s.label {
        Some(label) => {
            let (name, label) = (escape_controls(&s.name), escape_controls(label));
            let _ = writeln!(out, "{}  {name} ({label})  (latencies in µs)", s.verdict);
        }
        None => {
            let _ = writeln!(out, "{}  {}  (latencies in µs)", s.verdict, escape_controls(&s.name));
        }
    }
    if s.cyclictest {
        cyclictest_table(out, s);
        for line in convergence_lines(s) {
            let _ = writeln!(out, "  {line}");
        }
    }
    tests_text(out, s);
    // Looked up in a set: a file of 4,096 threads gives as many reasons.
    let invalid: std::collections::HashSet<&str> =
        s.invalid_reasons.iter().map(String::as_str).collect();
    for reason in &s.reasons {
        let word = if invalid.contains(reason.as_str()) {
            crate::formats::report_json::Verdict::Invalid
        } else {
            reason_word(s, reason)
        };
        let _ = writeln!(out, "  {word}: {}", escape_controls(reason));
    }
    for note in &s.notes {
        let _ = writeln!(out, "  note: {}", escape_controls(note));
    }
}

/// One line per other test: verdict and each thread's or CPU's max.
fn tests_text(out: &mut String, s: &ScenarioReport) {
    let width = s.tests.iter().map(|t| escape_controls(&t.test).len()).max().unwrap_or(0);
    for t in &s.tests {
        let verdict = t.shown_verdict().to_string();
        let detail = match &t.skipped {
            Some(why) => escape_controls(why),
            None => {
                let maxes: Vec<String> = t
                    .rows
                    .iter()
                    .map(|r| {
                        let program =
                            t.test.parse().unwrap_or(crate::measure::rttests::Program::Cyclictest);
                        format!(
                            "{} max {}",
                            crate::measure::rttests::verdict::who(program, r),
                            r.max_us.map_or_else(|| "-".to_string(), fmt)
                        )
                    })
                    .collect();
                let mut parts = maxes;
                parts.extend(t.notes.iter().map(|n| escape_controls(n)));
                parts.join("; ")
            }
        };
        let _ = writeln!(out, "  {:<width$}  {verdict:<7}  {detail}", escape_controls(&t.test));
    }
}

fn cyclictest_table(out: &mut String, s: &ScenarioReport) {
    let intervals = has_intervals(s);
    let mut header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    if intervals {
        header.splice(2..2, INTERVAL_HEADER.iter().map(|h| h.to_string()));
    }
    let columns = header.len();
    let mut rows: Vec<Vec<String>> = vec![header];
    for t in &s.threads {
        let label = match (&t.file, t.thread) {
            (Some(file), Some(i)) => format!("{}:{i}", escape_controls(file)),
            (None, Some(i)) => i.to_string(),
            _ => "?".to_string(),
        };
        rows.push(with_intervals(row(label, t), t, intervals));
    }
    if s.threads.len() > 1 {
        rows.push(with_intervals(row("all".to_string(), &s.all), &s.all, intervals));
    }
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let mut line = String::new();
        for (cell, w) in r.iter().zip(&widths) {
            line.push_str("  ");
            crate::text::table::pad_left(&mut line, cell, *w);
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(reference) = s.reference_max_us {
        let _ = writeln!(out, "  reference max: {} µs", fmt(reference));
    }
}

/// The columns cyclictest's `T:` line adds per thread: its interval (`I:`) and its last
/// latency (`Act:`), both µs.
pub(super) const INTERVAL_HEADER: [&str; 2] = ["I", "Act"];

/// Whether any thread of `s` came with a `T:` line (it has `Act:`): only then does the
/// per-thread table show the `I` and `Act` columns, as cyclictest printed them. A `-v` log's
/// `Thread N Interval:` lines give the JSON `interval_us` alone.
pub(super) fn has_intervals(s: &ScenarioReport) -> bool {
    s.threads.iter().any(|t| t.act_us.is_some())
}

/// `I` and `Act` for one row, as cells (`-` when the row has none, as the `all` row).
pub(super) fn interval_cells(t: &ThreadReport) -> [String; 2] {
    [
        t.interval_us.map_or_else(|| "-".to_string(), |i| i.to_string()),
        t.act_us.map_or_else(|| "-".to_string(), fmt),
    ]
}

/// `row` with the `I`/`Act` cells after `cpu` when the table shows them.
fn with_intervals(mut row: Vec<String>, t: &ThreadReport, intervals: bool) -> Vec<String> {
    if intervals {
        row.splice(2..2, interval_cells(t));
    }
    row
}

fn row(label: String, t: &ThreadReport) -> Vec<String> {
    let value = |v: Option<f64>| v.map_or_else(|| "-".to_string(), fmt);
    let pct = |v: Option<f64>| match (v, t.percentiles_at_least_us) {
        (Some(v), _) => fmt(v),
        (None, Some(floor)) => format!("≥{}", fmt(floor)),
        (None, None) => "-".to_string(),
    };
    let avg = t.avg_us.map_or_else(|| "-".to_string(), |a| format!("{a:.1}"));
    let stddev = t.stddev_us.map_or_else(|| "-".to_string(), |a| format!("{a:.1}"));
    vec![
        label,
        t.cpu.map_or_else(|| "-".to_string(), |c| c.to_string()),
        t.samples.to_string(),
        value(t.min_us),
        avg,
        pct(t.median_us),
        pct(t.p99_us),
        pct(t.p999_us),
        pct(t.p9999_us),
        value(t.max_us),
        stddev,
        t.overflows.to_string(),
        t.over_threshold.map_or_else(|| "?".to_string(), |n| n.to_string()),
    ]
}

/// How long a scenario ran, as the results table shows it: whole seconds in rtbuild's one
/// [duration format](crate::text::duration) (`10s`, `5m 00s`, `24h 00m 00s`; `-` when the
/// input does not say).
pub(crate) fn duration_cell(seconds: Option<f64>) -> String {
    let Some(s) = seconds.filter(|s| s.is_finite() && *s >= 0.0) else { return "-".to_string() };
    crate::text::duration(s.round())
}

/// The row's verdict, with why when it is not PASS (`INVALID: no samples recorded`).
pub(crate) fn verdict_cell(row: &crate::formats::report_json::ResultRow) -> String {
    if row.why.is_empty() {
        row.verdict.to_string()
    } else {
        format!("{}: {}", row.verdict, row.why.join("; "))
    }
}

/// The Qualcomm guide's columns: Device, Distro and image, use case, min/avg/max latency (µs),
/// then how long the scenario ran, the samples behind the row, and the row's verdict.
pub(crate) fn results_table(rows: &[crate::formats::report_json::ResultRow]) -> String {
    let cell = |v: Option<f64>| v.map_or_else(|| "-".to_string(), fmt);
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                format!(
                    "{}, Boot Flow - {}",
                    escape_controls(&r.device),
                    escape_controls(&r.boot_flow)
                ),
                escape_controls(&r.distro_and_image),
                escape_controls(&r.use_case),
                cell(r.min_us),
                cell(r.avg_us),
                cell(r.max_us),
                duration_cell(r.duration_s),
                r.samples.to_string(),
                escape_controls(&verdict_cell(r)),
            ]
        })
        .collect();
    let header = [
        "Device",
        "Distro and image",
        "use case",
        "Minimum latency (µs)",
        "Avg latency (µs)",
        "Max latency (µs)",
        "Duration",
        "Samples",
        "Verdict",
    ];
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &body {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String| {
        let padded: Vec<String> =
            cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}", w = *w)).collect();
        out.push_str("  ");
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    line(header.iter().map(|h| h.to_string()).collect(), &mut out);
    for row in body {
        line(row, &mut out);
    }
    out
}
