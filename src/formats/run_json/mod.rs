//! `run.json`: what a test run did and found. `rtbuild test` rewrites it (atomically) as each
//! scenario starts and ends, so an aborted 24 h run keeps everything measured so far;
//! `rtbuild report` reads it back. The schema is documented in docs/tune-test.md.
//!
//! Every field but `scenarios` has a default, so a hand-written or older file with only the
//! fields `rtbuild report` needs is read too.
//!
//! This file holds the run's own record ([`RunRecord`]: the target, the settings, the
//! tuning, tracing and overhead); [`scenario`] holds what each scenario and each test in it
//! measured; [`fingerprint`] the target's state (kernel, frequencies, temperatures, boot).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Versioned;

/// The schema this rtbuild writes.
pub(crate) const SCHEMA: u32 = 1;
/// The file's name in a result folder.
pub(crate) const FILE: &str = "run.json";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct RunRecord {
    #[serde(default = "super::first_schema")]
    pub schema: u32,
    pub rtbuild_version: String,
    /// `local` or the ssh URL.
    pub target: String,
    pub machine: Option<String>,
    pub rt_cpus: String,
    pub housekeeping: String,
    /// The CPUs cyclictest measured on (`--measure-cpus`; the RT CPUs by default).
    pub measure_cpus: String,
    pub settings: Settings,
    /// The latency limit the run was judged against (`--max-us`, else the machine's
    /// requirement, else 100 µs); `rtbuild report` uses the same one. rtbuild writes whole
    /// µs; a reader takes any number (and `report` checks its range).
    #[serde(serialize_with = "whole_if_integral")]
    pub threshold_us: Option<f64>,
    /// Where `threshold_us` comes from.
    pub threshold_source: Option<String>,
    /// `--noise-us`: oslat's (and hwlatdetect's) OS-noise limit, µs.
    pub noise_us: Option<u64>,
    /// `--tests`: the programs each scenario ran, in order; empty in files written before
    /// `--tests` existed, which measured with cyclictest only.
    pub tests: Vec<String>,
    pub started_unix: u64,
    /// `running`, `finished`, `interrupted` or `connection-lost`.
    pub state: String,
    /// `PASS`, `FAIL` or `INVALID` (the words `rtbuild report` uses); null while running.
    /// Files written before one vocabulary hold `pass`, `fail`, `invalid`: any case reads.
    #[serde(deserialize_with = "super::verdict::any_case")]
    pub verdict: Option<crate::formats::verdict::Verdict>,
    pub tuning: Option<Tuning>,
    /// `--stop-urm`: what became of the URM service rtbuild stopped for the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urm_stop: Option<UrmStop>,
    /// The first fingerprint taken (each scenario keeps its own too).
    pub fingerprint: Option<Fingerprint>,
    /// Per scenario, the interrupts that reached the RT CPUs (as in each scenario).
    pub interrupts: BTreeMap<String, Vec<IrqDelta>>,
    /// `--trace-above-us`: the kernel tracing rtbuild set up, and whether it was put back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracing: Option<Tracing>,
    /// Where rtbuild's own processes were allowed to run while it measured; null in files
    /// written before rtbuild kept off the measured CPUs.
    pub rtbuild_cpus: Option<OwnCpus>,
    /// What rtbuild itself added to the run while cyclictest measured; null in files written
    /// before rtbuild measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Overhead>,
    /// What the target's kernel isolated, read before the run, and what the run required of
    /// it (a run whose RT CPUs are not the isolated ones is refused before it starts); null
    /// in files written before rtbuild checked it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_isolation: Option<KernelIsolationRecord>,
    /// Warnings the kernel log already held when the run started (`BUG:`, `WARNING:`, `Oops`,
    /// RT throttling, `hrtimer: interrupt took`): information; the run is judged by the ones
    /// logged during it (each scenario's `fail_reasons` and `invalid_reasons`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_warnings_before: Vec<String>,
    /// Every irqbalance running when the run started: `PID BANNED` (its
    /// `IRQBALANCE_BANNED_CPULIST`, `-` when unset).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub irqbalance: Vec<String>,
    #[serde(deserialize_with = "scenarios")]
    pub scenarios: Vec<ScenarioRecord>,
}

/// The target kernel's CPU isolation as read before the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct KernelIsolationRecord {
    /// `/sys/devices/system/cpu/isolated` (empty: none).
    pub isolated: String,
    /// `/sys/devices/system/cpu/nohz_full` (empty: none).
    pub nohz_full: String,
    /// The last `isolcpus=` and `nohz_full=` values of `/proc/cmdline`, as written.
    pub cmdline_isolcpus: Option<String>,
    pub cmdline_nohz_full: Option<String>,
    /// What the run required of the isolation (and found, or it would not have run).
    pub required: String,
}

/// Where rtbuild's own processes (not cyclictest's measuring threads, not the load) were
/// allowed to run: the housekeeping CPUs that are not measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct OwnCpus {
    /// The CPUs rtbuild confined itself and its helper to (`Cpus_allowed_list` syntax).
    pub pinned_to: String,
    /// The union of every rtbuild thread's `Cpus_allowed_list`, read back after pinning, for
    /// a local run; null over ssh (rtbuild then runs on another machine than the one measured).
    pub rtbuild: Option<String>,
    /// The on-target helper's own `Cpus_allowed_list` as its first probe of each scenario saw
    /// it (the union over the scenarios); null before a probe.
    pub helper: Option<String>,
    /// Why rtbuild could not confine itself, when it could not.
    pub problem: Option<String>,
    /// Helper calls rtbuild made while cyclictest measured (the progress display's status
    /// requests and the probes), and the seconds measured: their ratio is the helper's
    /// wakeup rate on the target.
    pub helper_calls_measuring: u64,
    pub measuring_s: f64,
}

/// What rtbuild added to the measurement (issue 37), over every scenario's measuring time.
/// `benches/overhead.rs` compares the same cyclictest command line run bare.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Overhead {
    /// Seconds cyclictest measured, all scenarios together.
    pub measuring_s: f64,
    /// CPU time (user + system) rtbuild's own process used meanwhile, seconds (a local run;
    /// null over ssh, where rtbuild runs on another machine). Not cyclictest's, the load's or
    /// the on-target helper's, which are separate processes.
    pub rtbuild_cpu_s: Option<f64>,
    /// `rtbuild_cpu_s` as a share of `measuring_s` (percent of one CPU).
    pub rtbuild_cpu_pct: Option<f64>,
    /// rtbuild's own threads found running on an RT CPU, read at every turn of the progress
    /// loop while measuring (`/proc/self/task/*/stat`): how many distinct threads (0: never);
    /// null over ssh.
    pub own_tasks_seen_on_rt_cpus: Option<u64>,
    /// Per-CPU interrupts (timer `LOC`, rescheduling `RES`, function-call `CAL`, `TLB`
    /// shootdowns, …) that reached the RT CPUs, summed over the scenarios (device interrupts
    /// too); cyclictest's own timer interrupts are among them.
    pub rt_cpu_irqs: Vec<IrqCount>,
}

/// One interrupt's count on one CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct IrqCount {
    pub irq: String,
    pub cpu: u32,
    pub count: u64,
}

/// The ftrace recording of `--trace-above-us` on the target.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Tracing {
    /// `ftrace` (rtbuild records and explains) or `rtla` (rtla timerlat's auto-analysis).
    pub analyzer: String,
    /// The breach threshold, µs (cyclictest `-b`).
    pub above_us: u64,
    /// The tracefs folder used (`/sys/kernel/tracing`, `/sys/kernel/debug/tracing`).
    pub tracefs: String,
    /// Whether rtbuild mounted tracefs itself (and unmounted it afterwards).
    pub mounted: bool,
    /// The events recorded (`group:event` or `group:*`), those this kernel has.
    pub events: Vec<String>,
    /// Every setting rtbuild changed was put back and read back equal.
    pub restored: bool,
    /// The settings that did not read back as before (empty when `restored`).
    pub restore_problems: Vec<String>,
}

/// One scenario's breach, when cyclictest crossed `--trace-above-us`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TraceRecord {
    /// The kept trace window (`trace-<scenario>.txt`), relative to the result folder.
    pub file: String,
    /// The measured CPU that crossed the threshold.
    pub cpu: Option<u32>,
    /// cyclictest's break value, µs.
    pub latency_us: Option<f64>,
    /// The measuring thread (cyclictest's `Break thread`).
    pub tid: Option<u32>,
    /// What rtbuild saw in the trace (`rtbuild report` derives it again from the file).
    pub explanation: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Settings {
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
    /// `--trace-above-us`, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_above_us: Option<u64>,
    /// `--analyzer`: `ftrace` or `rtla` (with `--trace-above-us`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analyzer: Option<String>,
}

/// `--stop-urm`: Qualcomm's URM (`urm.service`) re-tunes knobs when cyclictest starts, so it
/// is stopped for the run and started again afterwards (also after Ctrl-C or a failure).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct UrmStop {
    /// The service asked about: `urm.service`.
    pub service: String,
    /// It was active and rtbuild stopped it; false when it was not running (nothing to do).
    pub stopped: bool,
    /// It was started again after the run and reads back active.
    pub restored: bool,
    /// What went wrong stopping or starting it, if anything.
    pub problem: Option<String>,
}

/// The run-time tuning: applied for the run and reverted afterwards (`--tune`), or only
/// checked (`applied: false`: `verify_problems` lists the knobs that were not tuned).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Tuning {
    pub applied: bool,
    pub apply_problems: Vec<String>,
    pub refused_irqs: usize,
    pub verify_problems: Vec<String>,
    pub reverted: bool,
    /// `--overcommit-never`: `vm.overcommit_memory=2` was part of the tuning (set, read back
    /// and reverted like every knob).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overcommit_never: bool,
}

/// A run length: seconds (`-D`) or a loop count (`-l`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Length {
    Seconds(u64),
    Loops(u64),
}

/// Writes `100.0` as `100`, so a whole-µs limit reads as it was given.
fn whole_if_integral<S: serde::Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => s.serialize_some(&(*v as i64)),
        other => other.serialize(s),
    }
}

impl Default for Length {
    fn default() -> Length {
        Length::Seconds(0)
    }
}

/// Scenarios a `run.json` may list (`rtbuild test` runs a handful).
pub(crate) const MAX_SCENARIOS: usize = 1_000;

fn scenarios<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ScenarioRecord>, D::Error> {
    super::at_most(d, MAX_SCENARIOS, "scenarios")
}

impl Versioned for RunRecord {
    const FILE: &'static str = FILE;
    const SCHEMA: u32 = SCHEMA;
}

impl RunRecord {
    /// The record as `run.json`'s text (pretty JSON, one trailing newline).
    pub(crate) fn to_text(&self) -> Result<String, serde_json::Error> {
        super::to_json(self)
    }

    /// Reads a `run.json`, checking its schema.
    pub(crate) fn parse(text: &str) -> Result<RunRecord, super::FormatError> {
        super::read_json(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fingerprint field run.json does not hold was not measured: read and written again (as
    /// `report` passes it on), it stays absent instead of turning into `false`, `""` or `[]`.
    #[test]
    fn a_fingerprint_keeps_the_fields_run_json_did_not_record_absent() {
        let text = r#"{"schema": 1, "target": "ssh://root@rb3", "state": "finished",
            "fingerprint": {"isolated": "", "nohz_full": ""}, "scenarios": []}"#;
        let fp = RunRecord::parse(text).unwrap().fingerprint.unwrap();
        assert_eq!((fp.realtime, fp.preempt.as_ref(), fp.cpufreq.as_ref()), (None, None, None));
        assert_eq!(
            serde_json::to_value(&fp).unwrap(),
            serde_json::json!({"isolated": "", "nohz_full": ""})
        );
    }

    /// A run.json written before the kernel config digest was recorded is read, with no digest.
    #[test]
    fn an_older_run_json_without_the_config_digest_is_read() {
        let old = r#"{"schema": 1, "target": "ssh://root@rb3", "state": "finished",
            "fingerprint": {"uname": "Linux rb3 6.18.37-rt #1 SMP PREEMPT_RT", "kernel_release": "6.18.37-rt"},
            "scenarios": []}"#;
        let record = RunRecord::parse(old).unwrap();
        let fp = record.fingerprint.unwrap();
        assert_eq!(fp.kernel_release.as_deref(), Some("6.18.37-rt"));
        assert_eq!((fp.kernel_config_sha256, fp.kernel_config_source), (None, None));
        let sha = "0".repeat(64);
        let new = old.replace(
            r#""kernel_release": "6.18.37-rt"}"#,
            &format!(r#""kernel_release": "6.18.37-rt", "kernel_config_sha256": "{sha}", "kernel_config_source": "/proc/config.gz"}}"#),
        );
        let fp = RunRecord::parse(&new).unwrap().fingerprint.unwrap();
        assert_eq!(fp.kernel_config_sha256.as_deref(), Some(sha.as_str()));
        assert_eq!(fp.kernel_config_source.as_deref(), Some("/proc/config.gz"));
    }
}

mod fingerprint;
mod scenario;

pub(crate) use fingerprint::{
    BootFacts, Counter, CpuFreq, Devfreq, Fingerprint, Thermal, UNKNOWN_FLOW,
};
pub(crate) use scenario::{
    Commands, CounterChange, IrqDelta, LOAD_TOLERANCE_POINTS, LoadLevel, Probe, ScenarioRecord,
    Task, TestRecord, ThermalChange, ThreadPlacement, ThreadSummary,
};
