//! OpenMetrics text (`report --openmetrics`, `history export --openmetrics`): what a lab's
//! Prometheus (node_exporter's textfile collector, `promtool tsdb create-blocks-from
//! openmetrics`) reads and Grafana graphs. Documented in docs/report.md.
//!
//! Two gauge families, one series per machine, scenario, test, CPU (and statistic):
//!
//! - `rtbuild_latency_seconds{statistic="min|avg|p99|p99.9|max"}`: the latency, in seconds
//!   (OpenMetrics' base unit; rtbuild's µs divided by 10⁶);
//! - `rtbuild_latency_samples`: how many samples back the figures.
//!
//! Labels: `machine`, `scenario`, `test`, `cpu`, `kernel_release`, `bundle_digest`; a label
//! whose value is unknown is left out (an empty value means the same to Prometheus). Label
//! values are escaped as the format says (`\\`, `\"`, `\n`), so no name from a result folder
//! or the history can end a label or a line; other control characters and invisible format
//! characters are written as escape text ([`escape_label`]). A figure that is unknown is left out, never a
//! made-up number.
//!
//! With timestamps (the history: each run's start, else when it was added), a series holds one
//! point per run, oldest first, as the format requires; two runs of one series with the same
//! timestamp keep the one added last. Without (a report: the current figures, as the textfile
//! collector wants them), two inputs giving the same series are refused by the caller
//! ([`duplicate_series`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::history_json::HistoryRun;

/// The latency family's name (its unit suffix is part of it, as the format requires).
pub(crate) const LATENCY: &str = "rtbuild_latency_seconds";
/// The sample-count family's name.
pub(crate) const SAMPLES: &str = "rtbuild_latency_samples";

/// One series' labels, in the order they are written.
type Labels = Vec<(&'static str, String)>;

/// One point: its labels without `statistic`, the statistic, the value and the timestamp.
struct Point {
    labels: Labels,
    statistic: Option<&'static str>,
    value: String,
    timestamp: Option<i64>,
}

/// The labels of one result row of `run`.
fn labels_of(run: &HistoryRun, result: &super::history_json::HistoryResult) -> Labels {
    let mut labels: Labels = Vec::new();
    let mut add = |name: &'static str, value: Option<String>| {
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            labels.push((name, value));
        }
    };
    add("machine", run.machine.clone().or_else(|| run.target.clone()));
    add("scenario", Some(result.scenario.clone()));
    add("test", Some(result.test.clone()));
    add("cpu", result.cpu.map(|c| c.to_string()));
    add("kernel_release", run.kernel_release.clone());
    add("bundle_digest", run.bundle_digest.clone());
    labels
}

/// A latency in µs as seconds, written the shortest way that reads back the same.
fn seconds(us: f64) -> String {
    format!("{}", us / 1e6)
}

fn points(runs: &[HistoryRun], timestamps: bool) -> Vec<Point> {
    let mut points = Vec::new();
    for run in runs {
        let timestamp = timestamps.then(|| run.started_unix.unwrap_or(run.added_unix));
        for result in &run.results {
            let labels = labels_of(run, result);
            let figures = [
                ("min", result.min_us),
                ("avg", result.avg_us),
                ("p99", result.p99_us),
                ("p99.9", result.p999_us),
                ("max", result.max_us),
            ];
            for (statistic, value) in figures {
                let Some(us) = value.filter(|v| crate::formats::report_json::is_latency(*v)) else {
                    continue;
                };
                points.push(Point {
                    labels: labels.clone(),
                    statistic: Some(statistic),
                    value: seconds(us),
                    timestamp,
                });
            }
            if let Some(samples) = result.samples {
                points.push(Point {
                    labels,
                    statistic: None,
                    value: samples.to_string(),
                    timestamp,
                });
            }
        }
    }
    points
}

/// `\`, `"` and a line feed escaped as OpenMetrics label values need; every other control
/// character (ESC, CR, tab, C1) and invisible format character (a right-to-left override) as
/// the text of its Rust escape, its backslash escaped (`\\u{1b}`), so a parser reads back the
/// six characters `\u{1b}`: the format has no escape of its own for them, and a raw one would
/// reach whatever shows the label.
pub(crate) fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if crate::text::needs_escape(c) => {
                out.push('\\');
                out.extend(c.escape_default());
            }
            c => out.push(c),
        }
    }
    out
}

fn label_text(labels: &Labels, statistic: Option<&str>) -> String {
    let mut parts: Vec<String> =
        labels.iter().map(|(name, value)| format!("{name}=\"{}\"", escape_label(value))).collect();
    if let Some(statistic) = statistic {
        parts.push(format!("statistic=\"{statistic}\""));
    }
    format!("{{{}}}", parts.join(","))
}

/// The first series two of `runs` both give (its label text), for a report without
/// timestamps, where a series has one value.
pub(crate) fn duplicate_series(runs: &[HistoryRun]) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    for run in runs {
        let mut own = std::collections::BTreeSet::new();
        for result in &run.results {
            own.insert(label_text(&labels_of(run, result), None));
        }
        for series in own {
            if !seen.insert(series.clone()) {
                return Some(series);
            }
        }
    }
    None
}

/// The OpenMetrics text of `runs`, ending in `# EOF`.
pub(crate) fn render(runs: &[HistoryRun], timestamps: bool) -> String {
    // Series → points (series in label order).
    let mut latency: BTreeMap<String, Vec<(Option<i64>, usize, String)>> = BTreeMap::new();
    let mut samples: BTreeMap<String, Vec<(Option<i64>, usize, String)>> = BTreeMap::new();
    for (at, point) in points(runs, timestamps).into_iter().enumerate() {
        let family = if point.statistic.is_some() { &mut latency } else { &mut samples };
        family.entry(label_text(&point.labels, point.statistic)).or_default().push((
            point.timestamp,
            at,
            point.value,
        ));
    }
    let mut out = String::new();
    let family = |out: &mut String,
                  name: &str,
                  unit: Option<&str>,
                  help: &str,
                  series: BTreeMap<String, Vec<(Option<i64>, usize, String)>>| {
        let _ = writeln!(out, "# TYPE {name} gauge");
        if let Some(unit) = unit {
            let _ = writeln!(out, "# UNIT {name} {unit}");
        }
        let _ = writeln!(out, "# HELP {name} {help}");
        for (labels, mut points) in series {
            // Oldest first; of equal timestamps the one given last wins.
            points.sort_by_key(|(ts, at, _)| (*ts, std::cmp::Reverse(*at)));
            points.dedup_by_key(|(ts, _, _)| *ts);
            for (ts, _, value) in points {
                match ts {
                    Some(ts) => {
                        let _ = writeln!(out, "{name}{labels} {value} {ts}");
                    }
                    None => {
                        let _ = writeln!(out, "{name}{labels} {value}");
                    }
                }
            }
        }
    };
    family(
        &mut out,
        LATENCY,
        Some("seconds"),
        "Latency statistic of one machine, scenario, test and CPU.",
        latency,
    );
    family(
        &mut out,
        SAMPLES,
        None,
        "Samples behind the latency figures of one machine, scenario, test and CPU.",
        samples,
    );
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use crate::formats::history_json::{HistoryResult, HistoryRun};

    fn run(started: i64, max: f64) -> HistoryRun {
        HistoryRun {
            machine: Some("rb3gen2-core-kit".into()),
            kernel_release: Some("6.6.52-rt43".into()),
            started_unix: Some(started),
            results: vec![HistoryResult {
                scenario: "stress".into(),
                test: "cyclictest".into(),
                cpu: Some(7),
                samples: Some(60000),
                max_us: Some(max),
                min_us: Some(f64::NAN),
                ..HistoryResult::default()
            }],
            ..HistoryRun::default()
        }
    }

    #[test]
    fn one_gauge_per_series_with_escaped_labels_and_no_unknown_figure() {
        let mut odd = run(1, 42.0);
        odd.machine = Some("a\"b\\c\nd".into());
        let text = super::render(&[odd], false);
        assert_eq!(
            text,
            "# TYPE rtbuild_latency_seconds gauge\n\
             # UNIT rtbuild_latency_seconds seconds\n\
             # HELP rtbuild_latency_seconds Latency statistic of one machine, scenario, test and CPU.\n\
             rtbuild_latency_seconds{machine=\"a\\\"b\\\\c\\nd\",scenario=\"stress\",test=\"cyclictest\",cpu=\"7\",kernel_release=\"6.6.52-rt43\",statistic=\"max\"} 0.000042\n\
             # TYPE rtbuild_latency_samples gauge\n\
             # HELP rtbuild_latency_samples Samples behind the latency figures of one machine, scenario, test and CPU.\n\
             rtbuild_latency_samples{machine=\"a\\\"b\\\\c\\nd\",scenario=\"stress\",test=\"cyclictest\",cpu=\"7\",kernel_release=\"6.6.52-rt43\"} 60000\n\
             # EOF\n"
        );
    }

    #[test]
    fn history_points_are_oldest_first_and_one_per_timestamp() {
        let text = super::render(&[run(20, 50.0), run(10, 40.0), run(20, 55.0)], true);
        let max: Vec<&str> = text.lines().filter(|l| l.contains("statistic=\"max\"")).collect();
        assert_eq!(max.len(), 2, "{text}");
        assert!(max[0].ends_with(" 0.00004 10"), "{text}");
        assert!(max[1].ends_with(" 0.000055 20"), "{text}");
        assert!(super::duplicate_series(&[run(1, 1.0), run(2, 2.0)]).is_some());
        assert!(super::duplicate_series(&[run(1, 1.0)]).is_none());
    }
}
