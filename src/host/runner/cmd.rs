//! [`Cmd`]: a program, its arguments, environment and working folder.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use super::RunError;
use crate::text::quote;

/// A command line as an argv vector. Its `Display` is shell-quoted, for messages only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
}

impl Cmd {
    pub(crate) fn new(program: impl Into<OsString>) -> Cmd {
        Cmd { program: program.into(), args: Vec::new(), env: Vec::new(), cwd: None }
    }

    pub(crate) fn arg(mut self, arg: impl Into<OsString>) -> Cmd {
        self.args.push(arg.into());
        self
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub(crate) fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Cmd {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    pub(crate) fn env_remove(mut self, key: impl Into<OsString>) -> Cmd {
        self.env.push((key.into(), None));
        self
    }

    pub(crate) fn cwd(mut self, dir: impl Into<PathBuf>) -> Cmd {
        self.cwd = Some(dir.into());
        self
    }

    #[cfg(test)]
    pub(crate) fn get_args(&self) -> &[OsString] {
        &self.args
    }

    #[cfg(test)]
    pub(crate) fn get_cwd(&self) -> Option<&std::path::Path> {
        self.cwd.as_deref()
    }

    /// The environment changes this command makes, in order.
    pub(crate) fn get_env(&self) -> &[(OsString, Option<OsString>)] {
        &self.env
    }

    /// The argv as strings (lossy), e.g. for `--json` output and recorded command lines.
    pub(crate) fn argv(&self) -> Vec<String> {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// The duct expression that runs this command.
    pub(crate) fn to_duct(&self) -> duct::Expression {
        let mut expr = duct::cmd(&self.program, &self.args);
        for (key, value) in &self.env {
            expr = match value {
                Some(value) => expr.env(key, value),
                None => expr.env_remove(key),
            };
        }
        if let Some(cwd) = &self.cwd {
            expr = expr.dir(cwd);
        }
        expr
    }

    /// The `std` command that runs this command (for a child rtbuild watches itself).
    // The one std command outside duct: built from this Cmd, so it is logged and quoted alike.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn to_std(&self) -> std::process::Command {
        let mut command = std::process::Command::new(&self.program);
        command.args(&self.args);
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        command
    }

    pub(crate) fn spawn_error(&self, source: std::io::Error) -> RunError {
        if source.kind() == std::io::ErrorKind::NotFound {
            RunError::NotFound {
                program: self.program.to_string_lossy().into_owned(),
                hint: "install it or put it on PATH".to_string(),
            }
        } else {
            RunError::Spawn { cmd: self.to_string(), cause: source }
        }
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Quoting keeps a newline or an escape sequence inside its quotes, but a terminal still
        // acts on it: shown escaped (`\n`, `\u{1b}`), a path cannot split or forge the line.
        f.write_str(&crate::text::escape_controls(&quote::sh_join(self.argv())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_quotes_for_humans_only() {
        let cmd = Cmd::new("kas").args(["shell", "x.yml", "-c", "bitbake -e linux-qcom-rt"]);
        assert_eq!(cmd.to_string(), "kas shell x.yml -c 'bitbake -e linux-qcom-rt'");
        assert_eq!(cmd.get_args().len(), 4);
    }

    #[test]
    fn runs_through_duct_without_a_shell() {
        let out = crate::host::runner::run_captured(&Cmd::new("printf").args(["%s", "$(echo no)"]))
            .expect("printf runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "$(echo no)");
    }

    #[test]
    fn missing_program_is_a_clear_error() {
        let err =
            crate::host::runner::run_captured(&Cmd::new("rtbuild-no-such-program")).unwrap_err();
        assert!(err.to_string().starts_with("`rtbuild-no-such-program` was not found on PATH"));
    }
}
