//! The report's opening summary, the table the seed guides draw by hand: one row per scenario
//! and CPU (per thread when cyclictest did not say which CPU) with samples, min, avg, max and
//! p99.9, followed by a machine's published reference numbers as comparison rows.

use crate::catalog::Machine;
pub(crate) use crate::formats::report_json::SummaryRow;
use crate::formats::report_json::{LatencyReport, ThreadReport};

/// The rows for `report`, grouped by scenario in the order scenarios first appear: each
/// scenario's threads sorted by CPU, then the machine's published reference for it.
pub(crate) fn rows(report: &LatencyReport, machine: Option<&Machine>) -> Vec<SummaryRow> {
    let mut groups: Vec<(String, Vec<SummaryRow>)> = Vec::new();
    for input in &report.inputs {
        for scenario in &input.scenarios {
            let mut threads: Vec<&ThreadReport> = scenario.threads.iter().collect();
            threads.sort_by_key(|t| (t.cpu.is_none(), t.cpu, t.thread));
            let measured = threads.into_iter().map(|t| SummaryRow {
                scenario: scenario.name.clone(),
                cpu: t.cpu,
                samples: Some(t.samples),
                min_us: t.min_us,
                avg_us: t.avg_us,
                max_us: t.max_us,
                p999_us: t.p999_us,
                p999_at_least_us: if t.p999_us.is_none() {
                    t.percentiles_at_least_us
                } else {
                    None
                },
                kind: "measured".into(),
                source: input.path.clone(),
            });
            match groups.iter_mut().find(|(name, _)| *name == scenario.name) {
                Some((_, rows)) => rows.extend(measured),
                None => groups.push((scenario.name.clone(), measured.collect())),
            }
        }
    }
    let reference = machine.and_then(|m| Some((m, m.reference.as_ref()?)));
    let mut rows = Vec::new();
    for (name, measured) in groups {
        rows.extend(measured);
        let Some((machine, reference)) = reference else { continue };
        let Some(r) = reference.results.iter().find(|r| r.scenario == name) else { continue };
        rows.push(SummaryRow {
            scenario: name,
            cpu: None,
            samples: None,
            min_us: Some(r.min_us as f64),
            avg_us: Some(r.avg_us as f64),
            max_us: Some(r.max_us as f64),
            p999_us: None,
            p999_at_least_us: None,
            kind: "reference".into(),
            source: format!("{} published reference: {}", machine.name, reference.source),
        });
    }
    rows
}

/// What a reference row is, for the tables: `<machine> published reference`.
pub(crate) fn reference_label(row: &SummaryRow) -> &str {
    row.source.split_once(": ").map_or(row.source.as_str(), |(label, _)| label)
}

/// A summary cell: `-` (or the given dash) for unknown, integers bare, else one decimal.
pub(crate) fn cell(value: Option<f64>, dash: &str) -> String {
    match value {
        None => dash.to_string(),
        Some(v) if v.fract() == 0.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// The p99.9 cell: the value, `≥limit` when it lies among overflowed samples, or a dash.
pub(crate) fn p999_cell(row: &SummaryRow, dash: &str) -> String {
    match (row.p999_us, row.p999_at_least_us) {
        (Some(v), _) => cell(Some(v), dash),
        (None, Some(floor)) => format!("≥{}", cell(Some(floor), dash)),
        (None, None) => dash.to_string(),
    }
}

/// The label of a row's CPU column.
pub(crate) fn cpu_cell(row: &SummaryRow, dash: &str) -> String {
    match (row.kind.as_str(), row.cpu) {
        ("reference", _) => "reference".to_string(),
        (_, Some(cpu)) => cpu.to_string(),
        (_, None) => dash.to_string(),
    }
}
