//! What `run.json` and `report --json` carry of an rt-tests program's run: the kind of figure
//! it measures (and so how it is judged), its measurement rows, and oslat's default noise
//! limit. `crate::measure::rttests` runs and parses the programs and re-exports these.

use serde::{Deserialize, Serialize};

/// The default OS-noise limit for oslat, µs: the noise an isolated `nohz_full` CPU may still see.
pub(crate) const DEFAULT_NOISE_US: u64 = 20;

/// What a program measures, and so how it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Kind {
    /// Wake-up latency per thread: min/avg/max against the latency threshold.
    Latency,
    /// OS noise seen by a busy loop on each RT CPU (oslat): max against `--noise-us`.
    Noise,
    /// Pass/fail from the exit status and output (priority inversion, migration, ptrace).
    Correctness,
    /// A load generator (hackbench); run as a scenario's load, not as a test.
    Load,
    /// Hardware/firmware latency (SMIs) seen by the kernel's hwlat tracer.
    Firmware,
}

impl Kind {
    /// The name `run.json` and `report --json` use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Latency => "latency",
            Kind::Noise => "noise",
            Kind::Correctness => "correctness",
            Kind::Load => "load",
            Kind::Firmware => "firmware",
        }
    }
}

/// One measurement row: a thread (cyclictest-like tests), a sender/receiver pair, or a CPU
/// (oslat). Latencies in µs; `None` when the output does not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Row {
    pub thread: u32,
    pub cpu: Option<u32>,
    pub samples: Option<u64>,
    pub min_us: Option<f64>,
    pub avg_us: Option<f64>,
    pub max_us: Option<f64>,
    /// oslat's histogram: (µs, count), ascending; oslat counts every overflow in its last bucket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<(u64, u64)>,
}
