//! `rtbuild generate`: plan → kas file + layer on disk.

use std::path::PathBuf;

use clap::Args;

use super::PlanArgs;
use crate::exit::Exit;
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Output folder [default: rtbuild/<machine>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Overwrite generated files even if they were edited by hand.
    #[arg(long)]
    pub force: bool,
    /// Print what would change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: GenerateArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let _plan = args.plan.plan()?;
    let _ = ui;
    Ok(Exit::Ok)
}
