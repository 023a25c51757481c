//! The `Measured` line a scenario ends with: every thread's max names its thread and its CPU.

use super::measured;
use crate::formats::run_json::{IrqDelta, ScenarioRecord, ThreadSummary};

fn thread(thread: usize, cpu: i64, max_us: i64) -> ThreadSummary {
    ThreadSummary { thread, cpu, max_us, ..ThreadSummary::default() }
}

fn scenario(name: &str, threads: Vec<ThreadSummary>) -> ScenarioRecord {
    ScenarioRecord { name: name.to_string(), threads, ..ScenarioRecord::default() }
}

/// `--threads 3 --unpinned`: the kernel ran every thread on RT CPU 1, so the CPU alone would
/// name the same CPU three times; each figure says which thread it is.
#[test]
fn unpinned_threads_on_one_cpu_are_told_apart_by_their_number() {
    let s = scenario("idle", vec![thread(0, 1, 38), thread(1, 1, 41), thread(2, 1, 40)]);
    assert_eq!(
        measured(&s),
        "idle: valid; max thread 0 on CPU1 38 µs, thread 1 on CPU1 41 µs, thread 2 on CPU1 40 µs; no device interrupts on RT CPUs"
    );
}

/// One pinned thread per measured CPU: the same form, thread and CPU.
#[test]
fn pinned_threads_name_their_thread_and_cpu() {
    let mut s = scenario("stress", vec![thread(0, 2, 71), thread(1, 3, 64)]);
    s.label = Some("load on the housekeeping CPUs".to_string());
    s.invalid_reasons = vec!["thread 1 completed 10 of 2000 expected cycles".to_string()];
    s.interrupts_on_rt_cpus = vec![IrqDelta {
        irq: "27".to_string(),
        device: true,
        cpu: 3,
        count: 4,
        description: "GICv3 27 Level virtio0".to_string(),
    }];
    assert_eq!(
        measured(&s),
        "stress: INVALID (load on the housekeeping CPUs); max thread 0 on CPU2 71 µs, thread 1 on CPU3 64 µs; 1 device interrupt source on RT CPUs: IRQ 27 GICv3 27 Level virtio0"
    );
}

/// A thread cyclictest reported without a CPU (`-1`), and a scenario with no thread at all.
#[test]
fn a_thread_without_a_cpu_and_no_thread_at_all() {
    assert_eq!(
        measured(&scenario("idle", vec![thread(0, -1, 12)])),
        "idle: valid; max thread 0 12 µs; no device interrupts on RT CPUs"
    );
    assert_eq!(
        measured(&scenario("idle", Vec::new())),
        "idle: valid; max -; no device interrupts on RT CPUs"
    );
}
