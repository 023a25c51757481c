//! `rtla timerlat top -a N` output (`--analyzer rtla`): whether it hit its stop-tracing
//! threshold, on which CPU and how late, and its auto-analysis as one explanation. The
//! format is the kernel's `Documentation/tools/rtla/rtla-timerlat-top.rst`: a
//! `## CPU 23 hit stop tracing, analyzing it ##` line, then `Name:   value us (share %)`
//! lines (a blocking thread's stack trace lines start with `->`), `Thread latency:` last.

/// The CPU and thread latency (µs) of the breach rtla analysed, if it hit its threshold.
pub(crate) fn breach(text: &str) -> Option<(u32, f64)> {
    let cpu = text.lines().find_map(|l| {
        l.trim().strip_prefix("## CPU ")?.split_whitespace().next()?.parse::<u32>().ok()
    })?;
    let latency = text.lines().find_map(|l| {
        l.trim().strip_prefix("Thread latency:")?.split_whitespace().next()?.parse::<f64>().ok()
    })?;
    Some((cpu, latency))
}

/// The auto-analysis in one line: every `name: value` of the analysed CPU, the blocking
/// thread and the idle-exit note, without the stack trace.
pub(crate) fn explanation(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).skip_while(|l| !l.starts_with("## CPU "));
    let Some(head) = lines.next() else {
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
    format!("rtla timerlat auto-analysis: {head}: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::{breach, explanation};

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
        assert_eq!(breach(OUTPUT), Some((1, 120.0)));
        assert_eq!(breach("  1 #100 | 0 0 1 5 | 3 2 4 9\n"), None);
        assert_eq!(
            explanation(OUTPUT),
            "rtla timerlat auto-analysis: CPU 1 hit stop tracing, analyzing it: IRQ handler delay: 80.10 us (66.75 %); IRQ latency: 81.00 us; Timerlat IRQ duration: 10.20 us (8.50 %); Blocking thread: 20.50 us (17.08 %); stress-ng:4242 20.50 us; Thread latency: 120.00 us (100%)"
        );
        assert!(explanation("  1 #100 | 0 0 1 5 | 3 2 4 9\n").contains("did not hit"));
    }
}
