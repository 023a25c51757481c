//! Before kas runs: check every folder kas and BitBake will see, run the preflight, generate
//! the kas file and layer (only what changed), and decide the build job.

use std::path::{Path, PathBuf};

use super::{ImageError, Launch};
use crate::error::Interrupted;
use crate::files::write::WriteOptions;
use crate::host::runner::signals;
use crate::image::kas::command::{self, BuildSpec};
use crate::image::kas::{BuildPaths, CacheDirs};
use crate::image::kasrun::caches::{self, CacheEnv, CacheSettings};
use crate::image::kasrun::check_writable;
use crate::image::kasrun::run::BuildJob;
use crate::layer::generate::{self, GenerateOptions};
use crate::plan::values::ConfPath;
use crate::plan::{Plan, build_path};
use crate::text::ui::Ui;

/// Where the generated files go and how they are written.
#[derive(Debug, Clone, Default)]
pub(crate) struct OutputOptions {
    /// The output folder [default: `rtbuild/<machine>`].
    pub out: Option<PathBuf>,
    /// kas's work folder (`KAS_WORK_DIR`; the build folder is its `build/`) [default: the
    /// output folder's parent, the build folder `<out>/build`].
    pub work_dir: Option<PathBuf>,
    pub write: WriteOptions,
}

impl OutputOptions {
    /// The generate options for `plan`.
    pub(crate) fn for_plan(&self, plan: &Plan) -> GenerateOptions {
        GenerateOptions {
            out: self.out.clone().unwrap_or_else(|| generate::default_out(plan)),
            write: self.write,
        }
    }

    pub(crate) fn dry_run(&self) -> bool {
        self.write.dry_run
    }
}

/// How kas and BitBake run: shared by every build of a command (`image`, each `matrix` cell,
/// `shell`).
#[derive(Debug, Clone)]
pub(crate) struct BuildSetup {
    pub launch: Launch,
    /// Targets, task and extra BitBake arguments, validated.
    pub spec: BuildSpec,
    /// Shared-cache settings, validated.
    pub caches: CacheSettings,
}

/// The folders a build uses, each checked: the output folder, kas's work folder, `DL_DIR` and
/// `SSTATE_DIR`.
#[derive(Debug)]
pub(crate) struct Site {
    pub out: PathBuf,
    pub work: PathBuf,
    pub dirs: CacheDirs,
}

/// Checks every folder kas and BitBake will see before anything is written: the output folder
/// `out` (and with it the work and build folders), DL_DIR and SSTATE_DIR from the plan or the
/// environment.
pub(crate) fn site(
    out: &Path,
    output: &OutputOptions,
    dl_dir: Option<&ConfPath>,
    sstate_dir: Option<&ConfPath>,
    env: &CacheEnv,
) -> Result<Site, ImageError> {
    let out = build_path::check("output folder", out)?;
    let work = match &output.work_dir {
        Some(dir) => build_path::check("kas work folder", dir)?,
        None => out.parent().map_or_else(|| out.clone(), Path::to_path_buf),
    };
    let dirs = CacheDirs::resolve(
        dl_dir.map(|p| p.as_path()),
        sstate_dir.map(|p| p.as_path()),
        env.dl_dir.clone(),
        env.sstate_dir.clone(),
        &work,
    );
    build_path::check("DL_DIR", &dirs.dl_dir)?;
    build_path::check("SSTATE_DIR", &dirs.sstate_dir)?;
    Ok(Site { out, work, dirs })
}

/// Checks the folders of a build of `plan` (see [`site`]) and, unless it is a dry run, that
/// the output folder is writable and the host is ready (the preflight).
pub(crate) fn check(
    plan: &Plan,
    output: &OutputOptions,
    setup: &BuildSetup,
    ui: &Ui,
) -> Result<Site, ImageError> {
    let checked = site(
        &output.for_plan(plan).out,
        output,
        plan.settings.dl_dir.as_ref(),
        plan.settings.sstate_dir.as_ref(),
        &setup.caches.env,
    )?;
    if !output.dry_run() {
        check_writable(&checked.out)?;
        let work_dir = output.work_dir.as_deref();
        setup.launch.preflight(plan, &checked.out, work_dir, &setup.caches.env, ui)?;
    }
    Ok(checked)
}

/// Checks the folders and the host ([`check`]), then generates the files and decides the job.
pub(crate) fn prepare(
    plan: &Plan,
    output: &OutputOptions,
    setup: &BuildSetup,
    ui: &Ui,
) -> Result<BuildJob, ImageError> {
    let checked = check(plan, output, setup, ui)?;
    prepare_in(plan, checked, output, setup, ui)
}

/// Generates the files and decides the job in `site`, whose folders and host were already
/// checked (by [`check`], or by `image` before meta-qcom's checkout).
pub(crate) fn prepare_in(
    plan: &Plan,
    site: Site,
    output: &OutputOptions,
    setup: &BuildSetup,
    ui: &Ui,
) -> Result<BuildJob, ImageError> {
    let options = output.for_plan(plan);
    let dry_run = output.dry_run();
    let Site { work, dirs, .. } = site;
    let generated = generate::generate_and_report(plan, &options, ui)?;
    if signals::interrupted() {
        return Err(Interrupted.into());
    }
    let mut layout = BuildPaths::new(&generated.out, &generated.kas_file);
    if output.work_dir.is_some() {
        layout = layout.in_work(&work);
    }
    command::check_paths(&layout).map_err(crate::image::kasrun::BuildError::from)?;
    for warning in setup.caches.warnings(&dirs, &caches::fs_type) {
        ui.warn(warning);
    }
    let job = BuildJob {
        machine: plan.machine.name.clone(),
        image: plan.settings.image.to_string(),
        kas: setup.launch.launcher.program.clone(),
        layout,
        dirs,
        caches: setup.caches.clone(),
        spec: setup.spec.clone(),
        container: setup.launch.launcher.engine,
    };
    if job.write_caches(dry_run)? {
        let verb = if dry_run { "Would write" } else { "Wrote" };
        ui.status(verb, crate::text::shown_path(&job.layout.caches_file));
    }
    Ok(job)
}
