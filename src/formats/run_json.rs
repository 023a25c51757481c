//! `run.json`: what a test run did and found. `rtbuild test` rewrites it (atomically) as each
//! scenario starts and ends, so an aborted 24 h run keeps everything measured so far;
//! `rtbuild report` reads it back. The schema is documented in docs/tune-test.md.
//!
//! Every field but `scenarios` has a default, so a hand-written or older file with only the
//! fields `rtbuild report` needs is read too.

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
    pub verdict: Option<String>,
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
    /// `PASS`, `FAIL`, `INVALID` or `SKIPPED`.
    pub verdict: String,
    /// Per thread or CPU: min/avg/max µs as the program reported them (oslat: per RT CPU, with
    /// its noise histogram).
    pub rows: Vec<crate::measure::rttests::output::Row>,
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

/// The fingerprint's short fields, for `run.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Fingerprint {
    pub uname: String,
    pub cmdline: String,
    /// `CONFIG_PREEMPT*` lines of the running kernel's config (empty when it is not readable).
    pub preempt: Vec<String>,
    /// `/sys/kernel/realtime` reads 1.
    pub realtime: bool,
    pub online: String,
    pub isolated: String,
    pub nohz_full: String,
    /// `policyN governor` per cpufreq policy.
    pub governors: Vec<String>,
    /// The CPU model (`/proc/cpuinfo`), or the Arm core types.
    pub cpu_model: String,
    /// The device tree's board model, when there is one.
    pub board: Option<String>,
    /// Each CPU's current/min/max frequency and governor (empty without cpufreq).
    pub cpufreq: Vec<CpuFreq>,
    /// Thermal zone temperatures (empty when the kernel exposes none).
    pub thermal: Vec<Thermal>,
    /// Throttling counters (x86 `thermal_throttle`, cooling-device `stats/total_trans`).
    pub throttling: Vec<Counter>,
    /// The target's `/etc/os-release` (else `/usr/lib/os-release`), key by key, unquoted.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub os_release: BTreeMap<String, String>,
    /// The image name: os-release's `IMAGE_NAME`, else `/etc/buildinfo`'s, when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_name: Option<String>,
    /// `/etc/buildinfo` (Yocto's image-buildinfo), line by line, when present.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub buildinfo: Vec<String>,
    /// The first line of `/etc/version` (the image's build stamp), when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_version: Option<String>,
    /// `uname -r` and `uname -v`: which kernel build ran.
    pub kernel_release: String,
    pub kernel_version: String,
    /// sha256 of the running kernel's config, uncompressed (as `rtbuild verify` digests it;
    /// `bundle --measurement` compares the two); absent when the target exposes no config,
    /// and in files written before rtbuild recorded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_config_sha256: Option<String>,
    /// Where that config was read: `/proc/config.gz` or `/boot/config-<release>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_config_source: Option<String>,
    /// Each devfreq device's governor (L3, LLCC, DDR on Qualcomm boards), beside cpufreq.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devfreq: Vec<Devfreq>,
    /// A running URM (`urm.service`), which re-tunes knobs when cyclictest starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urm: Option<String>,
    /// What the target's boot says about its boot flow (the Qualcomm guide's "Boot Flow");
    /// absent in records from before rtbuild read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot: Option<BootFacts>,
}

/// Facts about how the target booted, read on the target while the fingerprint is taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct BootFacts {
    /// `/dev/kvm` exists. On its own no proof of a KVM host: a guest with nested KVM has it.
    pub kvm: bool,
    /// `/sys/firmware/efi` exists: UEFI firmware started the kernel.
    pub efi: bool,
    /// The device tree's `/hypervisor` node `compatible`: a hypervisor runs below Linux.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<String>,
    /// The target was checked for signs of running as a guest (absent in records from before
    /// rtbuild looked: their boot flow is unknown).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub guest_checked: bool,
    /// Each sign found that the kernel runs under a hypervisor: `cpu-flag-hypervisor`,
    /// `sys-hypervisor`, `dmi-vendor`, `dt-dummy-virt`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub guest: Vec<String>,
}

/// The boot flow when nothing proves one.
pub(crate) const UNKNOWN_FLOW: &str = "unknown";

impl BootFacts {
    /// The guide's "Boot Flow", said only from evidence that proves it: `Gunyah (guest)` under
    /// Qualcomm's hypervisor (the device tree's `gunyah-hypervisor…` node), `guest (…)` under
    /// another hypervisor the device tree names, `guest` when another sign shows a hypervisor
    /// below Linux, `KVM` when /dev/kvm exists and the target was checked and shows no sign of
    /// being a guest (so Linux owns EL2 as the KVM host), else [`UNKNOWN_FLOW`].
    pub(crate) fn flow(&self) -> String {
        if let Some(compatible) = self.hypervisor.as_deref() {
            if compatible.contains("gunyah") {
                return "Gunyah (guest)".to_string();
            }
            let first = compatible.split_whitespace().next().unwrap_or(compatible);
            return format!("guest ({first})");
        }
        if !self.guest.is_empty() {
            return "guest".to_string();
        }
        if self.kvm && self.guest_checked {
            return "KVM".to_string();
        }
        UNKNOWN_FLOW.to_string()
    }
}

/// One devfreq device's governor and current frequency (Hz, as devfreq reports it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Devfreq {
    pub device: String,
    pub governor: Option<String>,
    pub cur_hz: Option<u64>,
}

impl Fingerprint {
    /// The Qualcomm guide's "Distro and image": os-release's name and version, then the image.
    pub(crate) fn distro_and_image(&self) -> Option<String> {
        let distro = self.os_release.get("PRETTY_NAME").cloned().or_else(|| {
            let name = self.os_release.get("NAME")?;
            Some(match self.os_release.get("VERSION_ID") {
                Some(v) => format!("{name} {v}"),
                None => name.clone(),
            })
        });
        match (distro, &self.image_name) {
            (Some(d), Some(i)) => Some(format!("{d}, {i}")),
            (Some(d), None) => Some(d),
            (None, Some(i)) => Some(i.clone()),
            (None, None) => None,
        }
    }
}

/// One CPU's frequency (kHz, as cpufreq reports it) and governor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CpuFreq {
    pub cpu: u32,
    pub cur_khz: Option<u64>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub governor: Option<String>,
}

/// One thermal zone's temperature.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Thermal {
    pub zone: String,
    /// The zone's `type` (`cpu-thermal`, `x86_pkg_temp`, `soc-thermal`, …).
    pub kind: String,
    pub temp_c: Option<f64>,
}

/// A throttling counter the kernel exposes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Counter {
    pub name: String,
    pub value: u64,
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
/// Files one scenario or test may name (one per CPU at most).
pub(crate) const MAX_FILES: usize = 4_096;
/// Tests one scenario may list.
const MAX_TESTS: usize = 64;

fn scenarios<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ScenarioRecord>, D::Error> {
    super::at_most(d, MAX_SCENARIOS, "scenarios")
}

fn files<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    super::at_most(d, MAX_FILES, "files")
}

fn tests<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<TestRecord>, D::Error> {
    super::at_most(d, MAX_TESTS, "tests")
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

    /// A run.json written before the kernel config digest was recorded is read, with no digest.
    #[test]
    fn an_older_run_json_without_the_config_digest_is_read() {
        let old = r#"{"schema": 1, "target": "ssh://root@rb3", "state": "finished",
            "fingerprint": {"uname": "Linux rb3 6.18.37-rt #1 SMP PREEMPT_RT", "kernel_release": "6.18.37-rt"},
            "scenarios": []}"#;
        let record = RunRecord::parse(old).unwrap();
        let fp = record.fingerprint.unwrap();
        assert_eq!(fp.kernel_release, "6.18.37-rt");
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
