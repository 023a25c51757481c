//! `rtbuild shell`: `kas shell` on the configuration `rtbuild image` builds, to look inside the
//! build folder, rerun a task or read `bitbake -e`.
//!
//! `-c CMD` is handed to `kas shell -c` as one argument. kas runs it with the user's own shell
//! on the user's machine, exactly as if they had typed it there: it is a shell command by
//! design, the only place rtbuild hands text to a shell, and rtbuild adds nothing to it.

use clap::Args;

use super::PlanArgs;
use super::generate::OutputArgs;
use super::image::BuildArgs;
use crate::build::command;
use crate::exit::{Exit, Interrupted};
use crate::runner::{Runner, System, signals};
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct ShellArgs {
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
}

pub fn run(args: ShellArgs, ui: &Ui) -> anyhow::Result<Exit> {
    signals::install();
    let plan = args.plan.plan()?;
    let (spec, caches) = args.build.validate(&args.plan.request()?)?;
    let dry_run = args.output.dry_run;
    let launch = args.build.launch(dry_run)?;
    let job = super::image::prepare(&plan, &args.output, &launch, spec, caches, ui)?;
    let cmd = command::in_container(
        command::kas_shell(&job.kas, &job.layout, &job.dirs, args.command.as_deref()),
        job.container,
    );
    if dry_run {
        ui.out(&cmd);
        return Ok(Exit::Ok);
    }
    ui.status("Running", &cmd);
    let finished = System.interactive(&cmd)?;
    if finished.interrupted && !finished.success() {
        return Err(Interrupted.into());
    }
    Ok(if finished.success() { Exit::Ok } else { Exit::Failed })
}
