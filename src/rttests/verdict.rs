//! Judging one program's [`ProgramOutput`]: latency tests against the latency threshold, oslat and
//! hwlatdetect against the noise limit, correctness tests from their own statements and
//! return codes. Every reason for a FAIL is listed.

use super::output::{ProgramOutput, Row};
use super::{Kind, Program};

/// The limits a run is judged against, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limits {
    pub latency_us: f64,
    pub noise_us: f64,
}

/// Reasons `outcome` fails; empty when it passes.
pub(crate) fn reasons(outcome: &ProgramOutput, limits: Limits) -> Vec<String> {
    let mut reasons = Vec::new();
    let program = outcome.program;
    // rt-migrate-test 2.4 exits 1 even when it prints `Passed!`, but its JSON return_code is 0.
    if let Some(code) = outcome.return_code.filter(|c| *c != 0) {
        reasons.push(format!("{program} returned {code}"));
    }
    reasons.extend(outcome.failures.iter().map(|f| format!("{program} reported: {f}")));
    match program.kind() {
        Kind::Latency => rows(outcome, limits.latency_us, "latency", "threshold", &mut reasons),
        Kind::Noise => rows(outcome, limits.noise_us, "OS noise", "noise limit", &mut reasons),
        Kind::Firmware => {
            if let Some(n) = outcome.exceeding.filter(|n| *n > 0) {
                reasons.push(format!(
                    "hwlatdetect saw {n} hardware/firmware latency samples above its {} µs threshold (SMIs or firmware stealing the CPU)",
                    fmt(limits.noise_us)
                ));
            } else if outcome.exceeding.is_none() && outcome.failures.is_empty() {
                reasons.push(
                    "hwlatdetect printed no summary (no `Samples exceeding threshold:` line)"
                        .into(),
                );
            }
        }
        Kind::Correctness => match outcome.passed {
            Some(false) => reasons.push(format!("{program} reported failure")),
            Some(true) => {}
            None => {
                let proven = match program {
                    // Only its `Passed!` (printed with -c) proves it: its exit status is 1 anyway.
                    Program::RtMigrateTest => false,
                    // pi_stress states nothing on success: no watchdog report and a JSON
                    // return code of 0 (or its inversion count in plain output) are the verdict.
                    Program::PiStress => outcome.return_code.is_some() || !outcome.facts.is_empty(),
                    _ => outcome.return_code == Some(0),
                };
                if !proven && outcome.failures.is_empty() {
                    reasons.push(format!(
                        "{program} stated no result (rt-migrate-test prints Passed!/Failed! only with -c)"
                    ));
                }
            }
        },
        Kind::Load => {}
    }
    reasons
}

fn rows(
    outcome: &ProgramOutput,
    limit: f64,
    what: &str,
    limit_name: &str,
    reasons: &mut Vec<String>,
) {
    if outcome.rows.is_empty() {
        reasons.push(format!("{} measured nothing (no thread results)", outcome.program));
        return;
    }
    for row in &outcome.rows {
        let who = who(outcome.program, row);
        if row.samples == Some(0) {
            reasons.push(format!("{who}: no samples recorded"));
            continue;
        }
        match row.max_us {
            None => reasons.push(format!("{who}: maximum {what} unknown")),
            Some(max) if max > limit => reasons.push(format!(
                "{who}: max {what} {} µs exceeds the {} µs {limit_name}",
                fmt(max),
                fmt(limit)
            )),
            Some(_) => {}
        }
    }
}

/// `CPU 3` for oslat, `thread 0 (CPU 3)` for the others.
pub(crate) fn who(program: Program, row: &Row) -> String {
    match (program, row.cpu) {
        (Program::Oslat, Some(cpu)) => format!("CPU {cpu}"),
        (_, Some(cpu)) => format!("thread {} (CPU {cpu})", row.thread),
        (_, None) => format!("thread {}", row.thread),
    }
}

/// Integers without decimals, else two decimals.
pub(crate) fn fmt(value: f64) -> String {
    if value.fract() == 0.0 { format!("{value:.0}") } else { format!("{value:.2}") }
}
