//! The image pipeline, as `rtbuild image` runs it, one way through: the request's settings
//! checked → meta-qcom resolved (`--meta-qcom DIR`, or kas's checkout) → the plan, made once →
//! prepare, once (check folders, preflight, generate only what changed) → kas and BitBake →
//! verify → bundle. `matrix` resolves meta-qcom once for its work folder and runs the rest once
//! per cell; `shell` opens `kas shell` on what it prepares.
//!
//! Commands only map their flags to [`ImageOptions`] and call [`image`], [`matrix::matrix`] or
//! [`shell::shell`]; processes start through the [`Runner`] they are given.

mod dry_run;
mod launch;
pub(crate) mod matrix;
mod meta_qcom;
mod post;
mod prepare;
pub(crate) mod shell;
pub(crate) mod verify_bundle;
mod warm_checkout;

use std::path::{Path, PathBuf};

pub(crate) use dry_run::DryRun;
pub(crate) use launch::{Launch, container_engine};
pub(crate) use meta_qcom::MetaQcomSource;
pub(crate) use post::{After, Post, after_build};
pub(crate) use prepare::{BuildSetup, OutputOptions, prepare};
use verify_bundle::AfterError;

use crate::catalog::Catalog;
use crate::error::{ErrorCode, Exit, Interrupted};
use crate::host::runner::Runner;
use crate::image::doctor::NotReady;
use crate::image::kasrun::BuildError;
use crate::image::kasrun::report::BuildResult;
use crate::image::kasrun::run;
use crate::image::kasrun::run::BuildJob;
use crate::layer::generate::GenerateError;
use crate::plan::values::ValueError;
use crate::plan::{Plan, PlanError, PlanRequest, Settings};
use crate::release::lock::LockError;
use crate::text::ui::Ui;

/// What `rtbuild image` should do beyond the plan.
#[derive(Debug, Clone)]
pub(crate) struct ImageOptions {
    pub output: OutputOptions,
    pub setup: BuildSetup,
    pub post: Post,
    /// Build from this lock file, installed beside the generated kas file.
    pub lock: Option<PathBuf>,
    /// Where the plan reads meta-qcom's machine conf and kas files from.
    pub meta_qcom: MetaQcomSource,
}

/// How `rtbuild image` ended. One is returned per command, so the size difference between
/// the variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum ImageOutcome {
    /// `--dry-run`: the files that would change were reported; nothing ran.
    Planned(DryRun),
    /// kas ran: the build's result (failed and interrupted builds too), what ran after it,
    /// and the seconds kas itself took (the checkout that follows meta-qcom, the build and the
    /// bundle's `kas dump`).
    Built { result: BuildResult, after: After, kas_secs: f64 },
}

/// Why the pipeline stopped before a build result. Each variant is the stage's own error,
/// shown as it is, with its exit code (input problems exit 2, the rest 1).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageError {
    #[error("--bundle needs the whole image; drop --target, --task and --bitbake-args")]
    BundleNeedsWholeImage,
    /// `--container` names no engine rtbuild knows (the message says which it knows).
    #[error("{0}")]
    Engine(String),
    /// A folder kas or BitBake would see is not usable.
    #[error(transparent)]
    Path(#[from] ValueError),
    /// The host is not ready to build (the preflight's report was printed).
    #[error(transparent)]
    NotReady(#[from] NotReady),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The build succeeded and could not be verified or bundled. The cause is not a source:
    /// after a build ran, anything that stops verification fails the build (exit 1).
    #[error("after the build: {0}")]
    After(AfterError),
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
}

impl ErrorCode for ImageError {
    fn exit(&self) -> Exit {
        match self {
            ImageError::BundleNeedsWholeImage | ImageError::Engine(_) => Exit::Usage,
            ImageError::Path(e) => e.exit(),
            ImageError::Plan(e) => e.exit(),
            ImageError::NotReady(e) => e.exit(),
            ImageError::Generate(e) => e.exit(),
            ImageError::Lock(e) => e.exit(),
            ImageError::Build(e) => e.exit(),
            ImageError::Interrupted(e) => e.exit(),
            ImageError::After(_) => Exit::Failed,
        }
    }
}

/// Runs the image pipeline for `request`: its settings are checked, meta-qcom is resolved, the
/// plan is made once and prepared once. A failed or interrupted build is an outcome, not an
/// error.
pub(crate) fn image(
    request: &PlanRequest,
    catalog: &Catalog,
    options: &ImageOptions,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<ImageOutcome, ImageError> {
    let dry_run = options.output.dry_run();
    if let Some(lock) = &options.lock {
        // Read (and so check) the lock before anything is generated.
        crate::release::lock::LockFile::read(lock)?;
    }
    let Prepared { plan, job, checkout_secs } = prepared(request, catalog, options, runner, ui)?;
    if let Some(lock) = &options.lock {
        install_lock(lock, &job.layout.kas_file, dry_run, ui)?;
    }
    if dry_run {
        return Ok(ImageOutcome::Planned(DryRun::of(&job)));
    }
    let expected = plan.expectations();
    let result = run::build(&job, runner, ui)?;
    run::report(&result, ui);
    let after = after_build(&result, &job, &expected, options.post, runner, ui)?;
    let kas_secs = checkout_secs + result.duration_secs + after.kas_secs;
    Ok(ImageOutcome::Built { result, after, kas_secs })
}

/// A build made ready to run: the plan and the job, with the seconds kas took to check
/// meta-qcom out.
pub(crate) struct Prepared {
    pub plan: Plan,
    pub job: BuildJob,
    pub checkout_secs: f64,
}

/// The request's settings checked, meta-qcom resolved (`--meta-qcom DIR`, else kas's checkout
/// in the work folder), the plan made once, the folders and host checked once and the files
/// generated: what `image` builds and what `shell` opens, so a `shell` after an `image` with
/// the same arguments generates the same files.
pub(crate) fn prepared(
    request: &PlanRequest,
    catalog: &Catalog,
    options: &ImageOptions,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<Prepared, ImageError> {
    let settings = Settings::new(request)?;
    let name = request.machine.as_deref().ok_or(PlanError::NoMachine)?;
    // The command's one catalog lookup: meta-qcom's checkout and the plan both take it.
    let known = catalog.lookup(name);
    let mut resolved = meta_qcom::resolve(known, &settings, options, runner, ui)?;
    let checkout_secs = resolved.kas_secs;
    // The folders and the host are checked once: before the checkout when one runs, else here.
    let checked = resolved.site.take();
    let plan = plan(request, settings, resolved, ui)?;
    let site = match checked {
        Some(site) => site,
        None => prepare::check(&plan, &options.output, &options.setup, ui)?,
    };
    let job = prepare::prepare_in(&plan, site, &options.output, &options.setup, ui)?;
    Ok(Prepared { plan, job, checkout_secs })
}

/// The plan, made once from the request's settings, the catalog's answer and meta-qcom as
/// resolved.
/// With kas's own checkout, the plan records where the machine's defaults came from only when
/// it follows meta-qcom's (they differ from the catalog's and no `--rt-cpus` was given);
/// otherwise the user is only told what meta-qcom has.
fn plan(
    request: &PlanRequest,
    settings: Settings,
    resolved: meta_qcom::Resolved<'_>,
    ui: &Ui,
) -> Result<Plan, ImageError> {
    // Without a checkout, the composition made for the preflight is the plan's.
    let remembered = resolved.composed.filter(|_| resolved.meta_qcom.is_none());
    let mut plan = Plan::from_lookup(
        request,
        settings,
        resolved.known,
        resolved.meta_qcom.as_ref(),
        remembered,
    )?;
    let followed = plan.machine_defaults.as_ref().is_some_and(|d| d.source == "meta-qcom");
    if resolved.checked_out && !followed {
        if let Some(note) =
            plan.machine_defaults.take().and_then(|d| d.note(&plan.machine.name, true))
        {
            ui.note(note);
        }
    }
    Ok(plan)
}

/// Installs `lock` beside the kas file (or, with `--dry-run`, only says it would).
fn install_lock(lock: &Path, kas_file: &Path, dry_run: bool, ui: &Ui) -> Result<(), ImageError> {
    let target = crate::release::lock::lock_path_for(kas_file);
    if dry_run {
        ui.status(
            "Would lock",
            format!("{} from {}", crate::text::shown_path(&target), crate::text::shown_path(lock)),
        );
        return Ok(());
    }
    let installed = crate::release::lock::install(lock, kas_file)?;
    let verb = if installed.written { "Locked" } else { "Lock kept" };
    ui.status(
        verb,
        format!(
            "{} in {}",
            crate::text::counted(installed.repos, "repo"),
            crate::text::shown_path(&installed.lock_file)
        ),
    );
    Ok(())
}

#[cfg(test)]
mod tests;
