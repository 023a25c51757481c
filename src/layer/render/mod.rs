//! Rendering: [`Plan`] → [`Tree`], pure (no filesystem, environment or clock): the same plan
//! and layout always give the same bytes.
//!
//! The tree holds, relative to the output folder:
//! - `<machine>-rt.yml`: the kas file composing meta-qcom's `ci/` files with the RT settings;
//! - `rtbuild-plan.json`: the plan's checkable promises ([`crate::plan::Expectations`]);
//! - `meta-rtbuild/`: the layer with the `linux-qcom-rt_6.18.bbappend`, fragments and patches,
//!   and the `rtbuild-tune` recipe that applies the run-time tuning at every boot.

use std::path::PathBuf;

use serde::Serialize;

use crate::files::tree::Tree;
use crate::formats::{self, plan_json::PlanFile};
use crate::plan::{IMAGE_PACKAGES, Include, KERNEL_RECIPE, KERNEL_VERSION, LAYER_SERIES, Plan};

pub(crate) use crate::plan::layer_names::RT_FRAGMENT_NAME;
/// The layer's folder name inside the output folder.
pub(crate) const LAYER_DIR: &str = "meta-rtbuild";
/// The file the plan's expectations are written to.
pub(crate) use crate::formats::plan_json::FILE as PLAN_FILE;
/// Where the bbappend's files live, relative to the bbappend.
const FILES_DIR: &str = "linux-qcom-rt-rtbuild";

/// Where things go, decided at the edge (it depends on where the output folder is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LayerPlacement {
    /// The layer's path inside the repository that holds the kas file: `meta-rtbuild` when the
    /// output folder is not inside a git work tree, else its path from the top of that tree.
    pub layer_in_repo: String,
}

impl Default for LayerPlacement {
    fn default() -> LayerPlacement {
        LayerPlacement { layer_in_repo: LAYER_DIR.to_string() }
    }
}

/// The kas file's name for `plan` (`rb3gen2-core-kit-rt.yml`); kas finds its lock file,
/// `<stem>.lock.yml`, beside it.
pub(crate) fn kas_file_name(plan: &Plan) -> String {
    format!("{}-rt.yml", plan.machine.name)
}

/// The kas file's lock name for `plan` (`rb3gen2-core-kit-rt.lock.yml`), beside the kas file.
pub(crate) fn lock_file_name(plan: &Plan) -> String {
    lock_name(&plan.machine.name)
}

/// The lock name for `machine`, before its plan is made.
pub(crate) fn lock_name(machine: &str) -> String {
    format!("{machine}-rt.lock.yml")
}

/// The lock as the kas file's last include, relative to the repository holding the kas file
/// (kas resolves local includes from there), like the layer path.
fn lock_include(plan: &Plan, layout: &LayerPlacement) -> String {
    let folder = layout.layer_in_repo.strip_suffix(LAYER_DIR).unwrap_or_default();
    format!("{folder}{}", lock_file_name(plan))
}

/// The bbappend's path inside the output folder.
pub(crate) fn bbappend_path() -> PathBuf {
    PathBuf::from(format!(
        "{LAYER_DIR}/recipes-kernel/linux/{KERNEL_RECIPE}_{KERNEL_VERSION}.bbappend"
    ))
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RenderError {
    #[error("bug in rtbuild: template {name} failed: {cause}; please report it")]
    Template { name: &'static str, cause: minijinja::Error },
    #[error("bug in rtbuild: the rendered kas file is not valid YAML: {0}; please report it")]
    Yaml(serde_yaml::Error),
    #[error("bug in rtbuild: rtbuild-plan.json could not be written: {0}; please report it")]
    PlanJson(serde_json::Error),
    #[error("bug in rtbuild: no repository path for --include {0}; please report it")]
    IncludePath(String),
}

/// One entry of the kas file's `header: includes:`: a meta-qcom file (`repo`), or a local kas
/// file by its path inside the repository kas reads the kas file from.
#[derive(Debug, Serialize)]
struct IncludeEntry<'a> {
    repo: Option<&'static str>,
    file: std::borrow::Cow<'a, str>,
}

/// Everything the templates see, built from the plan.
#[derive(Debug, Serialize)]
struct Context<'a> {
    version: &'static str,
    machine: &'a str,
    rt_cpus: String,
    housekeeping: String,
    distro: String,
    image: &'a str,
    kernel_recipe: &'static str,
    kernel_version: &'static str,
    includes: Vec<IncludeEntry<'a>>,
    lock_include: String,
    meta_qcom_url: &'a str,
    meta_qcom_branch: &'a str,
    meta_qcom_commit: Option<&'a str>,
    layer_path: &'a str,
    layer_series: &'static str,
    rcu_expedited: &'a str,
    cpuidle_off: &'a str,
    cmdline_extra: Vec<String>,
    packages: &'static [&'static str],
    dl_dir: Option<String>,
    sstate_dir: Option<String>,
    files_dir: &'static str,
    fragments: Vec<&'a str>,
    patches: Vec<&'a str>,
    settings: Vec<String>,
    local_conf: String,
    cve_check: bool,
    artifact_qcomflash: String,
    artifact_sbom: String,
    artifact_kernel: String,
}

/// Renders the kas file, the plan file and the layer for a `plan` without local includes.
#[cfg(test)]
pub(crate) fn render(plan: &Plan, layout: &LayerPlacement) -> Result<Tree, RenderError> {
    render_including(plan, layout, &[])
}

/// Renders the kas file, the plan file and the layer for `plan`; `local` holds the path of each
/// local `--include` inside the repository kas reads the kas file from, in the plan's order.
pub(crate) fn render_including(
    plan: &Plan,
    layout: &LayerPlacement,
    local: &[String],
) -> Result<Tree, RenderError> {
    let mut ctx = context(plan, layout);
    ctx.includes = include_entries(plan, local)?;
    ctx.local_conf = template("local.conf", &ctx)?;
    let mut tree = Tree::new();

    let kas = crate::formats::kas_yaml::generated(&ctx).map_err(template_error("kas.yml"))?;
    serde_yaml::from_str::<serde_yaml::Value>(&kas).map_err(RenderError::Yaml)?;
    tree.insert(kas_file_name(plan), kas);

    let expectations =
        formats::to_json(&PlanFile::new(plan.expectations())).map_err(RenderError::PlanJson)?;
    tree.insert(PLAN_FILE, expectations);

    tree.insert(format!("{LAYER_DIR}/conf/layer.conf"), template("layer.conf", &ctx)?);
    tree.insert(bbappend_path(), template("bbappend", &ctx)?);
    let files = format!("{LAYER_DIR}/recipes-kernel/linux/{FILES_DIR}");
    tree.insert(format!("{files}/{RT_FRAGMENT_NAME}"), template("rt-fragment.cfg", &ctx)?);
    for fragment in &plan.settings.fragments {
        tree.insert(format!("{files}/{}", fragment.name), fragment.contents.clone());
    }
    for patch in &plan.settings.patches {
        tree.insert(format!("{files}/{}", patch.name), patch.contents.clone());
    }
    crate::measure::tune::add_to_tree(&mut tree, LAYER_DIR, &tune_script(plan));
    Ok(tree)
}

/// The run-time tuning script for a validated plan. Pure: the same plan gives the same bytes.
pub(crate) fn tune_script(plan: &Plan) -> String {
    let options = crate::measure::tune::TuneOptions::for_machine(&plan.machine.rt.cpuidle_off);
    crate::measure::tune::render_script(&plan.machine.name, &plan.layout, &options)
}

/// Renders the template `name` (see [`crate::text::templates`]).
fn template(name: &'static str, ctx: &Context<'_>) -> Result<String, RenderError> {
    crate::text::templates::render(name, ctx).map_err(template_error(name))
}

fn template_error(name: &'static str) -> impl Fn(minijinja::Error) -> RenderError {
    move |source| RenderError::Template { name, cause: source }
}

/// The kas file's includes: rtbuild's own meta-qcom files, then every `--include` in order.
fn include_entries<'a>(
    plan: &'a Plan,
    local: &'a [String],
) -> Result<Vec<IncludeEntry<'a>>, RenderError> {
    let meta = |file: &'a str| IncludeEntry { repo: Some("meta-qcom"), file: file.into() };
    let mut entries: Vec<IncludeEntry<'a>> =
        plan.composition.files.iter().map(|f| meta(f.as_str())).collect();
    let mut local = local.iter();
    for include in &plan.settings.includes {
        entries.push(match include {
            Include::MetaQcom(name) => meta(name),
            Include::Local(path) => {
                let file =
                    local.next().ok_or_else(|| RenderError::IncludePath(path.to_string()))?;
                IncludeEntry { repo: None, file: file.as_str().into() }
            }
        });
    }
    Ok(entries)
}

fn context<'a>(plan: &'a Plan, layout: &'a LayerPlacement) -> Context<'a> {
    let rt = plan.layout.rt.to_string();
    let mut cmdline_extra = Vec::new();
    if plan.settings.nohz_full {
        cmdline_extra.push(format!("nohz_full={rt}"));
    }
    cmdline_extra.extend(plan.settings.cmdline.iter().map(ToString::to_string));
    // kas globs artifacts relative to the build folder; `tmp*` as TMPDIR may carry a libc suffix.
    let deploy = format!("tmp*/deploy/images/{}", plan.machine.name);
    let stem = format!("{}-{}.rootfs", plan.settings.image.as_str(), plan.machine.name);
    let mut fragments = vec![RT_FRAGMENT_NAME];
    fragments.extend(plan.settings.fragments.iter().map(|f| f.name.as_str()));
    Context {
        version: env!("CARGO_PKG_VERSION"),
        machine: &plan.machine.name,
        rt_cpus: rt,
        housekeeping: plan.layout.housekeeping.to_string(),
        distro: plan.settings.distro.to_string(),
        image: plan.settings.image.as_str(),
        kernel_recipe: KERNEL_RECIPE,
        kernel_version: KERNEL_VERSION,
        includes: Vec::new(),
        lock_include: lock_include(plan, layout),
        meta_qcom_url: plan.settings.meta_qcom.url.as_str(),
        meta_qcom_branch: plan.settings.meta_qcom.branch.as_str(),
        meta_qcom_commit: plan.settings.meta_qcom.commit.as_ref().map(|c| c.as_str()),
        layer_path: &layout.layer_in_repo,
        layer_series: LAYER_SERIES,
        rcu_expedited: &plan.machine.rt.rcu_expedited,
        cpuidle_off: &plan.machine.rt.cpuidle_off,
        cmdline_extra,
        packages: &IMAGE_PACKAGES,
        dl_dir: plan.settings.dl_dir.as_ref().map(ToString::to_string),
        sstate_dir: plan.settings.sstate_dir.as_ref().map(ToString::to_string),
        files_dir: FILES_DIR,
        fragments,
        patches: plan.settings.patches.iter().map(|p| p.name.as_str()).collect(),
        settings: plan.settings.rt_fragment.iter().map(ToString::to_string).collect(),
        local_conf: String::new(),
        cve_check: plan.settings.cve_check,
        artifact_qcomflash: format!("{deploy}/{stem}.qcomflash.tar.gz"),
        artifact_sbom: format!("{deploy}/{stem}.spdx.json"),
        artifact_kernel: format!("{deploy}/Image"),
    }
}

#[cfg(test)]
mod tests;
