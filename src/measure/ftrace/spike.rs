//! What ran on the RT CPU while cyclictest waited past its limit: from the breach mark
//! cyclictest writes with `-b N --tracemark` (`hit latency threshold (LAT > N)`, on the
//! measuring thread's CPU, right after it woke), back over the gap between the moment the
//! timer should have woken it (mark − LAT) and the moment it ran.
//!
//! Each interrupt handler, softirq, tasklet, interrupt vector, IPI, timer callback, work item
//! and task that overlaps the gap is a contributor, sized by its overlap. When none covers a
//! sensible share of the gap, the CPU did nothing this kernel saw: the time went outside it
//! (hypervisor, firmware/SMI), as a VM shows.

use super::{Event, Trace};

/// cyclictest's trace mark (rt-tests 2.x `tracemark()` text).
const MARK: &str = "hit latency threshold (";

/// How far before the gap the event list starts, ns.
const LEAD_NS: u64 = 100_000;
/// The most events one spike lists (the trace file keeps them all).
const MAX_EVENTS: usize = 200;

/// Whether `event` is cyclictest's breach mark.
pub(crate) fn is_breach_mark(event: &Event) -> bool {
    matches!(event.name.as_str(), "tracing_mark_write" | "print") && event.detail.contains(MARK)
}

/// One thing that happened on the CPU: an interval (`duration_ns` set) or an instant.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Activity {
    pub ts_ns: u64,
    /// `irq`, `softirq`, `tasklet`, `irq_vector`, `ipi`, `timer`, `workqueue`, `task`, `idle`,
    /// `wakeup`, `mark`.
    pub kind: &'static str,
    pub name: String,
    pub duration_ns: Option<u64>,
}

/// The breach, explained.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spike {
    pub cpu: u32,
    /// The measuring thread's tid.
    pub tid: u32,
    pub latency_us: f64,
    /// The mark's timestamp, ns.
    pub mark_ns: u64,
    /// The events on the CPU from shortly before the gap to the mark, oldest first.
    pub events: Vec<Activity>,
    pub explanation: String,
    /// The trace lines of the CPU in the same span, as printed.
    pub excerpt: Vec<String>,
}

/// Finds the last breach mark in `trace` and explains the gap before it; `None` without one.
pub(crate) fn analyze(trace: &Trace) -> Option<Spike> {
    let mark = trace.events.iter().rev().find(|e| is_breach_mark(e))?;
    let latency_us = mark_latency_us(&mark.detail)?;
    let cpu = mark.cpu;
    let tid = mark.pid;
    let on_cpu: Vec<&Event> =
        trace.events.iter().filter(|e| e.cpu == cpu && e.ts_ns <= mark.ts_ns).collect();
    let latency_ns = (latency_us * 1000.0) as u64;
    let gap_start = mark.ts_ns.saturating_sub(latency_ns);
    // This cycle began when the measuring thread last went to sleep (switched out); a switch
    // in or wakeup before that is an earlier cycle's.
    let switched = |key: &str| {
        on_cpu
            .iter()
            .rev()
            .find(|e| e.name == "sched_switch" && field_u32(e, key) == Some(tid))
            .map(|e| e.ts_ns)
    };
    let (last_out, last_in) = (switched("prev_pid"), switched("next_pid"));
    let this_cycle = |e: &&&Event| last_out.is_none_or(|out| e.ts_ns >= out);
    // Switched in before the timer expired and never out since: the thread did not sleep, so
    // its wakeup was already late when it asked for it (an earlier cycle's overrun).
    let already_running =
        last_in.is_some_and(|t| t < gap_start && last_out.is_none_or(|out| out < t));
    // The gap ends when the measuring thread was switched in (else woken, else the mark).
    let gap_end = on_cpu
        .iter()
        .rev()
        .filter(this_cycle)
        .find(|e| e.name == "sched_switch" && field_u32(e, "next_pid") == Some(tid))
        .or_else(|| on_cpu.iter().rev().filter(this_cycle).find(|e| is_wakeup_of(e, tid)))
        .map_or(mark.ts_ns, |e| e.ts_ns)
        .max(gap_start);
    let activities = activities(&on_cpu, tid, mark.ts_ns);
    let list_from = gap_start.saturating_sub(LEAD_NS);
    let mut events: Vec<Activity> = activities
        .iter()
        .filter(|a| a.ts_ns.saturating_add(a.duration_ns.unwrap_or(0)) >= list_from)
        .cloned()
        .collect();
    // Oldest first; of two that start together, the enclosing (longer) one first.
    events.sort_by(|a, b| a.ts_ns.cmp(&b.ts_ns).then(b.duration_ns.cmp(&a.duration_ns)));
    if events.len() > MAX_EVENTS {
        events.drain(..events.len() - MAX_EVENTS);
    }
    let excerpt =
        on_cpu.iter().filter(|e| e.ts_ns >= list_from).map(|e| e.line.clone()).collect::<Vec<_>>();
    let wake = on_cpu
        .iter()
        .rev()
        .filter(this_cycle)
        .find(|e| e.name == "sched_waking" && field_u32(e, "pid") == Some(tid))
        .or_else(|| on_cpu.iter().rev().filter(this_cycle).find(|e| is_wakeup_of(e, tid)))
        .map(|e| e.ts_ns);
    let explanation = if already_running {
        format!(
            "cyclictest (tid {tid}) held CPU {cpu} from before this cycle's timer expired until it wrote the mark: it had not gone back to sleep since an earlier cycle, so its {} µs latency is an earlier late cycle carried over (its next wakeup was already due when it asked for it), not something that ran in this window; look at the cycles before it, or measure with a longer --interval-us",
            us(latency_us)
        )
    } else {
        explain(&activities, cpu, tid, latency_us, gap_start, gap_end, wake)
    };
    Some(Spike {
        cpu,
        tid,
        latency_us,
        mark_ns: mark.ts_ns,
        events,
        explanation,
        excerpt: excerpt[excerpt.len().saturating_sub(MAX_EVENTS)..].to_vec(),
    })
}

/// `hit latency threshold (216 > 30)` → 216.
fn mark_latency_us(detail: &str) -> Option<f64> {
    let after = &detail[detail.find(MARK)? + MARK.len()..];
    after.split_whitespace().next()?.parse().ok()
}

fn field_u32(event: &Event, key: &str) -> Option<u32> {
    event.field(key)?.parse().ok()
}

fn is_wakeup_of(event: &Event, tid: u32) -> bool {
    matches!(event.name.as_str(), "sched_wakeup" | "sched_waking")
        && field_u32(event, "pid") == Some(tid)
}

/// The intervals and instants on one CPU (events in time order), up to `end_ns`.
fn activities(events: &[&Event], tid: u32, end_ns: u64) -> Vec<Activity> {
    let mut open: Vec<(String, u64, &'static str, String)> = Vec::new();
    let mut out = Vec::new();
    // The task running since the last switch.
    let mut current: Option<(u64, u32, String)> = None;
    let close = |out: &mut Vec<Activity>, start: u64, end: u64, pid: u32, task: &str| {
        let (kind, name) =
            if pid == 0 { ("idle", "idle".to_string()) } else { ("task", format!("{task}-{pid}")) };
        out.push(Activity {
            ts_ns: start,
            kind,
            name,
            duration_ns: Some(end.saturating_sub(start)),
        });
    };
    for e in events {
        if current.is_none() {
            // Before the first switch, the task column says who ran.
            current = Some((e.ts_ns, e.pid, e.task.clone()));
        }
        let name = e.name.as_str();
        if name == "sched_switch" {
            if let Some((start, pid, task)) = current.take() {
                if pid != tid {
                    close(&mut out, start, e.ts_ns, pid, &task);
                }
            }
            let next_pid = field_u32(e, "next_pid").unwrap_or(0);
            let next = e.field("next_comm").unwrap_or("?").to_string();
            current = Some((e.ts_ns, next_pid, next));
            continue;
        }
        if is_wakeup_of(e, tid) && name == "sched_wakeup" {
            out.push(Activity {
                ts_ns: e.ts_ns,
                kind: "wakeup",
                name: format!("cyclictest-{tid}"),
                duration_ns: None,
            });
            continue;
        }
        if super::spike::is_breach_mark(e) {
            out.push(Activity {
                ts_ns: e.ts_ns,
                kind: "mark",
                name: e.detail.trim().to_string(),
                duration_ns: None,
            });
            continue;
        }
        if let Some((key, kind, label)) = begins(e) {
            open.push((key, e.ts_ns, kind, label));
        } else if let Some(key) = ends(e)
            && let Some(at) = open.iter().rposition(|(k, ..)| *k == key)
        {
            let (_, start, kind, label) = open.remove(at);
            out.push(Activity {
                ts_ns: start,
                kind,
                name: label,
                duration_ns: Some(e.ts_ns.saturating_sub(start)),
            });
        }
    }
    for (_, start, kind, label) in open {
        out.push(Activity {
            ts_ns: start,
            kind,
            name: label,
            duration_ns: Some(end_ns.saturating_sub(start)),
        });
    }
    if let Some((start, pid, task)) = current
        && pid != tid
    {
        close(&mut out, start, end_ns, pid, &task);
    }
    out
}

/// An event that opens an interval: its pairing key, kind and label.
fn begins(e: &Event) -> Option<(String, &'static str, String)> {
    let f = |k: &str| e.field(k).unwrap_or("?").to_string();
    Some(match e.name.as_str() {
        "irq_handler_entry" => {
            (format!("irq {}", f("irq")), "irq", format!("IRQ {} {}", f("irq"), f("name")))
        }
        "softirq_entry" => (format!("softirq {}", f("vec")), "softirq", softirq_name(e)),
        "tasklet_entry" => ("tasklet".into(), "tasklet", f("function")),
        "hrtimer_expire_entry" => (format!("hrtimer {}", f("hrtimer")), "timer", f("function")),
        "timer_expire_entry" => (format!("timer {}", f("timer")), "timer", f("function")),
        "workqueue_execute_start" => {
            (format!("work {}", work_struct(e)), "workqueue", f("function"))
        }
        "ipi_entry" => (
            "ipi".into(),
            "ipi",
            format!("IPI {}", e.detail.trim().trim_matches(|c| c == '(' || c == ')')),
        ),
        name => {
            let vector = name.strip_suffix("_entry")?;
            if !e.detail.contains("vector=") {
                return None;
            }
            (format!("vector {vector}"), "irq_vector", vector.to_string())
        }
    })
}

/// The pairing key of an event that closes an interval.
fn ends(e: &Event) -> Option<String> {
    let f = |k: &str| e.field(k).unwrap_or("?").to_string();
    Some(match e.name.as_str() {
        "irq_handler_exit" => format!("irq {}", f("irq")),
        "softirq_exit" => format!("softirq {}", f("vec")),
        "tasklet_exit" => "tasklet".into(),
        "hrtimer_expire_exit" => format!("hrtimer {}", f("hrtimer")),
        "timer_expire_exit" => format!("timer {}", f("timer")),
        "workqueue_execute_end" => format!("work {}", work_struct(e)),
        "ipi_exit" => "ipi".into(),
        name => {
            let vector = name.strip_suffix("_exit")?;
            if !e.detail.contains("vector=") {
                return None;
            }
            format!("vector {vector}")
        }
    })
}

/// `vec=1 [action=TIMER]` → `TIMER`.
fn softirq_name(e: &Event) -> String {
    e.detail
        .split("action=")
        .nth(1)
        .map(|a| a.trim_end_matches([']', ' ']).to_string())
        .unwrap_or_else(|| format!("vec {}", e.field("vec").unwrap_or("?")))
}

/// `work struct 0xffff… function …` / `work struct=0xffff…`: the work item's address.
fn work_struct(e: &Event) -> String {
    e.detail
        .trim_start_matches("work struct")
        .trim_start_matches(['=', ' '])
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_string()
}

fn overlap(a: &Activity, from: u64, to: u64) -> u64 {
    let start = a.ts_ns.max(from);
    let end = (a.ts_ns.saturating_add(a.duration_ns.unwrap_or(0))).min(to);
    end.saturating_sub(start)
}

/// The explanation: the top contributors to the gap, or that the CPU shows no kernel
/// activity in it.
fn explain(
    activities: &[Activity],
    cpu: u32,
    tid: u32,
    latency_us: f64,
    gap_start: u64,
    gap_end: u64,
    wake: Option<u64>,
) -> String {
    let gap = gap_end.saturating_sub(gap_start).max(1);
    let lat = us(latency_us);
    let mut contributors: Vec<(&Activity, u64)> = activities
        .iter()
        .filter(|a| a.duration_ns.is_some() && a.kind != "idle" && a.kind != "mark")
        // The measuring thread's own wakeup path (the timer vector that fires its hrtimer,
        // hrtimer_wakeup itself) is the end of the gap, not a cause.
        .filter(|a| !(a.kind == "timer" && a.name == "hrtimer_wakeup"))
        .map(|a| (a, overlap(a, gap_start, gap_end)))
        .filter(|(_, o)| *o > 0)
        .collect();
    // A task's share is its time in the gap outside the kernel work nested in it.
    let kernel: Vec<(&Activity, u64)> =
        contributors.iter().filter(|(a, _)| a.kind != "task").cloned().collect();
    for (a, o) in contributors.iter_mut().filter(|(a, _)| a.kind == "task") {
        let from = a.ts_ns.max(gap_start);
        let to = (a.ts_ns.saturating_add(a.duration_ns.unwrap_or(0))).min(gap_end);
        let nested: u64 = kernel.iter().map(|(k, _)| overlap(k, from, to)).sum();
        *o = o.saturating_sub(nested);
    }
    contributors.retain(|(_, o)| *o > 0);
    contributors.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.ts_ns.cmp(&b.0.ts_ns)));
    let kernel_ns: u64 = kernel.iter().map(|(_, o)| *o).sum();
    let idle_ns: u64 = activities
        .iter()
        .filter(|a| a.kind == "idle")
        .map(|a| overlap(a, gap_start, gap_end))
        .sum();
    let gap_us = us(gap as f64 / 1000.0);
    // What the gap is, said once: the part of the latency before the thread got the CPU (the
    // rest is its own way back to user space, after the switch).
    let window = format!(
        "{gap_us} µs of cyclictest's {lat} µs latency (tid {tid}), from the timer's expiry until the thread got CPU {cpu}"
    );
    // Kernel work covering under a fifth of the gap does not explain it.
    if kernel_ns * 5 < gap {
        let task = contributors.iter().find(|(a, _)| a.kind == "task");
        let wake_at = wake.unwrap_or(gap_end);
        // The interrupt that delivered the wakeup ends the gap; it is not activity in it.
        let mut small: Vec<&(&Activity, u64)> = kernel
            .iter()
            .filter(|(a, _)| {
                !(a.ts_ns <= wake_at
                    && a.ts_ns.saturating_add(a.duration_ns.unwrap_or(0)) >= wake_at)
            })
            .collect();
        small.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.ts_ns.cmp(&b.0.ts_ns)));
        let beyond = if small.is_empty() {
            String::new()
        } else {
            let listed: Vec<String> = small.iter().take(2).map(|(a, o)| describe(a, *o)).collect();
            format!(" beyond {}", listed.join(", "))
        };
        let who = if idle_ns * 2 >= gap {
            format!("CPU {cpu} was idle and shows no kernel activity{beyond}")
        } else if let Some((task, _)) = task {
            let none =
                if beyond.is_empty() { " (no interrupt, softirq, timer or work item)" } else { "" };
            format!("CPU {cpu} shows no kernel activity{beyond}{none} while task {} ran", task.name)
        } else {
            format!("CPU {cpu} shows no kernel activity{beyond}")
        };
        // The wakeup splits the gap: before it the timer interrupt was late; after it the
        // switch waited for the running task.
        let wake = wake.unwrap_or(gap_end).clamp(gap_start, gap_end);
        let (late, after) = (wake - gap_start, gap_end - wake);
        if let Some((task, _)) = task
            && after > late
        {
            return format!(
                "cyclictest (tid {tid}) on CPU {cpu} was woken {}, then task {} kept the CPU {} µs before the switch ({lat} µs latency), with no interrupt, softirq, timer or work item after the wakeup: {} ran with preemption disabled (a non-preemptible kernel section, which PREEMPT_RT makes rare), or the time went outside this kernel (hypervisor, firmware/SMI)",
                if late < 1000 {
                    "on time".to_string()
                } else {
                    format!("{} µs late", us(late as f64 / 1000.0))
                },
                task.name,
                us(after as f64 / 1000.0),
                task.name
            );
        }
        let switch = match task {
            Some((task, _)) if after * 5 >= gap => format!(
                "; after the late wakeup, task {} kept the CPU {} µs more before the switch",
                task.name,
                us(after as f64 / 1000.0)
            ),
            _ => String::new(),
        };
        return format!(
            "{who} in {window}: the time went outside this kernel (hypervisor, firmware/SMI), which is what a VM shows{switch}"
        );
    }
    let top: Vec<String> = contributors.iter().take(3).map(|(a, o)| describe(a, *o)).collect();
    format!("in {window}: {}", top.join(", "))
}

/// `softirq RCU 41 µs`, `IRQ 24 virtio0 handler 12 µs`, `task rustc-22019 5 µs`.
fn describe(a: &Activity, overlap_ns: u64) -> String {
    let what = match a.kind {
        "irq" => format!("{} handler", a.name),
        "softirq" => format!("softirq {}", a.name),
        "tasklet" => format!("tasklet {}", a.name),
        "irq_vector" => format!("{} interrupt", a.name),
        "ipi" => a.name.clone(),
        "timer" => format!("timer {}", a.name),
        "workqueue" => format!("work item {}", a.name),
        _ => format!("task {}", a.name),
    };
    format!("{what} {} µs", us(overlap_ns as f64 / 1000.0))
}

/// A µs figure for messages: whole numbers without decimals, else one decimal.
fn us(value: f64) -> String {
    if value.fract() == 0.0 { format!("{value:.0}") } else { format!("{value:.1}") }
}
