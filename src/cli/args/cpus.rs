//! `--machine`, `--rt-cpus`, `--housekeeping`: the CPU layout of the board that is tuned or
//! measured, shared by `tune`, `test` and `lava`.

use clap::Args;

use super::MachineArgs;
use crate::error::Refusal;
use crate::plan::{CpuSet, Plan, PlanRequest};
use crate::tune::{self, CpuLayout, Host};

/// The CPU layout flags shared by `tune`, `test` and `lava`.
#[derive(Debug, Clone, Default, Args)]
#[command(mut_arg("machine", |arg| arg.help(
    "Catalog board (see `rtbuild machines`); gives the RT and housekeeping CPUs"
)))]
pub(crate) struct CpuArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    /// RT CPUs, e.g. `7` or `6-7` [default: the machine's]; required without --machine.
    #[arg(long, value_name = "LIST")]
    pub rt_cpus: Option<String>,
    /// Housekeeping CPUs [default: every other CPU of the machine, or the target's online CPUs].
    #[arg(long, value_name = "LIST")]
    pub housekeeping: Option<String>,
}

impl CpuArgs {
    /// `--rt-cpus` (required here) and `--housekeeping`, parsed.
    fn given_sets(&self) -> crate::error::Result<(CpuSet, Option<CpuSet>)> {
        let rt = self.rt_cpus.as_deref().ok_or(tune::LayoutError::NoRtCpu)?;
        let rt = CpuSet::parse(rt).map_err(Refusal::CpuList)?;
        let hk = self
            .housekeeping
            .as_deref()
            .map(CpuSet::parse)
            .transpose()
            .map_err(Refusal::CpuList)?;
        Ok((rt, hk))
    }

    /// The layout from `--rt-cpus`/`--housekeeping` alone, with no board to ask: without
    /// `--housekeeping`, the CPUs below the highest RT CPU that are not RT CPUs (the bool says
    /// the housekeeping set was guessed this way).
    pub(crate) fn layout_offline(&self) -> crate::error::Result<(CpuLayout, bool)> {
        let (rt, hk) = self.given_sets()?;
        let top = rt.iter().chain(hk.iter().flat_map(CpuSet::iter)).max().unwrap_or(0);
        let cpus = CpuSet::range(0, top + 1);
        let layout = CpuLayout::new(&cpus, &rt, hk.as_ref(), "the given CPU list")?;
        Ok((layout, hk.is_none()))
    }

    /// The machine's plan, when --machine was given.
    pub(crate) fn plan(&self) -> crate::error::Result<Option<Plan>> {
        let Some(machine) = &self.machine.name else { return Ok(None) };
        let request = PlanRequest {
            machine: Some(machine.clone()),
            rt_cpus: self.rt_cpus.clone(),
            housekeeping: self.housekeeping.clone(),
            ..PlanRequest::default()
        };
        Ok(Some(Plan::new(&request, &self.machine.catalog()?)?))
    }

    /// The layout on `host`: the plan's (its RT CPUs must be online there), or the one the
    /// flags describe against the host's online CPUs.
    pub(crate) fn layout_on(
        &self,
        plan: Option<&Plan>,
        host: &Host,
    ) -> crate::error::Result<CpuLayout> {
        let online = host.online_cpus()?;
        let place = host.to_string();
        let (rt, hk) = match plan {
            Some(plan) => (plan.rt_cpus.clone(), Some(plan.housekeeping.clone())),
            None => self.given_sets()?,
        };
        let layout = CpuLayout::new(&online, &rt, hk.as_ref(), &place)?;
        Ok(match plan {
            // Keep the machine's CPU count: the target's online set may be smaller.
            Some(plan) => CpuLayout { cpus: plan.machine.all_cpus(), ..layout },
            None => layout,
        })
    }
}
