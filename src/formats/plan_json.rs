//! `rtbuild-plan.json`: the plan's checkable promises, written by `generate` beside the kas
//! file and read back by `verify --plan` (and `verify --machine` alone), `bundle` and `image`,
//! so they need not repeat the original flags.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Versioned;
use crate::host::cpus::CpuSet;

/// The schema this rtbuild writes.
pub(crate) const SCHEMA: u32 = 1;
/// The file's name beside the generated kas file.
pub(crate) const FILE: &str = "rtbuild-plan.json";

/// The whole file: the schema number, then the promises.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PlanFile {
    #[serde(default = "super::first_schema")]
    pub schema: u32,
    #[serde(flatten)]
    pub expectations: Expectations,
}

impl PlanFile {
    pub(crate) fn new(expectations: Expectations) -> PlanFile {
        PlanFile { schema: SCHEMA, expectations }
    }

    /// Reads a plan file, checking its schema.
    pub(crate) fn parse(text: &str) -> Result<Expectations, super::FormatError> {
        super::read_json::<PlanFile>(text).map(|file| file.expectations)
    }
}

impl Versioned for PlanFile {
    const FILE: &'static str = FILE;
    const SCHEMA: u32 = SCHEMA;
}

/// The checkable promises of a plan, written as `rtbuild-plan.json` beside the kas file so that
/// `verify`, `bundle`, `tune` and `test` can read them without the original flags. Derived
/// from a plan in one place, `crate::plan`'s `expectations` module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Expectations {
    pub machine: String,
    pub image: String,
    pub distro: String,
    pub kernel_recipe: String,
    pub rt_cpus: CpuSet,
    pub housekeeping: CpuSet,
    pub nohz_full: bool,
    pub kernel_config: Vec<ConfigExpectation>,
    pub cmdline: Vec<String>,
    pub packages: Vec<String>,
    /// Where the machine's RT defaults came from, when a meta-qcom checkout was consulted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_defaults: Option<MachineDefaults>,
    /// `rtla` when the plan was made for `rtla` (`--analyzer rtla`): the timerlat and osnoise
    /// tracers are among `kernel_config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analyzer: Option<String>,
    /// The build runs oe-core's sbom-cve-check (`--cve-check`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cve_check: bool,
    /// `--include`: the meta-qcom kas files the build includes besides rtbuild's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub includes: Vec<String>,
    /// The kernel architecture the machine needs, as the kernel's `SRCARCH` (`arm64`); absent
    /// for a bare CPU plan (any board) and in plans written before rtbuild recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// Which of meta-qcom's kas files the build composes, what was found and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition: Option<Composition>,
}

/// How the plan composed meta-qcom's kas files (`rtbuild-plan.json`'s `composition`): from the
/// checkout that is built when one was read, else from the facts rtbuild remembers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Composition {
    /// `checkout` (a meta-qcom checkout was read) or `catalog` (rtbuild's remembered facts:
    /// meta-qcom after #2879, KVM in the machine's `MACHINE_FEATURES`, `ci/gunyah.yml` opt-in).
    pub source: String,
    /// The checkout read, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_qcom: Option<PathBuf>,
    /// Its commit, when it is a git checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// How the hypervisor is chosen there: `gunyah.yml` (KVM by `MACHINE_FEATURES`,
    /// `ci/gunyah.yml` removes it: meta-qcom #2879 and later), `qcom-distro-kvm.yml`
    /// (`ci/qcom-distro-kvm.yml` adds KVM: before #2879), or `none` (neither file).
    pub layout: String,
    pub distro: String,
    /// `kvm` or `gunyah`.
    pub hypervisor: String,
    /// The machine's `MACHINE_FEATURES` as its conf appends them (or as the catalog remembers).
    pub machine_features: Vec<String>,
    /// Where `machine_features` came from: the machine conf, or `catalog`.
    pub machine_features_from: String,
    /// meta-qcom's kas files the generated kas file includes, in order (rtbuild's own; the
    /// `--include` files are in `includes`).
    pub files: Vec<String>,
    /// Why each file and the hypervisor were chosen.
    pub reasons: Vec<String>,
}

/// One kernel option and the value it must have (`y`, `m`, `n`, `"text"`, `42`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ConfigExpectation {
    pub symbol: String,
    pub value: String,
}

/// A field where meta-qcom and the catalog disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Difference {
    /// The catalog's field (`rt.rt_cpus`, `rt.housekeeping`, …).
    pub field: String,
    pub variable: String,
    pub catalog: String,
    pub meta_qcom: String,
}

/// Where a plan's machine defaults came from, when a meta-qcom checkout was consulted;
/// recorded in `rtbuild-plan.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MachineDefaults {
    /// `meta-qcom` when the plan follows the machine conf, `catalog` when it keeps rtbuild's
    /// catalog (the conf agrees, or --rt-cpus was given).
    pub source: String,
    /// The machine conf that was read.
    pub conf: PathBuf,
    /// Where meta-qcom and the catalog disagree (empty for a machine only meta-qcom knows).
    #[serde(default)]
    pub differences: Vec<Difference>,
    /// False when the machine is not in rtbuild's catalog at all.
    pub in_catalog: bool,
}
