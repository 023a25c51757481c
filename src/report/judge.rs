//! Statistics and verdict for one scenario: every thread of every file is measured against the
//! threshold, and every reason for a FAIL is listed (latency over the threshold, unknown
//! maximum, no samples, an invalid run, a breaktrace stop, a failed cyclictest).

use crate::cyclictest::ResultFile;

use super::input::ScenarioInput;
use super::stats::Distribution;
use crate::formats::report_json::{FileInfo, ScenarioReport, ThreadReport, Verdict};

/// Fewer samples than this cannot back a p99.99 figure.
const P9999_SAMPLES: u64 = 10_000;

/// Judges one scenario against `threshold_us`.
pub(super) fn judge(input: &ScenarioInput, threshold_us: f64) -> ScenarioReport {
    let several = input.runs.len() > 1;
    let mut reasons: Vec<String> =
        input.invalid_reasons.iter().map(|r| format!("invalid run: {r}")).collect();
    reasons.extend(input.fail_reasons.iter().cloned());
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    let mut threads = Vec::new();
    let mut parts = Vec::new();
    let mut files = Vec::new();
    let mut unit = None;
    for (path, run) in &input.runs {
        let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        files.push(file_info(path, run));
        for w in &run.warnings {
            warnings.push(match w.line {
                Some(line) => format!("{}:{line}: {}", path.display(), w.message),
                None => format!("{}: {}", path.display(), w.message),
            });
        }
        if run.warnings_not_kept > 0 {
            warnings.push(format!(
                "{}: {} more warnings not shown",
                path.display(),
                run.warnings_not_kept
            ));
        }
        run_reasons(run, &mut reasons);
        for thread in &run.threads {
            let dist = Distribution::of(thread, thread.histogram_from_samples);
            let mut report = dist.report(run.unit(), threshold_us);
            report.thread = Some(thread.index);
            report.cpu = thread.cpu;
            report.interval_us = thread.interval_us;
            report.act_us = thread.reported_act.map(|act| run.unit().to_us(act as f64));
            report.file = several.then(|| name.clone());
            // Named as the chart's legend names it: by CPU when the output says which.
            let base = match thread.cpu {
                Some(cpu) => format!("CPU{cpu} (thread {})", thread.index),
                None => format!("thread {}", thread.index),
            };
            let who = match &report.file {
                Some(file) => format!("{base} ({file})"),
                None => base,
            };
            thread_reasons(&who, &report, threshold_us, &mut reasons);
            if thread.missing_cycles > 0 {
                notes.push(format!(
                    "{who}: {} cycles missing from the `-v` log",
                    thread.missing_cycles
                ));
            }
            if let (Some(h), Some(max)) = (&thread.histogram, report.max_us)
                && h.overflows > 0
            {
                notes.push(crate::base::overflow_note(
                    &who,
                    h.overflows,
                    h.overflow_floor(),
                    fmt(max),
                ));
            }
            if thread.spikes > 0 {
                notes.push(format!("{who}: {} `--spike` samples recorded", thread.spikes));
            }
            threads.push(report);
            parts.push(dist);
        }
        unit = unit.or(Some(run.unit()));
    }
    let units_differ = input.runs.iter().any(|(_, r)| Some(r.unit()) != unit);
    let all = if units_differ {
        notes.push("files mix µs and ns results; no combined figures".to_string());
        ThreadReport::default()
    } else {
        let merged = Distribution::merge(&parts);
        let mut all = merged.report(unit.unwrap_or(crate::cyclictest::Unit::Us), threshold_us);
        all.buckets.clear();
        all
    };
    if all.samples > 0 && all.samples < P9999_SAMPLES {
        notes.push(format!(
            "short run: {} samples back these figures (p99.99 needs at least {P9999_SAMPLES})",
            all.samples
        ));
    }
    ScenarioReport {
        name: input.name.clone(),
        label: None,
        verdict: Verdict::from_reasons(&reasons),
        reasons,
        notes,
        warnings,
        invalid_reasons: input.invalid_reasons.clone(),
        files,
        commands: input.commands.clone(),
        thermal: input.thermal.clone(),
        throttling: input.throttling.clone(),
        all,
        threads,
        reference_max_us: None,
        regressions: Vec::new(),
        cyclictest: true,
        cyclictest_reasons: Vec::new(),
        tests: Vec::new(),
        started_unix: None,
        elapsed_s: None,
    }
}

fn file_info(path: &std::path::Path, run: &ResultFile) -> FileInfo {
    FileInfo {
        path: path.display().to_string(),
        formats: run
            .formats
            .iter()
            .map(|f| {
                serde_json::to_value(f)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            })
            .collect(),
        unit: match run.unit() {
            crate::cyclictest::Unit::Us => "us",
            crate::cyclictest::Unit::Ns => "ns",
        }
        .to_string(),
        cyclictest_version: run.version.clone(),
    }
}

fn run_reasons(run: &ResultFile, reasons: &mut Vec<String>) {
    if let Some(b) = run.breaktrace {
        let thread = b.thread.map_or_else(|| "?".to_string(), |t| t.to_string());
        let value = b.value.map_or_else(|| "?".to_string(), |v| v.to_string());
        reasons.push(format!(
            "cyclictest stopped early on a breaktrace (thread id {thread}, latency {value})"
        ));
    }
    if let Some(code) = run.return_code.filter(|c| *c != 0) {
        reasons.push(format!("cyclictest returned {code}"));
    }
}

fn thread_reasons(who: &str, t: &ThreadReport, threshold_us: f64, reasons: &mut Vec<String>) {
    if t.samples == 0 {
        reasons.push(format!("{who}: no samples recorded"));
        return;
    }
    match t.max_us {
        None => reasons.push(format!("{who}: maximum latency unknown (histogram overflowed and cyclictest's maximum is missing)")),
        Some(max) if max > threshold_us => {
            let above = match t.over_threshold {
                Some(n) => format!("{n} of {} samples", t.samples),
                None => format!("some of {} samples", t.samples),
            };
            reasons.push(format!("{who}: max {} µs exceeds the {} µs threshold ({above} above it)", fmt(max), fmt(threshold_us)));
        }
        Some(_) => {}
    }
}

/// A latency for messages: integers without decimals, else two decimals.
pub(super) fn fmt(value: f64) -> String {
    if value.fract() == 0.0 { format!("{value:.0}") } else { format!("{value:.2}") }
}
