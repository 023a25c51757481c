//! Turns what a source showed ([`Evidence`]) and what the plan asked for ([`Expectations`])
//! into checks. Without a plan only what needs no plan is checked: PREEMPT_RT, the command
//! line's internal consistency, and `rt-tests` in the image.

use crate::plan::{CpuSet, Expectations, RTLA_TRACERS};
use crate::verify::kconfig::image::version_is_rt;
use crate::verify::kconfig::tree::KconfigTree;
use crate::verify::kconfig::{KernelConfig, State};

use super::cmdline;
use super::deps;
use super::evidence::{Evidence, Found, TuneInstall};
use super::report::Check;

const PREEMPT_RT: &str = "CONFIG_PREEMPT_RT";

/// Every check `evidence` allows.
pub(super) fn run(evidence: &Evidence, expected: Option<&Expectations>) -> Vec<Check> {
    let mut checks = Vec::new();
    if let Some(config) = &evidence.config {
        let kconfig = evidence.kconfig.as_deref();
        checks.push(option_check(config, PREEMPT_RT, "y", kconfig));
        if let Some(expected) = expected {
            for want in expected.kernel_config.iter().filter(|w| w.symbol != PREEMPT_RT) {
                checks.push(option_check(config, &want.symbol, &want.value, kconfig));
            }
            // A plan for rtla needs its tracers, even when its option list lost them.
            if expected.analyzer.as_deref() == Some("rtla") {
                for symbol in RTLA_TRACERS {
                    if !expected.kernel_config.iter().any(|w| w.symbol == symbol) {
                        checks.push(option_check(config, symbol, "y", kconfig));
                    }
                }
            }
        }
    }
    if let Some(check) = expected.and_then(|e| arch_check(evidence, e)) {
        checks.push(check);
    }
    if let Some(version) = &evidence.version {
        let rt = version_is_rt(&version.value);
        checks.push(Check::new("kernel version", rt, "PREEMPT_RT", &version.value, &version.from));
    }
    if evidence.config.is_none()
        && let Some(expected) = expected
        && !expected.kernel_config.is_empty()
    {
        let from = evidence.version.as_ref().map_or("", |v| v.from.as_str());
        checks.push(Check::skip(
            "requested options",
            crate::text::counted(expected.kernel_config.len(), "option"),
            "no kernel config in this source (IKCONFIG off?)",
            from,
        ));
    }
    let all = all_cpus(evidence, expected);
    if let Some(line) = &evidence.cmdline {
        if let Some(expected) = expected {
            checks.extend(cmdline::expected_cpu_checks(line, &expected.cmdline));
        }
        checks.push(cmdline::consistency_check(line, all.as_ref()));
    }
    let want_isolated = expected.map(|e| e.rt_cpus.clone()).or_else(|| {
        let line = evidence.cmdline.as_ref()?;
        cmdline::cpus(&line.value, "isolcpus")?.ok()
    });
    if let Some(isolated) = &evidence.isolated {
        checks.push(sysfs_check("isolated CPUs", isolated, want_isolated.as_ref()));
    }
    if let Some(nohz) = &evidence.nohz_full {
        let want = match expected {
            Some(e) if !e.nohz_full => Some(CpuSet::default()),
            _ => want_isolated.clone(),
        };
        checks.push(sysfs_check("nohz_full CPUs", nohz, want.as_ref()));
    }
    if let Some(packages) = &evidence.packages {
        let wanted: Vec<String> = match expected {
            Some(e) if !e.packages.is_empty() => e.packages.clone(),
            _ => vec!["rt-tests".to_string()],
        };
        for name in wanted {
            if name == crate::plan::layer_names::TUNE_RECIPE_NAME
                && let Some(tune) = &evidence.tune
            {
                checks.push(tune_check(tune, expected.map(|e| &e.rt_cpus)));
                continue;
            }
            let ok = packages.value.contains(&name);
            let found = if ok { "installed" } else { "missing" };
            checks.push(Check::new(
                format!("package {name}"),
                ok,
                "installed",
                found,
                &packages.from,
            ));
        }
    }
    checks
}

/// The kernel's architecture against the one the plan's machine needs: from the config's
/// architecture symbol, else from `uname -m` on a live target. `None` when the plan names no
/// architecture (a bare CPU plan) or the source shows none.
fn arch_check(evidence: &Evidence, expected: &Expectations) -> Option<Check> {
    let want = expected.arch.as_deref()?;
    let wanted = format!("{want} ({})", expected.machine);
    let (found, arch, from) = match (&evidence.config, &evidence.arch) {
        (Some(config), _) if crate::verify::kconfig::tree::arch_of(&config.value).is_some() => {
            let arch = crate::verify::kconfig::tree::arch_of(&config.value)?;
            let symbol = ARCH_SYMBOLS
                .iter()
                .find(|(s, a)| *a == arch && config.value.state(s).is_enabled())
                .map_or("?", |(s, _)| *s);
            (format!("{arch} ({symbol}=y)"), arch.to_string(), config.from.clone())
        }
        (_, Some(machine)) => {
            let arch = super::remote::srcarch(&machine.value).unwrap_or("unknown");
            (format!("{arch} ({})", machine.value), arch.to_string(), machine.from.clone())
        }
        _ => return None,
    };
    let ok = arch == want;
    let check = Check::new("architecture", ok, wanted, found, from);
    Some(check.because(Some(format!(
        "this kernel is built for {arch}, and {} needs an {want} kernel: verify the kernel built for this machine (its build folder or tmp*/deploy/images/{}/)",
        expected.machine, expected.machine
    ))))
}

/// The symbols [`arch_check`] names, the most specific first (`CONFIG_X86_64` before `CONFIG_X86`).
const ARCH_SYMBOLS: &[(&str, &str)] = &[
    ("CONFIG_ARM64", "arm64"),
    ("CONFIG_X86_64", "x86"),
    ("CONFIG_X86_32", "x86"),
    ("CONFIG_X86", "x86"),
    ("CONFIG_RISCV", "riscv"),
    ("CONFIG_LOONGARCH", "loongarch"),
    ("CONFIG_PPC64", "powerpc"),
    ("CONFIG_PPC", "powerpc"),
    ("CONFIG_S390", "s390"),
    ("CONFIG_MIPS", "mips"),
    ("CONFIG_ARM", "arm"),
];

/// `rtbuild-tune` as the generated layer installs it: the script, its unit, the unit enabled,
/// and the script made for the plan's RT CPUs (`want_rt`).
fn tune_check(tune: &Found<TuneInstall>, want_rt: Option<&CpuSet>) -> Check {
    let t = &tune.value;
    let mut missing = Vec::new();
    if t.script.is_none() {
        missing.push("/usr/sbin/rtbuild-tune.sh (executable)");
    }
    if t.unit.is_none() {
        missing.push("rtbuild-tune.service");
    }
    if t.unit.is_some() && !t.enabled {
        missing.push("rtbuild-tune.service enabled (multi-user.target.wants)");
    }
    let wrong_rt = match (want_rt, &t.rt_cpus) {
        (Some(want), Some(got)) if want != got => Some(got.clone()),
        _ => None,
    };
    let found = if !missing.is_empty() {
        format!("missing {}", missing.join(", "))
    } else if let Some(got) = &wrong_rt {
        format!("installed, tuning RT CPUs {got}")
    } else {
        match &t.rt_cpus {
            Some(rt) => format!("installed, enabled, RT CPUs {rt}"),
            None => "installed, enabled".to_string(),
        }
    };
    let ok = missing.is_empty() && wrong_rt.is_none();
    let expected = match want_rt {
        Some(rt) => format!("installed, enabled, RT CPUs {rt}"),
        None => "installed, enabled".to_string(),
    };
    let reason = if wrong_rt.is_some() {
        "the installed rtbuild-tune.sh was made for another CPU plan; rebuild the image from this plan (or `rtbuild tune --emit DIR` and install the script)"
    } else {
        "install the image built from this plan (its layer installs the rtbuild-tune recipe), or `rtbuild tune --emit DIR` and install the script and layers/meta-rtbuild-tune's unit, then `systemctl enable rtbuild-tune.service`"
    };
    Check::new(
        format!("package {}", crate::plan::layer_names::TUNE_RECIPE_NAME),
        ok,
        expected,
        found,
        &tune.from,
    )
    .because(Some(reason.to_string()))
}

/// `symbol` must have `want` (`y`, `m`, `"text"`, `42`; `n` also accepts an absent symbol).
/// A failure says why, from the kernel's Kconfig files when `kconfig` has them.
pub(super) fn option_check(
    config: &Found<KernelConfig>,
    symbol: &str,
    want: &str,
    kconfig: Option<&KconfigTree>,
) -> Check {
    let state = config.value.state(symbol);
    let ok = match &state {
        State::Set(value) => value.to_string() == want,
        State::NotSet | State::Absent => want == "n",
    };
    let check = Check::new(symbol, ok, format!("{symbol}={want}"), state.describe(), &config.from);
    if ok {
        return check;
    }
    check.because(deps::why(symbol, want, &config.value, kconfig))
}

/// A sysfs CPU list against the CPUs the plan (or the command line) isolates.
fn sysfs_check(name: &str, found: &Found<CpuSet>, want: Option<&CpuSet>) -> Check {
    let shown = |set: &CpuSet| if set.is_empty() { "none".to_string() } else { set.to_string() };
    match want {
        Some(want) => {
            Check::new(name, &found.value == want, shown(want), shown(&found.value), &found.from)
        }
        None => Check::skip(name, "no plan", shown(&found.value), &found.from),
    }
}

/// Every CPU of the machine: from the plan (RT ∪ housekeeping) or the target.
/// A bare CPU plan without housekeeping CPUs does not know the board's CPUs.
fn all_cpus(evidence: &Evidence, expected: Option<&Expectations>) -> Option<CpuSet> {
    expected
        .filter(|e| !e.housekeeping.is_empty())
        .map(|e| e.rt_cpus.union(&e.housekeeping))
        .or_else(|| evidence.possible_cpus.as_ref().map(|p| p.value.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ConfigExpectation;
    use crate::verify::CheckStatus;

    fn expectations() -> Expectations {
        Expectations {
            machine: "m".into(),
            image: "i".into(),
            distro: "d".into(),
            kernel_recipe: "linux-qcom-rt".into(),
            rt_cpus: CpuSet::parse("6-7").unwrap(),
            housekeeping: CpuSet::parse("0-5").unwrap(),
            nohz_full: true,
            kernel_config: [("CONFIG_PREEMPT_RT", "y"), ("CONFIG_DEBUG_INFO", "n")]
                .map(|(s, v)| ConfigExpectation { symbol: s.into(), value: v.into() })
                .to_vec(),
            cmdline: vec!["isolcpus=6-7".into()],
            packages: vec!["rt-tests".into()],
            arch: Some("arm64".into()),
            ..Expectations::default()
        }
    }

    fn status(checks: &[Check], name: &str) -> CheckStatus {
        checks.iter().find(|c| c.check == name).map(|c| c.status).unwrap()
    }

    #[test]
    fn a_plan_for_rtla_requires_both_tracers_even_when_its_option_list_lacks_them() {
        let mut evidence = Evidence::new("kernel config");
        let config =
            KernelConfig::parse(b"CONFIG_PREEMPT_RT=y\nCONFIG_OSNOISE_TRACER=y\n").unwrap();
        evidence.config = Some(Found::new(config, ".config"));
        let mut plan = expectations();
        let checks = run(&evidence, Some(&plan));
        assert!(checks.iter().all(|c| !c.check.ends_with("_TRACER")));
        plan.analyzer = Some("rtla".into());
        let checks = run(&evidence, Some(&plan));
        assert_eq!(status(&checks, "CONFIG_TIMERLAT_TRACER"), CheckStatus::Fail);
        assert_eq!(status(&checks, "CONFIG_OSNOISE_TRACER"), CheckStatus::Pass);
    }

    #[test]
    fn version_only_source_skips_the_options() {
        let mut evidence = Evidence::new("kernel image");
        evidence.version = Some(Found::new("#1 SMP PREEMPT_RT x".to_string(), "Image"));
        let checks = run(&evidence, Some(&expectations()));
        assert_eq!(status(&checks, "kernel version"), CheckStatus::Pass);
        assert_eq!(status(&checks, "requested options"), CheckStatus::Skip);
    }

    #[test]
    fn absent_counts_as_n_and_sysfs_is_compared_with_the_plan() {
        let mut evidence = Evidence::new("live target");
        let config = KernelConfig::parse(b"CONFIG_PREEMPT_RT=y\n").unwrap();
        evidence.config = Some(Found::new(config, "/proc/config.gz"));
        evidence.isolated = Some(Found::new(CpuSet::parse("7").unwrap(), "isolated"));
        evidence.nohz_full = Some(Found::new(CpuSet::parse("6-7").unwrap(), "nohz_full"));
        let checks = run(&evidence, Some(&expectations()));
        assert_eq!(status(&checks, "CONFIG_DEBUG_INFO"), CheckStatus::Pass);
        assert_eq!(status(&checks, "isolated CPUs"), CheckStatus::Fail);
        assert_eq!(status(&checks, "nohz_full CPUs"), CheckStatus::Pass);
    }
}
