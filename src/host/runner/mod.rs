//! Every subprocess rtbuild starts goes through here: a [`Cmd`] is an argv vector with its
//! environment and working folder, run through duct. Nothing is ever passed to a local shell.

mod background;
mod bounded;
mod cmd;
mod seam;
pub(crate) mod signals;
mod stream;

pub(crate) use background::{Background, start_in_own_group, stdout_within};
pub(crate) use bounded::{Limits, output_within};
pub(crate) use cmd::Cmd;
#[cfg(test)]
pub(crate) use seam::Recorder;
pub(crate) use seam::{Runner, System};
pub(crate) use stream::{ChildExit, run_interactive, run_streaming};

use std::path::PathBuf;
use std::process::Output;

/// A subprocess could not be started or failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("`{program}` was not found on PATH; {hint}")]
    NotFound { program: String, hint: String },
    #[error("could not start `{cmd}`: {cause}; check that it is installed and on PATH")]
    Spawn { cmd: String, cause: std::io::Error },
    #[error("cannot write the log file {}: {cause}; choose a writable build folder", path.display())]
    Log { path: PathBuf, cause: std::io::Error },
    #[error(
        "{step} did not finish within {seconds} s and was stopped; check that the target is up and answering, or allow more time with --target-timeout"
    )]
    TimedOut { step: String, seconds: f64 },
    #[error(
        "{step} printed more than {} MiB and was stopped; check what runs on the target (a program that floods its output)",
        .bytes >> 20
    )]
    Flooded { step: String, bytes: usize },
    #[error("`{cmd}` failed with {status}; {}{}", status_fix(.tail, .log.as_deref()), tail_block(.tail))]
    Status { cmd: String, status: String, tail: String, log: Option<PathBuf> },
}

/// Where a failed command says why: its log, the last lines of its output shown under the
/// error, or, when it printed nothing, the command itself run by hand.
fn status_fix(tail: &str, log: Option<&std::path::Path>) -> String {
    match log {
        Some(log) => format!("its log {} says why", crate::text::shown_path(log)),
        None if !tail.trim().is_empty() => "its last lines, below, say why".to_string(),
        None => "it printed nothing: run it by hand to see why".to_string(),
    }
}

fn tail_block(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        let rule = "-".repeat(60);
        format!("\n{rule}\n{}\n{rule}", tail.trim_end())
    }
}

/// Runs `cmd` to completion, capturing stdout and stderr. A non-zero exit is an error that
/// carries the last lines of stderr.
#[cfg(test)]
pub(crate) fn run_captured(cmd: &Cmd) -> Result<Output, RunError> {
    check_status(cmd, output_unchecked(cmd)?)
}

/// `cmd`'s captured `output` when it exited 0; else the error [`run_captured`] gives, with the
/// last lines of stderr (for output captured through a [`Runner`]).
pub(crate) fn check_status(cmd: &Cmd, output: Output) -> Result<Output, RunError> {
    if output.status.success() {
        Ok(output)
    } else {
        Err(RunError::Status {
            cmd: cmd.to_string(),
            status: describe_status(&output.status),
            tail: last_lines(&String::from_utf8_lossy(&output.stderr), 20),
            log: None,
        })
    }
}

/// Runs `cmd` to completion and returns its output whatever the exit status.
pub(crate) fn output_unchecked(cmd: &Cmd) -> Result<Output, RunError> {
    let expression = cmd.to_duct().stdout_capture().stderr_capture().stdin_null().unchecked();
    wait_in_foreground(cmd, &expression)
}

/// Starts `expression` and waits for it, passing a signal rtbuild receives meanwhile on to it
/// (see [`signals::Foreground`]): an ssh step never outlives rtbuild.
fn wait_in_foreground(cmd: &Cmd, expression: &duct::Expression) -> Result<Output, RunError> {
    let handle = expression.start().map_err(|source| cmd.spawn_error(source))?;
    let _passed_on = signals::Foreground::new(&handle.pids());
    handle.into_output().map_err(|source| cmd.spawn_error(source))
}

/// `exit code 3`, or `signal 9` when the process was killed.
pub(crate) fn describe_status(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "an unknown status".to_string(),
    }
}

/// The last `n` lines of `text`.
pub(crate) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
