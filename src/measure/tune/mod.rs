//! Run-time tuning of the RT CPUs: renders `rtbuild-tune.sh` (apply / verify / revert) from a
//! [`CpuLayout`], ships the boot-time recipe that runs it, and runs it on a [`Host`].
//!
//! Pipeline position: a leaf. It knows a CPU layout (`base`), a target (`target`) and the
//! runner, nothing of plans or tests: `render` puts the script and the static recipe into the
//! generated layer; `rtbuild tune` and `rtbuild test --tune` run it live.

mod layer;
mod run;

pub(crate) use layer::{SCRIPT_NAME, add_to_tree};
pub(crate) use run::{Action, TuneRunError, refuse_unless_root, run_script};

use minijinja::context;

use crate::host::cpus::CpuLayout;

/// Optional knobs of the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TuneOptions {
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
    /// The options a catalog machine asks for: its `rt.cpuidle_off` (`"1"` disables idle
    /// states).
    pub(crate) fn for_machine(cpuidle_off: &str) -> TuneOptions {
        TuneOptions { cpuidle_off: cpuidle_off == "1", ..TuneOptions::default() }
    }
}

/// Writes `script` to `dir/rtbuild-tune.sh` (mode 0755) through [`crate::files::write::write_atomic`],
/// so an existing script is replaced whole or not at all.
pub(crate) fn emit(dir: &std::path::Path, script: &str) -> std::io::Result<std::path::PathBuf> {
    let path = dir.join(SCRIPT_NAME);
    crate::files::write::write_atomic(&path, script.as_bytes(), true).map_err(|e| e.into_io().1)?;
    Ok(path)
}

/// Renders `rtbuild-tune.sh`. Every value that reaches the script is a CPU list or mask printed
/// from a [`CpuSet`], a number, or a name checked here, so nothing can break out of its quotes.
pub(crate) fn render_script(machine: &str, layout: &CpuLayout, options: &TuneOptions) -> String {
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
    match crate::text::templates::render("rtbuild-tune.sh", &ctx) {
        Ok(text) => text,
        // The template is part of rtbuild and every variable is set above.
        Err(err) => panic!("bug in rtbuild: the tune template does not render: {err}"),
    }
}

#[cfg(test)]
mod tests;
