//! Statistics and verdicts on the golden files in tests/data/ (exact figures, computed
//! independently from the files with nearest-rank percentiles and population stddev).
//!
//! The helpers that load them are here; the tests are by subject: [`statistics`], [`inputs`],
//! [`outputs`] and [`convergence`].

use std::path::PathBuf;

use super::*;
use crate::formats::report_json::ScenarioReport;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn report(files: &[&str], threshold: Option<f64>) -> LatencyReport {
    let options = Options {
        inputs: files.iter().map(|f| data(f)).collect(),
        threshold_us: threshold,
        ..Options::default()
    };
    build(&options).unwrap()
}

fn scenario(report: &LatencyReport) -> &ScenarioReport {
    &report.inputs[0].scenarios[0]
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

fn scenario_of(report: &LatencyReport) -> &ScenarioReport {
    &report.inputs[0].scenarios[0]
}

/// `data(name)` with each `(from, to)` replaced (each `from` must be there), in `dir`.
fn altered(dir: &std::path::Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(data(name)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name} has no `{from}`");
        text = text.replacen(from, to, 1);
    }
    let path = dir.join(name);
    crate::files::write::fixture(&path, text).unwrap();
    path
}

fn lava_entry(line: &str) -> String {
    format!(
        "- {{\"dt\": \"2026-12-04T20:00:00.000000\", \"lvl\": \"target\", \"msg\": {}}}\n",
        serde_json::to_string(line).unwrap()
    )
}

/// A result folder of a histogram run (`rtbuild test`'s default, `-h`): `run.json` lists the
/// histogram and cyclictest's stderr, holding the status blocks SIGUSR1 printed.
fn status_folder(stderr: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("raw")).unwrap();
    std::fs::copy(
        data("cyclictest-2.4-hist-h50-2threads.txt"),
        dir.path().join("raw/idle.hist.txt"),
    )
    .unwrap();
    let mut raw = vec!["raw/idle.hist.txt"];
    if let Some(text) = stderr {
        crate::files::write::fixture(dir.path().join("raw/idle.stderr.txt"), text).unwrap();
        raw.push("raw/idle.stderr.txt");
    }
    let json = serde_json::json!({
        "threshold_us": 100000, "rt_cpus": "0", "measure_cpus": "0-1",
        "scenarios": [{"name": "idle", "files": ["raw/idle.hist.txt"], "raw_files": raw}],
    });
    crate::files::write::fixture(dir.path().join("run.json"), json.to_string()).unwrap();
    dir
}

mod convergence;
mod inputs;
mod outputs;
mod statistics;
