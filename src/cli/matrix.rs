//! `rtbuild matrix`: build several machines (× distros) one after another in one work folder,
//! sharing the cloned layers, `downloads/` and `sstate-cache/`; continue past a failed cell
//! unless `--fail-fast`; end with a per-cell table (or `--json`).

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::PlanArgs;
use super::generate::OutputArgs;
use super::image::{BuildArgs, PostArgs};
use crate::build::report::{self, BuildResult, Status};
use crate::build::run;
use crate::exit::{Exit, InputError, Interrupted};
use crate::plan::Plan;
use crate::runner::{System, signals};
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Machines to build, comma-separated (see `rtbuild machines`).
    #[arg(long, value_delimiter = ',', required = true, value_name = "A,B,…")]
    pub machines: Vec<String>,
    /// Work folder shared by every cell (each machine gets `<DIR>/<machine>/`).
    #[arg(long, value_name = "DIR", default_value = "rtbuild")]
    pub work: PathBuf,
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

/// One cell of the matrix and how it went.
#[derive(Debug, Serialize)]
pub struct Cell {
    pub machine: String,
    pub distro: String,
    /// `succeeded`, `failed`, `unverified` (built, but verification failed), `interrupted`, or
    /// `skipped` after `--fail-fast`.
    pub status: String,
    pub result: Option<BuildResult>,
    /// The verdict of `verify`, when it ran.
    pub verified: Option<bool>,
    /// The bundle archive, with `--bundle`.
    pub bundle: Option<PathBuf>,
}

/// The cells' plans, all validated before the first build.
fn plans(args: &MatrixArgs) -> anyhow::Result<Vec<Plan>> {
    if args.plan.machine.is_some() {
        return Err(InputError::msg("matrix takes --machines A,B,…, not --machine; pass --machines with a comma-separated list").into());
    }
    let distros: Vec<Option<String>> = match &args.plan.distro {
        Some(list) => list.split(',').map(|d| Some(d.trim().to_string())).collect(),
        None => vec![None],
    };
    let mut plans = Vec::new();
    for distro in &distros {
        for machine in &args.machines {
            let mut cell = args.plan.clone();
            cell.machine = Some(machine.trim().to_string());
            cell.distro = distro.clone();
            plans.push(cell.plan()?);
        }
    }
    Ok(plans)
}

pub fn run(args: MatrixArgs, ui: &Ui) -> anyhow::Result<Exit> {
    signals::install();
    let plans = plans(&args)?;
    let (spec, caches) = args.build.validate(&args.plan.request()?)?;
    let post = args.post.decide(&spec, ui)?;
    // The preflight runs once, for the shared work folder, before the first cell is generated.
    let launch = args.build.launch(args.dry_run)?;
    let several_distros = plans.iter().any(|p| p.distro != plans[0].distro);
    let mut cells = Vec::new();
    let mut stop = false;
    for plan in &plans {
        let mut cell = Cell {
            machine: plan.machine.name.clone(),
            distro: plan.distro.to_string(),
            status: "skipped".into(),
            result: None,
            verified: None,
            bundle: None,
        };
        if stop {
            cells.push(cell);
            continue;
        }
        let name = if several_distros {
            format!("{}-{}", plan.machine.name, plan.distro)
        } else {
            plan.machine.name.clone()
        };
        let output =
            OutputArgs { out: Some(args.work.join(&name)), force: false, dry_run: args.dry_run };
        ui.status("Cell", format!("{} / {}", cell.machine, cell.distro));
        let job = super::image::prepare(plan, &output, &launch, spec.clone(), caches.clone(), ui)?;
        if args.dry_run {
            ui.out(format!("{} {}", cell.machine, job.command()));
            cell.status = "planned".into();
            cells.push(cell);
            continue;
        }
        let result = run::build(&job, &System, ui)?;
        run::report(&result, ui);
        let after = super::image::after_build(&result, &job, &plan.expectations(), post, ui)?;
        cell.status = status_name(result.status).into();
        if !after.passed {
            cell.status = "unverified".into();
        }
        cell.verified = after.verified.as_ref().map(|v| v.verdict.passed);
        cell.bundle = after.bundle.map(|b| b.archive);
        stop =
            result.status == Status::Interrupted || (args.fail_fast && cell.status != "succeeded");
        cell.result = Some(result);
        cells.push(cell);
    }
    if ui.json() {
        ui.out_json(&cells)?;
    } else if !args.dry_run {
        for line in table(&cells) {
            ui.out(line);
        }
    }
    if cells.iter().any(|c| c.status == "interrupted") {
        return Err(Interrupted.into());
    }
    let failed = cells.iter().any(|c| c.status != "succeeded" && c.status != "planned");
    Ok(Exit::from_pass(!failed))
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Succeeded => "succeeded",
        Status::Failed => "failed",
        Status::Interrupted => "interrupted",
    }
}

/// The per-cell table: machine, distro, status, time, sstate match, qcomflash or failed task.
pub fn table(cells: &[Cell]) -> Vec<String> {
    let rows: Vec<[String; 6]> = cells
        .iter()
        .map(|c| {
            let r = c.result.as_ref();
            let time = r.map(|r| report::duration(r.duration_secs)).unwrap_or_else(|| "-".into());
            let sstate = r
                .and_then(|r| r.sstate)
                .map(|s| format!("{}%", s.match_percent))
                .unwrap_or_else(|| "-".into());
            let detail = r
                .map(|r| match r.status {
                    Status::Succeeded => r
                        .artifacts
                        .as_ref()
                        .and_then(|a| a.qcomflash.as_ref())
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| "no qcomflash".into()),
                    _ => r
                        .failures
                        .first()
                        .map(|f| f.failure.task.clone())
                        .or_else(|| r.exit.clone())
                        .unwrap_or_default(),
                })
                .unwrap_or_default();
            [c.machine.clone(), c.distro.clone(), c.status.clone(), time, sstate, detail]
        })
        .collect();
    let header = ["MACHINE", "DISTRO", "STATUS", "TIME", "SSTATE", "RESULT"].map(String::from);
    crate::table::table(&header, &rows).lines().map(str::to_string).collect()
}
