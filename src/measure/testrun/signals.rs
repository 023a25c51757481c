//! Ctrl-C, SIGTERM and SIGHUP during a test run.
//!
//! The first one sets a flag the run loop checks: cyclictest is stopped so it writes its
//! results, the load is stopped, the tuning reverted and `run.json` finished.
//!
//! The second one skips the niceties but not the safety: a priority-99 cyclictest or a
//! stress-ng left on a target is a hazard. On its own thread rtbuild stops `run.json` from being
//! written by the run loop, kills cyclictest (after a short SIGINT grace so it can still write
//! its JSON) and every load group on the target (locally or over a fresh ssh connection), keeps
//! the running scenario's JSON, removes the target's `/tmp/rtbuild-test.*` folder, marks
//! `run.json` interrupted and exits with 130. All of that is bounded by [`EMERGENCY_LIMIT`]; a
//! third signal exits at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use super::{HELPER, record};
use crate::formats::run_json::RunRecord;
use crate::host::Host;
use crate::host::runner::Runner;
use crate::text::ui::Ui;

/// The longest the second signal's clean-up may take before rtbuild exits anyway.
pub(super) const EMERGENCY_LIMIT: Duration = Duration::from_secs(30);

/// What the second signal needs to clean up: where the run happens and what it wrote.
#[derive(Debug, Clone)]
pub(super) struct Emergency {
    pub host: Host,
    /// The run's state folder on the target (`/tmp/rtbuild-test.*`).
    pub state: String,
    /// The result folder.
    pub out: PathBuf,
    pub ui: Ui,
}

/// Set once a stop signal arrived.
#[derive(Debug, Clone)]
pub(super) struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// Installs the handlers. Failing to install them only loses the clean abort.
    pub(super) fn install(emergency: Emergency) -> StopFlag {
        // The run loop stops cleanly by itself: the runner no longer ends rtbuild or its
        // foreground children on a signal.
        crate::host::runner::signals::defer_to_owner();
        let stop = Arc::new(AtomicBool::new(false));
        // Set when the second signal's clean-up starts: a third signal then exits at once.
        let cleaning = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, cleaning.clone());
        }
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return StopFlag(stop);
        };
        let flag = stop.clone();
        let _ = std::thread::Builder::new().name("rtbuild-test-signals".into()).spawn(move || {
            for _ in signals.forever() {
                if !flag.swap(true, Ordering::SeqCst) {
                    continue;
                }
                cleaning.store(true, Ordering::SeqCst);
                let (done_tx, done_rx) = std::sync::mpsc::channel();
                let job = emergency.clone();
                let _ = std::thread::Builder::new().name("rtbuild-test-abort".into()).spawn(
                    move || {
                        abort(&job);
                        let _ = done_tx.send(());
                    },
                );
                let _ = done_rx.recv_timeout(EMERGENCY_LIMIT);
                // Exit only once cyclictest, the load and every helper `sh` are gone.
                crate::host::runner::signals::wait_for_descendants(Duration::from_secs(5));
                std::process::exit(130);
            }
        });
        StopFlag(stop)
    }

    pub(super) fn raised(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The second signal's clean-up. Holds `run.json` for the rest of the process.
fn abort(job: &Emergency) {
    let say = |text: &str| job.ui.warn(text);
    say(&format!("interrupted again: killing cyclictest and the load on {} and exiting", job.host));
    let frozen = record::freeze();
    let running = running_scenario(&job.out);
    let mut args = vec!["abort".to_string(), job.state.clone()];
    args.extend(running.iter().map(|name| format!("{name}.json")));
    match run_bounded(&job.host, &args) {
        Some(output) => {
            if let Some(name) = &running
                && !output.is_empty()
            {
                let path = job.out.join(format!("raw/{name}.json"));
                if let Err(err) = crate::files::write::write_atomic(&path, &output, false) {
                    say(&err.to_string());
                }
            }
        }
        None => say(&format!(
            "could not reach {} to kill cyclictest and the load; check it by hand",
            job.host
        )),
    }
    if let Err(err) = mark_interrupted(&job.out) {
        say(&format!("could not mark {} interrupted: {err}", job.out.join(record::FILE).display()));
    }
    say(
        "the tuning of --tune (if any) was not reverted; reboot the target or run the test again to restore it",
    );
    // `run.json` stays frozen until the process exits: dropping the guard here let the run
    // loop's blocked write land while rtbuild waited for its children, putting back the
    // scenario as `running` or `done` over what was just marked interrupted.
    std::mem::forget(frozen);
}

/// The name of the scenario `run.json` shows running, if any.
fn running_scenario(out: &Path) -> Option<String> {
    record::read(out)?
        .scenarios
        .into_iter()
        .rev()
        .find(|s| s.state == "running")
        .map(|s| s.name)
        .filter(|name| name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
}

/// Runs the helper with `args`, killing it after a bound; its stdout, or `None` when it did
/// not finish cleanly.
/// It always runs on the real system, whatever runner the run used: it must kill what a real
/// run started, from a signal thread that outlives the run's borrows.
fn run_bounded(host: &Host, args: &[String]) -> Option<Vec<u8>> {
    crate::host::runner::System.within(
        &host.sh(args),
        HELPER.as_bytes(),
        EMERGENCY_LIMIT - Duration::from_secs(5),
    )
}

/// Marks `run.json` (and the scenario `running`, if any) interrupted, with an invalid verdict.
/// The caller holds [`record::freeze`]'s guard.
fn mark_interrupted(out: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(out.join(record::FILE)).map_err(|e| e.to_string())?;
    let mut run = RunRecord::parse(&text).map_err(|e| e.to_string())?;
    run.state = "interrupted".into();
    run.verdict = Some(crate::formats::report_json::Verdict::Invalid);
    for s in run.scenarios.iter_mut().filter(|s| s.state == "running") {
        s.state = "interrupted".into();
        s.invalid_reasons.push("interrupted twice: cyclictest and the load were killed".into());
    }
    record::write_unguarded(out, &run).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_scenario_is_marked_interrupted_and_finished_ones_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let run = serde_json::json!({
            "state": "running",
            "verdict": null,
            "scenarios": [
                {"name": "idle", "state": "finished", "invalid_reasons": []},
                {"name": "stress", "state": "running", "invalid_reasons": []}
            ]
        });
        crate::files::write::fixture(dir.path().join(record::FILE), run.to_string()).unwrap();
        assert_eq!(running_scenario(dir.path()).as_deref(), Some("stress"));
        mark_interrupted(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(record::FILE)).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["state"], "interrupted");
        assert_eq!(json["verdict"], "INVALID");
        assert_eq!(json["scenarios"][0]["state"], "finished");
        assert_eq!(json["scenarios"][1]["state"], "interrupted");
        assert!(json["scenarios"][1]["invalid_reasons"][0].as_str().unwrap().contains("twice"));
    }

    #[test]
    fn a_scenario_name_that_is_not_a_plain_word_is_not_used_as_a_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let run = serde_json::json!({"scenarios": [{"name": "../x", "state": "running"}]});
        crate::files::write::fixture(dir.path().join(record::FILE), run.to_string()).unwrap();
        assert_eq!(running_scenario(dir.path()), None);
    }
}
