//! Why kas cannot be found, trusted or asked to run.

use std::path::PathBuf;

use super::version::{KasVersion, MIN_KAS, install_hint};

/// Why kas cannot be used or asked to run. A bad `--target`/`--task`/`--bitbake-args` or
/// output folder (`BadToken`) is the user's input (exit 2); the rest exit 1.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KasError {
    #[error("kas was not found on {looked}; {}", install_hint())]
    Missing { looked: String },
    #[error("`{} --version` did not work ({detail}); {}", .program.display(), install_hint())]
    Broken { program: PathBuf, detail: String },
    #[error(
        "kas {version} is too old; rtbuild needs kas {} or newer (found {}); {}",
        MIN_KAS,
        .program.display(),
        install_hint()
    )]
    TooOld { program: PathBuf, version: KasVersion },
    #[error("bad {flag} `{value}`; {expected}")]
    BadToken { flag: &'static str, value: String, expected: &'static str },
    #[error(transparent)]
    Run(#[from] crate::host::runner::RunError),
}

impl KasError {
    /// True when the user's input, not the system, is at fault: a bad value, or a host not set up
    /// for building (no kas, or one too old), which like the preflight's findings exits 2 with
    /// the fix.
    pub(crate) fn is_input(&self) -> bool {
        matches!(
            self,
            KasError::BadToken { .. } | KasError::Missing { .. } | KasError::TooOld { .. }
        )
    }
}

impl crate::error::ErrorCode for KasError {
    fn exit(&self) -> crate::error::Exit {
        use crate::error::Exit;
        if self.is_input() { Exit::Usage } else { Exit::Failed }
    }
}
