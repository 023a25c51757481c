//! [`LockError`]: everything that can go wrong reading, writing or checking a lock.

use std::path::PathBuf;

use crate::host::runner::RunError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    /// A FIFO, device, folder, dangling symlink or too big a file.
    #[error(transparent)]
    Input(crate::files::input::InputError),
    #[error("lock file {} is not valid YAML: {cause}; fix it, or write it again with `rtbuild lock`", path.display())]
    Yaml { path: PathBuf, cause: serde_yaml::Error },
    #[error("lock file {} {problem}; {fix}", path.display())]
    Shape { path: PathBuf, problem: String, fix: &'static str },
    #[error(
        "lock file {}: repo `{repo}` has commit `{value}`; a pin must be the full 40-digit hex \
         commit id (git rev-parse <ref>)",
        path.display()
    )]
    BadCommit { path: PathBuf, repo: String, value: String },
    #[error(
        "lock file {}: `{repo}` is not a valid repo name; use letters, digits, `.`, `_` and `-`",
        path.display()
    )]
    BadName { path: PathBuf, repo: String },
    #[error("lock file {}: unknown repo `{repo}`; {hint}", path.display())]
    UnknownRepo { path: PathBuf, repo: String, hint: String },
    #[error("unknown repo `{repo}` to update; the lock pins {known}")]
    UnknownUpdate { repo: String, known: String },
    #[error("no lock file at {}; run `rtbuild lock --machine <machine>` first", path.display())]
    NoLock { path: PathBuf },
    #[error("no kas file at {}; run `rtbuild generate --machine <machine>` first", path.display())]
    NoKasFile { path: PathBuf },
    #[error(
        "repo `{repo}` is not checked out at {}; run `kas checkout` (or `rtbuild image`) with \
         this work folder first, or pass --work-dir",
        path.display()
    )]
    NotCheckedOut { repo: String, path: PathBuf },
    #[error("git failed on `{repo}` ({}): {cause}; check that the checkout is a healthy git repository", path.display())]
    Git { repo: String, path: PathBuf, cause: git2::Error },
    #[error("repo `{repo}` has no branch to update from; {fix}")]
    NoBranch { repo: String, fix: &'static str },
    #[error(
        "kas could not read the build configuration; run `kas dump` on the kas file to see why"
    )]
    Kas(#[source] RunError),
    #[error("could not fetch `{repo}`; check the network and the repository URL")]
    Fetch {
        repo: String,
        #[source]
        source: RunError,
    },
    #[error(
        "`kas dump` printed something rtbuild cannot read: {message}; use kas 5.5 (`rtbuild setup`)"
    )]
    KasOutput { message: String },
    #[error(
        "`kas dump` printed something rtbuild cannot read: {cause}; use kas 5.5 (`rtbuild setup`)"
    )]
    KasJson { cause: serde_json::Error },
    #[error("cannot write {}: {cause}; {}", path.display(), crate::files::output::write_fix(.cause))]
    Write { path: PathBuf, cause: std::io::Error },
}

impl From<crate::files::write::WriteError> for LockError {
    fn from(err: crate::files::write::WriteError) -> LockError {
        let (path, source) = err.into_io();
        LockError::Write { path, cause: source }
    }
}

impl crate::error::ErrorCode for LockError {
    fn exit(&self) -> crate::error::Exit {
        use crate::error::Exit;
        if self.is_input() { Exit::Usage } else { Exit::Failed }
    }
}

impl LockError {
    /// The user's input (a lock file, a repo name, a missing generated file) is at fault:
    /// exit code 2.
    pub(crate) fn is_input(&self) -> bool {
        matches!(
            self,
            LockError::Input(_)
                | LockError::Yaml { .. }
                | LockError::Shape { .. }
                | LockError::BadCommit { .. }
                | LockError::BadName { .. }
                | LockError::UnknownRepo { .. }
                | LockError::UnknownUpdate { .. }
                | LockError::NoLock { .. }
                | LockError::NoKasFile { .. }
        )
    }
}
