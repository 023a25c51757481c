//! Running `rtbuild-tune.sh apply|verify|revert` on a [`Host`] and reading its report.

use serde::Serialize;

use crate::host::Host;
use crate::runner::{RunError, Runner, describe_status, last_lines};

/// What to do with the tuning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Action {
    Apply,
    Verify,
    Revert,
}

impl Action {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Action::Apply => "apply",
            Action::Verify => "verify",
            Action::Revert => "revert",
        }
    }
}

/// The script's report: one line per knob (`set`, `keep`, `ok`, `mismatch`, `refused`, …).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TuneOutcome {
    pub action: Action,
    /// Every knob held (verify), was set (apply) or was restored (revert). Refused IRQs do not
    /// count against it.
    pub ok: bool,
    pub lines: Vec<String>,
    /// `mismatch` and `fail` lines: what broke.
    pub problems: Vec<String>,
    /// IRQs whose affinity could not be changed.
    pub refused: Vec<String>,
}

/// The script could not be run at all.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TuneRunError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(
        "could not reach {host}: ssh failed{}; check the target URL and that `ssh` reaches it",
        tail(.stderr)
    )]
    Connection { host: String, stderr: String },
    #[error("rtbuild-tune.sh {action} failed on {host} with {status}{}", tail(.stderr))]
    Script { action: &'static str, host: String, status: String, stderr: String },
    /// `apply` and `revert` write /proc/sys, /sys and /proc/irq: checked before anything runs.
    #[error(
        "tune --{action} needs root on {host}, which runs it as user id {uid}; run rtbuild as root for --local, or use --target ssh://root@HOST"
    )]
    NotRoot { action: &'static str, host: String, uid: String },
}

impl crate::exit::ErrorCode for TuneRunError {
    fn exit(&self) -> crate::exit::Exit {
        match self {
            TuneRunError::NotRoot { .. } => crate::exit::Exit::Usage,
            _ => crate::exit::Exit::Failed,
        }
    }
}

/// Put before the script: `apply` and `revert` stop before their first write unless run as
/// root, with [`NOT_ROOT`] and the user id on stderr (`verify` only reads).
const ROOT_CHECK: &str =
    "if [ \"$1\" != verify ] && [ \"$(id -u)\" != 0 ]; then id -u >&2; exit 77; fi\n";
/// The exit status of [`ROOT_CHECK`].
const NOT_ROOT: i32 = 77;

fn tail(stderr: &str) -> String {
    let t = last_lines(stderr.trim(), 5);
    if t.is_empty() { String::new() } else { format!(": {t}") }
}

/// Runs `action` of `script` on `host` through `runner`, keeping saved values in `/run/<state>` (default
/// `rtbuild-tune.state`, shared with the boot-time service). Exit 0 and 1 are reports (1 = a
/// knob failed); any other status means the script did not run.
pub(crate) fn run_script(
    runner: &dyn Runner,
    host: &Host,
    script: &str,
    action: Action,
    state: Option<&str>,
) -> Result<TuneOutcome, TuneRunError> {
    let mut args = vec![action.word()];
    args.extend(state);
    let out = host.run_script(runner, &format!("{ROOT_CHECK}{script}"), args)?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if host.connection_lost(&out.status) {
        return Err(TuneRunError::Connection { host: host.to_string(), stderr });
    }
    let code = out.status.code();
    if code == Some(NOT_ROOT) && action != Action::Verify {
        let uid = stderr.trim().chars().filter(char::is_ascii_digit).take(10).collect();
        return Err(TuneRunError::NotRoot { action: action.word(), host: host.to_string(), uid });
    }
    if code != Some(0) && code != Some(1) {
        return Err(TuneRunError::Script {
            action: action.word(),
            host: host.to_string(),
            status: describe_status(&out.status),
            stderr,
        });
    }
    let lines: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    let starts = |l: &String, words: &[&str]| words.iter().any(|w| l.starts_with(&format!("{w} ")));
    Ok(TuneOutcome {
        action,
        ok: code == Some(0),
        problems: lines.iter().filter(|l| starts(l, &["mismatch", "fail"])).cloned().collect(),
        refused: lines.iter().filter(|l| starts(l, &["refused"])).cloned().collect(),
        lines,
    })
}
