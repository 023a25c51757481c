//! `rtbuild tune`: render the run-time tuning script, or apply / verify / revert it on a target.

use std::path::PathBuf;

use clap::Args;

use super::args::{BoardArg, CpuArgs, HostArgs};
use crate::cli::error::{Kind, Refusal};
use crate::error::Exit;
use crate::host::runner::System;
use crate::measure::tune::{self, Action, TuneOptions};
use crate::plan::Plan;
use crate::text::ui::Ui;

/// `--bootargs`: the kernel command line for the CPU plan, and where it goes.
fn bootargs(args: &TuneArgs, plan: Option<&Plan>, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let (line, note) = match plan {
        Some(plan) => (plan.rt_cmdline().join(" "), None),
        None => {
            // irqaffinity is every CPU of the board but the RT CPUs, as verify's consistency
            // check wants it: the board's CPUs come from the target, --cpu-count or the lists.
            let layout = match (args.host.host()?, args.cpu_count) {
                (Some(host), _) => args.cpus.layout_on(None, &host, &System)?,
                (None, Some(count)) => {
                    let (rt, hk) = args.cpus.cpus.parsed()?;
                    let rt = rt.ok_or(crate::host::cpus::LayoutError::NoRtCpu)?;
                    crate::host::cpus::CpuLayout::new(
                        &crate::plan::CpuSet::range(0, count),
                        &rt,
                        hk.as_ref(),
                        crate::host::cpus::Board::Machine(format!(
                            "the board of --cpu-count {count}"
                        )),
                    )?
                }
                (None, None) => {
                    let (layout, guessed) = args.cpus.layout_offline()?;
                    if guessed {
                        return Err(Refusal::BootargsBoardUnknown { rt: layout.rt }.into());
                    }
                    layout
                }
            };
            let rt = &layout.rt;
            let line = format!(
                "isolcpus={rt} nohz_full={rt} rcu_nocbs={rt} irqaffinity={}",
                layout.housekeeping
            );
            (line, None::<String>)
        }
    };
    let uboot = format!("setenv bootargs \"${{bootargs}} {line}\"; saveenv");
    let extlinux = format!("append <existing arguments> {line}");
    let grub = format!("GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {line}\"");
    if ui.json() {
        ui.out_json(&serde_json::json!({
            "bootargs": line, "uboot": uboot, "extlinux": extlinux, "grub": grub, "note": note,
        }))?;
        return Ok(Exit::Ok);
    }
    ui.out(&line);
    ui.out("");
    ui.out(format!("U-Boot (console):       {uboot}"));
    ui.out(format!("extlinux/extlinux.conf: {extlinux}"));
    ui.out(format!("GRUB (/etc/default/grub, then update-grub or grub-mkconfig): {grub}"));
    if let Some(note) = note {
        ui.note(note);
    }
    Ok(Exit::Ok)
}

#[derive(Debug, Args)]
// KAS_MACHINE names the board a build is for, not the one measured here: a value left in the
// shell from a build must never pick the CPUs of the target (docs/tune-test.md).
#[command(mut_arg("machine", |arg| arg.env(None::<&str>)))]
pub(crate) struct TuneArgs {
    #[command(flatten)]
    pub cpus: CpuArgs,
    #[command(flatten)]
    pub board: BoardArg,
    #[command(flatten)]
    pub host: HostArgs,
    /// Write rtbuild-tune.sh into DIR instead of running it.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["local", "target"])]
    pub emit: Option<PathBuf>,
    /// Print the boot arguments for this CPU plan (isolcpus, nohz_full, rcu_nocbs, irqaffinity),
    /// ready for U-Boot `bootargs`, extlinux.conf and GRUB, for boards built without Yocto.
    #[arg(long, conflicts_with_all = ["emit", "apply", "verify", "revert"])]
    pub bootargs: bool,
    /// How many CPUs the board has, for --bootargs without --machine or a target: irqaffinity
    /// gets every CPU but the RT CPUs (`--rt-cpus 3 --cpu-count 8`: `irqaffinity=0-2,4-7`).
    #[arg(long, value_name = "N", requires = "bootargs", value_parser = clap::value_parser!(u32).range(2..=4096))]
    pub cpu_count: Option<u32>,
    /// Save the current values and tune.
    #[arg(long, group = "action")]
    pub apply: bool,
    /// Read every knob back; exit 1 naming each one that is not tuned.
    #[arg(long, group = "action")]
    pub verify: bool,
    /// Restore the values saved by --apply.
    #[arg(long, group = "action")]
    pub revert: bool,
    /// Disable every cpuidle state of the RT CPUs [default: when the machine asks for it].
    #[arg(long)]
    pub cpuidle_off: bool,
    /// Console log level to set in /proc/sys/kernel/printk (0-7).
    #[arg(long, value_name = "LEVEL", default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=7))]
    pub printk: u8,
    /// Also set vm.overcommit_memory=2 (no memory overcommit, as the RK3562J guide does), saved
    /// and restored by --revert like every knob.
    #[arg(long)]
    pub overcommit_never: bool,
}

impl TuneArgs {
    fn action(&self) -> Option<Action> {
        [(self.apply, Action::Apply), (self.verify, Action::Verify), (self.revert, Action::Revert)]
            .into_iter()
            .find_map(|(on, action)| on.then_some(action))
    }

    fn options(&self, plan: Option<&Plan>) -> TuneOptions {
        let from_machine =
            plan.map(|p| TuneOptions::for_machine(&p.machine.rt.cpuidle_off)).unwrap_or_default();
        TuneOptions {
            cpuidle_off: self.cpuidle_off || from_machine.cpuidle_off,
            printk: Some(self.printk),
            overcommit_never: self.overcommit_never,
        }
    }
}

pub(super) fn run(args: TuneArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let plan = args.cpus.plan()?;
    // The script and its state file name the board: the catalog's, else --board's.
    let machine = plan
        .as_ref()
        .map(|p| p.machine.name.as_str())
        .or(args.board.board.as_deref())
        .unwrap_or("a custom target")
        .to_string();
    if args.bootargs {
        return bootargs(&args, plan.as_ref(), ui);
    }
    if let Some(dir) = &args.emit {
        if args.action().is_some() {
            return Err(Refusal::EmitRunsNothing.into());
        }
        let layout = match plan.as_ref() {
            Some(plan) => plan.layout.clone(),
            None => args.cpus.layout_offline()?.0,
        };
        crate::files::output::check_folder("--emit", dir).map_err(Refusal::Output)?;
        let script = tune::render_script(&machine, &layout, &args.options(plan.as_ref()));
        let path = tune::emit(dir, &script)
            .map_err(|cause| Kind::Emit { path: dir.join(tune::SCRIPT_NAME), cause })?;
        if ui.json() {
            ui.out_json(&serde_json::json!({ "script": path }))?;
        } else {
            ui.status("Wrote", crate::text::shown_path(&path));
        }
        return Ok(Exit::Ok);
    }
    let Some(action) = args.action() else {
        return Err(Refusal::NothingToDo.into());
    };
    let Some(host) = args.host.host()? else {
        return Err(Refusal::NoPlaceToRun(action.word()).into());
    };
    let layout = args.cpus.layout_on(plan.as_ref(), &host, &System)?;
    let script = tune::render_script(&machine, &layout, &args.options(plan.as_ref()));
    // A refusal comes alone, before the line that says what runs.
    tune::refuse_unless_root(&System, &host, action)?;
    ui.status(
        "Tuning",
        format!(
            "{} on {host}{}: RT CPUs {}, housekeeping {}",
            action.word(),
            args.board.board.as_ref().map_or(String::new(), |b| format!(" ({b})")),
            layout.rt,
            layout.housekeeping
        ),
    );
    let mut outcome = tune::run_script(&System, &host, &script, action, None)?;
    outcome.mark_pinned(&layout.rt);
    if ui.json() {
        ui.out_json(&outcome)?;
    } else {
        // The target's lines: escaped and cut, so a board cannot forge rtbuild's own.
        for line in &outcome.lines {
            ui.out(crate::text::shown(line));
        }
    }
    // The same notes and warnings on stderr with or without --json, pass or fail: the JSON
    // holds what they count (`refused`, `pinned`, `problems`).
    let others = outcome.refused.len().saturating_sub(outcome.pinned.len());
    if others > 0 {
        ui.note(format!("{} refused the housekeeping affinity (per-CPU or managed IRQs off the RT CPUs); listed, not counted as failures", crate::text::counted(others, "IRQ")));
    }
    for line in outcome.pinned_warnings(&layout.rt) {
        ui.warn(line);
    }
    if !outcome.ok {
        ui.warn(format!(
            "{} {} not tuned ({})",
            crate::text::counted(outcome.problems.len(), "knob"),
            if outcome.problems.len() == 1 { "is" } else { "are" },
            if ui.json() { "`problems` in the JSON" } else { "the `mismatch`/`fail` lines above" }
        ));
    }
    Ok(Exit::from_pass(outcome.ok))
}
