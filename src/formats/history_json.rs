//! The latency history: one recorded run of `rtbuild history add` with its build identity and
//! per-CPU figures. What `history list|show --json` prints (schema `rtbuild-history/1`) and what
//! the database rows hold, column for column (docs/history.md).

use serde::{Deserialize, Serialize};

/// The `schema` value of `history --json` output.
pub(crate) const SCHEMA: &str = "rtbuild-history/1";

use crate::formats::verdict::{TestVerdict, Verdict};

/// `history list|show --json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct HistoryList {
    pub schema: String,
    pub runs: Vec<HistoryRun>,
}

/// One recorded run: a result folder or a LAVA job log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HistoryRun {
    /// sha256 of the run's content (everything below but `source`, `added_unix` and the build
    /// identity `--bundle` adds): the same run added twice is recorded once.
    pub digest: String,
    /// The path it was added from, as given.
    pub source: String,
    /// `result-folder` or `lava-log`.
    pub kind: String,
    /// When it was recorded (Unix seconds).
    pub added_unix: i64,
    pub machine: Option<String>,
    /// `local` or the ssh URL the run measured.
    pub target: Option<String>,
    /// The target's `uname -r`.
    pub kernel_release: Option<String>,
    /// The target's `uname -v`.
    pub kernel_version: Option<String>,
    /// sha256 of the kernel `.config` (from the bundle manifest).
    pub kernel_config_digest: Option<String>,
    /// sha256 of the lock file the bundle was built from.
    pub lock_digest: Option<String>,
    /// sha256 of the bundle's `manifest.json`, which lists every file's sha256.
    pub bundle_digest: Option<String>,
    /// sha256 of the run-time tuning the run saw (`inputs.tuning`).
    pub tuning_fingerprint: Option<String>,
    /// When the run started (Unix seconds).
    pub started_unix: Option<i64>,
    /// The scenarios' run time together, seconds.
    pub duration_s: Option<f64>,
    /// The latency limit the run was judged against, µs.
    pub threshold_us: f64,
    /// `PASS`, `FAIL` or `INVALID`.
    pub verdict: Verdict,
    /// No scenario or test has a reason not to trust it.
    pub valid: bool,
    /// Every reason for FAIL or INVALID, prefixed with its scenario.
    pub reasons: Vec<String>,
    pub inputs: BuildInputs,
    /// One row per scenario, test and CPU.
    pub results: Vec<HistoryResult>,
}

/// The build and run-time inputs `history compare` tells apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct BuildInputs {
    /// The kernel command line the target booted with.
    pub boot_args: Option<String>,
    /// The repositories of the build, from the bundle manifest.
    pub repos: Vec<RepoInput>,
    /// Each tuning fact as `name value` (`rt_cpus 7`, `isolated 7`, `policy0 performance`, …).
    pub tuning: Vec<String>,
}

/// One repository of the build.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct RepoInput {
    pub name: String,
    pub commit: String,
}

/// One scenario, test and CPU of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HistoryResult {
    pub scenario: String,
    /// `cyclictest`, `oslat`, `pmqtest`, …
    pub test: String,
    /// `null` when the output does not name the CPU (or the test has no per-CPU figures).
    pub cpu: Option<u32>,
    pub samples: Option<u64>,
    pub min_us: Option<f64>,
    pub avg_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
    pub overflows: Option<u64>,
    /// `PASS`, `FAIL`, `INVALID` or `SKIPPED` (a test the target could not run).
    pub verdict: TestVerdict,
    pub valid: bool,
    /// Why it fails or cannot be trusted.
    pub reasons: Vec<String>,
}

/// `history add --json`: what was done with each run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Added {
    pub digest: String,
    pub source: String,
    pub verdict: Verdict,
    /// `false`: the run was recorded before (same content digest).
    pub new: bool,
    /// With `--check`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<RegressionCheck>,
}

/// `history compare A B --json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Comparison {
    pub schema: String,
    /// How A and B were selected (`run 1a2b…`, `bundle …`, `kernel release …`) and their runs.
    pub a: CompareSide,
    pub b: CompareSide,
    /// Per machine, scenario, test and CPU that both sides measured validly.
    pub rows: Vec<CompareRow>,
    /// The build and tuning inputs that differ between the newest run of each side.
    pub changed_inputs: Vec<InputChange>,
}

/// One side of a comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CompareSide {
    pub selected: String,
    /// The digests of its runs.
    pub runs: Vec<String>,
    /// Of those, the runs left out because they are invalid.
    pub invalid_runs: Vec<String>,
}

/// A figure on both sides: the worst (highest) over the side's valid runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CompareRow {
    pub machine: Option<String>,
    pub scenario: String,
    pub test: String,
    pub cpu: Option<u32>,
    pub a_max_us: Option<f64>,
    pub b_max_us: Option<f64>,
    /// (B − A) / A, %.
    pub max_change_pct: Option<f64>,
    pub a_p999_us: Option<f64>,
    pub b_p999_us: Option<f64>,
    pub p999_change_pct: Option<f64>,
}

/// One input that differs: `kernel_release`, `boot_args`, `repo meta-qcom`, `tuning`,
/// `CONFIG_HZ`, …
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct InputChange {
    pub input: String,
    /// `null`: unknown or absent on that side.
    pub a: Option<String>,
    pub b: Option<String>,
}

/// `history add --check --json`, and `report --history`: a run against its baseline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct RegressionCheck {
    pub run: String,
    pub machine: Option<String>,
    /// `INVALID` (an invalid run is not compared), `REGRESSION`, else the run's own verdict
    /// (`PASS` or `FAIL`), also when no earlier run was there to compare (`baseline_runs` empty).
    pub verdict: Verdict,
    pub regression_pct: f64,
    /// The run's latency limit, µs.
    pub threshold_us: f64,
    pub findings: Vec<Finding>,
    /// The runs the baseline was taken from, newest first.
    pub baseline_runs: Vec<String>,
    /// The inputs that differ from the newest baseline run.
    pub changed_inputs: Vec<InputChange>,
}

/// A figure worse than its baseline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Finding {
    pub scenario: String,
    pub test: String,
    pub cpu: Option<u32>,
    /// `max` or `p99.9`.
    pub metric: String,
    pub current_us: f64,
    /// The median of the baseline runs' figures.
    pub baseline_us: f64,
    pub change_pct: f64,
    /// The figure is over the run's threshold, and the baseline was not.
    pub crosses_threshold: bool,
    pub baseline_runs: Vec<String>,
}
