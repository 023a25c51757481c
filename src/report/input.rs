//! Turns INPUT arguments into scenarios to judge: a raw cyclictest file is one scenario named
//! after the file; a result folder from `rtbuild test` holds `run.json`, whose `scenarios`
//! list the raw files (schema in docs/report.md).

use std::path::{Path, PathBuf};

use crate::cyclictest::{self, Run};
use crate::formats::run_json::{self, RunRecord};

use super::ReportError;

/// One scenario's parsed files.
#[derive(Debug)]
pub struct ScenarioInput {
    pub name: String,
    pub runs: Vec<(PathBuf, Run)>,
    pub invalid_reasons: Vec<String>,
    pub commands: Vec<String>,
}

/// One INPUT, read.
#[derive(Debug)]
pub struct Input {
    pub path: PathBuf,
    pub run_json: Option<RunRecord>,
    pub scenarios: Vec<ScenarioInput>,
}

/// Reads one INPUT: a folder with `run.json`, or a raw cyclictest file.
pub fn read(path: &Path, nsecs: bool) -> Result<Input, ReportError> {
    if path.is_dir() {
        return read_folder(path, nsecs);
    }
    let run = parse(path, nsecs)?;
    let name = path
        .file_stem()
        .map_or_else(|| "cyclictest".to_string(), |s| s.to_string_lossy().into_owned());
    Ok(Input {
        path: path.to_path_buf(),
        run_json: None,
        scenarios: vec![ScenarioInput {
            name,
            commands: run.cmdline.iter().cloned().collect(),
            runs: vec![(path.to_path_buf(), run)],
            invalid_reasons: Vec::new(),
        }],
    })
}

fn read_folder(dir: &Path, nsecs: bool) -> Result<Input, ReportError> {
    let json_path = dir.join(run_json::FILE);
    if !json_path.is_file() {
        return Err(ReportError::NoRunJson { dir: dir.to_path_buf() });
    }
    let text = std::fs::read_to_string(&json_path)
        .map_err(|cause| ReportError::Read { path: json_path.clone(), cause })?;
    let run_json = RunRecord::parse(&text)
        .map_err(|cause| ReportError::RunJson { path: json_path.clone(), cause })?;
    if run_json.scenarios.is_empty() {
        return Err(ReportError::NoScenarios { path: json_path });
    }
    let mut scenarios = Vec::new();
    for scenario in &run_json.scenarios {
        let mut runs = Vec::new();
        let mut unusable = Vec::new();
        let mut commands = scenario.commands.clone();
        for file in scenario.files.iter().map(Path::new) {
            if file.is_absolute()
                || file.components().any(|c| matches!(c, std::path::Component::ParentDir))
            {
                return Err(ReportError::OutsideFolder {
                    path: json_path.clone(),
                    file: file.to_path_buf(),
                });
            }
            let path = dir.join(file);
            // A missing or unreadable output (the run crashed, the disk filled up) fails
            // this scenario; the other scenarios of the folder are still reported.
            let run = match parse(&path, nsecs) {
                Ok(run) => run,
                Err(err) => {
                    unusable.push(err.to_string());
                    continue;
                }
            };
            if commands.is_empty() {
                commands.extend(run.cmdline.iter().cloned());
            }
            runs.push((path, run));
        }
        let mut invalid_reasons = scenario.invalid_reasons.clone();
        invalid_reasons.extend(unusable);
        if runs.is_empty() && scenario.files.is_empty() {
            invalid_reasons
                .push("run.json lists no cyclictest output for this scenario".to_string());
        }
        scenarios.push(ScenarioInput {
            name: scenario.name.clone(),
            runs,
            invalid_reasons,
            commands,
        });
    }
    Ok(Input { path: dir.to_path_buf(), run_json: Some(run_json), scenarios })
}

/// Parses one file; `nsecs` sets nanoseconds where the content does not give the unit.
fn parse(path: &Path, nsecs: bool) -> Result<Run, ReportError> {
    let mut run = cyclictest::parse_file(path)?;
    if nsecs && run.unit.is_none() {
        run.unit = Some(cyclictest::Unit::Ns);
    }
    Ok(run)
}
