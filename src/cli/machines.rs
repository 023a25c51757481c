//! `rtbuild machines [show NAME]`: the machine catalog.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::catalog::{Catalog, Machine};
use crate::exit::Exit;
use crate::table::table;
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct MachinesArgs {
    #[command(subcommand)]
    pub action: Option<MachinesAction>,
    /// Extra machine definitions (*.yaml) that add to or replace the shipped catalog.
    #[arg(long, value_name = "DIR", env = "RTBUILD_MACHINES_DIR", global = true)]
    pub machines_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum MachinesAction {
    /// Show everything rtbuild knows about one machine.
    Show {
        /// Machine name or alias.
        name: String,
    },
}

pub fn run(args: MachinesArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let catalog = Catalog::with_user_dir(args.machines_dir.as_deref())?;
    match args.action {
        None => list(&catalog, ui)?,
        Some(MachinesAction::Show { name }) => {
            let found = catalog.lookup(&name)?;
            if let Some(alias) = found.alias {
                ui.note(format!("`{alias}` is an alias of `{}`", found.machine.name));
            }
            show(found.machine, ui)?;
        }
    }
    Ok(Exit::Ok)
}

fn list(catalog: &Catalog, ui: &Ui) -> anyhow::Result<()> {
    if ui.json() {
        let machines: Vec<&Machine> = catalog.machines().collect();
        return ui.out_json(&machines);
    }
    let rows: Vec<[String; 6]> = catalog
        .machines()
        .map(|m| {
            [
                m.name.clone(),
                m.soc.clone(),
                m.cpus.to_string(),
                m.rt.rt_cpus.to_string(),
                m.rt.housekeeping.to_string(),
                m.aliases.join(", "),
            ]
        })
        .collect();
    let header = ["MACHINE", "SOC", "CPUS", "RT", "HOUSEKEEPING", "ALIASES"].map(String::from);
    ui.out(table(&header, &rows));
    Ok(())
}

fn show(machine: &Machine, ui: &Ui) -> anyhow::Result<()> {
    if ui.json() {
        return ui.out_json(machine);
    }
    let mut lines = vec![
        format!("{} — {}", machine.name, machine.description),
        format!("  kas file        meta-qcom {}", machine.kas_file),
        format!("  SoC             {} ({})", machine.soc, machine.soc_family),
        format!("  CPUs            {} ({})", machine.cpus, machine.all_cpus()),
    ];
    for cluster in &machine.clusters {
        lines.push(format!("    {:<13} {} {}", cluster.name, cluster.cpus, cluster.core));
    }
    lines.extend([
        format!("  RT CPUs         {}  (QCOM_RT_CPU, QCOM_RCU_NOCBS)", machine.rt.rt_cpus),
        format!("  housekeeping    {}  (QCOM_IRQAFF)", machine.rt.housekeeping),
        format!("  rcu_expedited   {}  (QCOM_RCU_EXPEDITED)", machine.rt.rcu_expedited),
        format!("  cpuidle.off     {}  (QCOM_CPUIDLE_OFF)", machine.rt.cpuidle_off),
        format!("  serial console  {}", machine.serial_console),
        format!("  storage         {}", machine.storage),
    ]);
    if !machine.aliases.is_empty() {
        lines.push(format!("  aliases         {}", machine.aliases.join(", ")));
    }
    if let Some(reference) = &machine.reference {
        lines.push(format!("  reference       {}", reference.source));
        for r in &reference.results {
            lines.push(format!(
                "    {:<13} min {} µs, avg {} µs, max {} µs",
                r.scenario, r.min_us, r.avg_us, r.max_us
            ));
        }
    }
    ui.out(lines.join("\n"));
    Ok(())
}
