//! `--junit FILE`: JUnit XML for CI ([`crate::formats::junit_xml`], the shape Jenkins' xunit
//! plugin accepts): one suite per input and scenario, named `rtbuild.report.<machine>.<scenario>`
//! with the scenario's start and duration from `run.json`; one test case per test (cyclictest,
//! oslat, …), named `SCENARIO: TEST` (no limit in the name: changing the threshold keeps the
//! case's history in Jenkins and GitLab). Each case carries its `time` (the program's own run
//! time from `run.json`; cyclictest's is the scenario's less the other programs', or, for a
//! file that does not say, its samples times its interval) and a one-line `<system-out>` with
//! what it measured against its limit, then the explanation of each spike. The measured values
//! (max, p99.9, samples, the CPU of the max) are `<property>`s of the suite named
//! `TEST.STATISTIC` (Jenkins' schema allows properties on suites only). A FAIL or INVALID case
//! carries every reason, its message starting with that word; a test that could not run is
//! `<skipped>`.

use super::judge::fmt;
use crate::formats::junit_xml::{
    Failure, Skipped, TestCase, TestSuite, TestSuites, Timing, suite_name,
};
use crate::formats::report_json::{LatencyReport, ScenarioReport, ThreadReport, Verdict};
use crate::measure::rttests::Kind;

pub(crate) fn render(report: &LatencyReport) -> String {
    let machine = report.machine.as_deref().unwrap_or("unknown-machine");
    let suites = report
        .inputs
        .iter()
        .flat_map(|input| {
            input.scenarios.iter().map(move |s| {
                let name = suite_name("report", machine, &s.name);
                let timing = Timing { started_unix: s.started_unix, elapsed_s: s.elapsed_s };
                let cases = cases(s, report, &input.path);
                let properties = cases
                    .iter()
                    .flat_map(|c| {
                        c.values.iter().map(|(stat, v)| (format!("{}.{stat}", c.test), v.clone()))
                    })
                    .collect();
                let cases = cases.into_iter().map(|c| c.junit(&name)).collect();
                TestSuite::new(name, timing, cases).with_properties(properties)
            })
        })
        .collect();
    TestSuites::new("rtbuild report", suites).to_xml()
}

/// One JUnit test case: one test in one scenario.
struct Case {
    /// The program (`cyclictest`, `oslat`, …): the prefix of its suite properties.
    test: String,
    name: String,
    kind: &'static str,
    /// FAIL or INVALID when `reasons` is not empty: the first word of the failure message.
    verdict: Verdict,
    reasons: Vec<String>,
    skipped: Option<String>,
    /// Seconds it ran, when known.
    time: Option<f64>,
    /// Measured values: (statistic, value), e.g. (`max_us`, `41`).
    values: Vec<(&'static str, String)>,
    /// `<system-out>` lines: what it measured against its limit, then the explanation of each
    /// spike of `--trace-above-us`.
    output: Vec<String>,
}

/// cyclictest's case (when it measured), then one per other test, named `SCENARIO: TEST`.
fn cases(s: &ScenarioReport, report: &LatencyReport, input: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    if s.cyclictest {
        // Invalid-run reasons of the scenario belong to cyclictest's case (they are its run's).
        let reasons =
            if s.tests.is_empty() { s.reasons.clone() } else { s.cyclictest_reasons.clone() };
        let verdict = if !s.invalid_reasons.is_empty() { Verdict::Invalid } else { Verdict::Fail };
        let (values, summary) = cyclictest_values(s, report.threshold_us);
        cases.push(Case {
            test: "cyclictest".into(),
            name: format!("{}: cyclictest", s.name),
            kind: "latency",
            verdict,
            reasons,
            skipped: None,
            time: cyclictest_time(s),
            values,
            output: std::iter::once(summary)
                .chain(
                    report
                        .spikes
                        .iter()
                        .filter(|sp| sp.input == input && sp.scenario == s.name)
                        .map(|sp| {
                            format!(
                                "spike: {} on CPU {} ({}): {}",
                                sp.latency_us
                                    .map_or_else(|| "?".to_string(), |l| format!("{} us", fmt(l))),
                                sp.cpu.map_or_else(|| "?".to_string(), |c| c.to_string()),
                                sp.trace_file,
                                sp.explanation
                            )
                        }),
                )
                .collect(),
        });
    }
    for t in &s.tests {
        let (limit, kind) = match t.kind {
            Kind::Latency => (format!("limit {} us", fmt(report.threshold_us)), "latency"),
            Kind::Noise => {
                (format!("noise limit {} us on every RT CPU", fmt(report.noise_us)), "noise")
            }
            Kind::Firmware => (format!("noise limit {} us", fmt(report.noise_us)), "firmware"),
            Kind::Correctness | Kind::Load => {
                let outcome = if t.verdict == Verdict::Fail { "failed" } else { "passed" };
                (format!("its own check {outcome}"), "correctness")
            }
        };
        let (values, measured) = row_values(&t.rows);
        let summary = match (&t.skipped, measured) {
            (Some(why), _) => format!("{}: not run: {why}", t.test),
            (None, Some(measured)) => format!("{}: {measured}; {limit}", t.test),
            (None, None) => format!("{}: {limit}", t.test),
        };
        cases.push(Case {
            test: t.test.clone(),
            name: format!("{}: {}", s.name, t.test),
            kind,
            verdict: t.verdict,
            reasons: if t.verdict.passed() { Vec::new() } else { t.reasons.clone() },
            skipped: t.skipped.clone(),
            time: t.elapsed_s,
            values,
            output: vec![summary],
        });
    }
    cases
}

/// cyclictest's measured values and its one-line summary.
fn cyclictest_values(
    s: &ScenarioReport,
    threshold_us: f64,
) -> (Vec<(&'static str, String)>, String) {
    let all = &s.all;
    let max_cpu = max_thread(&s.threads).and_then(|t| t.cpu);
    let mut values = Vec::new();
    if let Some(max) = all.max_us {
        values.push(("max_us", fmt(max)));
    }
    if let Some(p) = all.p999_us {
        values.push(("p99.9_us", fmt(p)));
    }
    values.push(("samples", all.samples.to_string()));
    if let Some(cpu) = max_cpu {
        values.push(("max_cpu", cpu.to_string()));
    }
    let mut words = vec![match all.max_us {
        Some(max) => format!("max {} us", fmt(max)),
        None => "max unknown".to_string(),
    }];
    if let Some(cpu) = max_cpu {
        words[0].push_str(&format!(" on CPU {cpu}"));
    }
    if let Some(p) = all.p999_us {
        words.push(format!("p99.9 {} us", fmt(p)));
    }
    words.push(crate::text::counted(all.samples, "sample"));
    let summary = format!("cyclictest: {}; limit {} us", words.join(", "), fmt(threshold_us));
    (values, summary)
}

/// The thread with the highest max.
fn max_thread(threads: &[ThreadReport]) -> Option<&ThreadReport> {
    threads
        .iter()
        .filter(|t| t.max_us.is_some())
        .max_by(|a, b| a.max_us.partial_cmp(&b.max_us).unwrap_or(std::cmp::Ordering::Equal))
}

/// How long cyclictest ran: the scenario's time less the other programs' (they run one after
/// another), else the longest thread's samples times its interval.
fn cyclictest_time(s: &ScenarioReport) -> Option<f64> {
    if let Some(elapsed) = s.elapsed_s {
        let others: f64 = s.tests.iter().filter_map(|t| t.elapsed_s).sum();
        return Some((elapsed - others).max(0.0));
    }
    s.threads
        .iter()
        .filter_map(|t| Some(t.samples as f64 * t.interval_us? as f64 / 1e6))
        .fold(None, |most: Option<f64>, t| Some(most.map_or(t, |m| m.max(t))))
}

/// Another program's measured values (the highest max over its rows, that row's CPU, every
/// row's samples) and what they say in words.
fn row_values(
    rows: &[crate::measure::rttests::output::Row],
) -> (Vec<(&'static str, String)>, Option<String>) {
    let top = rows
        .iter()
        .filter(|r| r.max_us.is_some())
        .max_by(|a, b| a.max_us.partial_cmp(&b.max_us).unwrap_or(std::cmp::Ordering::Equal));
    let samples: Option<u64> = rows.iter().map(|r| r.samples).sum();
    let mut values = Vec::new();
    let mut words = Vec::new();
    if let Some(row) = top
        && let Some(max) = row.max_us
    {
        values.push(("max_us", fmt(max)));
        words.push(match row.cpu {
            Some(cpu) => format!("max {} us on CPU {cpu}", fmt(max)),
            None => format!("max {} us", fmt(max)),
        });
    }
    if let Some(n) = samples.filter(|_| !rows.is_empty()) {
        values.push(("samples", n.to_string()));
        words.push(crate::text::counted(n, "sample"));
    }
    if let Some(cpu) = top.and_then(|r| r.cpu) {
        values.push(("max_cpu", cpu.to_string()));
    }
    (values, (!words.is_empty()).then(|| words.join(", ")))
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
            ..TestCase::passed(class, self.name).timed(self.time)
        }
    }
}
