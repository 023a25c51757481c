//! [`TestError`]: why `rtbuild test` stopped before it measured, or could not go on.

use std::path::PathBuf;

use super::{OutError, PreflightError, TraceError};
use crate::error::{ErrorCode, Exit};

#[derive(Debug, thiserror::Error)]
pub(crate) enum TestError {
    /// The result folder cannot be used (exit 2).
    #[error(transparent)]
    Out(#[from] OutError),
    /// The target lacks a tool or a privilege the run needs (exit 2).
    #[error(transparent)]
    Preflight(#[from] PreflightError),
    /// `--trace-above-us` cannot trace on the target (exit 2).
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(
        "could not create {}; make sure you may write there, or pass another --out",
        .path.display()
    )]
    CreateDir {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error(
        "could not write {}; {}",
        .path.display(),
        match crate::files::output::write_fix(.cause) {
            "make sure you may write to that folder" => "make sure you may write to the result folder",
            fix => fix,
        }
    )]
    Save {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// Applying the tuning failed to run.
    #[error(transparent)]
    Tune(#[from] crate::measure::tune::TuneRunError),
}

/// A result file that could not be written: the run's evidence is lost (exit 1).
impl From<crate::files::write::WriteError> for TestError {
    fn from(err: crate::files::write::WriteError) -> TestError {
        let (path, cause) = err.into_io();
        TestError::Save { path, cause }
    }
}

impl ErrorCode for TestError {
    fn exit(&self) -> Exit {
        match self {
            TestError::Out(_) | TestError::Preflight(_) | TestError::Trace(_) => Exit::Usage,
            TestError::CreateDir { .. } | TestError::Save { .. } | TestError::Tune(_) => {
                Exit::Failed
            }
        }
    }
}
