//! Reading cyclictest output: every format rt-tests 2.x writes, detected by content, streamed in
//! constant memory. This is the first stage of `rtbuild report` and the validity check of
//! `rtbuild test`.
//!
//! Entry points:
//! - [`parse_file`]`(path) -> Result<ResultFile, FileError>`: open, detect, parse; errors name the
//!   file and line.
//! - [`parse`]`(reader)`: the same for any `BufRead`.
//!
//! Formats (see `docs/report.md`): `--json` (first non-blank byte is `{`), and in one text pass
//! `-v` samples, `-q` / live `T:` lines (ANSI redraws: the last block counts), `-h`/`-H`
//! histograms (full rows with `# Total:` before rt-tests 2.7, sparse rows after), `--spike`
//! lines and `# Break` lines. A [`ResultFile`] lists the formats seen, one [`Thread`] per measurement
//! thread (cycles, cyclictest's min/avg/max, the histogram with its overflow count) and the
//! warnings for lines it had to skip.
//!
//! ```no_run
//! let run = rtbuild::cyclictest::parse_file(std::path::Path::new("cyclictest.txt"))?;
//! for thread in &run.threads {
//!     println!("thread {}: {} samples, {} overflows", thread.index, thread.samples(), thread.overflows());
//! }
//! # Ok::<(), rtbuild::cyclictest::FileError>(())
//! ```

mod error;
mod hist;
mod json;
mod lines;
mod model;
mod split;
pub(crate) mod status;
mod summary;
mod text;
mod verbose;

pub use error::{FileError, OpenError, ParseError, ParseErrorKind};
pub use json::histogram_size;
pub use lines::for_each_line;
pub use model::{
    BlockMaxima, Break, Format, Histogram, MAX_WARNINGS, ResultFile, Thread, Unit, Warning,
};
pub use verbose::{Sample, parse_line as parse_verbose_line};

use std::io::BufRead;
use std::path::Path;

/// Thread indexes at or above this are treated as corruption (cyclictest allows one per CPU).
pub const MAX_THREADS: u64 = 4096;

/// Reader buffer for files: large reads keep the `-v` hot path fast, and each one is long enough
/// to be counted on every core.
const BUFFER: usize = 4 << 20;

/// Parses the cyclictest output in `path`, whatever its format.
pub fn parse_file(path: &Path) -> Result<ResultFile, FileError> {
    // Opened without blocking and checked to be a regular file: a FIFO or `/dev/zero` is
    // refused here, never read.
    let (file, _) = crate::files::input::open(path)
        .map_err(|cause| FileError::Open { path: path.to_path_buf(), cause: OpenError(cause) })?;
    parse(std::io::BufReader::with_capacity(BUFFER, file))
        .map_err(|error| FileError::Parse { path: path.to_path_buf(), error })
}

/// [`parse_file`] of a file the one sniffer ([`crate::results::input`]) opened already: the
/// rest of it is read, the path is not opened again.
pub(crate) fn parse_opened(opened: crate::files::input::Opened) -> Result<ResultFile, FileError> {
    let path = opened.path().to_path_buf();
    parse(std::io::BufReader::with_capacity(BUFFER, opened.into_reader()))
        .map_err(|error| FileError::Parse { path, error })
}

/// Parses cyclictest output from `reader`, detecting the format from its content.
pub fn parse(mut reader: impl BufRead) -> Result<ResultFile, ParseError> {
    let first = loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(ParseError { line: 1, kind: ParseErrorKind::Io(err) }),
        };
        if buf.is_empty() {
            break None;
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(at) => break Some(buf[at]),
            // Only whitespace so far; keep it (line numbers) by reading on through the text path.
            None => break Some(b' '),
        }
    };
    match first {
        None => Err(ParseError { line: 1, kind: ParseErrorKind::Empty }),
        Some(b'{') => json::parse_json(reader),
        Some(_) => text::parse_text(reader),
    }
}

#[cfg(test)]
mod fast_path_tests;
#[cfg(test)]
mod tests;
