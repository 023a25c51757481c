//! `rtbuild image`: generate (only what changed), then `kas build`, with BitBake's progress,
//! a full log, and a summary or failure report. Verification and bundling hook in after a
//! successful build (see [`after_build`]).

use std::path::PathBuf;

use clap::Args;

use super::PlanArgs;
use super::generate::OutputArgs;
use crate::build::caches::{self, CacheDirs, CacheSettings, Hashserv, HostPort, MirrorUrl};
use crate::build::command::{self, BuildSpec};
use crate::build::report::{BuildResult, Status};
use crate::build::run::{self, BuildJob};
use crate::build::{BuildError, Layout, kas};
use crate::exit::{Exit, InputError, Interrupted};
use crate::plan::Plan;
use crate::runner::{System, signals};
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct ImageArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub build: BuildArgs,
}

/// How to run kas and BitBake (shared by `image` and `matrix`).
#[derive(Debug, Clone, Default, Args)]
pub struct BuildArgs {
    /// The kas program to use [default: `kas` on PATH].
    #[arg(long, value_name = "PATH")]
    pub kas: Option<PathBuf>,
    /// Recipe to build instead of the image, e.g. linux-qcom-rt; repeatable.
    #[arg(long = "target", value_name = "RECIPE")]
    pub targets: Vec<String>,
    /// BitBake task to run, e.g. compile or populate_sdk [default: build].
    #[arg(long, value_name = "TASK")]
    pub task: Option<String>,
    /// Extra BitBake options, separated by spaces, e.g. "-k -DD" (not a shell: no quoting).
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub bitbake_args: Option<String>,
    #[command(flatten)]
    pub caches: CacheArgs,
}

/// Shared caches beyond this machine.
#[derive(Debug, Clone, Default, Args)]
pub struct CacheArgs {
    /// Shared sstate to read from (SSTATE_MIRRORS): https://…, http://… or file:///…; repeatable.
    #[arg(long = "sstate-mirror", value_name = "URL")]
    pub sstate_mirrors: Vec<String>,
    /// Hash equivalence: auto (local server, database in SSTATE_DIR), none (OEBasicHash), or
    /// HOST:PORT of a shared bitbake-hashserv.
    #[arg(long, value_name = "auto|none|HOST:PORT")]
    pub hashserv: Option<String>,
    /// Shared PR server (PRSERV_HOST), HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    pub prserv: Option<String>,
    /// Source mirror tried before upstream (PREMIRRORS) for git, http(s) and ftp; repeatable.
    #[arg(long = "premirror", value_name = "URL")]
    pub premirrors: Vec<String>,
    /// Keep tarballs of git sources in DL_DIR so that it can serve as a premirror for others.
    #[arg(long)]
    pub mirror_tarballs: bool,
}

impl CacheArgs {
    /// The flags again, as arguments for another rtbuild run (e.g. in a CI job).
    pub fn flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        for url in &self.sstate_mirrors {
            flags.extend(["--sstate-mirror".to_string(), url.clone()]);
        }
        if let Some(h) = &self.hashserv {
            flags.extend(["--hashserv".to_string(), h.clone()]);
        }
        if let Some(p) = &self.prserv {
            flags.extend(["--prserv".to_string(), p.clone()]);
        }
        for url in &self.premirrors {
            flags.extend(["--premirror".to_string(), url.clone()]);
        }
        if self.mirror_tarballs {
            flags.push("--mirror-tarballs".to_string());
        }
        flags
    }

    pub fn settings(&self) -> Result<CacheSettings, BuildError> {
        Ok(CacheSettings {
            sstate_mirrors: self
                .sstate_mirrors
                .iter()
                .map(|u| MirrorUrl::parse("--sstate-mirror", u))
                .collect::<Result<_, _>>()?,
            hashserv: self.hashserv.as_deref().map(Hashserv::parse).transpose()?,
            prserv: self.prserv.as_deref().map(|h| HostPort::parse("--prserv", h)).transpose()?,
            premirrors: self
                .premirrors
                .iter()
                .map(|u| MirrorUrl::parse("--premirror", u))
                .collect::<Result<_, _>>()?,
            mirror_tarballs: self.mirror_tarballs,
        })
    }
}

impl BuildArgs {
    /// Validates the BitBake request and cache flags (exit 2 on bad input).
    pub fn validate(&self) -> anyhow::Result<(BuildSpec, CacheSettings)> {
        let spec =
            BuildSpec::new(&self.targets, self.task.as_deref(), self.bitbake_args.as_deref())
                .map_err(input)?;
        let caches = self.caches.settings().map_err(input)?;
        Ok((spec, caches))
    }

    /// The checked kas; in a dry run an unchecked `kas` is fine (nothing runs).
    pub fn kas(&self, dry_run: bool) -> anyhow::Result<PathBuf> {
        let mut path = std::env::var_os("PATH").unwrap_or_default();
        // The venv `rtbuild setup` makes is the last place looked.
        if let Some(venv) = crate::build::setup::default_venv(
            std::env::var_os("XDG_DATA_HOME").map(PathBuf::from),
            std::env::var_os("HOME").map(PathBuf::from),
        ) {
            let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
            dirs.push(venv.join("bin"));
            path = std::env::join_paths(dirs).unwrap_or(path);
        }
        match kas::find(self.kas.as_deref(), Some(&path), &System) {
            Ok(found) => Ok(found.program),
            Err(_) if dry_run => Ok(self.kas.clone().unwrap_or_else(|| PathBuf::from("kas"))),
            Err(err) => Err(err.into()),
        }
    }
}

fn input(err: BuildError) -> anyhow::Error {
    InputError(err.into()).into()
}

pub fn run(args: ImageArgs, ui: &Ui) -> anyhow::Result<Exit> {
    signals::install();
    let plan = args.plan.plan()?;
    let (spec, caches) = args.build.validate()?;
    let dry_run = args.output.dry_run;
    let kas = args.build.kas(dry_run)?;
    let job = prepare(&plan, &args.output, kas, spec, caches, ui)?;
    if dry_run {
        return dry_run_report(&job, ui);
    }
    let result = run::build(&job, &System, ui)?;
    finish(&result, ui)
}

/// Generates the files and decides the job (shared with `matrix`).
pub fn prepare(
    plan: &Plan,
    output: &OutputArgs,
    kas: PathBuf,
    spec: BuildSpec,
    caches: CacheSettings,
    ui: &Ui,
) -> anyhow::Result<BuildJob> {
    let generated = super::generate::generate_and_report(plan, &output.options(plan), ui)?;
    if signals::interrupted() {
        return Err(Interrupted.into());
    }
    let layout = Layout::new(&generated.out, &generated.kas_file);
    command::check_paths(&layout).map_err(input)?;
    let dirs = CacheDirs::resolve(
        plan.dl_dir.as_ref().map(|p| p.as_path()),
        plan.sstate_dir.as_ref().map(|p| p.as_path()),
        std::env::var_os("DL_DIR").map(PathBuf::from),
        std::env::var_os("SSTATE_DIR").map(PathBuf::from),
        &layout.work,
    );
    for warning in caches.warnings(&dirs, &caches::fs_type) {
        ui.warn(warning);
    }
    let job = BuildJob {
        machine: plan.machine.name.clone(),
        image: plan.image.to_string(),
        kas,
        layout,
        dirs,
        caches,
        spec,
    };
    if job.write_caches(output.dry_run)? {
        let verb = if output.dry_run { "Would write" } else { "Wrote" };
        ui.status(verb, job.layout.caches_file.display());
    }
    Ok(job)
}

/// What `--dry-run` prints: the exact command with its environment and the expected artifacts.
#[derive(Debug, serde::Serialize)]
struct DryRun<'a> {
    command: Vec<String>,
    cwd: &'a std::path::Path,
    env: Vec<(String, String)>,
    log: &'a std::path::Path,
    expected_artifacts: Vec<PathBuf>,
}

fn dry_run_report(job: &BuildJob, ui: &Ui) -> anyhow::Result<Exit> {
    let cmd = job.command();
    let env: Vec<(String, String)> = cmd
        .get_env()
        .iter()
        .filter_map(|(k, v)| {
            v.as_ref().map(|v| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        })
        .collect();
    let plan = DryRun {
        command: cmd.argv(),
        cwd: &job.layout.work,
        env,
        log: &job.layout.log,
        expected_artifacts: job.expected_artifacts(),
    };
    if ui.json() {
        ui.out_json(&plan)?;
        return Ok(Exit::Ok);
    }
    ui.out(format!("# in {}", job.layout.work.display()));
    let assignments: Vec<String> =
        plan.env.iter().map(|(k, v)| format!("{k}={}", crate::quote::sh(v))).collect();
    ui.out(format!("{} {cmd}", assignments.join(" ")));
    ui.out(format!("# log: {}", job.layout.log.display()));
    for artifact in &plan.expected_artifacts {
        ui.out(format!("# expected: {}", artifact.display()));
    }
    Ok(Exit::Ok)
}

/// Reports a finished build and maps it to an exit code.
pub fn finish(result: &BuildResult, ui: &Ui) -> anyhow::Result<Exit> {
    run::report(result, ui);
    if ui.json() {
        ui.out_json(result)?;
    } else if let Some(path) = result.artifacts.as_ref().and_then(|a| a.qcomflash.as_ref()) {
        ui.out(path.display());
    }
    match result.status {
        Status::Interrupted => Err(Interrupted.into()),
        Status::Failed => Ok(Exit::Failed),
        Status::Succeeded => after_build(result, ui),
    }
}

/// Hook point for the stages after a successful build: `verify` (issue 4) will check the
/// kernel `.config` against `rtbuild-plan.json` here and fail the build when it does not hold,
/// and `--bundle` (issue 5) will package the verified result. Until they land, the build
/// result is final.
fn after_build(_result: &BuildResult, _ui: &Ui) -> anyhow::Result<Exit> {
    Ok(Exit::Ok)
}
