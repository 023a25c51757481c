//! The report data: what `rtbuild report --json` prints (schema `rtbuild-report/1`, documented
//! in docs/report.md) and what the terminal table, JUnit and HTML renderers read. Every latency
//! is in microseconds; a figure the data cannot support is `null`, never a made-up number.

use serde::{Deserialize, Serialize};

/// The `schema` value of the JSON report.
pub(crate) const SCHEMA: &str = "rtbuild-report/1";

/// The verdict words (the one vocabulary) live in [`super::verdict`]; the rules that give them
/// in [`super::judge`].
pub(crate) use super::verdict::Verdict;

/// One reason a run is not PASS, with the verdict it leads to. New kinds of evidence (a kernel
/// warning, an IRQ moved onto an RT CPU, a load shortfall) get their own variant here, with
/// their verdict in [`Reason::verdict`]; the text is what every output shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reason {
    /// A limit was crossed or a correctness check failed: `FAIL`.
    Fail(String),
    /// The measurement cannot be trusted (a figure is unknown, the program did not measure):
    /// `INVALID`.
    Invalid(String),
}

impl Reason {
    pub(crate) fn verdict(&self) -> Verdict {
        match self {
            Reason::Fail(_) => Verdict::Fail,
            Reason::Invalid(_) => Verdict::Invalid,
        }
    }

    pub(crate) fn text(&self) -> &str {
        match self {
            Reason::Fail(text) | Reason::Invalid(text) => text,
        }
    }

    pub(crate) fn is_invalid(&self) -> bool {
        self.verdict() == Verdict::Invalid
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// Whether `value` can be a latency: a finite number of at least 0. Anything else a program
/// printed (`nan`, `inf`, `-5`) is an unknown figure, and an unknown figure is never a PASS.
pub(crate) fn is_latency(value: f64) -> bool {
    value.is_finite() && value >= 0.0
}

/// One row of the Qualcomm guide's "RT test results" table: one measured CPU (one cyclictest
/// thread) of one scenario, with that CPU's own figures, its verdict, how long it ran and how
/// many samples back the figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ResultRow {
    /// The machine (else the board model, else the target) and the row's CPU: `RT core: 7`,
    /// or `CPU 0 (not an RT core)` for a measured CPU outside the RT CPUs.
    pub device: String,
    /// The CPU the row's figures were measured on; `null` when the output does not say (the
    /// row is then one thread's).
    #[serde(default)]
    pub cpu: Option<u32>,
    /// The guide's "Boot Flow", said only from evidence (run.json's `fingerprint.boot`):
    /// `KVM` (Linux is the KVM host), `guest`, `Gunyah (guest)`, or `unknown`.
    #[serde(default = "unknown_flow")]
    pub boot_flow: String,
    /// os-release's distribution and the image name, `-` when the target did not say.
    pub distro_and_image: String,
    /// The scenario, with its label (`system-load (load on the measured CPUs, no isolation)`).
    pub use_case: String,
    /// How long the scenario ran, s (`null` when the input does not say: a raw file, a LAVA log).
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// Samples behind the row's figures.
    #[serde(default)]
    pub samples: u64,
    pub min_us: Option<f64>,
    pub avg_us: Option<f64>,
    pub max_us: Option<f64>,
    /// PASS, FAIL or INVALID for this CPU.
    #[serde(default)]
    pub verdict: Verdict,
    /// Why the row is not PASS (every reason the scenario's run is invalid, or this CPU's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

fn unknown_flow() -> String {
    super::run_json::UNKNOWN_FLOW.to_string()
}

/// Whether a result folder's run applied rtbuild's tuning and reverted it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TuningState {
    pub input: String,
    pub applied: bool,
    pub reverted: bool,
}

/// The whole report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LatencyReport {
    pub schema: String,
    pub verdict: Verdict,
    /// Every reason for a FAIL, each prefixed with its scenario.
    pub reasons: Vec<String>,
    pub threshold_us: f64,
    /// Where the threshold came from: `--threshold-us`, `run.json` or the 100 µs default.
    pub threshold_source: String,
    /// oslat's OS-noise limit (and hwlatdetect's), µs: `--noise-us`, `run.json` or 20.
    #[serde(default = "default_noise_us")]
    pub noise_us: f64,
    pub machine: Option<String>,
    pub baseline: Option<String>,
    /// One row per scenario and CPU (the seeds' tables), then any published reference rows.
    #[serde(default)]
    pub summary: Vec<SummaryRow>,
    /// The Qualcomm guide's results table: one row per scenario and measured CPU of each result
    /// folder or LAVA log, in the guide's columns (Device, Distro and image, use case,
    /// min/avg/max latency µs) plus duration, samples and the row's verdict.
    #[serde(default)]
    pub results: Vec<ResultRow>,
    /// Per result folder: whether `--tune` applied the tuning and reverted it afterwards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tuning: Vec<TuningState>,
    pub inputs: Vec<InputReport>,
    /// One entry per breach of `rtbuild test --trace-above-us`, explained from its kept trace.
    #[serde(default)]
    pub spikes: Vec<Spike>,
}

/// A breach of `--trace-above-us`: where, how late, what ran on the CPU before the wakeup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Spike {
    pub scenario: String,
    /// The measured CPU that crossed the threshold.
    pub cpu: Option<u32>,
    pub latency_us: Option<f64>,
    /// What happened on that CPU from shortly before the expected wakeup to the breach mark,
    /// oldest first.
    pub events: Vec<SpikeEvent>,
    /// The top contributors to the gap, or that the CPU shows no kernel activity in it.
    pub explanation: String,
    /// The result folder.
    pub input: String,
    /// The kept trace (`trace-<scenario>.txt`), relative to the result folder.
    pub trace_file: String,
    /// `ftrace` or `rtla`.
    pub analyzer: String,
    /// The trace lines of the CPU over the same span, as printed.
    pub excerpt: Vec<String>,
}

/// One event of a spike's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpikeEvent {
    /// The trace timestamp, seconds.
    pub ts: f64,
    /// `irq`, `softirq`, `tasklet`, `irq_vector`, `ipi`, `timer`, `workqueue`, `task`, `idle`,
    /// `wakeup` or `mark`.
    pub kind: String,
    pub name: String,
    /// How long it ran, µs; `null` for an instant (a wakeup, the mark).
    pub duration_us: Option<f64>,
}

/// One INPUT argument: a result folder or a raw cyclictest file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct InputReport {
    pub path: String,
    /// `result-folder` (has `run.json`) or `file`.
    pub kind: String,
    pub scenarios: Vec<ScenarioReport>,
    /// `run.json` `fingerprint`, passed through as-is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<serde_json::Value>,
    /// `run.json` `interrupts`, passed through as-is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<serde_json::Value>,
}

/// One scenario (one file for raw input; one `run.json` entry for a result folder).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ScenarioReport {
    pub name: String,
    /// `run.json`'s scenario label (`load on the measured CPUs, no isolation`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    /// Facts that do not change the verdict (short run, reference comparison, …).
    pub notes: Vec<String>,
    /// Problems met while reading the files (skipped lines, truncation).
    pub warnings: Vec<String>,
    /// Why cyclictest's measurement in this scenario cannot be trusted (verdict INVALID):
    /// `run.json`'s `invalid_reasons`, unreadable outputs, unknown figures (a maximum that is
    /// missing or not a finite number ≥ 0), no samples. `reasons` holds these too.
    pub invalid_reasons: Vec<String>,
    pub files: Vec<FileInfo>,
    /// The command lines that produced the data (`run.json` `commands`, JSON `cmdline:`).
    pub commands: Vec<String>,
    /// `run.json` thermal zones before/after the scenario (`[{zone, kind, before_c, after_c}]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal: Option<serde_json::Value>,
    /// `run.json` throttling counters before/after the scenario (`[{name, before, after}]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttling: Option<serde_json::Value>,
    /// All threads together.
    pub all: ThreadReport,
    pub threads: Vec<ThreadReport>,
    pub reference_max_us: Option<f64>,
    pub regressions: Vec<Regression>,
    /// Whether cyclictest measured in this scenario; its figures above are empty otherwise.
    #[serde(default = "yes")]
    pub cyclictest: bool,
    /// cyclictest's own reasons (`reasons` also holds every test's, prefixed with its name).
    #[serde(default)]
    pub cyclictest_reasons: Vec<String>,
    /// The other rt-tests programs of the scenario, each with its own verdict.
    #[serde(default)]
    pub tests: Vec<TestReport>,
    /// When the scenario started (Unix seconds) and how long it ran, from `run.json`; absent
    /// for a raw file or a LAVA log, which do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
    /// Why no thread has a `convergence` although the input could have given one (a result
    /// folder whose stderr holds no status snapshot, or could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence_unknown: Option<String>,
}

/// One rt-tests program in one scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TestReport {
    /// The program (`oslat`, `pmqtest`, …).
    pub test: String,
    /// `latency`, `noise`, `correctness`, `load` or `firmware`.
    pub kind: crate::formats::rt_tests::Kind,
    pub verdict: Verdict,
    /// Why it did not run (PASS then means "nothing failed", and JUnit marks it skipped).
    pub skipped: Option<String>,
    /// Every reason it did not pass, those in `invalid_reasons` first.
    pub reasons: Vec<String>,
    /// The reasons its run cannot be trusted (verdict INVALID).
    #[serde(default)]
    pub invalid_reasons: Vec<String>,
    /// Figures that are not judged (inversions, SMIs, run times).
    pub notes: Vec<String>,
    pub files: Vec<String>,
    pub commands: Vec<String>,
    /// Per thread or CPU as the program reported it (oslat: per RT CPU with its histogram).
    pub rows: Vec<crate::formats::rt_tests::Row>,
    /// How long it ran (run.json), seconds; absent when the input does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
}

fn default_noise_us() -> f64 {
    crate::formats::rt_tests::DEFAULT_NOISE_US as f64
}

fn yes() -> bool {
    true
}

/// A file the scenario read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FileInfo {
    pub path: String,
    /// Formats detected (`json`, `histogram-full`, `histogram-sparse`, `verbose`, `live`,
    /// `summary`, `spike`).
    pub formats: Vec<String>,
    pub unit: String,
    pub cyclictest_version: Option<String>,
}

/// Statistics of one thread (or of all threads: `thread` is `null`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ThreadReport {
    pub thread: Option<u32>,
    /// The file the thread came from, when the scenario has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub cpu: Option<u32>,
    /// The thread's interval in µs, as cyclictest's `T:` line printed it (`I:`); absent when
    /// the output has no `T:` line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_us: Option<u64>,
    /// The latency of the thread's last cycle when its `T:` line was printed (`Act:`), µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act_us: Option<f64>,
    pub samples: u64,
    /// Where the percentiles come from: `histogram`, `samples` (`-v`) or `summary` (none).
    pub source: String,
    pub min_us: Option<f64>,
    pub avg_us: Option<f64>,
    pub median_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub p9999_us: Option<f64>,
    pub max_us: Option<f64>,
    pub stddev_us: Option<f64>,
    /// Samples at or above the histogram limit.
    pub overflows: u64,
    /// When set, every `null` percentile lies at or above this value (histogram overflow).
    pub percentiles_at_least_us: Option<f64>,
    /// Samples above the threshold; `null` when the data cannot tell.
    pub over_threshold: Option<u64>,
    /// Histogram for charts (value µs, count); not part of the JSON.
    #[serde(skip)]
    pub buckets: Vec<(f64, u64)>,
    /// Whether more samples still raised the maximum: from `-v` samples, which keep their
    /// order, or for a histogram run from cyclictest's status snapshots taken while it
    /// measured; absent when neither is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence: Option<Convergence>,
}

/// Is the run long enough? The maximum of each half of the thread's cycles and of successive
/// power-of-two blocks of cycles (`[0, 1)`, `[1, 2)`, `[2, 4)`, … the last one up to the end).
/// Information, not a verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Convergence {
    /// The cycle numbers the samples cover: 0 to `cycles`.
    pub cycles: u64,
    /// The first cycle of the second half (on a block boundary: exact up to 4096 blocks).
    pub half_at: u64,
    pub first_half_max_us: Option<f64>,
    pub second_half_max_us: Option<f64>,
    pub blocks: Vec<ConvergenceBlock>,
    /// The last two blocks each set a new maximum: the maximum was still rising, so a longer
    /// run would likely find a larger one. From status snapshots: the running maximum rose at
    /// each of the last two steps (the snapshots at the last power-of-two boundaries, then the
    /// run's final figures).
    pub still_rising: bool,
    /// Whether the second half raised the maximum above the first half's; `null` when the
    /// figures cannot tell.
    #[serde(default)]
    pub rose_in_second_half: Option<bool>,
    /// A histogram run: how many of cyclictest's status snapshots (SIGUSR1, kept in
    /// `raw/<scenario>.stderr.txt`) the figures come from. `blocks` is then empty (a snapshot
    /// gives the maximum so far, not each block's), `running_max` holds them, `half_at` is the
    /// cycle count of the last snapshot at or before the middle, and `second_half_max_us` is
    /// known only when the second half raised the maximum. Absent for `-v` samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub running_max: Vec<RunningMax>,
}

/// The maximum of cycles `[0, snapshot_cycle)` as the last status snapshot at or before the
/// power-of-two boundary `cycle` said it; the last entry is the end of the run with the run's
/// final figures (`cycle` = `snapshot_cycle` = the cycles measured).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunningMax {
    pub cycle: u64,
    pub snapshot_cycle: u64,
    pub max_us: Option<f64>,
}

/// One power-of-two block of cycles and its largest latency.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConvergenceBlock {
    pub from_cycle: u64,
    pub to_cycle: u64,
    pub max_us: Option<f64>,
}

/// The note of a thread whose maximum was still rising.
pub(crate) const STILL_RISING: &str = "the maximum was still rising: run longer";

/// A figure that got worse than the baseline by more than the tolerance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Regression {
    pub metric: String,
    pub baseline_us: f64,
    pub current_us: f64,
}

/// One row of `summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SummaryRow {
    pub scenario: String,
    /// The measured CPU; `null` when the output does not name it, and on reference rows.
    pub cpu: Option<u32>,
    /// `null` on reference rows (the publication gives no count).
    pub samples: Option<u64>,
    pub min_us: Option<f64>,
    pub avg_us: Option<f64>,
    pub max_us: Option<f64>,
    /// `null` when unknown (it lies among overflowed samples; see `p999_at_least_us`).
    pub p999_us: Option<f64>,
    /// When `p999_us` is `null` because of a histogram overflow: it is at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_at_least_us: Option<f64>,
    /// `measured`, or `reference` for a machine's published figures.
    pub kind: String,
    /// The input (result folder or file) the row comes from; for a reference, its source.
    pub source: String,
}

/// The most JSON values a report document read back (a `--baseline`) may hold: a report of
/// hundreds of scenarios and threads holds a few hundred thousand.
pub(crate) const MAX_VALUES: usize = 4 << 20;

/// `None`: not a JSON object; `Some(None)`: an object without `schema`; else its scalar value.
fn schema_of(text: &str) -> Option<Option<serde_json::Value>> {
    #[derive(Deserialize)]
    struct Schema {
        #[serde(default)]
        schema: Option<super::Scalar>,
    }
    let parsed: Schema = serde_json::from_str(text).ok()?;
    Some(parsed.schema.map(|s| s.0))
}

impl TestReport {
    /// The word every output shows for the test: SKIPPED when it did not run, else its verdict.
    pub(crate) fn shown_verdict(&self) -> super::verdict::TestVerdict {
        match self.skipped {
            Some(_) => super::verdict::TestVerdict::Skipped,
            None => self.verdict.into(),
        }
    }
}

impl LatencyReport {
    /// Whether `text` is a JSON object with a `schema` field: a report document (of this or
    /// another schema) rather than something else `report` reads. Nothing of it is kept.
    pub(crate) fn looks_like_report(text: &str) -> bool {
        matches!(schema_of(text), Some(Some(_)))
    }

    /// Reads an earlier `rtbuild report --json` document, refusing another schema and a
    /// document of more than [`MAX_VALUES`] values before any of it is held (the report is
    /// read straight from the text, never through a tree of the whole document).
    pub(crate) fn from_text(text: &str) -> Result<LatencyReport, super::FormatError> {
        super::within_values(text, MAX_VALUES)?;
        if schema_of(text).flatten().as_ref().and_then(|s| s.as_str()) != Some(SCHEMA) {
            return Err(super::FormatError::UnknownReport { expected: SCHEMA });
        }
        Ok(serde_json::from_str(text)?)
    }
}
