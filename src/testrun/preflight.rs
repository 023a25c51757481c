//! Before anything runs: a private state folder on the target, and the tools and privileges a
//! run needs there. Problems are input errors (exit 2) that say what is missing.

use super::HELPER;
use crate::host::Host;
use crate::runner::Runner;

/// The target cannot run the test as asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PreflightError {
    #[error("could not prepare {host}: {detail}; check that you can reach it and write /tmp there")]
    Prepare { host: String, detail: String },
    #[error("could not prepare {host}: {cause}; check that you can reach it and write /tmp there")]
    Unreachable { host: String, cause: crate::runner::RunError },
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
        return Err(fail(crate::runner::last_lines(stderr.trim(), 5)));
    }
    let value = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(&format!("{key} "))).map(str::trim).unwrap_or("")
    };
    let state = value("state").to_string();
    let state_ok = state.starts_with("/tmp/rtbuild-test.")
        && state.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b));
    if !state_ok {
        return Err(fail(format!("the helper made an unexpected state folder `{state}`")));
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
