//! The one place that decides rtbuild's exit codes.
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | success, every check passed |
//! | 1    | a build, check or verification failed |
//! | 2    | unusable input: bad flags, unknown machine, malformed file |
//! | 130  | interrupted by Ctrl-C / SIGTERM |

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

/// Marks an error as caused by the user's input (exit code 2). Stage errors that are always
/// input errors (`PlanError`, `CatalogError`, …) are recognised by type in [`classify`]; wrap any
/// other error in `InputError` when the input, not the system, is at fault.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct InputError(#[from] pub anyhow::Error);

impl InputError {
    pub fn msg(message: impl std::fmt::Display + Send + Sync + 'static) -> InputError {
        InputError(anyhow::Error::msg(message.to_string()))
    }
}

/// The user interrupted the command (Ctrl-C or SIGTERM).
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// The exit code for an error that ended a command.
pub fn classify(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if cause.is::<Interrupted>() {
            return Exit::Interrupted;
        }
        if cause.is::<InputError>()
            || cause.is::<crate::plan::PlanError>()
            || cause.is::<crate::plan::values::ValueError>()
            || cause.is::<crate::catalog::CatalogError>()
            || cause.is::<crate::target::TargetError>()
            || cause.is::<crate::tune::LayoutError>()
            || cause.is::<crate::generate::GenerateError>()
                && !matches!(
                    cause.downcast_ref::<crate::generate::GenerateError>(),
                    Some(crate::generate::GenerateError::Write(e)) if !e.is_input()
                )
            || cause.downcast_ref::<crate::write::WriteError>().is_some_and(|e| e.is_input())
            || cause.downcast_ref::<crate::lock::LockError>().is_some_and(|e| e.is_input())
            || cause.is::<crate::verify::VerifyError>()
            || cause.is::<crate::doctor::NotReady>()
        {
            return Exit::Usage;
        }
    }
    Exit::Failed
}
