//! `rtbuild bundle --diff OLD NEW --json`: what changed between two release bundles, for the
//! release manager who signs off: repos and commits, kernel config options, packages, CVEs,
//! boot arguments and, when both carry a measurement, the latency per scenario.

use serde::{Deserialize, Serialize};

use super::Versioned;

/// The schema this rtbuild writes.
pub(crate) const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct BundleDiff {
    #[serde(default = "super::first_schema")]
    pub schema: u32,
    pub old: String,
    pub new: String,
    /// Repos by name: added, removed, or at another commit (from the manifests and locks).
    pub repos: Vec<Change>,
    /// Kernel options (`CONFIG_X`) added, removed or changed, from the SBOMs' kernel config;
    /// `null` when a bundle carries none.
    pub kernel_config: Option<Vec<Change>>,
    /// Packages added, removed or at another version, from the SBOMs; `null` without both.
    pub packages: Option<Vec<Change>>,
    /// CVEs unpatched in OLD and no longer in NEW (`fixed`) and the other way (`new`), from
    /// the VEX documents; `null` without both.
    pub cves: Option<CveChange>,
    /// Boot arguments added or removed.
    pub cmdline: Vec<Change>,
    /// Per scenario, max and p99.9 latency, µs, when both carry a measurement.
    pub latency: Option<Vec<LatencyChange>>,
}

/// One item that differs: `old` is null when added, `new` when removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Change {
    pub name: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CveChange {
    pub fixed: Vec<String>,
    pub new: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatencyChange {
    pub scenario: String,
    pub old_max_us: Option<f64>,
    pub new_max_us: Option<f64>,
    pub old_p999_us: Option<f64>,
    pub new_p999_us: Option<f64>,
}

impl Versioned for BundleDiff {
    const FILE: &'static str = "bundle --diff --json";
    const SCHEMA: u32 = SCHEMA;
}
