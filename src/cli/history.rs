//! `rtbuild history add|list|show|compare|report`: the latency history keyed by build identity.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::args::DataHomeArgs;
use crate::cli::error::Refusal;
use crate::error::Exit;
use crate::formats::history_json::{HistoryList, SCHEMA};
use crate::results::history::add::{AddRequest, add};
use crate::results::history::location::Location;
use crate::results::history::store::{Filter, Store};
use crate::results::history::{self, DEFAULT_WAIT, HistoryError, compare, regression};
use crate::text::escape_controls;
use crate::text::parse_date;
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    #[command(subcommand)]
    pub command: HistoryCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HistoryCommand {
    /// Record runs (`rtbuild test` result folders, LAVA job logs), each once.
    Add(AddArgs),
    /// The recorded runs, a line each, oldest first.
    List(ListArgs),
    /// The recorded runs with their build identity and per-CPU figures.
    Show(ShowArgs),
    /// Two runs, two bundles or two kernel releases: change in max and p99.9, inputs that differ.
    Compare(CompareArgs),
    /// Write the trend page: max and p99.9 over time per board and scenario.
    Report(TrendArgs),
    /// Write the recorded figures for a lab's dashboards: OpenMetrics text, one point per run
    /// at its start time (docs/history.md).
    Export(ExportArgs),
}

/// `--db`, for every history command.
#[derive(Debug, Args)]
pub(crate) struct DbArgs {
    /// The history database: `sqlite:PATH` or `postgres://USER@HOST/DB` [default:
    /// $XDG_DATA_HOME/rtbuild/history.sqlite].
    #[arg(long, value_name = "URL", env = "RTBUILD_DB", hide_env_values = true)]
    pub db: Option<String>,
    /// Seconds to wait for the database before giving up: for another process's write lock on
    /// an SQLite file, and for each statement on a PostgreSQL server.
    #[arg(long, value_name = "SECONDS", env = "RTBUILD_DB_TIMEOUT", default_value_t = DEFAULT_WAIT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub db_timeout: u64,
    #[command(flatten)]
    pub data_home: DataHomeArgs,
}

impl DbArgs {
    pub(crate) fn location(&self) -> Result<Location, HistoryError> {
        match &self.db {
            Some(url) => Location::parse(url),
            None => Location::default_file(
                self.data_home.env_xdg_data_home.clone(),
                self.data_home.env_home.clone(),
            )
            .ok_or(HistoryError::NoDefault),
        }
    }

    /// How long to wait for a lock or a statement.
    pub(crate) fn wait(&self) -> Duration {
        Duration::from_secs(self.db_timeout)
    }

    /// The database for a command that only reads it.
    fn open(&self) -> Result<Store, HistoryError> {
        Store::open_read(&self.location()?, self.wait())
    }
}

#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// `rtbuild test` result folders or LAVA job logs (what `rtbuild report` reads).
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<PathBuf>,
    /// The bundle the runs measured (its .manifest.json, or the .tar.zst beside it): records
    /// the bundle, lock and kernel config digests and the repositories.
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
    /// Compare each run with the recent valid runs of its machine, scenario and test; exit 1
    /// on a REGRESSION.
    #[arg(long)]
    pub check: bool,
    /// With --check: how much worse than the baseline max or p99.9 is a regression, %.
    #[arg(long, value_name = "PCT", default_value_t = regression::DEFAULT_PCT, requires = "check")]
    pub regression_pct: f64,
    /// Latency limit in µs the runs are judged against, as `rtbuild report --threshold-us`
    /// (give a LAVA log the job's threshold: the one its console printed is never used)
    /// [default: run.json `threshold_us`, else the machine's requirement, else 100].
    #[arg(long, value_name = "US")]
    pub threshold_us: Option<f64>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub(crate) struct FilterArgs {
    /// Only runs of this machine.
    #[arg(long, value_name = "M")]
    pub machine: Option<String>,
    /// Only runs with this scenario (and only its figures).
    #[arg(long, value_name = "S")]
    pub scenario: Option<String>,
    /// Only runs started at or after DATE (`YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ssZ`, UTC).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
}

impl FilterArgs {
    fn filter(&self) -> Result<Filter, Refusal> {
        let since_unix = match &self.since {
            Some(date) => Some(parse_date(date).ok_or_else(|| Refusal::Since(date.clone()))?),
            None => None,
        };
        Ok(Filter { machine: self.machine.clone(), scenario: self.scenario.clone(), since_unix })
    }
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// Only this run (a digest, or its first characters).
    #[arg(value_name = "RUN")]
    pub run: Option<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// A run (digest prefix or result folder), a bundle (digest prefix or manifest) or a
    /// kernel release.
    #[arg(value_name = "A")]
    pub a: String,
    /// The same for the other side.
    #[arg(value_name = "B")]
    pub b: String,
    /// Kernel .config files at hand: those whose sha256 is a side's config digest are read to
    /// name the options that differ.
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub(crate) struct TrendArgs {
    /// Write the page (self-contained HTML) to FILE.
    #[arg(long, value_name = "FILE", required = true)]
    pub html: PathBuf,
    /// Only this machine.
    #[arg(long, value_name = "M")]
    pub machine: Option<String>,
    /// How much worse than the baseline max or p99.9 a point must be to be marked, %.
    #[arg(long, value_name = "PCT", default_value_t = regression::DEFAULT_PCT)]
    pub regression_pct: f64,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// Write OpenMetrics text (a gauge per machine, scenario, test, CPU and statistic,
    /// labelled with the kernel release and the bundle digest, one point per run) to FILE.
    #[arg(long, value_name = "FILE", required = true)]
    pub openmetrics: PathBuf,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub db: DbArgs,
}

pub(super) fn run(args: HistoryArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    match args.command {
        HistoryCommand::Add(args) => run_add(args, ui),
        HistoryCommand::List(args) => {
            let filter = args.filter.filter()?;
            let runs = args.db.open()?.runs(&filter)?;
            if ui.json() {
                ui.out_json(&HistoryList { schema: SCHEMA.to_string(), runs })?;
            } else {
                ui.out(history::text::list(&runs));
            }
            Ok(Exit::Ok)
        }
        HistoryCommand::Show(args) => {
            let filter = args.filter.filter()?;
            let mut runs = args.db.open()?.runs(&filter)?;
            if let Some(key) = &args.run {
                let side = compare::select(&mut runs.as_slice(), key, None)?;
                runs = side.runs;
            }
            if ui.json() {
                ui.out_json(&HistoryList { schema: SCHEMA.to_string(), runs })?;
            } else {
                ui.out(history::text::show(&runs));
            }
            Ok(Exit::Ok)
        }
        HistoryCommand::Compare(args) => run_compare(args, ui),
        HistoryCommand::Report(args) => run_trend(args, ui),
        HistoryCommand::Export(args) => {
            let filter = args.filter.filter()?;
            let runs = args.db.open()?.runs(&filter)?;
            let text = crate::formats::openmetrics::render(&runs, true);
            crate::files::write::write_atomic(&args.openmetrics, text.as_bytes(), false)?;
            ui.status("Wrote", crate::text::shown_path(&args.openmetrics));
            Ok(Exit::Ok)
        }
    }
}

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn run_add(args: AddArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let location = args.db.location()?;
    let mut store = Store::open(&location, args.db.wait())?;
    let request = AddRequest {
        runs: args.runs,
        bundle: args.bundle,
        check_pct: args.check.then_some(args.regression_pct),
        threshold_us: args.threshold_us,
        now_unix: now_unix(),
    };
    let added = add(&mut store, &request)?;
    let passed = added.iter().all(|a| a.check.as_ref().is_none_or(|c| c.verdict.passed()));
    if ui.json() {
        ui.out_json(&added)?;
    } else {
        for entry in &added {
            let verb = if entry.new { "Recorded" } else { "Known" };
            ui.status(
                verb,
                // The folder's name (and a stored row's fields) may hold control characters:
                // escaped, so no name can forge a line or send an escape sequence.
                format!(
                    "{} {} ({}) in {}",
                    escape_controls(compare::short(&entry.digest)),
                    entry.verdict,
                    escape_controls(&entry.source),
                    escape_controls(store.shown())
                ),
            );
            if let Some(check) = &entry.check {
                ui.out(regression::render(check).trim_end());
            }
        }
    }
    Ok(Exit::from_pass(passed))
}

fn run_compare(args: CompareArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let mut store = args.db.open()?;
    let (a, b) = (compare::resolve(&mut store, &args.a)?, compare::resolve(&mut store, &args.b)?);
    let configs = args
        .configs
        .iter()
        .map(|path| compare::read_config(path))
        .collect::<Result<Vec<_>, _>>()?;
    let comparison = compare::compare(&a, &b, &configs);
    if ui.json() {
        ui.out_json(&comparison)?;
    } else {
        ui.out(history::text::compare(&comparison));
    }
    Ok(Exit::Ok)
}

fn run_trend(args: TrendArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    history::regression::check_pct(args.regression_pct)?;
    let mut store = args.db.open()?;
    let filter = Filter { machine: args.machine.clone(), ..Filter::default() };
    let trend = history::trend::read(&mut store, &filter, args.regression_pct)?;
    let page = history::trend::page(&trend).map_err(crate::cli::error::Kind::TrendPage)?;
    crate::files::write::write_atomic(&args.html, page.as_bytes(), false)?;
    ui.status("Wrote", crate::text::shown_path(&args.html));
    Ok(Exit::Ok)
}
