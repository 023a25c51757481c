//! `rtbuild report`: reads cyclictest results (raw files or `rtbuild test` result folders),
//! computes honest statistics per thread and scenario, gives a PASS/FAIL verdict with every
//! reason, and renders it for the terminal, JSON, JUnit and a self-contained HTML page.
//!
//! Pipeline: [`input::read`] (parse files via [`crate::results::cyclictest`]) → [`judge::judge`]
//! (statistics + reasons per scenario) → reference numbers and [`baseline::compare`] →
//! [`LatencyReport`] → renderers ([`text`], [`junit`], [`html`]).

mod baseline;
pub(crate) mod chart;
pub(crate) mod error;
pub(crate) mod html;
pub(crate) mod input;
mod judge;
pub(crate) mod junit;
pub(crate) mod lava_log;
mod spikes;
mod stats;
mod suite;
pub(crate) mod summary;
mod system;
pub(crate) mod testkit;
pub(crate) mod text;

pub(crate) use crate::formats::report_json::{
    InputReport, LatencyReport, SCHEMA, ScenarioReport, ThreadReport, Verdict,
};

use std::path::{Path, PathBuf};

use crate::catalog::Machine;
pub(crate) use error::ReportError;
use error::shown_number;

pub(crate) use crate::catalog::latency::DEFAULT_THRESHOLD_US;

pub(crate) use crate::catalog::latency::{MAX_THRESHOLD_US, MIN_THRESHOLD_US};

/// Whether `value` can be a latency (or noise) limit: from [`MIN_THRESHOLD_US`] (1 ns) to
/// [`MAX_THRESHOLD_US`] (1 s); NaN, infinities, 0, negatives and subnormals are not.
pub(crate) fn threshold_is_sensible(value: f64) -> bool {
    (MIN_THRESHOLD_US..=MAX_THRESHOLD_US).contains(&value)
}

/// What to report on.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub inputs: Vec<PathBuf>,
    pub threshold_us: Option<f64>,
    pub baseline: Option<PathBuf>,
    pub machine: Option<Machine>,
    /// `report --board NAME`: the board of inputs that name none (a raw cyclictest file, a
    /// run made without --machine/--board); an input that names its board keeps it.
    pub board: Option<String>,
    /// Read `-v` and histogram output whose unit the content does not show as nanoseconds
    /// (cyclictest `-N`); JSON and `T:` lines carry their unit and are not affected.
    pub nsecs: bool,
    /// oslat's OS-noise limit, µs [default: run.json `noise_us`, else 20].
    pub noise_us: Option<f64>,
}

/// Reads every input and builds the report (the tests' short way to [`build_with_runs`]).
#[cfg(test)]
pub(crate) fn build(options: &Options) -> Result<LatencyReport, ReportError> {
    build_with_runs(options).map(|(report, _)| report)
}

/// Every input of a report, read once ([`crate::results::input`]), and the baseline once it
/// was read: `report --history` judges each input alone from it, and `--openmetrics` records
/// each input's `run.json` (for a LAVA log: the machine and threshold it printed; `None` for a
/// raw file), without reading any file again.
#[derive(Debug)]
pub(crate) struct Reading {
    pub inputs: Vec<input::Input>,
    baseline: Baseline,
}

impl Reading {
    /// The report of the input at `at` alone, as `rtbuild report` gives it for that input.
    pub(crate) fn judge_one(
        &mut self,
        options: &Options,
        at: usize,
    ) -> Result<LatencyReport, ReportError> {
        let one: Vec<&input::Input> = self.inputs.get(at).into_iter().collect();
        judge(options, &one, &mut self.baseline)
    }
}

/// `--baseline`, read the first time a report needs it: an earlier report JSON, or an input
/// read once and judged at each report's threshold.
#[derive(Debug, Default)]
struct Baseline(Option<BaselineRead>);

#[derive(Debug)]
enum BaselineRead {
    Report(Box<LatencyReport>),
    Input(Box<input::Input>),
}

/// [`build`], with what it read (see [`Reading`]).
pub(crate) fn build_with_runs(options: &Options) -> Result<(LatencyReport, Reading), ReportError> {
    let inputs = read(options)?;
    let mut baseline = Baseline::default();
    let report = judge(options, &inputs.iter().collect::<Vec<_>>(), &mut baseline)?;
    Ok((report, Reading { inputs, baseline }))
}

/// Reads every input once, through the one sniffer (after [`refuse_bad_threshold`]).
pub(crate) fn read(options: &Options) -> Result<Vec<input::Input>, ReportError> {
    refuse_bad_threshold(options)?;
    options.inputs.iter().map(|p| crate::results::input::read(p, options.nsecs)).collect()
}

/// A bad --threshold-us, refused before any input is read.
pub(crate) fn refuse_bad_threshold(options: &Options) -> Result<(), ReportError> {
    match options.threshold_us.filter(|t| !threshold_is_sensible(*t)) {
        Some(value) => Err(ReportError::Threshold { value, from: "--threshold-us".to_string() }),
        None => Ok(()),
    }
}

/// The report of inputs already read (`options.inputs` is not read again).
pub(crate) fn build_from(
    options: &Options,
    inputs: &[&input::Input],
) -> Result<LatencyReport, ReportError> {
    judge(options, inputs, &mut Baseline::default())
}

fn judge(
    options: &Options,
    inputs: &[&input::Input],
    baseline: &mut Baseline,
) -> Result<LatencyReport, ReportError> {
    refuse_bad_threshold(options)?;
    refuse_mixed_boards(inputs)?;
    // `--machine`, else the machine `run.json` names (if the shipped catalog knows it).
    let named = |trusted_only: bool| {
        let name = inputs
            .iter()
            .filter(|i| !trusted_only || i.kind != "lava-log")
            .find_map(|i| i.run_json.as_ref().and_then(|r| r.machine.clone()))?;
        crate::catalog::Catalog::embedded().lookup(&name).ok().map(|found| found.machine.clone())
    };
    let machine = options.machine.clone().or_else(|| named(false));
    // The machine whose requirement may be the threshold: never one a LAVA log's console
    // named (the board would choose its own limit).
    let judged_machine = options.machine.clone().or_else(|| named(true));
    let folder_threshold = inputs.iter().find_map(|i| {
        let run = i.run_json.as_ref()?;
        Some((run.threshold_us?, run.threshold_source.clone()))
    });
    let requirement = judged_machine.as_ref().and_then(|m| m.latency_requirement_us);
    let (threshold_us, mut threshold_source) =
        match (options.threshold_us, folder_threshold, requirement) {
            (Some(t), _, _) => (t, "--threshold-us".to_string()),
            (None, Some((t, source)), _) => (
                t,
                match source {
                    Some(source) => format!("run.json threshold_us: {source}"),
                    None => "run.json threshold_us".to_string(),
                },
            ),
            (None, None, Some(t)) => {
                let name = judged_machine.as_ref().map(|m| m.name.as_str()).unwrap_or_default();
                (t as f64, format!("{name} requirement"))
            }
            (None, None, None) => (DEFAULT_THRESHOLD_US, "default, SIL 2".to_string()),
        };
    if !threshold_is_sensible(threshold_us) {
        return Err(ReportError::Threshold { value: threshold_us, from: threshold_source });
    }
    // What a LAVA log's console claimed is said beside the threshold used, never used.
    for printed in inputs.iter().filter_map(|i| i.printed_threshold_us) {
        if printed != threshold_us {
            threshold_source.push_str(&format!(
                "; the LAVA log's console printed threshold_us={}, which is not used (pass the job's threshold as --threshold-us)",
                shown_number(printed)
            ));
        }
    }
    let noise_us = options
        .noise_us
        .or_else(|| {
            inputs
                .iter()
                .find_map(|i| i.run_json.as_ref().and_then(|r| r.noise_us))
                .map(|n| n as f64)
        })
        .unwrap_or(crate::measure::rttests::DEFAULT_NOISE_US as f64);
    if !threshold_is_sensible(noise_us) {
        return Err(ReportError::Noise(noise_us));
    }
    let limits = crate::measure::rttests::verdict::Limits { latency_us: threshold_us, noise_us };
    let mut report = LatencyReport {
        schema: SCHEMA.to_string(),
        verdict: Verdict::Pass,
        reasons: Vec::new(),
        threshold_us,
        threshold_source,
        noise_us,
        machine: machine.as_ref().map(|m| m.name.clone()).or_else(|| {
            let named =
                inputs.iter().any(|i| i.run_json.as_ref().is_some_and(|r| r.machine.is_some()));
            options.board.clone().filter(|_| !named)
        }),
        baseline: options.baseline.as_ref().map(|p| p.display().to_string()),
        summary: Vec::new(),
        results: Vec::new(),
        tuning: inputs
            .iter()
            .filter_map(|i| {
                let t = i.run_json.as_ref()?.tuning.as_ref()?;
                Some(crate::formats::report_json::TuningState {
                    input: i.path.display().to_string(),
                    applied: t.applied,
                    reverted: t.reverted,
                })
            })
            .collect(),
        inputs: inputs
            .iter()
            .map(|input| InputReport {
                path: input.path.display().to_string(),
                kind: input.kind.to_string(),
                scenarios: input
                    .scenarios
                    .iter()
                    .map(|s| timed(scenario(s, limits), input.run_json.as_ref()))
                    .collect(),
                fingerprint: input
                    .run_json
                    .as_ref()
                    .and_then(|r| r.fingerprint.as_ref())
                    .and_then(|f| serde_json::to_value(f).ok()),
                // A LAVA log carries no interrupt counts (a result folder always does).
                interrupts: input
                    .run_json
                    .as_ref()
                    .filter(|_| input.kind == "result-folder")
                    .and_then(|r| serde_json::to_value(&r.interrupts).ok()),
            })
            .collect(),
        spikes: inputs.iter().flat_map(|i| spikes::collect(i)).collect(),
    };
    if let Some(machine) = &machine {
        add_reference(&mut report, machine);
    }
    if let Some(path) = &options.baseline {
        let before = load_baseline(path, threshold_us, options.nsecs, baseline)?;
        baseline::compare(&mut report, &before);
    }
    finish(&mut report);
    report.summary = summary::rows(&report, machine.as_ref());
    report.results = results_table(inputs, &report.inputs, threshold_us);
    Ok(report)
}

/// The Qualcomm guide's table, from each result folder's `run.json` (or LAVA log) and its
/// judged scenarios: one row per scenario and measured CPU, each with that CPU's figures only.
fn results_table(
    inputs: &[&input::Input],
    judged: &[InputReport],
    threshold_us: f64,
) -> Vec<crate::formats::report_json::ResultRow> {
    use crate::formats::report_json::ResultRow;
    let mut rows = Vec::new();
    for (input, report) in inputs.iter().zip(judged) {
        let Some(run) = &input.run_json else { continue };
        let fingerprint = run.fingerprint.as_ref();
        let name = run
            .machine
            .clone()
            .or_else(|| fingerprint.and_then(|f| f.board.clone()))
            .unwrap_or_else(|| run.target.clone());
        let rt = crate::plan::CpuSet::parse(&run.rt_cpus).ok().filter(|_| !run.rt_cpus.is_empty());
        let boot_flow = fingerprint.and_then(|f| f.boot.as_ref()).map_or_else(
            || crate::formats::run_json::UNKNOWN_FLOW.to_string(),
            crate::formats::run_json::BootFacts::flow,
        );
        let distro = fingerprint
            .and_then(crate::formats::run_json::Fingerprint::distro_and_image)
            .unwrap_or_else(|| "-".to_string());
        for s in &report.scenarios {
            let base = ResultRow {
                device: name.clone(),
                cpu: None,
                boot_flow: boot_flow.clone(),
                distro_and_image: distro.clone(),
                use_case: match &s.label {
                    Some(label) => format!("{} ({label})", s.name),
                    None => s.name.clone(),
                },
                duration_s: s.elapsed_s,
                samples: 0,
                min_us: None,
                avg_us: None,
                max_us: None,
                verdict: Verdict::Pass,
                why: Vec::new(),
            };
            let threads: Vec<&ThreadReport> =
                if s.threads.is_empty() { vec![&s.all] } else { s.threads.iter().collect() };
            for t in threads {
                let device = match (t.cpu, &rt) {
                    (Some(cpu), Some(rt)) if rt.contains(cpu) => format!("{name}, RT core: {cpu}"),
                    (Some(cpu), Some(_)) => format!("{name}, CPU {cpu} (not an RT core)"),
                    (Some(cpu), None) => format!("{name}, CPU {cpu}"),
                    (None, _) => {
                        let thread = t.thread.map_or_else(String::new, |i| format!("thread {i}, "));
                        match &rt {
                            Some(rt) => format!("{name}, RT core: {rt} ({thread}CPU not recorded)"),
                            None => format!("{name} ({thread}CPU not recorded)"),
                        }
                    }
                };
                // Why the row cannot be trusted, then its maximum against the threshold: the
                // one judge gives the verdict of each.
                let invalid = if !s.invalid_reasons.is_empty() {
                    s.invalid_reasons.clone()
                } else if !s.cyclictest {
                    vec!["cyclictest did not measure in this scenario".to_string()]
                } else if t.samples == 0 {
                    vec!["no samples recorded".to_string()]
                } else {
                    Vec::new()
                };
                let (verdict, why) = if !invalid.is_empty() {
                    (crate::formats::judge::verdict(&invalid, &[]), invalid)
                } else {
                    use crate::formats::judge::{Against, max_against};
                    let against = max_against(t.max_us, threshold_us);
                    let why = match against {
                        Against::NotALatency(max) => format!("maximum `{max}` is no latency"),
                        Against::Missing => "maximum latency unknown".to_string(),
                        Against::Over(max) => format!(
                            "max {} µs exceeds the {} µs threshold",
                            judge::fmt(max),
                            judge::fmt(threshold_us)
                        ),
                        Against::Within(_) => String::new(),
                    };
                    (against.verdict(), (!why.is_empty()).then_some(why).into_iter().collect())
                };
                rows.push(ResultRow {
                    device,
                    cpu: t.cpu,
                    samples: t.samples,
                    min_us: t.min_us,
                    avg_us: t.avg_us,
                    max_us: t.max_us,
                    verdict,
                    why,
                    ..base.clone()
                });
            }
        }
    }
    rows
}

/// One scenario: cyclictest's figures and verdict (when it measured), then each other test's;
/// the scenario fails when any of them fails.
fn scenario(
    input: &input::ScenarioInput,
    limits: crate::measure::rttests::verdict::Limits,
) -> ScenarioReport {
    let mut report = judge::judge(input, limits.latency_us);
    if let Some(label) = &input.label {
        report.label = Some(label.clone());
        report.notes.insert(0, format!("{label}: not comparable with a run on isolated CPUs"));
    }
    report.cyclictest = input.cyclictest;
    report.cyclictest_reasons = report.reasons.clone();
    for test in &input.tests {
        let judged = suite::judge(test, limits);
        report.reasons.extend(judged.reasons.iter().map(|r| format!("{}: {r}", judged.test)));
        report.verdict = crate::formats::judge::worst([report.verdict, judged.verdict]);
        report.tests.push(judged);
    }
    report
}

/// When the scenario ran and for how long, from its `run.json` record.
fn timed(
    mut report: ScenarioReport,
    run: Option<&crate::formats::run_json::RunRecord>,
) -> ScenarioReport {
    if let Some(record) = run.and_then(|r| r.scenarios.iter().find(|s| s.name == report.name)) {
        report.started_unix = Some(record.started_unix).filter(|&s| s > 0);
        report.elapsed_s = Some(record.elapsed_s).filter(|e| e.is_finite() && *e > 0.0);
    }
    report
}

/// Inputs that name different boards (a catalog alias counts as its board) are refused: the
/// report has one reference and one requirement, so a second board's figures would be judged
/// against the first one's. Inputs that name no board join any.
fn refuse_mixed_boards(inputs: &[&input::Input]) -> Result<(), ReportError> {
    let catalog = crate::catalog::Catalog::embedded();
    let mut boards: Vec<(String, Vec<String>)> = Vec::new();
    for input in inputs {
        let Some(name) = input.run_json.as_ref().and_then(|r| r.machine.as_deref()) else {
            continue;
        };
        let board = catalog.lookup(name).map_or_else(
            |_| crate::text::printable(name).chars().take(80).collect(),
            |found| found.machine.name.clone(),
        );
        let path = input.path.display().to_string();
        match boards.iter_mut().find(|(b, _)| *b == board) {
            Some((_, paths)) => paths.push(path),
            None => boards.push((board, vec![path])),
        }
    }
    if boards.len() < 2 {
        return Ok(());
    }
    let boards = boards
        .iter()
        .map(|(board, paths)| format!("{board}: {}", paths.join(", ")))
        .collect::<Vec<_>>()
        .join("; ");
    Err(ReportError::MixedBoards { boards })
}

/// The machine's published reference maximum, for comparison only (never a FAIL reason); the
/// summary shows it as a comparison row.
fn add_reference(report: &mut LatencyReport, machine: &Machine) {
    for scenario in report.inputs.iter_mut().flat_map(|i| &mut i.scenarios) {
        let Some(reference) = machine.reference_max_us(&scenario.name) else { continue };
        scenario.reference_max_us = Some(reference as f64);
    }
}

/// A baseline is an earlier `rtbuild report --json`, or anything `rtbuild report` reads; it is
/// read the first time (`cache`), and judged at `threshold_us` each time.
fn load_baseline(
    path: &Path,
    threshold_us: f64,
    nsecs: bool,
    cache: &mut Baseline,
) -> Result<LatencyReport, ReportError> {
    // Say it is the baseline that is unusable, not one of the inputs.
    let unusable = |err| ReportError::Baseline { path: path.to_path_buf(), cause: Box::new(err) };
    let read = match cache.0.take() {
        Some(read) => read,
        None => read_baseline(path, nsecs)?,
    };
    let read = cache.0.insert(read);
    match read {
        BaselineRead::Report(report) => Ok((**report).clone()),
        BaselineRead::Input(input) => {
            let options = Options { threshold_us: Some(threshold_us), nsecs, ..Options::default() };
            build_from(&options, &[input]).map_err(unusable)
        }
    }
}

fn read_baseline(path: &Path, nsecs: bool) -> Result<BaselineRead, ReportError> {
    let unusable = |err| ReportError::Baseline { path: path.to_path_buf(), cause: Box::new(err) };
    if !path.is_file() {
        return crate::results::input::read(path, nsecs)
            .map(|input| BaselineRead::Input(Box::new(input)))
            .map_err(unusable);
    }
    // Opened once: a report JSON is told from its whole text, anything else is read on from
    // the same bytes.
    let mut file = crate::results::input::open(path).map_err(unusable)?;
    let object = file.head().iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if object
        && file.fill(crate::files::input::TEXT_LIMIT).unwrap_or(false)
        && let Ok(text) = std::str::from_utf8(file.head())
        && LatencyReport::looks_like_report(text)
    {
        return LatencyReport::from_text(text)
            .map(|report| BaselineRead::Report(Box::new(report)))
            .map_err(|cause| ReportError::BaselineJson { path: path.to_path_buf(), cause });
    }
    let found = crate::results::input::sniff_opened(file);
    crate::results::input::read_sniffed(path, found, nsecs)
        .map(|input| BaselineRead::Input(Box::new(input)))
        .map_err(unusable)
}

/// Overall verdict and reasons from the scenarios.
fn finish(report: &mut LatencyReport) {
    report.reasons = report
        .inputs
        .iter()
        .flat_map(|i| &i.scenarios)
        .flat_map(|s| s.reasons.iter().map(move |r| format!("{}: {r}", s.name)))
        .collect();
    let verdicts = report.inputs.iter().flat_map(|i| &i.scenarios).map(|s| s.verdict);
    report.verdict = crate::formats::judge::worst(verdicts);
}

#[cfg(test)]
mod tests;
