//! What one measurement runs, shared by `rtbuild test` ([`super::TestRequest`]) and
//! `rtbuild lava` ([`crate::lab::JobRequest`]): scenarios, run time, loads, cyclictest's
//! settings, the rt-tests programs and their options. The cli checks the flags into it once.

use std::collections::BTreeMap;

use crate::measure::rttests::Program;
use crate::measure::rttests::options::Checked;

use super::cyclictest::{Measure, Threads};
use super::{CustomLoad, Scenario, Span};

/// The measurement flags, checked: every value a command line is built from.
#[derive(Debug, Clone)]
pub(crate) struct Measurement {
    pub scenarios: Vec<Scenario>,
    pub span: Span,
    /// `--duration` as given, or `N loops` for `--loops N`, for the record.
    pub duration_text: String,
    /// `--interval-us`, else the duration's own (200 µs for osadl), else 1000 µs.
    pub interval_us: u32,
    pub histogram_us: u32,
    pub load_percent: u8,
    /// `--load-cmd` (and `--load-unpinned`): the load of scenario `custom`.
    pub custom_load: Option<CustomLoad>,
    /// `--cyclictest-args`, checked: appended to cyclictest's argv.
    pub cyclictest_args: Vec<String>,
    /// `--tests`: the programs run in each scenario, oslat first.
    pub tests: Vec<Program>,
    /// `--test-args NAME=OPTIONS`, checked, per program (hackbench's apply to the hackbench
    /// scenario's load).
    pub test_args: BTreeMap<Program, Checked>,
    /// `--noise-us`: oslat's (and hwlatdetect's) limit.
    pub noise_us: u64,
    /// `--main-cpu`: cyclictest's main thread, checked to be a housekeeping CPU by the command
    /// that knows the layout [default: `CpuLayout::main_cpu`, 6 on QCS6490, 2 on IQ-8275].
    pub main_cpu: Option<u32>,
    /// `--threads N --unpinned`, else one pinned thread per measured CPU.
    pub threads: Threads,
}

impl Measurement {
    /// What cyclictest's command line is built from.
    pub(crate) fn measure(&self) -> Measure {
        Measure {
            interval_us: self.interval_us,
            histogram_us: self.histogram_us,
            length: self.span.length,
            main_cpu: self.main_cpu,
            threads: self.threads,
        }
    }

    /// `--main-cpu` must be a housekeeping CPU: the main thread wakes up to print and would
    /// disturb an RT CPU's measurement.
    pub(crate) fn check_main_cpu(
        &self,
        housekeeping: &crate::plan::CpuSet,
    ) -> Result<(), MainCpuOffHousekeeping> {
        match self.main_cpu {
            Some(cpu) if !housekeeping.contains(cpu) => {
                Err(MainCpuOffHousekeeping { cpu, housekeeping: housekeeping.clone() })
            }
            _ => Ok(()),
        }
    }
}

/// `--main-cpu` names a CPU outside the housekeeping set.
#[derive(Debug, thiserror::Error)]
#[error(
    "--main-cpu {cpu} is not a housekeeping CPU ({housekeeping}); pass one of {housekeeping} (the guides keep cyclictest's main thread off the measured CPUs)"
)]
pub(crate) struct MainCpuOffHousekeeping {
    pub cpu: u32,
    pub housekeeping: crate::plan::CpuSet,
}
