//! Running the rt-tests programs of `--tests` other than cyclictest inside a scenario (under
//! its load): each invocation through the helper's `run-program` (so Ctrl-C or a lost
//! connection stops it like cyclictest), its raw outputs fetched into `raw/`, then checked —
//! it ran, wrote its results, measured where it was placed — and judged.

use std::time::{Duration, Instant};

use super::judge::Ending;
use super::sequence::Suite;
use super::session::Session;
use crate::formats::run_json::TestRecord;
use crate::formats::verdict::TestVerdict;
use crate::measure::rttests::argv::Invocation;
use crate::measure::rttests::output::{self, ProgramOutput, Row, Sniffed};
use crate::measure::rttests::verdict::{self, Limits};
use crate::measure::rttests::{Kind, Program};
use crate::text::duration;

/// What every program's command line in a run is built from, `seconds` each.
pub(super) fn suite(req: &super::TestRequest, seconds: u64) -> Suite<'_> {
    Suite {
        layout: &req.layout,
        tests: &req.measurement.tests,
        test_args: &req.measurement.test_args,
        noise_us: req.measurement.noise_us,
        seconds,
    }
}

impl Session<'_> {
    /// The invocations of `program` in scenario `name` (target-side JSON paths in the state
    /// folder).
    pub(super) fn invocations(
        &self,
        name: &str,
        program: Program,
        seconds: u64,
    ) -> Vec<Invocation> {
        suite(self.req, seconds).invocations(program, &format!("{}/{name}", self.state))
    }

    /// Runs `program` in scenario `name`; the record is appended to the scenario's tests.
    pub(super) fn run_program(
        &mut self,
        index: usize,
        name: &str,
        program: Program,
        seconds: u64,
    ) -> Ending {
        let req = self.req;
        let started = Instant::now();
        let invocations = self.invocations(name, program, seconds);
        let mut record = TestRecord {
            name: program.name().to_string(),
            kind: program.kind().as_str().to_string(),
            state: "running".into(),
            skipped: None,
            commands: invocations.iter().map(|i| crate::text::quote::sh_join(&i.argv)).collect(),
            argv: invocations.iter().map(|i| i.argv.clone()).collect(),
            exit_codes: Vec::new(),
            files: Vec::new(),
            raw_files: Vec::new(),
            invalid_reasons: Vec::new(),
            fail_reasons: Vec::new(),
            verdict: None,
            rows: Vec::new(),
            elapsed_s: 0.0,
        };
        if program == Program::Hwlatdetect {
            let answer = self.helper(&["has-hwlat"]).unwrap_or_default();
            if !answer.contains("hwlat yes") {
                let why = format!(
                    "the kernel on {} has no hwlat tracer (CONFIG_HWLAT_TRACER; tracefs `available_tracers` lacks hwlat), so hwlatdetect cannot measure",
                    req.host
                );
                self.ui.warn(format!("{name}: hwlatdetect skipped: {why}"));
                record.state = "skipped".into();
                record.verdict = Some(TestVerdict::Skipped);
                record.skipped = Some(why);
                self.record.scenarios[index].tests.push(record);
                self.save();
                return Ending::Completed;
            }
        }
        self.record.scenarios[index].tests.push(record);
        let at = self.record.scenarios[index].tests.len() - 1;
        self.save();

        let mut ending = Ending::Completed;
        let mut outcomes: Vec<(Invocation, ProgramOutput)> = Vec::new();
        let mut invalid: Vec<String> = Vec::new();
        for invocation in &invocations {
            self.ui.status(
                "Testing",
                format!(
                    "{name}: {} for {} on RT CPUs {}",
                    invocation.label,
                    duration(seconds as f64),
                    req.layout.rt
                ),
            );
            let stem = format!("raw/{name}.{}", invocation.label);
            let (end, status) = self.run_one(program, invocation, &stem, seconds);
            self.record.scenarios[index].tests[at].exit_codes.push(status);
            let mut files = Vec::new();
            if let Some(json) = &invocation.json {
                let file_name = json.rsplit('/').next().unwrap_or_default().to_string();
                if let Some(text) = self.helper(&["fetch", &self.state.clone(), &file_name]) {
                    self.keep_for(index, &format!("{stem}.json"), text);
                }
            }
            let raw: Vec<String> = ["json", "txt", "stderr.txt"]
                .iter()
                .map(|suffix| format!("{stem}.{suffix}"))
                .filter(|f| std::fs::metadata(req.out.join(f)).is_ok_and(|m| m.len() > 0))
                .collect();
            let json_file = format!("{stem}.json");
            let text_file = format!("{stem}.txt");
            if raw.contains(&json_file) {
                files.push(json_file);
            }
            // The plain output carries what the JSON lacks: rt-migrate-test's Passed!/Failed!,
            // and everything hwlatdetect and (without JSON) the others say.
            let text_needed = program == Program::RtMigrateTest || files.is_empty();
            if text_needed && raw.contains(&text_file) {
                files.push(text_file);
            }
            let label = &invocation.label;
            if end == Ending::Completed {
                // rt-migrate-test 2.4 exits 1 even when it passes; hwlatdetect exits 1 above its
                // hard limit, which is a verdict, not an invalid run.
                let tolerated = matches!(program, Program::RtMigrateTest | Program::Hwlatdetect)
                    && status == Some(1);
                if status != Some(0) && !tolerated {
                    let stderr =
                        std::fs::read_to_string(req.out.join(format!("{stem}.stderr.txt")))
                            .unwrap_or_default();
                    invalid.push(format!(
                        "{label} exited with {}: {}",
                        status.map_or("a signal".to_string(), |c| format!("code {c}")),
                        crate::text::shown_tail(&stderr, 2)
                    ));
                }
                if invocation.json.is_some() && !raw.contains(&format!("{stem}.json")) {
                    invalid.push(format!("{label} wrote no JSON results, so it did not measure"));
                }
            }
            let mut merged: Option<ProgramOutput> = None;
            for file in &files {
                let path = req.out.join(file);
                // Opened once: the sniffer looks at the head, the reader goes on from it.
                let read = output::open(&path).map_err(|e| e.to_string()).and_then(|opened| {
                    match output::sniff_opened(&opened, Some(program)) {
                        Sniffed::Other { program: found, json } if found == program => {
                            output::read_opened(opened, program, json).map_err(|e| e.to_string())
                        }
                        _ => Err(format!("{file} is not {program} output")),
                    }
                });
                match read {
                    Ok(outcome) => merged = Some(output::merge(merged, outcome)),
                    Err(err) => invalid.push(err),
                }
            }
            if let Some(outcome) = merged {
                invalid.extend(placement(
                    program,
                    &invocation.label,
                    &outcome.rows,
                    &req.layout.rt,
                ));
                outcomes.push((invocation.clone(), outcome));
            }
            self.record.scenarios[index].tests[at].files.extend(files);
            self.record.scenarios[index].tests[at].raw_files.extend(raw);
            self.save();
            if end != Ending::Completed {
                ending = end;
                break;
            }
        }
        match ending {
            Ending::Interrupted => invalid.push("interrupted before the planned run time".into()),
            Ending::ConnectionLost => {
                invalid.push(format!("lost the connection to {} during the test", req.host));
            }
            Ending::Completed => {}
        }
        let limits = Limits {
            latency_us: req.threshold.us as f64,
            noise_us: req.measurement.noise_us as f64,
        };
        let mut fails = Vec::new();
        let mut rows = Vec::new();
        for (_, outcome) in &outcomes {
            for reason in verdict::reasons(outcome, limits) {
                let list = if reason.is_invalid() { &mut invalid } else { &mut fails };
                list.push(reason.text().to_string());
            }
            rows.extend(outcome.rows.iter().cloned());
        }
        if outcomes.is_empty() && invalid.is_empty() {
            invalid.push(format!("{program} left no output to judge"));
        }
        let t = &mut self.record.scenarios[index].tests[at];
        t.rows = rows;
        let judged = crate::formats::judge::verdict(&invalid, &fails);
        t.verdict = Some(judged.into());
        t.state = match ending {
            Ending::Completed => "done",
            Ending::Interrupted => "interrupted",
            Ending::ConnectionLost => "connection-lost",
        }
        .into();
        t.invalid_reasons = invalid;
        t.fail_reasons = fails;
        t.elapsed_s = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        let summary = summary(program, &t.rows);
        self.ui.status("Tested", format!("{name}: {program} {judged}; {summary}"));
        for reason in t.invalid_reasons.iter().chain(&t.fail_reasons) {
            self.ui.warn(format!("{name}: {program}: {reason}"));
        }
        self.save();
        ending
    }

    /// Runs one invocation until it ends, a stop signal, or a lost connection.
    fn run_one(
        &self,
        program: Program,
        invocation: &Invocation,
        stem: &str,
        seconds: u64,
    ) -> (Ending, Option<i32>) {
        let req = self.req;
        let mut args =
            vec!["run-program".to_string(), self.state.clone(), program.comm().to_string()];
        args.extend(invocation.argv.iter().cloned());
        let stdout = req.out.join(format!("{stem}.txt"));
        let stderr = req.out.join(format!("{stem}.stderr.txt"));
        let handle = match self.start_helper(&args, &stdout, &stderr) {
            Ok(h) => h,
            Err(warning) => {
                self.ui.warn(warning);
                return (Ending::Completed, None);
            }
        };
        let bar = self.ui.progress(seconds, &invocation.label);
        let started = Instant::now();
        let mut ending = Ending::Completed;
        loop {
            if handle.finished().is_some() {
                break;
            }
            if self.overran(started, seconds, &invocation.label, &handle) {
                ending = Ending::ConnectionLost;
                break;
            }
            if self.stop.raised() {
                self.ui.warn(format!(
                    "interrupted: stopping {} and the load on {}",
                    invocation.label, req.host
                ));
                ending = Ending::Interrupted;
                let _ = self.helper(&["stop", &self.state.clone()]);
                if !handle.wait_for(Duration::from_secs(10)) {
                    handle.kill();
                }
                break;
            }
            bar.set_position(started.elapsed().as_secs().min(seconds));
            std::thread::sleep(Duration::from_millis(100));
        }
        bar.finish_and_clear();
        let status = handle.finished();
        if ending == Ending::Completed && status.is_some_and(|s| req.host.connection_lost(&s)) {
            ending = Ending::ConnectionLost;
        }
        (ending, status.and_then(|s| s.code()))
    }
}

/// Whether the program measured where rtbuild placed it: oslat on every RT CPU, each
/// `NAME-cpuN` invocation on CPU N. `label` names the invocation.
pub(crate) fn placement(
    program: Program,
    label: &str,
    rows: &[Row],
    rt: &crate::plan::CpuSet,
) -> Vec<String> {
    let mut reasons = Vec::new();
    match program.kind() {
        Kind::Noise => {
            let cpus: Vec<u32> = rows.iter().filter_map(|r| r.cpu).collect();
            let want: Vec<u32> = rt.iter().collect();
            if cpus != want {
                reasons
                    .push(format!("{label} measured CPUs {cpus:?}, expected the RT CPUs {want:?}"));
            }
        }
        Kind::Latency => {
            // `pmqtest-cpu3`: every pair must have run on CPU 3.
            let cpu = label.rsplit_once("-cpu").and_then(|(_, c)| c.parse::<u32>().ok());
            for row in rows {
                match (cpu, row.cpu) {
                    (Some(want), Some(got)) if want != got => reasons.push(format!(
                        "{label}: thread {} ran on CPU {got}, not RT CPU {want}",
                        row.thread
                    )),
                    _ => {}
                }
            }
            if rows.is_empty() {
                reasons.push(format!("{label} reported no threads"));
            }
        }
        _ => {}
    }
    reasons
}

/// `CPU 1 max 12 µs` / `thread 0 (CPU 1) max 40 µs` / `no figures`.
fn summary(program: Program, rows: &[Row]) -> String {
    let parts: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} max {}",
                verdict::who(program, r),
                r.max_us.map_or_else(|| "?".to_string(), |m| format!("{} µs", verdict::fmt(m)))
            )
        })
        .collect();
    if parts.is_empty() { "no latency figures".into() } else { parts.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::CpuSet;

    #[test]
    fn placement_checks() {
        let rt = CpuSet::parse("2-3").unwrap();
        let row = |cpu| Row { cpu: Some(cpu), ..Row::default() };
        assert!(placement(Program::Oslat, "oslat", &[row(2), row(3)], &rt).is_empty());
        assert_eq!(
            placement(Program::Oslat, "oslat", &[row(0)], &rt),
            ["oslat measured CPUs [0], expected the RT CPUs [2, 3]"]
        );
        assert_eq!(
            placement(Program::Pmqtest, "pmqtest-cpu3", &[row(1)], &rt),
            ["pmqtest-cpu3: thread 0 ran on CPU 1, not RT CPU 3"]
        );
        assert!(placement(Program::Ssdd, "ssdd", &[], &rt).is_empty());
    }

    #[test]
    fn json_and_text_merge_into_one_outcome() {
        let json = output::parse_json(
            "{\"cmdline:\": \"rt-migrate-test -c\", \"return_code\": 0}",
            Program::RtMigrateTest,
        )
        .unwrap();
        let text = output::parse_text(" Passed!\n", Program::RtMigrateTest);
        let merged = output::merge(Some(json), text);
        assert_eq!((merged.passed, merged.return_code), (Some(true), Some(0)));
        let limits = Limits { latency_us: 100.0, noise_us: 20.0 };
        assert!(verdict::reasons(&merged, limits).is_empty());
    }
}
