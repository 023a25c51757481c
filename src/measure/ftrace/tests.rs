//! The parser and the spike explanation on traces captured from this machine's tracefs
//! (kernel 6.18, x86-64 VM, cyclictest 2.4 `-b N --tracemark` on CPU 1, sched, irq,
//! irq_vectors, timer, ipi and workqueue events), cut to their last lines. The expected values
//! were read off the trace text by hand.

use super::spike::analyze;
use super::*;

fn data(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_line_with_spaces_and_dashes_in_the_task_name() {
    let line = " opt as4h0j4ie9e-19709   [001] d..2. 10403.227021: sched_switch: prev_comm=opt as4h0j4ie9e prev_pid=19709 prev_prio=130 prev_state=R+ ==> next_comm=cyclictest next_pid=19724 next_prio=0";
    let e = parse_line(line).unwrap();
    assert_eq!((e.task.as_str(), e.pid, e.cpu), ("opt as4h0j4ie9e", 19709, 1));
    assert_eq!(e.ts_ns, 10_403_227_021_000);
    assert_eq!(e.name, "sched_switch");
    assert_eq!(e.field("prev_comm"), Some("opt as4h0j4ie9e"));
    assert_eq!(e.field("prev_state"), Some("R+"));
    assert_eq!(e.field("next_pid"), Some("19724"));
    assert_eq!(e.field("pid"), None);
    let dashed = parse_line("  kworker/u8:2-x-7 [000] ..... 12.000000001: workqueue_execute_end: work struct ffff8880 function=vmstat_update").unwrap();
    assert_eq!(
        (dashed.task.as_str(), dashed.pid, dashed.ts_ns),
        ("kworker/u8:2-x", 7, 12_000_000_001)
    );
}

#[test]
fn optional_columns_tgid_and_no_flags() {
    let tgid = parse_line("          <idle>-0       (-------) [001] d..2.   99.500000: sched_wakeup: comm=cyclictest pid=5 prio=0 target_cpu=001").unwrap();
    assert_eq!(
        (tgid.task.as_str(), tgid.pid, tgid.cpu, tgid.name.as_str()),
        ("<idle>", 0, 1, "sched_wakeup")
    );
    let no_flags = parse_line("      cyclictest-77    [003]  5.250000: tracing_mark_write: hit latency threshold (120 > 100)").unwrap();
    assert_eq!((no_flags.cpu, no_flags.ts_ns), (3, 5_250_000_000));
    assert!(spike::is_breach_mark(&no_flags));
    assert_eq!(parse_line("CPU:1 [LOST 120 EVENTS]"), None);
}

#[test]
fn golden_traces_parse_without_loss() {
    for name in [
        "ftrace-6.18-x86-breach-61us-softirq-rcu.txt",
        "ftrace-6.18-x86-breach-439us-late-timer.txt",
        "ftrace-6.18-x86-breach-158us-slow-timer-irq.txt",
        "ftrace-6.18-x86-breach-338us-late-switch.txt",
    ] {
        let text = data(name);
        let trace = parse(&text);
        let lines = text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).count();
        assert_eq!(trace.skipped, 0, "{name}");
        assert_eq!(trace.events.len(), lines, "{name}");
        assert!(trace.events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns || w[0].cpu != w[1].cpu));
    }
}

#[test]
fn a_softirq_that_delays_the_switch_is_named_with_its_duration() {
    let spike = analyze(&parse(&data("ftrace-6.18-x86-breach-61us-softirq-rcu.txt"))).unwrap();
    assert_eq!((spike.cpu, spike.tid, spike.latency_us), (1, 25372, 61.0));
    // Gap 10508.399135 (mark .399196 − 61 µs) to the switch at .399181; RCU ran .399132-.399176.
    assert_eq!(
        spike.explanation,
        "in 46 µs of cyclictest's 61 µs latency (tid 25372), from the timer's expiry until the thread got CPU 1: softirq RCU 41 µs, task rustc-22019 5 µs"
    );
    let rcu = spike.events.iter().find(|a| a.kind == "softirq").unwrap();
    assert_eq!((rcu.name.as_str(), rcu.duration_ns), ("RCU", Some(44_000)));
    assert_eq!(spike.events.last().unwrap().kind, "mark");
    assert!(spike.excerpt.last().unwrap().contains("hit latency threshold (61 > 40)"));
}

#[test]
fn a_timer_interrupt_that_comes_late_with_nothing_before_it_is_time_outside_the_kernel() {
    let spike = analyze(&parse(&data("ftrace-6.18-x86-breach-439us-late-timer.txt"))).unwrap();
    // Expected wakeup .681023; the local timer fired at .681384 with nothing on CPU 1 since
    // the switch to rustc at .680044; rustc then kept the CPU until .681444.
    assert_eq!(
        spike.explanation,
        "CPU 1 shows no kernel activity (no interrupt, softirq, timer or work item) while task rustc-22019 ran in 421 µs of cyclictest's 439 µs latency (tid 26061), from the timer's expiry until the thread got CPU 1: the time went outside this kernel (hypervisor, firmware/SMI), which is what a VM shows"
    );
}

#[test]
fn a_task_that_keeps_the_cpu_after_an_on_time_wakeup() {
    let spike = analyze(&parse(&data("ftrace-6.18-x86-breach-338us-late-switch.txt"))).unwrap();
    // Woken at .217764 (before the gap start .217768); rtbuild ran on until the switch at
    // .218094 with nothing logged in between.
    assert_eq!(
        spike.explanation,
        "cyclictest (tid 22349) on CPU 1 was woken on time, then task rtbuild-22176 kept the CPU 326 µs before the switch (338 µs latency), with no interrupt, softirq, timer or work item after the wakeup: rtbuild-22176 ran with preemption disabled (a non-preemptible kernel section, which PREEMPT_RT makes rare), or the time went outside this kernel (hypervisor, firmware/SMI)"
    );
}

#[test]
fn a_slow_timer_interrupt_is_the_top_contributor() {
    let spike = analyze(&parse(&data("ftrace-6.18-x86-breach-158us-slow-timer-irq.txt"))).unwrap();
    // Gap .716967 to .717049; local_timer ran .716939-.717033 (66 µs of it).
    assert!(
        spike.explanation.starts_with(
            "in 82 µs of cyclictest's 158 µs latency (tid 26140), from the timer's expiry until the thread got CPU 1: local_timer interrupt 66 µs"
        ),
        "{}",
        spike.explanation
    );
}

#[test]
fn an_idle_cpu_with_no_events_in_the_gap() {
    let text = "\
          <idle>-0       [002] d..2.   10.000000: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=swapper/2 next_pid=0 next_prio=120
          <idle>-0       [002] d.h2.   10.000900: local_timer_entry: vector=236
          <idle>-0       [002] d.h2.   10.000901: hrtimer_expire_entry: hrtimer=00000000aa function=hrtimer_wakeup now=1
          <idle>-0       [002] dNh4.   10.000902: sched_waking: comm=cyclictest pid=40 prio=0 target_cpu=002
          <idle>-0       [002] dNh4.   10.000903: sched_wakeup: comm=cyclictest pid=40 prio=0 target_cpu=002
          <idle>-0       [002] dNh2.   10.000904: hrtimer_expire_exit: hrtimer=00000000aa
          <idle>-0       [002] dNh2.   10.000905: local_timer_exit: vector=236
          <idle>-0       [002] d..2.   10.000906: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=40 next_prio=0
      cyclictest-40      [002] .....   10.000910: tracing_mark_write: hit latency threshold (500 > 100)
";
    let spike = analyze(&parse(text)).unwrap();
    assert_eq!(
        spike.explanation,
        "CPU 2 was idle and shows no kernel activity in 496 µs of cyclictest's 500 µs latency (tid 40), from the timer's expiry until the thread got CPU 2: the time went outside this kernel (hypervisor, firmware/SMI), which is what a VM shows"
    );
    assert_eq!(analyze(&parse("")), None);
}

/// Issue 36 item 5: a thread that never slept in the window (switched in long before its timer
/// expired, no switch out since) was explained as "0.0 µs gap … 1155 µs latency"; it is an
/// earlier cycle's overrun carried over, and said so.
#[test]
fn a_thread_that_never_slept_carries_an_earlier_overrun() {
    let text = "\
          <idle>-0       [003] d..2.   20.000000: sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=77 next_prio=0
      cyclictest-77      [003] d.h1.   20.000500: local_timer_entry: vector=236
      cyclictest-77      [003] d.h1.   20.000510: local_timer_exit: vector=236
      cyclictest-77      [003] .....   20.003000: tracing_mark_write: hit latency threshold (1155 > 100)
";
    let spike = analyze(&parse(text)).unwrap();
    assert_eq!((spike.tid, spike.latency_us), (77, 1155.0));
    assert!(!spike.explanation.contains("0.0 µs"), "{}", spike.explanation);
    assert!(
        spike.explanation.starts_with(
            "cyclictest (tid 77) held CPU 3 from before this cycle's timer expired until it wrote the mark: it had not gone back to sleep since an earlier cycle, so its 1155 µs latency is an earlier late cycle carried over"
        ),
        "{}",
        spike.explanation
    );
}

#[test]
fn the_window_kept_ends_at_the_mark() {
    let text = data("ftrace-6.18-x86-breach-61us-softirq-rcu.txt");
    let kept = keep_window(&text, 2_000_000, 100);
    assert!(kept.starts_with("# tracer: nop\n"));
    let events = parse(&kept).events;
    assert!(events.first().unwrap().ts_ns >= 10_508_397_196_000);
    assert!(events.last().unwrap().line.contains("hit latency threshold"));
    assert!(events.len() < parse(&text).events.len());
    let no_mark =
        "# tracer: nop\n  a-1 [000] ..... 1.000000: x: y\n  a-1 [000] ..... 2.000000: x: z\n";
    assert_eq!(keep_window(no_mark, 1, 1), "# tracer: nop\n  a-1 [000] ..... 2.000000: x: z\n");
}

/// This machine's tracefs (the tests run as root, as `rtbuild test --trace-above-us` does).
fn tracefs() -> std::path::PathBuf {
    for dir in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if std::path::Path::new(dir).join("trace_marker").exists() {
            return dir.into();
        }
    }
    panic!(
        "no tracefs at /sys/kernel/tracing or /sys/kernel/debug/tracing: run the tests as root on a kernel with CONFIG_FTRACE (mount -t tracefs nodev /sys/kernel/tracing)"
    );
}

/// Removes the tracefs instance when the test ends, however it ends.
struct Instance(std::path::PathBuf);

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_trace_captured_now_from_this_machines_tracefs_parses_and_its_mark_is_found() {
    // A private tracefs instance: the top-level buffer and its settings stay untouched.
    let dir = tracefs().join("instances").join(format!("rtbuild-unit-{}", std::process::id()));
    std::fs::create_dir(&dir).unwrap();
    let instance = Instance(dir.clone());
    for event in [
        "sched/sched_switch",
        "sched/sched_wakeup",
        "sched/sched_waking",
        "irq",
        "irq_vectors",
        "timer/hrtimer_expire_entry",
        "timer/hrtimer_expire_exit",
        "ipi",
        "workqueue",
    ] {
        let enable = dir.join("events").join(event).join("enable");
        if enable.exists() {
            crate::files::write::fixture(enable, "1").unwrap();
        }
    }
    // A shell pinned to CPU 0 sleeps twice (timer wakeups and switches land in the trace),
    // then writes cyclictest's breach mark itself.
    let script = format!(
        "sleep 0.05; sleep 0.05; echo 'hit latency threshold (250 > 100)' > {}",
        dir.join("trace_marker").display()
    );
    let handle = crate::host::runner::Cmd::new("taskset")
        .args(["-c", "0", "sh", "-c", &script])
        .to_duct()
        .start()
        .unwrap();
    let pid = handle.pids()[0];
    assert!(handle.wait().unwrap().status.success());
    let text = std::fs::read_to_string(dir.join("trace")).unwrap();
    drop(instance);
    let trace = parse(&text);
    let lines = text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).count();
    let unparsed: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty() && parse_line(l).is_none())
        .collect();
    assert_eq!(unparsed, Vec::<&str>::new());
    assert_eq!(trace.events.len(), lines);
    assert!(trace.events.iter().any(|e| e.name == "sched_switch" && e.cpu == 0), "{text}");
    let spike = analyze(&trace).unwrap_or_else(|| panic!("no mark found in:\n{text}"));
    assert_eq!((spike.cpu, spike.tid, spike.latency_us), (0, pid, 250.0), "{text}");
    assert!(spike.excerpt.last().unwrap().contains("hit latency threshold (250 > 100)"));
    assert!(!spike.explanation.is_empty());
}

#[test]
fn an_arm64_shaped_trace_names_the_irq_handler_the_ipi_and_a_threaded_handler() {
    // Hand-written in the event formats of include/trace/events/{irq,ipi,sched}.h as an arm64
    // PREEMPT_RT kernel prints them (no irq_vectors; the arch timer is a numbered IRQ; device
    // IRQs run in irq/N-name threads).
    let text = "\
     irq/35-uart-120     [003] d..2.  100.000000: sched_switch: prev_comm=cyclictest prev_pid=50 prev_prio=0 prev_state=S ==> next_comm=irq/35-uart next_pid=120 next_prio=49
     irq/35-uart-120     [003] d.h1.  100.000950: irq_handler_entry: irq=11 name=arch_timer
     irq/35-uart-120     [003] d.h1.  100.000960: irq_handler_exit: irq=11 ret=handled
     irq/35-uart-120     [003] d.h1.  100.000960: ipi_entry: (Rescheduling interrupts)
     irq/35-uart-120     [003] d.h1.  100.001060: ipi_exit: (Rescheduling interrupts)
     irq/35-uart-120     [003] d.h1.  100.001100: irq_handler_entry: irq=11 name=arch_timer
     irq/35-uart-120     [003] d.h3.  100.001102: sched_waking: comm=cyclictest pid=50 prio=0 target_cpu=003
     irq/35-uart-120     [003] d.h4.  100.001103: sched_wakeup: comm=cyclictest pid=50 prio=0 target_cpu=003
     irq/35-uart-120     [003] d.h1.  100.001105: irq_handler_exit: irq=11 ret=handled
     irq/35-uart-120     [003] d..2.  100.001300: sched_switch: prev_comm=irq/35-uart prev_pid=120 prev_prio=49 prev_state=R+ ==> next_comm=cyclictest next_pid=50 next_prio=0
      cyclictest-50      [003] .....  100.001310: tracing_mark_write: hit latency threshold (400 > 100)
";
    let spike = analyze(&parse(text)).unwrap();
    // Gap 100.000910 to the switch at .001300 (390 µs): hard IRQs 10 + 100 + 5 µs, the
    // threaded handler the rest (390 − 115 = 275 µs).
    assert_eq!(
        spike.explanation,
        "in 390 µs of cyclictest's 400 µs latency (tid 50), from the timer's expiry until the thread got CPU 3: task irq/35-uart-120 275 µs, IPI Rescheduling interrupts 100 µs, IRQ 11 arch_timer handler 10 µs"
    );
    let kinds: Vec<&str> = spike.events.iter().map(|a| a.kind).collect();
    assert!(kinds.contains(&"ipi") && kinds.contains(&"irq") && kinds.contains(&"wakeup"));
}
