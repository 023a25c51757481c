//! Reading a LAVA job log: the YAML list `lavacli jobs logs --raw ID` prints (and LAVA keeps
//! as the job's `output.yaml`), one `{dt, lvl, msg}` entry per line. Only `target` lines (the
//! board's serial console) are read; the raw outputs of cyclictest and the other rt-tests
//! programs are the lines between the [`markers`](super::markers) the job printed, each tagged
//! with its scenario, test, invocation and format.
//!
//! A kernel message can land between two output lines on a serial console; lines shaped like
//! one (`[   12.345678] …`) inside a raw output are dropped and counted.

use serde::Deserialize;

use super::markers;

/// One log entry; `msg` is a string for console lines, a mapping for results and input.
#[derive(Debug, Deserialize)]
struct Entry {
    lvl: String,
    #[serde(default)]
    msg: serde_yaml::Value,
}

/// What a LAVA job log holds for rtbuild.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LavaLog {
    /// From the `RUN` marker.
    pub machine: Option<String>,
    /// The threshold the `RUN` marker printed: the board's console said it, so it is shown
    /// beside the verdict but never judged against (the threshold is the job's, given on the
    /// command line).
    pub threshold_us: Option<f64>,
    pub noise_us: Option<u64>,
    pub rt_cpus: Option<String>,
    /// `--tests` of the job, in order (empty for a job that printed none: cyclictest only).
    pub tests: Vec<String>,
    /// `--scenario` of the job, in order.
    pub scenarios: Vec<String>,
    /// Every raw output, in log order.
    pub outputs: Vec<RawOutput>,
    /// Tests the board could not run.
    pub skipped: Vec<Skipped>,
    /// `checks=` of the `RUN` marker: [`markers::STATE_CHECKS`] when the job prints the
    /// board's state around each scenario (empty for a job from before it did).
    pub checks: Option<String>,
    /// The board's states around the scenarios, in log order.
    pub states: Vec<BoardState>,
    /// cyclictest's status blocks, one frame per scenario the job printed them for, in log
    /// order (`when` is empty).
    pub statuses: Vec<BoardState>,
}

/// The board's state printed before or after one scenario (the `=== section` text), or the
/// status blocks cyclictest printed in one scenario: text between a begin and an end marker
/// that is not a raw output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoardState {
    pub scenario: String,
    /// `before` or `after`; empty for status blocks.
    pub when: String,
    pub text: String,
    /// The log line its begin marker is on.
    pub line: usize,
    /// Whether its end marker was reached before any other marker or the end of the log.
    pub complete: bool,
}

/// One raw output between a begin and an end marker.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawOutput {
    pub scenario: String,
    /// The program (`cyclictest` in logs of jobs that ran nothing else and did not say).
    pub test: String,
    /// The invocation: `oslat`, `pmqtest-cpu3`.
    pub run: String,
    /// `json`, `text` (the program's standard output) or `stderr`.
    pub format: String,
    /// The output, one line per log line.
    pub raw: String,
    /// The program's exit status, when the end marker was reached.
    pub exit: Option<i32>,
    /// Kernel-message lines dropped from inside the output.
    pub dropped: usize,
}

/// A test the job skipped on the board, and why (`no-hwlat-tracer`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Skipped {
    pub scenario: String,
    pub test: String,
    pub reason: String,
}

/// The file is not a LAVA log, or holds nothing rtbuild printed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LogError {
    #[error(
        "it is not a LAVA job log ({0}); save one with `lavacli jobs logs --raw JOB-ID > FILE`"
    )]
    Yaml(serde_yaml::Error),
    #[error(
        "the LAVA job log holds no rtbuild raw output (no `{}` line); was the job made by `rtbuild lava`, and did it reach the test?",
        markers::BEGIN
    )]
    NoRaw,
    /// The job prints its `RUN` marker once: a second one is text the board printed.
    #[error(
        "the LAVA job log has a second `{}` marker at line {second} (the first is at line {first}); a job of `rtbuild lava` prints one, so the board's console printed the other: judge the log of one rtbuild job",
        markers::RUN
    )]
    SecondRun { first: usize, second: usize },
}

/// Whether `head` (the start of a file) looks like a LAVA job log: a YAML list whose first
/// entry has `dt`/`lvl` keys (the server's log, `lavacli jobs logs --raw`), or the same
/// entries one flow mapping per line without the list dash (what `lava-run` run offline
/// writes: its logger's plain stream handler, on stderr).
pub(crate) fn looks_like(head: &str) -> bool {
    let Some(first) = head.lines().map(str::trim_start).find(|l| !l.is_empty()) else {
        return false;
    };
    let keyed = first.contains("\"lvl\"") || first.contains("lvl:") || first.contains("\"dt\"");
    keyed && (first.starts_with("- ") || first.starts_with("{\"dt\""))
}

/// Calls `each` with every entry of either log form (see [`looks_like`]) and the line of the
/// file it starts on, one at a time: a log of hundreds of MB is never held as one YAML document
/// (the loader needed about 16 times the file's size). In the listed form an entry starts at a
/// line beginning `- `; the lines after it up to the next such line (a wrapped message) belong
/// to it.
fn each_entry(
    text: &str,
    mut each: impl FnMut(usize, Entry) -> Result<(), LogError>,
) -> Result<(), LogError> {
    let listed = text
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with("- "));
    if !listed {
        // lava-run's own lines: one mapping each. Anything else on its stderr (a Python
        // warning) is not an entry.
        for (at, line) in text.lines().enumerate().filter(|(_, l)| l.starts_with('{')) {
            each(at + 1, crate::text::yaml::from_str(line).map_err(LogError::Yaml)?)?;
        }
        return Ok(());
    }
    let mut start = 0;
    let mut start_line = 1;
    let mut at = 0;
    let mut line = 1;
    let mut parse = |chunk: &str, first_line: usize| -> Result<(), LogError> {
        if chunk.trim().is_empty() {
            return Ok(());
        }
        let entries: Vec<Entry> = crate::text::yaml::from_str(chunk).map_err(LogError::Yaml)?;
        entries.into_iter().try_for_each(|entry| each(first_line, entry))
    };
    while at < text.len() {
        let end = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
        if at > start && text[at..].starts_with("- ") {
            parse(&text[start..at], start_line)?;
            start = at;
            start_line = line;
        }
        at = end;
        line += 1;
    }
    parse(&text[start..], start_line)
}

/// `[ 1234.567890] text`: a kernel message on the console.
fn kernel_message(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('[') else { return false };
    let Some((stamp, _)) = rest.split_once(']') else { return false };
    let stamp = stamp.trim();
    let mut parts = stamp.splitn(2, '.');
    let whole = parts.next().unwrap_or_default();
    let frac = parts.next().unwrap_or_default();
    !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && !frac.is_empty()
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// A console line as the target printed it. LAVA's console logger (`ShellLogger` in
/// `lava_dispatcher/shell.py`) prefixes every `"` of a target line with a backslash before the
/// line reaches the log (in `lava-run`'s output and the server's log alike), so JSON printed by
/// the board arrives as `{\"key\": 1}`. Every `"` in such a message was escaped, so dropping
/// one backslash before each `"` gives the line back exactly (a `\"` the board printed was
/// logged as `\\"`); a line with no escaped quote is left as it is.
fn unescape_console(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains("\\\"") {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'"') {
            continue;
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// Parses a whole job log.
pub(crate) fn parse(text: &str) -> Result<LavaLog, LogError> {
    let mut log = LavaLog::default();
    let mut open: Option<RawOutput> = None;
    let mut run_marker: Option<usize> = None;
    let mut state: Option<(Frame, BoardState)> = None;
    each_entry(text, |at, entry| {
        if entry.lvl != "target" {
            return Ok(());
        }
        let Some(msg) = entry.msg.as_str() else { return Ok(()) };
        for line in msg.lines() {
            let line = unescape_console(line.trim_end_matches('\r'));
            if markers::fields(&line, markers::RUN).is_some() {
                // The first marker is the job's; a later one would let the board pick the limit.
                if let Some(first) = run_marker {
                    return Err(LogError::SecondRun { first, second: at });
                }
                run_marker = Some(at);
            }
            if take_state_line(&mut log, &mut open, &mut state, &line, at) {
                continue;
            }
            take_line(&mut log, &mut open, &line);
        }
        Ok(())
    })?;
    log.outputs.extend(open);
    if let Some((frame, unfinished)) = state {
        frame.list(&mut log).push(unfinished);
    }
    if log.outputs.is_empty() && log.skipped.is_empty() {
        return Err(LogError::NoRaw);
    }
    Ok(log)
}

/// The frames of text that are not raw outputs.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// The board's state around a scenario.
    State,
    /// cyclictest's status blocks.
    Status,
}

impl Frame {
    fn markers(self) -> (&'static str, &'static str) {
        match self {
            Frame::State => (markers::STATE_BEGIN, markers::STATE_END),
            Frame::Status => (markers::STATUS_BEGIN, markers::STATUS_END),
        }
    }

    fn list(self, log: &mut LavaLog) -> &mut Vec<BoardState> {
        match self {
            Frame::State => &mut log.states,
            Frame::Status => &mut log.statuses,
        }
    }
}

/// One console line for a state or status frame: a begin marker opens one (cutting short a
/// raw output still open), the matching end marker closes it, any other line goes into the
/// open frame. Any other marker inside a frame ends the frame unfinished (and is read as
/// usual). Returns whether the line was taken.
fn take_state_line(
    log: &mut LavaLog,
    open: &mut Option<RawOutput>,
    state: &mut Option<(Frame, BoardState)>,
    line: &str,
    at: usize,
) -> bool {
    if let Some((frame, current)) = state.as_mut() {
        let frame = *frame;
        if let Some(fields) = markers::fields(line, frame.markers().1) {
            let same = markers::get(&fields, "scenario") == Some(current.scenario.as_str())
                && markers::get(&fields, "when").unwrap_or_default() == current.when.as_str();
            current.complete = same;
            if let Some((_, done)) = state.take() {
                frame.list(log).push(done);
            }
            return true;
        }
        if !line.starts_with(markers::PREFIX) {
            current.text.push_str(line);
            current.text.push('\n');
            return true;
        }
        if let Some((_, unfinished)) = state.take() {
            frame.list(log).push(unfinished);
        }
    }
    for frame in [Frame::State, Frame::Status] {
        let Some(fields) = markers::fields(line, frame.markers().0) else { continue };
        // The job prints a frame outside every raw output: one inside it cuts the output short.
        log.outputs.extend(open.take());
        let get = |key| markers::get(&fields, key).unwrap_or_default().to_string();
        let begun = BoardState {
            scenario: get("scenario"),
            when: get("when"),
            text: String::new(),
            line: at,
            complete: false,
        };
        *state = Some((frame, begun));
        return true;
    }
    false
}

/// One console line: a marker opens or closes an output, or the line belongs to the open one.
fn take_line(log: &mut LavaLog, open: &mut Option<RawOutput>, line: &str) {
    let list = |value: Option<&str>| -> Vec<String> {
        value.map_or_else(Vec::new, |v| {
            v.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()
        })
    };
    if let Some(fields) = markers::fields(line, markers::RUN) {
        let get = |key| markers::get(&fields, key);
        log.machine = get("machine").map(str::to_string);
        log.threshold_us = get("threshold_us").and_then(|t| t.parse().ok());
        log.noise_us = get("noise_us").and_then(|t| t.parse().ok());
        log.rt_cpus = get("rt_cpus").map(str::to_string);
        log.tests = list(get("tests"));
        log.scenarios = list(get("scenarios"));
        log.checks = get("checks").map(str::to_string);
    } else if let Some(fields) = markers::fields(line, markers::BEGIN) {
        // A begin without an end: the job stopped inside that output.
        log.outputs.extend(open.take());
        let get = |key| markers::get(&fields, key);
        let test = get("test").unwrap_or("cyclictest").to_string();
        *open = Some(RawOutput {
            scenario: get("scenario").unwrap_or("cyclictest").to_string(),
            run: get("run").unwrap_or(&test).to_string(),
            test,
            format: get("format").unwrap_or("json").to_string(),
            raw: String::new(),
            exit: None,
            dropped: 0,
        });
    } else if let Some(fields) = markers::fields(line, markers::END) {
        if let Some(mut output) = open.take() {
            output.exit = markers::get(&fields, "exit").and_then(|e| e.parse().ok());
            log.outputs.push(output);
        }
    } else if let Some(fields) = markers::fields(line, markers::SKIPPED) {
        let get = |key| markers::get(&fields, key).unwrap_or_default().to_string();
        log.skipped.push(Skipped {
            scenario: get("scenario"),
            test: get("test"),
            reason: get("reason"),
        });
    } else if let Some(output) = open.as_mut() {
        if kernel_message(line) {
            output.dropped += 1;
        } else {
            output.raw.push_str(line);
            output.raw.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(lvl: &str, msg: &str) -> String {
        format!(
            "- {{\"dt\": \"2026-11-30T14:00:00.000000\", \"lvl\": \"{lvl}\", \"msg\": {}}}\n",
            serde_json::to_string(msg).unwrap()
        )
    }

    #[test]
    fn reads_raw_outputs_between_markers_from_target_lines_only() {
        let mut text = String::new();
        text.push_str(&entry("info", "<<<RTBUILD-RAW-BEGIN scenario=nope format=json>>>"));
        text.push_str(&entry("target", "+ set +x"));
        text.push_str(&entry(
            "target",
            "<<<RTBUILD-RUN machine=iq-9075-evk threshold_us=80 scenarios=idle duration=5m>>>",
        ));
        text.push_str(&entry("target", "<<<RTBUILD-RAW-BEGIN scenario=idle format=json>>>\r"));
        text.push_str(&entry("target", "{"));
        text.push_str(&entry("target", "[  812.123456] sched: RT throttling activated"));
        text.push_str(&entry("target", "}"));
        text.push_str(&entry("target", "<<<RTBUILD-RAW-END scenario=idle exit=0>>>"));
        text.push_str(&entry("target", "<<<RTBUILD-RAW-BEGIN scenario=stress format=json>>>"));
        text.push_str(&entry("target", "{ \"cut\":"));
        text.push_str("- {\"dt\": \"2026-11-30T14:00:01\", \"lvl\": \"results\", \"msg\": {\"case\": \"cyclictest-idle\", \"definition\": \"1_rtbuild-rt\", \"result\": \"pass\", \"measurement\": \"12\", \"units\": \"us\"}}\n");
        assert!(looks_like(&text));
        let log = parse(&text).unwrap();
        assert_eq!(log.machine.as_deref(), Some("iq-9075-evk"));
        assert_eq!(log.threshold_us, Some(80.0));
        assert_eq!(log.outputs.len(), 2);
        assert_eq!(log.outputs[0].raw, "{\n}\n");
        assert_eq!((log.outputs[0].exit, log.outputs[0].dropped), (Some(0), 1));
        // A job that printed no `test=` ran cyclictest only.
        assert_eq!(
            (log.outputs[0].test.as_str(), log.outputs[0].run.as_str()),
            ("cyclictest", "cyclictest")
        );
        assert_eq!((log.outputs[1].scenario.as_str(), log.outputs[1].exit), ("stress", None));
    }

    #[test]
    fn each_test_run_and_format_and_skipped_tests_are_kept_apart() {
        let mut text = String::new();
        for line in [
            "<<<RTBUILD-RUN machine=m threshold_us=100 noise_us=15 rt_cpus=2-3 tests=oslat,cyclictest,hwlatdetect scenarios=idle duration=2s>>>",
            "<<<RTBUILD-RAW-BEGIN scenario=idle test=rt-migrate-test run=rt-migrate-test format=text>>>",
            " Passed!",
            "<<<RTBUILD-RAW-END scenario=idle test=rt-migrate-test run=rt-migrate-test exit=1>>>",
            "<<<RTBUILD-RAW-BEGIN scenario=idle test=pmqtest run=pmqtest-cpu3 format=stderr>>>",
            "pmqtest: no such file",
            "<<<RTBUILD-RAW-END scenario=idle test=pmqtest run=pmqtest-cpu3 exit=2>>>",
            "<<<RTBUILD-SKIPPED scenario=idle test=hwlatdetect reason=no-hwlat-tracer>>>",
        ] {
            text.push_str(&entry("target", line));
        }
        let log = parse(&text).unwrap();
        assert_eq!((log.noise_us, log.rt_cpus.as_deref()), (Some(15), Some("2-3")));
        assert_eq!(log.tests, ["oslat", "cyclictest", "hwlatdetect"]);
        assert_eq!(log.scenarios, ["idle"]);
        let o = &log.outputs;
        assert_eq!(
            (o[0].test.as_str(), o[0].format.as_str(), o[0].exit),
            ("rt-migrate-test", "text", Some(1))
        );
        assert_eq!(
            (o[1].run.as_str(), o[1].format.as_str(), o[1].raw.as_str()),
            ("pmqtest-cpu3", "stderr", "pmqtest: no such file\n")
        );
        assert_eq!(
            log.skipped,
            [Skipped {
                scenario: "idle".into(),
                test: "hwlatdetect".into(),
                reason: "no-hwlat-tracer".into()
            }]
        );
    }

    #[test]
    fn other_files_are_not_logs() {
        assert!(!looks_like("# Histogram\n000000 000001\n"));
        assert!(!looks_like("{\"thread\": {}}"));
        assert!(matches!(parse(&entry("target", "hello")), Err(LogError::NoRaw)));
        assert!(matches!(parse("- [unclosed"), Err(LogError::Yaml(_))));
    }

    /// A second `RUN` marker is text the board printed (here raising the threshold to let a
    /// FAIL pass): the log is refused, naming the lines of both markers.
    #[test]
    fn a_forged_second_run_marker_is_an_error_naming_both_lines() {
        let mut text = String::new();
        for line in [
            "<<<RTBUILD-RUN machine=m threshold_us=100 rt_cpus=1 tests=cyclictest scenarios=idle duration=2s>>>",
            "<<<RTBUILD-RAW-BEGIN scenario=idle test=cyclictest run=cyclictest format=json>>>",
            "{}",
            "<<<RTBUILD-RAW-END scenario=idle test=cyclictest run=cyclictest exit=0>>>",
            "<<<RTBUILD-RUN machine=m threshold_us=100000 rt_cpus=1 tests=cyclictest scenarios=idle duration=2s>>>",
        ] {
            text.push_str(&entry("target", line));
        }
        let err = parse(&text).unwrap_err();
        assert!(matches!(err, LogError::SecondRun { first: 1, second: 5 }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "the LAVA job log has a second `<<<RTBUILD-RUN` marker at line 5 (the first is at line 1); a job of `rtbuild lava` prints one, so the board's console printed the other: judge the log of one rtbuild job"
        );
        // lava-run's form numbers its lines the same way (a stderr line between them).
        let offline = text.replace("- {", "{").replacen('\n', "\nWarning: x\n", 1);
        assert!(matches!(parse(&offline), Err(LogError::SecondRun { first: 1, second: 6 })));
    }

    /// A line the way LAVA's console logger stores it: every `"` of the board's line behind a
    /// backslash (`{\"a\": 1}`), a backslash-quote the board printed as `\\"`.
    #[test]
    fn console_lines_get_their_quotes_back() {
        assert_eq!(super::unescape_console(r#"{\"a\": \"x\\"y\"}"#), r#"{"a": "x\"y"}"#);
        assert_eq!(super::unescape_console("no quotes [1.5] \\n"), "no quotes [1.5] \\n");
    }

    /// cyclictest's status blocks between their markers, per scenario; a block outside the
    /// frame is not kept; another marker inside the frame ends it unfinished.
    #[test]
    fn status_frames_are_kept_apart_from_raw_outputs() {
        let mut text = String::new();
        for line in [
            "<<<RTBUILD-RUN machine=m threshold_us=100 rt_cpus=1 tests=cyclictest scenarios=idle,stress duration=5s>>>",
            "# cyclictest current status:",
            "T: 0 ( 1) P:99 I:1000 C:      5 Min:      1 Act:    1 Avg:    1 Max:       1",
            "<<<RTBUILD-RAW-BEGIN scenario=idle test=cyclictest run=cyclictest format=json>>>",
            "{}",
            "<<<RTBUILD-RAW-END scenario=idle test=cyclictest run=cyclictest exit=0>>>",
            "<<<RTBUILD-STATUS-BEGIN scenario=idle>>>",
            "# cyclictest current status:",
            "T: 0 ( 2) P:99 I:1000 C:    999 Min:      1 Act:    1 Avg:    1 Max:      12",
            "#---------------------------",
            "<<<RTBUILD-STATUS-END scenario=idle>>>",
            "<<<RTBUILD-STATUS-BEGIN scenario=stress>>>",
            "# cyclictest current status:",
            "<<<RTBUILD-RAW-BEGIN scenario=stress test=cyclictest run=cyclictest format=json>>>",
            "{}",
            "<<<RTBUILD-RAW-END scenario=stress test=cyclictest run=cyclictest exit=0>>>",
        ] {
            text.push_str(&entry("target", line));
        }
        let log = parse(&text).unwrap();
        assert_eq!(log.outputs.len(), 2);
        assert!(log.outputs.iter().all(|o| o.raw == "{}\n"), "{:?}", log.outputs);
        let frames: Vec<(&str, &str, usize, bool)> = log
            .statuses
            .iter()
            .map(|s| (s.scenario.as_str(), s.text.as_str(), s.line, s.complete))
            .collect();
        assert_eq!(
            frames,
            [
                (
                    "idle",
                    "# cyclictest current status:\nT: 0 ( 2) P:99 I:1000 C:    999 Min:      1 Act:    1 Avg:    1 Max:      12\n#---------------------------\n",
                    7,
                    true
                ),
                ("stress", "# cyclictest current status:\n", 12, false),
            ]
        );
        assert!(log.states.is_empty());
    }

    /// `lava-run` offline: one flow mapping per line, no list dash, maybe other stderr lines.
    #[test]
    fn lava_run_lines_without_the_list_dash_are_a_log() {
        let text = "{\"dt\": \"2026-12-01T22:00:00.000000\", \"lvl\": \"info\", \"msg\": \"start\"}\n\
                    /usr/lib/python3/dist-packages/x.py:1: DeprecationWarning: y\n\
                    {\"dt\": \"2026-12-01T22:00:01.000000\", \"lvl\": \"target\", \"msg\": \"<<<RTBUILD-RAW-BEGIN scenario=idle>>>\"}\n";
        assert!(super::looks_like(text));
        let mut entries = Vec::new();
        super::each_entry(text, |at, e| {
            entries.push((at, e));
            Ok(())
        })
        .unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!((entries[1].0, entries[1].1.lvl.as_str()), (3, "target"));
        assert!(!super::looks_like("{\"a\": 1}\n"));
    }

    /// The listed form is read entry by entry: a message wrapped onto indented lines stays
    /// with its entry, and a bad entry is refused like a bad document.
    #[test]
    fn listed_entries_are_read_one_at_a_time_with_their_wrapped_lines() {
        let text = "- {\"dt\": \"2026-12-01T22:00:00\", \"lvl\": \"info\", \"msg\": \"a\"}\n\
                    - {\"dt\": \"2026-12-01T22:00:01\", \"lvl\": \"target\",\n  \"msg\": \"wrapped\"}\n\
                    - {\"dt\": \"2026-12-01T22:00:02\", \"lvl\": \"target\", \"msg\": \"b\"}\n";
        let mut entries = Vec::new();
        super::each_entry(text, |_, e| {
            entries.push(e);
            Ok(())
        })
        .unwrap();
        let msgs: Vec<&str> = entries.iter().filter_map(|e| e.msg.as_str()).collect();
        assert_eq!(msgs, ["a", "wrapped", "b"]);
        let bad = "- {\"lvl\": \"info\", \"msg\": \"a\"}\n- {\"lvl\": [unclosed\n";
        assert!(matches!(super::each_entry(bad, |_, _| Ok(())), Err(LogError::Yaml(_))));
    }
}
