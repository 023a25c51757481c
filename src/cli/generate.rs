//! `rtbuild generate`: plan → kas file + layer on disk, and nothing else.

use std::path::PathBuf;

use clap::Args;

use super::PlanArgs;
use crate::exit::Exit;
use crate::generate::{self, GenerateOptions, Generated};
use crate::plan::Plan;
use crate::ui::Ui;
use crate::write::{Change, WriteOptions};

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where generated files go.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
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
    pub fn options(&self, plan: &Plan) -> GenerateOptions {
        GenerateOptions {
            out: self.out.clone().unwrap_or_else(|| generate::default_out(plan)),
            write: WriteOptions { force: self.force, dry_run: self.dry_run },
        }
    }
}

pub fn run(args: GenerateArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let plan = args.plan.plan()?;
    let generated = generate_and_report(&plan, &args.output.options(&plan), ui)?;
    if ui.json() {
        ui.out_json(&generated)?;
    } else {
        ui.out(generated.kas_file.display());
    }
    Ok(Exit::Ok)
}

/// Generates and tells the user what changed (shared by `generate` and `image`).
pub fn generate_and_report(
    plan: &Plan,
    options: &GenerateOptions,
    ui: &Ui,
) -> anyhow::Result<Generated> {
    if let Some(alias) = &plan.alias {
        ui.note(format!("`{alias}` is an alias of `{}`", plan.machine.name));
    }
    if let Some(defaults) = &plan.machine_defaults {
        let rt_cpus_given = defaults.source == "catalog";
        if let Some(note) = defaults.note(&plan.machine.name, rt_cpus_given) {
            ui.note(note);
        }
    }
    ui.status(
        "Generating",
        format!(
            "{} (RT CPUs {}, housekeeping {}, {}, {})",
            plan.machine.name, plan.rt_cpus, plan.housekeeping, plan.distro, plan.image
        ),
    );
    let generated = generate::generate(plan, options)?;
    let dry = options.write.dry_run;
    for (path, change) in &generated.report.files {
        let verb = match (change, dry) {
            (Change::Unchanged, _) => {
                ui.detail(format!("unchanged {}", path.display()));
                continue;
            }
            (Change::Create, false) => "Created",
            (Change::Create, true) => "Would create",
            (Change::Update, false) => "Updated",
            (Change::Update, true) => "Would update",
            (Change::Remove, false) => "Removed",
            (Change::Remove, true) => "Would remove",
        };
        ui.status(verb, path.display());
    }
    let report = &generated.report;
    ui.status(
        if dry { "Dry run" } else { "Generated" },
        format!(
            "{}: {} new, {} updated, {} removed, {} unchanged",
            generated.out.display(),
            report.count(Change::Create),
            report.count(Change::Update),
            report.count(Change::Remove),
            report.count(Change::Unchanged)
        ),
    );
    Ok(generated)
}
