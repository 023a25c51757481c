//! `T:` lines: the per-thread summary (`-q`, the live screen, SIGUSR1 dumps) and `--spike` lines.
//!
//! `T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld` (with `-N`, `Act` and
//! `Avg` are 8 wide, which is how nanoseconds are recognised); fields are split on whitespace,
//! never on columns.

use super::model::Unit;

/// One summary line.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Summary {
    pub thread: u64,
    pub tid: Option<u32>,
    pub priority: Option<u32>,
    pub interval_us: Option<u64>,
    pub cycles: u64,
    /// `Min:`, `Avg:`, `Max:`: `None` when the field holds no latency (`nan`, `-5`), which
    /// `bad` then names.
    pub min: Option<u64>,
    /// `Act:`, the latency of the thread's last cycle before the line was printed.
    pub act: Option<u64>,
    pub avg: Option<u64>,
    pub max: Option<u64>,
    /// The figures printed that are not latencies (a finite number ≥ 0): `Max \`nan\``.
    pub bad: Vec<String>,
    /// `Some(Ns)` when the field widths say `-N`, `Some(Us)` when they say µs.
    pub unit: Option<Unit>,
}

/// A `T: n Spike: v: TS: t` line: thread and spike latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Spike {
    pub thread: u64,
    pub value: u64,
}

/// What a `T:` line held.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum TLine {
    Summary(Summary),
    Spike(Spike),
}

/// Parses a line starting with `T:`; `Err` carries a short description of what is wrong.
pub(super) fn parse(line: &str) -> Result<TLine, &'static str> {
    let rest = line.strip_prefix("T:").ok_or("not a `T:` line")?;
    let fields = key_values(rest);
    let thread = fields
        .iter()
        .find(|(k, _)| k.is_empty())
        .and_then(|(_, v)| v.parse().ok())
        .ok_or("no thread number after `T:`")?;
    let get = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let number = |key: &str| get(key).and_then(|v| v.parse::<u64>().ok());
    if let Some(spike) = get("Spike") {
        let value = spike.trim_end_matches(':').parse().map_err(|_| "unreadable spike value")?;
        return Ok(TLine::Spike(Spike { thread, value }));
    }
    let field = |key: &'static str| number(key).ok_or(key);
    // A latency field that is there but holds no latency (`Max: nan`, `Max: -5`) is unknown,
    // and said so; one that is missing makes the line unreadable.
    let mut bad = Vec::new();
    let mut latency =
        |key: &'static str, missing: &'static str| -> Result<Option<u64>, &'static str> {
            let value = get(key).filter(|v| !v.is_empty()).ok_or(missing)?;
            match value.parse::<u64>() {
                Ok(n) => Ok(Some(n)),
                Err(_) => {
                    bad.push(format!("{key} `{}`", crate::text::printable(value)));
                    Ok(None)
                }
            }
        };
    let min = latency("Min", "no `Min:`")?;
    let avg = latency("Avg", "no `Avg:`")?;
    let max = latency("Max", "no `Max:`")?;
    let summary = Summary {
        thread,
        tid: get("(").and_then(|v| v.parse().ok()),
        priority: number("P").and_then(|p| u32::try_from(p).ok()),
        interval_us: number("I"),
        cycles: field("C").map_err(|_| "no cycle count `C:`")?,
        min,
        act: number("Act"),
        avg,
        max,
        bad,
        unit: act_width(rest).map(|w| if w >= 8 { Unit::Ns } else { Unit::Us }),
    };
    Ok(TLine::Summary(summary))
}

/// `key:value` pairs; the value may follow the colon directly or after spaces. The thread
/// number gets the empty key, the TID in `( 2475)` gets `(`.
fn key_values(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut tokens = text.split_whitespace().peekable();
    let mut first = true;
    while let Some(token) = tokens.next() {
        if first {
            out.push(("", token));
            first = false;
        } else if let Some(tid) = token.strip_prefix('(') {
            let tid = if tid.is_empty() { tokens.next().unwrap_or("") } else { tid };
            out.push(("(", tid.trim_end_matches(')')));
        } else if let Some((key, value)) = token.split_once(':') {
            let value = if value.is_empty() { tokens.next().unwrap_or("") } else { value };
            out.push((key, value));
        }
    }
    out
}

/// The printed width of the `Act:` field (5 in µs, 8 with `-N`).
fn act_width(text: &str) -> Option<usize> {
    let after = &text[text.find("Act:")? + 4..];
    let end = after.find(|c: char| !(c == ' ' || c.is_ascii_digit() || c == '-'))?;
    Some(after[..end].trim_end().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines_in_us_and_ns() {
        let us = "T: 0 (10443) P:99 I:1000 C:   1995 Min:      5 Act:    9 Avg:   20 Max:    3284";
        let TLine::Summary(s) = parse(us).unwrap() else { panic!() };
        assert_eq!(
            (s.thread, s.tid, s.cycles, s.min, s.avg, s.max),
            (0, Some(10443), 1995, Some(5), Some(20), Some(3284))
        );
        assert_eq!((s.priority, s.interval_us, s.unit), (Some(99), Some(1000), Some(Unit::Us)));
        assert_eq!(s.act, Some(9));
        let ns =
            "T: 1 (10504) P:99 I:1000 C:   2000 Min:   7056 Act:   13390 Avg:   16096 Max:  103166";
        let TLine::Summary(s) = parse(ns).unwrap() else { panic!() };
        assert_eq!(
            (s.thread, s.max, s.act, s.unit),
            (1, Some(103166), Some(13390), Some(Unit::Ns))
        );
        let squeezed = "T: 0 ( 2475) P:99 I:1000 C: 599944 Min: 2 Act: 3 Avg: 5 Max: 3059";
        let TLine::Summary(s) = parse(squeezed).unwrap() else { panic!() };
        assert_eq!((s.tid, s.cycles, s.act, s.max), (Some(2475), 599944, Some(3), Some(3059)));
        let wide =
            "T:12 (    0) P:99 I:1000 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0";
        let TLine::Summary(s) = parse(wide).unwrap() else { panic!() };
        assert_eq!((s.thread, s.min, s.cycles), (12, Some(1000000), 0));
    }

    /// `nan`, `inf` and negative figures are no latencies: unknown, and named.
    #[test]
    fn figures_that_are_no_latencies_are_unknown_and_named() {
        let line =
            "T: 0 (10443) P:99 I:1000 C:   1995 Min:     -3 Act:    9 Avg:  inf Max:     NaN";
        let TLine::Summary(s) = parse(line).unwrap() else { panic!() };
        assert_eq!((s.min, s.avg, s.max, s.cycles), (None, None, None, 1995));
        assert_eq!(s.bad, ["Min `-3`", "Avg `inf`", "Max `NaN`"]);
        let line = "T: 1 (10444) P:99 I:1000 C:   1995 Min:      3 Act:    9 Avg:   20 Max:     -5";
        let TLine::Summary(s) = parse(line).unwrap() else { panic!() };
        assert_eq!(
            (s.min, s.max, s.bad.as_slice()),
            (Some(3), None, &["Max `-5`".to_string()][..])
        );
    }

    #[test]
    fn spike_lines_and_broken_lines() {
        assert_eq!(
            parse("T: 0 Spike:      10: TS:    758224659"),
            Ok(TLine::Spike(Spike { thread: 0, value: 10 }))
        );
        assert_eq!(parse("T: 0 (10443) P:99 I:1000 C:   1995 Min:"), Err("no `Min:`"));
        assert_eq!(parse("T:"), Err("no thread number after `T:`"));
    }
}
