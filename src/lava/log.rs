//! Reading a LAVA job log: the YAML list `lavacli jobs logs --raw ID` prints (and LAVA keeps
//! as the job's `output.yaml`), one `{dt, lvl, msg}` entry per line. Only `target` lines (the
//! board's serial console) are read; the raw cyclictest outputs are the lines between the
//! [`markers`](super::markers) the job printed.
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
pub struct LavaLog {
    /// From the `RUN` marker.
    pub machine: Option<String>,
    pub threshold_us: Option<f64>,
    pub scenarios: Vec<LogScenario>,
}

/// One scenario's raw output.
#[derive(Debug, Clone, PartialEq)]
pub struct LogScenario {
    pub name: String,
    /// cyclictest's output, one line per log line.
    pub raw: String,
    /// cyclictest's exit status, when the end marker was reached.
    pub exit: Option<i32>,
    /// Kernel-message lines dropped from inside the output.
    pub dropped: usize,
}

/// The file is not a LAVA log, or holds nothing rtbuild printed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error(
        "it is not a LAVA job log ({0}); save one with `lavacli jobs logs --raw JOB-ID > FILE`"
    )]
    Yaml(serde_yaml::Error),
    #[error(
        "the LAVA job log holds no rtbuild raw output (no `{}` line); was the job made by `rtbuild lava`, and did it reach the test?",
        markers::BEGIN
    )]
    NoRaw,
}

/// Whether `head` (the start of a file) looks like a LAVA job log: a YAML list whose first
/// entry has `dt`/`lvl` keys.
pub fn looks_like(head: &str) -> bool {
    let Some(first) = head.lines().map(str::trim_start).find(|l| !l.is_empty()) else {
        return false;
    };
    first.starts_with("- ")
        && (first.contains("\"lvl\"") || first.contains("lvl:") || first.contains("\"dt\""))
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

/// Parses a whole job log.
pub fn parse(text: &str) -> Result<LavaLog, LogError> {
    let entries: Vec<Entry> = serde_yaml::from_str(text).map_err(LogError::Yaml)?;
    let mut log = LavaLog::default();
    let mut open: Option<LogScenario> = None;
    let lines = entries
        .iter()
        .filter(|e| e.lvl == "target")
        .filter_map(|e| e.msg.as_str())
        .flat_map(str::lines)
        .map(|l| l.trim_end_matches('\r'));
    for line in lines {
        if let Some(fields) = markers::fields(line, markers::RUN) {
            log.machine = markers::get(&fields, "machine").map(str::to_string);
            log.threshold_us = markers::get(&fields, "threshold_us").and_then(|t| t.parse().ok());
        } else if let Some(fields) = markers::fields(line, markers::BEGIN) {
            // A begin without an end: the job stopped inside that output.
            log.scenarios.extend(open.take());
            open = Some(LogScenario {
                name: markers::get(&fields, "scenario").unwrap_or("cyclictest").to_string(),
                raw: String::new(),
                exit: None,
                dropped: 0,
            });
        } else if let Some(fields) = markers::fields(line, markers::END) {
            if let Some(mut scenario) = open.take() {
                scenario.exit = markers::get(&fields, "exit").and_then(|e| e.parse().ok());
                log.scenarios.push(scenario);
            }
        } else if let Some(scenario) = open.as_mut() {
            if kernel_message(line) {
                scenario.dropped += 1;
            } else {
                scenario.raw.push_str(line);
                scenario.raw.push('\n');
            }
        }
    }
    log.scenarios.extend(open);
    if log.scenarios.is_empty() {
        return Err(LogError::NoRaw);
    }
    Ok(log)
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
        assert_eq!(log.scenarios.len(), 2);
        assert_eq!(log.scenarios[0].raw, "{\n}\n");
        assert_eq!((log.scenarios[0].exit, log.scenarios[0].dropped), (Some(0), 1));
        assert_eq!((log.scenarios[1].name.as_str(), log.scenarios[1].exit), ("stress", None));
    }

    #[test]
    fn other_files_are_not_logs() {
        assert!(!looks_like("# Histogram\n000000 000001\n"));
        assert!(!looks_like("{\"thread\": {}}"));
        assert!(matches!(parse(&entry("target", "hello")), Err(LogError::NoRaw)));
        assert!(matches!(parse("- [unclosed"), Err(LogError::Yaml(_))));
    }
}
