//! `rtbuild history`: a latency history keyed by build identity. Each run `report` reads (an
//! `rtbuild test` result folder or a LAVA job log) is recorded once per content digest with the
//! build it measured (kernel release, config, lock and bundle digests, tuning); `compare` tells
//! two runs, bundles or kernel releases apart, [`regression`] flags a run that got worse than
//! the recent valid runs of the same machine, scenario and test, and [`trend`] draws the long
//! view.
//!
//! Storage: an embedded SQLite file by default, a PostgreSQL server for a lab
//! ([`location::Location`]); both behind [`backend::Backend`], with one set of SQL and
//! numbered [`migrations`].

pub(crate) mod add;
pub(crate) mod backend;
#[cfg(feature = "bench-support")]
pub mod bench_support;
pub(crate) mod bundle_identity;
pub(crate) mod compare;
pub(crate) mod location;
mod migrations;
mod postgres;
pub(crate) mod record;
pub(crate) mod regression;
mod sqlite;
pub(crate) mod store;
pub(crate) mod text;
pub(crate) mod trend;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{ErrorCode, Exit};

/// How long rtbuild waits for the database unless `--db-timeout` says otherwise: for another
/// writer's lock on an SQLite file, and for each statement on a PostgreSQL server.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(120);

/// Why a history command could not do its job.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HistoryError {
    #[error("--db {url}: {message}; pass `sqlite:PATH` or `postgres://USER@HOST/DB`")]
    Url { url: String, message: String },
    #[error(
        "cannot open the history database {db}: {message}; check --db (or RTBUILD_DB) and that the server is running"
    )]
    Open { db: String, message: String },
    /// A server that sent a message past [`postgres::MESSAGE_BUDGET`] (issue 34: a length
    /// header of 2 GiB made the client library allocate it and abort rtbuild).
    #[error(
        "the history server at {db} sent a message of {bytes} bytes, more than the {} MiB rtbuild reads from one; check that --db names a PostgreSQL server",
        postgres::MESSAGE_BUDGET >> 20
    )]
    Oversized { db: String, bytes: u64 },
    /// An SQLite file that cannot be opened: the message carries its own fix when SQLite
    /// says what is wrong (damaged, locked, read-only), else the path is checked.
    #[error(
        "cannot open the history database {db}: {}",
        crate::text::ui::with_fix(.message, "check --db (or RTBUILD_DB): it must name an SQLite history file")
    )]
    OpenFile { db: String, message: String },
    #[error(
        "the history database {db} has schema version {found}, but this rtbuild knows up to {latest}; upgrade rtbuild"
    )]
    Newer { db: String, found: i64, latest: i64 },
    #[error("history database {db}: {message}")]
    Db { db: String, message: String },
    #[error("{0}")]
    Input(String),
    #[error("--config {}: {cause}; check the path", path.display())]
    ConfigUnreadable { path: PathBuf, cause: std::io::Error },
    #[error("--config {}: not a regular file; pass a kernel .config", path.display())]
    ConfigNotAFile { path: PathBuf },
    #[error("--config {}: {cause}", path.display())]
    Config { path: PathBuf, cause: crate::verify::kconfig::ConfigError },
    /// A run `rtbuild report` cannot read.
    #[error(transparent)]
    Report(crate::results::report::ReportError),
    #[error("{path}: {message}; pass the bundle's .manifest.json (or the .tar.zst beside it)", path = .path.display())]
    Bundle { path: PathBuf, message: String },
    #[error("no recorded run, bundle or kernel release matches `{0}`; see `rtbuild history list`")]
    NotFound(String),
    #[error("`{0}` matches more than one recorded run; give more characters of the digest")]
    Ambiguous(String),
    #[error("neither --db, RTBUILD_DB, XDG_DATA_HOME nor HOME is set; pass --db sqlite:PATH")]
    NoDefault,
}

impl ErrorCode for HistoryError {
    fn exit(&self) -> Exit {
        match self {
            HistoryError::Db { .. } => Exit::Failed,
            _ => Exit::Usage,
        }
    }
}

/// `report --history URL`: each input the report read (judged alone from that reading, so
/// each is one run as `history add` records it; no file is read again) against the history;
/// nothing is recorded.
pub(crate) fn check_report(
    location: &location::Location,
    options: &crate::results::report::Options,
    reading: &mut crate::results::report::Reading,
    pct: f64,
    wait: Duration,
) -> Result<Vec<crate::formats::history_json::RegressionCheck>, HistoryError> {
    let mut store = store::Store::open_read(location, wait)?;
    let mut checks = Vec::new();
    for at in 0..reading.inputs.len() {
        let report = reading.judge_one(options, at).map_err(HistoryError::Report)?;
        let input = &reading.inputs[at];
        let run = record::from_report(
            &input.path.display().to_string(),
            &report,
            input.run_json.as_ref(),
            None,
        );
        let history = regression::baseline_history(&mut store, &run)?;
        checks.push(regression::check(&run, &history, pct));
    }
    Ok(checks)
}
