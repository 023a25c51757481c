//! The whole job: its name and its text.

use super::*;

#[test]
fn job_names_fit_lavas_limit_whatever_the_tests_and_scenarios() {
    let mut req = request();
    req.measurement.tests = crate::measure::rttests::parse_list(
        "cyclictest,cyclicdeadline,oslat,pi_stress,pmqtest,ptsematest,rt-migrate-test,ssdd,svsematest,signaltest,sigwaittest,hwlatdetect",
    )
    .unwrap();
    req.measurement.scenarios = vec![
        Scenario::Idle,
        Scenario::Stress,
        Scenario::Full,
        Scenario::StressIsolated,
        Scenario::Hackbench,
    ];
    req.machine = "qcs9100-ride-sx".into();
    let job = job(&req).unwrap();
    assert!(job.job_name.chars().count() <= MAX_JOB_NAME, "{}", job.job_name);
    assert_eq!(
        job.job_name,
        format!(
            "rtbuild RT latency on qcs9100-ride-sx: {} tests under 5 scenarios (300 s each)",
            req.measurement.tests.len()
        )
    );
    let ContextValue::Text(tests) = &job.metadata["rtbuild.tests"] else { panic!() };
    assert_eq!(tests.split(',').count(), req.measurement.tests.len());
    // A short list keeps every name.
    assert_eq!(
        super::job(&request()).unwrap().job_name,
        "rtbuild RT latency on rb3gen2-core-kit: cyclictest under idle, stress (300 s each)"
    );
}

#[test]
fn output_is_deterministic() {
    assert_eq!(render(&request()).unwrap(), render(&request()).unwrap());
}
