//! `rtbuild lava`: a LAVA job definition that flashes a bundle on a farm board and runs the
//! same measurement `rtbuild test` runs; `rtbuild report` reads its log.

use std::path::PathBuf;

use clap::Args;

use super::tune::CpuArgs;
use crate::exit::{Exit, InputError};
use crate::lava::{self, BundleUrl, JobRequest};
use crate::plan::Distro;
use crate::report::DEFAULT_THRESHOLD_US;
use crate::testrun::{HIST_MAX_US, Span};
use crate::tune::Layout;
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct LavaArgs {
    #[command(flatten)]
    pub cpus: CpuArgs,
    /// URL of the bundle to flash: `rtbuild bundle`'s *.tar.zst (or a meta-qcom
    /// *.qcomflash.tar.gz), where the LAVA dispatcher can download it.
    #[arg(long, value_name = "URL")]
    pub bundle_url: String,
    /// Scenarios to run, in order: idle, stress, stress-isolated, full, custom (the --load-cmd
    /// load) [default: idle,stress; idle,custom with --load-cmd].
    #[arg(long, value_name = "LIST")]
    pub scenario: Option<String>,
    /// Run time of each scenario: 30s, 10m, 2h, 24h, 1d, or smoke (5 min), osadl or soak.
    #[arg(long, value_name = "TIME", default_value = "smoke")]
    pub duration: String,
    /// LAVA device type [default: the machine name, as lava-test-plans names meta-qcom boards].
    #[arg(long, value_name = "T")]
    pub device_type: Option<String>,
    /// LAVA device tags the board must have, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub tags: Vec<String>,
    /// Distro the bundle was built with (sets the login: root, with a password on qcom-distro).
    #[arg(long, default_value = "qcom-distro-kvm")]
    pub distro: String,
    /// A scenario fails its LAVA test case above this many µs [default: the machine's
    /// requirement, else 100]; 1 to 1000000, as `rtbuild report` accepts.
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub threshold_us: Option<u64>,
    /// The load of scenario `custom`, as `rtbuild test --load-cmd` takes it (one program on the
    /// board and its arguments, split like shell words), pinned to the housekeeping CPUs.
    #[arg(long, value_name = "COMMAND", allow_hyphen_values = true)]
    pub load_cmd: Option<String>,
    /// Run --load-cmd on any CPU, left to the kernel's isolation (isolcpus=).
    #[arg(long, requires = "load_cmd")]
    pub load_unpinned: bool,
    /// CPU load of each stress-ng worker in the stress scenario, in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = 60, value_parser = clap::value_parser!(u8).range(1..=100))]
    pub load: u8,
    /// cyclictest interval in µs [default: 1000; 200 with --duration osadl].
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u32).range(50..=1_000_000))]
    pub interval_us: Option<u32>,
    /// Histogram range in µs.
    #[arg(long, value_name = "US", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(10..=i64::from(HIST_MAX_US)))]
    pub histogram_us: u32,
    /// Extra cyclictest options, checked exactly as `rtbuild test --cyclictest-args` checks them.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
    pub cyclictest_args: Option<String>,
    /// Write the job definition to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: LavaArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let input = |e: anyhow::Error| InputError(e);
    let bundle = BundleUrl::parse(&args.bundle_url).map_err(|e| input(e.into()))?;
    let custom_load = args
        .load_cmd
        .as_deref()
        .map(|text| super::test::custom_load(text, !args.load_unpinned))
        .transpose()?;
    let scenarios = super::test::scenario_list(args.scenario.as_deref(), custom_load.as_ref())?;
    let span = Span::parse(&args.duration).map_err(|e| input(e.into()))?;
    let distro: Distro =
        args.distro.parse().map_err(|e: crate::plan::UnknownDistro| input(e.into()))?;
    let cyclictest_args = match &args.cyclictest_args {
        Some(text) => {
            crate::toolargs::CYCLICTEST.check_text(text).map_err(|e| InputError(e.into()))?
        }
        None => Vec::new(),
    };
    if args.cpus.machine.is_none() {
        return Err(InputError::msg(
            "rtbuild lava needs --machine NAME, the board the lab flashes; see `rtbuild machines` for the names",
        )
        .into());
    }
    let Some(plan) = args.cpus.plan()? else { unreachable!("--machine was checked above") };
    let machine = plan.machine.name.clone();
    let threshold_us = args
        .threshold_us
        .or(plan.machine.latency_requirement_us)
        .unwrap_or(DEFAULT_THRESHOLD_US as u64);
    let request = JobRequest {
        device_type: args.device_type.clone().unwrap_or_else(|| machine.clone()),
        machine,
        distro,
        bundle,
        layout: Layout::from_plan(&plan),
        custom_load,
        scenarios,
        span,
        duration_text: args.duration.clone(),
        interval_us: args.interval_us.or(span.interval_us).unwrap_or(1000),
        histogram_us: args.histogram_us,
        load_percent: args.load,
        cyclictest_args,
        threshold_us,
        tags: args.tags.iter().map(|t| t.trim().to_string()).collect(),
    };
    let text = lava::render(&request).map_err(|e| input(e.into()))?;
    match &args.out {
        Some(path) => {
            crate::write::write_atomic(path, text.as_bytes(), false)?;
            ui.status("Wrote", format!("{} (LAVA job for {})", path.display(), request.machine));
            if ui.json() {
                ui.out_json(&serde_json::json!({ "job": path.display().to_string() }))?;
            } else {
                ui.out(path.display());
            }
        }
        None if ui.json() => {
            ui.out_json(
                &serde_json::json!({ "job": serde_yaml::from_str::<serde_json::Value>(&text)? }),
            )?;
        }
        None => ui.out(text.trim_end()),
    }
    Ok(Exit::Ok)
}
