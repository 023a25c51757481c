//! `--trace-above-us N`: cyclictest runs with `-b N --tracemark` while the kernel records
//! scheduler, interrupt, timer, IPI and workqueue events on the measured CPUs. At the first
//! sample above N cyclictest writes its mark, stops the trace and ends the scenario; rtbuild
//! keeps the trace window that ends at the mark as `trace-<scenario>.txt` and explains the
//! spike from it ([`crate::measure::ftrace::spike`]). Every tracing setting changed is saved on the
//! target first and put back at the end, also on Ctrl-C (the helper's `abort` and `cleanup`
//! restore too).

use crate::formats::run_json::Tracing;
use crate::host::Host;
use crate::plan::CpuSet;

/// Who explains the spike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Analyzer {
    /// rtbuild records ftrace events during cyclictest and explains the breach itself.
    Ftrace,
    /// rtla timerlat's auto-analysis (needs the timerlat tracer and rtla on the target).
    Rtla,
}

impl Analyzer {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Analyzer::Ftrace => "ftrace",
            Analyzer::Rtla => "rtla",
        }
    }
}

/// `--trace-above-us` and `--analyzer`, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceRequest {
    pub above_us: u64,
    pub analyzer: Analyzer,
}

/// The events recorded, each only when the kernel has it: the scheduler's view, hard and soft
/// interrupts, the architecture's interrupt vectors (x86), timers, IPIs and work items.
const EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_wakeup",
    "sched:sched_waking",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "irq:softirq_raise",
    "irq:tasklet_entry",
    "irq:tasklet_exit",
    "irq_vectors:*",
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_expire_exit",
    "timer:timer_expire_entry",
    "timer:timer_expire_exit",
    "ipi:*",
    "workqueue:workqueue_execute_start",
    "workqueue:workqueue_execute_end",
];

/// Per-CPU ring buffer, KiB: at 1 kHz a traced CPU logs about 10 events (0.5 KiB) per
/// millisecond, so this holds seconds before the breach, far more than the window kept.
const BUFFER_KB: u32 = 2048;

/// How much of the trace before the breach is kept, ns.
pub(super) const WINDOW_NS: u64 = 50_000_000;

/// Tracing cannot be used on the target.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TraceError {
    #[error("--trace-above-us: {host}: {why}")]
    Unavailable { host: String, why: String },
    #[error(
        "--trace-above-us: could not set up tracing on {host}: {detail}; check that you can reach it as root"
    )]
    Setup { host: String, detail: String },
}

/// Saves the target's tracing settings in `state` and starts recording the events on `cpus`.
pub(super) fn setup(
    runner: &dyn crate::host::runner::Runner,
    host: &Host,
    state: &str,
    cpus: &CpuSet,
    request: TraceRequest,
) -> Result<Tracing, TraceError> {
    let mask = cpus.to_mask();
    let kb = BUFFER_KB.to_string();
    let mut args = vec!["trace-setup", state, &mask, &kb, request.analyzer.name()];
    args.extend(EVENTS);
    let out = host
        .run_script(runner, super::HELPER, &args)
        .map_err(|e| TraceError::Setup { host: host.to_string(), detail: e.to_string() })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if let Some(why) = text.lines().find_map(|l| l.strip_prefix("unavailable ")) {
        return Err(TraceError::Unavailable {
            host: host.to_string(),
            why: crate::text::shown(why),
        });
    }
    let tracefs = text.lines().find_map(|l| l.strip_prefix("tracefs ")).map(str::to_string);
    let (true, Some(tracefs)) = (out.status.success(), tracefs) else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(TraceError::Setup {
            host: host.to_string(),
            detail: crate::text::shown_tail(&stderr, 3),
        });
    };
    let events: Vec<String> =
        text.lines().filter_map(|l| l.strip_prefix("event ")).map(str::to_string).collect();
    if request.analyzer == Analyzer::Ftrace && !events.iter().any(|e| e == "sched:sched_switch") {
        return Err(TraceError::Unavailable {
            host: host.to_string(),
            why: "the kernel has no sched:sched_switch event, so a trace cannot show what ran; build it with CONFIG_FTRACE and CONFIG_EVENT_TRACING".into(),
        });
    }
    Ok(Tracing {
        analyzer: request.analyzer.name().into(),
        above_us: request.above_us,
        tracefs,
        mounted: text.lines().any(|l| l == "mounted"),
        events,
        restored: false,
        restore_problems: Vec::new(),
    })
}

/// `rtla timerlat top` with its auto-analysis at `above_us` (`-a`: stop at the first thread
/// latency above it, save the trace), on `cpus`, for `seconds`, printing only its summary.
pub(super) fn rtla_argv(above_us: u64, cpus: &CpuSet, seconds: u64) -> Vec<String> {
    ["rtla", "timerlat", "top", "-a", &above_us.to_string(), "-c", &cpus.to_string()]
        .iter()
        .map(|s| s.to_string())
        .chain(["-d".to_string(), format!("{seconds}s"), "-q".to_string()])
        .collect()
}

/// cyclictest's `# Break thread: TID` and `# Break value: US` (its stdout at the end).
pub(super) fn breach(stdout: &str) -> Option<(u32, f64)> {
    let value = |key: &str| {
        stdout.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse::<f64>().ok())
    };
    let tid = value("# Break thread:")?;
    let latency = value("# Break value:")?;
    Some((tid as u32, latency))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_break_lines_of_a_real_cyclictest_2_4_stdout() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/cyclictest-2.4-hist-h5-breaktrace.txt");
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(breach(&text), Some((12345, 250.0)));
        assert_eq!(breach("# Thread Ids: 12345\n"), None);
    }
}
