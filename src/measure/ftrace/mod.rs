//! The kernel's ftrace text output (tracefs `trace`, as `rtbuild test --trace-above-us` keeps it
//! in `trace-<scenario>.txt`): one [`Event`] per line, and the window of lines that ends at
//! cyclictest's breach mark. [`spike`] explains the breach from those events.
//!
//! A line reads `TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: DETAIL`. TASK may hold spaces and dashes
//! (`opt as4h0j4ie9e-19709`), a `(TGID)` column follows PID with `record-tgid`, and FLAGS is
//! absent without `irq-info`; comment lines start with `#`.

pub(crate) mod rtla;
pub(crate) mod spike;

/// One trace line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The task that was current (`<idle>` or `swapper/1` for the idle task).
    pub task: String,
    pub pid: u32,
    pub cpu: u32,
    /// The timestamp, ns (the trace prints seconds with 6 or 9 decimals).
    pub ts_ns: u64,
    /// The event's name: `sched_switch`, `irq_handler_entry`, `tracing_mark_write`, …
    pub name: String,
    /// Everything after `EVENT: `.
    pub detail: String,
    /// The line as it was, for excerpts.
    pub line: String,
}

impl Event {
    /// The value of `key=` in the detail (`prev_comm=opt as4h0j4ie9e prev_pid=1` gives
    /// `opt as4h0j4ie9e` for `prev_comm`): up to the next ` word=`, ` ==>` or the end.
    pub(crate) fn field(&self, key: &str) -> Option<&str> {
        field(&self.detail, key)
    }
}

/// A parsed trace: the events in file order and how many non-comment lines were not events.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trace {
    pub events: Vec<Event>,
    pub skipped: usize,
}

/// Parses ftrace's text output; lines that are not events are counted, never fatal.
pub(crate) fn parse(text: &str) -> Trace {
    let mut trace = Trace::default();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        match parse_line(line) {
            Some(event) => trace.events.push(event),
            None => trace.skipped += 1,
        }
    }
    trace
}

/// One event line, or `None`.
pub(crate) fn parse_line(line: &str) -> Option<Event> {
    // The CPU column is the first ` [digits] ` after a `TASK-PID` that ends in digits (or a
    // `(TGID)` column).
    let mut from = 0;
    let (head, cpu, rest) = loop {
        let open = from + line[from..].find(" [")?;
        let after = &line[open + 2..];
        let close = after.find(']')?;
        let digits = &after[..close];
        let before = line[..open].trim();
        let before = match before.rfind(" (") {
            Some(at) if before.ends_with(')') => before[..at].trim_end(),
            _ => before,
        };
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && before.rsplit_once('-').is_some_and(|(_, pid)| pid.parse::<u32>().is_ok())
        {
            break (before, digits.parse::<u32>().ok()?, &after[close + 1..]);
        }
        from = open + 2;
    };
    let (task, pid) = head.rsplit_once('-')?;
    let task = task.trim().to_string();
    let pid = pid.parse().ok()?;
    let mut words = rest.trim_start();
    // Optional flags column (`d..2.`, `dNh3.`, `....`), then `SECONDS.FRACTION:`.
    let (first, after_first) = words.split_once(' ')?;
    let ts_ns = match timestamp(first) {
        Some(ts) => {
            words = after_first;
            ts
        }
        None => {
            let (second, after_second) = after_first.trim_start().split_once(' ')?;
            words = after_second;
            timestamp(second)?
        }
    };
    let words = words.trim_start();
    let (name, detail) = match words.split_once(": ") {
        Some((name, detail)) if !name.contains(' ') => (name, detail),
        _ => (words.strip_suffix(':')?, ""),
    };
    Some(Event {
        task,
        pid,
        cpu,
        ts_ns,
        name: name.to_string(),
        detail: detail.to_string(),
        line: line.to_string(),
    })
}

/// `10403.227036:` → ns.
fn timestamp(word: &str) -> Option<u64> {
    let word = word.strip_suffix(':')?;
    let (secs, frac) = word.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns: u64 = format!("{frac:0<9}").parse().ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

fn field<'a>(detail: &'a str, key: &str) -> Option<&'a str> {
    let mut search = 0;
    let start = loop {
        let at = search + detail[search..].find(key)?;
        let boundary = at == 0 || detail.as_bytes()[at - 1] == b' ';
        if boundary && detail[at + key.len()..].starts_with('=') {
            break at + key.len() + 1;
        }
        search = at + key.len();
    };
    let value = &detail[start..];
    let mut end = value.len();
    for (i, _) in value.match_indices(' ') {
        let next = &value[i + 1..];
        let word_end = next.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        let is_key = matches!(word_end, Some(n) if n > 0 && next[n..].starts_with('='));
        if is_key || next.starts_with("==>") {
            end = i;
            break;
        }
    }
    Some(value[..end].trim_end())
}

/// The part of a trace to keep: the header comments, then every event line in the `window_ns`
/// before the breach mark (cyclictest's `hit latency threshold`) up to the mark itself, plus
/// the lines other CPUs logged before tracing stopped. Without a mark, the last `fallback_lines`
/// event lines.
pub(crate) fn keep_window(text: &str, window_ns: u64, fallback_lines: usize) -> String {
    let mark = text.lines().rev().filter_map(parse_line).find(spike::is_breach_mark);
    let mut out = String::new();
    for line in text.lines().take_while(|l| l.trim_start().starts_with('#')) {
        out.push_str(line);
        out.push('\n');
    }
    match mark {
        Some(mark) => {
            let from = mark.ts_ns.saturating_sub(window_ns);
            for line in text.lines() {
                if parse_line(line).is_some_and(|e| e.ts_ns >= from) {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        None => {
            let events: Vec<&str> = text
                .lines()
                .filter(|l| !l.trim_start().starts_with('#') && !l.is_empty())
                .collect();
            for line in &events[events.len().saturating_sub(fallback_lines)..] {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
