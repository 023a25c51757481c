//! `--html FILE`: one self-contained page that opens offline (no scripts, fonts or links):
//! the verdict and its reasons first, the summary, one chart per CPU of every scenario, then
//! per scenario the latency histogram (inline SVG, log count axis), the percentile table,
//! validity checks and the exact commands, then the interrupts and the system from the result
//! folder. Built from the auto-escaping template `templates/report.html.j2`: this file only
//! turns the report into the page's values.

use serde::Serialize;

use super::chart::{Series, latency_svg, overlay_svg};
use super::judge::fmt;
use super::summary;
use crate::formats::report_json::{
    InputReport, LatencyReport, ScenarioReport, Spike, ThreadReport,
};
use crate::measure::rttests::Kind;

const STYLE: &str = "*{box-sizing:border-box}\
body{font-family:system-ui,sans-serif;margin:2em auto;padding:0 1em;max-width:960px;color:#222}\
h1{margin:0}.verdict{padding:1em 1.5em;border-radius:8px;color:#fff;margin-bottom:1.5em}\
.PASS{background:#2e7d32}.FAIL{background:#c62828}.INVALID{background:#6a1b9a}.REGRESSION{background:#e65100}.SKIPPED{background:#757575}td.wrap{white-space:normal;max-width:28em}.badge{font-weight:bold;padding:.1em .5em;border-radius:4px;color:#fff}\
table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums;max-width:100%}\
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right;white-space:nowrap;font-size:.9em}th{background:#f3f3f3}\
td.l,th.l{text-align:left}td.w{white-space:normal;overflow-wrap:anywhere;text-align:left}\
pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap;overflow-wrap:anywhere}\
svg{max-width:100%;height:auto}tr.ref td{background:#eef3fb;font-style:italic}\
section{border-top:1px solid #ddd;margin-top:2em}.warn{color:#a15c00}\
.charts{display:flex;flex-direction:column;gap:1em}.charts figure{margin:0;width:100%;min-width:0}\
.charts svg{width:100%;height:auto}figcaption{font-weight:bold;margin:.5em 0}\
#results table{width:100%}#results td,#results th{white-space:normal}#results td.l,#results td.w,#results th.l{overflow-wrap:anywhere}\
@media (max-width:900px){td,th{white-space:normal;padding:.2em .3em;font-size:.8em}td.l,th.l{overflow-wrap:anywhere}body{padding:0 .5em}}\
@media print{body{max-width:none;margin:0;padding:0}td,th{white-space:normal;padding:.15em .3em;font-size:8pt}td.l,th.l{overflow-wrap:anywhere}figure,tr{break-inside:avoid}.verdict{print-color-adjust:exact;-webkit-print-color-adjust:exact}}";

#[derive(Serialize)]
struct Page<'a> {
    style: &'static str,
    verdict: String,
    threshold: String,
    threshold_source: &'a str,
    machine: Option<&'a str>,
    reasons: &'a [String],
    summary: Vec<SummaryView<'a>>,
    /// The Qualcomm guide's results table (Device, Distro and image, use case, min/avg/max).
    results: Vec<ResultView>,
    /// Per result folder: whether rtbuild's tuning was applied and reverted.
    tuning: Vec<(String, &'static str)>,
    overlays: Vec<Overlay>,
    inputs: Vec<InputView<'a>>,
    version: &'static str,
    schema: &'a str,
}

/// One row of the results table: the Device cell's lines as the guide writes them (the device
/// and its RT cores, then `Boot Flow - …` when known), then the other five cells.
#[derive(Serialize)]
struct ResultView {
    device: String,
    boot_flow: String,
    cells: [String; 7],
    /// The row's verdict word, its badge class, and why it is not PASS.
    verdict: &'static str,
    why: String,
}

#[derive(Serialize)]
struct SummaryView<'a> {
    reference: bool,
    scenario: &'a str,
    cpu: String,
    samples: String,
    min: String,
    avg: String,
    max: String,
    p999: String,
    source: String,
}

#[derive(Serialize)]
struct Overlay {
    caption: String,
    svg: String,
}

#[derive(Serialize)]
struct InputView<'a> {
    scenarios: Vec<ScenarioView<'a>>,
    interrupts: Option<Interrupts>,
    system: Vec<(String, String)>,
}

#[derive(Serialize, Default)]
struct Interrupts {
    rows: Vec<[String; 6]>,
    /// Anything of another shape, as JSON text.
    raw: Option<String>,
}

#[derive(Serialize)]
struct ScenarioView<'a> {
    name: &'a str,
    /// `load on the measured CPUs, no isolation` for system-load.
    label: Option<&'a str>,
    verdict: String,
    fail_reasons: &'a [String],
    cyclictest: bool,
    latency_svg: Option<String>,
    noise_charts: Vec<Option<String>>,
    tests: Vec<TestView<'a>>,
    percentiles: Vec<Vec<String>>,
    /// The percentile table has cyclictest's `I` and `Act` columns after `cpu`.
    intervals: bool,
    reference: Option<String>,
    /// Whether the maximum still rose (per thread, or why it is not known).
    convergence: Vec<String>,
    checks: Vec<CheckView>,
    spikes: Vec<SpikeView<'a>>,
    commands: Vec<&'a String>,
}

#[derive(Serialize)]
struct TestView<'a> {
    test: &'a str,
    verdict: String,
    badge: &'static str,
    rows: Vec<[String; 5]>,
    why: Vec<String>,
}

#[derive(Serialize)]
struct CheckView {
    warn: bool,
    text: String,
}

#[derive(Serialize)]
struct SpikeView<'a> {
    title: String,
    explanation: &'a str,
    events: Vec<[String; 4]>,
    trace_file: &'a str,
    cpu: String,
    excerpt: String,
}

const DASH: &str = "–";

/// The HTML page for `report`.
pub(crate) fn render(report: &LatencyReport) -> String {
    let page = Page {
        style: STYLE,
        verdict: report.verdict.to_string(),
        threshold: fmt(report.threshold_us),
        threshold_source: &report.threshold_source,
        machine: report.machine.as_deref(),
        reasons: &report.reasons,
        summary: report.summary.iter().map(summary_view).collect(),
        results: report
            .results
            .iter()
            .map(|r| {
                let cell = |v: Option<f64>| v.map_or_else(|| DASH.to_string(), fmt);
                ResultView {
                    device: r.device.clone(),
                    boot_flow: r.boot_flow.clone(),
                    cells: [
                        r.distro_and_image.clone(),
                        r.use_case.clone(),
                        cell(r.min_us),
                        cell(r.avg_us),
                        cell(r.max_us),
                        super::text::duration_cell(r.duration_s),
                        r.samples.to_string(),
                    ],
                    verdict: r.verdict.as_str(),
                    why: r.why.join("; "),
                }
            })
            .collect(),
        tuning: report
            .tuning
            .iter()
            .map(|t| {
                let state = match (t.applied, t.reverted) {
                    (true, true) => "applied for the run, then reverted",
                    (true, false) => "applied for the run, NOT reverted",
                    (false, _) => "not applied by rtbuild (the target's own state was measured)",
                };
                (t.input.clone(), state)
            })
            .collect(),
        overlays: overlays(report),
        inputs: report.inputs.iter().map(|input| input_view(input, report)).collect(),
        version: env!("CARGO_PKG_VERSION"),
        schema: &report.schema,
    };
    // Every value is a string, number or list: the compiled-in template cannot fail on it.
    crate::text::templates::render("report.html", &page).unwrap_or_else(|e| {
        format!("<!DOCTYPE html><p>bug in rtbuild: the report template failed: {e}</p>\n")
    })
}

fn summary_view(row: &summary::SummaryRow) -> SummaryView<'_> {
    let reference = row.kind == "reference";
    SummaryView {
        reference,
        scenario: &row.scenario,
        cpu: summary::cpu_cell(row, DASH),
        samples: row.samples.map_or_else(|| DASH.to_string(), |n| n.to_string()),
        min: summary::cell(row.min_us, DASH),
        avg: summary::cell(row.avg_us, DASH),
        max: summary::cell(row.max_us, DASH),
        p999: summary::p999_cell(row, DASH),
        source: if reference { row.source.clone() } else { "measured".to_string() },
    }
}

/// One chart per CPU with every scenario that measured it (idle against stress, the
/// comparison the RT guides make), when there is more than one scenario to compare.
fn overlays(report: &LatencyReport) -> Vec<Overlay> {
    let scenarios: Vec<&ScenarioReport> =
        report.inputs.iter().flat_map(|i| &i.scenarios).filter(|s| s.cyclictest).collect();
    if scenarios.len() < 2 {
        return Vec::new();
    }
    let mut cpus: Vec<u32> =
        scenarios.iter().flat_map(|s| &s.threads).filter_map(|t| t.cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus.into_iter()
        .filter_map(|cpu| {
            let series: Vec<Series<'_>> = scenarios
                .iter()
                .filter_map(|s| {
                    let thread = s.threads.iter().find(|t| t.cpu == Some(cpu))?;
                    Some(Series { name: s.name.clone(), thread })
                })
                .collect();
            let svg = overlay_svg(&series, report.threshold_us)?;
            Some(Overlay { caption: format!("CPU{cpu}: every scenario"), svg })
        })
        .collect()
}

fn input_view<'a>(input: &'a InputReport, report: &'a LatencyReport) -> InputView<'a> {
    let folder = input.kind == "result-folder";
    InputView {
        scenarios: input
            .scenarios
            .iter()
            .map(|s| {
                let spikes: Vec<&Spike> = report
                    .spikes
                    .iter()
                    .filter(|sp| sp.input == input.path && sp.scenario == s.name)
                    .collect();
                scenario_view(s, report, folder, &spikes)
            })
            .collect(),
        interrupts: input.interrupts.as_ref().map(interrupts),
        system: system(input),
    }
}

fn scenario_view<'a>(
    s: &'a ScenarioReport,
    report: &LatencyReport,
    folder: bool,
    spikes: &[&'a Spike],
) -> ScenarioView<'a> {
    let noise_charts = s
        .tests
        .iter()
        .filter(|t| t.kind == Kind::Noise)
        .map(|t| {
            let cpus: Vec<ThreadReport> = t
                .rows
                .iter()
                .map(|r| ThreadReport {
                    thread: Some(r.thread),
                    cpu: r.cpu,
                    samples: r.samples.unwrap_or(0),
                    max_us: r.max_us,
                    buckets: r.histogram.iter().map(|(v, n)| (*v as f64, *n)).collect(),
                    ..ThreadReport::default()
                })
                .collect();
            latency_svg(&cpus, report.noise_us)
        })
        .collect();
    let mut checks = Vec::new();
    if s.cyclictest && folder && s.invalid_reasons.is_empty() {
        checks.push(CheckView {
            warn: false,
            text: "run.json reports no invalid-run reasons".into(),
        });
    }
    for reason in &s.invalid_reasons {
        checks.push(CheckView { warn: true, text: reason.clone() });
    }
    if s.cyclictest {
        for file in &s.files {
            checks.push(CheckView {
                warn: false,
                text: format!(
                    "{}: {} ({}{})",
                    file.path,
                    file.formats.join(", "),
                    file.unit,
                    file.cyclictest_version
                        .as_ref()
                        .map_or_else(String::new, |v| format!(", rt-tests {v}"))
                ),
            });
        }
        checks.extend(s.notes.iter().map(|n| CheckView { warn: false, text: n.clone() }));
        checks.extend(s.warnings.iter().map(|w| CheckView { warn: true, text: w.clone() }));
    }
    let intervals = super::text::has_intervals(s);
    let mut percentiles: Vec<Vec<String>> = s
        .threads
        .iter()
        .map(|t| {
            let label = match (&t.file, t.thread) {
                (Some(f), Some(i)) => format!("{f}:{i}"),
                (_, Some(i)) => i.to_string(),
                _ => "?".to_string(),
            };
            with_intervals(percentile_row(label, t), t, intervals)
        })
        .collect();
    if s.threads.len() > 1 {
        percentiles.push(with_intervals(
            percentile_row("all".to_string(), &s.all),
            &s.all,
            intervals,
        ));
    }
    ScenarioView {
        name: &s.name,
        label: s.label.as_deref(),
        verdict: s.verdict.to_string(),
        fail_reasons: if s.verdict.passed() { &[] } else { &s.reasons },
        cyclictest: s.cyclictest,
        latency_svg: if s.cyclictest { latency_svg(&s.threads, report.threshold_us) } else { None },
        noise_charts,
        tests: s.tests.iter().map(test_view).collect(),
        percentiles,
        intervals,
        reference: s.reference_max_us.map(fmt),
        convergence: if s.cyclictest { super::text::convergence_lines(s) } else { Vec::new() },
        checks,
        spikes: spikes.iter().map(|sp| spike_view(sp)).collect(),
        commands: s.commands.iter().chain(s.tests.iter().flat_map(|t| &t.commands)).collect(),
    }
}

fn spike_view(spike: &Spike) -> SpikeView<'_> {
    let cpu = spike.cpu.map_or_else(|| "?".to_string(), |c| c.to_string());
    let has_durations = spike.events.iter().any(|e| e.duration_us.is_some());
    SpikeView {
        title: format!(
            "{} on CPU {cpu} ({})",
            spike.latency_us.map_or_else(|| "?".to_string(), |l| format!("{} µs", fmt(l))),
            spike.analyzer
        ),
        explanation: &spike.explanation,
        events: if has_durations {
            spike
                .events
                .iter()
                .map(|e| {
                    [
                        format!("{:.6}", e.ts),
                        e.kind.clone(),
                        e.name.clone(),
                        e.duration_us.map_or_else(|| "-".to_string(), fmt),
                    ]
                })
                .collect()
        } else {
            Vec::new()
        },
        trace_file: &spike.trace_file,
        cpu,
        excerpt: spike.excerpt.join("\n"),
    }
}

/// One rt-tests program: verdict, figures per thread or CPU, reasons and notes.
fn test_view(t: &crate::formats::report_json::TestReport) -> TestView<'_> {
    let mut why: Vec<String> = t.skipped.iter().cloned().collect();
    why.extend(t.reasons.iter().cloned());
    why.extend(t.notes.iter().cloned());
    let program = t.test.parse().unwrap_or(crate::measure::rttests::Program::Cyclictest);
    let value = |x: Option<f64>| x.map_or_else(|| DASH.to_string(), fmt);
    let rows = if t.rows.is_empty() {
        vec![Default::default()]
    } else {
        t.rows
            .iter()
            .map(|r| {
                [
                    crate::measure::rttests::verdict::who(program, r),
                    r.samples.map_or_else(|| DASH.to_string(), |n| n.to_string()),
                    value(r.min_us),
                    r.avg_us.map_or_else(|| DASH.to_string(), |a| format!("{a:.1}")),
                    value(r.max_us),
                ]
            })
            .collect()
    };
    let shown = t.shown_verdict();
    let (verdict, badge) = (shown.to_string(), shown.as_str());
    TestView { test: &t.test, verdict, badge, rows, why }
}

/// `row` with the `I`/`Act` cells after `cpu` when the table shows them (`-` as [`DASH`]).
fn with_intervals(mut row: Vec<String>, t: &ThreadReport, intervals: bool) -> Vec<String> {
    if intervals {
        let cells =
            super::text::interval_cells(t).map(|c| if c == "-" { DASH.to_string() } else { c });
        row.splice(2..2, cells);
    }
    row
}

fn percentile_row(label: String, t: &ThreadReport) -> Vec<String> {
    let value = |v: Option<f64>| v.map_or_else(|| DASH.to_string(), fmt);
    let pct = |v: Option<f64>| match (v, t.percentiles_at_least_us) {
        (Some(v), _) => fmt(v),
        (None, Some(floor)) => format!("≥{}", fmt(floor)),
        (None, None) => DASH.to_string(),
    };
    let one = |v: Option<f64>| v.map_or_else(|| DASH.to_string(), |v| format!("{v:.1}"));
    vec![
        label,
        t.cpu.map_or_else(|| DASH.to_string(), |c| c.to_string()),
        t.samples.to_string(),
        value(t.min_us),
        one(t.avg_us),
        pct(t.median_us),
        pct(t.p99_us),
        pct(t.p999_us),
        pct(t.p9999_us),
        value(t.max_us),
        one(t.stddev_us),
        t.overflows.to_string(),
        t.over_threshold.map_or_else(|| "?".to_string(), |n| n.to_string()),
    ]
}

/// `run.json` `interrupts` (`{scenario: [{irq, device, cpu, count, description}]}`): rows,
/// biggest count first; anything of another shape is shown as JSON text.
fn interrupts(value: &serde_json::Value) -> Interrupts {
    let raw =
        || Interrupts { raw: serde_json::to_string_pretty(value).ok(), ..Interrupts::default() };
    let Some(map) = value.as_object() else { return raw() };
    let mut rows: Vec<(&str, &serde_json::Value)> = Vec::new();
    for (scenario, list) in map {
        match list.as_array() {
            Some(items) => rows.extend(items.iter().map(|i| (scenario.as_str(), i))),
            None => return raw(),
        }
    }
    let count =
        |v: &serde_json::Value| v.get("count").and_then(serde_json::Value::as_u64).unwrap_or(0);
    rows.sort_by(|a, b| count(b.1).cmp(&count(a.1)).then_with(|| a.0.cmp(b.0)));
    Interrupts {
        rows: rows
            .into_iter()
            .map(|(scenario, item)| {
                let text = |key: &str| item.get(key).map(scalar).unwrap_or_default();
                let kind = match item.get("device").and_then(serde_json::Value::as_bool) {
                    Some(true) => "device",
                    Some(false) => "per-CPU",
                    None => "",
                };
                [
                    scenario.to_string(),
                    text("cpu"),
                    text("irq"),
                    count(item).to_string(),
                    kind.to_string(),
                    text("description"),
                ]
            })
            .collect(),
        raw: None,
    }
}

/// The system, one table: the facts the text report shows (CPU model, board, kernel,
/// PREEMPT, isolation, frequencies, temperatures, throttling), then every other fingerprint
/// field that has a value (no `null`, no empty rows).
fn system(input: &InputReport) -> Vec<(String, String)> {
    let mut rows = super::system::facts(input);
    let Some(serde_json::Value::Object(fp)) = &input.fingerprint else { return rows };
    for (key, value) in fp {
        if super::system::SHOWN.contains(&key.as_str()) {
            continue;
        }
        let text = readable(value);
        if !text.trim().is_empty() {
            rows.push((key.clone(), text));
        }
    }
    rows
}

/// A fingerprint value as words, never JSON text: `kvm: yes; efi: no` for `boot`,
/// `PRETTY_NAME: Debian GNU/Linux 12; VERSION_ID: 12` for `os_release`; lists joined with
/// commas, nulls and empty values left out.
fn readable(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => String::new(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Array(items) => {
            let parts: Vec<String> =
                items.iter().map(readable).filter(|t| !t.trim().is_empty()).collect();
            if items.iter().any(Value::is_object) {
                parts.iter().map(|p| format!("({p})")).collect::<Vec<_>>().join(", ")
            } else {
                parts.join(", ")
            }
        }
        Value::Object(map) => map
            .iter()
            .filter_map(|(key, v)| {
                let text = readable(v);
                {
                    // rtbuild's own keys read as words; os-release's (PRETTY_NAME) stay as
                    // the file writes them.
                    let key = if key.bytes().any(|b| b.is_ascii_uppercase()) {
                        key.clone()
                    } else {
                        key.replace('_', " ")
                    };
                    (!text.trim().is_empty()).then(|| format!("{key}: {text}"))
                }
            })
            .collect::<Vec<_>>()
            .join("; "),
        other => scalar(other),
    }
}

fn scalar(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
