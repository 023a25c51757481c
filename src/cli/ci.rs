//! `rtbuild ci`: print a pipeline for the CI system the user already has (GitLab CI or GitHub
//! Actions) that runs the same matrix as `rtbuild matrix`, one job per cell, with the shared
//! sstate mirror, hash-equivalence and PR-server settings. Scale goes to existing runners.

use clap::{Args, ValueEnum};

use super::PlanArgs;
use super::image::CacheArgs;
use crate::build::caches::MirrorUrl;
use crate::build::ci::{Pipeline, render_github, render_gitlab};
use crate::exit::{Exit, InputError};
use crate::ui::Ui;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Gitlab,
    Github,
}

#[derive(Debug, Args)]
pub struct CiArgs {
    /// Pipeline syntax to print.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Machines to build, comma-separated (one job each).
    #[arg(long, value_delimiter = ',', required = true, value_name = "A,B,…")]
    pub machines: Vec<String>,
    /// Distros to build, comma-separated [default: qcom-distro-kvm].
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub distros: Vec<String>,
    /// Folder on the runners that keeps downloads and sstate between jobs (DL_DIR and
    /// SSTATE_DIR beneath it); leave out on runners without persistent storage.
    #[arg(long, value_name = "DIR")]
    pub runner_cache: Option<std::path::PathBuf>,
    /// Each job also verifies and bundles its image (`rtbuild image --bundle`) and keeps the
    /// bundle as a job artifact.
    #[arg(long)]
    pub bundle: bool,
    #[command(flatten)]
    pub caches: CacheArgs,
    /// Machine catalog options (the machines are checked against it).
    #[command(flatten)]
    pub plan: PlanArgs,
}

pub fn run(args: CiArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let distros = if args.distros.is_empty() {
        vec![None]
    } else {
        args.distros.iter().map(|d| Some(d.clone())).collect()
    };
    let mut machines = Vec::new();
    let mut distro_names = Vec::new();
    for distro in &distros {
        for machine in &args.machines {
            let mut cell = args.plan.clone();
            cell.machine = Some(machine.trim().to_string());
            cell.distro = distro.clone();
            let plan = cell.plan()?;
            if !machines.contains(&plan.machine.name) {
                machines.push(plan.machine.name.clone());
            }
            let name = plan.distro.to_string();
            if !distro_names.contains(&name) {
                distro_names.push(name);
            }
        }
    }
    let caches = args.caches.settings().map_err(|e| InputError(e.into()))?;
    let runner_cache = match &args.runner_cache {
        Some(dir) => Some(
            MirrorUrl::parse("--runner-cache", &format!("file://{}", dir.display()))
                .map(|_| dir.display().to_string())
                .map_err(|e| InputError(e.into()))?,
        ),
        None => None,
    };
    // Validated above (exit 2 on a bad value); the jobs get the flags as typed.
    let _ = caches;
    let pipeline = Pipeline {
        machines,
        distros: distro_names,
        cache_flags: args.caches.flags(),
        runner_cache,
        bundle: args.bundle,
    };
    let text = match args.format {
        Format::Gitlab => render_gitlab(&pipeline),
        Format::Github => render_github(&pipeline),
    };
    if ui.json() {
        ui.out_json(&serde_json::json!({ "format": format!("{:?}", args.format).to_lowercase(), "pipeline": text }))?;
    } else {
        ui.out(text.trim_end());
    }
    Ok(Exit::Ok)
}
