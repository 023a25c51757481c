//! `--trace-above-us N`: cyclictest runs with `-b N --tracemark` while the kernel records
//! scheduler, interrupt, timer, IPI and workqueue events on the measured CPUs. At the first
//! sample above N cyclictest writes its mark, stops the trace and ends the scenario; rtbuild
//! keeps the trace window that ends at the mark as `trace-<scenario>.txt` and explains the
//! spike from it ([`crate::ftrace::spike`]). Every tracing setting changed is saved on the
//! target first and put back at the end, also on Ctrl-C (the helper's `abort` and `cleanup`
//! restore too).

use super::session::Run;
use crate::formats::run_json::{TraceRecord, Tracing};
use crate::plan::CpuSet;
use crate::tune::Host;

/// Who explains the spike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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
/// millisecond, so this holds seconds before the breach.
const BUFFER_KB: u32 = 4096;

/// How much of the trace before the breach is kept, ns.
const WINDOW_NS: u64 = 50_000_000;

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
        .run_script(super::HELPER, &args)
        .map_err(|e| TraceError::Setup { host: host.to_string(), detail: e.to_string() })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if let Some(why) = text.lines().find_map(|l| l.strip_prefix("unavailable ")) {
        return Err(TraceError::Unavailable { host: host.to_string(), why: why.to_string() });
    }
    let tracefs = text.lines().find_map(|l| l.strip_prefix("tracefs ")).map(str::to_string);
    let (true, Some(tracefs)) = (out.status.success(), tracefs) else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(TraceError::Setup {
            host: host.to_string(),
            detail: crate::runner::last_lines(stderr.trim(), 3),
        });
    };
    let events: Vec<String> =
        text.lines().filter_map(|l| l.strip_prefix("event ")).map(str::to_string).collect();
    if !events.iter().any(|e| e == "sched:sched_switch") {
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

/// cyclictest's `# Break thread: TID` and `# Break value: US` (its stdout at the end).
pub(super) fn breach(stdout: &str) -> Option<(u32, f64)> {
    let value = |key: &str| {
        stdout.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().parse::<f64>().ok())
    };
    let tid = value("# Break thread:")?;
    let latency = value("# Break value:")?;
    Some((tid as u32, latency))
}

impl Run<'_> {
    /// Empties the buffer and starts recording, before a scenario's cyclictest.
    pub(super) fn trace_arm(&self) {
        if self.record.tracing.is_some() && self.helper(&["trace-arm", &self.state]).is_none() {
            self.ui.warn("could not restart the trace on the target; the next breach may show an older window");
        }
    }

    /// After cyclictest: when it stopped at a breach, keeps the trace window and explains it.
    /// Returns whether cyclictest stopped at a breach.
    pub(super) fn trace_keep(&mut self, index: usize, name: &str) -> bool {
        if self.record.tracing.is_none() {
            return false;
        }
        let stdout = std::fs::read_to_string(self.req.out.join(format!("raw/{name}.hist.txt")))
            .unwrap_or_default();
        let Some((tid, latency_us)) = breach(&stdout) else { return false };
        let file = format!("trace-{name}.txt");
        let text = self.helper(&["trace-read", &self.state]).unwrap_or_default();
        let kept = crate::ftrace::keep_window(&text, WINDOW_NS, 20_000);
        if let Err(err) =
            crate::write::write_atomic(&self.req.out.join(&file), kept.as_bytes(), false)
        {
            self.ui.warn(format!("could not keep the trace: {err}"));
        }
        let spike = crate::ftrace::spike::analyze(&crate::ftrace::parse(&kept));
        let cpu = spike.as_ref().map(|s| s.cpu).or_else(|| {
            let s = &self.record.scenarios[index];
            s.threads
                .iter()
                .find(|t| t.max_us as f64 == latency_us)
                .and_then(|t| u32::try_from(t.cpu).ok())
        });
        let explanation = spike.map(|s| s.explanation).unwrap_or_else(|| {
            "the trace holds no breach mark from cyclictest (--tracemark), so it cannot be explained".into()
        });
        self.ui.status(
            "Traced",
            format!("{name}: {latency_us} µs above --trace-above-us; kept {file}"),
        );
        self.ui.status("Spike", format!("{name}: {explanation}"));
        self.record.scenarios[index].trace = Some(TraceRecord {
            file,
            cpu,
            latency_us: Some(latency_us),
            tid: Some(tid),
            explanation: Some(explanation),
        });
        true
    }

    /// Puts the target's tracing settings back (the helper reads each back).
    pub(super) fn trace_restore(&mut self) {
        let Some(tracing) = self.record.tracing.as_mut() else { return };
        let Ok(out) = self.req.host.run_script(super::HELPER, ["trace-restore", &self.state])
        else {
            self.ui.warn(format!(
                "could not reach {} to restore its tracing settings; check tracing_on, buffer_size_kb, tracing_cpumask and set_event in {}",
                self.req.host, tracing.tracefs
            ));
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        tracing.restore_problems =
            text.lines().filter_map(|l| l.strip_prefix("problem ")).map(str::to_string).collect();
        tracing.restored = text.lines().any(|l| l == "restored");
        if tracing.restored {
            self.ui.status("Restored", format!("the tracing settings in {}", tracing.tracefs));
        } else {
            self.ui.warn(format!(
                "tracing settings not restored in {}: {}",
                tracing.tracefs,
                tracing.restore_problems.join(", ")
            ));
        }
    }
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
