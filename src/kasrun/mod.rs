//! The build stage: generated kas file → `kas build` → BitBake → artifacts.
//!
//! 1. [`kas::find`] finds kas and checks its version;
//! 2. [`command::BuildSpec`] validates targets, task and BitBake arguments, and
//!    [`caches::CacheSettings`] the shared-cache flags;
//! 3. [`BuildPaths`] places the work folder (shared repos, downloads, sstate) and the per-machine
//!    build folder;
//! 4. [`run::build`] writes `caches.yml`, runs kas through [`crate::runner`] with BitBake's
//!    output folded into a [`tracker::Tracker`] that drives the progress display, and returns a
//!    [`report::BuildResult`] naming the failed tasks or the image and qcomflash folder.

pub(crate) mod after;
pub(crate) mod caches;
pub(crate) mod command;
mod display;
pub(crate) mod events;
pub(crate) mod kas;
mod paths;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod setup;
pub(crate) mod tracker;

pub(crate) use paths::{BuildPaths, check_writable};

use std::path::PathBuf;

use kas::KasVersion;

/// Why a build could not be started or run. Input problems (`BadSetting`, `BadToken`) exit 2;
/// the rest exit 1.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildError {
    #[error("kas was not found on {looked}; {}", kas::install_hint())]
    KasMissing { looked: String },
    #[error("`{} --version` did not work ({detail}); {}", .program.display(), kas::install_hint())]
    KasBroken { program: PathBuf, detail: String },
    #[error(
        "kas {version} is too old; rtbuild needs kas {} or newer (found {}); {}",
        kas::MIN_KAS,
        .program.display(),
        kas::install_hint()
    )]
    KasTooOld { program: PathBuf, version: KasVersion },
    #[error("bad {flag} `{value}`; expected {expected}")]
    BadSetting { flag: &'static str, value: String, expected: &'static str },
    #[error("bad {flag} `{value}`; {expected}")]
    BadToken { flag: &'static str, value: String, expected: &'static str },
    #[error("cannot write {}: {cause}; choose a writable output folder with --out", .path.display())]
    Unwritable { path: PathBuf, cause: std::io::Error },
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
}

impl BuildError {
    /// True when the user's input, not the system, is at fault.
    pub(crate) fn is_input(&self) -> bool {
        matches!(self, BuildError::BadSetting { .. } | BuildError::BadToken { .. })
    }
}

impl crate::exit::ErrorCode for BuildError {
    fn exit(&self) -> crate::exit::Exit {
        use crate::exit::Exit;
        if self.is_input() { Exit::Usage } else { Exit::Failed }
    }
}
