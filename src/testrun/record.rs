//! `run.json`: what a test run did and found, rewritten (atomically) as each scenario starts
//! and ends so that an aborted 24 h run keeps everything measured so far. The schema is
//! documented in docs/tune-test.md; `rtbuild report` reads it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::fingerprint::{Fingerprint, IrqDelta};
use super::length::Length;
use super::probe::Probe;
use crate::rttests::{Kind, Program};

pub const SCHEMA: u32 = 1;
pub const FILE: &str = "run.json";

#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub schema: u32,
    pub rtbuild_version: &'static str,
    /// `local` or the ssh URL.
    pub target: String,
    pub machine: Option<String>,
    pub rt_cpus: String,
    pub housekeeping: String,
    /// The CPUs cyclictest measured on (`--measure-cpus`; the RT CPUs by default).
    pub measure_cpus: String,
    pub settings: Settings,
    /// The latency limit the run was judged against (`--max-us`, else the machine's
    /// requirement, else 100 µs); `rtbuild report` uses the same one.
    pub threshold_us: Option<u64>,
    /// `--noise-us`, oslat's OS-noise limit (read by `rtbuild report`).
    pub noise_us: u64,
    /// `--tests`: the programs each scenario ran, in order (read by `rtbuild report`).
    pub tests: Vec<Program>,
    /// Where `threshold_us` comes from.
    pub threshold_source: String,
    pub started_unix: u64,
    /// `running`, `finished`, `interrupted` or `connection-lost`.
    pub state: String,
    /// `pass`, `fail` or `invalid`; null while running.
    pub verdict: Option<String>,
    pub tuning: Option<Tuning>,
    /// The first fingerprint taken (each scenario keeps its own too).
    pub fingerprint: Option<Fingerprint>,
    /// Per scenario, the interrupts that reached the RT CPUs (as in each scenario).
    pub interrupts: BTreeMap<String, Vec<IrqDelta>>,
    pub scenarios: Vec<ScenarioRecord>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub duration: String,
    pub length: Length,
    pub interval_us: u32,
    pub histogram_us: u32,
    /// `--cyclictest-args` as split and checked (also at the end of each cyclictest argv).
    pub cyclictest_args: Vec<String>,
    pub load_percent: u8,
    /// `--load-cmd` as split (the load of scenario `custom`), or null.
    pub load_cmd: Option<Vec<String>>,
    /// `--load-unpinned`: the custom load ran on any CPU.
    pub load_unpinned: bool,
    pub max_us: Option<u64>,
    /// `--test-args`, as split and checked, per program.
    pub test_args: BTreeMap<String, Vec<String>>,
}

/// The run-time tuning: applied for the run and reverted afterwards (`--tune`), or only
/// checked (`applied: false`: `verify_problems` lists the knobs that were not tuned).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tuning {
    pub applied: bool,
    pub apply_problems: Vec<String>,
    pub refused_irqs: usize,
    pub verify_problems: Vec<String>,
    pub reverted: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ScenarioRecord {
    pub name: String,
    /// `running`, `done`, `interrupted` or `connection-lost`.
    pub state: String,
    pub started_unix: u64,
    pub elapsed_s: f64,
    /// The cyclictest output `rtbuild report` reads (the `--json` file; the histogram text
    /// when no JSON was written), relative to the result folder. One file per scenario, so
    /// the same samples are never counted twice.
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
    pub interrupts_on_rt_cpus: Vec<IrqDelta>,
    pub softirqs_on_rt_cpus: Vec<IrqDelta>,
    pub expected_cycles: u64,
    pub threads: Vec<ThreadSummary>,
    /// The first look at the running processes; every later one is checked the same way.
    pub probe: Option<Probe>,
    pub probe_count: usize,
    /// How busy the load kept the housekeeping CPUs, % of their capacity (null without load).
    pub load_cpu_percent: Option<f64>,
    /// Why the run cannot be trusted; empty when it is valid.
    pub invalid_reasons: Vec<String>,
    /// The highest latency of any thread, µs.
    pub max_us: Option<i64>,
    /// Every test of `--tests` other than cyclictest, in the order run.
    pub tests: Vec<TestRecord>,
}

/// One rt-tests program run in a scenario (cyclictest's run is the scenario's own fields).
#[derive(Debug, Clone, Serialize)]
pub struct TestRecord {
    pub name: Program,
    pub kind: Kind,
    /// `done`, `skipped`, `interrupted` or `connection-lost`.
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
    pub files: Vec<String>,
    /// Every raw output kept (JSON, stdout, stderr).
    pub raw_files: Vec<String>,
    /// Why the run cannot be trusted; empty when it is valid.
    pub invalid_reasons: Vec<String>,
    /// Why it fails (over the threshold or noise limit, a failed correctness check).
    pub fail_reasons: Vec<String>,
    /// `pass`, `fail`, `invalid` or `skipped`.
    pub verdict: String,
    /// Per thread or CPU: min/avg/max µs as the program reported them (oslat: per RT CPU, with
    /// its noise histogram).
    pub rows: Vec<crate::rttests::output::Row>,
    pub elapsed_s: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Commands {
    /// cyclictest's argv, exactly as run on the target.
    pub cyclictest: Vec<String>,
    /// Each load generator's argv as run (including `taskset -c CPUS` when pinned).
    pub load: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    pub thread: usize,
    pub cpu: i64,
    pub cycles: u64,
    pub min_us: i64,
    pub avg_us: Option<f64>,
    pub max_us: i64,
    pub overflows: u64,
}

/// Writes `record` to `dir/run.json` through a temporary file and a rename.
pub fn write(dir: &Path, record: &RunRecord) -> std::io::Result<()> {
    let _one_writer = WRITES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    write_unlocked(dir, record)
}

/// Every write of `run.json` holds this; the second Ctrl-C takes it for good (see [`freeze`]).
static WRITES: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Stops the run loop from writing `run.json` while (and after) the second Ctrl-C finishes it:
/// every later [`write`] blocks until the process exits.
pub(super) fn freeze() -> std::sync::MutexGuard<'static, ()> {
    WRITES.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Writes an edited `run.json` (the caller holds [`freeze`]'s guard).
pub(super) fn write_value(dir: &Path, value: &serde_json::Value) -> std::io::Result<()> {
    write_unlocked(dir, value)
}

fn write_unlocked(dir: &Path, value: &impl Serialize) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer_pretty(&mut tmp, value)?;
    tmp.write_all(b"\n")?;
    tmp.persist(dir.join(FILE)).map_err(|e| e.error)?;
    Ok(())
}

pub fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
