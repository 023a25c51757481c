//! The [`Runner`] seam: stages that drive tools take `&dyn Runner`, so tests can swap the real
//! [`System`] runner for a `Recorder` (compiled into unit tests only) that notes each command
//! line and replays canned output.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use super::{Background, ChildExit, Cmd, Limits, RunError};

/// Starts processes for a stage.
pub(crate) trait Runner {
    /// Runs `cmd`, streaming each output line to `on_line` and to `log` (see
    /// [`super::run_streaming`]).
    fn stream(
        &self,
        cmd: &Cmd,
        log: Option<&Path>,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<ChildExit, RunError>;

    /// Runs `cmd` on the user's terminal.
    fn interactive(&self, cmd: &Cmd) -> Result<ChildExit, RunError>;

    /// Runs `cmd` to completion and captures its output, whatever its exit status.
    fn capture(&self, cmd: &Cmd) -> Result<Output, RunError>;

    /// Like [`Runner::capture`], with `stdin` as its input (a script fed to `sh -s`, locally
    /// or over ssh) and within `limits` (see [`super::output_within`]).
    fn feed(&self, cmd: &Cmd, stdin: &[u8], limits: &Limits) -> Result<Output, RunError>;

    /// Best-effort work that must not hang: `cmd`'s stdout when it exited 0 within `limit`
    /// (see [`super::stdout_within`]).
    fn within(&self, cmd: &Cmd, stdin: &[u8], limit: Duration) -> Option<Vec<u8>>;

    /// Starts `cmd` in the background, in its own process group, its output going to files
    /// (see [`super::start_in_own_group`]).
    fn start(
        &self,
        cmd: &Cmd,
        stdin: &[u8],
        stdout: &Path,
        stderr: &Path,
    ) -> std::io::Result<Background>;
}

/// The real thing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct System;

impl Runner for System {
    fn stream(
        &self,
        cmd: &Cmd,
        log: Option<&Path>,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<ChildExit, RunError> {
        super::run_streaming(cmd, log, on_line)
    }

    fn interactive(&self, cmd: &Cmd) -> Result<ChildExit, RunError> {
        super::run_interactive(cmd)
    }

    fn capture(&self, cmd: &Cmd) -> Result<Output, RunError> {
        super::output_unchecked(cmd)
    }

    fn feed(&self, cmd: &Cmd, stdin: &[u8], limits: &Limits) -> Result<Output, RunError> {
        super::output_within(cmd, stdin, limits)
    }

    fn within(&self, cmd: &Cmd, stdin: &[u8], limit: Duration) -> Option<Vec<u8>> {
        super::stdout_within(cmd, stdin, limit)
    }

    fn start(
        &self,
        cmd: &Cmd,
        stdin: &[u8],
        stdout: &Path,
        stderr: &Path,
    ) -> std::io::Result<Background> {
        super::start_in_own_group(cmd, stdin, stdout, stderr)
    }
}

/// One command a [`Recorder`] was asked to run.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recorded {
    pub(crate) cmd: Cmd,
    pub(crate) kind: &'static str,
}

/// A fake runner: records commands and answers each with the same canned output and exit code.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) output: String,
    pub(crate) code: i32,
    pub(crate) calls: std::sync::Mutex<Vec<Recorded>>,
}

#[cfg(test)]
impl Recorder {
    pub(crate) fn new(output: &str, code: i32) -> Recorder {
        Recorder { output: output.to_string(), code, calls: std::sync::Mutex::new(Vec::new()) }
    }

    /// The argv of every command run so far.
    pub(crate) fn argvs(&self) -> Vec<Vec<String>> {
        self.calls.lock().map(|c| c.iter().map(|r| r.cmd.argv()).collect()).unwrap_or_default()
    }

    fn record(&self, cmd: &Cmd, kind: &'static str) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(Recorded { cmd: cmd.clone(), kind });
        }
    }
}

#[cfg(test)]
impl Runner for Recorder {
    fn stream(
        &self,
        cmd: &Cmd,
        _log: Option<&Path>,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<ChildExit, RunError> {
        self.record(cmd, "stream");
        self.output.lines().for_each(on_line);
        Ok(ChildExit::exited(self.code))
    }

    fn interactive(&self, cmd: &Cmd) -> Result<ChildExit, RunError> {
        self.record(cmd, "interactive");
        Ok(ChildExit::exited(self.code))
    }

    fn capture(&self, cmd: &Cmd) -> Result<Output, RunError> {
        self.record(cmd, "capture");
        Ok(self.canned())
    }

    fn feed(&self, cmd: &Cmd, _stdin: &[u8], _limits: &Limits) -> Result<Output, RunError> {
        self.record(cmd, "feed");
        Ok(self.canned())
    }

    fn within(&self, cmd: &Cmd, _stdin: &[u8], _limit: Duration) -> Option<Vec<u8>> {
        self.record(cmd, "within");
        (self.code == 0).then(|| self.output.clone().into_bytes())
    }

    /// A recorder starts nothing: the command is noted and starting it fails.
    fn start(
        &self,
        cmd: &Cmd,
        _stdin: &[u8],
        _stdout: &Path,
        _stderr: &Path,
    ) -> std::io::Result<Background> {
        self.record(cmd, "start");
        Err(std::io::Error::other("a Recorder starts no background process"))
    }
}

#[cfg(test)]
impl Recorder {
    /// The canned output, as a finished process with the canned exit code.
    fn canned(&self) -> Output {
        use std::os::unix::process::ExitStatusExt;
        Output {
            status: std::process::ExitStatus::from_raw(self.code << 8),
            stdout: self.output.clone().into_bytes(),
            stderr: Vec::new(),
        }
    }
}
