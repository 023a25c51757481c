//! `rtbuild test`: measure latency with cyclictest under the seed guides' load scenarios, on
//! this machine or a remote target, and judge whether each run is valid.

use std::path::PathBuf;

use clap::Args;

use super::args::{CpuArgs, HostArgs, MeasureArgs, board_name};
use crate::cli::error::Refusal;
use crate::error::Exit;
use crate::host::Host;
use crate::host::cpus::CpuLayout;
use crate::host::runner::System;
use crate::measure::testrun::{self, Measurement, RunEnd, TestRequest};
use crate::measure::tune::{self, TuneOptions};
use crate::plan::CpuSet;
use crate::text::ui::Ui;

#[derive(Debug, Args)]
// KAS_MACHINE names the board a build is for, not the one measured here: a value left in the
// shell from a build must never pick the CPUs of the target (docs/tune-test.md).
#[command(mut_arg("machine", |arg| arg.env(None::<&str>)))]
pub(crate) struct TestArgs {
    #[command(flatten)]
    pub cpus: CpuArgs,
    #[command(flatten)]
    pub host: HostArgs,
    /// Name of a board that is not in the catalog (with --rt-cpus): the run is recorded, and
    /// filed in the history, under it. Letters, digits, `-` and `_`. [default: the --machine,
    /// else the target's devicetree model]
    #[arg(long, value_name = "NAME", value_parser = board_name, conflicts_with = "machine")]
    pub board: Option<String>,
    /// CPUs to measure, one cyclictest thread each: `all` (every online CPU, CPU 0 included,
    /// to compare loaded cores with the isolated ones) or a LIST like `0-3` [default: the RT
    /// CPUs]. --rt-cpus still names the isolated CPUs the validity checks expect.
    #[arg(long, value_name = "all|LIST")]
    pub measure_cpus: Option<String>,
    #[command(flatten)]
    pub measure: MeasureArgs,
    /// Fail when any thread's maximum latency is above this many µs (1 to 1000000) [default:
    /// the machine's latency requirement, else 100 µs, the same limit `rtbuild report` uses].
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_us: Option<u64>,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Apply rtbuild's run-time tuning before the run and revert it afterwards (needs root).
    #[arg(long)]
    pub tune: bool,
    /// With --tune, also set vm.overcommit_memory=2 (no memory overcommit, as the RK3562J
    /// guide does); read back, and reverted after the run like every knob.
    #[arg(long, requires = "tune")]
    pub overcommit_never: bool,
    /// Stop Qualcomm's URM (urm.service), which re-tunes knobs when cyclictest starts, for the
    /// run, and start it again afterwards (also after Ctrl-C or a failure); recorded in
    /// run.json. Needs root and systemd on the target; a target without URM is noted.
    #[arg(long)]
    pub stop_urm: bool,
    /// Result folder (must be new or empty) [default: rtbuild-test-<unix time>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `--trace-above-us` and `--analyzer`: keep and explain the kernel trace of the first breach.
#[derive(Debug, Args)]
pub(crate) struct TraceArgs {
    /// Explain the worst spike: cyclictest breaks at the first sample above US (-b US
    /// --tracemark) while rtbuild records the kernel's scheduler, interrupt, timer, IPI and
    /// workqueue events on the measured CPUs; the trace window that ends at the breach is kept
    /// as trace-<scenario>.txt and `rtbuild report` explains it. The scenario ends at the
    /// breach. Needs root and tracefs; every tracing setting is restored afterwards.
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub trace_above_us: Option<u64>,
    /// Who explains the breach of --trace-above-us: ftrace (rtbuild records and explains) or
    /// rtla (rtla timerlat's auto-analysis; needs the timerlat tracer and rtla on the target).
    #[arg(
        long,
        value_name = "NAME",
        value_enum,
        default_value = "ftrace",
        requires = "trace_above_us"
    )]
    pub analyzer: AnalyzerArg,
}

/// `--analyzer`'s values, mapped onto [`testrun::Analyzer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AnalyzerArg {
    /// rtbuild records ftrace events during cyclictest and explains the breach itself.
    Ftrace,
    /// rtla timerlat's auto-analysis (needs the timerlat tracer and rtla on the target).
    Rtla,
}

impl From<AnalyzerArg> for testrun::Analyzer {
    fn from(arg: AnalyzerArg) -> testrun::Analyzer {
        match arg {
            AnalyzerArg::Ftrace => testrun::Analyzer::Ftrace,
            AnalyzerArg::Rtla => testrun::Analyzer::Rtla,
        }
    }
}

impl TraceArgs {
    /// The checked request: cyclictest must run, and its options must leave -b and
    /// --tracemark to rtbuild.
    fn check(&self, m: &Measurement) -> crate::cli::error::Result<Option<testrun::TraceRequest>> {
        let Some(above_us) = self.trace_above_us else { return Ok(None) };
        if let Some(option) = m.cyclictest_args.iter().find(|a| {
            ["-b", "--tracemark"].contains(&a.as_str())
                || a.starts_with("--breaktrace")
                || (a.starts_with("-b") && !a.starts_with("--"))
        }) {
            return Err(Refusal::TraceConflict(option.clone()).into());
        }
        if !m.tests.contains(&crate::measure::rttests::Program::Cyclictest) {
            return Err(Refusal::TraceWithoutCyclictest.into());
        }
        Ok(Some(testrun::TraceRequest { above_us, analyzer: self.analyzer.into() }))
    }
}

/// `--measure-cpus`: `all` is every CPU `host` has online; a list must be online there.
fn measure_cpus(text: &str, host: &Host) -> crate::cli::error::Result<CpuSet> {
    let online = host.online_cpus(&System)?;
    if text.trim() == "all" {
        return Ok(online);
    }
    let cpus = CpuSet::parse(text).map_err(Refusal::MeasureCpus)?;
    let off = cpus.difference(&online);
    if !off.is_empty() {
        return Err(Refusal::MeasureCpusOffline { off, host: host.to_string(), online }.into());
    }
    Ok(cpus)
}

pub(super) fn run(args: TestArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    // Before the target is asked anything: a device, FIFO or file is no result folder.
    if let Some(out) = &args.out {
        crate::files::output::check_folder("--out", out).map_err(Refusal::Output)?;
    }
    let m = args.measure.check()?;
    let trace = args.trace.check(&m)?;
    let plan = args.cpus.plan()?;
    let Some(host) = args.host.host()? else {
        return Err(Refusal::NoTarget.into());
    };
    let layout: CpuLayout = args.cpus.layout_on(plan.as_ref(), &host, &System)?;
    m.check_main_cpu(&layout.housekeeping).map_err(Refusal::MainCpu)?;
    let measure_cpus = match args.measure_cpus.as_deref() {
        None => layout.rt.clone(),
        Some(text) => measure_cpus(text, &host)?,
    };
    // Every CPU the run claims to measure gets a thread: cyclictest places unpinned threads
    // round the CPUs of its mask, which are the measured CPUs.
    if let testrun::Threads::Unpinned(n) = m.threads
        && (n as usize) < measure_cpus.len()
    {
        return Err(Refusal::TooFewThreads {
            threads: n,
            needed: measure_cpus.len(),
            cpus: measure_cpus,
        }
        .into());
    }
    let machine = plan.as_ref().map(|p| p.machine.name.clone());
    let options = TuneOptions {
        overcommit_never: args.overcommit_never,
        ..plan
            .as_ref()
            .map(|p| TuneOptions::for_machine(&p.machine.rt.cpuidle_off))
            .unwrap_or_default()
    };
    let tune_script = tune::render_script(
        machine.as_deref().or(args.board.as_deref()).unwrap_or("a custom target"),
        &layout,
        &options,
    );
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "rtbuild-test-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        ))
    });
    let request = TestRequest {
        host,
        layout,
        measure_cpus,
        machine,
        board: args.board.clone(),
        nohz_full: plan.as_ref().is_some_and(|p| p.settings.nohz_full),
        measurement: m,
        max_us: args.max_us,
        threshold: testrun::Threshold::pick(args.max_us, plan.as_ref().map(|p| &p.machine)),
        out: out.clone(),
        tune_script,
        apply_tuning: args.tune,
        overcommit_never: args.overcommit_never,
        stop_urm: args.stop_urm,
        trace,
    };
    let finished = testrun::run(&request, &System, ui)?;
    // The words `rtbuild report` gives the same run (one vocabulary).
    let verdict = match finished {
        RunEnd::Interrupted => format!("{} (interrupted)", finished.verdict()),
        RunEnd::ConnectionLost => format!("{} (connection lost)", finished.verdict()),
        _ => finished.verdict().to_string(),
    };
    if ui.json() {
        let text = std::fs::read_to_string(out.join(testrun::RUN_FILE)).unwrap_or_default();
        ui.out(text.trim_end());
    } else {
        ui.status(
            "Result",
            format!(
                "{verdict} against {} µs ({}); results in {}",
                request.threshold.us,
                request.threshold.source,
                out.display()
            ),
        );
        ui.out(out.display());
    }
    Ok(match finished {
        RunEnd::Pass => Exit::Ok,
        RunEnd::Interrupted => Exit::Interrupted,
        _ => Exit::Failed,
    })
}
