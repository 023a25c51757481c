//! One run as the history records it: what `rtbuild report` read and judged (the same reading
//! of result folders and LAVA logs, [`crate::results::report::build_from`]), with the build
//! identity and the tuning the run saw.

use std::path::Path;

use super::HistoryError;
use super::bundle_identity::BundleIdentity;
use crate::formats::history_json::{BuildInputs, HistoryResult, HistoryRun};
use crate::formats::judge::{self, Findings};
use crate::formats::report_json::{LatencyReport, ScenarioReport, ThreadReport};
use crate::formats::run_json::RunRecord;
use crate::formats::verdict::TestVerdict;

/// Reads RUN (a result folder or a LAVA job log) as `report` does, and records it.
pub(crate) fn read(
    path: &Path,
    bundle: Option<&BundleIdentity>,
    threshold_us: Option<f64>,
) -> Result<HistoryRun, HistoryError> {
    read_found(path, crate::results::input::sniff(path), bundle, threshold_us)
}

/// Reads what the sniffer found at `path` (see [`read`]), without opening it again.
pub(crate) fn read_found(
    path: &Path,
    found: Result<crate::results::input::Measurement, crate::results::report::error::ReportError>,
    bundle: Option<&BundleIdentity>,
    threshold_us: Option<f64>,
) -> Result<HistoryRun, HistoryError> {
    use crate::results::input::{self, Measurement};
    let found = match found {
        Ok(
            found @ (Measurement::ResultFolder | Measurement::Testkit(_) | Measurement::LavaLog(_)),
        ) => found,
        _ => {
            return Err(HistoryError::Input(format!(
                "{} is neither an `rtbuild test` result folder nor a LAVA job log; pass what `rtbuild report` reads",
                path.display()
            )));
        }
    };
    let options = crate::results::report::Options { threshold_us, ..Default::default() };
    crate::results::report::refuse_bad_threshold(&options).map_err(HistoryError::Report)?;
    let input = input::read_sniffed(path, found, false).map_err(HistoryError::Report)?;
    from_input(&input, bundle, threshold_us)
}

/// The run of one input already read (see [`read`]).
pub(crate) fn from_input(
    input: &crate::results::report::input::Input,
    bundle: Option<&BundleIdentity>,
    threshold_us: Option<f64>,
) -> Result<HistoryRun, HistoryError> {
    let options = crate::results::report::Options { threshold_us, ..Default::default() };
    let report =
        crate::results::report::build_from(&options, &[input]).map_err(HistoryError::Report)?;
    Ok(from_report(&input.path.display().to_string(), &report, input.run_json.as_ref(), bundle))
}

/// The run of a one-input report; `digest` covers everything but the source, the time it was
/// added and the bundle's identity.
pub(crate) fn from_report(
    source: &str,
    report: &LatencyReport,
    run_json: Option<&RunRecord>,
    bundle: Option<&BundleIdentity>,
) -> HistoryRun {
    let fingerprint = run_json.and_then(|r| r.fingerprint.as_ref());
    let (kernel_release, kernel_version) = kernel_of(fingerprint);
    let results: Vec<HistoryResult> =
        report.inputs.iter().flat_map(|i| &i.scenarios).flat_map(scenario_results).collect();
    let valid = results.iter().all(|r| r.valid);
    let tuning = tuning_facts(run_json);
    let mut run = HistoryRun {
        digest: String::new(),
        source: String::new(),
        kind: report.inputs.first().map(|i| i.kind.clone()).unwrap_or_default(),
        added_unix: 0,
        machine: report.machine.clone().or_else(|| run_json.and_then(|r| r.machine.clone())),
        target: run_json.map(|r| r.target.clone()).filter(|t| !t.is_empty()),
        kernel_release,
        kernel_version,
        // The config the target ran, as `rtbuild test` digested it there.
        kernel_config_digest: fingerprint.and_then(|f| f.kernel_config_sha256.clone()),
        lock_digest: None,
        bundle_digest: None,
        tuning_fingerprint: (!tuning.is_empty())
            .then(|| crate::files::digest::sha256_hex(tuning.join("\n").as_bytes())),
        started_unix: run_json.map(|r| r.started_unix as i64).filter(|s| *s > 0),
        duration_s: run_json
            .map(|r| r.scenarios.iter().map(|s| s.elapsed_s).sum::<f64>())
            .filter(|d| *d > 0.0),
        threshold_us: report.threshold_us,
        // A result that cannot be trusted makes the run INVALID, whatever the report said.
        verdict: judge::worst([
            report.verdict,
            Findings { invalid: !valid, ..Findings::default() }.verdict(),
        ]),
        valid,
        reasons: report.reasons.clone(),
        inputs: BuildInputs {
            boot_args: fingerprint.and_then(|f| f.cmdline.clone()).filter(|c| !c.is_empty()),
            repos: Vec::new(),
            tuning,
        },
        results,
    };
    run.digest = content_digest(&run);
    run.source = source.to_string();
    if let Some(bundle) = bundle {
        run.bundle_digest = Some(bundle.digest.clone());
        run.lock_digest = bundle.lock_digest.clone();
        if run.kernel_config_digest.is_none() {
            run.kernel_config_digest = bundle.kernel_config_digest.clone();
        }
        run.inputs.repos = bundle.repos.clone();
        if run.inputs.boot_args.is_none() {
            run.inputs.boot_args = bundle.kernel_cmdline.clone();
        }
    }
    run
}

/// sha256 of the run's JSON with `digest` and `source` empty.
fn content_digest(run: &HistoryRun) -> String {
    let mut bare = run.clone();
    bare.digest.clear();
    bare.source.clear();
    bare.added_unix = 0;
    crate::files::digest::sha256_hex(&serde_json::to_vec(&bare).unwrap_or_default())
}

/// The kernel the run saw: run.json's own `kernel_release` and `kernel_version` (`uname -r`,
/// `uname -v`); only a run.json written before rtbuild recorded them falls back to words of
/// `uname -a` (whose host name could shift them).
fn kernel_of(
    fingerprint: Option<&crate::formats::run_json::Fingerprint>,
) -> (Option<String>, Option<String>) {
    let Some(f) = fingerprint else { return (None, None) };
    let known = |v: &Option<String>| {
        v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_string)
    };
    match (known(&f.kernel_release), known(&f.kernel_version)) {
        (Some(release), version) => (Some(release), version),
        (None, _) => split_uname(f.uname.as_deref().unwrap_or_default()),
    }
}

/// `uname -a` (`Linux host 6.6.52-rt43 #1 SMP PREEMPT_RT Tue … 2024 aarch64 GNU/Linux`) →
/// release and version; the version is what lies between the release and the hardware name.
pub(crate) fn split_uname(uname: &str) -> (Option<String>, Option<String>) {
    let mut words: Vec<&str> = uname.split_whitespace().collect();
    if words.last() == Some(&"GNU/Linux") {
        words.pop();
    }
    let release = words.get(2).map(|w| w.to_string());
    let version = (words.len() >= 5).then(|| words[3..words.len() - 1].join(" "));
    (release, version)
}

/// The tuning the run saw, one `name value` fact a line, in a fixed order.
fn tuning_facts(run_json: Option<&RunRecord>) -> Vec<String> {
    let Some(run) = run_json else { return Vec::new() };
    let mut facts = Vec::new();
    let mut fact = |name: &str, value: &str| {
        if !value.is_empty() {
            facts.push(format!("{name} {value}"));
        }
    };
    fact("rt_cpus", &run.rt_cpus);
    fact("housekeeping", &run.housekeeping);
    fact("measure_cpus", &run.measure_cpus);
    if let Some(tuning) = &run.tuning {
        fact("tuning", if tuning.applied { "applied" } else { "checked" });
        fact("tuning_problems", &tuning.verify_problems.join(", "));
    }
    if let Some(f) = &run.fingerprint {
        fact("isolated", f.isolated.as_deref().unwrap_or_default());
        fact("nohz_full", f.nohz_full.as_deref().unwrap_or_default());
        fact("realtime", if f.realtime == Some(true) { "1" } else { "" });
        for line in f.preempt.iter().flatten() {
            fact("preempt", line);
        }
        for governor in f.governors.iter().flatten() {
            fact("governor", governor);
        }
    }
    facts
}

/// A scenario's rows: cyclictest per CPU, then each other test per CPU.
fn scenario_results(scenario: &ScenarioReport) -> Vec<HistoryResult> {
    let mut rows = Vec::new();
    if scenario.cyclictest {
        let valid = scenario.invalid_reasons.is_empty();
        let verdict = TestVerdict::Judged(judge::verdict(
            &scenario.invalid_reasons,
            &scenario.cyclictest_reasons,
        ));
        let threads: Vec<&ThreadReport> = if scenario.threads.is_empty() {
            std::iter::once(&scenario.all).filter(|t| t.samples > 0).collect()
        } else {
            scenario.threads.iter().collect()
        };
        let row = |t: Option<&ThreadReport>| HistoryResult {
            scenario: scenario.name.clone(),
            test: "cyclictest".to_string(),
            cpu: t.and_then(|t| t.cpu),
            samples: t.map(|t| t.samples),
            min_us: t.and_then(|t| t.min_us),
            avg_us: t.and_then(|t| t.avg_us),
            p99_us: t.and_then(|t| t.p99_us),
            p999_us: t.and_then(|t| t.p999_us),
            max_us: t.and_then(|t| t.max_us),
            overflows: t.map(|t| t.overflows),
            verdict,
            valid,
            reasons: scenario.cyclictest_reasons.clone(),
        };
        if threads.is_empty() {
            rows.push(row(None));
        }
        rows.extend(threads.into_iter().map(|t| row(Some(t))));
    }
    for test in &scenario.tests {
        let valid = test.invalid_reasons.is_empty();
        let verdict = test.shown_verdict();
        let mut reasons = test.reasons.clone();
        reasons.extend(test.skipped.iter().map(|why| format!("skipped: {why}")));
        let base = HistoryResult {
            scenario: scenario.name.clone(),
            test: test.test.clone(),
            verdict,
            valid,
            reasons,
            ..HistoryResult::default()
        };
        if test.rows.is_empty() {
            rows.push(base.clone());
        }
        rows.extend(test.rows.iter().map(|r| HistoryResult {
            cpu: r.cpu,
            samples: r.samples,
            min_us: r.min_us,
            avg_us: r.avg_us,
            max_us: r.max_us,
            ..base.clone()
        }));
    }
    rows
}

#[cfg(test)]
mod tests {
    #[test]
    fn uname_gives_release_and_version() {
        let (release, version) = super::split_uname(
            "Linux rb3 6.6.52-rt43 #1 SMP PREEMPT_RT Tue Oct  1 00:00:00 UTC 2024 aarch64 GNU/Linux",
        );
        assert_eq!(release.as_deref(), Some("6.6.52-rt43"));
        assert_eq!(version.as_deref(), Some("#1 SMP PREEMPT_RT Tue Oct 1 00:00:00 UTC 2024"));
        assert_eq!(super::split_uname("Linux vm 6.18"), (Some("6.18".to_string()), None));
        assert_eq!(super::split_uname(""), (None, None));
    }

    /// Issue 34 item 12: a host name with a space shifted `uname -a`'s words, so the host name's
    /// second word was recorded as the kernel release; run.json's own fields are used.
    #[test]
    fn the_kernel_comes_from_run_json_not_the_words_of_uname() {
        let fingerprint = crate::formats::run_json::Fingerprint {
            uname: Some(
                "Linux lab rb3 6.6.52-rt43 #1 SMP PREEMPT_RT Tue Oct 1 2024 aarch64".into(),
            ),
            kernel_release: Some("6.6.52-rt43".into()),
            kernel_version: Some("#1 SMP PREEMPT_RT Tue Oct 1 2024".into()),
            ..Default::default()
        };
        assert_eq!(
            super::kernel_of(Some(&fingerprint)),
            (Some("6.6.52-rt43".into()), Some("#1 SMP PREEMPT_RT Tue Oct 1 2024".into()))
        );
        // A run.json from before the fields were recorded still gives what `uname -a` says.
        let old = crate::formats::run_json::Fingerprint {
            uname: Some("Linux rb3 6.6.52-rt43 #1 SMP aarch64".into()),
            ..Default::default()
        };
        assert_eq!(super::kernel_of(Some(&old)).0.as_deref(), Some("6.6.52-rt43"));
        assert_eq!(super::kernel_of(None), (None, None));
    }
}
