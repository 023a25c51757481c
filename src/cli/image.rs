//! `rtbuild image`: the flags mapped onto [`crate::image::image`] (generate only what changed,
//! `kas build` with BitBake's progress and a full log, verify, bundle), and its result printed.

use std::path::PathBuf;

use clap::Args;

use super::PlanArgs;
use super::generate::OutputArgs;
use crate::bundle::BundleOutcome;
use crate::exit::{Exit, InputError, Interrupted};
use crate::image::{BuildSetup, ImageOptions, ImageOutcome, Launch, Post, Replan};
use crate::kasrun::BuildError;
use crate::kasrun::after::Verified;
use crate::kasrun::caches::{CacheSettings, Hashserv, HostPort, MirrorUrl};
use crate::kasrun::command::BuildSpec;
use crate::kasrun::report::{BuildResult, BuildStatus};
use crate::runner::{System, signals};
use crate::ui::Ui;

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
}

/// What happens after a successful build.
#[derive(Debug, Clone, Copy, Default, Args)]
pub(crate) struct PostArgs {
    /// Do not verify the kernel config, command line and packages against the plan after the
    /// build (verification runs by default and fails the build when a check fails).
    #[arg(long, conflicts_with = "bundle")]
    pub no_verify: bool,
    /// Build, verify, then pack the qcomflash output into a bundle under <out>/bundle/.
    #[arg(long)]
    pub bundle: bool,
}

impl PostArgs {
    /// The post-build steps for a build of `spec` (see [`Post::decide`]).
    pub(crate) fn decide(&self, spec: &BuildSpec, ui: &Ui) -> anyhow::Result<Post> {
        Ok(Post::decide(self.no_verify, self.bundle, spec, ui)?)
    }
}

/// How to run kas and BitBake (shared by `image` and `matrix`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct BuildArgs {
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
pub(crate) struct CacheArgs {
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
    pub(crate) fn over_project(&self, project: &crate::plan::PlanRequest) -> CacheArgs {
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
    pub(crate) fn flags(&self) -> Vec<String> {
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

    pub(crate) fn settings(&self) -> Result<CacheSettings, BuildError> {
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
    pub(crate) fn validate(
        &self,
        project: &crate::plan::PlanRequest,
    ) -> anyhow::Result<(BuildSpec, CacheSettings)> {
        let spec =
            BuildSpec::new(&self.targets, self.task.as_deref(), self.bitbake_args.as_deref())
                .map_err(input)?;
        let caches = self.caches.over_project(project).settings().map_err(input)?;
        Ok((spec, caches))
    }

    /// What runs the build: kas, or kas-container with `--container` (see [`Launch::find`]).
    pub(crate) fn launch(&self, dry_run: bool) -> anyhow::Result<Launch> {
        Ok(Launch::find(self.kas.as_deref(), self.container.as_deref(), dry_run)?)
    }

    /// Everything a build of `project` needs from these flags, validated (exit 2 on bad
    /// input).
    pub(crate) fn setup(
        &self,
        project: &crate::plan::PlanRequest,
        dry_run: bool,
    ) -> anyhow::Result<BuildSetup> {
        let (spec, caches) = self.validate(project)?;
        Ok(BuildSetup { launch: self.launch(dry_run)?, spec, caches })
    }
}

fn input(err: BuildError) -> anyhow::Error {
    InputError(err.into()).into()
}

pub(super) fn run(args: ImageArgs, ui: &Ui) -> anyhow::Result<Exit> {
    signals::install();
    let plan = args.plan.plan()?;
    let request = args.plan.request()?;
    let (spec, caches) = args.build.validate(&request)?;
    let post = args.post.decide(&spec, ui)?;
    let launch = args.build.launch(args.output.dry_run)?;
    let replan = match args.plan.meta_qcom {
        Some(_) => None,
        None => Some(Replan { request, catalog: args.plan.catalog()? }),
    };
    let options = ImageOptions {
        output: args.output.options(),
        setup: BuildSetup { launch, spec, caches },
        post,
        lock: args.lock,
        replan,
    };
    let (result, after) = match crate::image::image(&plan, &options, &System, ui)? {
        ImageOutcome::Planned(dry_run) => {
            if ui.json() {
                ui.out_json(&dry_run)?;
            } else {
                dry_run.lines().into_iter().for_each(|line| ui.out(line));
            }
            return Ok(Exit::Ok);
        }
        ImageOutcome::Built { result, after } => (result, after),
    };
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
    verify: Option<&'a Verified>,
    bundle: Option<&'a BundleOutcome>,
}
