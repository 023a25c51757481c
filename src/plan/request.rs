//! [`PlanRequest`]: what the user asked for, raw, before validation. The CLI fills it from flags
//! and the project file (`rtbuild.yaml`); [`super::Plan::new`] validates it.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::PlanError;

/// Raw build options. `None`/empty means "use the default".
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct PlanRequest {
    pub machine: Option<String>,
    pub rt_cpus: Option<String>,
    pub housekeeping: Option<String>,
    #[serde(default)]
    pub fragments: Vec<PathBuf>,
    #[serde(default)]
    pub configs: Vec<String>,
    #[serde(default)]
    pub patches: Vec<PathBuf>,
    #[serde(default)]
    pub cmdline: Vec<String>,
    /// `--include`: meta-qcom kas files (`ci/performance.yml`) or local kas files, included
    /// after rtbuild's.
    #[serde(default)]
    pub includes: Vec<String>,
    /// `Some(false)` is `--no-nohz-full`.
    pub nohz_full: Option<bool>,
    pub distro: Option<String>,
    /// `--hypervisor`: `kvm` or `gunyah` (default: KVM where the checkout gives it).
    pub hypervisor: Option<String>,
    pub image: Option<String>,
    pub meta_qcom_url: Option<String>,
    pub meta_qcom_branch: Option<String>,
    pub meta_qcom_commit: Option<String>,
    pub dl_dir: Option<PathBuf>,
    pub sstate_dir: Option<PathBuf>,
    /// Shared-cache settings for `rtbuild image`/`matrix`/`shell`, validated by the build stage
    /// (`--sstate-mirror`, `--hashserv`, `--prserv`, `--premirror`, `--mirror-tarballs`).
    #[serde(default)]
    pub sstate_mirrors: Vec<String>,
    pub hashserv: Option<String>,
    pub prserv: Option<String>,
    #[serde(default)]
    pub premirrors: Vec<String>,
    pub mirror_tarballs: Option<bool>,
    /// `--analyzer`: the trace analyzer the RT tests will use (`ftrace` or `rtla`); `rtla`
    /// puts the timerlat and osnoise tracers in rtbuild's fragment.
    pub analyzer: Option<String>,
    /// `--cve-check`: oe-core's sbom-cve-check for the image.
    pub cve_check: Option<bool>,
}

/// The project file rtbuild reads from the current folder when it exists.
pub(crate) const PROJECT_FILE: &str = "rtbuild.yaml";

impl PlanRequest {
    /// Reads a project file. Relative paths in it are relative to the file's folder.
    pub(crate) fn from_project_file(path: &Path) -> Result<PlanRequest, PlanError> {
        // A FIFO or device named rtbuild.yaml is refused by what it is, never read.
        let text = crate::files::input::read_to_string(path, crate::files::input::TEXT_LIMIT)
            .map_err(|cause| PlanError::ProjectFile { path: path.to_path_buf(), cause })?;
        let mut request: PlanRequest = crate::text::yaml::from_str(&text)
            .map_err(|cause| PlanError::ProjectYaml { path: path.to_path_buf(), cause })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        request.fragments.iter_mut().for_each(resolve);
        request.patches.iter_mut().for_each(resolve);
        request.dl_dir.iter_mut().for_each(resolve);
        request.sstate_dir.iter_mut().for_each(resolve);
        for include in &mut request.includes {
            if !super::include::names_meta_qcom_file(include) && Path::new(include).is_relative() {
                *include = base.join(&*include).to_string_lossy().into_owned();
            }
        }
        Ok(request)
    }

    /// `self` with every value that `flags` sets replaced by the flag's value: flags win.
    pub(crate) fn overridden_by(self, flags: PlanRequest) -> PlanRequest {
        fn pick<T>(flag: Option<T>, file: Option<T>) -> Option<T> {
            flag.or(file)
        }
        fn pick_list<T>(flag: Vec<T>, file: Vec<T>) -> Vec<T> {
            if flag.is_empty() { file } else { flag }
        }
        PlanRequest {
            machine: pick(flags.machine, self.machine),
            rt_cpus: pick(flags.rt_cpus, self.rt_cpus),
            housekeeping: pick(flags.housekeeping, self.housekeeping),
            fragments: pick_list(flags.fragments, self.fragments),
            configs: pick_list(flags.configs, self.configs),
            patches: pick_list(flags.patches, self.patches),
            cmdline: pick_list(flags.cmdline, self.cmdline),
            includes: pick_list(flags.includes, self.includes),
            nohz_full: pick(flags.nohz_full, self.nohz_full),
            distro: pick(flags.distro, self.distro),
            hypervisor: pick(flags.hypervisor, self.hypervisor),
            image: pick(flags.image, self.image),
            meta_qcom_url: pick(flags.meta_qcom_url, self.meta_qcom_url),
            meta_qcom_branch: pick(flags.meta_qcom_branch, self.meta_qcom_branch),
            meta_qcom_commit: pick(flags.meta_qcom_commit, self.meta_qcom_commit),
            dl_dir: pick(flags.dl_dir, self.dl_dir),
            sstate_dir: pick(flags.sstate_dir, self.sstate_dir),
            sstate_mirrors: pick_list(flags.sstate_mirrors, self.sstate_mirrors),
            hashserv: pick(flags.hashserv, self.hashserv),
            prserv: pick(flags.prserv, self.prserv),
            premirrors: pick_list(flags.premirrors, self.premirrors),
            mirror_tarballs: pick(flags.mirror_tarballs, self.mirror_tarballs),
            analyzer: pick(flags.analyzer, self.analyzer),
            cve_check: pick(flags.cve_check, self.cve_check),
        }
    }
}
