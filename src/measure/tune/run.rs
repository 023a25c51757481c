//! Running `rtbuild-tune.sh apply|verify|revert` on a [`Host`] and reading its report.

use serde::Serialize;

use crate::host::Host;
use crate::host::cpus::CpuSet;
use crate::host::runner::{RunError, Runner, describe_status};

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
    /// Every knob held (verify), was set and read back (apply) or was restored (revert). Refused IRQs do not
    /// count against it.
    pub ok: bool,
    pub lines: Vec<String>,
    /// `mismatch` and `fail` lines: what broke.
    pub problems: Vec<String>,
    /// IRQs whose affinity could not be changed.
    pub refused: Vec<String>,
    /// Where each refused IRQ stays and who handles it (the script's `affinity` lines).
    pub refused_irqs: Vec<RefusedIrq>,
    /// The refused IRQs that stay on RT CPUs only: managed interrupts the kernel fixed there
    /// (virtio-blk, UFS, NVMe queues), which no write can move ([`TuneOutcome::mark_pinned`]).
    pub pinned: Vec<RefusedIrq>,
    /// Steps this kernel has no knob for (`governor (skipped: no cpufreq)`, …).
    pub skipped: Vec<String>,
}

/// One IRQ that refused the housekeeping affinity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RefusedIrq {
    pub irq: String,
    /// Its `smp_affinity_list` (empty when unreadable).
    pub cpus: String,
    /// Its handlers (`virtio1-req.7`), as `/proc/irq/N/` names them.
    pub names: Vec<String>,
}

impl RefusedIrq {
    /// `IRQ 25 (virtio1-req.7)`.
    pub(crate) fn label(&self) -> String {
        if self.names.is_empty() {
            format!("IRQ {}", self.irq)
        } else {
            format!("IRQ {} ({})", self.irq, self.names.join(", "))
        }
    }
}

impl TuneOutcome {
    /// Fills [`TuneOutcome::pinned`]: the refused IRQs whose affinity lies within `rt`.
    pub(crate) fn mark_pinned(&mut self, rt: &CpuSet) {
        self.pinned = self
            .refused_irqs
            .iter()
            .filter(|r| {
                CpuSet::parse(&r.cpus).is_ok_and(|set| !set.is_empty() && set.is_subset(rt))
            })
            .cloned()
            .collect();
    }
}

impl TuneOutcome {
    /// One line per managed IRQ the kernel fixed to RT CPUs ([`TuneOutcome::pinned`]): tuning
    /// cannot move it, it fires there whenever its queue is used from that CPU, and only the
    /// boot command line keeps such interrupts away.
    pub(crate) fn pinned_warnings(&self, rt: &CpuSet) -> Vec<String> {
        self.pinned
            .iter()
            .map(|irq| {
                format!(
                    "{} is fixed to RT CPU {} by the kernel (a managed interrupt: its affinity cannot be written) and can fire there during a measurement; boot with isolcpus=managed_irq,{rt} to keep managed interrupts off the RT CPUs",
                    crate::text::shown(&irq.label()),
                    irq.cpus
                )
            })
            .collect()
    }
}

/// The script's `affinity IRQ CPULIST NAMES` line.
fn refused_irq(line: &str) -> Option<RefusedIrq> {
    let mut words = line.strip_prefix("affinity ")?.split_whitespace();
    let irq = words.next().filter(|w| w.bytes().all(|b| b.is_ascii_digit()))?.to_string();
    let cpus = words.next().filter(|w| *w != "-").unwrap_or_default().to_string();
    let names = match words.next() {
        None | Some("-") => Vec::new(),
        Some(names) => names.split(',').filter(|n| !n.is_empty()).map(str::to_string).collect(),
    };
    Some(RefusedIrq { irq, cpus, names })
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

impl crate::error::ErrorCode for TuneRunError {
    fn exit(&self) -> crate::error::Exit {
        match self {
            TuneRunError::NotRoot { .. } => crate::error::Exit::Usage,
            _ => crate::error::Exit::Failed,
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
    let t = crate::text::shown_tail(stderr, 5);
    if t.is_empty() { String::new() } else { format!(": {t}") }
}

/// `apply` and `revert` write /proc/sys, /sys and /proc/irq: before anything is said about the
/// run, the user id on `host` is read, and any but root refuses in one line ([`TuneRunError::NotRoot`]).
/// `verify` only reads. An answer that is no user id is left to the script's own check
/// ([`ROOT_CHECK`]), which runs before its first write.
pub(crate) fn refuse_unless_root(
    runner: &dyn Runner,
    host: &Host,
    action: Action,
) -> Result<(), TuneRunError> {
    if action == Action::Verify {
        return Ok(());
    }
    // The action as the script's argument names the step in a timeout (`the step \`apply\``).
    let out = host.run_script(runner, "id -u\n", [action.word()])?;
    if host.connection_lost(&out.status) {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        return Err(TuneRunError::Connection { host: host.to_string(), stderr });
    }
    let uid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let is_uid = !uid.is_empty() && uid.len() <= 10 && uid.bytes().all(|b| b.is_ascii_digit());
    if out.status.success() && is_uid && uid != "0" {
        return Err(TuneRunError::NotRoot { action: action.word(), host: host.to_string(), uid });
    }
    Ok(())
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
    Ok(outcome(action, code == Some(0), &String::from_utf8_lossy(&out.stdout)))
}

/// The script's report, read from its standard output.
pub(super) fn outcome(action: Action, ok: bool, stdout: &str) -> TuneOutcome {
    let lines: Vec<String> = stdout.lines().map(str::to_string).collect();
    let starts = |l: &String, words: &[&str]| words.iter().any(|w| l.starts_with(&format!("{w} ")));
    TuneOutcome {
        action,
        ok,
        problems: lines.iter().filter(|l| starts(l, &["mismatch", "fail"])).cloned().collect(),
        refused: lines.iter().filter(|l| starts(l, &["refused"])).cloned().collect(),
        refused_irqs: lines.iter().filter_map(|l| refused_irq(l)).collect(),
        pinned: Vec::new(),
        skipped: lines.iter().filter_map(|l| l.strip_prefix("skip ")).map(str::to_string).collect(),
        lines,
    }
}
