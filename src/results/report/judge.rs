//! Statistics and verdict for one scenario: every thread of every file is measured against the
//! threshold by the one judge ([`crate::formats::judge`]), and every reason is listed: FAIL for a latency over the threshold or a breaktrace
//! stop; INVALID for an invalid run, a failed cyclictest, no samples, and an unknown figure (a
//! maximum missing, or a printed figure that is not a finite number ≥ 0).

use crate::results::cyclictest::ResultFile;

use super::input::ScenarioInput;
use super::stats::Distribution;
use crate::formats::judge::{Against, max_against};
use crate::formats::report_json::{
    Convergence, ConvergenceBlock, FileInfo, RunningMax, STILL_RISING, ScenarioReport, ThreadReport,
};
use crate::results::cyclictest::{BlockMaxima, Unit};

/// Fewer samples than this cannot back a p99.99 figure.
const P9999_SAMPLES: u64 = 10_000;

/// Judges one scenario against `threshold_us`.
pub(super) fn judge(input: &ScenarioInput, threshold_us: f64) -> ScenarioReport {
    let several = input.runs.len() > 1;
    let mut invalid: Vec<String> =
        input.invalid_reasons.iter().map(|r| format!("invalid run: {r}")).collect();
    let mut reasons: Vec<String> = input.fail_reasons.clone();
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
                "{}: {} not shown",
                path.display(),
                crate::text::counted(run.warnings_not_kept, "more warning")
            ));
        }
        run_reasons(run, &mut reasons, &mut invalid);
        if run.negative_samples > 0 {
            invalid.push(format!(
                "{}: {} `-v` samples have a negative latency, which is no latency: the figures are incomplete",
                path.display(),
                run.negative_samples
            ));
        }
        for thread in &run.threads {
            let dist = Distribution::of(thread, thread.histogram_from_samples);
            let mut report = dist.report(run.unit(), threshold_us);
            report.thread = Some(thread.index);
            report.cpu = thread.cpu;
            report.interval_us = thread.interval_us;
            report.act_us = thread.reported_act.map(|act| run.unit().to_us(act as f64));
            report.file = several.then(|| name.clone());
            report.convergence = thread
                .block_maxima
                .as_ref()
                .filter(|_| thread.histogram_from_samples)
                .map(|blocks| convergence(blocks, run.unit()));
            // A histogram keeps no order: cyclictest's status snapshots, taken while it
            // measured, say how the maximum grew (a folder's one output only).
            if report.convergence.is_none()
                && !several
                && let Some((_, Ok(status))) = &input.status
                && let Some(points) = status.threads.get(&thread.index)
            {
                report.convergence =
                    from_snapshots(points, report.samples, report.max_us, run.unit());
            }
            // Named as the chart's legend names it: by CPU when the output says which.
            let base = match thread.cpu {
                Some(cpu) => format!("CPU{cpu} (thread {})", thread.index),
                None => format!("thread {}", thread.index),
            };
            let who = match &report.file {
                Some(file) => format!("{base} ({file})"),
                None => base,
            };
            for figure in &thread.bad_figures {
                invalid.push(format!(
                    "{who}: cyclictest printed {figure}, which is not a latency (a finite number ≥ 0), so it is unknown"
                ));
            }
            thread_reasons(&who, &report, threshold_us, &mut reasons, &mut invalid);
            if thread.missing_cycles > 0 {
                notes.push(format!(
                    "{who}: {} missing from the `-v` log",
                    crate::text::counted(thread.missing_cycles, "cycle")
                ));
            }
            if let (Some(h), Some(max)) = (&thread.histogram, report.max_us)
                && h.overflows > 0
            {
                notes.push(crate::catalog::latency::overflow_note(
                    &who,
                    h.overflows,
                    h.overflow_floor(),
                    fmt(max),
                ));
            }
            if report.convergence.as_ref().is_some_and(|c| c.still_rising) {
                notes.push(format!("{who}: {STILL_RISING}"));
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
        let mut all =
            merged.report(unit.unwrap_or(crate::results::cyclictest::Unit::Us), threshold_us);
        all.buckets.clear();
        all
    };
    if all.samples > 0 && all.samples < P9999_SAMPLES {
        notes.push(format!(
            "short run: {} {} these figures (p99.99 needs at least {P9999_SAMPLES})",
            crate::text::counted(all.samples, "sample"),
            if all.samples == 1 { "backs" } else { "back" }
        ));
    }
    let convergence_unknown = if threads.iter().any(|t| t.convergence.is_some()) {
        None
    } else {
        input.status.as_ref().map(|(path, status)| match status {
            Err(why) => why.clone(),
            Ok(s) if s.blocks == 0 => {
                format!("`{}` holds no cyclictest status snapshot", path.display())
            }
            Ok(_) => {
                format!("the status snapshots in `{}` name none of these threads", path.display())
            }
        })
    };
    let verdict = crate::formats::judge::verdict(&invalid, &reasons);
    let invalid_reasons = invalid.clone();
    // Every reason, the ones that make the run invalid first.
    invalid.append(&mut reasons);
    ScenarioReport {
        name: input.name.clone(),
        label: None,
        verdict,
        reasons: invalid,
        notes,
        warnings,
        invalid_reasons,
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
        convergence_unknown,
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
            crate::results::cyclictest::Unit::Us => "us",
            crate::results::cyclictest::Unit::Ns => "ns",
        }
        .to_string(),
        cyclictest_version: run.version.clone(),
    }
}

fn run_reasons(run: &ResultFile, reasons: &mut Vec<String>, invalid: &mut Vec<String>) {
    if let Some(b) = run.breaktrace {
        let thread = b.thread.map_or_else(|| "?".to_string(), |t| t.to_string());
        let value = b.value.map_or_else(|| "?".to_string(), |v| v.to_string());
        reasons.push(format!(
            "cyclictest stopped early on a breaktrace (thread id {thread}, latency {value})"
        ));
    }
    if let Some(code) = run.return_code.filter(|c| *c != 0) {
        invalid.push(format!("cyclictest returned {code}"));
    }
}

fn thread_reasons(
    who: &str,
    t: &ThreadReport,
    threshold_us: f64,
    reasons: &mut Vec<String>,
    invalid: &mut Vec<String>,
) {
    if t.samples == 0 {
        invalid.push(format!("{who}: no samples recorded"));
        return;
    }
    match max_against(t.max_us, threshold_us) {
        Against::Missing => invalid.push(format!("{who}: maximum latency unknown (cyclictest's maximum is missing or no latency, and the histogram cannot replace it)")),
        Against::NotALatency(max) => invalid.push(format!("{who}: maximum latency `{max}` is not a finite number ≥ 0, so it is unknown")),
        Against::Over(max) => {
            let above = match t.over_threshold {
                Some(n) => format!("{n} of {}", crate::text::counted(t.samples, "sample")),
                None => format!("some of {}", crate::text::counted(t.samples, "sample")),
            };
            reasons.push(format!("{who}: max {} µs exceeds the {} µs threshold ({above} above it)", fmt(max), fmt(threshold_us)));
        }
        Against::Within(_) => {}
    }
}

/// The maximum of each half of the cycles and of each power-of-two block (`[0, 1)`, `[1, 2)`,
/// `[2, 4)`, …; blocks smaller than one kept block are merged into the first), and whether the
/// last two blocks each set a new maximum.
pub(super) fn convergence(blocks: &BlockMaxima, unit: Unit) -> Convergence {
    let end = blocks.end.max((blocks.maxima.len() as u64) << blocks.shift.min(63));
    let end = if blocks.end > 0 { blocks.end } else { end };
    let us = |v: Option<u64>| v.map(|v| unit.to_us(v as f64));
    let size = 1u64 << blocks.shift.min(63);
    // The half boundary, on a kept block's edge.
    let half_at = (end / 2).div_ceil(size) * size;
    let mut out = Convergence {
        cycles: end,
        half_at,
        first_half_max_us: us(blocks.max_between(0, half_at)),
        second_half_max_us: us(blocks.max_between(half_at, end)),
        ..Convergence::default()
    };
    let mut from = 0u64;
    let mut to = size.max(1);
    while from < end {
        let upto = to.min(end);
        out.blocks.push(ConvergenceBlock {
            from_cycle: from,
            to_cycle: upto,
            max_us: us(blocks.max_between(from, upto)),
        });
        from = upto;
        to = to.saturating_mul(2);
    }
    let n = out.blocks.len();
    if n >= 3 {
        let before = |k: usize| {
            out.blocks[..k].iter().filter_map(|b| b.max_us).fold(f64::NEG_INFINITY, f64::max)
        };
        let sets_record = |k: usize| out.blocks[k].max_us.is_some_and(|m| m > before(k));
        out.still_rising = sets_record(n - 2) && sets_record(n - 1);
    }
    out.rose_in_second_half = match (out.first_half_max_us, out.second_half_max_us) {
        (Some(first), Some(second)) => Some(second > first),
        (None, Some(_)) => Some(true),
        _ => None,
    };
    out
}

/// Convergence of a histogram run from cyclictest's status snapshots: `points` are (cycles,
/// maximum so far) in cycle order, `cycles` the cycles the run measured and `final_max_us` its
/// final maximum (the histogram's or summary's). At each power-of-two boundary the running
/// maximum is the last snapshot's at or before it (a boundary with the same snapshot as the one
/// before is left out); the end of the run has the final figures, at least the last
/// snapshot's, so a final maximum above it counts as a new maximum in the last block. The
/// maximum was still rising when the last two of these steps each raised it.
pub(super) fn from_snapshots(
    points: &[(u64, u64)],
    cycles: u64,
    final_max_us: Option<f64>,
    unit: Unit,
) -> Option<Convergence> {
    let &(last_cycle, last_max) = points.last()?;
    let end = cycles.max(last_cycle);
    let us = |v: u64| unit.to_us(v as f64);
    let at_or_before = |cycle: u64| {
        let n = points.partition_point(|p| p.0 <= cycle);
        n.checked_sub(1).map(|i| points[i])
    };
    let final_max = match final_max_us.filter(|m| crate::formats::report_json::is_latency(*m)) {
        Some(m) => m.max(us(last_max)),
        None => us(last_max),
    };
    let mut running: Vec<RunningMax> = Vec::new();
    let mut boundary = 1u64;
    while boundary < end {
        if let Some((at, max)) = at_or_before(boundary)
            && running.last().is_none_or(|r| r.snapshot_cycle != at)
        {
            running.push(RunningMax { cycle: boundary, snapshot_cycle: at, max_us: Some(us(max)) });
        }
        boundary = boundary.saturating_mul(2);
    }
    running.push(RunningMax { cycle: end, snapshot_cycle: end, max_us: Some(final_max) });
    let mut out = Convergence {
        cycles: end,
        half_at: end / 2,
        snapshots: Some(points.len() as u64),
        ..Convergence::default()
    };
    if let Some((at, max)) = at_or_before(end / 2) {
        let rose = final_max > us(max);
        out.half_at = at;
        out.first_half_max_us = Some(us(max));
        out.second_half_max_us = rose.then_some(final_max);
        out.rose_in_second_half = Some(rose);
    }
    let n = running.len();
    if n >= 3 {
        let rose = |k: usize| running[k].max_us > running[k - 1].max_us;
        out.still_rising = rose(n - 2) && rose(n - 1);
    }
    out.running_max = running;
    Some(out)
}

/// A latency for messages: integers without decimals, else two decimals.
pub(super) fn fmt(value: f64) -> String {
    if value.fract() == 0.0 { format!("{value:.0}") } else { format!("{value:.2}") }
}
