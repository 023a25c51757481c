//! `rtbuild test`: measure latency with cyclictest under the seed guides' load scenarios, on
//! this machine or a remote target, and judge whether each run is valid.

use std::path::PathBuf;

use clap::Args;

use super::tune::{CpuArgs, HostArgs};
use crate::exit::{Exit, InputError};
use crate::plan::CpuSet;
use crate::testrun::{self, CustomLoad, Finished, HIST_MAX_US, Scenario, Span, TestRequest};
use crate::tune::{self, CpuLayout, Host, TuneOptions};
use crate::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    #[command(flatten)]
    pub cpus: CpuArgs,
    #[command(flatten)]
    pub host: HostArgs,
    /// CPUs to measure, one cyclictest thread each: `all` (every online CPU, CPU 0 included,
    /// to compare loaded cores with the isolated ones) or a LIST like `0-3` [default: the RT
    /// CPUs]. --rt-cpus still names the isolated CPUs the validity checks expect.
    #[arg(long, value_name = "all|LIST")]
    pub measure_cpus: Option<String>,
    /// Scenarios to run, in order: idle, stress, stress-isolated, full, custom (the --load-cmd
    /// load), hackbench (rt-tests' hackbench as the load) [default: idle,stress; idle,custom
    /// with --load-cmd].
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
    /// Histogram range in µs; samples above it make the run invalid (overflow).
    #[arg(long, value_name = "US", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(10..=i64::from(HIST_MAX_US)))]
    pub histogram_us: u32,
    /// Fail when any thread's maximum latency is above this many µs (1 to 1000000) [default:
    /// the machine's latency requirement, else 100 µs, the same limit `rtbuild report` uses].
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_us: Option<u64>,
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
    /// oslat's (and hwlatdetect's) limit: fail when an RT CPU sees OS noise above this many µs.
    #[arg(long, value_name = "US", default_value_t = crate::rttests::DEFAULT_NOISE_US, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub noise_us: u64,
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
    pub analyzer: testrun::Analyzer,
    /// Apply rtbuild's run-time tuning before the run and revert it afterwards (needs root).
    #[arg(long)]
    pub tune: bool,
    /// Result folder (must be new or empty) [default: rtbuild-test-<unix time>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `--load-cmd`: split without a shell; the program must be a plain name or path.
pub(super) fn custom_load(text: &str, pinned: bool) -> anyhow::Result<CustomLoad> {
    let argv = crate::toolargs::split("--load-cmd", text).map_err(|e| InputError(e.into()))?;
    let Some(program) = argv.first() else {
        return Err(InputError::msg(
            "--load-cmd is empty; pass the load's program and arguments, e.g. --load-cmd \"stress-ng -c 4\"",
        )
        .into());
    };
    if program.is_empty() || program.starts_with('-') || program.chars().any(char::is_control) {
        return Err(InputError::msg(format!(
            "--load-cmd: `{}` is not a program name; start with the program, e.g. --load-cmd \"stress-ng -c 4\"",
            program.escape_debug()
        ))
        .into());
    }
    Ok(CustomLoad { argv, pinned })
}

/// `--measure-cpus`: `all` is every CPU `host` has online; a list must be online there.
fn measure_cpus(text: &str, host: &Host) -> anyhow::Result<CpuSet> {
    let online = host.online_cpus()?;
    if text.trim() == "all" {
        return Ok(online);
    }
    let cpus = CpuSet::parse(text).map_err(|e| {
        InputError::msg(format!("--measure-cpus: {e}; or pass `all` for every online CPU"))
    })?;
    let off = cpus.difference(&online);
    if !off.is_empty() {
        return Err(InputError::msg(format!(
            "--measure-cpus: CPU {off} is not online on {host} (online: {online}); pick CPUs from {online}, or pass `all`"
        ))
        .into());
    }
    Ok(cpus)
}

/// `--scenario` (default idle,stress; idle,custom with --load-cmd), checked against --load-cmd:
/// scenario `custom` and `--load-cmd` come together. `rtbuild lava` shares it.
pub(super) fn scenario_list(
    text: Option<&str>,
    custom_load: Option<&CustomLoad>,
) -> anyhow::Result<Vec<Scenario>> {
    let text = text.unwrap_or(if custom_load.is_some() { "idle,custom" } else { "idle,stress" });
    let scenarios = testrun::parse_list(text).map_err(|e| InputError(e.into()))?;
    match (scenarios.contains(&Scenario::Custom), custom_load.is_some()) {
        (true, false) => Err(InputError::msg(
            "scenario `custom` runs the --load-cmd load; pass --load-cmd \"stress-ng …\" (or drop custom)",
        )
        .into()),
        (false, true) => Err(InputError::msg(
            "--load-cmd is the load of scenario `custom`; add custom to --scenario",
        )
        .into()),
        _ => Ok(scenarios),
    }
}

pub(super) fn run(args: TestArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let custom_load =
        args.load_cmd.as_deref().map(|text| custom_load(text, !args.load_unpinned)).transpose()?;
    let scenarios = scenario_list(args.scenario.as_deref(), custom_load.as_ref())?;
    let span = Span::parse(&args.duration).map_err(|e| InputError(e.into()))?;
    let cyclictest_args = match &args.cyclictest_args {
        Some(text) => {
            crate::toolargs::CYCLICTEST.check_text(text).map_err(|e| InputError(e.into()))?
        }
        None => Vec::new(),
    };
    if args.trace_above_us.is_some()
        && let Some(option) = cyclictest_args.iter().find(|a| {
            ["-b", "--tracemark"].contains(&a.as_str())
                || a.starts_with("--breaktrace")
                || (a.starts_with("-b") && a.len() > 2 && !a.starts_with("--"))
        })
    {
        return Err(InputError::msg(format!(
            "--cyclictest-args `{option}` conflicts with --trace-above-us, which sets -b and --tracemark itself; drop it from --cyclictest-args"
        ))
        .into());
    }
    let tests = crate::rttests::parse_list(&args.tests).map_err(|e| InputError(e.into()))?;
    if args.trace_above_us.is_some() && !tests.contains(&crate::rttests::Program::Cyclictest) {
        return Err(InputError::msg(
            "--trace-above-us traces cyclictest's breach, but --tests has no cyclictest; add cyclictest to --tests or drop --trace-above-us",
        )
        .into());
    }
    let mut test_args = std::collections::BTreeMap::new();
    for value in &args.test_args {
        let (program, checked) =
            crate::rttests::options::parse(value).map_err(|e| InputError(e.into()))?;
        if program != crate::rttests::Program::Hackbench && !tests.contains(&program) {
            return Err(InputError::msg(format!(
                "--test-args {program}: {program} is not in --tests; add it there or drop these options"
            ))
            .into());
        }
        if program == crate::rttests::Program::Hackbench
            && !scenarios.contains(&testrun::Scenario::Hackbench)
        {
            return Err(InputError::msg(
                "--test-args hackbench: no hackbench scenario runs; add hackbench to --scenario or drop these options",
            )
            .into());
        }
        if test_args.insert(program, checked).is_some() {
            return Err(InputError::msg(format!(
                "--test-args {program} is given twice; put all of {program}'s options in one value"
            ))
            .into());
        }
    }
    let plan = args.cpus.plan()?;
    let Some(host) = args.host.host()? else {
        return Err(InputError::msg(
            "no target given; pass --local or --target ssh://USER@HOST[:PORT]",
        )
        .into());
    };
    let layout: CpuLayout = args.cpus.layout_on(plan.as_ref(), &host)?;
    let measure_cpus = match args.measure_cpus.as_deref() {
        None => layout.rt.clone(),
        Some(text) => measure_cpus(text, &host)?,
    };
    let machine = plan.as_ref().map(|p| p.machine.name.clone());
    let options = plan.as_ref().map(TuneOptions::for_plan).unwrap_or_default();
    let tune_script =
        tune::render_script(machine.as_deref().unwrap_or("a custom target"), &layout, &options);
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
        scenarios,
        span,
        duration_text: args.duration.clone(),
        interval_us: args.interval_us.or(span.interval_us).unwrap_or(1000),
        histogram_us: args.histogram_us,
        cyclictest_args,
        tests,
        test_args,
        noise_us: args.noise_us,
        load_percent: args.load,
        custom_load,
        max_us: args.max_us,
        threshold: testrun::Threshold::pick(args.max_us, plan.as_ref().map(|p| &p.machine)),
        out: out.clone(),
        tune_script,
        apply_tuning: args.tune,
        trace: args
            .trace_above_us
            .map(|above_us| testrun::TraceRequest { above_us, analyzer: args.analyzer }),
    };
    let finished = testrun::run(&request, ui)?;
    let verdict = match finished {
        Finished::Pass => "pass",
        Finished::Fail => "fail",
        Finished::Invalid => "invalid",
        Finished::Interrupted => "interrupted",
        Finished::ConnectionLost => "connection lost",
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
        Finished::Pass => Exit::Ok,
        Finished::Interrupted => Exit::Interrupted,
        _ => Exit::Failed,
    })
}
