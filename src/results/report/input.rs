//! Turns INPUT arguments into scenarios to judge: a raw cyclictest file is one scenario named
//! after the file; a result folder from `rtbuild test` holds `run.json`, whose `scenarios`
//! list the raw files (schema in docs/report.md). What an INPUT is, the one sniffer decides
//! ([`crate::results::input`]).

use std::path::{Path, PathBuf};

use crate::files::input::Opened;
use crate::formats::run_json::{self, RunRecord};
use crate::measure::rttests::Program;
use crate::measure::rttests::output::{self, ProgramOutput, Sniffed};
use crate::results::cyclictest::status::StatusSnapshots;
use crate::results::cyclictest::{self, ResultFile};

use super::error::ReportError;

/// One rt-tests program's outputs in a scenario.
#[derive(Debug)]
pub(crate) struct TestInput {
    pub program: Program,
    pub outcomes: Vec<(PathBuf, ProgramOutput)>,
    pub invalid_reasons: Vec<String>,
    pub commands: Vec<String>,
    pub skipped: Option<String>,
    /// How long the program ran (run.json's `elapsed_s`; 0 when skipped), when it is known.
    pub elapsed_s: Option<f64>,
}

/// One scenario's parsed files.
#[derive(Debug)]
pub(crate) struct ScenarioInput {
    pub name: String,
    /// `run.json`'s scenario label (`system-load`: load on the measured CPUs, no isolation).
    pub label: Option<String>,
    pub runs: Vec<(PathBuf, ResultFile)>,
    pub invalid_reasons: Vec<String>,
    /// `run.json`'s reasons the run fails whatever its latency (kernel warnings during it).
    pub fail_reasons: Vec<String>,
    pub commands: Vec<String>,
    /// Whether cyclictest measured in this scenario (a run may have used other tests only).
    pub cyclictest: bool,
    pub tests: Vec<TestInput>,
    /// `run.json` scenario `thermal` and `throttling`, when the folder has them.
    pub thermal: Option<serde_json::Value>,
    pub throttling: Option<serde_json::Value>,
    /// A result folder: cyclictest's stderr (`raw/<scenario>.stderr.txt`) and the status
    /// snapshots read from it, or why there are none; `None` for other inputs.
    pub status: Option<(PathBuf, Result<StatusSnapshots, String>)>,
}

/// One INPUT, read.
#[derive(Debug)]
pub(crate) struct Input {
    pub path: PathBuf,
    /// `file`, `result-folder` or `lava-log`.
    pub kind: &'static str,
    /// The result folder's `run.json` (for a LAVA log: the machine it printed, no threshold).
    pub run_json: Option<RunRecord>,
    pub scenarios: Vec<ScenarioInput>,
    /// A LAVA log: the threshold its `RUN` marker printed (the board's console said it, so it
    /// is shown, never used).
    pub printed_threshold_us: Option<f64>,
}

/// A raw output of another rt-tests program, opened by the sniffer
/// ([`crate::results::input`]): one scenario named after the file.
pub(crate) fn read_program_output(
    file: Opened,
    program: Program,
    json: bool,
) -> Result<Input, ReportError> {
    let path = file.path().to_path_buf();
    let outcome = output::read_opened(file, program, json)?;
    Ok(Input {
        path: path.clone(),
        kind: "file",
        run_json: None,
        printed_threshold_us: None,
        scenarios: vec![ScenarioInput {
            name: scenario_name(&path),
            label: None,
            runs: Vec::new(),
            invalid_reasons: Vec::new(),
            fail_reasons: Vec::new(),
            commands: outcome.cmdline.iter().cloned().collect(),
            cyclictest: false,
            thermal: None,
            throttling: None,
            status: None,
            tests: vec![TestInput {
                program,
                commands: outcome.cmdline.iter().cloned().collect(),
                outcomes: vec![(path, outcome)],
                invalid_reasons: Vec::new(),
                skipped: None,
                elapsed_s: None,
            }],
        }],
    })
}

/// A raw cyclictest output, opened by the sniffer: one scenario named after the file.
pub(crate) fn read_cyclictest(file: Opened, nsecs: bool) -> Result<Input, ReportError> {
    let path = file.path().to_path_buf();
    let run = with_unit(cyclictest::parse_opened(file)?, nsecs);
    Ok(Input {
        path: path.clone(),
        kind: "file",
        run_json: None,
        printed_threshold_us: None,
        scenarios: vec![ScenarioInput {
            name: scenario_name(&path),
            label: None,
            commands: run.cmdline.iter().cloned().collect(),
            runs: vec![(path, run)],
            invalid_reasons: Vec::new(),
            fail_reasons: Vec::new(),
            cyclictest: true,
            tests: Vec::new(),
            thermal: None,
            throttling: None,
            status: None,
        }],
    })
}

/// A raw file's scenario: the file's name without its extension.
fn scenario_name(path: &Path) -> String {
    path.file_stem().map_or_else(|| "cyclictest".to_string(), |s| s.to_string_lossy().into_owned())
}

/// Files one result folder's `run.json` may have read, counting a file named twice twice.
const FOLDER_FILES: usize = 4_096;
/// Bytes those files may hold together (each one is parsed and kept).
const FOLDER_BYTES: u64 = 512 << 20;

/// What a result folder's files may still take (see [`FOLDER_FILES`], [`FOLDER_BYTES`]).
struct Budget<'a> {
    json_path: &'a Path,
    files: usize,
    bytes: u64,
}

impl Budget<'_> {
    /// Counts `path` against the budget before it is read.
    fn take(&mut self, path: &Path) -> Result<(), ReportError> {
        let too_big =
            |what: String| ReportError::FolderTooBig { path: self.json_path.to_path_buf(), what };
        if self.files == 0 {
            return Err(too_big(format!("more than {FOLDER_FILES} files to read")));
        }
        self.files -= 1;
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        if size > self.bytes {
            return Err(too_big(format!("files of more than {} MiB together", FOLDER_BYTES >> 20)));
        }
        self.bytes -= size;
        Ok(())
    }
}

/// An `rtbuild test` result folder: its `run.json` and every file it lists, each opened once.
pub(crate) fn read_folder(dir: &Path, nsecs: bool) -> Result<Input, ReportError> {
    let json_path = dir.join(run_json::FILE);
    if json_path.symlink_metadata().is_err() {
        return Err(ReportError::NoRunJson { dir: dir.to_path_buf() });
    }
    no_link(dir, Path::new(run_json::FILE))?;
    // A FIFO, a device or a link to one is refused, never read.
    let text = crate::files::input::read_to_string(&json_path, crate::files::input::TEXT_LIMIT)?;
    let run_json = RunRecord::parse(&text)
        .map_err(|cause| ReportError::RunJson { path: json_path.clone(), cause })?;
    if run_json.scenarios.is_empty() {
        return Err(ReportError::NoScenarios { path: json_path });
    }
    // A run from before --tests (no `tests`) measured with cyclictest only.
    let cyclictest = run_json.tests.is_empty() || run_json.tests.iter().any(|n| n == "cyclictest");
    let mut scenarios = Vec::new();
    let mut budget = Budget { json_path: &json_path, files: FOLDER_FILES, bytes: FOLDER_BYTES };
    for scenario in &run_json.scenarios {
        let mut runs = Vec::new();
        let mut unusable = Vec::new();
        let mut commands: Vec<String> =
            scenario.commands.iter().map(|c| in_folder(c, dir)).collect();
        for file in scenario.files.iter().map(Path::new) {
            inside(&json_path, file)?;
            no_link(dir, file)?;
            let path = dir.join(file);
            budget.take(&path)?;
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
                commands.extend(run.cmdline.iter().map(|c| in_folder(c, dir)));
            }
            runs.push((path, run));
        }
        let mut invalid_reasons = scenario.invalid_reasons.clone();
        invalid_reasons.extend(unusable);
        if cyclictest && runs.is_empty() && scenario.files.is_empty() {
            invalid_reasons
                .push("run.json lists no cyclictest output for this scenario".to_string());
        }
        scenarios.push(ScenarioInput {
            name: scenario.name.clone(),
            label: scenario.label.clone(),
            runs,
            invalid_reasons,
            fail_reasons: scenario.fail_reasons.clone(),
            commands,
            cyclictest,
            tests: read_tests(dir, &json_path, &scenario.tests, &mut budget)?,
            thermal: serde_json::to_value(&scenario.thermal).ok(),
            throttling: serde_json::to_value(&scenario.throttling).ok(),
            status: cyclictest.then(|| status(dir, &json_path, &scenario.raw_files)),
        });
    }
    Ok(Input {
        path: dir.to_path_buf(),
        kind: "result-folder",
        run_json: Some(run_json),
        scenarios,
        printed_threshold_us: None,
    })
}

/// The status snapshots cyclictest printed on its stderr while `rtbuild test` measured (the
/// raw file `run.json` lists that ends in `.stderr.txt`), or why there are none.
fn status(
    dir: &Path,
    json_path: &Path,
    raw_files: &[String],
) -> (PathBuf, Result<StatusSnapshots, String>) {
    let Some(file) = raw_files.iter().find(|f| f.ends_with(".stderr.txt")) else {
        return (
            dir.join("raw"),
            Err("run.json lists no cyclictest stderr (`raw/<scenario>.stderr.txt`) to read them from"
                .to_string()),
        );
    };
    let path = dir.join(file);
    if inside(json_path, Path::new(file)).is_err() {
        return (path, Err(format!("run.json names `{file}`, outside the result folder")));
    }
    let read = cyclictest::status::read_status_snapshots(&path);
    (path, read)
}

/// A file named in `run.json` must lie inside the result folder.
fn inside(json_path: &Path, file: &Path) -> Result<(), ReportError> {
    if file.is_absolute() || file.components().any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(ReportError::OutsideFolder {
            path: json_path.to_path_buf(),
            file: file.to_path_buf(),
        });
    }
    Ok(())
}

/// No part of `file` in the result folder `dir` may be a symlink (see
/// [`crate::files::input::link_within`]).
fn no_link(dir: &Path, file: &Path) -> Result<(), ReportError> {
    match crate::files::input::link_within(dir, file) {
        Some((file, target)) => {
            Err(ReportError::LinkInFolder { dir: dir.to_path_buf(), file, target })
        }
        None => Ok(()),
    }
}

/// The scenario's other rt-tests programs; an unreadable output fails its test only.
fn read_tests(
    dir: &Path,
    json_path: &Path,
    tests: &[run_json::TestRecord],
    budget: &mut Budget<'_>,
) -> Result<Vec<TestInput>, ReportError> {
    let mut inputs = Vec::new();
    for test in tests {
        let program: Program = test
            .name
            .parse()
            .map_err(|cause| ReportError::RunJsonTest { path: json_path.to_path_buf(), cause })?;
        let mut invalid_reasons = test.invalid_reasons.clone();
        let mut outcomes = Vec::new();
        for file in &test.files {
            inside(json_path, Path::new(file))?;
            no_link(dir, Path::new(file))?;
            let path = dir.join(file);
            budget.take(&path)?;
            // Opened once: the sniffer's bytes are the start of what is read.
            let read = output::open(&path).and_then(|file| {
                match output::sniff_opened(&file, Some(program)) {
                    Sniffed::Other { program: found, json } if found == program => {
                        output::read_opened(file, program, json).map(Some)
                    }
                    _ => Ok(None),
                }
            });
            match read {
                Ok(Some(outcome)) => outcomes.push((path, outcome)),
                Ok(None) => {
                    invalid_reasons.push(format!("{} is not {program} output", path.display()))
                }
                Err(err) => invalid_reasons.push(err.to_string()),
            }
        }
        if outcomes.is_empty() && test.skipped.is_none() && invalid_reasons.is_empty() {
            invalid_reasons.push(format!("run.json lists no {program} output for this scenario"));
        }
        inputs.push(TestInput {
            program,
            outcomes,
            invalid_reasons,
            commands: test.commands.iter().map(|c| in_folder(c, dir)).collect(),
            skipped: test.skipped.clone(),
            elapsed_s: if test.skipped.is_some() || test.state == "skipped" {
                Some(0.0)
            } else {
                Some(test.elapsed_s).filter(|s| s.is_finite() && *s > 0.0)
            },
        });
    }
    Ok(inputs)
}

/// `rtbuild test` ran cyclictest with its `--json` file in a state folder on the target
/// (`/tmp/rtbuild-test.XXXXXX/`), deleted afterwards; the copy is in the result folder's `raw/`.
fn in_folder(command: &str, dir: &Path) -> String {
    const STATE: &str = "/tmp/rtbuild-test.";
    let mut out = String::with_capacity(command.len());
    let mut rest = command;
    while let Some(at) = rest.find(STATE) {
        let after = &rest[at + STATE.len()..];
        let Some(slash) = after.find('/') else { break };
        if !after[..slash].bytes().all(|b| b.is_ascii_alphanumeric()) {
            out.push_str(&rest[..at + STATE.len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        out.push_str(&dir.join("raw").display().to_string());
        out.push('/');
        rest = &after[slash + 1..];
    }
    out.push_str(rest);
    out
}

/// Parses one file; `nsecs` sets nanoseconds where the content does not give the unit.
fn parse(path: &Path, nsecs: bool) -> Result<ResultFile, ReportError> {
    Ok(with_unit(cyclictest::parse_file(path)?, nsecs))
}

/// `nsecs` sets nanoseconds where the content does not give the unit.
fn with_unit(mut run: ResultFile, nsecs: bool) -> ResultFile {
    if nsecs && run.unit.is_none() {
        run.unit = Some(cyclictest::Unit::Ns);
    }
    run
}

#[cfg(test)]
mod tests {
    #[test]
    fn commands_point_at_the_result_folder_not_the_deleted_state_folder() {
        let dir = std::path::Path::new("res");
        assert_eq!(
            super::in_folder("cyclictest -q --json=/tmp/rtbuild-test.a1B2c3/idle.json -D 3", dir),
            "cyclictest -q --json=res/raw/idle.json -D 3"
        );
        let other = "stress-ng --temp-path /tmp/rtbuild-test.x y/z";
        assert_eq!(super::in_folder(other, dir), other);
    }
}
