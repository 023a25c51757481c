//! The build plan: a machine plus every option, validated once. Everything after this stage
//! (rendering, building, verifying, bundling, tuning, testing) reads a [`Plan`] and never
//! checks user input again.

pub(crate) mod build_path;
pub(crate) mod compose;
mod distro;
mod error;
mod expectations;
pub(crate) mod include;
mod inputs;
pub(crate) mod layer_names;
mod request;
mod settings;
pub(crate) mod values;

pub(crate) use crate::formats::plan_json::{ConfigExpectation, Expectations};
pub(crate) use crate::host::cpus::CpuSet;
use crate::host::cpus::{Board, CpuLayout};
pub(crate) use distro::{Distro, UnknownDistro};
pub(crate) use error::PlanError;
pub(crate) use expectations::cpu_plan_expectations;
pub(crate) use include::Include;
pub(crate) use inputs::{Fragment, Patch};
pub(crate) use request::{PROJECT_FILE, PlanRequest};
pub(crate) use settings::Settings;

use serde::Serialize;

use crate::catalog::meta_qcom::MetaQcom;
use crate::catalog::{Catalog, CatalogError, Lookup, Machine};
use crate::formats::kconfig_lines::{Setting, Value};
use values::{CommitId, GitRef, RepoUrl};

/// The kernel recipe rtbuild builds and appends to.
pub(crate) const KERNEL_RECIPE: &str = "linux-qcom-rt";
/// The recipe version the bbappend is named after.
pub(crate) const KERNEL_VERSION: &str = "6.18";
/// meta-qcom's kernel-selection kas file for that recipe.
pub(crate) const KERNEL_KAS_FILE: &str = "ci/linux-qcom-rt-6.18.yml";
/// meta-qcom's public repository.
pub(crate) const META_QCOM_URL: &str = "https://github.com/qualcomm-linux/meta-qcom";
/// The Qualcomm Linux 2.x LTS branch.
pub(crate) const META_QCOM_BRANCH: &str = "wrynose";
/// The `LAYERSERIES_COMPAT` meta-qcom declares (same on master and wrynose).
pub(crate) const LAYER_SERIES: &str = "wrynose";
/// Packages every image gets: the tools to test the result, and the boot-time tuning
/// (`rtbuild-tune`, the recipe `generate` puts into the layer).
pub(crate) const IMAGE_PACKAGES: [&str; 3] =
    ["rt-tests", "stress-ng", crate::plan::layer_names::TUNE_RECIPE_NAME];
/// The kernel architecture of every machine rtbuild builds for, as the kernel's `SRCARCH`:
/// meta-qcom's machines are all ARMv8 (`qcom-armv8a`), so their kernels are `CONFIG_ARM64=y`.
pub(crate) const MACHINE_ARCH: &str = "arm64";
/// The tracers `rtla timerlat`/`rtla osnoise` need; meta-qcom's `rt.config` and defconfig set
/// neither, so `--analyzer rtla` adds them to rtbuild's fragment.
pub(crate) const RTLA_TRACERS: [&str; 2] = ["CONFIG_TIMERLAT_TRACER", "CONFIG_OSNOISE_TRACER"];
/// Kernel command-line keys derived from the RT CPUs; users cannot set them directly.
pub(crate) const RESERVED_CMDLINE_KEYS: [&str; 4] =
    ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"];

/// Where meta-qcom comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RepoSpec {
    pub url: RepoUrl,
    pub branch: GitRef,
    pub commit: Option<CommitId>,
}

/// A validated build plan: the machine, its CPU layout and composition, and the [`Settings`]
/// it was made from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub machine: Machine,
    /// The alias the user typed, when it was not the canonical name.
    pub alias: Option<String>,
    /// The machine's CPUs; its RT CPUs are isolated (`isolcpus`, `nohz_full`, `rcu_nocbs`,
    /// `QCOM_RT_CPU`, `QCOM_RCU_NOCBS`), its housekeeping CPUs do everything else
    /// (`irqaffinity`, `QCOM_IRQAFF`, workqueues, load generators).
    pub layout: CpuLayout,
    /// What the request asked for that does not depend on the machine, as checked; once the
    /// plan is made, its `includes` no longer name the meta-qcom files the composition has,
    /// and its `cmdline` no longer holds what the included meta-qcom files already append.
    pub settings: Settings,
    /// Warnings about the plan the user should see (a `--cmdline` meta-qcom already sets).
    pub warnings: Vec<String>,
    /// Notes about the plan the user should see (an alias, a hypervisor the checkout decided).
    pub notes: Vec<String>,
    /// meta-qcom's kas files the plan composes, what was found and why.
    pub composition: compose::Composition,
    /// Where the machine's defaults came from when a meta-qcom checkout was consulted.
    pub machine_defaults: Option<crate::catalog::meta_qcom::MachineDefaults>,
}

/// The kernel's command-line buffer on arm64 and x86, bytes, the terminating NUL included.
const COMMAND_LINE_SIZE: usize = 2048;

impl Plan {
    /// Validates `request` against the catalog and reads the fragment and patch files it names.
    /// Nothing is written; any error leaves the disk as it was.
    pub(crate) fn new(request: &PlanRequest, catalog: &Catalog) -> Result<Plan, PlanError> {
        Plan::from_settings(request, Settings::new(request)?, catalog, None)
    }

    /// The plan of a board that is measured or tuned, not built (`test`, `tune`): a catalog
    /// board for measuring only (no build fields) is taken too. Its composition is never
    /// rendered nor built.
    pub(crate) fn for_measuring(
        request: &PlanRequest,
        catalog: &Catalog,
    ) -> Result<Plan, PlanError> {
        let name = request.machine.as_deref().ok_or(PlanError::NoMachine)?;
        let found = catalog.lookup(name)?;
        let offer = compose::Offer::remembered(found.machine);
        let settings = Settings::new(request)?;
        Plan::for_machine(request, settings, found.machine, found.alias, &offer)
    }

    /// Like [`Plan::new`], with a meta-qcom checkout consulted (see [`Plan::from_settings`]).
    pub(crate) fn following(
        request: &PlanRequest,
        catalog: &Catalog,
        meta_qcom: &MetaQcom,
    ) -> Result<Plan, PlanError> {
        Plan::from_settings(request, Settings::new(request)?, catalog, Some(meta_qcom))
    }

    /// The plan for `request`'s machine, from its already checked `settings`, the catalog and,
    /// when one was resolved, a meta-qcom checkout. With a checkout, a machine only meta-qcom
    /// knows is taken from its conf; when meta-qcom's defaults differ from the catalog's and
    /// no `--rt-cpus` was given, the plan follows meta-qcom (the board vendor's current
    /// choice), and where the defaults came from is recorded in the plan's expectations; a
    /// `--cmdline` argument the included meta-qcom files already append is dropped, with a
    /// warning.
    pub(crate) fn from_settings(
        request: &PlanRequest,
        settings: Settings,
        catalog: &Catalog,
        meta_qcom: Option<&MetaQcom>,
    ) -> Result<Plan, PlanError> {
        let name = request.machine.as_deref().ok_or(PlanError::NoMachine)?;
        Plan::from_lookup(request, settings, catalog.lookup(name), meta_qcom, None)
    }

    /// Like [`Plan::from_settings`], with the catalog's answer for the request's machine
    /// (`known`) looked up once by the caller: `image` looks it up before meta-qcom is resolved
    /// and hands the same answer to the plan. `remembered` is the composition over what the
    /// catalog remembers of meta-qcom, when the caller already made it from these settings
    /// (`image`, for its preflight): without a checkout the plan takes it as it is.
    pub(crate) fn from_lookup(
        request: &PlanRequest,
        settings: Settings,
        known: Result<Lookup<'_>, CatalogError>,
        meta_qcom: Option<&MetaQcom>,
        remembered: Option<(compose::Composition, Vec<String>)>,
    ) -> Result<Plan, PlanError> {
        let name = request.machine.as_deref().ok_or(PlanError::NoMachine)?;
        let Some(meta) = meta_qcom else {
            let found = known?;
            // A build needs the build fields, all named at once when some are missing.
            found.machine.build()?;
            let offer = compose::Offer::remembered(found.machine);
            return Plan::composed(
                request,
                settings,
                found.machine,
                found.alias,
                &offer,
                remembered,
            );
        };
        let follow = request.rt_cpus.is_none();
        let (machine, alias, defaults) =
            crate::catalog::meta_qcom::resolve(name, known.ok(), meta, follow)?;
        machine.build()?;
        let offer = compose::Offer::of_checkout(meta, &machine);
        let mut plan = Plan::for_machine(request, settings, &machine, alias.as_deref(), &offer)?;
        plan.machine_defaults = defaults;
        let mut files = vec!["ci/base.yml"];
        files.extend(plan.kas_includes());
        let appended = crate::catalog::meta_qcom::cmdline_appends(&meta.dir, &files);
        plan.drop_cmdline_set_by(&appended);
        Ok(plan)
    }

    fn for_machine(
        request: &PlanRequest,
        settings: Settings,
        machine: &Machine,
        alias: Option<&str>,
        offer: &compose::Offer,
    ) -> Result<Plan, PlanError> {
        Plan::composed(request, settings, machine, alias, offer, None)
    }

    /// [`Plan::for_machine`], with the composition over `offer` already made when `composed`
    /// holds it.
    fn composed(
        request: &PlanRequest,
        settings: Settings,
        machine: &Machine,
        alias: Option<&str>,
        offer: &compose::Offer,
        composed: Option<(compose::Composition, Vec<String>)>,
    ) -> Result<Plan, PlanError> {
        let layout = cpu_split(machine, request)?;
        let (composition, notes) = match composed {
            Some(made) => made,
            None => compose::compose(
                machine,
                settings.distro,
                settings.hypervisor,
                &settings.includes,
                offer,
            )?,
        };
        let mut settings = settings;
        // meta-qcom files rtbuild includes anyway are not included a second time.
        let own = &composition.files;
        settings.includes.retain(|i| !matches!(i, Include::MetaQcom(name) if own.contains(name)));
        let plan = Plan {
            machine: machine.clone(),
            alias: alias.map(str::to_string),
            layout,
            settings,
            warnings: Vec::new(),
            notes,
            composition,
            machine_defaults: None,
        };
        // The kernel keeps at most COMMAND_LINE_SIZE bytes of its command line (2048 on arm64
        // and x86, the terminating NUL included) and drops the rest without a word.
        let bytes = plan.rt_cmdline().join(" ").len();
        if bytes >= COMMAND_LINE_SIZE {
            return Err(PlanError::CmdlineTooLong { bytes, limit: COMMAND_LINE_SIZE });
        }
        Ok(plan)
    }

    /// The meta-qcom kas files the generated kas file includes, in order (local `--include`
    /// files follow them; see [`Plan::includes`]).
    pub(crate) fn kas_includes(&self) -> Vec<&str> {
        let mut files: Vec<&str> = self.composition.files.iter().map(String::as_str).collect();
        files.extend(self.settings.includes.iter().filter_map(|i| match i {
            Include::MetaQcom(name) => Some(name.as_str()),
            Include::Local(_) => None,
        }));
        files
    }

    /// Drops each `--cmdline` argument that an included meta-qcom file (`file`, `arg`) already
    /// appends to `KERNEL_CMDLINE_EXTRA`, so it is never written twice, with a warning naming it.
    pub(crate) fn drop_cmdline_set_by(&mut self, appended: &[(String, String)]) {
        let warnings = &mut self.warnings;
        self.settings.cmdline.retain(|arg| {
            let text = arg.to_string();
            match appended.iter().find(|(_, a)| *a == text) {
                Some((file, _)) => {
                    warnings.push(format!(
                        "--cmdline {text} is already set by meta-qcom's {file}; not adding it twice"
                    ));
                    false
                }
                None => true,
            }
        });
    }

    /// Every kernel option the build asked for, with the value that must end up in `.config`:
    /// rtbuild's fragment first, then each user fragment, later ones winning (as
    /// `merge_config.sh` merges them).
    pub(crate) fn requested_config(&self) -> Vec<Setting> {
        let mut merged: Vec<Setting> = Vec::new();
        let all = self
            .settings
            .rt_fragment
            .iter()
            .chain(self.settings.fragments.iter().flat_map(|f| &f.settings));
        for setting in all {
            match merged.iter_mut().find(|s| s.symbol == setting.symbol) {
                Some(existing) => existing.value = setting.value.clone(),
                None => merged.push(setting.clone()),
            }
        }
        merged
    }
}

/// The CPU layout from the request, or the machine's defaults.
fn cpu_split(machine: &Machine, request: &PlanRequest) -> Result<CpuLayout, PlanError> {
    let rt = match &request.rt_cpus {
        Some(list) => CpuSet::parse(list)?,
        None => machine.rt.rt_cpus.clone(),
    };
    let housekeeping = request.housekeeping.as_deref().map(CpuSet::parse).transpose()?;
    let board = Board::Machine(machine.name.clone());
    Ok(CpuLayout::new(&machine.all_cpus(), &rt, housekeeping.as_ref(), board)?)
}

/// rtbuild's fragment: what PREEMPT_RT with isolated CPUs needs, then each `--config`.
fn rt_fragment(nohz_full: bool, configs: &[String]) -> Result<Vec<Setting>, PlanError> {
    let mut settings = vec![
        Setting::new("CONFIG_EXPERT", Value::Yes),
        Setting::new("CONFIG_PREEMPT_RT", Value::Yes),
    ];
    if nohz_full {
        settings.push(Setting::new("CONFIG_NO_HZ_FULL", Value::Yes));
    }
    settings.push(Setting::new("CONFIG_CPUSETS", Value::Yes));
    if !nohz_full {
        // RCU_NOCB_CPU depends on NO_HZ_FULL or RCU_EXPERT.
        settings.push(Setting::new("CONFIG_RCU_EXPERT", Value::Yes));
    }
    settings.push(Setting::new("CONFIG_RCU_NOCB_CPU", Value::Yes));
    let mut given: Vec<Setting> = Vec::new();
    for text in configs {
        let setting = Setting::parse_request(text)
            .map_err(|cause| PlanError::Config { text: values::printable(text), cause })?;
        if let Some(previous) = given.iter().find(|s| s.symbol == setting.symbol) {
            if previous.value != setting.value {
                return Err(PlanError::ConfigConflict {
                    first: previous.to_string(),
                    second: setting.to_string(),
                });
            }
            continue;
        }
        if setting.symbol.as_str() == "CONFIG_PREEMPT_RT" && setting.value != Value::Yes {
            return Err(PlanError::PreemptRtDisabled {
                what: "--config".into(),
                setting: setting.to_string(),
            });
        }
        given.push(setting);
    }
    for setting in given {
        match settings.iter_mut().find(|s| s.symbol == setting.symbol) {
            Some(existing) => existing.value = setting.value,
            None => settings.push(setting),
        }
    }
    Ok(settings)
}
