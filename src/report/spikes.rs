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
    let text = match std::fs::read_to_string(dir.join(file)) {
        Ok(text) => text,
        Err(err) => {
            spike.explanation = format!("the kept trace {} cannot be read: {err}", trace.file);
            return spike;
        }
    };
    if analyzer == "rtla" {
        spike.explanation = crate::ftrace::rtla::explanation(&text);
        spike.excerpt = text.lines().map(str::to_string).collect();
        return spike;
    }
    match crate::ftrace::spike::analyze(&crate::ftrace::parse(&text)) {
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
