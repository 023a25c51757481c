//! Why a build could not be started or run.

use std::path::PathBuf;

use crate::image::kas::KasError;

/// Why a build could not be started or run. Input problems (`BadSetting`, and kas's
/// `BadToken`) exit 2; the rest exit 1.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildError {
    #[error(transparent)]
    Kas(#[from] KasError),
    #[error("bad {flag} `{value}`; expected {expected}")]
    BadSetting { flag: &'static str, value: String, expected: &'static str },
    #[error("cannot write {}: {cause}; choose a writable output folder with --out", .path.display())]
    Unwritable { path: PathBuf, cause: std::io::Error },
    #[error(transparent)]
    Run(#[from] crate::host::runner::RunError),
}

impl BuildError {
    /// True when the user's input, not the system, is at fault.
    pub(crate) fn is_input(&self) -> bool {
        match self {
            BuildError::Kas(e) => e.is_input(),
            BuildError::BadSetting { .. } => true,
            BuildError::Unwritable { .. } | BuildError::Run(_) => false,
        }
    }
}

/// The shared atomic writer's failures are an unwritable output folder.
impl From<crate::files::write::WriteError> for BuildError {
    fn from(err: crate::files::write::WriteError) -> BuildError {
        let (path, source) = err.into_io();
        BuildError::Unwritable { path, cause: source }
    }
}

impl crate::error::ErrorCode for BuildError {
    fn exit(&self) -> crate::error::Exit {
        use crate::error::Exit;
        if self.is_input() { Exit::Usage } else { Exit::Failed }
    }
}
