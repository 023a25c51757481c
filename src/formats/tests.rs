use super::*;

#[test]
fn schema_missing_is_version_one_and_newer_is_refused() {
    let plan = r#"{"machine": "m", "image": "i", "distro": "d", "kernel_recipe": "k",
        "rt_cpus": "1", "housekeeping": "0", "nohz_full": true, "kernel_config": [],
        "cmdline": [], "packages": []}"#;
    let read = plan_json::PlanFile::parse(plan).unwrap();
    assert_eq!(read.machine, "m");
    let newer = plan.replacen('{', r#"{"schema": 2,"#, 1);
    assert_eq!(
        plan_json::PlanFile::parse(&newer).unwrap_err().to_string(),
        "`schema` is 2, but this rtbuild reads rtbuild-plan.json up to schema 1; upgrade rtbuild"
    );
    for bad in [r#""one""#, "0", "-1", "1.5"] {
        let text = plan.replacen('{', &format!(r#"{{"schema": {bad},"#), 1);
        let err = plan_json::PlanFile::parse(&text).unwrap_err().to_string();
        assert_eq!(err, format!("`schema` must be a whole number, not {bad}"));
    }
}

#[test]
fn run_json_round_trips_through_its_one_type() {
    let record = run_json::RunRecord {
        schema: run_json::SCHEMA,
        rtbuild_version: "0.1.0".into(),
        target: "local".into(),
        threshold_us: Some(80.0),
        scenarios: vec![run_json::ScenarioRecord {
            name: "idle".into(),
            files: vec!["raw/idle.json".into()],
            ..Default::default()
        }],
        ..Default::default()
    };
    let text = to_json(&record).unwrap();
    assert!(text.ends_with("}\n"));
    assert!(text.contains("\"threshold_us\": 80,"), "a whole limit is written whole: {text}");
    let read = run_json::RunRecord::parse(&text).unwrap();
    assert_eq!(to_json(&read).unwrap(), text);
    let newer = text.replacen("\"schema\": 1", "\"schema\": 3", 1);
    assert!(
        run_json::RunRecord::parse(&newer).unwrap_err().to_string().contains("upgrade rtbuild")
    );
}

#[test]
fn verify_file_round_trips_and_agrees_on_kernel_facts() {
    use verify_json::{Check, VerifyFile, VerifyReport};
    let mut a = VerifyReport::new(
        "a".into(),
        "kernel image".into(),
        vec![Check::new("x", true, "y", "y", "f")],
        Vec::new(),
    );
    a.kernel_version = Some("#1 PREEMPT_RT".into());
    let b = VerifyReport::new(
        "b".into(),
        "kernel config".into(),
        vec![Check::new("z", false, "y", "n", "g")],
        Vec::new(),
    );
    let file = VerifyFile::new(vec![a, b], Vec::new());
    assert!(!file.passed);
    assert_eq!(file.kernel_version.as_deref(), Some("#1 PREEMPT_RT"));
    let text = to_json(&file).unwrap();
    assert_eq!(VerifyFile::parse(&text).unwrap(), file);
}

/// Every scalar, list, object and key is one value: `{"a": [1, "x", null], "b": {}}` holds
/// 1 object + key a + list + 3 items + key b + object = 8.
#[test]
fn within_values_counts_every_value_and_key() {
    let doc = r#"{"a": [1, "x", null], "b": {}}"#;
    assert!(super::within_values(doc, 8).is_ok());
    let err = super::within_values(doc, 7).unwrap_err().to_string();
    assert_eq!(err, "more than 7 JSON values");
    // Not JSON, or cut short: left to the reader, which says what is wrong with it.
    assert!(super::within_values("{\"a\": [1,", 100).is_ok());
    assert!(super::within_values("not json", 100).is_ok());
}
