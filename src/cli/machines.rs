//! `rtbuild machines [show NAME]`: the machine catalog.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::catalog::meta_qcom::{self, CatalogMatch, MetaQcom};

use super::args::CatalogArgs;
use crate::catalog::{Catalog, Machine};
use crate::cli::error::Refusal;
use crate::error::Exit;
use crate::text::table::table;
use crate::text::ui::Ui;

#[derive(Debug, Args)]
#[command(mut_arg("machines_dir", |arg| arg.global(true)))]
pub(crate) struct MachinesArgs {
    #[command(subcommand)]
    pub action: Option<MachinesAction>,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// List the machines a meta-qcom checkout sets RT defaults for (conf/machine/*.conf), each
    /// compared with the catalog: matching, differing (field and both values) or unknown to it.
    #[arg(long, value_name = "DIR")]
    pub meta_qcom: Option<PathBuf>,
    /// Print each machine name and alias on a line of its own (what bash's completion asks for
    /// the boards of `--machines-dir`).
    #[arg(long, hide = true, conflicts_with = "meta_qcom")]
    pub names: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum MachinesAction {
    /// Show everything rtbuild knows about one machine.
    Show {
        /// Machine name or alias.
        name: String,
    },
}

pub(super) fn run(args: MachinesArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let catalog = args.catalog.catalog()?;
    if let Some(dir) = &args.meta_qcom {
        if args.action.is_some() {
            return Err(Refusal::MetaQcomWithShow.into());
        }
        return from_meta_qcom(dir, &catalog, ui);
    }
    match args.action {
        None if args.names => ui.out(names(&catalog).join("\n")),
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

/// Every name and alias of the catalog, sorted, each once (the catalog allows only letters,
/// digits, `-` and `_` in them, so a completion script may offer them as they are).
pub(super) fn names(catalog: &Catalog) -> Vec<String> {
    let mut names: Vec<String> = catalog
        .machines()
        .flat_map(|m| std::iter::once(m.name.clone()).chain(m.aliases.iter().cloned()))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn list(catalog: &Catalog, ui: &Ui) -> crate::cli::error::Result<()> {
    if ui.json() {
        let machines: Vec<&Machine> = catalog.machines().collect();
        return Ok(ui.out_json(&machines)?);
    }
    let rows: Vec<[String; 7]> = catalog
        .machines()
        .map(|m| {
            [
                m.name.clone(),
                m.soc.clone().unwrap_or_else(|| "-".into()),
                m.cpus.to_string(),
                m.rt.rt_cpus.to_string(),
                m.rt.housekeeping.to_string(),
                if m.build().is_ok() { "build, measure" } else { "measure" }.to_string(),
                m.aliases.join(", "),
            ]
        })
        .collect();
    let header =
        ["MACHINE", "SOC", "CPUS", "RT", "HOUSEKEEPING", "FOR", "ALIASES"].map(String::from);
    ui.out(table(&header, &rows));
    Ok(())
}

fn from_meta_qcom(
    dir: &std::path::Path,
    catalog: &Catalog,
    ui: &Ui,
) -> crate::cli::error::Result<Exit> {
    let compared = MetaQcom::open(dir).and_then(|meta| meta_qcom::compare(&meta, catalog))?;
    if ui.json() {
        ui.out_json(&compared)?;
        return Ok(Exit::Ok);
    }
    let rows: Vec<[String; 6]> = compared
        .iter()
        .map(|c| {
            let alias = match &c.catalog_name {
                Some(name) if *name != c.machine.name => format!(" `{name}`"),
                _ => String::new(),
            };
            let status = match c.status {
                CatalogMatch::Matches => format!("matches the catalog{alias}"),
                CatalogMatch::Unknown => "not in the catalog".to_string(),
                CatalogMatch::Differs => {
                    let diffs: Vec<String> = c
                        .differences
                        .iter()
                        .map(|d| {
                            format!(
                                "{} ({}): catalog {}, meta-qcom {}",
                                d.field, d.variable, d.catalog, d.meta_qcom
                            )
                        })
                        .collect();
                    format!("differs from the catalog{alias}: {}", diffs.join("; "))
                }
            };
            let mut features = c.machine.machine_features.join(" ");
            if let Some(catalog) = &c.catalog_machine_features {
                features = format!("{features} (catalog: {})", catalog.join(" "));
            }
            [
                c.machine.name.clone(),
                c.machine.cpus.to_string(),
                c.machine.rt.rt_cpus.to_string(),
                c.machine.rt.housekeeping.to_string(),
                features,
                status,
            ]
        })
        .collect();
    let header =
        ["MACHINE", "CPUS", "RT", "HOUSEKEEPING", "MACHINE_FEATURES", "CATALOG"].map(String::from);
    ui.out(table(&header, &rows));
    let differ = compared.iter().filter(|c| c.status == CatalogMatch::Differs).count();
    let unknown = compared.iter().filter(|c| c.status == CatalogMatch::Unknown).count();
    ui.status(
        "Compared",
        format!(
            "{} in {}: {differ} {} from the catalog, {unknown} not in it",
            crate::text::counted(compared.len(), "machine"),
            dir.display(),
            if differ == 1 { "differs" } else { "differ" }
        ),
    );
    Ok(Exit::Ok)
}

fn show(machine: &Machine, ui: &Ui) -> crate::cli::error::Result<()> {
    if ui.json() {
        return Ok(ui.out_json(machine)?);
    }
    let build = machine.build();
    let mut lines = vec![format!("{} — {}", machine.name, machine.title())];
    match &build {
        Ok(b) => lines.extend([
            format!("  kas file        meta-qcom {}", b.kas_file),
            format!("  SoC             {} ({})", b.soc, b.soc_family),
        ]),
        Err(_) => {
            lines.push(
                "  for             measuring only (`test`, `tune`, `report`, `history`; no build)"
                    .to_string(),
            );
            if let Some(soc) = &machine.soc {
                lines.push(format!("  SoC             {soc}"));
            }
        }
    }
    lines.push(format!("  CPUs            {} ({})", machine.cpus, machine.all_cpus()));
    for cluster in &machine.clusters {
        lines.push(format!("    {:<13} {} {}", cluster.name, cluster.cpus, cluster.core));
    }
    if let Ok(b) = &build {
        lines.extend([
            format!("  RT CPUs         {}  (QCOM_RT_CPU, QCOM_RCU_NOCBS)", machine.rt.rt_cpus),
            format!("  housekeeping    {}  (QCOM_IRQAFF)", machine.rt.housekeeping),
            format!("  rcu_expedited   {}  (QCOM_RCU_EXPEDITED)", machine.rt.rcu_expedited),
            format!("  cpuidle.off     {}  (QCOM_CPUIDLE_OFF)", machine.rt.cpuidle_off),
            format!("  serial console  {}", b.serial_console),
            format!("  storage         {}", b.storage),
        ]);
    } else {
        lines.extend([
            format!("  RT CPUs         {}", machine.rt.rt_cpus),
            format!("  housekeeping    {}", machine.rt.housekeeping),
        ]);
        if !machine.rt.cpuidle_off.is_empty() {
            lines.push(format!("  cpuidle.off     {}", machine.rt.cpuidle_off));
        }
    }
    if let Some(us) = machine.latency_requirement_us {
        lines.push(format!("  requirement     max latency below {us} µs"));
    }
    if let Some(source) = &machine.source {
        lines.push(format!("  source          {source}"));
    }
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
