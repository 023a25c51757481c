//! `rtbuild report INPUT…`: statistics, verdict and reports for cyclictest results.

use std::path::PathBuf;

use clap::Args;

use super::args::{BoardArg, MachineArgs};
use crate::cli::error::Refusal;
use crate::error::Exit;
use crate::results::report::{self, Options};
use crate::text::ui::Ui;

#[derive(Debug, Args)]
#[command(mut_arg("machine", |arg| arg
    .help("Machine whose published reference numbers to compare against (see `rtbuild machines`)")
    .value_name("NAME")
    .short(None)
    .env(None)))]
#[command(mut_arg("board", |arg| arg.help(
    "Name of the board of inputs that name none (raw cyclictest output, a run made without \
     --machine or --board): shown as the report's machine and recorded under it by --history \
     and --openmetrics; an input that names its board keeps it. Letters, digits, `-` and `_`"
)))]
pub(crate) struct ReportArgs {
    /// cyclictest outputs (any format, detected by content) or `rtbuild test` result folders.
    #[arg(value_name = "INPUT", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Latency limit in µs [default: run.json `threshold_us`, else the machine's requirement, else 100 (SIL 2)].
    #[arg(long, value_name = "US")]
    pub threshold_us: Option<f64>,
    /// oslat's OS-noise limit in µs (also hwlatdetect's) [default: run.json `noise_us`, else 20].
    #[arg(long, value_name = "US")]
    pub noise_us: Option<f64>,
    /// An earlier run (report JSON, result folder or cyclictest file): flag max and tail
    /// percentile regressions (more than 10 % and 1 µs worse).
    #[arg(long, value_name = "PREV")]
    pub baseline: Option<PathBuf>,
    #[command(flatten)]
    pub machine: MachineArgs,
    #[command(flatten)]
    pub board: BoardArg,
    /// Read `-v` and histogram files as nanoseconds (cyclictest `-N`); JSON and `T:` lines
    /// state their unit themselves.
    #[arg(long)]
    pub nsecs: bool,
    /// Write a self-contained HTML report (charts inline, opens offline) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write JUnit XML (one test case per test and scenario) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write OpenMetrics text (a gauge per machine, scenario, test, CPU and statistic, labelled
    /// with the kernel release and the bundle digest; docs/report.md) to FILE.
    #[arg(long, value_name = "FILE")]
    pub openmetrics: Option<PathBuf>,
    /// The bundle the inputs measured (its .manifest.json, or the .tar.zst beside it): its
    /// digest labels the --openmetrics series, as `history add --bundle` records it.
    #[arg(long, value_name = "FILE", requires = "openmetrics")]
    pub bundle: Option<PathBuf>,
    /// Compare each input with the recent valid runs of its machine, scenario and test in this
    /// history database (`sqlite:PATH` or `postgres://…`, as `rtbuild history`); exit 1 on a
    /// REGRESSION. The inputs are not recorded (`rtbuild history add` does that).
    #[arg(long, value_name = "URL")]
    pub history: Option<String>,
    /// With --history: how much worse than the baseline max or p99.9 is a regression, %.
    #[arg(long, value_name = "PCT", default_value_t = crate::results::history::regression::DEFAULT_PCT, requires = "history")]
    pub regression_pct: f64,
    /// With --history: seconds to wait for the database before giving up, as `rtbuild history
    /// --db-timeout`.
    #[arg(long, value_name = "SECONDS", env = "RTBUILD_DB_TIMEOUT", default_value_t = crate::results::history::DEFAULT_WAIT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub db_timeout: u64,
}

pub(super) fn run(args: ReportArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    if args.history.is_some() {
        crate::results::history::regression::check_pct(args.regression_pct)?;
    }
    let machine = args.machine.lookup()?;
    let options = Options {
        inputs: args.inputs.clone(),
        threshold_us: args.threshold_us,
        baseline: args.baseline.clone(),
        machine,
        board: args.board.board.clone(),
        nsecs: args.nsecs,
        noise_us: args.noise_us,
    };
    // Read before any input, so a bad --bundle writes nothing.
    let bundle =
        args.bundle.as_deref().map(crate::results::history::bundle_identity::read).transpose()?;
    let (report, mut reading) = report::build_with_runs(&options).map_err(Refusal::Report)?;
    let metrics = match &args.openmetrics {
        Some(_) => Some(openmetrics(&report, &reading.inputs, bundle.as_ref())?),
        None => None,
    };
    for warning in report.inputs.iter().flat_map(|i| &i.scenarios).flat_map(|s| &s.warnings) {
        ui.warn(warning);
    }
    if let Some(path) = &args.html {
        crate::files::write::write_atomic(path, report::html::render(&report).as_bytes(), false)?;
        ui.status("Wrote", crate::text::shown_path(path));
    }
    if let Some(path) = &args.junit {
        crate::files::write::write_atomic(path, report::junit::render(&report).as_bytes(), false)?;
        ui.status("Wrote", crate::text::shown_path(path));
    }
    if let (Some(path), Some(text)) = (&args.openmetrics, &metrics) {
        crate::files::write::write_atomic(path, text.as_bytes(), false)?;
        ui.status("Wrote", crate::text::shown_path(path));
    }
    let file_report = args.html.is_some() || args.junit.is_some() || args.openmetrics.is_some();
    if ui.json() {
        ui.out_json(&report)?;
    } else if !(ui.quiet() && file_report) {
        // With -q and a report file, the file is the report: the exit code gives the verdict.
        ui.out(report::text::render(&report));
    }
    // One exit-code rule: 0 for PASS, 1 for FAIL, INVALID and REGRESSION.
    let mut verdict = report.verdict;
    if let Some(url) = &args.history {
        let location = crate::results::history::location::Location::parse(url)?;
        let checks = crate::results::history::check_report(
            &location,
            &options,
            &mut reading,
            args.regression_pct,
            std::time::Duration::from_secs(args.db_timeout),
        )?;
        for check in &checks {
            // On stderr with --json, so stdout stays one JSON document.
            let text = crate::results::history::regression::render(check);
            for line in text.lines() {
                if ui.json() { ui.warn(line) } else { ui.out(line) }
            }
        }
        for check in &checks {
            verdict = crate::formats::judge::worst([verdict, check.verdict]);
        }
    }
    Ok(verdict.exit())
}

/// The report's OpenMetrics text: each input read as `history add` records it (its machine,
/// kernel release, per-CPU figures), labelled with the bundle's digest; refused when two
/// inputs give the same series (a report holds one value per series).
fn openmetrics(
    report: &report::LatencyReport,
    inputs: &[report::input::Input],
    bundle: Option<&crate::results::history::bundle_identity::BundleIdentity>,
) -> Result<String, Refusal> {
    let recorded: Vec<_> = report
        .inputs
        .iter()
        .enumerate()
        .map(|(at, input)| {
            let one = report::LatencyReport { inputs: vec![input.clone()], ..report.clone() };
            let run_json = inputs.get(at).and_then(|i| i.run_json.as_ref());
            crate::results::history::record::from_report(&input.path, &one, run_json, bundle)
        })
        .collect();
    if let Some(series) = crate::formats::openmetrics::duplicate_series(&recorded) {
        return Err(Refusal::SameSeries(series));
    }
    Ok(crate::formats::openmetrics::render(&recorded, false))
}
