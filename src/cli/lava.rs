//! `rtbuild lava`: a LAVA job definition that flashes a bundle on a farm board (or, with
//! `--deploy qemu`, boots a kernel and root file system under QEMU) and runs the same
//! measurement `rtbuild test` runs; `rtbuild report` reads its log.

use std::path::PathBuf;

use clap::Args;

use super::args::{CpuArgs, MeasureArgs};
use crate::catalog::Deploy;
use crate::cli::error::{Kind, Refusal};
use crate::error::Exit;
use crate::lab::job::{DownloadHeader, LavaVersion};
use crate::lab::qemu::{self, Arch, ImageUrl, QemuImages};
use crate::lab::{Artifacts, BundleUrl, JobError, JobRequest, Lab};
use crate::plan::Distro;
use crate::results::report::DEFAULT_THRESHOLD_US;
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct LavaArgs {
    #[command(flatten)]
    pub cpus: CpuArgs,
    /// URL of the bundle to flash: `rtbuild bundle`'s *.tar.zst (or a meta-qcom
    /// *.qcomflash.tar.gz), where the LAVA dispatcher can download it (every deploy but qemu).
    #[arg(long, value_name = "URL")]
    pub bundle_url: Option<String>,
    /// LAVA device type [default: the one Qualcomm's lab uses for the board (the catalog's
    /// `lava.device_type`, from lava-test-plans), else the machine name].
    #[arg(long, value_name = "T")]
    pub device_type: Option<String>,
    /// How the lab flashes the board: `qdl` (EDL, one qdl boot per storage stage) or
    /// `flasher` (a download and the lab's flasher script); or `qemu`: no board, LAVA boots
    /// --kernel-url, --initrd-url and --rootfs-url under QEMU (device type `qemu`), a smoke
    /// job whose latencies mean nothing [default: the catalog's `lava.deploy`, else flasher].
    #[arg(long, value_name = "qdl|flasher|qemu")]
    pub deploy: Option<String>,
    /// qemu: the kernel to boot (file:///PATH on the dispatcher, or http(s)://).
    #[arg(long, value_name = "URL")]
    pub kernel_url: Option<String>,
    /// qemu: the initrd, if the kernel needs one (file:///PATH or http(s)://).
    #[arg(long, value_name = "URL")]
    pub initrd_url: Option<String>,
    /// qemu: the root file system, a raw ext4 image (the guest's /dev/vda; .gz, .xz, .zst and
    /// .bz2 are decompressed by LAVA).
    #[arg(long, value_name = "URL")]
    pub rootfs_url: Option<String>,
    /// qemu: the kernel command line; rtbuild appends the machine's RT arguments (isolcpus,
    /// nohz_full, rcu_nocbs, irqaffinity, …) [default: console=ttyS0,115200 root=/dev/vda rw;
    /// with --arch arm64 console=ttyAMA0,115200 root=/dev/vda rw rootwait].
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub kernel_args: Option<String>,
    /// qemu: the guest's architecture (LAVA's `arch`); arm64 boots `-M virt,gic-version=3 -cpu
    /// max` with LAVA's test overlay on virtio [default: amd64].
    #[arg(long, value_name = "amd64|arm64")]
    pub arch: Option<String>,
    /// qemu: the console is already a root shell; boot without logging in.
    #[arg(long)]
    pub no_login: bool,
    /// The shell prompt to wait for after boot, before the generic `root@…` one [default: the
    /// catalog's `lava.boot_prompt`, else root@MACHINE].
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub prompt: Option<String>,
    /// The image the bundle holds; its qcomflash folder is IMAGE-MACHINE [default:
    /// qcom-multimedia-image; core-image-base with nodistro].
    #[arg(long, value_name = "NAME")]
    pub image: Option<String>,
    /// LAVA device tags the board must have, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub tags: Vec<String>,
    /// Distro the bundle was built with (sets the login: root, with a password on qcom-distro)
    /// [default: qcom-distro, as `image` and `generate` build]; qcom-distro-kvm is kept as an
    /// alias of qcom-distro (the same image: KVM is the machine's, or the hypervisor's).
    #[arg(long, value_name = "NAME", env = "KAS_DISTRO")]
    pub distro: Option<String>,
    /// A scenario fails its LAVA test case above this many µs [default: the machine's
    /// requirement, else 100]; 1 to 1000000, as `rtbuild report` accepts.
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub threshold_us: Option<u64>,
    /// The meta-qcom branch the bundle was built from: the lab's device type, deploy and
    /// prompt come from the lava-test-plans revision that branch's CI pins (wrynose:
    /// 62f75dd, flasher; master: a20c74e, qdl; other branches: master's) [default: wrynose].
    #[arg(long, value_name = "BRANCH")]
    pub meta_qcom_branch: Option<String>,
    /// The LAVA release the lab runs, YYYY.MM: the qdl deploy needs 2026.06 or later, and
    /// `overlay_path` is written only for 2026.06 (2026.07 refuses it) [default: 2026.07].
    #[arg(long, value_name = "YYYY.MM")]
    pub lava_version: Option<String>,
    /// Send header NAME with the bundle's download, its value read from the environment
    /// variable VAR (a CI secret), never from the command line; repeatable. The written job
    /// holds the value, as the lab needs it: keep the file private.
    #[arg(long, value_name = "NAME=VAR")]
    pub qcomflash_header: Vec<String>,
    #[command(flatten)]
    pub measure: MeasureArgs,
    /// Write the job definition to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub(super) fn run(args: LavaArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let m = args.measure.check()?;
    let distro = job_distro(args.distro.as_deref(), ui)?;
    if args.cpus.machine.name.is_none() {
        return Err(Refusal::LavaNeedsMachine.into());
    }
    let Some(plan) = args.cpus.plan()? else { unreachable!("--machine was checked above") };
    // The job flashes the image rtbuild built for the board: a board it only measures has none.
    plan.machine.build()?;
    let machine = plan.machine.name.clone();
    let threshold_us = args
        .threshold_us
        .or(plan.machine.latency_requirement_us)
        .unwrap_or(DEFAULT_THRESHOLD_US as u64);
    let layout = plan.layout.clone();
    m.check_main_cpu(&layout.housekeeping).map_err(Refusal::MainCpu)?;
    let deploy = args
        .deploy
        .as_deref()
        .map(str::parse::<crate::catalog::Deploy>)
        .transpose()
        .map_err(Refusal::Deploy)?;
    let lava_version = match &args.lava_version {
        Some(text) => LavaVersion::parse(text).map_err(Refusal::Job)?,
        None => LavaVersion::CURRENT,
    };
    let headers = download_headers(&args.qcomflash_header).map_err(Refusal::Job)?;
    let branch = args.meta_qcom_branch.as_deref().unwrap_or(crate::plan::META_QCOM_BRANCH);
    let mut lab = Lab::resolve(
        &machine,
        plan.machine.lava.as_ref(),
        branch,
        args.device_type.as_deref(),
        deploy,
    )
    .map_err(Refusal::Job)?;
    if let Some(prompt) = &args.prompt {
        lab = lab.with_prompt(prompt).map_err(Refusal::Job)?;
    }
    let arch: Arch = args.arch.as_deref().unwrap_or("amd64").parse().map_err(Refusal::Arch)?;
    let artifacts =
        artifacts(&args, lab.deploy, &plan.rt_cmdline(), layout.cpus.iter().max(), arch)
            .map_err(Refusal::Job)?;
    let request = JobRequest {
        image: args.image.clone().unwrap_or_else(|| distro.default_image().to_string()),
        lab,
        machine,
        distro,
        artifacts,
        layout,
        measurement: m,
        threshold_us,
        tags: args.tags.iter().map(|t| t.trim().to_string()).collect(),
        lava_version,
        headers,
    };
    let text = crate::lab::render(&request).map_err(Refusal::Job)?;
    match &args.out {
        Some(path) => {
            crate::files::output::check_file("--out", path).map_err(Refusal::Output)?;
            crate::files::write::write_atomic(path, text.as_bytes(), false)?;
            ui.status(
                "Wrote",
                format!("{} (LAVA job for {})", crate::text::shown_path(path), request.machine),
            );
            if ui.json() {
                ui.out_json(&serde_json::json!({ "job": path.display().to_string() }))?;
            } else {
                ui.out(crate::text::shown_path(path));
            }
        }
        None if ui.json() => {
            ui.out_json(&serde_json::json!({
                "job": crate::text::yaml::from_str::<serde_json::Value>(&text).map_err(Kind::LavaYaml)?
            }))?;
        }
        None => ui.out(text.trim_end()),
    }
    Ok(Exit::Ok)
}

/// The distro of `--distro` as the plan composes it: qcom-distro when none is named (what
/// `image` and `generate` build), and the `qcom-distro-kvm` alias unfolded to qcom-distro (a
/// plan never holds it: meta-qcom's DISTRO was always `qcom-distro`), with a note.
fn job_distro(given: Option<&str>, ui: &Ui) -> crate::cli::error::Result<Distro> {
    let typed: Distro = match given {
        Some(name) => name.parse().map_err(Refusal::Distro)?,
        None => Distro::QcomDistro,
    };
    if typed != Distro::QcomDistroKvm {
        return Ok(typed);
    }
    ui.note(
        "--distro qcom-distro-kvm is kept as an alias of --distro qcom-distro (meta-qcom's DISTRO is qcom-distro on both layouts); the job logs in as qcom-distro's root",
    );
    Ok(Distro::QcomDistro)
}

/// `--qcomflash-header NAME=VAR`: each header with the value of environment variable VAR.
/// The variable's name is the user's, so clap's `env =` cannot name it; this is the one place
/// rtbuild reads an environment variable it does not know in advance (a CI secret).
fn download_headers(flags: &[String]) -> Result<Vec<DownloadHeader>, JobError> {
    let mut headers: Vec<DownloadHeader> = Vec::new();
    for flag in flags {
        let (name, var) = DownloadHeader::parse_flag(flag)?;
        if headers.iter().any(|h| h.name.eq_ignore_ascii_case(&name)) {
            return Err(JobError::HeaderFlag(format!("{flag} (header {name} given twice)")));
        }
        #[allow(clippy::disallowed_methods)]
        let value = std::env::var(&var).ok();
        headers.push(DownloadHeader::new(&name, &var, value.as_deref())?);
    }
    Ok(headers)
}

/// The bundle the board flashes, or the files QEMU boots, from the flags `deploy` takes.
fn artifacts(
    args: &LavaArgs,
    deploy: Deploy,
    rt_cmdline: &[String],
    last_cpu: Option<u32>,
    arch: Arch,
) -> Result<Artifacts, JobError> {
    let qemu_flags = args.kernel_url.is_some()
        || args.initrd_url.is_some()
        || args.rootfs_url.is_some()
        || args.kernel_args.is_some()
        || args.arch.is_some()
        || args.no_login;
    if deploy != Deploy::Qemu {
        return match (&args.bundle_url, qemu_flags) {
            (Some(url), false) => Ok(Artifacts::Bundle(BundleUrl::parse(url)?)),
            _ => Err(JobError::BoardNeedsBundle(deploy.name())),
        };
    }
    let (Some(kernel), Some(rootfs), None) = (&args.kernel_url, &args.rootfs_url, &args.bundle_url)
    else {
        return Err(JobError::QemuNeedsFiles);
    };
    Ok(Artifacts::Qemu(QemuImages {
        kernel: ImageUrl::parse("--kernel-url", kernel)?,
        initrd: args
            .initrd_url
            .as_deref()
            .map(|u| ImageUrl::parse("--initrd-url", u))
            .transpose()?,
        rootfs: ImageUrl::parse("--rootfs-url", rootfs)?,
        kernel_args: qemu::kernel_args(
            args.kernel_args.as_deref().unwrap_or(arch.default_kernel_args()),
            rt_cmdline,
        )?,
        arch,
        cpus: last_cpu.map_or(1, |c| c + 1),
        login: !args.no_login,
    }))
}
