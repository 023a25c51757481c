//! `rtla timerlat top -a N` output (`--analyzer rtla`): whether it hit its stop-tracing
//! threshold, on which CPU and how late, and its auto-analysis as one explanation. The
//! format is the kernel's `Documentation/tools/rtla/rtla-timerlat-top.rst`: a
//! `## CPU 23 hit stop tracing, analyzing it ##` line, then `Name:   value us (share %)`
//! lines (a blocking thread's stack trace lines start with `->`), `Thread latency:` last.
//!
//! Two other endings are real and handled: rtla stopping on the IRQ latency prints the analysis
//! up to `IRQ latency:` and no `Thread latency:` line; rtla before Linux 6.3 (Debian 12's 6.1)
//! prints only `rtla timerlat hit stop tracing` and saves its trace, with no analysis at all.

/// What made rtla stop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum StopKind {
    /// The timerlat thread's latency crossed the threshold.
    Thread,
    /// The timer IRQ's latency crossed it (no `Thread latency:` line).
    Irq,
    /// rtla stopped but printed no analysis (rtla 6.1).
    Unanalysed,
}

/// rtla's stop: the analysed CPU and latency (µs) when it printed its analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stop {
    pub kind: StopKind,
    pub cpu: Option<u32>,
    pub latency_us: Option<f64>,
}

/// The value (µs) of the first `NAME: value us` line.
fn value(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|l| l.trim().strip_prefix(name)?.split_whitespace().next()?.parse().ok())
}

/// How rtla stopped at its threshold, if it did.
pub(crate) fn stop(text: &str) -> Option<Stop> {
    let cpu = text.lines().find_map(|l| {
        l.trim().strip_prefix("## CPU ")?.split_whitespace().next()?.parse::<u32>().ok()
    });
    match cpu {
        Some(cpu) => {
            let (kind, latency_us) = match value(text, "Thread latency:") {
                Some(us) => (StopKind::Thread, Some(us)),
                None => (StopKind::Irq, value(text, "IRQ latency:")),
            };
            Some(Stop { kind, cpu: Some(cpu), latency_us })
        }
        None if text.contains("hit stop tracing") => {
            Some(Stop { kind: StopKind::Unanalysed, cpu: None, latency_us: None })
        }
        None => None,
    }
}

/// The auto-analysis in one line: every `name: value` of the analysed CPU, the blocking
/// thread and the idle-exit note, without the stack trace.
pub(crate) fn explanation(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).skip_while(|l| !l.starts_with("## CPU "));
    let Some(head) = lines.next() else {
        if text.contains("hit stop tracing") {
            return "rtla timerlat stopped tracing at its threshold but printed no auto-analysis (rtla older than 6.3, such as Debian 12's 6.1, has none); its own trace is kept beside this file as trace-<scenario>.timerlat.txt".into();
        }
        return "rtla timerlat did not hit its stop-tracing threshold, so it has no auto-analysis"
            .into();
    };
    let head = head.trim_matches(|c| c == '#' || c == ' ');
    let mut parts: Vec<String> = Vec::new();
    for line in lines {
        if line.is_empty() || line.starts_with("->") || line.starts_with("---") {
            continue;
        }
        if line.starts_with("Saving trace") {
            break;
        }
        if line.ends_with("stacktrace") || line.ends_with("stack trace") {
            continue;
        }
        let compact = line.split_whitespace().collect::<Vec<_>>().join(" ");
        parts.push(compact);
    }
    let stopped_on =
        if value(text, "Thread latency:").is_none() { " (stopped on the IRQ latency)" } else { "" };
    format!("rtla timerlat auto-analysis{stopped_on}: {head}: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::{Stop, StopKind, explanation, stop};

    /// The line formats of the kernel documentation's example, with other figures.
    const OUTPUT: &str = "  rtla timerlat hit stop tracing
  ## CPU 1 hit stop tracing, analyzing it ##
  IRQ handler delay:                                        80.10 us (66.75 %)
  IRQ latency:                                              81.00 us
  Timerlat IRQ duration:                                    10.20 us (8.50 %)
  Blocking thread:                                          20.50 us (17.08 %)
                         stress-ng:4242                     20.50 us
    Blocking thread stacktrace
                -> timerlat_irq
                -> hrtimer_interrupt
  ------------------------------------------------------------------------
    Thread latency:                                        120.00 us (100%)

  Saving trace to timerlat_trace.txt
";

    #[test]
    fn the_analysed_cpu_latency_and_contributors() {
        assert_eq!(
            stop(OUTPUT),
            Some(Stop { kind: StopKind::Thread, cpu: Some(1), latency_us: Some(120.0) })
        );
        assert_eq!(stop("  1 #100 | 0 0 1 5 | 3 2 4 9\n"), None);
        assert_eq!(
            explanation(OUTPUT),
            "rtla timerlat auto-analysis: CPU 1 hit stop tracing, analyzing it: IRQ handler delay: 80.10 us (66.75 %); IRQ latency: 81.00 us; Timerlat IRQ duration: 10.20 us (8.50 %); Blocking thread: 20.50 us (17.08 %); stress-ng:4242 20.50 us; Thread latency: 120.00 us (100%)"
        );
        assert!(explanation("  1 #100 | 0 0 1 5 | 3 2 4 9\n").contains("did not hit"));
    }

    /// rtla 6.12 stopping on the IRQ latency: the analysis ends at `IRQ latency:`.
    const IRQ_STOP: &str = "  rtla timerlat hit stop tracing
  ## CPU 1 hit stop tracing, analyzing it ##
  IRQ handler delay:                                      1510.11 us (92.40 %)
  IRQ latency:                                            1634.30 us
  Saving trace to timerlat_trace.txt
";

    /// Debian 12's rtla 6.1: the stop line and the saved trace, no analysis.
    const RTLA_6_1_STOP: &str = "  rtla timerlat hit stop tracing
  Saving trace to timerlat_trace.txt
";

    #[test]
    fn a_stop_on_the_irq_latency_is_a_breach_with_the_irq_latency() {
        assert_eq!(
            stop(IRQ_STOP),
            Some(Stop { kind: StopKind::Irq, cpu: Some(1), latency_us: Some(1634.3) })
        );
        assert_eq!(
            explanation(IRQ_STOP),
            "rtla timerlat auto-analysis (stopped on the IRQ latency): CPU 1 hit stop tracing, analyzing it: IRQ handler delay: 1510.11 us (92.40 %); IRQ latency: 1634.30 us"
        );
    }

    #[test]
    fn a_stop_without_analysis_is_a_breach_that_says_so() {
        assert_eq!(
            stop(RTLA_6_1_STOP),
            Some(Stop { kind: StopKind::Unanalysed, cpu: None, latency_us: None })
        );
        let why = explanation(RTLA_6_1_STOP);
        assert!(why.contains("printed no auto-analysis"), "{why}");
        assert!(why.contains("trace-<scenario>.timerlat.txt"), "{why}");
    }
}
