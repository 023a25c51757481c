//! `rtbuild image`: generate (only what changed), then `kas build`, with BitBake's progress,
//! a full log, and a summary or failure report. Verification and bundling hook in after a
//! successful build (see [`after_build`]).

use std::cell::Cell;
use std::path::PathBuf;

use clap::Args;

use super::PlanArgs;
use super::generate::OutputArgs;
use crate::build::after::{self, Verified};
use crate::build::caches::{self, CacheDirs, CacheSettings, Hashserv, HostPort, MirrorUrl};
use crate::build::command::{self, BuildSpec};
use crate::build::kas::Kas;
use crate::build::report::{BuildResult, Status};
use crate::build::run::{self, BuildJob};
use crate::build::{BuildError, Layout};
use crate::bundle::BundleOutcome;
use crate::catalog::meta_qcom::MetaQcom;
use crate::doctor::{self, Engine};
use crate::exit::{Exit, InputError, Interrupted};
use crate::plan::Expectations;
use crate::plan::Plan;
use crate::plan::build_path;
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
    #[command(flatten)]
    pub post: PostArgs,
    /// Build from this lock file: kas's `overrides: repos:` form or the full `repos:` form
    /// meta-qcom-releases publishes. It is installed beside the generated kas file as
    /// `<machine>-rt.lock.yml`, where kas reads it; no copying between repositories.
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
}

/// What happens after a successful build.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct PostArgs {
    /// Do not verify the kernel config, command line and packages against the plan after the
    /// build (verification runs by default and fails the build when a check fails).
    #[arg(long, conflicts_with = "bundle")]
    pub no_verify: bool,
    /// Build, verify, then pack the qcomflash output into a bundle under <out>/bundle/.
    #[arg(long)]
    pub bundle: bool,
}

/// The post-build steps that apply to one build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Post {
    pub verify: bool,
    pub bundle: bool,
}

impl PostArgs {
    /// Verification needs the whole image; a `--target`/`--task`/`--bitbake-args` build is
    /// partial, so it is not verified (and cannot be bundled).
    pub fn decide(&self, spec: &BuildSpec, ui: &Ui) -> anyhow::Result<Post> {
        let partial =
            !spec.targets.is_empty() || spec.task.is_some() || !spec.bitbake_args.is_empty();
        if partial && self.bundle {
            return Err(InputError::msg(
                "--bundle needs the whole image; drop --target, --task and --bitbake-args",
            )
            .into());
        }
        if partial && !self.no_verify {
            ui.note(
                "partial build (--target, --task or --bitbake-args): the result is not verified",
            );
        }
        Ok(Post { verify: !self.no_verify && !partial, bundle: self.bundle })
    }
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
    /// Build inside the kas container image (through kas-container, which ships with kas) with
    /// docker or podman [default engine: docker when installed, else podman]. The image is the
    /// pinned kas's; the work, download and sstate folders are mounted into it.
    #[arg(long, value_name = "ENGINE", num_args = 0..=1, default_missing_value = "auto")]
    pub container: Option<String>,
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
    /// These flags over the project file's cache settings (`sstate-mirrors`, `hashserv`,
    /// `prserv`, `premirrors`, `mirror-tarballs` in `rtbuild.yaml`): a flag wins.
    pub fn over_project(&self, project: &crate::plan::Request) -> CacheArgs {
        let list = |flag: &Vec<String>, file: &Vec<String>| {
            if flag.is_empty() { file.clone() } else { flag.clone() }
        };
        CacheArgs {
            sstate_mirrors: list(&self.sstate_mirrors, &project.sstate_mirrors),
            hashserv: self.hashserv.clone().or_else(|| project.hashserv.clone()),
            prserv: self.prserv.clone().or_else(|| project.prserv.clone()),
            premirrors: list(&self.premirrors, &project.premirrors),
            mirror_tarballs: self.mirror_tarballs || project.mirror_tarballs.unwrap_or(false),
        }
    }

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
    /// Validates the BitBake request and the cache settings, flags over `project`'s (exit 2 on
    /// bad input).
    pub fn validate(
        &self,
        project: &crate::plan::Request,
    ) -> anyhow::Result<(BuildSpec, CacheSettings)> {
        let spec =
            BuildSpec::new(&self.targets, self.task.as_deref(), self.bitbake_args.as_deref())
                .map_err(input)?;
        let caches = self.caches.over_project(project).settings().map_err(input)?;
        Ok((spec, caches))
    }

    /// `--container`: none, the engine named, or (alone) the one installed. An unknown engine
    /// is an input error.
    pub fn engine(&self) -> anyhow::Result<Option<Engine>> {
        match self.container.as_deref() {
            None => Ok(None),
            Some("auto") => {
                Ok(Some(doctor::facts::pick_engine(None, Some(&doctor::facts::search_path()))))
            }
            Some(name) => Ok(Some(Engine::parse(name).map_err(InputError::msg)?)),
        }
    }

    /// What runs the build: kas, or kas-container with `--container`. Without `--container`
    /// a missing or too old kas is an error, except in a dry run (nothing runs).
    pub fn launch(&self, dry_run: bool) -> anyhow::Result<Launch> {
        let engine = self.engine()?;
        let found = doctor::facts::find_kas(self.kas.as_deref(), &System);
        let program = match (engine, &found) {
            (Some(_), _) => doctor::facts::kas_container(
                found.as_ref().ok().map(|k| k.program.as_path()),
                Some(&doctor::facts::search_path()),
            )
            .unwrap_or_else(|| PathBuf::from("kas-container")),
            (None, Ok(kas)) => kas.program.clone(),
            (None, Err(_)) if dry_run => self.kas.clone().unwrap_or_else(|| PathBuf::from("kas")),
            (None, Err(err)) => return Err(anyhow::Error::msg(err.to_string())),
        };
        Ok(Launch { program, engine, kas: found.ok(), checked: Cell::new(false) })
    }
}

/// The program that runs kas's commands, and the container engine when it is kas-container.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub engine: Option<Engine>,
    /// The host's kas, when one was found.
    pub kas: Option<Kas>,
    /// The preflight ran (once per command, before the first build).
    checked: Cell<bool>,
}

impl Launch {
    /// The preflight: the same checks as `rtbuild doctor` for the folders of `out`; a problem
    /// stops the command with exit 2 before anything is generated or kas is asked to build.
    pub fn preflight(&self, plan: &Plan, out: &std::path::Path, ui: &Ui) -> anyhow::Result<()> {
        if self.checked.replace(true) {
            return Ok(());
        }
        let kas =
            self.kas.clone().ok_or_else(|| BuildError::KasMissing { looked: "PATH".to_string() });
        doctor::preflight(&doctor::target_for(plan, out, self.engine), kas, ui)?;
        Ok(())
    }
}

fn input(err: BuildError) -> anyhow::Error {
    InputError(err.into()).into()
}

pub fn run(args: ImageArgs, ui: &Ui) -> anyhow::Result<Exit> {
    signals::install();
    let plan = args.plan.plan()?;
    let (spec, caches) = args.build.validate(&args.plan.request()?)?;
    let post = args.post.decide(&spec, ui)?;
    let dry_run = args.output.dry_run;
    let launch = args.build.launch(dry_run)?;
    if let Some(lock) = &args.lock {
        // Read (and so check) the lock before anything is generated.
        crate::lock::LockFile::read(lock)?;
    }
    let job = prepare(&plan, &args.output, &launch, spec, caches, ui)?;
    if let Some(lock) = &args.lock {
        install_lock(lock, &job.layout.kas_file, dry_run, ui)?;
    }
    if dry_run {
        return dry_run_report(&job, ui);
    }
    let (plan, job) = follow_meta_qcom(plan, job, &args, &launch, ui)?;
    let result = run::build(&job, &System, ui)?;
    run::report(&result, ui);
    let after = after_build(&result, &job, &plan.expectations(), post, ui)?;
    if ui.json() {
        ui.out_json(&ImageOutput {
            build: &result,
            verify: after.verified.as_ref(),
            bundle: after.bundle.as_ref(),
        })?;
    } else {
        if let Some(path) = result.artifacts.as_ref().and_then(|a| a.qcomflash.as_ref()) {
            ui.out(path.display());
        }
        if let Some(bundle) = &after.bundle {
            ui.out(bundle.archive.display());
        }
    }
    match result.status {
        Status::Interrupted => Err(Interrupted.into()),
        Status::Failed => Ok(Exit::Failed),
        Status::Succeeded => Ok(Exit::from_pass(after.passed)),
    }
}

/// Once kas has checked meta-qcom out (and before BitBake runs), compares the board's machine
/// conf with the plan. When meta-qcom's defaults differ from the catalog's and no `--rt-cpus`
/// was given, the plan follows meta-qcom: the files are generated again and
/// `rtbuild-plan.json` records where the defaults came from. With `--meta-qcom DIR` this was
/// decided before generating; when the checkout fails, `kas build` reports it.
fn follow_meta_qcom(
    plan: Plan,
    job: BuildJob,
    args: &ImageArgs,
    launch: &Launch,
    ui: &Ui,
) -> anyhow::Result<(Plan, BuildJob)> {
    if args.plan.meta_qcom.is_some() {
        return Ok((plan, job));
    }
    let checkout = command::in_container(
        command::kas_checkout(&job.kas, &job.layout, &job.dirs),
        job.container,
    );
    ui.status("Checking out", &checkout);
    if let Err(err) = crate::runner::run_captured(&checkout) {
        ui.detail(format!("kas checkout failed ({err}); kas build will report it"));
        return Ok((plan, job));
    }
    if signals::interrupted() {
        return Err(Interrupted.into());
    }
    let Ok(meta) = MetaQcom::open(&job.layout.work.join("meta-qcom")) else {
        return Ok((plan, job));
    };
    let request = args.plan.request()?;
    let followed = Plan::following(&request, &args.plan.catalog()?, &meta)?;
    if followed.machine_defaults.as_ref().is_none_or(|d| d.source != "meta-qcom") {
        if let Some(note) =
            followed.machine_defaults.as_ref().and_then(|d| d.note(&plan.machine.name, true))
        {
            ui.note(note);
        }
        return Ok((plan, job));
    }
    let BuildJob { spec, caches, .. } = job;
    let job = prepare(&followed, &args.output, launch, spec, caches, ui)?;
    Ok((followed, job))
}

/// Installs `lock` beside the kas file (or, with `--dry-run`, only says it would).
fn install_lock(
    lock: &std::path::Path,
    kas_file: &std::path::Path,
    dry_run: bool,
    ui: &Ui,
) -> anyhow::Result<()> {
    let target = crate::lock::lock_path_for(kas_file);
    if dry_run {
        ui.status("Would lock", format!("{} from {}", target.display(), lock.display()));
        return Ok(());
    }
    let installed = crate::lock::install(lock, kas_file)?;
    let verb = if installed.written { "Locked" } else { "Lock kept" };
    ui.status(verb, format!("{} repos in {}", installed.repos, installed.lock_file.display()));
    Ok(())
}

/// `rtbuild image --json`: the build result, plus the verdict and bundle when they ran.
#[derive(Debug, serde::Serialize)]
struct ImageOutput<'a> {
    #[serde(flatten)]
    build: &'a BuildResult,
    verify: Option<&'a Verified>,
    bundle: Option<&'a BundleOutcome>,
}

/// Generates the files and decides the job (shared with `matrix`).
pub fn prepare(
    plan: &Plan,
    output: &OutputArgs,
    launch: &Launch,
    spec: BuildSpec,
    caches: CacheSettings,
    ui: &Ui,
) -> anyhow::Result<BuildJob> {
    let options = output.options(plan);
    // Every folder kas and BitBake will see is checked before anything is written: the output
    // folder (and with it the work and build folders), DL_DIR and SSTATE_DIR from the
    // environment too.
    let out = build_path::check("output folder", &options.out)?;
    let work = out.parent().map_or_else(|| out.clone(), std::path::Path::to_path_buf);
    let dirs = CacheDirs::resolve(
        plan.dl_dir.as_ref().map(|p| p.as_path()),
        plan.sstate_dir.as_ref().map(|p| p.as_path()),
        std::env::var_os("DL_DIR").map(PathBuf::from),
        std::env::var_os("SSTATE_DIR").map(PathBuf::from),
        &work,
    );
    build_path::check("DL_DIR", &dirs.dl_dir)?;
    build_path::check("SSTATE_DIR", &dirs.sstate_dir)?;
    if !output.dry_run {
        crate::build::check_writable(&out)?;
        launch.preflight(plan, &out, ui)?;
    }
    let generated = super::generate::generate_and_report(plan, &options, ui)?;
    if signals::interrupted() {
        return Err(Interrupted.into());
    }
    let layout = Layout::new(&generated.out, &generated.kas_file);
    command::check_paths(&layout).map_err(input)?;
    for warning in caches.warnings(&dirs, &caches::fs_type) {
        ui.warn(warning);
    }
    let job = BuildJob {
        machine: plan.machine.name.clone(),
        image: plan.image.to_string(),
        kas: launch.program.clone(),
        layout,
        dirs,
        caches,
        spec,
        container: launch.engine,
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

/// What ran after the build.
#[derive(Debug, Default)]
pub struct After {
    /// False when verification failed.
    pub passed: bool,
    pub verified: Option<Verified>,
    pub bundle: Option<BundleOutcome>,
}

/// After a successful build: verify against the plan (a failed check fails the build), then
/// bundle when asked. Nothing runs after a failed or interrupted build.
pub fn after_build(
    result: &BuildResult,
    job: &BuildJob,
    expected: &Expectations,
    post: Post,
    ui: &Ui,
) -> anyhow::Result<After> {
    if result.status != Status::Succeeded || !post.verify {
        return Ok(After { passed: true, ..After::default() });
    }
    let failed = |err: after::AfterError| anyhow::Error::msg(format!("after the build: {err}"));
    let verified = after::verify_build(&job.layout, expected).map_err(failed)?;
    if !verified.verdict.passed {
        ui.warn(format!(
            "the build of {} for {} does not match the plan",
            result.image, result.machine
        ));
        for line in after::failed_checks(&verified) {
            ui.status("", line);
        }
        ui.note(format!("verdict: {}", verified.file.display()));
        return Ok(After { passed: false, verified: Some(verified), bundle: None });
    }
    let checks: usize = verified.verdict.reports.iter().map(|r| r.checks.len()).sum();
    ui.status("Verified", format!("{checks} checks passed ({})", verified.file.display()));
    let bundle = if post.bundle {
        let epoch = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|t| t.trim().parse().ok());
        let outcome =
            after::bundle_build(&job.layout, expected, &verified, epoch).map_err(failed)?;
        ui.status("Bundled", outcome.archive.display());
        Some(outcome)
    } else {
        None
    };
    Ok(After { passed: true, verified: Some(verified), bundle })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_image_builds_are_verified_partial_ones_are_not() {
        let ui = Ui::silent();
        let whole = BuildSpec::default();
        let partial = BuildSpec::new(&["linux-qcom-rt".into()], None, None).unwrap();
        let post =
            |no_verify, bundle, spec: &BuildSpec| PostArgs { no_verify, bundle }.decide(spec, &ui);
        assert_eq!(post(false, false, &whole).unwrap(), Post { verify: true, bundle: false });
        assert_eq!(post(true, false, &whole).unwrap(), Post { verify: false, bundle: false });
        assert_eq!(post(false, true, &whole).unwrap(), Post { verify: true, bundle: true });
        assert_eq!(post(false, false, &partial).unwrap(), Post { verify: false, bundle: false });
        assert!(post(false, true, &partial).is_err());
    }
}
