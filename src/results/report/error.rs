//! Why a report cannot be made from its inputs: every reader of a measurement says it with
//! [`ReportError`].

use std::path::PathBuf;

use crate::catalog::latency::{MAX_THRESHOLD_US, MIN_THRESHOLD_US};

/// Input problems: unreadable files, malformed cyclictest output, bad `run.json`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReportError {
    #[error(transparent)]
    Parse(#[from] crate::results::cyclictest::FileError),
    /// A FIFO, device, folder, dangling symlink, missing or too big a file.
    #[error(transparent)]
    Input(#[from] crate::files::input::InputError),
    #[error("{} has no run.json; pass an `rtbuild test` result folder or the cyclictest output files themselves", dir.display())]
    NoRunJson { dir: PathBuf },
    #[error("{} is not a valid run.json: {cause}; see docs/report.md for the fields read", path.display())]
    RunJson { path: PathBuf, cause: crate::formats::FormatError },
    #[error("{} lists no scenarios; nothing to report", path.display())]
    NoScenarios { path: PathBuf },
    #[error("{} names `{}`, which is outside the result folder; use paths relative to the folder", path.display(), file.display())]
    OutsideFolder { path: PathBuf, file: PathBuf },
    /// A link in a result folder could point anywhere (`/etc/shadow`, `/dev/zero`): not read.
    #[error(
        "{}: `{}` is a symlink to `{}`; rtbuild reads no symlinks in a result folder, which could point anywhere; copy the file itself into the folder",
        dir.display(), crate::text::shown_path(file), crate::text::shown_path(target)
    )]
    LinkInFolder { dir: PathBuf, file: PathBuf, target: PathBuf },
    #[error("{} names {what}, more than a result folder of `rtbuild test` holds; report the raw files one by one, or split the folder", path.display())]
    FolderTooBig { path: PathBuf, what: String },
    #[error("{}: {cause}", path.display())]
    LavaLog { path: PathBuf, cause: crate::lab::LogError },
    #[error(
        "threshold {} µs ({from}) is not usable: it must be a number of microseconds from \
         {MIN_THRESHOLD_US} (1 ns) to {MAX_THRESHOLD_US} (1 s); pass --threshold-us with a latency limit such as 100",
        shown_number(*.value)
    )]
    Threshold { value: f64, from: String },
    #[error(
        "noise limit {} µs is not usable; pass --noise-us with a number of microseconds from {MIN_THRESHOLD_US} (1 ns) to {MAX_THRESHOLD_US} (1 s), such as 20",
        shown_number(*.0)
    )]
    Noise(f64),
    #[error("{} has a bad `tests` entry: {cause}; see docs/report.md for the fields read", path.display())]
    RunJsonTest { path: PathBuf, cause: crate::measure::rttests::TestsError },
    #[error(transparent)]
    Output(#[from] crate::measure::rttests::output::OutputError),
    #[error("baseline {}: {}",
        path.display(),
        crate::text::ui::with_fix(&.cause.to_string(), "pass an earlier result folder or report JSON as --baseline"))]
    Baseline { path: PathBuf, cause: Box<ReportError> },
    #[error("baseline {}: {}",
        path.display(),
        crate::text::ui::with_fix(&.cause.to_string(), "pass an earlier result folder or report JSON as --baseline"))]
    BaselineJson { path: PathBuf, cause: crate::formats::FormatError },
    #[error(
        "the inputs were measured on different boards ({boards}): one report compares every figure with one board's reference and requirement; run `rtbuild report` once per board"
    )]
    MixedBoards { boards: String },
}

/// A number as a user wrote it, short: `1.72e308` or `1e-320`, not 309 or 320 digits.
pub(super) fn shown_number(value: f64) -> String {
    if value.is_finite() && (value == 0.0 || (1e-6..1e15).contains(&value.abs())) {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}
