//! `rtbuild shell`: `kas shell` on the configuration `rtbuild image` builds (the flags mapped
//! onto [`crate::image::pipeline::shell`], which says how `-c CMD` reaches the user's shell).

use std::path::PathBuf;

use clap::Args;

use super::args::{BuildArgs, OutputArgs, PlanArgs};
use crate::error::Exit;
use crate::host::runner::{System, signals};
use crate::image::pipeline::shell::{ShellOutcome, shell};
use crate::image::pipeline::{ImageOptions, Post};
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct ShellArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub build: BuildArgs,
    /// Run this shell command in the BitBake environment instead of an interactive shell,
    /// e.g. "bitbake -e linux-qcom-rt | grep ^KERNEL_CMDLINE" (run by your shell, as typed).
    #[arg(short = 'c', long = "command", value_name = "CMD")]
    pub command: Option<String>,
    /// kas work folder, as `rtbuild image --work-dir` uses it [default: the parent of the
    /// generated folder, `rtbuild/`].
    #[arg(long, value_name = "DIR", env = "KAS_WORK_DIR")]
    pub work_dir: Option<PathBuf>,
}

pub(super) fn run(args: ShellArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    signals::install();
    args.output.check()?;
    // As `image` reads them: rtbuild.yaml and the catalog once, meta-qcom resolved by the
    // pipeline (kas's checkout in the work folder unless --meta-qcom DIR is given).
    let request = args.plan.request()?;
    let catalog = args.plan.catalog()?;
    let meta_qcom = args.plan.meta_qcom_source()?;
    let setup = args.build.setup(&request, args.output.dry_run)?;
    let mut output = args.output.options();
    output.work_dir = args.work_dir.as_deref().map(super::args::absolute);
    // Nothing runs after a shell: no verify, no bundle.
    let post = Post { verify: false, bundle: false, gzip: false, source_date_epoch: None };
    let options = ImageOptions { output, setup, post, lock: None, meta_qcom };
    match shell(&request, &catalog, &options, args.command.as_deref(), &System, ui)? {
        ShellOutcome::Planned(cmd) => {
            ui.out(&cmd);
            Ok(Exit::Ok)
        }
        ShellOutcome::Ran { success } => Ok(Exit::from_pass(success)),
    }
}
