//! `rtbuild generate`: plan → kas file + layer on disk, and nothing else.

use clap::Args;

use super::args::{OutputArgs, PlanArgs};
use crate::error::Exit;
use crate::layer::generate;
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct GenerateArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub(super) fn run(args: GenerateArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    args.output.check()?;
    let plan = args.plan.plan()?;
    let options = args.output.options().for_plan(&plan);
    let generated = generate::generate_and_report(&plan, &options, ui)?;
    if ui.json() {
        ui.out_json(&generated)?;
    } else {
        ui.out(crate::text::shown_path(&generated.kas_file));
    }
    Ok(Exit::Ok)
}
