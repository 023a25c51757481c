//! [`Machine`]: what rtbuild knows about one board, as written in `machines/<name>.yaml`.

use serde::{Deserialize, Serialize};

use crate::base::CpuSet;

/// One board of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Machine {
    /// The kas/BitBake `MACHINE` name, as meta-qcom names it today.
    pub name: String,
    pub description: String,
    /// Other names people use for the board (deprecated meta-qcom names, marketing names).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The meta-qcom kas file for the board, relative to the meta-qcom repo.
    pub kas_file: String,
    pub soc: String,
    pub soc_family: String,
    /// Number of CPUs, numbered from 0.
    pub cpus: u32,
    #[serde(default)]
    pub clusters: Vec<Cluster>,
    /// The machine conf's RT defaults (`QCOM_*` variables).
    pub rt: RtDefaults,
    pub serial_console: String,
    pub storage: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_features: Vec<String>,
    /// The worst-case latency the board must meet, in µs: `rtbuild report`'s default threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_requirement_us: Option<u64>,
    /// Published reference latencies, when the vendor gives them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// How Qualcomm's LAVA lab names and flashes the board; absent when the lab's test plans
    /// do not list it (`rtbuild lava` then uses the machine name and the flasher deploy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lava: Option<super::LavaProfile>,
}

/// A group of identical cores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Cluster {
    pub name: String,
    pub cpus: CpuSet,
    pub core: String,
}

/// The RT settings meta-qcom's machine conf assigns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RtDefaults {
    /// `QCOM_RT_CPU` (and `QCOM_RCU_NOCBS`).
    pub rt_cpus: CpuSet,
    /// `QCOM_IRQAFF`.
    pub housekeeping: CpuSet,
    /// `QCOM_RCU_EXPEDITED`.
    pub rcu_expedited: String,
    /// `QCOM_CPUIDLE_OFF`.
    pub cpuidle_off: String,
}

/// Latencies the vendor published for the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Reference {
    pub source: String,
    pub results: Vec<ReferenceResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReferenceResult {
    pub scenario: String,
    pub min_us: u64,
    pub avg_us: u64,
    pub max_us: u64,
}

impl Machine {
    /// Every CPU of the board.
    pub(crate) fn all_cpus(&self) -> CpuSet {
        CpuSet::range(0, self.cpus)
    }

    /// The published worst case for `scenario`, if any.
    pub(crate) fn reference_max_us(&self, scenario: &str) -> Option<u64> {
        self.reference.as_ref()?.results.iter().find(|r| r.scenario == scenario).map(|r| r.max_us)
    }
}
