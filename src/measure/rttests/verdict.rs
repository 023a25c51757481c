//! Judging one program's [`ProgramOutput`]: latency tests against the latency threshold, oslat and
//! hwlatdetect against the noise limit, correctness tests from their own statements and
//! return codes. Every reason for a FAIL or an INVALID run is listed, each with its verdict: a
//! figure that is not a finite number ≥ 0 (`nan`, `inf`, `-5`) is unknown, and an unknown
//! figure makes the run INVALID, never PASS. The maxima are held against their limits, and the
//! reasons turned into a verdict, by the one judge ([`crate::formats::judge`]).

use super::output::{ProgramOutput, Row};
use super::{Kind, Program};
use crate::formats::judge::{Against, max_against};
use crate::formats::report_json::{Reason, is_latency};

/// The limits a run is judged against, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limits {
    pub latency_us: f64,
    pub noise_us: f64,
}

/// Reasons `outcome` does not pass; empty when it passes.
pub(crate) fn reasons(outcome: &ProgramOutput, limits: Limits) -> Vec<Reason> {
    let mut reasons = Vec::new();
    let program = outcome.program;
    // rt-migrate-test 2.4 exits 1 even when it prints `Passed!`, but its JSON return_code is 0.
    if let Some(code) = outcome.return_code.filter(|c| *c != 0) {
        reasons.push(Reason::Fail(format!("{program} returned {code}")));
    }
    reasons
        .extend(outcome.failures.iter().map(|f| Reason::Fail(format!("{program} reported: {f}"))));
    match program.kind() {
        Kind::Latency => rows(outcome, limits.latency_us, "latency", "threshold", &mut reasons),
        Kind::Noise => rows(outcome, limits.noise_us, "OS noise", "noise limit", &mut reasons),
        Kind::Firmware => {
            if let Some(n) = outcome.exceeding.filter(|n| *n > 0) {
                reasons.push(Reason::Fail(format!(
                    "hwlatdetect saw {n} hardware/firmware latency samples above its {} µs threshold (SMIs or firmware stealing the CPU)",
                    fmt(limits.noise_us)
                )));
            } else if outcome.exceeding.is_none() && outcome.failures.is_empty() {
                reasons.push(Reason::Invalid(
                    "hwlatdetect printed no summary (no `Samples exceeding threshold:` line)"
                        .into(),
                ));
            }
            figures(outcome, "hardware latency", &mut reasons);
        }
        Kind::Correctness => match outcome.passed {
            Some(false) => reasons.push(Reason::Fail(format!("{program} reported failure"))),
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
                    reasons.push(Reason::Invalid(format!(
                        "{program} stated no result (rt-migrate-test prints Passed!/Failed! only with -c)"
                    )));
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
    reasons: &mut Vec<Reason>,
) {
    if outcome.rows.is_empty() {
        reasons.push(Reason::Invalid(format!(
            "{} measured nothing (no thread results)",
            outcome.program
        )));
        return;
    }
    figures(outcome, what, reasons);
    for row in &outcome.rows {
        let who = who(outcome.program, row);
        if row.samples == Some(0) {
            reasons.push(Reason::Invalid(format!("{who}: no samples recorded")));
            continue;
        }
        match max_against(row.max_us, limit) {
            Against::Missing => {
                reasons.push(Reason::Invalid(format!("{who}: maximum {what} unknown")));
            }
            // Not a latency: said by `figures`.
            Against::NotALatency(_) => {}
            Against::Over(max) => reasons.push(Reason::Fail(format!(
                "{who}: max {what} {} µs exceeds the {} µs {limit_name}",
                fmt(max),
                fmt(limit)
            ))),
            Against::Within(_) => {}
        }
    }
}

/// Every figure of every row that is not a latency (`nan`, `inf`, a negative number): the
/// figure is unknown, so the run is INVALID.
fn figures(outcome: &ProgramOutput, what: &str, reasons: &mut Vec<Reason>) {
    // A thread without samples writes `"avg": nan`: "no samples recorded" says it already.
    let empty = outcome.rows.iter().any(|r| r.samples == Some(0));
    for bad in outcome.bad_figures.iter().filter(|_| !empty) {
        reasons.push(Reason::Invalid(format!(
            "{} wrote {bad}, which is not a finite number ≥ 0, so the figure is unknown",
            outcome.program
        )));
    }
    for row in &outcome.rows {
        let who = who(outcome.program, row);
        for (name, value) in [("min", row.min_us), ("avg", row.avg_us), ("max", row.max_us)] {
            if let Some(value) = value.filter(|v| !is_latency(*v)) {
                reasons.push(Reason::Invalid(format!(
                    "{who}: {name} {what} `{value}` is not a latency (a finite number ≥ 0), so it is unknown"
                )));
            }
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
