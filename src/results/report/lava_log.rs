//! A LAVA job log from `rtbuild lava`'s job as report input: the raw outputs between the
//! markers ([`crate::lab::log`]) become the same scenarios, cyclictest runs and per-test
//! outcomes a result folder of `rtbuild test` gives, with the validity checks `rtbuild test`
//! makes on its target (exit status, JSON written, measured on the RT CPUs), so a test judged
//! from the board's log gets the verdict it gets from a local run.

use std::path::{Path, PathBuf};

use super::error::ReportError;
use super::input::{Input, ScenarioInput, TestInput};
use crate::files::limits::MAX_LOG;
use crate::formats::run_json::RunRecord;
use crate::lab::log::{BoardState, LavaLog, RawOutput, Skipped};
use crate::measure::rttests::Program;
use crate::measure::rttests::output::{self, ProgramOutput};
use crate::plan::CpuSet;
use crate::results::cyclictest;

/// Reads the log the sniffer opened ([`crate::results::input`]); `nsecs` as for raw cyclictest
/// files.
pub(crate) fn read(file: crate::files::input::Opened, nsecs: bool) -> Result<Input, ReportError> {
    let path = file.path().to_path_buf();
    let path = path.as_path();
    let text = file.read_to_string(MAX_LOG)?;
    let log = crate::lab::log::parse(&text)
        .map_err(|cause| ReportError::LavaLog { path: path.to_path_buf(), cause })?;
    let tests: Vec<Program> = log.tests.iter().filter_map(|t| t.parse().ok()).collect();
    let rt = log.rt_cpus.as_deref().and_then(|t| CpuSet::parse(t).ok());
    let scenarios = scenario_names(&log)
        .iter()
        .map(|name| scenario(path, &log, name, &tests, rt.as_ref(), nsecs))
        .collect();
    // The threshold is never the one the board's console printed: the caller gives it.
    let run_json = RunRecord {
        threshold_us: None,
        machine: log.machine.clone(),
        noise_us: log.noise_us,
        tests: log.tests.clone(),
        rt_cpus: log.rt_cpus.clone().unwrap_or_default(),
        // What the kernel log held before the first scenario: information, as `test` keeps it.
        kernel_warnings_before: log
            .states
            .iter()
            .find(|s| s.when == "before" && s.complete)
            .map(|s| crate::measure::testrun::board_warnings(&s.text))
            .unwrap_or_default(),
        ..RunRecord::default()
    };
    Ok(Input {
        path: path.to_path_buf(),
        kind: "lava-log",
        run_json: Some(run_json),
        scenarios,
        printed_threshold_us: log.threshold_us,
    })
}

/// The job's scenarios in order, then any the log has output of but the job did not list.
fn scenario_names(log: &LavaLog) -> Vec<String> {
    let mut names = log.scenarios.clone();
    let seen =
        log.outputs.iter().map(|o| &o.scenario).chain(log.skipped.iter().map(|s| &s.scenario));
    for name in seen {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

fn scenario(
    path: &Path,
    log: &LavaLog,
    name: &str,
    tests: &[Program],
    rt: Option<&CpuSet>,
    nsecs: bool,
) -> ScenarioInput {
    let outputs: Vec<&RawOutput> = log.outputs.iter().filter(|o| o.scenario == name).collect();
    let skipped: Vec<&Skipped> = log.skipped.iter().filter(|s| s.scenario == name).collect();
    let mut invalid_reasons = Vec::new();
    if outputs.is_empty() && skipped.is_empty() {
        invalid_reasons.push(format!(
            "the LAVA log holds no output of scenario `{name}`; the job stopped before it ran"
        ));
    }
    let is_cyclictest = |o: &&&RawOutput| o.test == Program::Cyclictest.name();
    let ct_outputs: Vec<&RawOutput> =
        outputs.iter().filter(is_cyclictest).copied().filter(|o| o.format != "stderr").collect();
    // A job from before `--tests` printed no test list: it ran cyclictest only.
    let cyclictest =
        tests.is_empty() || tests.contains(&Program::Cyclictest) || !ct_outputs.is_empty();
    let mut runs = Vec::new();
    let mut commands = Vec::new();
    for raw in &ct_outputs {
        match raw.exit {
            Some(0) => {}
            Some(code) => invalid_reasons.push(format!("cyclictest exited with status {code} on the board")),
            None => invalid_reasons.push(
                "the log ends inside this scenario's raw output; the job stopped before cyclictest's results were printed".to_string(),
            ),
        }
        let source = PathBuf::from(format!("{}#{}", path.display(), raw.scenario));
        match cyclictest::parse(raw.raw.as_bytes()) {
            Ok(mut run) => {
                if nsecs && run.unit.is_none() {
                    run.unit = Some(cyclictest::Unit::Ns);
                }
                if raw.dropped > 0 {
                    run.warn(
                        None,
                        format!(
                            "{} inside the raw output {} left out",
                            crate::text::counted(raw.dropped, "kernel message line"),
                            if raw.dropped == 1 { "was" } else { "were" }
                        ),
                    );
                }
                commands.extend(run.cmdline.iter().cloned());
                runs.push((source, run));
            }
            Err(error) => invalid_reasons.push(format!(
                "the raw output of `{}` in {} is unusable: {error}",
                raw.scenario,
                path.display()
            )),
        }
    }
    if cyclictest && ct_outputs.is_empty() && !(outputs.is_empty() && skipped.is_empty()) {
        invalid_reasons.push(
            "the LAVA log holds no cyclictest output for this scenario; the job stopped before it"
                .to_string(),
        );
    }
    // The job's other tests in its order, then any other program the log has output of.
    let mut programs: Vec<Program> =
        tests.iter().copied().filter(|p| *p != Program::Cyclictest).collect();
    let named =
        outputs.iter().map(|o| o.test.as_str()).chain(skipped.iter().map(|s| s.test.as_str()));
    for test in named {
        match test.parse::<Program>() {
            Ok(Program::Cyclictest) => {}
            Ok(program) if !programs.contains(&program) => programs.push(program),
            Ok(_) => {}
            Err(_) => {
                let why = format!(
                    "the LAVA log names an unknown test `{}`",
                    crate::text::printable(test)
                );
                if !invalid_reasons.contains(&why) {
                    invalid_reasons.push(why);
                }
            }
        }
    }
    let tests = programs
        .into_iter()
        .map(|program| test_input(path, name, program, &outputs, &skipped, rt))
        .collect();
    let spoilers = board_checks(log, name, rt);
    invalid_reasons.extend(spoilers.invalid);
    if let Some((_, run)) = runs.first_mut() {
        for note in spoilers.notes {
            run.warn(None, note);
        }
    }
    ScenarioInput {
        label: None,
        name: name.to_string(),
        runs,
        invalid_reasons,
        fail_reasons: spoilers.fail,
        commands,
        cyclictest,
        tests,
        thermal: None,
        throttling: None,
        status: cyclictest.then(|| status(path, log, name)),
    }
}

/// cyclictest's status blocks in scenario `name` (the job asks for them at each doubling of
/// the elapsed time and prints them between status markers once cyclictest ended), or why
/// there are none. They only say whether the maximum was still rising: a frame missing, cut
/// short or printed twice (the board's console printed a marker) leaves that unknown.
fn status(
    path: &Path,
    log: &LavaLog,
    name: &str,
) -> (PathBuf, Result<cyclictest::status::StatusSnapshots, String>) {
    let source = PathBuf::from(format!("{}#{name}/cyclictest-status", path.display()));
    let frames: Vec<&BoardState> = log.statuses.iter().filter(|s| s.scenario == name).collect();
    let read = match frames.as_slice() {
        [] => Err(format!(
            "the LAVA log holds no cyclictest status snapshots for scenario `{name}` (a job from an older `rtbuild lava` asks for none; else the job stopped before printing them)"
        )),
        [one] if !one.complete => Err(format!(
            "the cyclictest status snapshots of scenario `{name}` (log line {}) are cut short: their end marker never came",
            one.line
        )),
        [one] => cyclictest::status::parse_status(one.text.as_bytes()).map_err(|e| {
            format!("the cyclictest status snapshots of scenario `{name}` are unreadable: {e}")
        }),
        _ => Err(format!(
            "the LAVA log holds {} frames of cyclictest status snapshots for scenario `{name}` (log lines {}); the job prints one, so the board's console printed the others",
            frames.len(),
            frames.iter().map(|s| s.line.to_string()).collect::<Vec<_>>().join(", ")
        )),
    };
    (source, read)
}

/// What the board's states before and after scenario `name` say, judged by `rtbuild test`'s
/// rules ([`crate::measure::testrun::board_state`]): an IRQ moved onto an RT CPU or RT throttling
/// makes the scenario INVALID, a `BUG:`/`WARNING:`/`Oops`/`hrtimer: interrupt took` logged
/// during it a FAIL. Each state is printed once by the job: a missing, unfinished or repeated
/// one (the board's console printed a marker) makes the scenario INVALID, never PASS.
fn board_checks(
    log: &LavaLog,
    name: &str,
    rt: Option<&CpuSet>,
) -> crate::measure::testrun::Spoilers {
    let mut found = crate::measure::testrun::Spoilers::default();
    let mine: Vec<&BoardState> = log.states.iter().filter(|s| s.scenario == name).collect();
    let promised = log.checks.as_deref() == Some(crate::lab::markers::STATE_CHECKS);
    if mine.is_empty() && !promised {
        found.notes.push(
            "the LAVA job printed no state of the board around this scenario (a job from an older `rtbuild lava`), so IRQs moved onto the RT CPUs and kernel warnings during the run were not checked".to_string(),
        );
        return found;
    }
    let mut pair: [Option<&BoardState>; 2] = [None, None];
    for (slot, when) in pair.iter_mut().zip(["before", "after"]) {
        let states: Vec<&&BoardState> = mine.iter().filter(|s| s.when == when).collect();
        let lines = || states.iter().map(|s| s.line.to_string()).collect::<Vec<_>>().join(", ");
        match states.as_slice() {
            [] => found.invalid.push(format!(
                "the LAVA log holds no state of the board {when} scenario `{name}` (the job stopped before printing it), so IRQ moves and kernel warnings during the run were not checked"
            )),
            [one] if !one.complete => found.invalid.push(format!(
                "the board's state {when} scenario `{name}` (log line {}) is cut short: its end marker never came", one.line
            )),
            [one] => *slot = Some(**one),
            _ => found.invalid.push(format!(
                "the LAVA log holds {} states of the board {when} scenario `{name}` (log lines {}); the job prints one, so the board's console printed the others",
                states.len(),
                lines()
            )),
        }
    }
    for state in mine.iter().filter(|s| s.when != "before" && s.when != "after") {
        found.invalid.push(format!(
            "the LAVA log holds a state of the board for scenario `{name}` at line {} with when={}, which the job never prints",
            state.line,
            crate::text::printable(&state.when)
        ));
    }
    let [Some(before), Some(after)] = pair else { return found };
    // Without the job's RT CPUs no IRQ can be said to have moved onto one.
    let none = CpuSet::default();
    let spoiled =
        crate::measure::testrun::board_state(&before.text, &after.text, rt.unwrap_or(&none));
    found.invalid.extend(spoiled.invalid);
    found.fail.extend(spoiled.fail);
    found.notes.extend(spoiled.notes);
    found
}

/// One program's raw outputs in one scenario, checked and read like `rtbuild test` checks and
/// reads them on its target.
fn test_input(
    path: &Path,
    scenario: &str,
    program: Program,
    outputs: &[&RawOutput],
    skipped: &[&Skipped],
    rt: Option<&CpuSet>,
) -> TestInput {
    let mut input = TestInput {
        program,
        outcomes: Vec::new(),
        invalid_reasons: Vec::new(),
        commands: Vec::new(),
        skipped: None,
        elapsed_s: None,
    };
    if let Some(skip) = skipped.iter().find(|s| s.test == program.name()) {
        input.skipped = Some(match skip.reason.as_str() {
            "no-hwlat-tracer" => format!(
                "the kernel on the board has no hwlat tracer (CONFIG_HWLAT_TRACER; tracefs `available_tracers` lacks hwlat), so {program} cannot measure"
            ),
            other => format!("the job skipped {program} on the board ({other})"),
        });
        return input;
    }
    let mine: Vec<&RawOutput> =
        outputs.iter().copied().filter(|o| o.test == program.name()).collect();
    if mine.is_empty() {
        input.invalid_reasons.push(format!(
            "the LAVA log holds no {program} output for this scenario; the job stopped before it ran"
        ));
        return input;
    }
    let mut labels: Vec<&str> = Vec::new();
    for o in &mine {
        if !labels.contains(&o.run.as_str()) {
            labels.push(&o.run);
        }
    }
    for label in labels {
        let blocks: Vec<&RawOutput> = mine.iter().copied().filter(|o| o.run == label).collect();
        let invalid = &mut input.invalid_reasons;
        let exit = blocks.iter().find(|b| b.format != "stderr").and_then(|b| b.exit);
        if blocks.iter().any(|b| b.exit.is_none()) {
            invalid.push(format!(
                "the log ends inside {label}'s output; the job stopped before it was printed whole"
            ));
        }
        // rt-migrate-test 2.4 exits 1 even when it passes; hwlatdetect exits 1 above its
        // threshold, which is a verdict, not an invalid run.
        let tolerated =
            matches!(program, Program::RtMigrateTest | Program::Hwlatdetect) && exit == Some(1);
        if let Some(code) = exit.filter(|c| *c != 0 && !tolerated) {
            // What it said last: on stderr, else on its standard output.
            let said = ["stderr", "text"]
                .iter()
                .filter_map(|f| blocks.iter().find(|b| b.format == *f && !b.raw.trim().is_empty()))
                .map(|b| crate::host::runner::last_lines(b.raw.trim(), 2).replace('\n', " / "))
                .next()
                .map_or_else(String::new, |s| format!(": {s}"));
            invalid.push(format!("{label} exited with code {code} on the board{said}"));
        }
        let has_json = blocks.iter().any(|b| b.format == "json" && !b.raw.trim().is_empty());
        if program.writes_json() && !has_json {
            invalid.push(format!("{label} wrote no JSON results, so it did not measure"));
        }
        let mut merged: Option<ProgramOutput> = None;
        for block in blocks.iter().filter(|b| b.raw.trim() != "") {
            let read = match block.format.as_str() {
                "json" => output::parse_json(&block.raw, program).map_err(|e| {
                    format!("the JSON output of {label} in the LAVA log is not valid {program} JSON: {e}")
                }),
                "text" => Ok(output::parse_text(&block.raw, program)),
                _ => continue,
            };
            match read {
                Ok(outcome) => merged = Some(output::merge(merged, outcome)),
                Err(why) => invalid.push(why),
            }
        }
        let Some(outcome) = merged else { continue };
        if outcome.says_nothing() {
            invalid.push(format!(
                "{label}'s output in the LAVA log holds no {program} results (it may have been cut short)"
            ));
            continue;
        }
        if let Some(rt) = rt {
            invalid.extend(crate::measure::testrun::placement(program, label, &outcome.rows, rt));
        }
        input.commands.extend(outcome.cmdline.iter().cloned());
        let source = PathBuf::from(format!("{}#{scenario}/{label}", path.display()));
        input.outcomes.push((source, outcome));
    }
    input
}
