//! rtbuild's exit codes, the bottom of every error. It imports nothing from the crate: each error says which code it ends
//! rtbuild with ([`ErrorCode`]), and the one error type commands return reads it off the
//! variant that failed (`crate::cli::error::Error::code`, just's `Error::code()`).
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | success, every check passed |
//! | 1    | a build, check or verification failed |
//! | 2    | unusable input: bad flags, unknown machine, malformed file |
//! | 130  | interrupted by Ctrl-C / SIGTERM |

use std::error::Error;
use std::process::ExitCode;

/// The outcome of a command that ran to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything passed.
    Ok,
    /// The command ran, and a build, check or verdict failed.
    Failed,
    /// The input could not be used.
    Usage,
    /// The user interrupted the command.
    Interrupted,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Interrupted => 130,
        }
    }

    /// `Ok` when `passed`, else `Failed`.
    pub fn from_pass(passed: bool) -> Exit {
        if passed { Exit::Ok } else { Exit::Failed }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// An error that knows the exit code it ends rtbuild with: `Usage` when the user's input is at
/// fault, `Failed` when the system or a tool is. Each stage error implements it next to its
/// definition; the command layer's one error type (`crate::cli::error::Error::code`) reads it off
/// the variant that holds the stage's error.
pub(crate) trait ErrorCode: Error + 'static {
    fn exit(&self) -> Exit;
}

/// The user interrupted the command (Ctrl-C or SIGTERM).
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub(crate) struct Interrupted;

impl ErrorCode for Interrupted {
    fn exit(&self) -> Exit {
        Exit::Interrupted
    }
}
