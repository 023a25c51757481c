//! JUnit XML of a verification, for CI test tabs ([`crate::formats::junit_xml`], the shape
//! Jenkins' xunit plugin accepts): one suite per verified source, named
//! `rtbuild.verify.<machine>.<source kind>`, one test case per check; a failed check carries
//! what was expected, what was found and where, a skipped check says why. `rtbuild image`
//! writes it beside `verify.json`.

use super::{CheckStatus, VerifyReport};
use crate::formats::junit_xml::suite_name;
use crate::formats::junit_xml::{Failure, Skipped, TestCase, TestSuite, TestSuites, Timing};

/// The JUnit file of `reports`, verified for `machine` at `timing`.
pub(crate) fn render(reports: &[VerifyReport], machine: &str, timing: Timing) -> String {
    let suites = reports
        .iter()
        .map(|report| {
            let name = suite_name("verify", machine, &report.kind.replace(' ', "-"));
            let cases = report
                .checks
                .iter()
                .map(|check| {
                    let detail = format!(
                        "expected {}; found {}; from {}{}",
                        check.expected,
                        check.found,
                        check.from,
                        check.reason.as_ref().map_or(String::new(), |r| format!("; {r}"))
                    );
                    let passed = TestCase::passed(&name, check.check.clone());
                    match check.status {
                        CheckStatus::Pass => passed,
                        CheckStatus::Fail => TestCase {
                            failure: Some(Failure {
                                message: format!("{} is not as planned", check.check),
                                kind: None,
                                text: detail,
                            }),
                            system_out: Some(format!("source: {}", report.source)),
                            ..passed
                        },
                        CheckStatus::Skip => {
                            TestCase { skipped: Some(Skipped { message: detail }), ..passed }
                        }
                    }
                })
                .collect();
            TestSuite::new(name, timing, cases)
        })
        .collect();
    TestSuites::new("rtbuild verify", suites).to_xml()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::verify_json::Check;

    #[test]
    fn one_case_per_check_with_the_evidence_of_failures() {
        let checks = vec![
            Check::new("CONFIG_PREEMPT_RT", true, "y", "y", "tmp/work/.config"),
            Check::new("cmdline isolcpus", false, "isolcpus=7", "<missing>", "cmdline.txt"),
            Check::skip("package rt-tests", "installed", "unknown", "no package manifest"),
        ];
        let reports =
            [VerifyReport::new("rtbuild/x/build".into(), "build folder".into(), checks, vec![])];
        let timing = Timing { started_unix: Some(1_700_000_000), elapsed_s: Some(0.25) };
        let xml = render(&reports, "rb3gen2-core-kit", timing);
        assert!(
            xml.contains(
                "<testsuite name=\"rtbuild.verify.rb3gen2-core-kit.build-folder\" tests=\"3\" \
                 failures=\"1\" errors=\"0\" skipped=\"1\" time=\"0.250\" \
                 timestamp=\"2023-11-14T22:13:20Z\">"
            ),
            "{xml}"
        );
        assert!(
            xml.contains(
                "<testcase name=\"CONFIG_PREEMPT_RT\" \
                 classname=\"rtbuild.verify.rb3gen2-core-kit.build-folder\"/>"
            ),
            "{xml}"
        );
        assert!(
            xml.contains("expected isolcpus=7; found &lt;missing&gt;; from cmdline.txt"),
            "{xml}"
        );
        assert!(xml.contains("<system-out>source: rtbuild/x/build</system-out>"), "{xml}");
        assert!(xml.contains("<skipped message="), "{xml}");
    }
}
