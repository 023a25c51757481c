//! `--junit FILE`: JUnit XML for CI, one test case per test and scenario (cyclictest, oslat,
//! …) at its limit; a FAIL carries every reason, a test that could not run is `<skipped>`. All text is XML-escaped (characters XML cannot hold become U+FFFD).

use std::fmt::Write;

use super::judge::fmt;
use crate::formats::report_json::{Report, ScenarioReport, Verdict};
use crate::rttests::Kind;

pub(crate) fn render(report: &Report) -> String {
    let cases: Vec<Vec<Case>> = report
        .inputs
        .iter()
        .map(|input| input.scenarios.iter().flat_map(|s| cases(s, report, &input.path)).collect())
        .collect();
    let total: usize = cases.iter().map(Vec::len).sum();
    let failures = cases.iter().flatten().filter(|c| !c.reasons.is_empty()).count();
    let skipped = cases.iter().flatten().filter(|c| c.skipped.is_some()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"rtbuild report\" tests=\"{total}\" failures=\"{failures}\" skipped=\"{skipped}\">"
    );
    for (input, cases) in report.inputs.iter().zip(&cases) {
        let failed = cases.iter().filter(|c| !c.reasons.is_empty()).count();
        let skipped = cases.iter().filter(|c| c.skipped.is_some()).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" skipped=\"{skipped}\">",
            escape(&input.path),
            cases.len()
        );
        for case in cases {
            let _ = write!(
                out,
                "    <testcase classname=\"rtbuild.report.{}\" name=\"{}\"",
                escape(&case.class),
                escape(&case.name)
            );
            // A spike's explanation is what CI users read first next to a failure.
            let output = if case.output.is_empty() {
                String::new()
            } else {
                format!("\n      <system-out>{}</system-out>", escape(&case.output.join("\n")))
            };
            if let Some(why) = &case.skipped {
                let _ = writeln!(
                    out,
                    ">\n      <skipped message=\"{}\"/>{output}\n    </testcase>",
                    escape(why)
                );
            } else if case.reasons.is_empty() && output.is_empty() {
                out.push_str("/>\n");
            } else if case.reasons.is_empty() {
                let _ = writeln!(out, ">{output}\n    </testcase>");
            } else {
                let _ = writeln!(
                    out,
                    ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>{output}\n    </testcase>",
                    escape(&case.reasons[0]),
                    case.kind,
                    escape(&case.reasons.join("\n"))
                );
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// One JUnit test case: one test in one scenario.
struct Case {
    class: String,
    name: String,
    kind: &'static str,
    reasons: Vec<String>,
    skipped: Option<String>,
    /// `<system-out>` lines: the explanation of each spike of `--trace-above-us`.
    output: Vec<String>,
}

/// cyclictest's case (when it measured), then one per other test, named
/// `SCENARIO: TEST: what passing means`.
fn cases(s: &ScenarioReport, report: &Report, input: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    if s.cyclictest {
        // Invalid-run reasons of the scenario belong to cyclictest's case (they are its run's).
        let reasons =
            if s.tests.is_empty() { s.reasons.clone() } else { s.cyclictest_reasons.clone() };
        cases.push(Case {
            class: "cyclictest".into(),
            name: format!("{}: cyclictest: max latency <= {} us", s.name, fmt(report.threshold_us)),
            kind: "latency",
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
            class: t.test.clone(),
            name: format!("{}: {}: {what}", s.name, t.test),
            kind,
            reasons: if t.verdict == Verdict::Fail { t.reasons.clone() } else { Vec::new() },
            skipped: t.skipped.clone(),
            output: Vec::new(),
        });
    }
    cases
}

/// Escapes text for XML attributes and content.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_handles_markup_quotes_and_control_characters() {
        assert_eq!(escape("a<b>&\"c'\u{1}\n"), "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}\n");
    }
}
