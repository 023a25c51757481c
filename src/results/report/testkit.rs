//! qcom-linux-testkit's RT-tests results, the ones Qualcomm's lab gates on, read beside
//! rtbuild's own: a folder holding testkit's `Runner/suites/Kernel/RT-tests/<Test>/` folders
//! (or any folder with testkit `<TESTNAME>.res` files up to three levels down).
//!
//! What testkit leaves, per program (facts from qcom-linux-testkit a12072a,
//! `Runner/suites/Kernel/RT-tests/*/run.sh` and `Runner/utils/lib_rt.sh`): `<TESTNAME>.res`
//! beside its `run.sh`, one line `<TESTNAME> PASS|FAIL|SKIP`; and an output folder
//! `logs_<name>/` with the program's raw output (`<prefix>-<iteration>.json` for the JSON
//! programs, `hackbench-output-host.txt` for hackbench) and `result.txt`, KPI lines
//! `<kpi> pass|fail [<value> [<unit>]]`.
//!
//! The raw outputs go through the readers `rtbuild report` uses for its own runs (its
//! statistics and verdict); `.res` verdicts and failed KPI lines are reasons of their own, and
//! the headline KPIs are shown as facts beside rtbuild's figures. Everything becomes one
//! scenario, `testkit` (testkit runs each program once, without rtbuild's load scenarios).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::ReportError;
use super::input::{Input, ScenarioInput, TestInput};
use crate::files::input::{TEXT_LIMIT, read_to_string};
use crate::measure::rttests::Program;
use crate::measure::rttests::output::{self, ProgramOutput};

/// The scenario name of a testkit run.
pub(crate) const SCENARIO: &str = "testkit";

/// testkit's `TESTNAME` of each program (its `.res` file name), and the lab's alias (the
/// LAVA test definition's name, e.g. `Cyclictest.res`, a copy the YAML makes).
const TESTNAMES: [(&str, Program); 13] = [
    ("CyclicTest", Program::Cyclictest),
    ("Cyclictest", Program::Cyclictest),
    ("CyclicDeadline", Program::Cyclicdeadline),
    ("Hackbench", Program::Hackbench),
    ("OSLat", Program::Oslat),
    ("PI_Stress", Program::PiStress),
    ("PMQTest", Program::Pmqtest),
    ("PTSEMATest", Program::Ptsematest),
    ("RTMigrateTest", Program::RtMigrateTest),
    ("SSDD", Program::Ssdd),
    ("SVSematest", Program::Svsematest),
    ("SignalTest", Program::Signaltest),
    ("SigwaitTest", Program::Sigwaittest),
];

/// How deep below the folder given `.res` files are looked for (`RT-tests/<Test>/x.res` from
/// the suite's parent is three).
const MAX_DEPTH: usize = 4;

/// One testkit program's files.
#[derive(Debug, Default)]
struct Found {
    /// `.res` files and the verdict each states.
    res: Vec<(PathBuf, String)>,
    /// The program's folder (beside `run.sh`).
    dirs: Vec<PathBuf>,
}

/// The `.res` files below `dir` that name a testkit RT-tests program, by program.
fn find(dir: &Path) -> BTreeMap<Program, Found> {
    let mut found: BTreeMap<Program, Found> = BTreeMap::new();
    let walk = walkdir::WalkDir::new(dir).max_depth(MAX_DEPTH).follow_links(false);
    for entry in walk.sort_by_file_name().into_iter().flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy();
        let Some(stem) = name.strip_suffix(".res") else { continue };
        let Some((_, program)) = TESTNAMES.iter().find(|(t, _)| *t == stem) else { continue };
        let verdict = read_to_string(entry.path(), TEXT_LIMIT)
            .ok()
            .and_then(|text| res_verdict(&text, stem))
            .unwrap_or_else(|| "unreadable".to_string());
        let slot = found.entry(*program).or_default();
        slot.res.push((entry.path().to_path_buf(), verdict));
        if let Some(parent) = entry.path().parent()
            && !slot.dirs.iter().any(|d| d == parent)
        {
            slot.dirs.push(parent.to_path_buf());
        }
    }
    found
}

/// The verdict of a `.res` file: its `<TESTNAME> <VERDICT>` line (the first one naming it).
fn res_verdict(text: &str, testname: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next()? == testname).then(|| words.next().unwrap_or("").to_uppercase())
    })
}

/// The testkit RT-tests results in a folder, as the sniffer found them: each `.res` file is
/// read once, there.
#[derive(Debug)]
pub(crate) struct Results(BTreeMap<Program, Found>);

/// The testkit RT-tests results `dir` holds, when it holds some (and no `run.json` of
/// rtbuild's own).
pub(crate) fn find_results(dir: &Path) -> Option<Results> {
    if !dir.is_dir() || dir.join(crate::formats::run_json::FILE).symlink_metadata().is_ok() {
        return None;
    }
    Some(find(dir)).filter(|found| !found.is_empty()).map(Results)
}

/// One KPI line of `result.txt`: name, `pass`/`fail`, value and unit when given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Kpi {
    pub name: String,
    pub passed: bool,
    pub value: Option<String>,
    pub unit: Option<String>,
}

/// The KPI lines of a `result.txt` (other lines are skipped).
pub(crate) fn kpis(text: &str) -> Vec<Kpi> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            let passed = match words.next()? {
                "pass" => true,
                "fail" => false,
                _ => return None,
            };
            let value = words.next().filter(|v| v.parse::<f64>().is_ok()).map(str::to_string);
            let unit = value.as_ref().and(words.next()).map(str::to_string);
            Some(Kpi { name: name.to_string(), passed, value, unit })
        })
        .collect()
}

/// The KPIs shown beside rtbuild's figures: the worst latency over every thread and
/// iteration, and each program's own headline figures (pi_stress's inversions).
fn headline(kpi: &Kpi) -> bool {
    ["-all-max-latency-max", "-worst-thread-max-latency", "-inversion-max", "-inversion-rate"]
        .iter()
        .any(|end| kpi.name.ends_with(end))
}

/// The raw outputs in a testkit output folder, oldest iteration first.
fn raw_files(logs: &Path, program: Program) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(logs) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            match program {
                Program::Hackbench => name == "hackbench-output-host.txt",
                _ => {
                    name.ends_with(".json")
                        && name.rsplit_once('-').is_some_and(|(_, n)| {
                            n.strip_suffix(".json").is_some_and(|d| {
                                !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
                            })
                        })
                }
            }
        })
        .collect();
    files.sort();
    files
}

/// The `logs_*` output folders of a program's folder.
fn log_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| e.file_name().to_string_lossy().starts_with("logs_"))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

/// Reads a testkit results folder as one scenario, `testkit`.
pub(crate) fn read(dir: &Path, found: Results, nsecs: bool) -> Result<Input, ReportError> {
    let found = found.0;
    let mut scenario = ScenarioInput {
        name: SCENARIO.to_string(),
        label: None,
        runs: Vec::new(),
        invalid_reasons: Vec::new(),
        fail_reasons: Vec::new(),
        commands: Vec::new(),
        cyclictest: found.contains_key(&Program::Cyclictest),
        tests: Vec::new(),
        thermal: None,
        throttling: None,
        status: None,
    };
    for (program, files) in &found {
        let mut reasons = Vec::new();
        let mut facts = Vec::new();
        let mut skipped = None;
        for (path, verdict) in &files.res {
            match verdict.as_str() {
                "PASS" => {}
                "SKIP" => skipped = Some(format!("testkit {} says SKIP", path.display())),
                other => reasons.push(format!("testkit {} says {other}", path.display())),
            }
        }
        let mut outcomes: Vec<(PathBuf, ProgramOutput)> = Vec::new();
        for logs in files.dirs.iter().flat_map(|d| log_dirs(d)) {
            let result = logs.join("result.txt");
            if result.is_file() {
                let text = read_to_string(&result, TEXT_LIMIT)?;
                for kpi in kpis(&text) {
                    let shown = format!(
                        "testkit KPI {} {}{}",
                        kpi.name,
                        kpi.value.as_deref().unwrap_or(if kpi.passed { "pass" } else { "fail" }),
                        kpi.unit.as_deref().map(|u| format!(" {u}")).unwrap_or_default()
                    );
                    if !kpi.passed {
                        reasons.push(format!("{shown} (fail, {})", result.display()));
                    } else if headline(&kpi) {
                        facts.push(shown);
                    }
                }
            }
            for raw in raw_files(&logs, *program) {
                if *program == Program::Cyclictest {
                    match crate::results::cyclictest::parse_file(&raw) {
                        Ok(mut run) => {
                            if nsecs && run.unit.is_none() {
                                run.unit = Some(crate::results::cyclictest::Unit::Ns);
                            }
                            scenario.commands.extend(run.cmdline.iter().cloned());
                            scenario.runs.push((raw, run));
                        }
                        Err(err) => scenario.invalid_reasons.push(err.to_string()),
                    }
                    continue;
                }
                match output::read(&raw, *program, *program != Program::Hackbench) {
                    Ok(outcome) => outcomes.push((raw, outcome)),
                    Err(err) => reasons.push(err.to_string()),
                }
            }
        }
        if *program == Program::Cyclictest {
            if scenario.runs.is_empty() && skipped.is_none() && reasons.is_empty() {
                reasons.push(
                    "testkit left no cyclictest JSON output (logs_*/cyclictest-N.json)".into(),
                );
            }
            scenario.invalid_reasons.extend(reasons);
            if let Some(why) = skipped {
                scenario.invalid_reasons.push(why);
            }
            // rtbuild computes cyclictest's figures from the JSON itself.
            drop(facts);
            continue;
        }
        if outcomes.is_empty() && skipped.is_none() && reasons.is_empty() {
            reasons.push(format!("testkit left no {program} output in logs_*/"));
        }
        if let Some((_, first)) = outcomes.first_mut() {
            first.facts.extend(facts);
        }
        let commands = outcomes.iter().filter_map(|(_, o)| o.cmdline.clone()).collect();
        scenario.tests.push(TestInput {
            program: *program,
            outcomes,
            invalid_reasons: reasons,
            commands,
            skipped,
            elapsed_s: None,
        });
    }
    Ok(Input {
        path: dir.to_path_buf(),
        kind: "testkit",
        run_json: None,
        printed_threshold_us: None,
        scenarios: vec![scenario],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kpi_lines_and_res_verdicts() {
        let text = "iteration-1-t0-max-latency pass 17832 us\niteration-1-cyclictest pass\n\
                    oslat-all-avg-latency-mean fail 1.086 us\n[INFO] not a KPI line\n";
        assert_eq!(
            kpis(text),
            [
                Kpi {
                    name: "iteration-1-t0-max-latency".into(),
                    passed: true,
                    value: Some("17832".into()),
                    unit: Some("us".into())
                },
                Kpi {
                    name: "iteration-1-cyclictest".into(),
                    passed: true,
                    value: None,
                    unit: None
                },
                Kpi {
                    name: "oslat-all-avg-latency-mean".into(),
                    passed: false,
                    value: Some("1.086".into()),
                    unit: Some("us".into())
                },
            ]
        );
        assert_eq!(res_verdict("CyclicTest PASS\n", "CyclicTest").as_deref(), Some("PASS"));
        assert_eq!(res_verdict("Other FAIL\n", "CyclicTest"), None);
        assert_eq!(res_verdict("SSDD skip", "SSDD").as_deref(), Some("SKIP"));
    }
}
