//! [`SshTarget`]: a remote Linux target reached with the system `ssh`.
//!
//! Remote commands are built as argv vectors; the single string `ssh` hands to the remote shell
//! is made with [`crate::text::quote::sh_join`], so no argument can break out of its quotes.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::host::runner::Cmd;
use crate::text::quote;

/// A target given as `ssh://user@host[:port]` could not be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum TargetError {
    #[error("target `{0}` is not an ssh URL; write it as ssh://user@host[:port]")]
    NotSsh(String),
    #[error(
        "target `{url}` has an invalid {part} `{value}`; use letters, digits, `.`, `-` and `_`"
    )]
    BadPart { url: String, part: &'static str, value: String },
    #[error("target `{url}` has an invalid port `{port}`; use a number from 1 to 65535")]
    BadPort { url: String, port: String },
    #[error(
        "the target's {part} is {length} characters long, more than a {part} can be ({limit}); check the target URL"
    )]
    TooLong { part: &'static str, length: usize, limit: usize },
}

/// The longest host name DNS allows.
const MAX_HOST: usize = 253;
/// The longest user name Linux allows (`LOGIN_NAME_MAX` less its NUL).
const MAX_USER: usize = 255;

/// Always the user's input (exit 2).
impl crate::error::ErrorCode for TargetError {
    fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Usage
    }
}

/// A remote target reached with the system `ssh`, host-key checking left on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SshTarget {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// Passed to ssh as `-F FILE` (jump hosts, keys, known_hosts, tests).
    pub ssh_config: Option<PathBuf>,
    /// How long one step on the target may take (`--target-timeout`).
    pub step_limit: Duration,
    /// Set once a step on the target ran past its limit: shared by every copy of the target.
    pub stalled: Stalled,
}

/// Whether a step on a target has run past its limit in this command. Once one has, the
/// target has stopped answering: the steps still owed to it (the cleanup, the revert of the
/// tuning) each get [`AFTER_STALL`] at most, so a dead board costs one step limit and a few
/// short tries, not the full limit again for every step.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stalled(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Stalled {
    pub(crate) fn mark(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub(crate) fn is_set(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Two targets are the same target whatever happened on them.
impl PartialEq for Stalled {
    fn eq(&self, _: &Stalled) -> bool {
        true
    }
}

impl Eq for Stalled {}

/// The most a step may take on a target that has already let one step run past its limit.
pub(crate) const AFTER_STALL: Duration = Duration::from_secs(10);

/// How long one on-target step may take unless `--target-timeout` says otherwise.
pub(crate) const STEP_LIMIT: Duration = Duration::from_secs(120);

/// How much of a step's stdout (and of its stderr) is kept; past that the step is stopped.
pub(crate) const STEP_OUTPUT_CAP: usize = 16 << 20;

impl SshTarget {
    /// Parses `ssh://[user@]host[:port]`.
    pub(crate) fn parse(url: &str) -> Result<SshTarget, TargetError> {
        let rest =
            url.strip_prefix("ssh://").ok_or_else(|| TargetError::NotSsh(url.to_string()))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (user, hostport) = match rest.split_once('@') {
            Some((user, hostport)) => (Some(user), hostport),
            None => (None, rest),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        };
        let word_ok = |s: &str| {
            !s.is_empty()
                && !s.starts_with('-')
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        };
        for (part, value, limit) in
            [("user", user.unwrap_or(""), MAX_USER), ("host", host, MAX_HOST)]
        {
            // Before anything echoes it: a 100 KB user gave a 100 KB error line.
            if value.len() > limit {
                return Err(TargetError::TooLong { part, length: value.chars().count(), limit });
            }
        }
        if let Some(user) = user
            && !word_ok(user)
        {
            return Err(TargetError::BadPart { url: url.into(), part: "user", value: user.into() });
        }
        if !word_ok(host) {
            return Err(TargetError::BadPart { url: url.into(), part: "host", value: host.into() });
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(TargetError::BadPort { url: url.into(), port: p.into() }),
            },
        };
        Ok(SshTarget {
            user: user.map(str::to_string),
            host: host.to_string(),
            port,
            ssh_config: None,
            step_limit: STEP_LIMIT,
            stalled: Stalled::default(),
        })
    }

    pub(crate) fn with_ssh_config(mut self, file: Option<PathBuf>) -> SshTarget {
        self.ssh_config = file;
        self
    }

    /// Each step on the target may take `seconds` (default [`STEP_LIMIT`]).
    pub(crate) fn with_step_limit(mut self, seconds: Option<u64>) -> SshTarget {
        self.step_limit = seconds.map_or(STEP_LIMIT, Duration::from_secs);
        self
    }

    /// The limits of the step `what` (`` `uname -r` ``) on this target: `--target-timeout`,
    /// or [`AFTER_STALL`] once an earlier step ran past it (the step's name says so).
    pub(crate) fn limits(&self, what: &str) -> crate::host::runner::Limits {
        let (time, step) = if self.stalled.is_set() && self.step_limit > AFTER_STALL {
            let step = format!(
                "{what} on {self} (given {} s: an earlier step there did not finish)",
                AFTER_STALL.as_secs()
            );
            (AFTER_STALL, step)
        } else {
            (self.step_limit, format!("{what} on {self}"))
        };
        crate::host::runner::Limits { step, time, bytes: STEP_OUTPUT_CAP }
    }

    /// `ssh … -- 'argv0' 'argv1' …`: runs `argv` on the target, each argument quoted for the
    /// remote shell. `BatchMode` makes a missing key fail at once instead of prompting.
    pub(crate) fn command<I, S>(&self, argv: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.ssh_base().arg("--").arg(quote::sh_join(argv))
    }

    /// `ssh …` with every option but the remote command.
    pub(crate) fn ssh_base(&self) -> Cmd {
        let mut cmd = Cmd::new("ssh");
        if let Some(config) = &self.ssh_config {
            cmd = cmd.arg("-F").arg(config);
        }
        cmd = cmd.args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=15"]);
        cmd = cmd.args(["-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3"]);
        if let Some(port) = self.port {
            cmd = cmd.arg("-p").arg(port.to_string());
        }
        if let Some(user) = &self.user {
            cmd = cmd.arg("-l").arg(user);
        }
        cmd.arg(&self.host)
    }
}

impl fmt::Display for SshTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ssh://")?;
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        f.write_str(&self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_user_host_port() {
        let t = SshTarget::parse("ssh://root@127.0.0.1:2222").unwrap();
        assert_eq!(t.user.as_deref(), Some("root"));
        assert_eq!(t.host, "127.0.0.1");
        assert_eq!(t.port, Some(2222));
        assert_eq!(t.to_string(), "ssh://root@127.0.0.1:2222");
    }

    #[test]
    fn rejects_bad_targets() {
        let cases = [
            ("root@host", "is not an ssh URL"),
            ("ssh://-oProxyCommand=x", "invalid host"),
            ("ssh://a;b@host", "invalid user"),
            ("ssh://host:0", "invalid port"),
            ("ssh://host:99999", "invalid port"),
            ("ssh://", "invalid host"),
        ];
        let long = format!("ssh://{}@h", "a".repeat(100_000));
        assert_eq!(
            SshTarget::parse(&long).unwrap_err().to_string(),
            "the target's user is 100000 characters long, more than a user can be (255); check the target URL"
        );
        let host = format!("ssh://u@{}:22", "h".repeat(254));
        assert!(
            SshTarget::parse(&host).unwrap_err().to_string().contains("host is 254 characters")
        );
        assert!(
            SshTarget::parse(&format!("ssh://{}@{}", "u".repeat(255), "h".repeat(253))).is_ok()
        );
        for (url, want) in cases {
            let err = SshTarget::parse(url).unwrap_err().to_string();
            assert!(err.contains(want), "{url}: {err}");
        }
    }

    #[test]
    fn remote_command_quotes_every_argument() {
        let t = SshTarget::parse("ssh://u@h:22").unwrap().with_ssh_config(Some("cfg".into()));
        let cmd = t.command(["cat", "/proc/cmdline; reboot"]);
        let argv = cmd.argv();
        assert_eq!(&argv[..3], ["ssh", "-F", "cfg"]);
        assert_eq!(argv.last().unwrap(), "cat '/proc/cmdline; reboot'");
        assert!(argv.contains(&"BatchMode=yes".to_string()));
    }
}
