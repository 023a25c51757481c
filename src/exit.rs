//! The one place that decides rtbuild's exit codes. It imports nothing from the crate: each
//! error says which code it ends rtbuild with ([`ErrorCode`], just's `Error::code()`), and
//! [`classify`] reads that off the error chain.
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
/// fault, `Failed` when the system or a tool is (then [`classify`] keeps looking down the
/// chain). Each stage error implements it next to its definition.
pub(crate) trait ErrorCode: Error + 'static {
    fn exit(&self) -> Exit;
}

/// Reads the exit code of one error type off a type-erased cause, for [`classify`]: anyhow
/// erases the type, so the trait is reached through a downcast to the concrete type.
pub(crate) type CodeOf = fn(&(dyn Error + 'static)) -> Option<Exit>;

/// The [`CodeOf`] for error type `E`.
pub(crate) fn code_of<E: ErrorCode>(cause: &(dyn Error + 'static)) -> Option<Exit> {
    cause.downcast_ref::<E>().map(ErrorCode::exit)
}

/// Marks an error as caused by the user's input (exit code 2). Stage errors say so themselves
/// ([`ErrorCode`]); wrap any other error in `InputError` when the input, not the system, is at
/// fault.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct InputError(#[from] pub anyhow::Error);

impl InputError {
    pub(crate) fn msg(message: impl std::fmt::Display + Send + Sync + 'static) -> InputError {
        InputError(anyhow::Error::msg(message.to_string()))
    }
}

impl ErrorCode for InputError {
    fn exit(&self) -> Exit {
        Exit::Usage
    }
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

/// The exit code for an error that ended a command: the first cause in its chain that says
/// `Interrupted` or `Usage` decides; otherwise `Failed`. `codes` reads the code of each error
/// type that carries one (`InputError` and `Interrupted` are always read).
pub(crate) fn classify(err: &anyhow::Error, codes: &[CodeOf]) -> Exit {
    let own: [CodeOf; 2] = [code_of::<Interrupted>, code_of::<InputError>];
    for cause in err.chain() {
        let said = own.iter().chain(codes).find_map(|code| code(cause));
        if let Some(exit @ (Exit::Interrupted | Exit::Usage)) = said {
            return exit;
        }
    }
    Exit::Failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("bad input")]
    struct BadInput;
    impl ErrorCode for BadInput {
        fn exit(&self) -> Exit {
            Exit::Usage
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("disk full")]
    struct DiskFull;
    impl ErrorCode for DiskFull {
        fn exit(&self) -> Exit {
            Exit::Failed
        }
    }

    const CODES: &[CodeOf] = &[code_of::<BadInput>, code_of::<DiskFull>];

    #[test]
    fn an_error_that_says_usage_anywhere_in_the_chain_is_exit_2() {
        let err = anyhow::Error::new(BadInput).context("while planning");
        assert_eq!(classify(&err, CODES), Exit::Usage);
    }

    #[test]
    fn a_failed_cause_does_not_hide_a_usage_cause_below_it() {
        let err = anyhow::Error::new(BadInput).context(DiskFull);
        assert_eq!(classify(&err, CODES), Exit::Usage);
    }

    #[test]
    fn unknown_and_failed_errors_are_exit_1() {
        assert_eq!(classify(&anyhow::anyhow!("boom"), CODES), Exit::Failed);
        assert_eq!(classify(&anyhow::Error::new(DiskFull), CODES), Exit::Failed);
    }

    #[test]
    fn an_error_type_not_listed_is_not_read() {
        assert_eq!(classify(&anyhow::Error::new(BadInput), &[]), Exit::Failed);
    }

    #[test]
    fn input_error_and_interrupted_need_no_listing() {
        assert_eq!(classify(&InputError::msg("x").into(), &[]), Exit::Usage);
        assert_eq!(classify(&anyhow::Error::new(Interrupted), &[]), Exit::Interrupted);
    }
}
