//! `rtbuild test`: measure latency on a target the way the seed guides do — cyclictest on the
//! RT CPUs under each load scenario — and prove the run itself was valid: right policy,
//! priority and pinning, load on the housekeeping CPUs, enough cycles (samples above the
//! histogram are a note: the max is exact), and which interrupts still reached the RT CPUs.
//!
//! Pipeline position: reads the same CPU layout as `tune` (a catalog plan, or `--rt-cpus` on any
//! Linux target) → runs on a [`crate::host::Host`] → writes a result folder (`run.json`, raw
//! cyclictest outputs, fingerprints) for `rtbuild report`.

mod cyclictest;
mod error;
mod fingerprint;
#[cfg(test)]
mod helper_tests;
mod judge;
mod length;
mod load_level;
mod measure;
mod measurement;
mod own_cpus;
mod preflight;
mod probe;
mod program;
mod record;
mod scenario;
mod sequence;
mod session;
mod signals;
mod spoilers;
mod steps;
mod trace;
mod trace_run;

pub(crate) use crate::formats::run_json::{Commands, FILE as RUN_FILE};
pub(crate) use cyclictest::{HIST_MAX_US, Measure, Threads};
pub(crate) use error::TestError;
pub(crate) use length::{BadDuration, Length, Span};
pub(crate) use measurement::{MainCpuOffHousekeeping, Measurement};
pub(crate) use preflight::PreflightError;
pub(crate) use program::placement;
pub(crate) use scenario::{CommandSpec, CustomLoad, Scenario, UnknownScenario, parse_list};
pub(crate) use sequence::{Sequence, Suite, load_argv};
pub(crate) use session::{RunEnd, run};
pub(crate) use spoilers::{Spoilers, board_state, board_warnings};
pub(crate) use trace::{Analyzer, TraceError, TraceRequest};

use std::path::PathBuf;

use crate::host::Host;
use crate::host::cpus::CpuLayout;
use crate::plan::CpuSet;

/// Seconds since 1970, for the record.
pub(crate) fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `rtbuild test`'s own judgement of one finished cyclictest `--json` output, as it records the
/// scenario in `run.json` (`files: [raw/NAME.json]`), and the run's verdict word: the test that
/// `rtbuild report` reaches the same verdict on every golden run folder uses it.
#[cfg(test)]
pub(crate) fn judge_finished_run(
    name: &str,
    json: &str,
    measure_cpus: &CpuSet,
    histogram_us: u32,
    expected_cycles: u64,
    threshold_us: u64,
) -> (crate::formats::run_json::ScenarioRecord, crate::formats::report_json::Verdict) {
    let judged = judge::judge(&judge::Inputs {
        json: Some(json),
        stderr: "",
        measure_cpus,
        threads: Threads::PerCpu,
        interval_us: 1000,
        distance_us: 0,
        loops: false,
        histogram_us,
        expected_cycles,
        status: Some(0),
        ending: judge::Ending::Completed,
        host: "golden",
        stopped_at_breach: false,
    });
    let scenario = crate::formats::run_json::ScenarioRecord {
        name: name.to_string(),
        state: "done".into(),
        files: vec![format!("raw/{name}.json")],
        expected_cycles,
        max_us: judged.threads.iter().map(|t| t.max_us).max(),
        threads: judged.threads,
        notes: judged.notes,
        invalid_reasons: judged.reasons,
        ..Default::default()
    };
    let (_, _, verdict) =
        session::conclude(judge::Ending::Completed, std::slice::from_ref(&scenario), threshold_us);
    (scenario, verdict)
}

/// The on-target helper, sent to `sh -s` for every step: a static script, not a template (no
/// value is rendered into it; rtbuild passes positional arguments only), kept in `templates/`
/// beside the others in two parts: its shell functions, then its subcommands.
pub(crate) const HELPER: &str = concat!(
    include_str!("../../../templates/onhost-functions.sh"),
    include_str!("../../../templates/onhost-commands.sh"),
);

/// Everything a test run needs, validated.
#[derive(Debug, Clone)]
pub(crate) struct TestRequest {
    pub host: Host,
    pub layout: CpuLayout,
    /// The CPUs cyclictest measures on, one thread each (`--measure-cpus`; default the RT
    /// CPUs). CPU 0 and housekeeping CPUs are allowed: the seeds compare loaded cores with the
    /// isolated one.
    pub measure_cpus: CpuSet,
    /// The catalog board whose plan the run follows (`--machine`).
    pub machine: Option<String>,
    /// `--board NAME`: the name a board that is not in the catalog is recorded under (run.json's
    /// `machine`, and so the history). Without it and `--machine`, the target's devicetree
    /// model is recorded when it has one.
    pub board: Option<String>,
    /// The machine's plan also isolates the RT CPUs with `nohz_full` (checked on the target
    /// before the run).
    pub nohz_full: bool,
    /// What to measure and under which load.
    pub measurement: Measurement,
    /// `--max-us` as given (recorded in the settings).
    pub max_us: Option<u64>,
    /// The limit the verdict uses, the same one `rtbuild report` uses: `--max-us`, else the
    /// machine's latency requirement, else 100 µs.
    pub threshold: Threshold,
    pub out: PathBuf,
    /// The tuning script for this layout: its `verify` is recorded before every run.
    pub tune_script: String,
    /// Apply the tuning before the run and revert it afterwards (`--tune`).
    pub apply_tuning: bool,
    /// `--overcommit-never` (with `--tune`): the script sets `vm.overcommit_memory=2`.
    pub overcommit_never: bool,
    /// `--stop-urm`: stop an active `urm.service` for the run and start it again afterwards.
    pub stop_urm: bool,
    /// `--trace-above-us` (and `--analyzer`): keep and explain the trace of the first breach.
    pub trace: Option<TraceRequest>,
}

/// The result folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutError {
    #[error("result folder {0} is not empty; pass a new --out DIR")]
    NotEmpty(PathBuf),
    #[error("result folder {0} is a file, not a folder; pass --out a new folder")]
    File(PathBuf),
}

/// The latency limit a run is judged against, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Threshold {
    pub us: u64,
    /// `--max-us`, `<machine> requirement` or `default, SIL 2` (as `rtbuild report` says).
    pub source: String,
}

impl Threshold {
    /// `--max-us`, else the machine's requirement, else [`crate::catalog::latency::DEFAULT_THRESHOLD_US`].
    pub(crate) fn pick(
        max_us: Option<u64>,
        machine: Option<&crate::catalog::Machine>,
    ) -> Threshold {
        match (max_us, machine.and_then(|m| m.latency_requirement_us.map(|r| (m, r)))) {
            (Some(us), _) => Threshold { us, source: "--max-us".into() },
            (None, Some((m, us))) => Threshold { us, source: format!("{} requirement", m.name) },
            (None, None) => Threshold {
                us: crate::catalog::latency::DEFAULT_THRESHOLD_US as u64,
                source: "default, SIL 2".into(),
            },
        }
    }
}
