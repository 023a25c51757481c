//! JUnit XML of a verification, for CI test tabs: one test suite per verified source, one test
//! case per check; a failed check carries what was expected, what was found and where, a
//! skipped check says why. `rtbuild image` writes it beside `verify.json`.

use std::fmt::Write;

use super::{Report, Status};
use crate::report::junit::escape;

pub fn render(reports: &[Report]) -> String {
    let count =
        |status| reports.iter().flat_map(|r| &r.checks).filter(|c| c.status == status).count();
    let tests: usize = reports.iter().map(|r| r.checks.len()).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"rtbuild verify\" tests=\"{tests}\" failures=\"{}\" skipped=\"{}\">",
        count(Status::Fail),
        count(Status::Skip)
    );
    for report in reports {
        let failed = report.failures().count();
        let skipped = report.checks.iter().filter(|c| c.status == Status::Skip).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{} ({})\" tests=\"{}\" failures=\"{failed}\" skipped=\"{skipped}\">",
            escape(&report.source),
            escape(&report.kind),
            report.checks.len()
        );
        for check in &report.checks {
            let _ = write!(
                out,
                "    <testcase classname=\"rtbuild.verify\" name=\"{}\"",
                escape(&check.check)
            );
            let detail = format!(
                "expected {}; found {}; from {}{}",
                check.expected,
                check.found,
                check.from,
                check.reason.as_ref().map_or(String::new(), |r| format!("; {r}"))
            );
            match check.status {
                Status::Pass => out.push_str("/>\n"),
                Status::Fail => {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                        escape(&format!("{} is not as planned", check.check)),
                        escape(&detail)
                    );
                }
                Status::Skip => {
                    let _ = writeln!(
                        out,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        escape(&detail)
                    );
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Check;

    #[test]
    fn one_case_per_check_with_the_evidence_of_failures() {
        let checks = vec![
            Check::new("CONFIG_PREEMPT_RT", true, "y", "y", "tmp/work/.config"),
            Check::new("cmdline isolcpus", false, "isolcpus=7", "<missing>", "cmdline.txt"),
            Check::skip("package rt-tests", "installed", "unknown", "no package manifest"),
        ];
        let xml =
            render(&[Report::new("rtbuild/x/build".into(), "build folder".into(), checks, vec![])]);
        assert!(xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""), "{xml}");
        assert!(
            xml.contains("<testcase classname=\"rtbuild.verify\" name=\"CONFIG_PREEMPT_RT\"/>")
        );
        assert!(
            xml.contains("expected isolcpus=7; found &lt;missing&gt;; from cmdline.txt"),
            "{xml}"
        );
        assert!(xml.contains("<skipped message="), "{xml}");
    }
}
