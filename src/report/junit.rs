//! `--junit FILE`: JUnit XML for CI, one test case per scenario at the threshold; a FAIL
//! carries every reason. All text is XML-escaped (characters XML cannot hold become U+FFFD).

use std::fmt::Write;

use super::judge::fmt;
use crate::formats::report_json::{Report, Verdict};

pub(crate) fn render(report: &Report) -> String {
    let scenarios: Vec<_> =
        report.inputs.iter().flat_map(|i| i.scenarios.iter().map(move |s| (i, s))).collect();
    let failures = scenarios.iter().filter(|(_, s)| s.verdict == Verdict::Fail).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"rtbuild report\" tests=\"{}\" failures=\"{failures}\">",
        scenarios.len()
    );
    for input in &report.inputs {
        let failed = input.scenarios.iter().filter(|s| s.verdict == Verdict::Fail).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\">",
            escape(&input.path),
            input.scenarios.len()
        );
        for s in &input.scenarios {
            let name = format!("{}: max latency <= {} us", s.name, fmt(report.threshold_us));
            let _ = write!(
                out,
                "    <testcase classname=\"rtbuild.report\" name=\"{}\"",
                escape(&name)
            );
            if s.verdict == Verdict::Pass {
                out.push_str("/>\n");
                continue;
            }
            let message = s.reasons.first().map_or("failed", String::as_str);
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{}\" type=\"latency\">{}</failure>\n    </testcase>",
                escape(message),
                escape(&s.reasons.join("\n"))
            );
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
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
