//! Reads what the rt-tests programs write, detected by content: the `--json` file (rt-tests
//! 2.x names its keys `"cmdline:"` and `"rt_test_version:"`, colon included, and writes a bare
//! `nan` for an average without samples) and each program's plain output.
//!
//! [`sniff`] looks at the start of a file only, so a 1 GB cyclictest `-v` log is never read
//! here: it is [`Sniffed::Cyclictest`], for [`crate::results::cyclictest`]'s streaming parser.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Program;
pub(crate) use crate::formats::rt_tests::Row;

/// How much of a file [`sniff`] reads to recognise it.
const SNIFF_BYTES: usize = 64 * 1024;
/// The largest non-cyclictest output read whole (oslat, pi_stress and friends write kilobytes).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Which output a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// cyclictest output, or something only cyclictest's parser can judge.
    Cyclictest,
    /// Another rt-tests program's output, and whether it is JSON.
    Other { program: Program, json: bool },
}

/// What one output says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProgramOutput {
    pub program: Program,
    /// `json` or `text`.
    pub format: String,
    pub cmdline: Option<String>,
    pub version: Option<String>,
    /// JSON `return_code`.
    pub return_code: Option<i64>,
    pub rows: Vec<Row>,
    /// The program's own pass/fail statement, when it makes one.
    pub passed: Option<bool>,
    /// Lines in which the program reports a failure (a deadlock, a failed task, an error).
    pub failures: Vec<String>,
    /// Figures worth showing that are not latencies (inversions, samples above threshold).
    pub facts: Vec<String>,
    /// hwlatdetect: samples above its threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exceeding: Option<u64>,
    /// JSON figures written as `nan`/`inf` (read as unknown): `"avg": nan`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bad_figures: Vec<String>,
}

impl ProgramOutput {
    /// Whether the output held nothing to judge: no rows, statement, return code or fact.
    pub(crate) fn says_nothing(&self) -> bool {
        self.rows.is_empty()
            && self.passed.is_none()
            && self.return_code.is_none()
            && self.failures.is_empty()
            && self.exceeding.is_none()
            && self.facts.is_empty()
    }
}

/// The output cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutputError {
    #[error(transparent)]
    Input(crate::files::input::InputError),
    #[error("{} is larger than {} MiB, too large for {program} output; pass the program's own output file", path.display(), MAX_BYTES >> 20)]
    TooLarge { path: std::path::PathBuf, program: Program },
    #[error("{} is not valid {program} JSON: {cause}", path.display())]
    Json { path: std::path::PathBuf, program: Program, cause: serde_json::Error },
    #[error("{} holds no {program} results (it may have been cut short); rerun {program}", path.display())]
    Empty { path: std::path::PathBuf, program: Program },
}

/// Recognises a file from its first bytes and, for text that does not name its program, from
/// `hint` (the test that wrote it) or the file name (`pmqtest.txt`). The unit tests' short way:
/// commands open a file once ([`open`]) and call [`sniff_opened`] and [`read_opened`] on it.
#[cfg(test)]
pub(crate) fn sniff(path: &Path, hint: Option<Program>) -> Result<Sniffed, OutputError> {
    let opened = open(path)?;
    Ok(sniff_opened(&opened, hint))
}

/// Opens `path` once and reads what [`sniff_opened`] looks at; [`read_opened`] reads the rest.
pub(crate) fn open(path: &Path) -> Result<crate::files::input::Opened, OutputError> {
    crate::files::input::Opened::open(path, SNIFF_BYTES).map_err(OutputError::Input)
}

/// [`sniff`] of a file already opened (its head holds at least [`SNIFF_BYTES`] when it has them).
pub(crate) fn sniff_opened(opened: &crate::files::input::Opened, hint: Option<Program>) -> Sniffed {
    sniff_head(
        &opened.head()[..opened.head().len().min(SNIFF_BYTES)],
        opened.cut(),
        opened.path(),
        hint,
    )
}

/// What the first bytes of the file at `path` say it is (`cut`: the file goes on after them).
fn sniff_head(head: &[u8], cut: bool, path: &Path, hint: Option<Program>) -> Sniffed {
    let full = cut || head.len() == SNIFF_BYTES;
    let text = whole_lines(head, full);
    let from_name = || {
        let name = path.file_name()?.to_string_lossy().into_owned();
        Program::ALL
            .into_iter()
            .filter(|p| *p != Program::Cyclictest)
            .find(|p| name.contains(p.name()))
    };
    match detect(&text, hint.or_else(from_name)) {
        Some((program, json)) if program != Program::Cyclictest => Sniffed::Other { program, json },
        _ => Sniffed::Cyclictest,
    }
}

/// The complete lines of a file's first bytes: when the read stopped at [`SNIFF_BYTES`] (`cut`),
/// the line that runs past it is dropped, so a `T:` line cut before its ` I:` can never make a
/// cyclictest output look like signaltest's. A head with no line end is kept whole.
fn whole_lines(head: &[u8], cut: bool) -> std::borrow::Cow<'_, str> {
    let end = match head.iter().rposition(|b| *b == b'\n') {
        Some(at) if cut => at + 1,
        _ => head.len(),
    };
    String::from_utf8_lossy(&head[..end])
}

/// The program and format of an output's beginning.
fn detect(head: &str, hint: Option<Program>) -> Option<(Program, bool)> {
    let trimmed = head.trim_start();
    if trimmed.starts_with('{') {
        // `"cmdline:": "oslat -c 1 …"` sits in the first lines of every rt-tests JSON file.
        let program = head.lines().take(8).find_map(|line| {
            let at = line.find("\"cmdline")?;
            let (_, value) = line[at..].split_once("\": ")?;
            Program::from_cmdline(value.trim().trim_start_matches('"'))
        });
        return Some((program.or(hint)?, true));
    }
    let has = |s: &str| memchr::memmem::find(head.as_bytes(), s.as_bytes()).is_some();
    let program = if has("Counter Freq:") || has("(including overflows)") {
        Program::Oslat
    } else if has("deadline thread") || has("Creating cpuset") || has("Tested at ") {
        Program::Cyclicdeadline
    } else if has("hwlatdetect:") || has("Samples exceeding threshold:") {
        Program::Hwlatdetect
    } else if has("Total inversion performed")
        || has("Starting PI Stress Test")
        || has("WATCHDOG triggered")
    {
        Program::PiStress
    } else if has("Iter:") || has("Parent pid:") || has(" Passed!") || has(" Failed!") {
        Program::RtMigrateTest
    } else if has("forktest#") || has("All tests PASSED") || has("One or more tests FAILED") {
        Program::Ssdd
    } else if has("Running in process mode")
        || has("Running in threaded mode")
        || has("Each sender will pass")
    {
        Program::Hackbench
    } else if head.lines().any(is_pair_result) {
        // pmqtest, ptsematest, sigwaittest and svsematest print the same lines.
        match hint {
            Some(
                p @ (Program::Pmqtest
                | Program::Ptsematest
                | Program::Sigwaittest
                | Program::Svsematest),
            ) => p,
            _ => return None,
        }
    } else if is_signaltest(head) {
        Program::Signaltest
    } else {
        return hint.filter(|p| *p != Program::Cyclictest).map(|p| (p, false));
    };
    Some((program, false))
}

/// signaltest's `T:` lines are cyclictest's without the interval: the head is signaltest's only
/// when that explains every `T:` line in it. One `T:` line with ` I:` is cyclictest's (signaltest
/// never prints an interval), wherever the other lines were cut.
fn is_signaltest(head: &str) -> bool {
    let mut thread_lines = head.lines().map(str::trim_start).filter(|l| l.starts_with("T:"));
    let mut any = false;
    let all_without_interval = thread_lines.all(|l| {
        any |= l.contains(" P:") && l.contains(" C:");
        !l.contains(" I:")
    });
    any && all_without_interval
}

/// `#1 -> #0, Min    1, Cur    6, Avg    4, Max 1231`
fn is_pair_result(line: &str) -> bool {
    let l = line.trim_start();
    l.starts_with('#') && l.contains(" -> #") && l.contains("Max")
}

/// Reads a whole output of `program` (from [`sniff`]).
pub(crate) fn read(
    path: &Path,
    program: Program,
    json: bool,
) -> Result<ProgramOutput, OutputError> {
    read_opened(open(path)?, program, json)
}

/// [`read`] of a file already opened by [`open`]: the rest of it is read, the path is not
/// opened again.
pub(crate) fn read_opened(
    opened: crate::files::input::Opened,
    program: Program,
    json: bool,
) -> Result<ProgramOutput, OutputError> {
    let path = opened.path().to_path_buf();
    let path = path.as_path();
    let bytes = opened.read_all(MAX_BYTES).map_err(|err| match err {
        crate::files::input::InputError::TooBig { .. } => {
            OutputError::TooLarge { path: path.into(), program }
        }
        other => OutputError::Input(other),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let outcome = if json {
        parse_json(&text, program).map_err(|cause| OutputError::Json {
            path: path.into(),
            program,
            cause,
        })?
    } else {
        parse_text(&text, program)
    };
    if outcome.says_nothing() {
        return Err(OutputError::Empty { path: path.into(), program });
    }
    Ok(outcome)
}

/// Two outputs of one invocation (JSON and plain text) as one outcome: rows from the first
/// that has them, every statement of both.
pub(crate) fn merge(first: Option<ProgramOutput>, next: ProgramOutput) -> ProgramOutput {
    let Some(mut merged) = first else { return next };
    if merged.rows.is_empty() {
        merged.rows = next.rows;
    }
    merged.passed = match (merged.passed, next.passed) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (a, b) => a.or(b),
    };
    merged.return_code = merged.return_code.or(next.return_code);
    merged.bad_figures.extend(next.bad_figures);
    merged.exceeding = merged.exceeding.or(next.exceeding);
    for failure in next.failures {
        if !merged.failures.contains(&failure) {
            merged.failures.push(failure);
        }
    }
    for fact in next.facts {
        if !merged.facts.contains(&fact) {
            merged.facts.push(fact);
        }
    }
    merged
}

fn outcome(program: Program, format: &str) -> ProgramOutput {
    ProgramOutput {
        program,
        format: format.into(),
        cmdline: None,
        version: None,
        return_code: None,
        rows: Vec::new(),
        passed: None,
        failures: Vec::new(),
        facts: Vec::new(),
        exceeding: None,
        bad_figures: Vec::new(),
    }
}

/// Parses an rt-tests `--json` file of `program`.
pub(crate) fn parse_json(text: &str, program: Program) -> Result<ProgramOutput, serde_json::Error> {
    // A thread without samples writes `"avg": nan` (or `-nan`), which is not JSON.
    let mut cleaned = String::with_capacity(text.len());
    let mut bad_figures = Vec::new();
    for line in text.lines() {
        let t = line.trim_end().trim_end_matches(',');
        let bare =
            ["-nan", "nan", "-inf", "inf"].iter().any(|bad| t.ends_with(&format!(": {bad}")));
        if bare {
            let (key, _) = line.rsplit_once(':').unwrap_or((line, ""));
            if bad_figures.len() < 20 {
                bad_figures.push(format!("`{}`", t.trim()));
            }
            cleaned.push_str(key);
            cleaned.push_str(": null");
            if line.trim_end().ends_with(',') {
                cleaned.push(',');
            }
        } else {
            cleaned.push_str(line);
        }
        cleaned.push('\n');
    }
    let value: Value = serde_json::from_str(&cleaned)?;
    let mut out = outcome(program, "json");
    out.bad_figures = bad_figures;
    let text_of =
        |keys: &[&str]| keys.iter().find_map(|k| value.get(*k)?.as_str().map(str::to_string));
    out.cmdline = text_of(&["cmdline:", "cmdline"]);
    out.version = text_of(&["rt_test_version:", "rt_test_version"]);
    out.return_code = value.get("return_code").and_then(Value::as_i64);
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
    let count = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    let cpu = |v: &Value| v.get("cpu").and_then(Value::as_u64).and_then(|c| u32::try_from(c).ok());
    if let Some(threads) = value.get("thread").and_then(Value::as_object) {
        for (key, t) in threads {
            let mut row = Row { thread: key.parse().unwrap_or(0), ..Row::default() };
            match program {
                Program::Pmqtest
                | Program::Ptsematest
                | Program::Sigwaittest
                | Program::Svsematest => {
                    let sender = t.get("sender").unwrap_or(&Value::Null);
                    let receiver = t.get("receiver").unwrap_or(&Value::Null);
                    row.cpu = cpu(receiver).or_else(|| cpu(sender));
                    row.samples = count(sender, "samples");
                    row.min_us = num(receiver, "min");
                    row.avg_us = num(receiver, "avg");
                    row.max_us = num(receiver, "max");
                }
                _ => {
                    row.cpu = cpu(t);
                    row.samples = count(t, "cycles");
                    row.min_us = num(t, "min");
                    row.avg_us = num(t, "avg");
                    row.max_us = num(t, "max");
                    if let Some(h) = t.get("histogram").and_then(Value::as_object) {
                        let mut buckets: Vec<(u64, u64)> = h
                            .iter()
                            .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
                            .collect();
                        buckets.sort_unstable();
                        row.samples = Some(buckets.iter().map(|b| b.1).sum());
                        row.histogram = buckets;
                    }
                    if program == Program::RtMigrateTest {
                        if let Some(prio) = count(t, "prio") {
                            out.facts.push(format!(
                                "task {} (priority {prio}): run time max {} µs",
                                row.thread,
                                row.max_us.unwrap_or(0.0)
                            ));
                        }
                        // Run times, not latencies: kept as facts, not judged as rows.
                        continue;
                    }
                }
            }
            out.rows.push(row);
        }
        out.rows.sort_by_key(|r| r.thread);
    }
    if let Some(inversions) = value.get("inversion").and_then(Value::as_u64) {
        out.facts.push(format!("{inversions} priority inversions performed"));
    }
    Ok(out)
}

/// Parses `program`'s plain output.
pub(crate) fn parse_text(text: &str, program: Program) -> ProgramOutput {
    let mut out = outcome(program, "text");
    // Live screens redraw with ANSI cursor movement; the escapes carry no data.
    let text = strip_ansi(text);
    match program {
        Program::Oslat => oslat_text(&text, &mut out),
        Program::Pmqtest | Program::Ptsematest | Program::Sigwaittest | Program::Svsematest => {
            pair_text(&text, &mut out)
        }
        Program::Signaltest | Program::Cyclicdeadline => t_lines(&text, &mut out),
        Program::PiStress => {
            for line in text.lines() {
                if let Some(n) = line.strip_prefix("Total inversion performed:") {
                    out.facts.push(format!("{} priority inversions performed", n.trim()));
                }
                if line.contains("deadlocked") || line.contains("WATCHDOG") {
                    out.failures.push(line.trim().to_string());
                }
            }
        }
        Program::RtMigrateTest => {
            for line in text.lines() {
                match line.trim() {
                    "Passed!" => out.passed = Some(true),
                    "Failed!" => out.passed = Some(false),
                    l if l.starts_with("Task ") && l.ends_with("FAILED") => {
                        out.failures.push(l.to_string());
                    }
                    _ => {}
                }
            }
        }
        Program::Ssdd => {
            for line in text.lines() {
                let l = line.trim();
                if l.starts_with("All tests PASSED") {
                    out.passed = Some(true);
                } else if l.starts_with("One or more tests FAILED") {
                    out.passed = Some(false);
                } else if l.contains("ERROR") {
                    out.failures.push(l.to_string());
                }
            }
        }
        Program::Hackbench => {
            for line in text.lines() {
                if let Some(t) = line.strip_prefix("Time:") {
                    out.facts.push(format!("hackbench round took {} s", t.trim()));
                }
            }
        }
        Program::Hwlatdetect => hwlat_text(&text, &mut out),
        Program::Cyclictest => {}
    }
    out
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// oslat's report: one column per measured CPU.
fn oslat_text(text: &str, out: &mut ProgramOutput) {
    let values = |rest: &str| -> Vec<String> {
        rest.split_whitespace().take_while(|w| !w.starts_with('(')).map(str::to_string).collect()
    };
    let mut rows: Vec<Row> = Vec::new();
    for line in text.lines() {
        let Some((label, rest)) = line.split_once(':') else { continue };
        let label = label.trim();
        let vals = values(rest);
        if label == "Core" {
            let cpus: Vec<u32> = vals.iter().filter_map(|v| v.parse().ok()).collect();
            rows = cpus
                .iter()
                .enumerate()
                .map(|(i, c)| Row { thread: i as u32, cpu: Some(*c), ..Row::default() })
                .collect();
            continue;
        }
        if rows.is_empty() {
            continue;
        }
        if let Some(bucket) = label.strip_suffix("(us)").map(str::trim) {
            let Ok(bucket) = bucket.parse::<u64>() else { continue };
            for (row, v) in rows.iter_mut().zip(&vals) {
                if let Ok(n) = v.parse::<u64>() {
                    if n > 0 {
                        row.histogram.push((bucket, n));
                    }
                    *row.samples.get_or_insert(0) += n;
                }
            }
            continue;
        }
        let field = match label {
            "Minimum" => |r: &mut Row, v| r.min_us = Some(v),
            "Average" => |r: &mut Row, v| r.avg_us = Some(v),
            "Maximum" => |r: &mut Row, v| r.max_us = Some(v),
            _ => continue,
        };
        for (row, v) in rows.iter_mut().zip(&vals) {
            if let Ok(v) = v.parse::<f64>() {
                field(row, v);
            }
        }
    }
    out.rows = rows;
}

/// `#1 -> #0, Min    1, Cur    6, Avg    4, Max 1231`, after `#0: ID…, P0, CPU0, I1000; #1: …, Cycles 1813`.
fn pair_text(text: &str, out: &mut ProgramOutput) {
    let mut cpus: Vec<Option<u32>> = Vec::new();
    let mut cycles: Vec<Option<u64>> = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('#') && l.contains("; #") {
            let receiver = l.split("; ").nth(1).unwrap_or("");
            let field = |prefix: &str| {
                receiver
                    .split(", ")
                    .find_map(|f| f.trim().strip_prefix(prefix)?.trim().parse::<u64>().ok())
            };
            cpus.push(field("CPU").and_then(|c| u32::try_from(c).ok()));
            cycles.push(field("Cycles"));
            continue;
        }
        if !is_pair_result(l) {
            continue;
        }
        let value = |name: &str| {
            l.split(", ").find_map(|f| f.trim().strip_prefix(name)?.trim().parse::<f64>().ok())
        };
        let index = out.rows.len();
        out.rows.push(Row {
            thread: index as u32,
            cpu: cpus.get(index).copied().flatten(),
            samples: cycles.get(index).copied().flatten(),
            min_us: value("Min"),
            avg_us: value("Avg"),
            max_us: value("Max"),
            histogram: Vec::new(),
        });
    }
}

/// `T: 0 (18733) P:90 C:   3089 Min:      4 Act:    4 Avg:    9 Max:     488` (the last block
/// of a live screen counts).
fn t_lines(text: &str, out: &mut ProgramOutput) {
    let mut rows: Vec<Row> = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let Some(rest) = l.strip_prefix("T:") else { continue };
        let mut words = rest.split_whitespace();
        let Some(Ok(thread)) = words.next().map(str::parse::<u32>) else { continue };
        let value = |name: &str| {
            let at = l.find(name)? + name.len();
            l[at..].split_whitespace().next()?.parse::<f64>().ok()
        };
        let row = Row {
            thread,
            cpu: None,
            samples: value(" C:").map(|c| c as u64),
            min_us: value("Min:"),
            avg_us: value("Avg:"),
            max_us: value("Max:"),
            histogram: Vec::new(),
        };
        match rows.iter_mut().find(|r| r.thread == thread) {
            Some(old) => *old = row,
            None => rows.push(row),
        }
    }
    rows.sort_by_key(|r| r.thread);
    out.rows = rows;
}

/// hwlatdetect's summary: `Max Latency: 17us` (or `Below threshold`), `Samples recorded: N`,
/// `Samples exceeding threshold: N`, `N SMIs occured on cpu C`.
fn hwlat_text(text: &str, out: &mut ProgramOutput) {
    for line in text.lines() {
        let l = line.trim();
        if let Some(v) = l.strip_prefix("Max Latency:") {
            let v = v.trim();
            let max = if v.starts_with("Below") {
                Some(0.0)
            } else {
                v.trim_end_matches("us").parse().ok()
            };
            out.rows = vec![Row { max_us: max, ..Row::default() }];
            out.facts.push(format!("max hardware latency: {v}"));
        } else if let Some(v) = l.strip_prefix("Samples recorded:") {
            if let (Some(row), Ok(n)) = (out.rows.first_mut(), v.trim().parse()) {
                row.samples = Some(n);
            }
        } else if let Some(v) = l.strip_prefix("Samples exceeding threshold:") {
            out.exceeding = v.trim().parse().ok();
        } else if l.contains("SMIs occured on cpu") || l.starts_with("SMIs during run:") {
            out.facts.push(l.to_string());
        } else if l.contains("not available") {
            out.failures.push(l.to_string());
        }
    }
}

#[cfg(test)]
mod tests;
