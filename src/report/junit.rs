//! `--junit FILE`: JUnit XML for CI ([`crate::formats::junit_xml`], the shape Jenkins' xunit
//! plugin accepts): one suite per input and scenario, named `rtbuild.report.<machine>.<scenario>`
//! with the scenario's start and duration from `run.json`; one test case per test (cyclictest,
//! oslat, …) at its limit. A FAIL or INVALID case carries every reason, its message starting
//! with that word; a test that could not run is `<skipped>`, a spike's explanation is the
//! case's `<system-out>`.

use super::judge::fmt;
use crate::formats::junit_xml::{Failure, Skipped, TestCase, TestSuite, TestSuites, Timing};
use crate::formats::report_json::{LatencyReport, ScenarioReport, Verdict};
use crate::rttests::Kind;

pub(crate) fn render(report: &LatencyReport) -> String {
    let machine = report.machine.as_deref().unwrap_or("unknown-machine");
    let suites = report
        .inputs
        .iter()
        .flat_map(|input| {
            input.scenarios.iter().map(move |s| {
                let name = suite_name("report", machine, &s.name);
                let timing = Timing { started_unix: s.started_unix, elapsed_s: s.elapsed_s };
                let cases =
                    cases(s, report, &input.path).into_iter().map(|c| c.junit(&name)).collect();
                TestSuite::new(name, timing, cases)
            })
        })
        .collect();
    TestSuites::new("rtbuild report", suites).to_xml()
}

/// `rtbuild.<command>.<machine>.<scenario>`, the name of a suite and the class of its cases.
pub(crate) fn suite_name(command: &str, machine: &str, scenario: &str) -> String {
    format!("rtbuild.{command}.{machine}.{scenario}")
}

/// One JUnit test case: one test in one scenario.
struct Case {
    name: String,
    kind: &'static str,
    /// FAIL or INVALID when `reasons` is not empty: the first word of the failure message.
    verdict: Verdict,
    reasons: Vec<String>,
    skipped: Option<String>,
    /// `<system-out>` lines: the explanation of each spike of `--trace-above-us`.
    output: Vec<String>,
}

/// cyclictest's case (when it measured), then one per other test, named
/// `SCENARIO: TEST: what passing means`.
fn cases(s: &ScenarioReport, report: &LatencyReport, input: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    if s.cyclictest {
        // Invalid-run reasons of the scenario belong to cyclictest's case (they are its run's).
        let reasons =
            if s.tests.is_empty() { s.reasons.clone() } else { s.cyclictest_reasons.clone() };
        let verdict = if !s.invalid_reasons.is_empty() { Verdict::Invalid } else { Verdict::Fail };
        cases.push(Case {
            name: format!("{}: cyclictest: max latency <= {} us", s.name, fmt(report.threshold_us)),
            kind: "latency",
            verdict,
            reasons,
            skipped: None,
            output: report
                .spikes
                .iter()
                .filter(|sp| sp.input == input && sp.scenario == s.name)
                .map(|sp| {
                    format!(
                        "spike: {} on CPU {} ({}): {}",
                        sp.latency_us.map_or_else(|| "?".to_string(), |l| format!("{} us", fmt(l))),
                        sp.cpu.map_or_else(|| "?".to_string(), |c| c.to_string()),
                        sp.trace_file,
                        sp.explanation
                    )
                })
                .collect(),
        });
    }
    for t in &s.tests {
        let (what, kind) = match t.kind {
            Kind::Latency => (format!("max latency <= {} us", fmt(report.threshold_us)), "latency"),
            Kind::Noise => {
                (format!("max OS noise <= {} us on every RT CPU", fmt(report.noise_us)), "noise")
            }
            Kind::Firmware => (
                format!("no hardware/firmware latency above {} us", fmt(report.noise_us)),
                "firmware",
            ),
            Kind::Correctness | Kind::Load => ("passes".to_string(), "correctness"),
        };
        cases.push(Case {
            name: format!("{}: {}: {what}", s.name, t.test),
            kind,
            verdict: t.verdict,
            reasons: if t.verdict.passed() { Vec::new() } else { t.reasons.clone() },
            skipped: t.skipped.clone(),
            output: Vec::new(),
        });
    }
    cases
}

impl Case {
    fn junit(self, class: &str) -> TestCase {
        let failure = (!self.reasons.is_empty()).then(|| Failure {
            message: format!("{}: {}", self.verdict, self.reasons[0]),
            kind: Some(self.kind.to_string()),
            text: self.reasons.join("\n"),
        });
        TestCase {
            failure,
            skipped: self.skipped.map(|message| Skipped { message }),
            system_out: (!self.output.is_empty()).then(|| self.output.join("\n")),
            ..TestCase::passed(class, self.name)
        }
    }
}
