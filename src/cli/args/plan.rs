//! The flags that describe a build plan, shared by `generate`, `image`, `lock`, `tune`, …

use std::path::{Path, PathBuf};

use clap::Args;

use super::{CpuFlags, MachineArgs};
use crate::catalog::Catalog;
use crate::catalog::meta_qcom::MetaQcom;
use crate::plan::{PROJECT_FILE, Plan, PlanRequest};

/// Machine and build options. Each can also be set in `rtbuild.yaml` (same names); flags win.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    #[command(flatten)]
    pub cpus: CpuFlags,
    /// Extra kernel config fragment (`.cfg`), merged after rtbuild's; repeatable.
    #[arg(long = "fragment", value_name = "FILE.cfg")]
    pub fragments: Vec<PathBuf>,
    /// Extra kernel option, e.g. `CONFIG_HZ_1000=y` or `CONFIG_DEBUG_INFO=n`; repeatable.
    #[arg(long = "config", value_name = "CONFIG_X=VALUE")]
    pub configs: Vec<String>,
    /// Kernel patch to apply to linux-qcom-rt; repeatable.
    #[arg(long = "patch", value_name = "FILE.patch")]
    pub patches: Vec<PathBuf>,
    /// A kas file to include after rtbuild's: one of meta-qcom's, e.g. `ci/performance.yml`
    /// (the Qualcomm guide's `performance_…` builds), or a local kas file (`./ci/x.yml` for a
    /// local one under a folder named ci); repeatable, recorded in rtbuild-plan.json.
    #[arg(long = "include", value_name = "ci/FILE.yml|FILE")]
    pub includes: Vec<String>,
    /// Extra kernel command-line argument, e.g. `threadirqs`; repeatable.
    #[arg(long = "cmdline", value_name = "ARG")]
    pub cmdline: Vec<String>,
    /// Do not enable CONFIG_NO_HZ_FULL nor pass nohz_full= for the RT CPUs.
    #[arg(long)]
    pub no_nohz_full: bool,
    /// meta-qcom distro flavour: nodistro or qcom-distro [default: qcom-distro];
    /// qcom-distro-kvm is kept as an alias of `--distro qcom-distro --hypervisor kvm`.
    #[arg(long, env = "KAS_DISTRO")]
    pub distro: Option<String>,
    /// The hypervisor, kvm or gunyah [default: kvm where the meta-qcom checkout gives it]:
    /// the machine conf's MACHINE_FEATURES, ci/gunyah.yml (meta-qcom #2879 and later) or
    /// ci/qcom-distro-kvm.yml (before) decide how; refused, with the reason, where the
    /// checkout cannot build it.
    #[arg(long, value_name = "kvm|gunyah")]
    pub hypervisor: Option<String>,
    /// Image to build [default: qcom-multimedia-image; core-image-base with nodistro].
    #[arg(long)]
    pub image: Option<String>,
    /// meta-qcom repository URL (a mirror, or a local file:/// clone).
    #[arg(long, value_name = "URL")]
    pub meta_qcom_url: Option<String>,
    /// meta-qcom branch [default: wrynose, the Qualcomm Linux 2.x LTS].
    #[arg(long, value_name = "BRANCH")]
    pub meta_qcom_branch: Option<String>,
    /// Pin meta-qcom to this full commit id.
    #[arg(long, value_name = "SHA")]
    pub meta_qcom_commit: Option<String>,
    /// BitBake download folder (DL_DIR), shared across builds.
    #[arg(long, value_name = "DIR")]
    pub dl_dir: Option<PathBuf>,
    /// BitBake shared-state folder (SSTATE_DIR), shared across builds.
    #[arg(long, value_name = "DIR")]
    pub sstate_dir: Option<PathBuf>,
    /// A meta-qcom checkout whose conf/machine/<machine>.conf gives the RT defaults: a machine
    /// only meta-qcom knows works, and meta-qcom's defaults win over the catalog's when they
    /// differ and --rt-cpus is not given.
    #[arg(long, value_name = "DIR")]
    pub meta_qcom: Option<PathBuf>,
    /// The trace analyzer the RT tests will use, `ftrace` or `rtla`: `rtla` adds
    /// CONFIG_TIMERLAT_TRACER and CONFIG_OSNOISE_TRACER to rtbuild's fragment, and verify
    /// requires them.
    #[arg(long, value_name = "ftrace|rtla")]
    pub analyzer: Option<String>,
    /// Check the image for CVEs with oe-core's sbom-cve-check (the core/yocto/sbom-cve-check
    /// fragment, with compiled sources for linux-qcom-rt so kernel CVEs are filtered by what
    /// is compiled); the bundle carries its VEX and summary.
    #[arg(long)]
    pub cve_check: bool,
    /// Project file to read [default: ./rtbuild.yaml when it exists].
    #[arg(long, value_name = "FILE")]
    pub project: Option<PathBuf>,
}

impl PlanArgs {
    /// The request these flags make, over the project file's.
    pub(crate) fn request(&self) -> crate::cli::error::Result<PlanRequest> {
        let flags = PlanRequest {
            machine: self.machine.name.clone(),
            rt_cpus: self.cpus.rt_cpus.clone(),
            housekeeping: self.cpus.housekeeping.clone(),
            fragments: self.fragments.clone(),
            configs: self.configs.clone(),
            patches: self.patches.clone(),
            cmdline: self.cmdline.clone(),
            includes: self.includes.clone(),
            nohz_full: self.no_nohz_full.then_some(false),
            distro: self.distro.clone(),
            hypervisor: self.hypervisor.clone(),
            image: self.image.clone(),
            meta_qcom_url: self.meta_qcom_url.clone(),
            meta_qcom_branch: self.meta_qcom_branch.clone(),
            meta_qcom_commit: self.meta_qcom_commit.clone(),
            dl_dir: self.dl_dir.as_deref().map(absolute),
            sstate_dir: self.sstate_dir.as_deref().map(absolute),
            analyzer: self.analyzer.clone(),
            cve_check: self.cve_check.then_some(true),
            ..PlanRequest::default()
        };
        let project = match &self.project {
            Some(path) => Some(path.clone()),
            // Anything named rtbuild.yaml counts (a FIFO or a dangling link is refused when
            // read, not skipped without a word).
            None => Some(PathBuf::from(PROJECT_FILE)).filter(|p| p.symlink_metadata().is_ok()),
        };
        Ok(match project {
            Some(path) => PlanRequest::from_project_file(&absolute(&path))?.overridden_by(flags),
            None => flags,
        })
    }

    pub(crate) fn catalog(&self) -> crate::cli::error::Result<Catalog> {
        self.machine.catalog()
    }

    /// Validates everything into a plan (consulting `--meta-qcom DIR` when given).
    pub(crate) fn plan(&self) -> crate::cli::error::Result<Plan> {
        let request = self.request()?;
        let catalog = self.catalog()?;
        Ok(match self.meta_qcom()? {
            Some(meta) => Plan::following(&request, &catalog, &meta)?,
            None => Plan::new(&request, &catalog)?,
        })
    }

    /// The `--meta-qcom DIR` checkout, opened (and so checked), when given.
    pub(crate) fn meta_qcom(&self) -> crate::cli::error::Result<Option<MetaQcom>> {
        self.meta_qcom.as_deref().map(MetaQcom::open).transpose().map_err(Into::into)
    }

    /// Where the pipeline reads meta-qcom from: `--meta-qcom DIR` (opened, and so checked), else
    /// kas's checkout in the work folder.
    pub(crate) fn meta_qcom_source(
        &self,
    ) -> crate::cli::error::Result<crate::image::pipeline::MetaQcomSource> {
        use crate::image::pipeline::MetaQcomSource;
        Ok(self.meta_qcom()?.map_or(MetaQcomSource::Checkout, MetaQcomSource::Given))
    }
}

/// `path` made absolute against the current folder (no symlink resolution).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
