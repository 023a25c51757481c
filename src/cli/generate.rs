//! `rtbuild generate`: plan → kas file + layer on disk, and nothing else.

use std::path::PathBuf;

use clap::Args;

use super::PlanArgs;
use crate::exit::Exit;
use crate::generate;
use crate::image::OutputOptions;
use crate::ui::Ui;
use crate::write::WriteOptions;

#[derive(Debug, Args)]
pub(crate) struct GenerateArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where generated files go.
#[derive(Debug, Clone, Args)]
pub(crate) struct OutputArgs {
    /// Output folder for the kas file and layer [default: rtbuild/<machine>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Overwrite generated files even if they were edited by hand.
    #[arg(long)]
    pub force: bool,
    /// Print what would change and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

impl OutputArgs {
    pub(crate) fn options(&self) -> OutputOptions {
        OutputOptions {
            out: self.out.clone(),
            write: WriteOptions { force: self.force, dry_run: self.dry_run },
        }
    }
}

pub(super) fn run(args: GenerateArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let plan = args.plan.plan()?;
    let options = args.output.options().for_plan(&plan);
    let generated = generate::generate_and_report(&plan, &options, ui)?;
    if ui.json() {
        ui.out_json(&generated)?;
    } else {
        ui.out(generated.kas_file.display());
    }
    Ok(Exit::Ok)
}
