//! `rtbuild matrix`: the flags mapped onto one request per machine × distro (each checked into
//! a plan first) and [`crate::image::pipeline::matrix`] (one work folder, meta-qcom resolved
//! once for it, shared layers, downloads and sstate; past a failed cell unless `--fail-fast`);
//! the per-cell table (or `--json`) printed.

use std::path::PathBuf;

use clap::Args;

use super::args::{BuildArgs, PlanArgs, PostArgs};
use crate::cli::error::Refusal;
use crate::error::{Exit, Interrupted};
use crate::host::runner::{System, signals};
use crate::image::pipeline::BuildSetup;
use crate::image::pipeline::matrix::{MatrixOptions, matrix, skipped_line, table};
use crate::plan::PlanRequest;
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct MatrixArgs {
    /// Machines to build, comma-separated (see `rtbuild machines`).
    #[arg(long, value_delimiter = ',', required = true, value_name = "A,B,…")]
    pub machines: Vec<String>,
    /// Work folder shared by every cell (each machine gets `<DIR>/<machine>/`).
    #[arg(long, value_name = "DIR", default_value = "rtbuild")]
    pub work: PathBuf,
    /// kas work folder of every cell (`KAS_WORK_DIR`: the repo checkouts, and the build folder
    /// is its `build/`, where `bundle` and `lock` look when KAS_WORK_DIR is set) [default:
    /// --work, each cell building in `<work>/<machine>/build`]. Needs a single distro: one
    /// build folder holds one distro.
    #[arg(long, value_name = "DIR", env = "KAS_WORK_DIR")]
    pub work_dir: Option<PathBuf>,
    /// Stop at the first failed cell.
    #[arg(long)]
    pub fail_fast: bool,
    /// Print each cell's plan and command, build nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Every other option applies to each cell; `--distro` may list several, comma-separated.
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub post: PostArgs,
}

/// The cells' requests, each validated into a plan against the catalog (or `--meta-qcom DIR`)
/// before meta-qcom is checked out and anything is generated or built: a bad machine or
/// distro is refused (exit 2) first. The pipeline composes each cell's plan again, from
/// meta-qcom as it resolves it.
fn requests(args: &MatrixArgs) -> crate::cli::error::Result<Vec<PlanRequest>> {
    if args.plan.machine.name.is_some() {
        return Err(Refusal::MatrixMachine.into());
    }
    let distros: Vec<Option<String>> = match &args.plan.distro {
        Some(list) => list.split(',').map(|d| Some(d.trim().to_string())).collect(),
        None => vec![None],
    };
    if distros.len() > 1
        && let Some(dir) = &args.work_dir
    {
        return Err(Refusal::WorkDirDistros { dir: dir.clone(), distros: distros.len() }.into());
    }
    let mut requests = Vec::new();
    for distro in &distros {
        for machine in &args.machines {
            let mut cell = args.plan.clone();
            cell.machine.name = Some(machine.trim().to_string());
            cell.distro = distro.clone();
            cell.plan()?;
            requests.push(cell.request()?);
        }
    }
    Ok(requests)
}

pub(super) fn run(args: MatrixArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    signals::install();
    let requests = requests(&args)?;
    let catalog = args.plan.catalog()?;
    let meta_qcom = args.plan.meta_qcom_source()?;
    let (spec, caches) = args.build.validate(&args.plan.request()?)?;
    let post = args.post.decide(&spec, ui)?;
    let launch = args.build.launch(args.dry_run)?;
    let options = MatrixOptions {
        work: args.work,
        work_dir: args.work_dir.as_deref().map(super::args::absolute),
        fail_fast: args.fail_fast,
        dry_run: args.dry_run,
        setup: BuildSetup { launch, spec, caches },
        post,
        meta_qcom,
    };
    let cells = matrix(&requests, &catalog, &options, &System, ui)?;
    if ui.json() {
        ui.out_json(&cells)?;
    } else if !args.dry_run {
        for line in table(&cells) {
            ui.out(line);
        }
    }
    // Said on stderr whether the cells are a table or JSON on stdout.
    if let Some(line) = skipped_line(&cells) {
        ui.warn(line);
    }
    if cells.iter().any(|c| c.status == "interrupted") {
        return Err(Interrupted.into());
    }
    let failed = cells.iter().any(|c| c.status != "succeeded" && c.status != "planned");
    Ok(Exit::from_pass(!failed))
}
