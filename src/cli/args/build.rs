//! How kas and BitBake run (`--kas`, `--target`, `--task`, `--bitbake-args`, `--container`
//! and the shared caches), shared by `image`, `matrix` and `shell`.

use std::path::PathBuf;

use clap::Args;

use super::{CacheArgs, CacheEnvArgs, SearchEnvArgs};
use crate::cli::error::Refusal;
use crate::image::kas::command::BuildSpec;
use crate::image::kasrun::BuildError;
use crate::image::kasrun::caches::CacheSettings;
use crate::image::pipeline::{BuildSetup, Launch};

/// How to run kas and BitBake (shared by `image` and `matrix`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct BuildArgs {
    /// The kas program to use [default: `kas` on PATH].
    #[arg(long, value_name = "PATH", env = "RTBUILD_KAS")]
    pub kas: Option<PathBuf>,
    /// Recipe to build instead of the image, e.g. linux-qcom-rt; repeatable (KAS_TARGET: the
    /// recipes separated by spaces, as kas reads it).
    #[arg(long = "target", value_name = "RECIPE", env = "KAS_TARGET", value_delimiter = ' ')]
    pub targets: Vec<String>,
    /// BitBake task to run, e.g. compile or populate_sdk [default: build].
    #[arg(long, value_name = "TASK", env = "KAS_TASK")]
    pub task: Option<String>,
    /// Extra BitBake options, separated by spaces, e.g. "-k -DD" (not a shell: no quoting).
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub bitbake_args: Option<String>,
    /// Build inside the kas container image (through kas-container, which ships with kas) with
    /// docker or podman [default engine: docker when installed, else podman]. The image is the
    /// pinned kas's; the work, download and sstate folders are mounted into it.
    #[arg(long, value_name = "ENGINE", num_args = 0..=1, default_missing_value = "auto")]
    pub container: Option<String>,
    /// Have kas write a provenance statement (in-toto SLSA v1, `kas build --provenance
    /// mode=max`) over the qcomflash tarball, the image SBOM and the kernel image the kas file
    /// declares as artifacts; the bundle carries it.
    #[arg(long)]
    pub provenance: bool,
    #[command(flatten)]
    pub caches: CacheArgs,
    #[command(flatten)]
    pub cache_env: CacheEnvArgs,
    #[command(flatten)]
    pub search_env: SearchEnvArgs,
}

impl BuildArgs {
    /// Validates the BitBake request and the cache settings, flags over `project`'s (exit 2 on
    /// bad input).
    pub(crate) fn validate(
        &self,
        project: &crate::plan::PlanRequest,
    ) -> crate::cli::error::Result<(BuildSpec, CacheSettings)> {
        let mut spec =
            BuildSpec::new(&self.targets, self.task.as_deref(), self.bitbake_args.as_deref())
                .map_err(|e| input(e.into()))?;
        spec.provenance = self.provenance;
        let mut caches = self.caches.over_project(project).settings().map_err(input)?;
        caches.env = self.cache_env.env();
        Ok((spec, caches))
    }

    /// What runs the build: kas, or kas-container with `--container` (see [`Launch::find`]).
    pub(crate) fn launch(&self, dry_run: bool) -> crate::cli::error::Result<Launch> {
        Ok(Launch::find(
            self.kas.as_deref(),
            self.container.as_deref(),
            dry_run,
            &self.search_env.env(),
        )?)
    }

    /// Everything a build of `project` needs from these flags, validated (exit 2 on bad
    /// input).
    pub(crate) fn setup(
        &self,
        project: &crate::plan::PlanRequest,
        dry_run: bool,
    ) -> crate::cli::error::Result<BuildSetup> {
        let (spec, caches) = self.validate(project)?;
        Ok(BuildSetup { launch: self.launch(dry_run)?, spec, caches })
    }
}

/// A bad setting is the user's input (exit 2).
fn input(err: BuildError) -> Refusal {
    Refusal::BuildSetting(err)
}
