//! Run-time tuning of the RT CPUs: renders `rtbuild-tune.sh` (apply / verify / revert) from the
//! CPU layout of a [`Plan`], ships the boot-time recipe that runs it, and runs it on a target.
//!
//! Pipeline position: `plan` → **tune** (pure rendering) → `generate` copies the script and the
//! static recipe into the generated layer; `rtbuild tune` and `rtbuild test --tune` run it live.

mod host;
mod layer;
mod run;

pub use host::{Host, HostError};
pub use layer::{RECIPE_NAME, SCRIPT_NAME, add_to_tree, layer_files};
pub use run::{Action, Outcome, TuneRunError, run_script};

use minijinja::context;

use crate::base::CpuSet;
use crate::plan::Plan;

/// The CPU layout tuning needs, checked: RT and housekeeping CPUs are disjoint, non-empty and
/// within `cpus`, and CPU 0 does housekeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuLayout {
    /// Every CPU of the machine (`0..count`).
    pub cpus: CpuSet,
    pub rt: CpuSet,
    pub housekeeping: CpuSet,
}

/// A CPU layout that cannot be tuned or tested.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("no RT CPU given; pass --rt-cpus LIST (e.g. --rt-cpus 7) or --machine NAME")]
    NoRtCpu,
    #[error(
        "RT CPU {cpus} is not online on {place} (online: {online}); pick RT CPUs from {online}"
    )]
    RtNotOnline { cpus: CpuSet, place: String, online: CpuSet },
    #[error(
        "housekeeping CPU {cpus} is not online on {place} (online: {online}); pick housekeeping CPUs from {online}"
    )]
    HousekeepingNotOnline { cpus: CpuSet, place: String, online: CpuSet },
    #[error("CPU 0 cannot be an RT CPU: the kernel keeps boot-time work there; use CPUs 1 and up")]
    CpuZero,
    #[error("CPUs {both} are both RT and housekeeping CPUs; give each CPU one role")]
    Overlap { both: CpuSet },
    #[error(
        "no housekeeping CPU is left beside RT CPUs {rt}; keep at least one CPU for the system"
    )]
    NoHousekeeping { rt: CpuSet },
}

/// Always the user's input (exit 2).
impl crate::exit::ErrorCode for LayoutError {
    fn exit(&self) -> crate::exit::Exit {
        crate::exit::Exit::Usage
    }
}

impl CpuLayout {
    /// The layout of a validated plan.
    pub fn from_plan(plan: &Plan) -> CpuLayout {
        CpuLayout {
            cpus: plan.machine.all_cpus(),
            rt: plan.rt_cpus.clone(),
            housekeeping: plan.housekeeping.clone(),
        }
    }

    /// Checks `rt` and `housekeeping` (default: every other CPU of `online`) against the CPUs
    /// `place` (a target name, for messages) has online.
    pub fn new(
        online: &CpuSet,
        rt: &CpuSet,
        housekeeping: Option<&CpuSet>,
        place: &str,
    ) -> Result<CpuLayout, LayoutError> {
        if rt.is_empty() {
            return Err(LayoutError::NoRtCpu);
        }
        if rt.contains(0) {
            return Err(LayoutError::CpuZero);
        }
        let off = rt.difference(online);
        if !off.is_empty() {
            return Err(LayoutError::RtNotOnline {
                cpus: off,
                place: place.into(),
                online: online.clone(),
            });
        }
        let housekeeping = match housekeeping {
            Some(hk) => {
                let off = hk.difference(online);
                if !off.is_empty() {
                    return Err(LayoutError::HousekeepingNotOnline {
                        cpus: off,
                        place: place.into(),
                        online: online.clone(),
                    });
                }
                let both = hk.intersection(rt);
                if !both.is_empty() {
                    return Err(LayoutError::Overlap { both });
                }
                hk.clone()
            }
            None => online.difference(rt),
        };
        if housekeeping.is_empty() {
            return Err(LayoutError::NoHousekeeping { rt: rt.clone() });
        }
        let count = online.iter().max().map_or(0, |m| m + 1);
        Ok(CpuLayout { cpus: CpuSet::range(0, count), rt: rt.clone(), housekeeping })
    }
}

/// Optional knobs of the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TuneOptions {
    /// Disable every cpuidle state of the RT CPUs (meta-qcom's `QCOM_CPUIDLE_OFF`).
    pub cpuidle_off: bool,
    /// Console log level written to `/proc/sys/kernel/printk` (0-7), `None` leaves it alone.
    pub printk: Option<u8>,
    /// Set `vm.overcommit_memory=2` (no overcommit; RK3562J guide), saved and reverted like
    /// every knob. Opt-in: a board whose programs rely on overcommit may fail allocations.
    pub overcommit_never: bool,
}

impl Default for TuneOptions {
    fn default() -> TuneOptions {
        TuneOptions { cpuidle_off: false, printk: Some(1), overcommit_never: false }
    }
}

impl TuneOptions {
    /// The options a catalog machine asks for (`cpuidle_off: "1"` disables idle states).
    pub fn for_plan(plan: &Plan) -> TuneOptions {
        TuneOptions { cpuidle_off: plan.machine.rt.cpuidle_off == "1", ..TuneOptions::default() }
    }
}

/// Writes `script` to `dir/rtbuild-tune.sh` (mode 0755) through a temporary file and a rename,
/// so an existing script is replaced whole or not at all.
pub fn emit(dir: &std::path::Path, script: &str) -> std::io::Result<std::path::PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    let path = dir.join(SCRIPT_NAME);
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(script.as_bytes())?;
    tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o755))?;
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}

/// The script for a validated plan. Pure: the same plan gives the same bytes.
pub fn render_for_plan(plan: &Plan) -> String {
    render_script(&plan.machine.name, &CpuLayout::from_plan(plan), &TuneOptions::for_plan(plan))
}

/// Renders `rtbuild-tune.sh`. Every value that reaches the script is a CPU list or mask printed
/// from a [`CpuSet`], a number, or a name checked here, so nothing can break out of its quotes.
pub fn render_script(machine: &str, layout: &CpuLayout, options: &TuneOptions) -> String {
    let name_ok = !machine.is_empty()
        && machine.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    let ctx = context! {
        machine => if name_ok { machine } else { "a custom target" },
        cpus => layout.cpus.len(),
        rt_list => layout.rt.to_string(),
        rt_words => layout.rt.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" "),
        hk_list => layout.housekeeping.to_string(),
        hk_mask => layout.housekeeping.to_mask(),
        cpuidle_off => u8::from(options.cpuidle_off),
        printk => options.printk.map(|p| p.min(7).to_string()).unwrap_or_default(),
        overcommit_never => u8::from(options.overcommit_never),
    };
    match crate::templates::render("rtbuild-tune.sh", &ctx) {
        Ok(text) => text,
        // The template is part of rtbuild and every variable is set above.
        Err(err) => panic!("bug in rtbuild: the tune template does not render: {err}"),
    }
}

#[cfg(test)]
mod tests;
