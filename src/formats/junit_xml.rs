//! JUnit XML, as the Jenkins xunit plugin's `junit-10.xsd` defines it (a copy is in
//! `tests/data/junit-10.xsd`, and the tests validate every JUnit file rtbuild writes against
//! it): `report --junit` and `verify.junit.xml`.
//!
//! The shape the schema allows and nothing more: `<testsuites>` carries `name`, `tests`,
//! `failures`, `errors` and `time` (not `skipped`: the schema refuses it there); each
//! `<testsuite>` has the required `name`, `tests`, `failures`, `errors`, plus `skipped`, `time`
//! (seconds, three decimals) and `timestamp` (UTC, ISO 8601), then its `<properties>`; each
//! `<testcase>` has `name`, `classname`, `time` and at most one `<failure>` or `<skipped>`, then
//! its `<system-out>`. The schema allows `<properties>` on a suite only (not on a case), so
//! measured values are suite properties named after the case they belong to.
//!
//! Serialized by quick-xml's serde support, which escapes markup. Control characters (but tab,
//! newline and CR) and the invisible format characters that can reorder or hide shown text
//! (bidirectional overrides, zero-width characters) are written as `base::printable` writes
//! them (`\u{1b}`, `\u{202e}`): CI pages show the names and messages; U+FFFE and U+FFFF, which
//! XML 1.0 cannot hold, become U+FFFD.

use serde::Serialize;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename = "testsuites")]
pub(crate) struct TestSuites {
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@tests")]
    pub tests: usize,
    #[serde(rename = "@failures")]
    pub failures: usize,
    #[serde(rename = "@errors")]
    pub errors: usize,
    #[serde(rename = "@time", skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(rename = "testsuite")]
    pub suites: Vec<TestSuite>,
}

/// When a suite ran and for how long, when that is known.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Timing {
    pub started_unix: Option<u64>,
    pub elapsed_s: Option<f64>,
}

/// One suite: `rtbuild.<command>.<machine>.<scenario>`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TestSuite {
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@tests")]
    pub tests: usize,
    #[serde(rename = "@failures")]
    pub failures: usize,
    #[serde(rename = "@errors")]
    pub errors: usize,
    #[serde(rename = "@skipped")]
    pub skipped: usize,
    #[serde(rename = "@time", skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(rename = "@timestamp", skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Properties>,
    #[serde(rename = "testcase")]
    pub cases: Vec<TestCase>,
}

/// A suite's `<properties>`: named values (measured figures, for dashboards that chart them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Properties {
    #[serde(rename = "property")]
    pub list: Vec<Property>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Property {
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@value")]
    pub value: String,
}

/// One test case; `failure` and `skipped` exclude each other.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TestCase {
    #[serde(rename = "@name")]
    pub name: String,
    #[serde(rename = "@classname")]
    pub classname: String,
    /// Seconds, three decimals; absent when the input does not say how long the case ran.
    #[serde(rename = "@time", skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Skipped>,
    #[serde(rename = "system-out", skip_serializing_if = "Option::is_none")]
    pub system_out: Option<String>,
}

/// Why a case failed: the first reason as `message`, every reason as the text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Failure {
    #[serde(rename = "@message")]
    pub message: String,
    #[serde(rename = "@type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(rename = "$text")]
    pub text: String,
}

/// Why a case did not run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Skipped {
    #[serde(rename = "@message")]
    pub message: String,
}

impl TestCase {
    /// A case that passed.
    pub(crate) fn passed(classname: &str, name: String) -> TestCase {
        TestCase {
            name,
            classname: classname.to_string(),
            time: None,
            failure: None,
            skipped: None,
            system_out: None,
        }
    }
}

impl TestCase {
    /// The case with its duration.
    pub(crate) fn timed(self, elapsed_s: Option<f64>) -> TestCase {
        TestCase { time: elapsed_s.map(seconds), ..self }
    }
}

impl TestSuite {
    /// A suite of `cases`, its counts taken from them. Without a start and duration of its
    /// own, its time is the sum of its cases' when every case has one (what `junitparser
    /// merge` computes).
    pub(crate) fn new(name: String, timing: Timing, cases: Vec<TestCase>) -> TestSuite {
        let summed: Option<f64> = cases
            .iter()
            .map(|c| c.time.as_deref().and_then(|t| t.parse::<f64>().ok()))
            .sum::<Option<f64>>()
            .filter(|_| !cases.is_empty());
        let elapsed = timing.elapsed_s.or(summed);
        TestSuite {
            properties: None,
            tests: cases.len(),
            failures: cases.iter().filter(|c| c.failure.is_some()).count(),
            errors: 0,
            skipped: cases.iter().filter(|c| c.skipped.is_some()).count(),
            time: elapsed.map(seconds),
            timestamp: timing
                .started_unix
                .and_then(|s| i64::try_from(s).ok())
                .map(crate::text::iso_from_epoch),
            name,
            cases,
        }
    }
}

impl TestSuite {
    /// The suite with `properties` (name, value), when there are any.
    pub(crate) fn with_properties(self, properties: Vec<(String, String)>) -> TestSuite {
        let list: Vec<Property> =
            properties.into_iter().map(|(name, value)| Property { name, value }).collect();
        TestSuite { properties: (!list.is_empty()).then_some(Properties { list }), ..self }
    }
}

impl TestSuites {
    /// The file, its totals taken from the suites.
    pub(crate) fn new(name: &str, suites: Vec<TestSuite>) -> TestSuites {
        let times: Option<Vec<f64>> =
            suites.iter().map(|s| s.time.as_deref().and_then(|t| t.parse::<f64>().ok())).collect();
        TestSuites {
            name: name.to_string(),
            tests: suites.iter().map(|s| s.tests).sum(),
            failures: suites.iter().map(|s| s.failures).sum(),
            errors: suites.iter().map(|s| s.errors).sum(),
            time: times.filter(|t| !t.is_empty()).map(|t| seconds(t.iter().sum())),
            suites,
        }
    }

    /// The XML document, with its declaration and a final newline.
    pub(crate) fn to_xml(&self) -> String {
        let mut body = String::new();
        let mut serializer = quick_xml::se::Serializer::new(&mut body);
        serializer.indent(' ', 2);
        // Every field is a string or a number: serializing cannot fail.
        let _ = self.serialize(serializer);
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        for c in body.chars() {
            if !matches!(c, '\t' | '\n' | '\r') && crate::text::needs_escape(c) {
                out.extend(c.escape_default());
            } else {
                out.push(xml_char(c));
            }
        }
        out.push('\n');
        out
    }
}

/// Seconds in the schema's `SUREFIRE_TIME` form: digits, a point, three decimals.
fn seconds(value: f64) -> String {
    format!("{:.3}", if value.is_finite() { value.max(0.0) } else { 0.0 })
}

/// A character XML 1.0 can hold, else U+FFFD (markup itself never has such characters, so
/// this is safe on the serialized text).
fn xml_char(c: char) -> char {
    match c {
        '\u{FFFE}' | '\u{FFFF}' => '\u{FFFD}',
        c => c,
    }
}

/// `rtbuild.<command>.<machine>.<scenario>`, the name of a suite and the class of its cases.
pub(crate) fn suite_name(command: &str, machine: &str, scenario: &str) -> String {
    format!("rtbuild.{command}.{machine}.{scenario}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failing(name: &str, reason: &str) -> TestCase {
        TestCase {
            failure: Some(Failure {
                message: reason.to_string(),
                kind: Some("latency".to_string()),
                text: reason.to_string(),
            }),
            ..TestCase::passed("rtbuild.report.m.idle", name.to_string())
        }
    }

    #[test]
    fn counts_times_and_the_shape_the_schema_allows() {
        let suite = TestSuite::new(
            "rtbuild.report.m.idle".to_string(),
            Timing { started_unix: Some(1_700_000_000), elapsed_s: Some(61.25) },
            vec![
                TestCase::passed("rtbuild.report.m.idle", "ok".to_string()),
                failing("late", "max 120 us > 100 us"),
                TestCase {
                    skipped: Some(Skipped { message: "not installed".to_string() }),
                    ..TestCase::passed("rtbuild.report.m.idle", "oslat".to_string())
                },
            ],
        );
        let xml = TestSuites::new("rtbuild report", vec![suite]).to_xml();
        assert_eq!(
            xml,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <testsuites name=\"rtbuild report\" tests=\"3\" failures=\"1\" errors=\"0\" time=\"61.250\">\n\
             \x20 <testsuite name=\"rtbuild.report.m.idle\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"61.250\" timestamp=\"2023-11-14T22:13:20Z\">\n\
             \x20   <testcase name=\"ok\" classname=\"rtbuild.report.m.idle\"/>\n\
             \x20   <testcase name=\"late\" classname=\"rtbuild.report.m.idle\">\n\
             \x20     <failure message=\"max 120 us &gt; 100 us\" type=\"latency\">max 120 us &gt; 100 us</failure>\n\
             \x20   </testcase>\n\
             \x20   <testcase name=\"oslat\" classname=\"rtbuild.report.m.idle\">\n\
             \x20     <skipped message=\"not installed\"/>\n\
             \x20   </testcase>\n\
             \x20 </testsuite>\n\
             </testsuites>\n"
        );
    }

    #[test]
    fn markup_and_control_characters_cannot_break_the_document() {
        let case = failing("a<b>&\"c'", "bad\u{1}byte </failure>");
        let xml = TestSuites::new(
            "x",
            vec![TestSuite::new("s".to_string(), Timing::default(), vec![case])],
        )
        .to_xml();
        assert!(xml.contains("name=\"a&lt;b&gt;&amp;&quot;c'\""), "{xml}");
        assert!(xml.contains(">bad\\u{1}byte &lt;/failure&gt;</failure>"), "{xml}");
        assert!(!xml.contains("time="), "no timing, no time attribute: {xml}");
    }
}
