//! [`Machine`]: what rtbuild knows about one board, as written in `machines/<name>.yaml`.

use serde::{Deserialize, Serialize};

use crate::host::cpus::CpuSet;

/// One board of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Machine {
    /// The kas/BitBake `MACHINE` name, as meta-qcom names it today; for a board rtbuild only
    /// measures, the name its runs are filed under in the history.
    pub name: String,
    /// Empty when the file gives none (the name is shown instead).
    #[serde(default)]
    pub description: String,
    /// Other names people use for the board (deprecated meta-qcom names, marketing names).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The meta-qcom kas file for the board, relative to the meta-qcom repo. This and
    /// `soc_family`, `serial_console` and `storage` are the build fields: a board without them
    /// is measured (`test`, `tune`, `report`, `history`) but not built for ([`Machine::build`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kas_file: Option<String>,
    /// The SoC's marketing name, shown by `rtbuild machines`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soc_family: Option<String>,
    /// Number of CPUs, numbered from 0.
    pub cpus: u32,
    #[serde(default)]
    pub clusters: Vec<Cluster>,
    /// The machine conf's RT defaults (`QCOM_*` variables).
    pub rt: RtDefaults,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_console: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_features: Vec<String>,
    /// The worst-case latency the board must meet, in µs: `rtbuild report`'s default threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_requirement_us: Option<u64>,
    /// Published reference latencies, when the vendor gives them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// Where the facts of a board rtbuild only measures come from (a vendor guide, a wiki).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
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
    /// `QCOM_IRQAFF`; a file that leaves it out gets every CPU that is not an RT CPU (filled
    /// in when the catalog loads, so it is never empty after that).
    #[serde(default)]
    pub housekeeping: CpuSet,
    /// `QCOM_RCU_EXPEDITED`; empty: not set on the command line.
    #[serde(default)]
    pub rcu_expedited: String,
    /// `QCOM_CPUIDLE_OFF`; empty: not set on the command line.
    #[serde(default)]
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

/// The fields a build for the board needs, all present ([`Machine::build`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BuildFields<'a> {
    pub kas_file: &'a str,
    pub soc: &'a str,
    pub soc_family: &'a str,
    pub serial_console: &'a str,
    pub storage: &'a str,
}

/// The fields of a machine file a build needs, in the file's own names and order.
pub(crate) const BUILD_FIELDS: [&str; 5] =
    ["kas_file", "soc", "soc_family", "serial_console", "storage"];

impl Machine {
    /// The build fields, or every one that is missing, named at once: a board for measuring
    /// needs only `name`, `cpus` and `rt.rt_cpus`.
    pub(crate) fn build(&self) -> Result<BuildFields<'_>, super::CatalogError> {
        let fields = [
            self.kas_file.as_deref(),
            self.soc.as_deref(),
            self.soc_family.as_deref(),
            self.serial_console.as_deref(),
            self.storage.as_deref(),
        ];
        let missing: Vec<&'static str> = BUILD_FIELDS
            .iter()
            .zip(fields)
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| *name)
            .collect();
        match fields {
            [Some(kas_file), Some(soc), Some(soc_family), Some(serial_console), Some(storage)] => {
                Ok(BuildFields { kas_file, soc, soc_family, serial_console, storage })
            }
            _ => Err(super::CatalogError::MeasuringOnly { name: self.name.clone(), missing }),
        }
    }

    /// The description, or the name when the file gives none.
    pub(crate) fn title(&self) -> &str {
        if self.description.is_empty() { &self.name } else { &self.description }
    }

    /// Every CPU of the board.
    pub(crate) fn all_cpus(&self) -> CpuSet {
        CpuSet::range(0, self.cpus)
    }

    /// The published worst case for `scenario`, if any.
    pub(crate) fn reference_max_us(&self, scenario: &str) -> Option<u64> {
        self.reference.as_ref()?.results.iter().find(|r| r.scenario == scenario).map(|r| r.max_us)
    }
}
