//! BitBake's output lines → [`Event`]s. Pure: one line in, at most one event out.
//!
//! kas relays BitBake's output through its logger when it is not on a terminal, so lines may
//! carry a `2026-11-29 23:40:00 - INFO     - ` prefix; it is removed first. Both knotty forms
//! of parse progress are understood: `Parsing recipes: 45% |###   | ETA: 0:00:10` on a
//! terminal and `Parsing recipes...done.` elsewhere.

/// Something a BitBake output line tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// `Parsing recipes...` or `Parsing recipes: 45% |…`.
    Parsing { percent: Option<u32> },
    /// `Parsing of 1234 .bb files complete (…)`.
    Parsed { recipes: u64 },
    /// `NOTE: Running task 12 of 345 (/…/busybox_1.37.bb:do_compile)` (also `noexec task`).
    Task { number: u64, total: u64, task: String },
    /// `NOTE: Running setscene task 3 of 100 (…)`.
    Setscene { number: u64, total: u64, task: String },
    /// `NOTE: recipe busybox-1.37.0-r0: task do_compile: Started` / `Succeeded` / `Failed`.
    TaskState { recipe: String, task: String, state: TaskState },
    /// `Sstate summary: Wanted 123 Local 100 Mirrors 0 Missed 23 Current 0 (81% match, …)`.
    Sstate(SstateSummary),
    /// `NOTE: Tasks Summary: Attempted 345 tasks of which 300 didn't need to be rerun and …`.
    TasksSummary { attempted: u64, reused: u64, failed: u64 },
    /// `ERROR: linux-qcom-rt-6.18.37-r0 do_compile: Execution of '…' failed with exit code 1`.
    TaskError { recipe: String, task: String, message: String },
    /// `ERROR: Logfile of failure stored in: /…/temp/log.do_compile.1234`.
    FailureLog { path: String },
    /// `ERROR: Task (/…/linux-qcom-rt_6.18.bb:do_compile) failed with exit code '1'`.
    TaskFailed { task: String },
    /// Any other `ERROR:` line.
    Error { message: String },
    /// A `WARNING:` line.
    Warning { message: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskState {
    Started,
    Succeeded,
    Failed,
}

/// BitBake's sstate reuse figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub(crate) struct SstateSummary {
    pub wanted: u64,
    pub local: u64,
    pub mirrors: u64,
    pub missed: u64,
    pub current: u64,
    pub match_percent: u32,
    pub complete_percent: u32,
}

/// The line without kas's log prefix or terminal colour codes.
pub(crate) fn clean(line: &str) -> String {
    let mut text = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI sequence: ESC [ … final byte in @..~
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        if c != '\r' {
            text.push(c);
        }
    }
    strip_kas_prefix(&text).to_string()
}

/// `2026-11-29 23:40:00 - INFO     - message` → `message`.
fn strip_kas_prefix(line: &str) -> &str {
    let bytes = line.as_bytes();
    let stamp = bytes.len() > 22
        && bytes[..19].iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b' ',
            13 | 16 => *b == b':',
            _ => b.is_ascii_digit(),
        });
    if !stamp || !line[19..].starts_with(" - ") {
        return line;
    }
    let rest = &line[22..];
    match rest.find(" - ") {
        Some(end) if rest[..end].trim().chars().all(|c| c.is_ascii_uppercase()) => &rest[end + 3..],
        _ => line,
    }
}

/// The event a (cleaned) line carries, if any.
pub(crate) fn parse(line: &str) -> Option<Event> {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("NOTE: ") {
        return parse_note(rest);
    }
    if let Some(rest) = line.strip_prefix("ERROR: ") {
        return Some(parse_error(rest));
    }
    if let Some(rest) = line.strip_prefix("WARNING: ") {
        return Some(Event::Warning { message: rest.to_string() });
    }
    if let Some(rest) = line.strip_prefix("Parsing recipes") {
        let percent = rest
            .strip_prefix(':')
            .and_then(|r| r.trim_start().split('%').next())
            .and_then(|p| p.trim().parse().ok());
        return Some(Event::Parsing { percent });
    }
    if let Some(rest) = line.strip_prefix("Parsing of ") {
        let recipes = rest.split_whitespace().next()?.parse().ok()?;
        return Some(Event::Parsed { recipes });
    }
    if let Some(rest) = line.strip_prefix("Sstate summary: ") {
        return parse_sstate(rest).map(Event::Sstate);
    }
    None
}

fn parse_note(rest: &str) -> Option<Event> {
    for (prefix, setscene) in [
        ("Running setscene task ", true),
        ("Running task ", false),
        ("Running noexec task ", false),
    ] {
        if let Some(rest) = rest.strip_prefix(prefix) {
            let (counts, task) = rest.split_once(" (")?;
            let (number, total) = counts.split_once(" of ")?;
            let number = number.trim().parse().ok()?;
            let total = total.trim().parse().ok()?;
            let task = short_task(task.strip_suffix(')').unwrap_or(task));
            return Some(if setscene {
                Event::Setscene { number, total, task }
            } else {
                Event::Task { number, total, task }
            });
        }
    }
    if let Some(rest) = rest.strip_prefix("recipe ") {
        let (recipe, rest) = rest.split_once(": task ")?;
        let (task, state) = rest.rsplit_once(": ")?;
        let state = match state.trim() {
            "Started" => TaskState::Started,
            "Succeeded" => TaskState::Succeeded,
            "Failed" => TaskState::Failed,
            _ => return None,
        };
        return Some(Event::TaskState { recipe: recipe.into(), task: task.into(), state });
    }
    if let Some(rest) = rest.strip_prefix("Tasks Summary: Attempted ") {
        let attempted = rest.split_whitespace().next()?.parse().ok()?;
        let reused = rest.split("of which ").nth(1)?.split_whitespace().next()?.parse().ok()?;
        let failed = if rest.contains("all succeeded") {
            0
        } else {
            rest.rsplit(" and ").next()?.split_whitespace().next()?.parse().ok()?
        };
        return Some(Event::TasksSummary { attempted, reused, failed });
    }
    None
}

fn parse_error(rest: &str) -> Event {
    if let Some(path) = rest.strip_prefix("Logfile of failure stored in: ") {
        return Event::FailureLog { path: path.trim().to_string() };
    }
    if let Some(task) = rest.strip_prefix("Task (")
        && let Some((task, tail)) = task.split_once(") failed")
        && tail.starts_with(" with exit code")
    {
        return Event::TaskFailed { task: short_task(task) };
    }
    // `<pn>-<pv>-<pr> do_<task>: message`
    if let Some((head, message)) = rest.split_once(": ")
        && let Some((recipe, task)) = head.split_once(' ')
        && task.starts_with("do_")
        && !recipe.contains('/')
        && !task.contains(' ')
    {
        return Event::TaskError {
            recipe: recipe.to_string(),
            task: task.to_string(),
            message: message.to_string(),
        };
    }
    Event::Error { message: rest.to_string() }
}

/// `/…/meta-qcom/recipes-kernel/linux/linux-qcom-rt_6.18.bb:do_compile` →
/// `linux-qcom-rt_6.18:do_compile`; `virtual:native:/…/zlib_1.3.bb:do_install` →
/// `zlib_1.3 (native):do_install`.
pub(crate) fn short_task(taskstring: &str) -> String {
    let Some((file, task)) = taskstring.rsplit_once(':') else {
        return taskstring.to_string();
    };
    let mut variant = None;
    let mut path = file;
    if let Some(rest) = file.strip_prefix("virtual:")
        && let Some((kind, rest)) = rest.split_once(':')
    {
        variant = Some(kind);
        path = rest;
    }
    if let Some(rest) = path.strip_prefix("mc:")
        && let Some((_, rest)) = rest.split_once(':')
    {
        path = rest;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let name = name.strip_suffix(".bb").unwrap_or(name);
    match variant {
        Some(kind) => format!("{name} ({kind}):{task}"),
        None => format!("{name}:{task}"),
    }
}

fn parse_sstate(rest: &str) -> Option<SstateSummary> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let number = |key: &str| -> Option<u64> {
        let at = words.iter().position(|w| *w == key)?;
        words.get(at + 1)?.parse().ok()
    };
    let percent = |key: &str| -> Option<u32> {
        let at = words.iter().position(|w| w.trim_end_matches([',', ')']) == key)?;
        words.get(at.checked_sub(1)?)?.trim_start_matches('(').trim_end_matches('%').parse().ok()
    };
    Some(SstateSummary {
        wanted: number("Wanted")?,
        local: number("Local")?,
        mirrors: number("Mirrors").unwrap_or(0),
        missed: number("Missed")?,
        current: number("Current").unwrap_or(0),
        match_percent: percent("match")?,
        complete_percent: percent("complete").unwrap_or(0),
    })
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
