//! `rtbuild image`: the flags mapped onto [`crate::image::pipeline::image`] (generate only what changed,
//! `kas build` with BitBake's progress and a full log, verify, bundle), and its result printed.

use std::path::PathBuf;

use clap::Args;

use super::args::{BuildArgs, OutputArgs, PlanArgs, PostArgs};
use crate::error::{Exit, Interrupted};
use crate::host::runner::{System, signals};
use crate::image::kasrun::report::{BuildResult, BuildStatus};
use crate::image::pipeline::verify_bundle::Verified;
use crate::image::pipeline::{BuildSetup, ImageOptions, ImageOutcome};
use crate::release::bundle::BundleOutcome;
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct ImageArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub post: PostArgs,
    /// Build from this lock file: kas's `overrides: repos:` form or the full `repos:` form
    /// meta-qcom-releases publishes. It is installed beside the generated kas file as
    /// `<machine>-rt.lock.yml`, where kas reads it; no copying between repositories.
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
    /// kas work folder (the repo checkouts; the build folder is its `build/`, as `bundle` and
    /// `lock` look for it) [default: the parent of the generated folder, `rtbuild/`].
    #[arg(long, value_name = "DIR", env = "KAS_WORK_DIR")]
    pub work_dir: Option<PathBuf>,
}

pub(super) fn run(args: ImageArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let started = std::time::Instant::now();
    signals::install();
    args.output.check()?;
    // rtbuild.yaml and the catalog are read once; the pipeline makes the plan.
    let request = args.plan.request()?;
    let catalog = args.plan.catalog()?;
    let meta_qcom = args.plan.meta_qcom_source()?;
    let (spec, caches) = args.build.validate(&request)?;
    let post = args.post.decide(&spec, ui)?;
    let launch = args.build.launch(args.output.dry_run)?;
    let mut output = args.output.options();
    output.work_dir = args.work_dir.as_deref().map(super::args::absolute);
    let options = ImageOptions {
        output,
        setup: BuildSetup { launch, spec, caches },
        post,
        lock: args.lock,
        meta_qcom,
    };
    let built = match crate::image::pipeline::image(&request, &catalog, &options, &System, ui)? {
        ImageOutcome::Planned(dry_run) => {
            if ui.json() {
                ui.out_json(&dry_run)?;
            } else {
                dry_run.lines().into_iter().for_each(|line| ui.out(line));
            }
            return Ok(Exit::Ok);
        }
        ImageOutcome::Built { result, after, kas_secs } => (result, after, kas_secs),
    };
    let (result, after, kas_secs) = built;
    // rtbuild's own time: everything this command did outside kas (planning, generating,
    // preflight, reading the build's output, verifying, bundling).
    let overhead = (started.elapsed().as_secs_f64() - kas_secs).max(0.0);
    let rtbuild_overhead_s = (overhead * 1000.0).round() / 1000.0;
    ui.detail(format!("rtbuild's own time outside kas: {rtbuild_overhead_s:.2} s"));
    if ui.json() {
        ui.out_json(&ImageOutput {
            build: &result,
            rtbuild_overhead_s,
            verify: after.verified.as_ref(),
            bundle: after.bundle.as_ref(),
        })?;
    } else {
        if let Some(path) = result.artifacts.as_ref().and_then(|a| a.qcomflash.as_ref()) {
            ui.out(crate::text::shown_path(path));
        }
        if let Some(bundle) = &after.bundle {
            ui.out(crate::text::shown_path(&bundle.archive));
        }
    }
    match result.status {
        BuildStatus::Interrupted => Err(Interrupted.into()),
        BuildStatus::Failed => Ok(Exit::Failed),
        BuildStatus::Succeeded => Ok(Exit::from_pass(after.passed)),
    }
}

/// `rtbuild image --json`: the build result, plus the verdict and bundle when they ran.
#[derive(Debug, serde::Serialize)]
struct ImageOutput<'a> {
    #[serde(flatten)]
    build: &'a BuildResult,
    /// Seconds this command spent outside kas (issue 27: under 1 s on a warm run).
    rtbuild_overhead_s: f64,
    verify: Option<&'a Verified>,
    bundle: Option<&'a BundleOutcome>,
}
