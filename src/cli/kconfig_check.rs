//! `rtbuild kconfig-check`: merge fragments into a kernel tree's defconfig with the kernel's own
//! tools and report options that `olddefconfig` dropped, before any build.

use std::path::PathBuf;

use clap::Args;

use super::args::absolute;
use crate::cli::error::Refusal;
use crate::error::Exit;
use crate::text::ui::Ui;
use crate::verify::kconfig::Setting;
use crate::verify::kconfig_check::{self, KconfigCheck};

#[derive(Debug, Args)]
pub(crate) struct KconfigCheckArgs {
    /// Kernel source tree (with scripts/kconfig/merge_config.sh), e.g. qualcomm-linux/kernel.
    #[arg(long, value_name = "DIR")]
    pub kernel_src: PathBuf,
    /// Kernel architecture, exported as ARCH for make and merge_config.sh.
    #[arg(long, default_value = "arm64")]
    pub arch: String,
    /// Defconfig make target to start from.
    #[arg(long, value_name = "NAME", default_value = "defconfig")]
    pub defconfig: String,
    /// Config fragment (.cfg or .config) to merge, in order; repeatable.
    #[arg(long = "fragment", value_name = "FILE")]
    pub fragments: Vec<PathBuf>,
    /// Single option to merge after the fragments, e.g. CONFIG_PREEMPT_RT=y; repeatable.
    #[arg(long = "config", value_name = "CONFIG_X=VALUE")]
    pub configs: Vec<String>,
    /// Keep the output folder (O=) with the final .config here [default: a temporary folder].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub(super) fn run(args: KconfigCheckArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let configs = args
        .configs
        .iter()
        .map(|text| {
            Setting::parse_request(text)
                .map_err(|cause| Refusal::KconfigOption { text: text.clone(), cause })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(out) = &args.out {
        crate::files::output::check_folder("--out", out).map_err(Refusal::Output)?;
    }
    let check = KconfigCheck {
        kernel_src: absolute(&args.kernel_src),
        arch: args.arch,
        defconfig: args.defconfig,
        fragments: args.fragments,
        configs,
        out: args.out.as_deref().map(absolute),
    };
    let report = kconfig_check::run(&check, |cmd| ui.detail(cmd), &crate::host::runner::System)?;
    if ui.json() {
        ui.out_json(&report)?;
    } else {
        ui.out(report.to_table());
    }
    if !report.passed {
        ui.warn(super::verify::failed_summary(std::slice::from_ref(&report), ui.json()));
    }
    Ok(Exit::from_pass(report.passed))
}
