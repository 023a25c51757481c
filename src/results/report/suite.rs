//! Verdicts for the rt-tests programs other than cyclictest: each program's outputs in a
//! scenario are judged together ([`crate::measure::rttests::verdict`]) into one [`TestReport`].

use super::input::TestInput;
use crate::formats::report_json::TestReport;
use crate::measure::rttests::verdict::{self, Limits};

pub(super) fn judge(input: &TestInput, limits: Limits) -> TestReport {
    let mut invalid_reasons: Vec<String> =
        input.invalid_reasons.iter().map(|r| format!("invalid run: {r}")).collect();
    let mut reasons: Vec<String> = Vec::new();
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    // rt-migrate-test's JSON says nothing about the check and its plain output nothing about
    // the run: the program's outputs are judged as one.
    let mut merged: Option<crate::measure::rttests::output::ProgramOutput> = None;
    for (_, outcome) in &input.outcomes {
        for fact in &outcome.facts {
            if !notes.contains(fact) {
                notes.push(fact.clone());
            }
        }
        merged = Some(match merged.take() {
            None => outcome.clone(),
            Some(mut m) => {
                m.passed = match (m.passed, outcome.passed) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (a, b) => a.or(b),
                };
                m.return_code = match (m.return_code, outcome.return_code) {
                    (Some(a), Some(b)) => Some(if a != 0 { a } else { b }),
                    (a, b) => a.or(b),
                };
                m.exceeding = m.exceeding.or(outcome.exceeding);
                m.failures.extend(outcome.failures.iter().cloned());
                m.facts.extend(outcome.facts.iter().cloned());
                m.bad_figures.extend(outcome.bad_figures.iter().cloned());
                m.rows.extend(outcome.rows.iter().cloned());
                m
            }
        });
    }
    if let Some(outcome) = &mut merged {
        // Rows from a JSON file and the same program's plain output describe the same threads.
        outcome.rows = dedup(std::mem::take(&mut outcome.rows));
        rows = outcome.rows.clone();
        for reason in verdict::reasons(outcome, limits) {
            let list = if reason.is_invalid() { &mut invalid_reasons } else { &mut reasons };
            let text = reason.text().to_string();
            if !list.contains(&text) {
                list.push(text);
            }
        }
    }
    let verdict = crate::formats::judge::verdict(&invalid_reasons, &reasons);
    // Every reason, the ones that make the run invalid first.
    let mut all = invalid_reasons.clone();
    all.append(&mut reasons);
    TestReport {
        test: input.program.name().to_string(),
        kind: input.program.kind(),
        verdict,
        skipped: input.skipped.clone(),
        reasons: all,
        invalid_reasons,
        notes,
        files: input.outcomes.iter().map(|(p, _)| p.display().to_string()).collect(),
        commands: input.commands.clone(),
        rows,
        elapsed_s: input.elapsed_s,
    }
}

/// Drops rows that repeat an earlier row's thread and CPU (JSON and text of one run).
fn dedup(
    rows: Vec<crate::measure::rttests::output::Row>,
) -> Vec<crate::measure::rttests::output::Row> {
    let mut kept: Vec<crate::measure::rttests::output::Row> = Vec::new();
    for row in rows {
        let repeat = kept
            .iter()
            .any(|k| k.thread == row.thread && k.cpu == row.cpu && k.max_us == row.max_us);
        if !repeat {
            kept.push(row);
        }
    }
    kept
}
