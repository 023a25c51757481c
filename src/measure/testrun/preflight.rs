//! Before anything runs: a private state folder on the target, and the tools and privileges a
//! run needs there. Problems are input errors (exit 2) that say what is missing.

use super::HELPER;
use crate::host::Host;
use crate::host::runner::Runner;
use crate::plan::CpuSet;

/// The target cannot run the test as asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PreflightError {
    #[error("could not prepare {host}: {detail}; check that you can reach it and write /tmp there")]
    Prepare { host: String, detail: String },
    #[error("could not prepare {host}: {cause}; check that you can reach it and write /tmp there")]
    Unreachable { host: String, cause: crate::host::runner::RunError },
    #[error(
        "{tools} not found on {host}; install rt-tests, stress-ng, util-linux and coreutils there (rtbuild images include them), and the --load-cmd program if one is given"
    )]
    Missing { host: String, tools: String },
    #[error(
        "{host}: user id {uid} is not root and lacks {missing}; cyclictest -p 99 -m needs CAP_SYS_NICE or RLIMIT_RTPRIO 99 and CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK (limits.conf `rtprio 99`, `memlock unlimited`); log in as root"
    )]
    Privileges { host: String, uid: String, missing: String },
    #[error(
        "{host}: user id {uid} is not root; --tune writes /proc/sys, /sys and /proc/irq and needs root"
    )]
    TuneNeedsRoot { host: String, uid: String },
    /// The RT CPUs to measure are not the ones the target's kernel isolates: `{rt-cpus
    /// claim}, but the kernel isolates …; … fix`.
    #[error("{host}: {why}")]
    IsolationMismatch { host: String, why: String },
    /// A scenario whose load runs unpinned needs the RT CPUs isolated (isolcpus=).
    #[error("{host}: {why}")]
    UnpinnedLoadNeedsIsolation { host: String, why: String },
}

/// What a run expects of the target kernel's CPU isolation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IsolationNeed {
    /// The plan (a catalog machine) that expects the RT CPUs isolated; `None` with only
    /// `--rt-cpus`, where a kernel that isolates nothing is accepted (the guides' runs without
    /// isolation) and one that isolates CPUs must isolate the RT CPUs.
    pub machine: Option<String>,
    /// The plan also expects `nohz_full` on the RT CPUs.
    pub nohz_full: bool,
    /// Scenarios whose load runs unpinned (they need `isolcpus=` on the RT CPUs).
    pub unpinned_loads: Vec<String>,
}

/// The kernel's isolation as read before the run (helper `isolation`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KernelIsolation {
    /// `/sys/devices/system/cpu/isolated` (isolcpus= domain isolation).
    pub isolated: CpuSet,
    /// `/sys/devices/system/cpu/nohz_full`.
    pub nohz_full: CpuSet,
    /// The last `isolcpus=` and `nohz_full=` of `/proc/cmdline`, as written.
    pub isolcpus_arg: Option<String>,
    pub nohz_full_arg: Option<String>,
}

impl KernelIsolation {
    /// Reads the helper's `isolated`, `nohz_full` and `cmdline` lines. A file that is not a CPU
    /// list (`(null)` on kernels without nohz_full) is no CPU.
    pub(crate) fn parse(text: &str) -> KernelIsolation {
        let value = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ').or(Some("")))
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let set = |key: &str| CpuSet::parse(&value(key)).unwrap_or_default();
        let cmdline = value("cmdline");
        let arg = |key: &str| {
            cmdline
                .split_whitespace()
                .filter_map(|a| a.strip_prefix(key)?.strip_prefix('='))
                .next_back()
                .map(str::to_string)
        };
        KernelIsolation {
            isolated: set("isolated"),
            nohz_full: set("nohz_full"),
            isolcpus_arg: arg("isolcpus"),
            nohz_full_arg: arg("nohz_full"),
        }
    }

    /// Every CPU the kernel isolates in either way.
    pub(crate) fn any(&self) -> CpuSet {
        self.isolated.union(&self.nohz_full)
    }

    /// `3 (isolated 3, nohz_full 3; /proc/cmdline isolcpus=3 nohz_full=3)` or `none (…)`.
    pub(crate) fn describe(&self) -> String {
        let list = |c: &CpuSet| if c.is_empty() { "none".to_string() } else { c.to_string() };
        let args: Vec<String> =
            [("isolcpus", &self.isolcpus_arg), ("nohz_full", &self.nohz_full_arg)]
                .iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}")))
                .collect();
        format!(
            "{} (isolated: {}, nohz_full: {}; /proc/cmdline: {})",
            list(&self.any()),
            list(&self.isolated),
            list(&self.nohz_full),
            if args.is_empty() { "no isolcpus= or nohz_full=".to_string() } else { args.join(" ") }
        )
    }
}

/// Whether the kernel's isolation is what the run needs: with a plan, the kernel isolates
/// exactly the RT CPUs (and nohz_full covers them when the plan asks for it); with only
/// `--rt-cpus`, a kernel that isolates CPUs isolates the RT CPUs; a scenario with an unpinned
/// load needs the RT CPUs in `isolated`. The first problem found is the refusal.
pub(crate) fn check_isolation(
    host: &str,
    rt: &CpuSet,
    need: &IsolationNeed,
    kernel: &KernelIsolation,
) -> Result<(), PreflightError> {
    let layout_flags = match &need.machine {
        Some(m) => format!("--machine {m}"),
        None => format!("--rt-cpus {rt}"),
    };
    let kernel_text = kernel.describe();
    let mismatch = |expected_by: String, what: &str| PreflightError::IsolationMismatch {
        host: host.to_string(),
        why: format!(
            "{expected_by} RT CPUs {rt} {what}, but the kernel isolates {kernel_text}; measuring there would not measure the isolated CPUs. Boot {host} with the plan's isolation (`rtbuild tune {layout_flags} --bootargs` prints it), or pass --rt-cpus with the CPUs the kernel isolates"
        ),
    };
    match &need.machine {
        Some(machine) => {
            let by = format!("the plan of {machine} expects");
            if kernel.any() != *rt {
                return Err(mismatch(by, "isolated"));
            }
            if need.nohz_full && !rt.is_subset(&kernel.nohz_full) {
                return Err(mismatch(by, "isolated and nohz_full"));
            }
        }
        None => {
            let any = kernel.any();
            if !any.is_empty() && !rt.is_subset(&any) {
                return Err(mismatch("--rt-cpus names".to_string(), "isolated"));
            }
        }
    }
    if let Some(scenario) = need.unpinned_loads.first()
        && !rt.is_subset(&kernel.isolated)
    {
        return Err(PreflightError::UnpinnedLoadNeedsIsolation {
            host: host.to_string(),
            why: format!(
                "scenario {scenario} runs its load unpinned, so only the kernel's isolation keeps it off the RT CPUs, but RT CPUs {rt} are not isolated (the kernel isolates {kernel_text}); boot with isolcpus={rt} (`rtbuild tune {layout_flags} --bootargs` prints the arguments), or choose a scenario whose load is pinned (full, stress, custom without --load-unpinned)"
            ),
        });
    }
    Ok(())
}

/// What `prepare` found.
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    /// The target's private folder, `/tmp/rtbuild-test.XXXXXX`.
    pub state: String,
}

/// Creates the state folder and checks tools and privileges. `load_tools` are the programs the
/// run's loads need beyond cyclictest (stress-ng, taskset, setsid, timeout, the `--load-cmd`
/// program); empty when only `idle` runs.
pub(super) fn prepare(
    runner: &dyn Runner,
    host: &Host,
    load_tools: &[&str],
    tune: bool,
) -> Result<Prepared, PreflightError> {
    let fail = |detail: String| PreflightError::Prepare { host: host.to_string(), detail };
    let args: Vec<&str> = std::iter::once("prepare").chain(load_tools.iter().copied()).collect();
    let out = host
        .run_script(runner, HELPER, &args)
        .map_err(|cause| PreflightError::Unreachable { host: host.to_string(), cause })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(fail(crate::text::shown_tail(&stderr, 5)));
    }
    let value = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(&format!("{key} "))).map(str::trim).unwrap_or("")
    };
    let state = value("state").to_string();
    let state_ok = state.starts_with("/tmp/rtbuild-test.")
        && state.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b));
    if !state_ok {
        return Err(fail(format!(
            "the helper made an unexpected state folder `{}`",
            crate::text::shown(&state)
        )));
    }
    let missing: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("missing "))
        // taskset always: the helper pins itself off the measured CPUs with it.
        .filter(|tool| ["cyclictest", "taskset"].contains(tool) || load_tools.contains(tool))
        .collect();
    let cleanup = || {
        let _ = host.run_script(runner, HELPER, ["cleanup", &state]);
    };
    if !missing.is_empty() {
        cleanup();
        return Err(PreflightError::Missing { host: host.to_string(), tools: missing.join(", ") });
    }
    let uid = value("uid").to_string();
    if uid != "0" {
        if tune {
            cleanup();
            return Err(PreflightError::TuneNeedsRoot { host: host.to_string(), uid });
        }
        let rtprio_ok =
            value("rtprio") == "unlimited" || value("rtprio").parse::<u32>().is_ok_and(|p| p >= 99);
        let memlock_ok = value("memlock") == "unlimited";
        let mut lacks = Vec::new();
        if !rtprio_ok {
            lacks.push(format!("RT priority 99 (RLIMIT_RTPRIO is {})", value("rtprio")));
        }
        if !memlock_ok {
            lacks.push(format!("memory locking (RLIMIT_MEMLOCK is {} KiB)", value("memlock")));
        }
        if !lacks.is_empty() {
            cleanup();
            return Err(PreflightError::Privileges {
                host: host.to_string(),
                uid,
                missing: lacks.join(" and "),
            });
        }
    }
    Ok(Prepared { state })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(text: &str) -> KernelIsolation {
        KernelIsolation::parse(text)
    }

    fn need(machine: Option<&str>, nohz_full: bool, unpinned: &[&str]) -> IsolationNeed {
        IsolationNeed {
            machine: machine.map(str::to_string),
            nohz_full,
            unpinned_loads: unpinned.iter().map(ToString::to_string).collect(),
        }
    }

    /// Issue 39: the QCS6490 plan (RT CPU 7) on a kernel booted with the IQ-8275 line
    /// (`isolcpus=3`) is refused before the run, naming both sides and the fix.
    #[test]
    fn a_plan_on_a_kernel_isolating_other_cpus_is_refused() {
        let iq8275 =
            kernel("isolated 3\nnohz_full (null)\ncmdline root=/dev/sda1 isolcpus=3 rcu_nocbs=3\n");
        assert_eq!(iq8275.isolated.to_string(), "3");
        assert!(iq8275.nohz_full.is_empty(), "(null) is no CPU");
        let rt = CpuSet::parse("7").unwrap();
        let err = check_isolation("rb3", &rt, &need(Some("qcs6490-rb3gen2"), false, &[]), &iq8275)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "rb3: the plan of qcs6490-rb3gen2 expects RT CPUs 7 isolated, but the kernel isolates 3 (isolated: 3, nohz_full: none; /proc/cmdline: isolcpus=3); measuring there would not measure the isolated CPUs. Boot rb3 with the plan's isolation (`rtbuild tune --machine qcs6490-rb3gen2 --bootargs` prints it), or pass --rt-cpus with the CPUs the kernel isolates"
        );
        // The kernel the plan describes; with nohz_full asked, nohz_full must cover it too.
        let right =
            kernel("isolated 7\nnohz_full 7\ncmdline isolcpus=managed_irq,domain,7 nohz_full=7\n");
        assert_eq!(right.isolcpus_arg.as_deref(), Some("managed_irq,domain,7"));
        assert!(check_isolation("rb3", &rt, &need(Some("m"), true, &[]), &right).is_ok());
        let no_nohz = kernel("isolated 7\nnohz_full \ncmdline isolcpus=7\n");
        assert!(check_isolation("rb3", &rt, &need(Some("m"), false, &[]), &no_nohz).is_ok());
        assert!(matches!(
            check_isolation("rb3", &rt, &need(Some("m"), true, &[]), &no_nohz),
            Err(PreflightError::IsolationMismatch { .. })
        ));
        // A kernel isolating more than the plan's RT CPUs: the plan's housekeeping CPU 3 is
        // isolated too, so its load would run on an isolated CPU.
        let more = kernel("isolated 3,7\nnohz_full \ncmdline isolcpus=3,7\n");
        assert!(check_isolation("rb3", &rt, &need(Some("m"), false, &[]), &more).is_err());
    }

    /// Without a plan, a kernel that isolates nothing is accepted (runs without isolation);
    /// one that isolates CPUs must isolate the RT CPUs; an unpinned load needs `isolated`.
    #[test]
    fn rt_cpus_without_a_plan_and_unpinned_loads() {
        let rt = CpuSet::parse("1").unwrap();
        let none = kernel("isolated \nnohz_full \ncmdline quiet\n");
        assert!(check_isolation("t", &rt, &need(None, false, &[]), &none).is_ok());
        let other = kernel("isolated 3\nnohz_full 3\ncmdline isolcpus=3 nohz_full=3\n");
        assert!(matches!(
            check_isolation("t", &rt, &need(None, false, &[]), &other),
            Err(PreflightError::IsolationMismatch { .. })
        ));
        assert_eq!(
            check_isolation("t", &rt, &need(None, false, &["stress-isolated"]), &none)
                .unwrap_err()
                .to_string(),
            "t: scenario stress-isolated runs its load unpinned, so only the kernel's isolation keeps it off the RT CPUs, but RT CPUs 1 are not isolated (the kernel isolates none (isolated: none, nohz_full: none; /proc/cmdline: no isolcpus= or nohz_full=)); boot with isolcpus=1 (`rtbuild tune --rt-cpus 1 --bootargs` prints the arguments), or choose a scenario whose load is pinned (full, stress, custom without --load-unpinned)"
        );
        // nohz_full alone does not keep an unpinned load off the CPU.
        let nohz_only = kernel("isolated \nnohz_full 1\ncmdline nohz_full=1\n");
        assert!(check_isolation("t", &rt, &need(None, false, &[]), &nohz_only).is_ok());
        assert!(matches!(
            check_isolation("t", &rt, &need(None, false, &["custom"]), &nohz_only),
            Err(PreflightError::UnpinnedLoadNeedsIsolation { .. })
        ));
        let isolated = kernel("isolated 1\nnohz_full 1\ncmdline isolcpus=1 nohz_full=1\n");
        assert!(check_isolation("t", &rt, &need(None, false, &["custom"]), &isolated).is_ok());
    }
}
