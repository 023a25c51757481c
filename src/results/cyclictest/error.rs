//! Parse errors: what went wrong and on which line. The caller ([`super::parse_file`]) adds the
//! path, so messages read `FILE:LINE: problem; fix`.

use std::path::PathBuf;

/// A cyclictest output that cannot be used, with the 1-based line where that became clear.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct ParseError {
    pub line: u64,
    pub kind: ParseErrorKind,
}

#[derive(Debug, thiserror::Error)]
pub enum ParseErrorKind {
    /// The message names the cause, so it is not also a source (it would print twice).
    #[error("read failed: {0}; check that the file is readable")]
    Io(std::io::Error),
    #[error(
        "no cyclictest output found (no `T:` lines, histogram, `-v` samples or JSON); pass a file cyclictest wrote"
    )]
    Empty,
    #[error("invalid cyclictest JSON: {0}; pass the file cyclictest --json wrote")]
    Json(String),
    #[error("JSON has no `thread` object; is this a cyclictest `--json` file?")]
    JsonNoThreads,
    #[error(
        "the histograms hold more than {0} non-zero buckets, more than rtbuild keeps in memory; measure fewer threads or a narrower histogram (-h)"
    )]
    TooManyBuckets(u64),
    #[error(
        "the `-v` samples of thread {thread} hold more than {limit} distinct latency values, more than rtbuild keeps in memory; record microseconds (no -N) or split the run into shorter ones (-l)"
    )]
    TooManyValues { thread: u64, limit: u64 },
    #[error("thread index {0} is out of range (at most {max}); the file is corrupt", max = super::MAX_THREADS - 1)]
    ThreadIndex(u64),
}

impl From<std::io::Error> for ParseErrorKind {
    fn from(cause: std::io::Error) -> ParseErrorKind {
        ParseErrorKind::Io(cause)
    }
}

/// A parse error together with the file it came from.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Missing, unreadable, or not a regular file (a FIFO, a device, a folder, a dangling
    /// symlink); the message names the path and what it is.
    #[error("{cause}")]
    Open { path: PathBuf, cause: OpenError },
    #[error("{}:{}: {}", path.display(), error.line, error.kind)]
    Parse { path: PathBuf, error: ParseError },
}

/// Why a result file could not be opened (missing, unreadable, or not a regular file); its
/// message names the path and what it is.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct OpenError(pub(crate) crate::files::input::InputError);
