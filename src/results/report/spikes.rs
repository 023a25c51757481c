//! The `spikes` of a report: each breach `rtbuild test --trace-above-us` recorded in a result
//! folder, explained again from its kept trace file (so the report never depends on what the
//! test run printed).

use std::path::Path;

use super::input::Input;
use crate::formats::report_json::{Spike, SpikeEvent};
use crate::formats::run_json::TraceRecord;

/// Every breach of `input` (none for raw files and LAVA logs).
pub(super) fn collect(input: &Input) -> Vec<Spike> {
    let Some(run) = input.run_json.as_ref().filter(|_| input.kind == "result-folder") else {
        return Vec::new();
    };
    let analyzer = run.tracing.as_ref().map_or("ftrace", |t| t.analyzer.as_str());
    run.scenarios
        .iter()
        .filter_map(|s| Some((s.name.as_str(), s.trace.as_ref()?)))
        .map(|(scenario, trace)| spike(&input.path, scenario, trace, analyzer))
        .collect()
}

fn spike(dir: &Path, scenario: &str, trace: &TraceRecord, analyzer: &str) -> Spike {
    let mut spike = Spike {
        scenario: scenario.to_string(),
        cpu: trace.cpu,
        latency_us: trace.latency_us,
        events: Vec::new(),
        explanation: String::new(),
        input: dir.display().to_string(),
        trace_file: trace.file.clone(),
        analyzer: analyzer.to_string(),
        excerpt: Vec::new(),
    };
    let file = Path::new(&trace.file);
    if file.is_absolute()
        || file.components().any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        spike.explanation = format!(
            "run.json names trace file `{}` outside the result folder; not read",
            trace.file
        );
        return spike;
    }
    if let Some((link, target)) = crate::files::input::link_within(dir, file) {
        spike.explanation = format!(
            "the kept trace {}: `{}` is a symlink to `{}`; rtbuild reads no symlinks in a result folder; not read",
            trace.file,
            link.display(),
            target.display()
        );
        return spike;
    }
    let text =
        match crate::files::input::read_to_string(&dir.join(file), crate::files::input::TEXT_LIMIT)
        {
            Ok(text) => text,
            Err(err) => {
                spike.explanation = format!("the kept trace {} cannot be read: {err}", trace.file);
                return spike;
            }
        };
    if analyzer == "rtla" {
        spike.explanation = crate::measure::ftrace::rtla::explanation(&text);
        spike.excerpt = text.lines().map(str::to_string).collect();
        return spike;
    }
    match crate::measure::ftrace::spike::analyze(&crate::measure::ftrace::parse(&text)) {
        Some(found) => {
            spike.cpu = Some(found.cpu);
            spike.latency_us = spike.latency_us.or(Some(found.latency_us));
            spike.events = found
                .events
                .iter()
                .map(|a| SpikeEvent {
                    ts: a.ts_ns as f64 / 1e9,
                    kind: a.kind.to_string(),
                    name: a.name.clone(),
                    duration_us: a.duration_ns.map(|d| d as f64 / 1000.0),
                })
                .collect();
            spike.explanation = found.explanation;
            spike.excerpt = found.excerpt;
        }
        None => {
            spike.explanation = format!(
                "{} holds no breach mark from cyclictest (--tracemark), so the spike cannot be explained",
                trace.file
            );
        }
    }
    spike
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::run_json::{RunRecord, ScenarioRecord};

    fn folder(dir: &Path, traces: &[(&str, &str)]) -> Input {
        let run = RunRecord {
            scenarios: traces
                .iter()
                .map(|(name, file)| ScenarioRecord {
                    name: name.to_string(),
                    trace: Some(TraceRecord {
                        file: file.to_string(),
                        cpu: Some(3),
                        latency_us: None,
                        tid: None,
                        explanation: None,
                    }),
                    ..ScenarioRecord::default()
                })
                .collect(),
            ..RunRecord::default()
        };
        Input {
            path: dir.to_path_buf(),
            kind: "result-folder",
            run_json: Some(run),
            scenarios: Vec::new(),
            printed_threshold_us: None,
        }
    }

    #[test]
    fn each_breach_is_explained_from_its_kept_trace_and_bad_paths_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/ftrace-6.18-x86-breach-61us-softirq-rcu.txt");
        std::fs::copy(golden, dir.path().join("trace-idle.txt")).unwrap();
        crate::files::write::fixture(dir.path().join("trace-none.txt"), "# tracer: nop\n").unwrap();
        let input = folder(
            dir.path(),
            &[
                ("idle", "trace-idle.txt"),
                ("stress", "../trace-stress.txt"),
                ("full", "trace-full.txt"),
                ("custom", "trace-none.txt"),
            ],
        );
        let spikes = collect(&input);
        assert_eq!(spikes.len(), 4);
        // The trace's mark says CPU 1 and 61 µs; run.json's latency was missing.
        assert_eq!((spikes[0].cpu, spikes[0].latency_us), (Some(1), Some(61.0)));
        assert!(spikes[0].explanation.contains("softirq RCU 41 µs"));
        let rcu = spikes[0].events.iter().find(|e| e.kind == "softirq").unwrap();
        assert_eq!((rcu.name.as_str(), rcu.duration_us, rcu.ts), ("RCU", Some(44.0), 10508.399132));
        assert_eq!(
            spikes[1].explanation,
            "run.json names trace file `../trace-stress.txt` outside the result folder; not read"
        );
        assert!(
            spikes[2].explanation.starts_with("the kept trace trace-full.txt cannot be read: ")
        );
        assert_eq!(
            spikes[3].explanation,
            "trace-none.txt holds no breach mark from cyclictest (--tracemark), so the spike cannot be explained"
        );
        assert_eq!(spikes[3].cpu, Some(3), "run.json's CPU stays when the trace has no mark");
        let raw = Input { kind: "file", ..folder(dir.path(), &[("idle", "trace-idle.txt")]) };
        assert!(collect(&raw).is_empty());
    }
}
