//! `rtbuild ci`: print a pipeline for the CI system the user already has (GitLab CI or GitHub
//! Actions) that runs the same matrix as `rtbuild matrix`, one job per cell, with the shared
//! sstate mirror, hash-equivalence and PR-server settings. Scale goes to existing runners.

use clap::{Args, ValueEnum};

use super::args::{CacheArgs, PlanArgs};
use crate::exit::{Exit, InputError};
use crate::kasrun::caches::MirrorUrl;
use crate::kasrun::ci::{Install, LavaStage, Pipeline, render_github, render_gitlab};
use crate::tune::CpuLayout;
use crate::ui::Ui;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Gitlab,
    Github,
}

#[derive(Debug, Args)]
pub(crate) struct CiArgs {
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
    /// bundle (*.tar.zst, manifest, SHA256SUMS) as a job artifact.
    #[arg(long)]
    pub bundle: bool,
    /// Build from this lock file (path in the repository; `rtbuild image --lock`). Without
    /// it, each job pins what it built with `rtbuild lock` and keeps that lock.
    #[arg(long, value_name = "FILE")]
    pub lock: Option<std::path::PathBuf>,
    /// Add a test stage: publish each bundle, submit an `rtbuild lava` job with lavacli, wait,
    /// and fail the pipeline on a FAIL verdict (implies --bundle).
    #[arg(long)]
    pub lava: bool,
    /// Scenarios of the LAVA jobs.
    #[arg(long, value_name = "LIST", default_value = "idle,stress", requires = "lava")]
    pub lava_scenario: String,
    /// Run time of each LAVA scenario (as `rtbuild lava --duration`).
    #[arg(long, value_name = "TIME", default_value = "smoke", requires = "lava")]
    pub lava_duration: String,
    /// rt-tests programs of the LAVA jobs (as `rtbuild lava --tests`; see `rtbuild test --help`).
    #[arg(long, value_name = "LIST", default_value = "cyclictest", requires = "lava")]
    pub lava_tests: String,
    /// How the jobs install rtbuild (required: no source is known to work everywhere):
    /// path:DIR (rtbuild's source in the repository, e.g. a submodule; cargo install --path),
    /// git+https://HOST/REPO[#REV] (cargo install --git), the https:// or file:// URL of an
    /// rtbuild binary, or `crates` (this version from crates.io, once it is published there).
    #[arg(long, value_name = "SOURCE")]
    pub rtbuild_from: String,
    #[command(flatten)]
    pub caches: CacheArgs,
    /// Machine catalog options (the machines are checked against it).
    #[command(flatten)]
    pub plan: PlanArgs,
}

pub(super) fn run(args: CiArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let distros = if args.distros.is_empty() {
        vec![None]
    } else {
        args.distros.iter().map(|d| Some(d.clone())).collect()
    };
    let mut machines = Vec::new();
    let mut layouts = Vec::new();
    let mut distro_names = Vec::new();
    for distro in &distros {
        for machine in &args.machines {
            let mut cell = args.plan.clone();
            cell.machine.name = Some(machine.trim().to_string());
            cell.distro = distro.clone();
            let plan = cell.plan()?;
            if !machines.contains(&plan.machine.name) {
                machines.push(plan.machine.name.clone());
                layouts.push(CpuLayout::from_plan(&plan));
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
    let install = Install::parse(&args.rtbuild_from, env!("CARGO_PKG_VERSION"))
        .map_err(|e| InputError(e.into()))?;
    let lock = args.lock.as_deref().map(lock_in_repo).transpose()?;
    let lava = args.lava.then(|| lava_stage(&args, &layouts)).transpose()?;
    let pipeline = Pipeline {
        machines,
        distros: distro_names,
        cache_flags: args.caches.flags(),
        runner_cache,
        bundle: args.bundle,
        lock,
        install,
        lava,
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

/// `--lock FILE`: a readable lock, named by a plain relative path (the jobs run in the checkout).
fn lock_in_repo(path: &std::path::Path) -> anyhow::Result<String> {
    let text = path.to_string_lossy();
    let plain = !text.is_empty()
        && path.is_relative()
        && !path.components().any(|c| matches!(c, std::path::Component::ParentDir))
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./+@".contains(c));
    if !plain {
        return Err(InputError::msg(format!(
            "bad --lock `{}`; pass the lock file's path inside the repository, relative to its top (letters, digits, `-_./+@`)",
            text.chars().take(80).collect::<String>()
        ))
        .into());
    }
    crate::lock::LockFile::read(path).map_err(|e| InputError(e.into()))?;
    Ok(text.into_owned())
}

/// `--lava-scenario`/`--lava-duration`/`--lava-tests`, checked as `rtbuild lava` checks them,
/// and how long the CI job may wait for the longest LAVA job (its timeout on the machine with
/// the most RT CPUs, plus two hours in the queue).
fn lava_stage(args: &CiArgs, layouts: &[CpuLayout]) -> anyhow::Result<LavaStage> {
    let scenarios = crate::testrun::parse_list(&args.lava_scenario)
        .map_err(|e| InputError::msg(format!("--lava-scenario: {e}")))?;
    if scenarios.contains(&crate::testrun::Scenario::Custom) {
        return Err(InputError::msg(
            "--lava-scenario: `custom` needs a --load-cmd, which CI jobs do not take; use idle, stress, stress-isolated or full",
        )
        .into());
    }
    let tests = crate::rttests::parse_list(&args.lava_tests)
        .map_err(|e| InputError::msg(format!("--lava-tests: {e}")))?;
    let span = crate::testrun::Span::parse(&args.lava_duration)
        .map_err(|e| InputError::msg(format!("--lava-duration: {e}")))?;
    let mut minutes = 0;
    for layout in layouts {
        let job = crate::lava::job::job_minutes(
            &args.lava_duration,
            span.length,
            span.interval_us.unwrap_or(1000),
            layout,
            &tests,
            scenarios.len(),
        )
        .map_err(|e| InputError::msg(format!("--lava-duration: {e}")))?;
        minutes = minutes.max(job);
    }
    Ok(LavaStage {
        scenarios: scenarios.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
        duration: args.lava_duration.clone(),
        tests: tests.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
        wait_minutes: minutes + 120,
    })
}
