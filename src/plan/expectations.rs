//! What a finished build must show ([`Expectations`], written as `rtbuild-plan.json`), derived
//! here and only here: from a [`Plan`], or from a bare CPU plan (a board rtbuild does not build).

use super::{
    ConfigExpectation, CpuSet, Expectations, IMAGE_PACKAGES, Include, KERNEL_RECIPE, MACHINE_ARCH,
    Plan,
};

/// The machine name a bare CPU plan carries.
pub(crate) const CUSTOM_BOARD: &str = "custom board";

impl Plan {
    /// The RT boot arguments the image must carry, in meta-qcom's order, then rtbuild's.
    pub(crate) fn rt_cmdline(&self) -> Vec<String> {
        let mut args = isolation(&self.layout.rt, Some(&self.layout.housekeeping));
        if !self.machine.rt.rcu_expedited.is_empty() {
            args.push(format!("rcupdate.rcu_expedited={}", self.machine.rt.rcu_expedited));
        }
        if !self.machine.rt.cpuidle_off.is_empty() {
            args.push(format!("cpuidle.off={}", self.machine.rt.cpuidle_off));
        }
        args.push("efi=runtime".to_string());
        if self.settings.nohz_full {
            args.push(format!("nohz_full={}", self.layout.rt));
        }
        args.extend(self.settings.cmdline.iter().map(ToString::to_string));
        args
    }

    /// What a finished build must show, in a form later stages can read back from disk.
    pub(crate) fn expectations(&self) -> Expectations {
        Expectations {
            machine: self.machine.name.clone(),
            image: self.settings.image.to_string(),
            distro: self.settings.distro.to_string(),
            kernel_recipe: KERNEL_RECIPE.to_string(),
            rt_cpus: self.layout.rt.clone(),
            housekeeping: self.layout.housekeeping.clone(),
            nohz_full: self.settings.nohz_full,
            kernel_config: self
                .requested_config()
                .into_iter()
                .map(|s| ConfigExpectation {
                    symbol: s.symbol.to_string(),
                    value: s.value.to_string(),
                })
                .collect(),
            cmdline: self.rt_cmdline(),
            packages: IMAGE_PACKAGES.iter().map(ToString::to_string).collect(),
            machine_defaults: self.machine_defaults.clone(),
            analyzer: self.settings.rtla.then(|| "rtla".to_string()),
            cve_check: self.settings.cve_check,
            includes: self.settings.includes.iter().map(Include::recorded).collect(),
            arch: Some(MACHINE_ARCH.to_string()),
            composition: Some(self.composition.clone()),
        }
    }
}

/// What a kernel must show for a bare CPU plan, on a board with no catalog entry and no
/// rtbuild build (`verify --rt-cpus 3 [--housekeeping 0-2]`): PREEMPT_RT and the options the
/// isolation boot arguments need, and those arguments. Without housekeeping CPUs `irqaffinity`
/// is not expected and the board's CPUs come from the source (a live target's possible CPUs).
pub(crate) fn cpu_plan_expectations(
    rt_cpus: CpuSet,
    housekeeping: Option<CpuSet>,
    nohz_full: bool,
) -> Expectations {
    let mut cmdline = isolation(&rt_cpus, housekeeping.as_ref());
    let mut options = vec!["CONFIG_PREEMPT_RT", "CONFIG_RCU_NOCB_CPU"];
    if nohz_full {
        cmdline.push(format!("nohz_full={rt_cpus}"));
        options.push("CONFIG_NO_HZ_FULL");
    }
    Expectations {
        machine: CUSTOM_BOARD.to_string(),
        rt_cpus,
        housekeeping: housekeeping.unwrap_or_default(),
        nohz_full,
        kernel_config: options
            .into_iter()
            .map(|symbol| ConfigExpectation { symbol: symbol.to_string(), value: "y".to_string() })
            .collect(),
        cmdline,
        packages: vec!["rt-tests".to_string()],
        // rtbuild builds nothing for it: no image, distro, kernel recipe, includes, architecture
        // nor composition.
        ..Expectations::default()
    }
}

/// The isolation boot arguments, in meta-qcom's order: `isolcpus` and `rcu_nocbs` on the RT
/// CPUs, and `irqaffinity` on the housekeeping CPUs when they are known.
fn isolation(rt: &CpuSet, housekeeping: Option<&CpuSet>) -> Vec<String> {
    let mut args = vec![format!("isolcpus={rt}")];
    if let Some(housekeeping) = housekeeping {
        args.push(format!("irqaffinity={housekeeping}"));
    }
    args.push(format!("rcu_nocbs={rt}"));
    args
}
