//! Which kernel log lines spoil an RT measurement (Linutronix's gate for RT kernels): read by
//! `test` from the log before and after each scenario and by `verify --target` from the log
//! since boot.

/// What a kernel log line means for a run logged during it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    /// The measurement cannot be trusted: `sched: RT throttling activated` (the RT tasks were
    /// stopped for the rest of the period).
    Invalid,
    /// The kernel misbehaved under the load: `BUG:` (sleeping function called from invalid
    /// context, scheduling while atomic, …), `WARNING:`, `Oops`, `hrtimer: interrupt took`.
    Fail,
}

/// The `grep -E` pattern the on-target helper keeps lines by: every line [`classify`] knows.
pub(crate) const PATTERN: &str =
    "BUG:|WARNING:|Oops|RT throttling activated|hrtimer: interrupt took";

/// What `line` means, or `None` for an ordinary line.
pub(crate) fn classify(line: &str) -> Option<Severity> {
    if line.contains("sched: RT throttling activated") {
        return Some(Severity::Invalid);
    }
    let fail = ["BUG:", "WARNING:", "hrtimer: interrupt took"].iter().any(|p| line.contains(p))
        || line.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "Oops");
    fail.then_some(Severity::Fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gate_line_is_classified_and_ordinary_lines_are_not() {
        for line in [
            "[   12.5] BUG: sleeping function called from invalid context at kernel/locking/spinlock_rt.c:48",
            "[   12.5] BUG: scheduling while atomic: irq/30-x/123/0x00000002",
            "[   12.5] WARNING: CPU: 3 PID: 77 at kernel/sched/core.c:100 foo+0x1/0x2",
            "[   12.5] Internal error: Oops: 0000000096000004 [#1] PREEMPT_RT SMP",
            "[   12.5] Oops: 0000 [#1] PREEMPT SMP",
            "[   12.5] hrtimer: interrupt took 1234567 ns",
        ] {
            assert_eq!(classify(line), Some(Severity::Fail), "{line}");
        }
        assert_eq!(classify("[ 1.0] sched: RT throttling activated"), Some(Severity::Invalid));
        for line in ["[ 1.0] usb 1-1: new device", "[ 1.0] Oopsie daisy", "[ 1.0] bug: lower case"]
        {
            assert_eq!(classify(line), None, "{line}");
        }
    }
}
