//! `--rt-cpus` and `--housekeeping` ([`CpuFlags`], declared here once for every command that
//! takes a CPU layout), and `--machine` with them ([`CpuArgs`]): the CPU layout of the board
//! that is tuned or measured, shared by `tune`, `test` and `lava`. The layout itself is checked
//! by [`CpuLayout::new`], never here.

use clap::Args;

use super::MachineArgs;
use crate::cli::error::Refusal;
use crate::host::Host;
use crate::host::cpus::{Board, CpuLayout, LayoutError};
use crate::host::runner::Runner;
use crate::plan::{CpuSet, Plan, PlanRequest};

/// The two CPU lists, as typed.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CpuFlags {
    /// RT CPUs, isolated and measured, e.g. `7`, `6,7` or `6-7` [default: the machine's];
    /// required without --machine where there is no plan to take them from.
    #[arg(long, value_name = "LIST")]
    pub rt_cpus: Option<String>,
    /// Housekeeping CPUs (IRQs, workqueues, load) [default: every other CPU of the machine, or
    /// of the target's online CPUs].
    #[arg(long, value_name = "LIST")]
    pub housekeeping: Option<String>,
}

impl CpuFlags {
    /// Both lists parsed, each error naming its flag; `None` where a flag was not given.
    pub(crate) fn parsed(&self) -> crate::cli::error::Result<(Option<CpuSet>, Option<CpuSet>)> {
        let parse = |flag: &'static str, list: &Option<String>| {
            list.as_deref()
                .map(CpuSet::parse)
                .transpose()
                .map_err(|cause| Refusal::CpuFlag { flag, cause })
        };
        Ok((parse("--rt-cpus", &self.rt_cpus)?, parse("--housekeeping", &self.housekeeping)?))
    }

    /// `--rt-cpus` (required here) and `--housekeeping`, parsed.
    fn given_sets(&self) -> crate::cli::error::Result<(CpuSet, Option<CpuSet>)> {
        let (rt, hk) = self.parsed()?;
        Ok((rt.ok_or(LayoutError::NoRtCpu)?, hk))
    }

    /// The layout from the lists alone, with no board to ask ([`CpuLayout::given`]): without
    /// `--housekeeping`, the CPUs below the highest RT CPU that are not RT CPUs (the bool says
    /// the housekeeping set was guessed this way).
    pub(crate) fn layout_offline(&self) -> crate::cli::error::Result<(CpuLayout, bool)> {
        let (rt, hk) = self.given_sets()?;
        Ok((CpuLayout::given(&rt, hk.as_ref())?, hk.is_none()))
    }
}

/// The CPU layout flags shared by `tune`, `test` and `lava`.
#[derive(Debug, Clone, Default, Args)]
#[command(mut_arg("machine", |arg| arg.help(
    "Catalog board (see `rtbuild machines`); gives the RT and housekeeping CPUs"
)))]
pub(crate) struct CpuArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    #[command(flatten)]
    pub cpus: CpuFlags,
}

impl CpuArgs {
    /// The layout from `--rt-cpus`/`--housekeeping` alone (see [`CpuFlags::layout_offline`]).
    pub(crate) fn layout_offline(&self) -> crate::cli::error::Result<(CpuLayout, bool)> {
        self.cpus.layout_offline()
    }

    /// The machine's plan, when --machine was given: a board for measuring only is taken (see
    /// [`Plan::for_measuring`]); `lava`, which needs an image, checks the build fields itself.
    pub(crate) fn plan(&self) -> crate::cli::error::Result<Option<Plan>> {
        let Some(machine) = &self.machine.name else { return Ok(None) };
        let request = PlanRequest {
            machine: Some(machine.clone()),
            rt_cpus: self.cpus.rt_cpus.clone(),
            housekeeping: self.cpus.housekeeping.clone(),
            ..PlanRequest::default()
        };
        Ok(Some(Plan::for_measuring(&request, &self.machine.catalog()?)?))
    }

    /// The layout on `host`: the plan's (its RT CPUs must be online there), or the one the
    /// flags describe against the host's online CPUs.
    pub(crate) fn layout_on(
        &self,
        plan: Option<&Plan>,
        host: &Host,
        runner: &dyn Runner,
    ) -> crate::cli::error::Result<CpuLayout> {
        let online = host.online_cpus(runner)?;
        let (rt, hk) = match plan {
            Some(plan) => (plan.layout.rt.clone(), Some(plan.layout.housekeeping.clone())),
            None => self.cpus.given_sets()?,
        };
        let layout = CpuLayout::new(&online, &rt, hk.as_ref(), Board::Online(host.to_string()))?;
        Ok(match plan {
            // Keep the machine's CPU count: the target's online set may be smaller.
            Some(plan) => layout.with_cpus(plan.layout.cpus.clone()),
            None => layout,
        })
    }
}
