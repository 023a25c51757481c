//! `rtbuild shell`: `kas shell` on the configuration `rtbuild image` builds (the flags mapped
//! onto [`crate::image::pipeline::shell`], which says how `-c CMD` reaches the user's shell).

use std::path::PathBuf;

use clap::Args;

use super::args::{BuildArgs, OutputArgs, PlanArgs};
use crate::error::Exit;
use crate::host::runner::{System, signals};
use crate::image::pipeline::shell::{ShellOutcome, shell};
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
    let plan = args.plan.plan()?;
    let setup = args.build.setup(&args.plan.request()?, args.output.dry_run)?;
    let mut output = args.output.options();
    output.work_dir = args.work_dir.as_deref().map(super::args::absolute);
    match shell(&plan, &output, &setup, args.command.as_deref(), &System, ui)? {
        ShellOutcome::Planned(cmd) => {
            ui.out(&cmd);
            Ok(Exit::Ok)
        }
        ShellOutcome::Ran { success } => Ok(Exit::from_pass(success)),
    }
}
