//! The target: where on-target work runs, this machine or a remote Linux target over the
//! system `ssh` ([`Host`]; the flags are `--local`/`--target`). `tune` and `test` both run
//! their scripts here. (The folder is not called `target`, the name of cargo's build output,
//! which ignore files and code search skip.)
//!
//! Scripts are static text sent on the standard input of `sh -s`; the only things that vary
//! are positional arguments, quoted one by one for the remote shell by [`SshTarget::command`]
//! (with [`crate::text::quote::sh_join`]). Nothing is pasted into a shell string.
//!
//! Every program rtbuild starts, here or through `ssh`, goes through [`runner`] as an argv.
//! [`cpus`] holds the CPU types of a host or board (a validated `CpuSet`; the `CpuLayout` of
//! RT and housekeeping CPUs that the plan, `tune`, `test`, `lava` and `verify` each build).

pub(crate) mod cpus;
mod programs;
pub(crate) mod runner;
mod ssh;

pub(crate) use programs::find_program;

pub(crate) use ssh::{STEP_LIMIT, STEP_OUTPUT_CAP, SshTarget, TargetError};

use std::fmt;

use crate::host::cpus::CpuSet;
use crate::host::runner::{Cmd, RunError, Runner};

/// A host could not be asked about itself.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HostError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(
        "could not read the online CPUs of {host}{}; check the target URL and that ssh reaches it",
        if .stderr.is_empty() { String::new() } else { format!(": {}", .stderr) }
    )]
    Unreachable { host: String, stderr: String },
    #[error(
        "{host} reports online CPUs as `{text}`, which is not a CPU list; check /sys/devices/system/cpu/online there"
    )]
    Online { host: String, text: String },
}

/// This machine, or a remote Linux target over `ssh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    Local,
    Ssh(SshTarget),
}

impl Host {
    /// `sh -s -- ARGS…` here, or `ssh … -- sh -s -- ARGS…` on the target. The script goes on
    /// stdin (see [`Host::run_script`]).
    pub(crate) fn sh<I, S>(&self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut argv: Vec<String> = vec!["sh".into(), "-s".into(), "--".into()];
        argv.extend(args.into_iter().map(|a| a.as_ref().to_string()));
        match self {
            Host::Local => Cmd::new("sh").args(&argv[1..]),
            Host::Ssh(target) => target.command(argv),
        }
    }

    /// Runs `script` with `args` through `runner` and returns its output, whatever the exit
    /// status.
    pub(crate) fn run_script<I, S>(
        &self,
        runner: &dyn Runner,
        script: &str,
        args: I,
    ) -> Result<std::process::Output, RunError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let args: Vec<String> = args.into_iter().map(|a| a.as_ref().to_string()).collect();
        // The helper's subcommand names the step (`--pin CPUS` comes first when pinned).
        let word = args
            .iter()
            .find(|a| !a.starts_with('-') && !a.starts_with(|c: char| c.is_ascii_digit()));
        let what = format!("the step `{}`", word.map_or("sh -s", String::as_str));
        self.feed(runner, &self.sh(&args), script.as_bytes(), &what)
    }

    /// Runs `cmd` (a step on this host named `what`) with `stdin` under the host's limits;
    /// a step of a target that runs past its limit marks the target as stalled
    /// ([`Host::mark_stalled`]).
    pub(crate) fn feed(
        &self,
        runner: &dyn Runner,
        cmd: &Cmd,
        stdin: &[u8],
        what: &str,
    ) -> Result<std::process::Output, RunError> {
        let limits = match self {
            Host::Local => crate::host::runner::Limits {
                step: format!("{what} on this machine"),
                time: STEP_LIMIT,
                bytes: STEP_OUTPUT_CAP,
            },
            Host::Ssh(target) => target.limits(what),
        };
        let output = runner.feed(cmd, stdin, &limits);
        if matches!(output, Err(RunError::TimedOut { .. })) {
            self.mark_stalled();
        }
        output
    }

    /// Whether a step on this target ran past its limit in this command.
    pub(crate) fn stalled(&self) -> bool {
        matches!(self, Host::Ssh(target) if target.stalled.is_set())
    }

    /// A step on this target ran past its limit (or a measurement past its length and the
    /// limit): the steps still owed to it get [`ssh::AFTER_STALL`] each.
    pub(crate) fn mark_stalled(&self) {
        if let Host::Ssh(target) = self {
            target.stalled.mark();
        }
    }

    /// The CPUs the host has online (`/sys/devices/system/cpu/online`, under `RTBUILD_SYSROOT`
    /// when it is set locally).
    pub(crate) fn online_cpus(&self, runner: &dyn Runner) -> Result<CpuSet, HostError> {
        let script = "cat \"${RTBUILD_SYSROOT:-}/sys/devices/system/cpu/online\"\n";
        let out = self.run_script(runner, script, std::iter::empty::<&str>())?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(HostError::Unreachable {
                host: self.to_string(),
                stderr: crate::text::shown_tail(&String::from_utf8_lossy(&out.stderr), 5),
            });
        }
        CpuSet::parse(text.trim()).map_err(|_| HostError::Online {
            host: self.to_string(),
            text: crate::text::shown(&text.trim().chars().take(80).collect::<String>()),
        })
    }

    /// How long one step on the host may take (`--target-timeout`, default [`STEP_LIMIT`]).
    pub(crate) fn step_limit(&self) -> std::time::Duration {
        match self {
            Host::Local => STEP_LIMIT,
            Host::Ssh(target) => target.step_limit,
        }
    }

    /// ssh exits 255 when it could not connect or the connection dropped.
    pub(crate) fn connection_lost(&self, status: &std::process::ExitStatus) -> bool {
        matches!(self, Host::Ssh(_)) && status.code() == Some(255)
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Local => f.write_str("this machine"),
            Host::Ssh(target) => write!(f, "{target}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_script_arguments_are_quoted_one_by_one() {
        let host = Host::Ssh(SshTarget::parse("ssh://root@board:2222").unwrap());
        let argv = host.sh(["apply", "$(reboot)"]).argv();
        assert_eq!(argv.last().unwrap(), "sh -s -- apply '$(reboot)'");
        assert_eq!(argv[argv.len() - 2], "--");
    }

    #[test]
    fn local_scripts_run_without_a_shell_string() {
        let out = Host::Local
            .run_script(&crate::host::runner::System, "printf '%s|' \"$@\"", ["a b", "$(echo x)"])
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a b|$(echo x)|");
    }

    /// A script goes to the runner as `sh -s -- ARGS` with the script on stdin: a recording
    /// runner sees the argv and answers, so nothing runs.
    #[test]
    fn a_script_goes_through_the_runner_recorded_by_a_fake() {
        let recorder = crate::host::runner::Recorder::new("0-3\n", 0);
        let host = Host::Ssh(SshTarget::parse("ssh://root@board").unwrap());
        assert_eq!(host.online_cpus(&recorder).unwrap(), CpuSet::parse("0-3").unwrap());
        let argvs = recorder.argvs();
        assert_eq!(argvs.len(), 1);
        assert_eq!(argvs[0].first().map(String::as_str), Some("ssh"));
        assert_eq!(argvs[0].last().map(String::as_str), Some("sh -s --"));
    }
}
