//! What one scenario of `run.json` records: its files and commands, what each rt-tests
//! program measured, cyclictest's threads, the probe's look at the RT CPUs, the loads'
//! measured levels, and what changed on the target (temperatures, throttling, interrupts).

use serde::{Deserialize, Serialize};

use super::{Fingerprint, TraceRecord};
use crate::formats::verdict::TestVerdict;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ScenarioRecord {
    pub name: String,
    /// What every output shows beside this scenario's figures so it is never compared with an
    /// isolated run as if alike: `load on the measured CPUs, no isolation` for `system-load`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `running`, `done`, `interrupted` or `connection-lost`.
    pub state: String,
    pub started_unix: u64,
    pub elapsed_s: f64,
    /// The cyclictest output `rtbuild report` reads (the `--json` file; the histogram text
    /// when no JSON was written), relative to the result folder. One file per scenario, so
    /// the same samples are never counted twice.
    #[serde(deserialize_with = "files")]
    pub files: Vec<String>,
    /// Every raw cyclictest output kept (JSON, stdout histogram, stderr).
    pub raw_files: Vec<String>,
    pub fingerprint_files: Vec<String>,
    /// The command lines that ran, shell-quoted for reading: cyclictest first, then each load.
    pub commands: Vec<String>,
    /// The same commands as exact argv vectors.
    pub argv: Commands,
    /// The fingerprint taken before the scenario.
    pub fingerprint: Option<Fingerprint>,
    /// Thermal zone temperatures before and after the scenario.
    pub thermal: Vec<ThermalChange>,
    /// Throttling counters before and after the scenario.
    pub throttling: Vec<CounterChange>,
    pub interrupts_on_rt_cpus: Vec<IrqDelta>,
    pub softirqs_on_rt_cpus: Vec<IrqDelta>,
    pub expected_cycles: u64,
    pub threads: Vec<ThreadSummary>,
    /// The first look at the running processes; every later one is checked the same way.
    pub probe: Option<Probe>,
    pub probe_count: usize,
    /// The CPUs cyclictest's process was started on (`taskset -c`), when rtbuild set them:
    /// the measured CPUs for `--threads N --unpinned`, whose threads cyclictest places on
    /// the CPUs of its own mask. Null for pinned threads (`-a` places each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cyclictest_affinity: Option<String>,
    /// Each measuring thread of cyclictest as every look during the run saw it: the CPUs it
    /// was allowed (`Cpus_allowed_list` of `/proc/PID/task/TID/status`) and the CPUs it was
    /// seen on (the `processor` field of `/proc/PID/task/TID/stat`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_placement: Vec<ThreadPlacement>,
    /// How busy the load kept the housekeeping CPUs, % of their capacity (null without load).
    pub load_cpu_percent: Option<f64>,
    /// Each load generator's measured level on the CPUs it was pinned to, beside the level
    /// asked for (`--load`, scenario `stress`: one generator per housekeeping CPU). A level
    /// outside the asked one by more than [`LOAD_TOLERANCE_POINTS`] makes the run invalid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_levels: Vec<LoadLevel>,
    /// Why the run cannot be trusted; empty when it is valid.
    pub invalid_reasons: Vec<String>,
    /// Why the run fails whatever its latency: a kernel `BUG:`, `WARNING:`, `Oops` or
    /// `hrtimer: interrupt took` logged during it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fail_reasons: Vec<String>,
    /// What a reader of the figures must know that does not make the run invalid (samples
    /// above the histogram: the percentiles above it are bounds, the max is cyclictest's own).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The highest latency of any thread, µs.
    pub max_us: Option<i64>,
    /// Every test of `--tests` other than cyclictest, in the order run.
    #[serde(deserialize_with = "tests")]
    pub tests: Vec<TestRecord>,
    /// With `--trace-above-us`: the breach and its kept trace (null when no sample crossed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceRecord>,
}

/// One rt-tests program run in a scenario (cyclictest's run is the scenario's own fields).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TestRecord {
    /// The program: `oslat`, `pmqtest`, …
    pub name: String,
    /// `latency`, `noise`, `correctness` or `firmware`.
    pub kind: String,
    /// `running`, `done`, `skipped`, `interrupted` or `connection-lost`.
    pub state: String,
    /// Why it did not run (`skipped`).
    pub skipped: Option<String>,
    /// The command lines that ran, shell-quoted for reading (one per RT CPU for the
    /// sender/receiver tests and signaltest).
    pub commands: Vec<String>,
    /// The same, as exact argv vectors.
    pub argv: Vec<Vec<String>>,
    /// Each command's exit status (`null`: killed by a signal).
    pub exit_codes: Vec<Option<i32>>,
    /// The outputs `rtbuild report` reads: the JSON files, plus plain output where it carries
    /// the verdict (rt-migrate-test's `Passed!`, hwlatdetect's summary).
    #[serde(deserialize_with = "files")]
    pub files: Vec<String>,
    /// Every raw output kept (JSON, stdout, stderr).
    pub raw_files: Vec<String>,
    /// Why the run cannot be trusted; empty when it is valid.
    pub invalid_reasons: Vec<String>,
    /// Why it fails (over the threshold or noise limit, a failed correctness check).
    pub fail_reasons: Vec<String>,
    /// `PASS`, `FAIL`, `INVALID` or `SKIPPED` (see [`TestVerdict`]); `running` (`None`) until
    /// it is judged. Any case reads.
    #[serde(serialize_with = "running_or", deserialize_with = "running_or_word")]
    pub verdict: Option<TestVerdict>,
    /// Per thread or CPU: min/avg/max µs as the program reported them (oslat: per RT CPU, with
    /// its noise histogram).
    pub rows: Vec<crate::formats::rt_tests::Row>,
    pub elapsed_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Commands {
    /// cyclictest's argv, exactly as run on the target.
    pub cyclictest: Vec<String>,
    /// Each load generator's argv as run (including `taskset -c CPUS` when pinned).
    pub load: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ThreadSummary {
    pub thread: usize,
    pub cpu: i64,
    pub cycles: u64,
    pub min_us: i64,
    pub avg_us: Option<f64>,
    pub max_us: i64,
    pub overflows: u64,
    /// The thread's interval (cyclictest's `I:`), µs: `-i` for pinned threads, longer for each
    /// further unpinned thread (`--threads N --unpinned`, cyclictest's default distance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_us: Option<u32>,
}

/// A zone's temperature before and after a scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ThermalChange {
    pub zone: String,
    pub kind: String,
    pub before_c: Option<f64>,
    pub after_c: Option<f64>,
}

/// A throttling counter before and after a scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CounterChange {
    pub name: String,
    pub before: Option<u64>,
    pub after: u64,
}

/// How many times one interrupt (or softirq) fired on one RT CPU during a scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct IrqDelta {
    pub irq: String,
    /// A numbered device interrupt (`36`), as opposed to a per-CPU architectural one (`LOC`,
    /// `RES`, `CAL`, `TLB`, …) that every busy CPU takes. Device interrupts on an RT CPU mean
    /// the IRQ affinity tuning did not hold.
    pub device: bool,
    pub cpu: u32,
    pub count: u64,
    pub description: String,
}

/// How far a measured load level may be from the asked `--load`, in percentage points of one
/// CPU: stress-ng's `--cpu-load` duty cycle lands within a few points on an idle CPU; a CPU
/// that other work (or a throttle) takes from the load misses it by more.
pub(crate) const LOAD_TOLERANCE_POINTS: f64 = 10.0;

/// One load generator's measured level: its processes' CPU time (utime + stime of every live
/// process of its group, `/proc/PID/stat`) over the time since it started, per CPU it was
/// pinned to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct LoadLevel {
    /// The generator (`cpu0`, `full`, …).
    pub load: String,
    /// The CPUs it was pinned to (empty: not pinned).
    pub cpus: String,
    /// The level asked, % of each CPU (`--load` for scenario `stress`); null where the
    /// scenario asks for full load of several kinds (cpu, io, vm) rather than a level.
    pub asked_percent: Option<u8>,
    /// The level reached, % of each CPU.
    pub reached_percent: f64,
}

/// Where one measuring thread of cyclictest could run and ran, over every look at it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ThreadPlacement {
    /// cyclictest's thread number, when its output named the thread's id (`T: k (TID)`,
    /// `# Thread Ids:`).
    pub thread: Option<usize>,
    pub tid: u32,
    /// The union of its `Cpus_allowed_list` over the looks (CPU list syntax).
    pub allowed: String,
    /// The CPUs it was seen on (`processor`), as a CPU list.
    pub ran_on: String,
    /// How many looks saw it.
    pub looks: usize,
}

/// One thread or process as the probe saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Task {
    pub tid: u32,
    pub name: String,
    pub allowed: String,
    /// The CPU it last ran on.
    pub cpu: Option<u32>,
    /// 0 SCHED_OTHER, 1 SCHED_FIFO, 2 SCHED_RR.
    pub policy: Option<u32>,
    pub rt_priority: Option<u32>,
}

/// What the probe saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Probe {
    pub cyclictest_pid: Option<u32>,
    pub cyclictest: Vec<Task>,
    pub load: Vec<Task>,
    /// The helper shell that took the probe (rtbuild's own, on the target).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helper: Option<Task>,
    /// cyclictest stopped at its `--trace-above-us` breach in this scenario, so a look may
    /// have come while its threads were ending (not written; set when the scenario is judged).
    #[serde(skip)]
    pub after_breach: bool,
}

/// Files one scenario or test may name (one per CPU at most).
pub(crate) const MAX_FILES: usize = 4_096;
/// Tests one scenario may list.
const MAX_TESTS: usize = 64;
fn files<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    crate::formats::at_most(d, MAX_FILES, "files")
}

fn tests<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<TestRecord>, D::Error> {
    crate::formats::at_most(d, MAX_TESTS, "tests")
}

/// A test's verdict while it runs: the word `running`.
pub(crate) const RUNNING: &str = "running";

fn running_or<S: serde::Serializer>(
    verdict: &Option<TestVerdict>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(verdict.map_or(RUNNING, TestVerdict::as_str))
}

fn running_or_word<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<TestVerdict>, D::Error> {
    let word = String::deserialize(d)?;
    // An empty word (a record never judged) is no verdict either.
    if word.is_empty() || word.eq_ignore_ascii_case(RUNNING) {
        return Ok(None);
    }
    word.parse().map(Some).map_err(serde::de::Error::custom)
}
