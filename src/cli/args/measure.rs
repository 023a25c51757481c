//! What to measure and under which load, shared by `rtbuild test` (runs it on a target) and
//! `rtbuild lava` (writes a job that runs it on a farm board): scenarios, run time, loads,
//! cyclictest's settings, the rt-tests programs of `--tests` and their `--test-args`.
//!
//! [`MeasureArgs::check`] turns the flags into checked values once, so both commands refuse
//! the same bad input with the same message.

use std::collections::BTreeMap;

use clap::Args;

use crate::cli::error::Refusal;
use crate::measure::rttests::Program;
use crate::measure::rttests::options::Checked;
use crate::measure::testrun::{self, CustomLoad, HIST_MAX_US, Measurement, Scenario, Span};

#[derive(Debug, Clone, Args)]
pub(crate) struct MeasureArgs {
    /// Scenarios to run, in order: idle, stress (stress-ng on the housekeeping CPUs),
    /// stress-isolated (unpinned load, kept off the RT CPUs by isolcpus=), full (cpu, io and vm
    /// load on the housekeeping CPUs), system-load (stress-ng at 100 % on every CPU, the
    /// measured ones included, unpinned: the guides' "full load" for a board without isolation;
    /// labelled so in every report), custom (the --load-cmd load),
    /// hackbench (rt-tests' hackbench as the load) [default: idle,stress; idle,custom with
    /// --load-cmd].
    #[arg(long, value_name = "LIST")]
    pub scenario: Option<String>,
    /// Run time of each scenario: seconds (600, as cyclictest's -D 600), 30s, 10m, 2h, 24h,
    /// 1d, or smoke (5 min), osadl (100M loops at 200 µs) or soak (24 h).
    #[arg(long, value_name = "TIME", default_value = "smoke")]
    pub duration: String,
    /// The load of scenario `custom`, e.g. "stress-ng -c 8 --io 2 --vm 1 --vm-bytes 1024M":
    /// one program on the target and its arguments, split like shell words and run without a
    /// shell, pinned to the housekeeping CPUs.
    #[arg(long, value_name = "COMMAND", allow_hyphen_values = true)]
    pub load_cmd: Option<String>,
    /// Run --load-cmd on any CPU, left to the kernel's isolation (isolcpus=) to keep it off the
    /// RT CPUs, as the RK3562J and Phytium guides do.
    #[arg(long, requires = "load_cmd")]
    pub load_unpinned: bool,
    /// CPU load of each stress-ng worker in the stress scenario, in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 60, value_parser = clap::value_parser!(u8).range(1..=100))]
    pub load: u8,
    /// cyclictest interval in µs [default: 1000; 200 with --duration osadl].
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u32).range(50..=1_000_000))]
    pub interval_us: Option<u32>,
    /// Histogram range in µs (cyclictest -h); samples above it are counted, the max stays
    /// exact [default: 1000; none with --threads N --unpinned, so cyclictest spreads the
    /// threads' intervals at its default distance as the guides run it: -h would give every
    /// thread the same interval].
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u32).range(10..=i64::from(HIST_MAX_US)))]
    pub histogram_us: Option<u32>,
    /// Extra cyclictest options, e.g. "--spike=250 -b 500": split like shell words (never run
    /// through a shell), checked against cyclictest's option list; options rtbuild sets itself
    /// (-a, -t, -i, -h, -D, -p, --json, ...) are refused with the flag to use instead.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    pub cyclictest_args: Option<String>,
    /// Tests to run in each scenario, comma-separated: cyclictest, oslat (OS noise on each RT
    /// CPU; always run first), cyclicdeadline, pmqtest, ptsematest, sigwaittest, svsematest,
    /// signaltest (latency), pi_stress, rt-migrate-test, ssdd (correctness), hwlatdetect
    /// (firmware latency, when the kernel has the hwlat tracer).
    #[arg(long, value_name = "LIST", default_value = "cyclictest")]
    pub tests: String,
    /// Extra options for one test, NAME="OPTIONS" (repeatable), e.g. oslat="-D 10m -w memmove":
    /// split like shell words (never run through a shell), checked against that program's
    /// options; a value for an option rtbuild sets (-D, -p, -i) replaces rtbuild's.
    #[arg(long, value_name = "NAME=OPTIONS", allow_hyphen_values = true)]
    pub test_args: Vec<String>,
    /// Run cyclictest for N loops per thread (its -l N, as the Qualcomm guide's -l 100000000)
    /// instead of --duration: 1 to 2147483647 (cyclictest reads -l into a C int), and at most
    /// 30 days at the interval.
    #[arg(long, value_name = "N", conflicts_with = "duration", value_parser = clap::value_parser!(u64).range(1..=MAX_LOOPS))]
    pub loops: Option<u64>,
    /// The housekeeping CPU of cyclictest's main thread (its --mainaffinity, as the guides'
    /// --mainaffinity 6 or 2) [default: the board's, as its guide: the housekeeping
    /// CPU nearest below the first RT CPU, else the last housekeeping CPU].
    #[arg(long, value_name = "CPU", value_parser = clap::value_parser!(u32).range(0..4096))]
    pub main_cpu: Option<u32>,
    /// Run N cyclictest threads the scheduler places (its -t N without -a, at its default
    /// distance), as the RK3588 guide's `cyclictest -c 0 -m -t 8 -p 99`; needs --unpinned.
    #[arg(long, value_name = "N", requires = "unpinned", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub threads: Option<u32>,
    /// With --threads: leave cyclictest's threads unpinned (reported per thread, not per CPU).
    #[arg(long, requires = "threads")]
    pub unpinned: bool,
    /// oslat's (and hwlatdetect's) limit: fail when an RT CPU sees OS noise above this many µs.
    #[arg(long, value_name = "US", default_value_t = crate::measure::rttests::DEFAULT_NOISE_US, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub noise_us: u64,
}

/// The most loops `--loops` takes: cyclictest reads `-l` into a C `int`.
const MAX_LOOPS: u64 = i32::MAX as u64;

/// The longest run `--loops` may ask for at its interval: 30 days, as `--duration`.
const MAX_LOOPS_SECONDS: u64 = 30 * 86_400;

impl MeasureArgs {
    /// Checks every flag; bad input is a [`Refusal`] naming the flag and the fix.
    pub(crate) fn check(&self) -> crate::cli::error::Result<Measurement> {
        let custom_load = self
            .load_cmd
            .as_deref()
            .map(|text| custom_load(text, !self.load_unpinned))
            .transpose()?;
        let scenarios = scenario_list(self.scenario.as_deref(), custom_load.as_ref())?;
        let mut span = Span::parse(&self.duration).map_err(Refusal::Duration)?;
        if let Some(loops) = self.loops {
            span = Span { length: testrun::Length::Loops(loops), interval_us: None };
        }
        let cyclictest_args = match &self.cyclictest_args {
            Some(text) => {
                crate::measure::toolargs::CYCLICTEST.check_text(text).map_err(Refusal::Options)?
            }
            None => Vec::new(),
        };
        if let Some(loops) = self.loops {
            let interval_us = self.interval_us.or(span.interval_us).unwrap_or(1000);
            let seconds = testrun::Length::Loops(loops).seconds(interval_us);
            if seconds > MAX_LOOPS_SECONDS {
                return Err(Refusal::LoopsTooLong { loops, interval_us, seconds }.into());
            }
        }
        let tests = crate::measure::rttests::parse_list(&self.tests).map_err(Refusal::Tests)?;
        let test_args = test_args(&self.test_args, &tests, &scenarios)?;
        Ok(Measurement {
            scenarios,
            span,
            // `--loops N` replaces the duration: the record says so, not the unused default.
            duration_text: match self.loops {
                Some(loops) => crate::text::counted(loops, "loop"),
                None => self.duration.clone(),
            },
            interval_us: self.interval_us.or(span.interval_us).unwrap_or(1000),
            // Unpinned threads keep cyclictest's own interval distance unless a histogram is
            // asked for (cyclictest gives every thread `-i` with `-h`).
            histogram_us: match (self.histogram_us, self.threads.is_some() && self.unpinned) {
                (Some(us), _) => us,
                (None, true) => 0,
                (None, false) => 1000,
            },
            load_percent: self.load,
            custom_load,
            cyclictest_args,
            tests,
            test_args,
            noise_us: self.noise_us,
            main_cpu: self.main_cpu,
            threads: match self.threads {
                Some(n) if self.unpinned => testrun::Threads::Unpinned(n),
                _ => testrun::Threads::PerCpu,
            },
        })
    }
}

/// `--load-cmd`: split without a shell; the program must be a plain name or path.
fn custom_load(text: &str, pinned: bool) -> crate::cli::error::Result<CustomLoad> {
    let argv = crate::measure::toolargs::split("--load-cmd", text).map_err(Refusal::Words)?;
    let Some(program) = argv.first() else {
        return Err(Refusal::EmptyLoadCmd.into());
    };
    if program.is_empty() || program.starts_with('-') || program.chars().any(char::is_control) {
        return Err(Refusal::NotAProgram(program.clone()).into());
    }
    Ok(CustomLoad { argv, pinned })
}

/// `--scenario` (default idle,stress; idle,custom with --load-cmd), checked against --load-cmd:
/// scenario `custom` and `--load-cmd` come together.
fn scenario_list(
    text: Option<&str>,
    custom_load: Option<&CustomLoad>,
) -> crate::cli::error::Result<Vec<Scenario>> {
    let text = text.unwrap_or(if custom_load.is_some() { "idle,custom" } else { "idle,stress" });
    let scenarios = testrun::parse_list(text).map_err(Refusal::Scenario)?;
    match (scenarios.contains(&Scenario::Custom), custom_load.is_some()) {
        (true, false) => Err(Refusal::CustomWithoutLoad.into()),
        (false, true) => Err(Refusal::LoadWithoutCustom.into()),
        _ => Ok(scenarios),
    }
}

/// `--test-args NAME=OPTIONS` (repeatable): each checked against its program's options, for a
/// program that runs (in `--tests`, or hackbench with the hackbench scenario), once each.
fn test_args(
    values: &[String],
    tests: &[Program],
    scenarios: &[Scenario],
) -> crate::cli::error::Result<BTreeMap<Program, Checked>> {
    let mut by_program = BTreeMap::new();
    for value in values {
        let (program, checked) =
            crate::measure::rttests::options::parse(value).map_err(Refusal::TestArgs)?;
        if program != Program::Hackbench && !tests.contains(&program) {
            return Err(Refusal::TestArgsNotRun(program).into());
        }
        if program == Program::Hackbench && !scenarios.contains(&Scenario::Hackbench) {
            return Err(Refusal::HackbenchNotRun.into());
        }
        if by_program.insert(program, checked).is_some() {
            return Err(Refusal::TestArgsTwice(program).into());
        }
    }
    Ok(by_program)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::MeasureArgs;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        measure: MeasureArgs,
    }

    fn duration(args: &[&str]) -> String {
        let cli =
            Cli::try_parse_from(std::iter::once("rtbuild").chain(args.iter().copied())).unwrap();
        cli.measure.check().unwrap().duration_text
    }

    /// Issue 40: a `--loops` run recorded its duration as the unused default `smoke`.
    #[test]
    fn a_loops_run_records_its_loops_not_the_default_duration() {
        assert_eq!(duration(&["--loops", "100000000"]), "100000000 loops");
        assert_eq!(duration(&[]), "smoke");
        assert_eq!(duration(&["--duration", "osadl"]), "osadl");
    }
}
