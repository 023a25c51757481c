//! What the report says: one verdict per rt-tests program, the same verdict as `rtbuild test`,
//! each CPU's own row, and the same verdict word in all five outputs.

use super::*;

#[test]
fn rt_tests_outputs_get_one_verdict_each_against_their_own_limit() {
    let options = Options {
        inputs: vec![
            data("oslat-2.4-json-cpu1.json"),
            data("pmqtest-2.4-json-cpu1.json"),
            data("ssdd-2.4-text.txt"),
        ],
        threshold_us: Some(1e6),
        noise_us: Some(30.0),
        ..Options::default()
    };
    let report = build(&options).unwrap();
    let names: Vec<&str> =
        report.inputs.iter().map(|i| i.scenarios[0].tests[0].test.as_str()).collect();
    assert_eq!(names, ["oslat", "pmqtest", "ssdd"]);
    let verdicts: Vec<Verdict> = report.inputs.iter().map(|i| i.scenarios[0].verdict).collect();
    // oslat's 19103 µs noise fails the 30 µs noise limit; the others pass.
    assert_eq!(verdicts, [Verdict::Fail, Verdict::Pass, Verdict::Pass]);
    assert_eq!(report.noise_us, 30.0);
    assert_eq!(
        report.reasons,
        ["oslat-2.4-json-cpu1: oslat: CPU 1: max OS noise 19103 µs exceeds the 30 µs noise limit"]
    );
    assert!(!report.inputs[0].scenarios[0].cyclictest);
    let junit = junit::render(&report);
    assert!(junit.contains("tests=\"3\" failures=\"1\" errors=\"0\">"), "{junit}");
    assert!(
        junit.contains("<testsuite name=\"rtbuild.report.unknown-machine.oslat-2.4-json-cpu1\""),
        "{junit}"
    );
    assert!(junit.contains("<testcase name=\"oslat-2.4-json-cpu1: oslat\""), "{junit}");
    assert!(
        junit.contains(
            "<system-out>oslat: max 19103 us on CPU 1, 15116478 samples; noise limit 30 us on every RT CPU</system-out>"
        ),
        "{junit}"
    );
    assert!(junit.contains("<property name=\"oslat.max_us\" value=\"19103\"/>"), "{junit}");
    assert!(junit.contains("<system-out>ssdd: its own check passed</system-out>"), "{junit}");
    let html = html::render(&report);
    assert!(html.contains("OS noise (oslat) per RT CPU"));
    assert!(!html.contains("Latency histogram (cyclictest)"));
    let text = text::render(&report);
    assert!(text.contains("  oslat  FAIL     CPU 1 max 19103"), "{text}");
}

/// One verdict word: every golden cyclictest `--json` run, judged by `rtbuild test` and recorded
/// as it records it, then read back by `rtbuild report`, gets the same verdict word at every
/// threshold (PASS, FAIL on the max alone, INVALID with `invalid run:` reasons). Samples above
/// the histogram (the Qualcomm guide's `-h 100`) are a note in both.
#[test]
fn test_and_report_agree_on_every_golden_run_folder() {
    // Each golden run as `rtbuild test` would have asked for it: measured CPUs, -h, cycles.
    let runs: &[(&str, &str, u32, u64)] = &[
        ("cyclictest-2.4-json-1thread-cpu1.json", "1", 100_000, 3000),
        ("cyclictest-2.4-json-2threads-overflow.json", "0-1", 1000, 5000),
        ("cyclictest-2.4-json-hist-h50.json", "0-1", 50, 2000),
        ("cyclictest-2.4-json-nan-zero-cycles.json", "6-7", 20, 17),
        ("cyclictest-2.4-json-no-hist.json", "0-1", 0, 2000),
    ];
    let listed: Vec<String> = std::fs::read_dir(data(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cyclictest-") && n.ends_with(".json"))
        .collect();
    for name in &listed {
        assert!(runs.iter().any(|r| r.0 == name), "{name} is a golden run: add it here");
    }
    let mut seen = std::collections::BTreeSet::new();
    for (file, cpus, histogram, cycles) in runs {
        let json = std::fs::read_to_string(data(file)).unwrap();
        for threshold in [50_u64, 100, 300, 1000, 5000] {
            let cpus = crate::plan::CpuSet::parse(cpus).unwrap();
            let (scenario, word) = crate::measure::testrun::judge_finished_run(
                "golden", &json, &cpus, *histogram, *cycles, threshold,
            );
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("raw")).unwrap();
            crate::files::write::fixture(dir.path().join("raw/golden.json"), &json).unwrap();
            let record = crate::formats::run_json::RunRecord {
                schema: crate::formats::run_json::SCHEMA,
                threshold_us: Some(threshold as f64),
                verdict: Some(word),
                scenarios: vec![scenario.clone()],
                ..Default::default()
            };
            crate::files::write::fixture(dir.path().join("run.json"), record.to_text().unwrap())
                .unwrap();
            let r =
                build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() })
                    .unwrap();
            let invalid = r.reasons.iter().any(|x| x.contains("invalid run:"));
            assert_eq!(invalid, word == Verdict::Invalid, "{file}: {:?}", r.reasons);
            assert_eq!(
                r.verdict, word,
                "{file} at {threshold} µs: test says {word}, report {:?}",
                r.reasons
            );
            seen.insert(word);
            // An overflow is never what makes `test` call a run invalid.
            assert!(
                !scenario.invalid_reasons.iter().any(|x| x.contains("histogram")),
                "{file}: {:?}",
                scenario.invalid_reasons
            );
            let notes = &scenario_of(&r).notes;
            if scenario.threads.iter().any(|t| t.overflows > 0) {
                assert!(
                    scenario.notes.iter().all(|n| n.contains("are bounds"))
                        && notes.iter().any(|n| n.contains("are bounds")),
                    "{file}: {:?} / {notes:?}",
                    scenario.notes
                );
            }
        }
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [Verdict::Pass, Verdict::Fail, Verdict::Invalid]
    );
}

/// A two-CPU run whose CPUs differ (CPU 0's max 1250 µs, CPU 1's 3000 µs) with RT core 0: each
/// row of the Qualcomm table is that CPU's own figures (before, the RT core's row showed the
/// worst over every CPU, 3000), with its duration, samples and verdict; an invalid scenario's
/// rows say INVALID and why; /dev/kvm alone is no KVM host (boot flow unknown), a guest sign
/// makes it `guest`.
#[test]
fn results_table_rows_are_each_cpus_own_figures() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("cyclictest-2.4-json-2threads-overflow.json"), dir.path().join("idle.json"))
        .unwrap();
    std::fs::copy(
        data("cyclictest-2.4-json-2threads-overflow.json"),
        dir.path().join("stress.json"),
    )
    .unwrap();
    let run_json = |boot: &str| {
        format!(
            r#"{{"threshold_us": 2000, "machine": "qcs6490-rb3gen2", "rt_cpus": "0", "measure_cpus": "0-1",
            "scenarios": [{{"name": "idle", "files": ["idle.json"], "elapsed_s": 5.0}},
                         {{"name": "stress", "files": ["stress.json"], "elapsed_s": 86400.0,
                           "invalid_reasons": ["load reached 32.5 % of the 60 % asked"]}}],
            "fingerprint": {{"uname": "6.6-rt", "boot": {boot}}}}}"#
        )
    };
    crate::files::write::fixture(dir.path().join("run.json"), run_json(r#"{"kvm": true}"#))
        .unwrap();
    let r =
        build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() }).unwrap();
    let rows = &r.results;
    assert_eq!(rows.len(), 4, "{rows:?}");
    let row = |i: usize| {
        let x = &rows[i];
        (x.device.as_str(), x.cpu, x.max_us, x.samples, x.duration_s, x.verdict)
    };
    assert_eq!(
        row(0),
        ("qcs6490-rb3gen2, RT core: 0", Some(0), Some(1250.0), 5000, Some(5.0), Verdict::Pass)
    );
    assert_eq!(
        row(1),
        (
            "qcs6490-rb3gen2, CPU 1 (not an RT core)",
            Some(1),
            Some(3000.0),
            3334,
            Some(5.0),
            Verdict::Fail
        )
    );
    assert_eq!(rows[1].why, ["max 3000 µs exceeds the 2000 µs threshold"]);
    assert_eq!((rows[2].verdict, rows[2].max_us), (Verdict::Invalid, Some(1250.0)));
    assert_eq!(rows[2].why, ["invalid run: load reached 32.5 % of the 60 % asked"]);
    assert!(rows.iter().all(|x| x.boot_flow == "unknown"), "{rows:?}");
    let table = text::results_table(rows);
    // The Duration column is as wide as its widest cell, `24h 00m 00s`.
    assert!(table.contains("Duration     Samples  Verdict"), "{table}");
    assert!(
        table.lines().any(|l| l.contains("RT core: 0, Boot Flow - unknown")
            && l.contains("  1250  ")
            && l.contains("5s")
            && l.ends_with("PASS")),
        "{table}"
    );
    assert!(
        table.contains(
            "24h 00m 00s  3334     INVALID: invalid run: load reached 32.5 % of the 60 % asked"
        ),
        "{table}"
    );
    let page = html::render(&r);
    assert!(page.contains("<th>Duration</th><th>Samples</th><th class=\"l\">Verdict</th>"));
    assert!(
        page.contains("<span class=\"badge INVALID\">INVALID</span> invalid run: load reached")
    );
    // /dev/kvm in a guest (the `hypervisor` CPU flag): guest, never KVM.
    crate::files::write::fixture(
        dir.path().join("run.json"),
        run_json(r#"{"kvm": true, "guest_checked": true, "guest": ["cpu-flag-hypervisor"]}"#),
    )
    .unwrap();
    let r =
        build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() }).unwrap();
    assert!(r.results.iter().all(|x| x.boot_flow == "guest"), "{:?}", r.results);
}

/// The same run gets the same word in all five outputs: text, JSON, JUnit, HTML and the
/// history (before, the report said FAIL for a run `rtbuild test` called invalid).
#[test]
fn the_verdict_word_is_the_same_in_all_five_outputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("cyclictest-2.4-json-hist-h50.json"), dir.path().join("idle.json")).unwrap();
    crate::files::write::fixture(
        dir.path().join("run.json"),
        r#"{"threshold_us": 5000, "machine": "qcs6490-rb3gen2", "verdict": "INVALID",
            "scenarios": [{"name": "idle", "files": ["idle.json"],
            "invalid_reasons": ["only 1998 of 120000 cycles"]}], "fingerprint": {"uname": "6.6-rt"}}"#,
    )
    .unwrap();
    let r =
        build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() }).unwrap();
    assert_eq!(r.verdict, Verdict::Invalid);
    let out = text::render(&r);
    assert!(out.starts_with("INVALID  threshold 5000 µs"), "{out}");
    assert!(out.contains("\nINVALID  idle  (latencies in µs)"), "{out}");
    assert!(out.contains("  INVALID: invalid run: only 1998 of 120000 cycles"), "{out}");
    assert!(out.contains("\nINVALID because:"), "{out}");
    assert!(!out.contains("FAIL") && !out.contains("PASS"), "{out}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        (json["verdict"].as_str(), json["inputs"][0]["scenarios"][0]["verdict"].as_str()),
        (Some("INVALID"), Some("INVALID"))
    );
    let junit = junit::render(&r);
    assert!(
        junit.contains("<failure message=\"INVALID: invalid run: only 1998 of 120000 cycles\""),
        "{junit}"
    );
    let page = html::render(&r);
    assert!(page.contains("<title>rtbuild report: INVALID</title>"));
    assert!(page.contains("<span class=\"badge INVALID\">INVALID</span> idle"), "{page}");
    let run = crate::results::history::record::read(dir.path(), None, None).unwrap();
    assert_eq!((run.verdict.as_str(), run.valid), ("INVALID", false));
    assert!(run.results.iter().all(|x| x.verdict == "INVALID"), "{:?}", run.results);
}

/// Strings from input are escaped where the text report writes them: a machine, a scenario
/// name and a reason from `run.json` can neither forge a line nor drive or reorder one.
#[test]
fn input_strings_are_escaped_where_the_text_report_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("cyclictest-2.4-json-hist-h50.json"), dir.path().join("idle.json")).unwrap();
    crate::files::write::fixture(
        dir.path().join("run.json"),
        r#"{"threshold_us": 5000, "machine": "rb3\u001b[2J",
            "scenarios": [{"name": "idle\u202ex", "files": ["idle.json"],
            "invalid_reasons": ["cut\nPASS all"]}]}"#,
    )
    .unwrap();
    let r =
        build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() }).unwrap();
    let out = text::render(&r);
    assert!(!out.chars().any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'), "{out:?}");
    assert!(out.contains("rb3\\u{1b}[2J"), "{out}");
    assert!(out.contains("idle\\u{202e}x"), "{out}");
    assert!(out.contains("cut\\nPASS all"), "{out}");
    assert!(!out.lines().any(|l| l.trim_start().starts_with("PASS")), "{out}");
}
