//! [`Settings`]: everything a plan takes from the request that does not depend on the machine,
//! checked once, before meta-qcom is resolved and the machine is known.

use super::compose::{Hypervisor, HypervisorRequest};
use super::include::{self, Include};
use super::values::{self, CmdlineArg, CommitId, ConfPath, GitRef, ImageName, RepoUrl};
use super::{
    Distro, Fragment, META_QCOM_BRANCH, META_QCOM_URL, Patch, PlanError, PlanRequest,
    RESERVED_CMDLINE_KEYS, RTLA_TRACERS, RepoSpec, inputs,
};
use crate::formats::kconfig_lines::{Setting, Value};

/// The machine-independent half of a plan, validated; the [`super::Plan`] made from them holds
/// them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    pub nohz_full: bool,
    pub distro: Distro,
    /// The hypervisor asked for (`--hypervisor`, or the `qcom-distro-kvm` alias).
    pub hypervisor: HypervisorRequest,
    pub image: ImageName,
    pub meta_qcom: RepoSpec,
    pub rt_fragment: Vec<Setting>,
    pub fragments: Vec<Fragment>,
    pub patches: Vec<Patch>,
    pub cmdline: Vec<CmdlineArg>,
    /// Every `--include`, in order, each once.
    pub includes: Vec<Include>,
    pub dl_dir: Option<ConfPath>,
    pub sstate_dir: Option<ConfPath>,
    pub rtla: bool,
    pub cve_check: bool,
}

impl Settings {
    /// Checks every value of `request` that does not depend on the machine, and reads the
    /// fragment, patch and local kas files it names. Nothing is written.
    pub(crate) fn new(request: &PlanRequest) -> Result<Settings, PlanError> {
        let wanted: Option<Hypervisor> =
            request.hypervisor.as_deref().map(str::parse).transpose()?;
        let typed: Distro = match &request.distro {
            Some(d) => d.parse()?,
            None => Distro::QcomDistro,
        };
        // `qcom-distro-kvm` is kept as an alias: qcom-distro with KVM, however the checkout
        // gives KVM (see `compose`).
        let from_alias = typed == Distro::QcomDistroKvm;
        if from_alias && wanted == Some(Hypervisor::Gunyah) {
            return Err(PlanError::HypervisorConflict);
        }
        let distro = if from_alias { Distro::QcomDistro } else { typed };
        let hypervisor = HypervisorRequest {
            wanted: if from_alias { Some(Hypervisor::Kvm) } else { wanted },
            from_alias,
        };
        let image = ImageName::new(request.image.as_deref().unwrap_or(distro.default_image()))?;
        let meta_qcom = RepoSpec {
            url: RepoUrl::new(request.meta_qcom_url.as_deref().unwrap_or(META_QCOM_URL))?,
            branch: GitRef::parse(request.meta_qcom_branch.as_deref().unwrap_or(META_QCOM_BRANCH))?,
            commit: request.meta_qcom_commit.as_deref().map(CommitId::new).transpose()?,
        };
        let nohz_full = request.nohz_full.unwrap_or(true);
        let rtla = match request.analyzer.as_deref() {
            None | Some("ftrace") => false,
            Some("rtla") => true,
            Some(other) => {
                return Err(PlanError::Analyzer { given: values::printable(other) });
            }
        };
        let mut rt_fragment = super::rt_fragment(nohz_full, &request.configs)?;
        if rtla {
            for symbol in RTLA_TRACERS {
                if !rt_fragment.iter().any(|s| s.symbol.as_str() == symbol) {
                    rt_fragment.push(Setting::new(symbol, Value::Yes));
                }
            }
        }
        let fragments = inputs::read_fragments(&request.fragments)?;
        let patches = inputs::read_patches(&request.patches)?;
        inputs::check_unique_names(&fragments, &patches)?;
        let mut cmdline: Vec<CmdlineArg> = Vec::new();
        for text in &request.cmdline {
            let arg = CmdlineArg::new(text)?;
            if RESERVED_CMDLINE_KEYS.contains(&arg.key()) {
                return Err(PlanError::ReservedCmdline {
                    key: arg.key().into(),
                    arg: arg.to_string(),
                });
            }
            // An argument given twice is written once.
            if !cmdline.contains(&arg) {
                cmdline.push(arg);
            }
        }
        let mut includes: Vec<Include> = Vec::new();
        for text in &request.includes {
            let found = include::check(text)?;
            if !includes.contains(&found) {
                includes.push(found);
            }
        }
        let dl_dir = request.dl_dir.as_deref().map(|p| ConfPath::new("DL_DIR", p)).transpose()?;
        let sstate_dir =
            request.sstate_dir.as_deref().map(|p| ConfPath::new("SSTATE_DIR", p)).transpose()?;
        Ok(Settings {
            nohz_full,
            distro,
            hypervisor,
            image,
            meta_qcom,
            rt_fragment,
            fragments,
            patches,
            cmdline,
            includes,
            dl_dir,
            sstate_dir,
            rtla,
            cve_check: request.cve_check.unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(cmdline: &[&str], includes: &[&str]) -> PlanRequest {
        PlanRequest {
            cmdline: cmdline.iter().map(ToString::to_string).collect(),
            includes: includes.iter().map(ToString::to_string).collect(),
            ..PlanRequest::default()
        }
    }

    #[test]
    fn a_cmdline_argument_or_include_given_twice_is_kept_once_in_order() {
        let settings = Settings::new(&request(
            &["threadirqs", "nosmt", "threadirqs"],
            &["ci/performance.yml", "ci/debug.yml", "ci/performance.yml"],
        ))
        .unwrap();
        let args: Vec<String> = settings.cmdline.iter().map(ToString::to_string).collect();
        assert_eq!(args, ["threadirqs", "nosmt"]);
        let includes: Vec<String> = settings.includes.iter().map(Include::recorded).collect();
        assert_eq!(includes, ["ci/performance.yml", "ci/debug.yml"]);
    }
}
