//! Statistics and verdicts on the golden files in tests/data/ (exact figures, computed
//! independently from the files with nearest-rank percentiles and population stddev).

use std::path::PathBuf;

use super::*;
use crate::formats::report_json::ScenarioReport;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn report(files: &[&str], threshold: Option<f64>) -> LatencyReport {
    let options = Options {
        inputs: files.iter().map(|f| data(f)).collect(),
        threshold_us: threshold,
        ..Options::default()
    };
    build(&options).unwrap()
}

fn scenario(report: &LatencyReport) -> &ScenarioReport {
    &report.inputs[0].scenarios[0]
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn verbose_statistics_are_exact_and_pass_under_a_high_threshold() {
    let r = report(&["cyclictest-2.4-verbose-2threads.txt"], Some(300.0));
    let s = scenario(&r);
    assert_eq!((r.verdict, s.verdict), (Verdict::Pass, Verdict::Pass), "{:?}", r.reasons);
    let t0 = &s.threads[0];
    assert_eq!((t0.samples, t0.source.as_str()), (991, "samples"));
    assert_eq!((t0.min_us, t0.median_us, t0.p99_us), (Some(5.0), Some(17.0), Some(26.0)));
    assert_eq!((t0.p999_us, t0.p9999_us, t0.max_us), (Some(245.0), Some(245.0), Some(245.0)));
    assert!(close(t0.avg_us, 16.739656912209888) && close(t0.stddev_us, 8.803656673265769));
    assert_eq!((t0.overflows, t0.over_threshold, t0.percentiles_at_least_us), (0, Some(0), None));
    let t1 = &s.threads[1];
    assert_eq!((t1.median_us, t1.p99_us, t1.max_us), (Some(13.0), Some(25.0), Some(32.0)));
    assert_eq!(
        (s.all.samples, s.all.median_us, s.all.p999_us, s.all.max_us),
        (1982, Some(15.0), Some(39.0), Some(245.0))
    );
    assert!(s.notes.iter().any(|n| n.starts_with("short run: 1982 samples")), "{:?}", s.notes);
}

#[test]
fn fails_on_max_with_the_reason_and_count() {
    let r = report(&["cyclictest-2.4-verbose-2threads.txt"], None);
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(r.threshold_us, 100.0);
    assert_eq!(
        r.reasons,
        [
            "cyclictest-2.4-verbose-2threads: thread 0: max 245 µs exceeds the 100 µs threshold (1 of 991 samples above it)"
        ]
    );
    assert_eq!(scenario(&r).threads[0].over_threshold, Some(1));
}

#[test]
fn sparse_histogram_with_overflows_reports_unknown_tail() {
    let r = report(&["cyclictest-2.7-sparse-hist-h100-2threads-overflow.txt"], Some(99.0));
    let s = scenario(&r);
    let t0 = &s.threads[0];
    assert_eq!(
        (t0.samples, t0.min_us, t0.median_us, t0.p99_us),
        (1003, Some(3.0), Some(4.0), Some(40.0))
    );
    assert_eq!((t0.p999_us, t0.p9999_us, t0.percentiles_at_least_us), (None, None, Some(100.0)));
    assert_eq!((t0.max_us, t0.avg_us, t0.stddev_us), (Some(187.0), Some(5.0), None));
    assert_eq!((t0.overflows, t0.over_threshold), (3, Some(3)));
    let t1 = &s.threads[1];
    assert_eq!(
        (t1.median_us, t1.p99_us, t1.p999_us, t1.p9999_us, t1.max_us),
        (Some(5.0), Some(40.0), Some(40.0), Some(40.0), Some(40.0))
    );
    assert!(close(t1.avg_us, 6.439516129032258) && close(t1.stddev_us, 3.867301271003799));
    assert_eq!(
        s.reasons,
        ["thread 0: max 187 µs exceeds the 99 µs threshold (3 of 1003 samples above it)"]
    );
    // At 100 µs the overflowed samples (>= 100) may or may not be above: the count is unknown.
    let r = report(&["cyclictest-2.7-sparse-hist-h100-2threads-overflow.txt"], None);
    assert_eq!(scenario(&r).threads[0].over_threshold, None);
    assert!(r.reasons[0].ends_with("(some of 1003 samples above it)"), "{:?}", r.reasons);
}

#[test]
fn full_histogram_percentiles_above_the_limit_are_unknown_but_max_is_cyclictests() {
    let r = report(&["cyclictest-2.4-hist-h50-2threads.txt"], Some(2000.0));
    let s = scenario(&r);
    let t0 = &s.threads[0];
    assert_eq!(
        (t0.samples, t0.median_us, t0.p99_us, t0.percentiles_at_least_us),
        (2000, Some(21.0), None, Some(50.0))
    );
    assert_eq!((t0.max_us, t0.overflows, t0.over_threshold), (Some(231.0), 28, Some(0)));
    assert_eq!(s.threads[1].max_us, Some(1302.0));
    assert_eq!((s.verdict, s.all.max_us, s.all.samples), (Verdict::Pass, Some(1302.0), 3999));
}

#[test]
fn all_overflowed_still_passes_on_cyclictests_max() {
    let r = report(&["cyclictest-2.4-hist-h3-all-overflow.txt"], None);
    let t0 = &scenario(&r).threads[0];
    assert_eq!(
        (t0.median_us, t0.percentiles_at_least_us, t0.max_us, t0.over_threshold),
        (None, Some(3.0), Some(86.0), Some(0))
    );
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.reasons);
}

#[test]
fn nsecs_converts_unitless_histograms_only() {
    let options = |file: &str| Options {
        inputs: vec![data(file)],
        threshold_us: Some(1.0),
        nsecs: true,
        ..Options::default()
    };
    let r = build(&options("cyclictest-2.7-sparse-hist-h100-2threads-overflow.txt")).unwrap();
    let t0 = &scenario(&r).threads[0];
    assert_eq!(
        (t0.median_us, t0.p99_us, t0.max_us, t0.percentiles_at_least_us),
        (Some(0.004), Some(0.04), Some(0.187), Some(0.1))
    );
    assert_eq!((r.verdict, scenario(&r).files[0].unit.as_str()), (Verdict::Pass, "ns"));
    // JSON says µs (`resolution_in_ns: 0`): --nsecs does not change it.
    let r = build(&options("cyclictest-2.4-json-hist-h50.json")).unwrap();
    assert_eq!(scenario(&r).threads[0].max_us, Some(2213.0));
}

#[test]
fn summary_only_input_has_no_percentiles() {
    let r = report(&["cyclictest-2.4-quiet-nsecs-2threads.txt"], Some(200.0));
    let t0 = &scenario(&r).threads[0];
    assert_eq!((t0.source.as_str(), t0.samples, t0.median_us), ("summary", 2000, None));
    assert_eq!((t0.min_us, t0.avg_us, t0.max_us), (Some(5.538), Some(16.108), Some(157.052)));
    assert_eq!(r.verdict, Verdict::Pass);
}

#[test]
fn zero_cycles_breaktrace_and_invalid_runs_fail() {
    let r = report(&["cyclictest-2.4-json-nan-zero-cycles.json"], None);
    assert_eq!(
        r.reasons,
        ["cyclictest-2.4-json-nan-zero-cycles: CPU6 (thread 1): no samples recorded"]
    );
    assert_eq!(scenario(&r).threads[0].cpu, Some(7));
    let r = report(&["cyclictest-2.4-hist-h5-breaktrace.txt"], Some(1000.0));
    assert_eq!(
        r.reasons,
        [
            "cyclictest-2.4-hist-h5-breaktrace: cyclictest stopped early on a breaktrace (thread id 12345, latency 250)"
        ]
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("cyclictest-2.4-json-hist-h50.json"), dir.path().join("idle.json")).unwrap();
    crate::write::fixture(
        dir.path().join("run.json"),
        r#"{"threshold_us": 5000, "machine": "qcs6490-rb3gen2", "scenarios": [{"name": "idle", "files": ["idle.json"],
            "invalid_reasons": ["only 1998 of 120000 cycles"]}], "fingerprint": {"uname": "6.6-rt"}}"#,
    )
    .unwrap();
    let r =
        build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() }).unwrap();
    assert_eq!((r.threshold_us, r.threshold_source.as_str()), (5000.0, "run.json threshold_us"));
    assert_eq!(
        (r.machine.as_deref(), scenario(&r).reference_max_us),
        (Some("rb3gen2-core-kit"), Some(6.0))
    );
    assert_eq!(r.reasons, ["idle: invalid run: only 1998 of 120000 cycles"]);
    assert_eq!(r.inputs[0].kind, "result-folder");
    assert!(r.inputs[0].fingerprint.is_some());
}

#[test]
fn baseline_regressions_fail_and_name_the_figure() {
    let dir = tempfile::tempdir().unwrap();
    let before = report(&["cyclictest-2.4-verbose-2threads.txt"], Some(5000.0));
    let before_path = dir.path().join("before.json");
    crate::write::fixture(&before_path, serde_json::to_string(&before).unwrap()).unwrap();
    let options = Options {
        inputs: vec![data("cyclictest-2.4-hist-h50-2threads.txt")],
        threshold_us: Some(5000.0),
        baseline: Some(before_path),
        ..Options::default()
    };
    let r = build(&options).unwrap();
    assert_eq!(
        r.reasons,
        [
            "cyclictest-2.4-hist-h50-2threads: regression against the baseline: max 1302 µs (was 245 µs)"
        ]
    );
    // The same data as its own baseline (read raw this time) has no regression.
    let same = Options {
        inputs: vec![data("cyclictest-2.4-verbose-2threads.txt")],
        threshold_us: Some(5000.0),
        baseline: Some(data("cyclictest-2.4-verbose-2threads.txt")),
        ..Options::default()
    };
    assert_eq!(build(&same).unwrap().verdict, Verdict::Pass);
}

#[test]
fn an_unusable_file_in_a_result_folder_fails_only_its_scenario() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("cyclictest-2.4-json-hist-h50.json"), dir.path().join("idle.json")).unwrap();
    crate::write::fixture(dir.path().join("stress.txt"), b"\x00\xffjunk\n").unwrap();
    crate::write::fixture(
        dir.path().join("run.json"),
        r#"{"threshold_us": 5000, "scenarios": [{"name": "idle", "files": ["idle.json"]},
            {"name": "stress", "files": ["stress.txt"]}, {"name": "full", "files": ["full.txt"]}]}"#,
    )
    .unwrap();
    let r =
        build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() }).unwrap();
    let scenarios = &r.inputs[0].scenarios;
    assert_eq!(scenarios.len(), 3);
    assert_eq!((scenarios[0].name.as_str(), scenarios[0].verdict), ("idle", Verdict::Pass));
    assert_eq!((scenarios[1].name.as_str(), scenarios[1].verdict), ("stress", Verdict::Fail));
    assert_eq!(scenarios[2].verdict, Verdict::Fail);
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(r.reasons.len(), 2, "{:?}", r.reasons);
    assert!(r.reasons[0].starts_with("stress: invalid run: "), "{:?}", r.reasons);
    assert!(r.reasons[0].contains("stress.txt"), "{:?}", r.reasons);
    assert!(r.reasons[1].starts_with("full: invalid run: `"), "{:?}", r.reasons);
    assert!(r.reasons[1].ends_with("full.txt` does not exist; check the path"), "{:?}", r.reasons);
}

#[test]
fn an_unusable_baseline_is_named_as_the_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        inputs: vec![data("cyclictest-2.4-verbose-2threads.txt")],
        baseline: Some(dir.path().to_path_buf()),
        ..Options::default()
    };
    let err = build(&options).unwrap_err().to_string();
    let want = format!("baseline {0}: {0} has no run.json; ", dir.path().display());
    assert!(err.starts_with(&want), "{err}");
}

#[test]
fn bad_folders_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() })
        .unwrap_err();
    assert!(err.to_string().ends_with("has no run.json; pass an `rtbuild test` result folder or the cyclictest output files themselves"));
    crate::write::fixture(
        dir.path().join("run.json"),
        r#"{"scenarios": [{"name": "x", "files": ["../etc/passwd"]}]}"#,
    )
    .unwrap();
    let err = build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() })
        .unwrap_err();
    assert!(err.to_string().contains("outside the result folder"), "{err}");
    let err =
        build(&Options { inputs: vec![data("x")], threshold_us: Some(-1.0), ..Options::default() })
            .unwrap_err();
    assert!(err.to_string().starts_with("threshold -1 µs (--threshold-us) is not usable"), "{err}");
}

/// Issue 13 item 4: a threshold of 1.72e308 (given, or in run.json) hung the HTML chart; any
/// threshold that is not finite, not above 0 or above one second is refused before rendering.
#[test]
fn unusable_thresholds_are_refused_from_the_flag_and_from_run_json() {
    let quiet = data("cyclictest-2.4-quiet-2threads.txt");
    for bad in [1.72e308, f64::INFINITY, f64::NAN, 0.0, -3.0, 1_000_000.5] {
        let options =
            Options { inputs: vec![quiet.clone()], threshold_us: Some(bad), ..Options::default() };
        let err = build(&options).unwrap_err().to_string();
        assert!(err.contains("(--threshold-us) is not usable"), "{bad}: {err}");
    }
    let err = build(&Options {
        inputs: vec![quiet.clone()],
        threshold_us: Some(1.72e308),
        ..Options::default()
    })
    .unwrap_err();
    assert!(err.to_string().starts_with("threshold 1.72e308 µs "), "{err}");
    let ok = Options { inputs: vec![quiet], threshold_us: Some(1_000_000.0), ..Options::default() };
    assert_eq!(build(&ok).unwrap().threshold_us, 1_000_000.0);

    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("cyclictest-2.4-quiet-2threads.txt"), dir.path().join("idle.txt")).unwrap();
    crate::write::fixture(
        dir.path().join("run.json"),
        r#"{"threshold_us": 1.72e308, "scenarios": [{"name": "idle", "files": ["idle.txt"]}]}"#,
    )
    .unwrap();
    let err = build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() })
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("threshold 1.72e308 µs (run.json threshold_us) is not usable"),
        "{err}"
    );
}

#[test]
fn absurd_numbers_do_not_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.txt");
    crate::write::fixture(
        &path,
        "# Histogram\n000000 9999999999999999999\t1\n000001 9999999999999999999\t1\n\
         18446744073709551615 9999999999999999999\t1\n# Min Latencies: 0 0\n\
         # Max Latencies: 18446744073709551615 1\n# Histogram Overflows: 18446744073709551615 0\n\
         # Thread 0: 1 # 18446744073709551615 others\n",
    )
    .unwrap();
    let r = build(&Options { inputs: vec![path], ..Options::default() }).unwrap();
    let t0 = &scenario(&r).threads[0];
    assert_eq!((t0.samples, r.verdict), (u64::MAX, Verdict::Fail));
}

#[test]
fn statistics_never_panic_on_mutated_inputs() {
    let seeds: Vec<Vec<u8>> = std::fs::read_dir(data(""))
        .unwrap()
        .filter_map(|e| std::fs::read(e.unwrap().path()).ok())
        .filter(|b| b.len() < 64 * 1024)
        .collect();
    let alphabet: &[u8] = b"0123456789 :\t\n#-";
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..600 {
        let mut input = seeds[round % seeds.len()].clone();
        for _ in 0..1 + next() % 6 {
            let at = next() as usize % input.len();
            input[at] = alphabet[next() as usize % alphabet.len()];
        }
        let Ok(run) = crate::cyclictest::parse(&input[..]) else { continue };
        let scenario = input::ScenarioInput {
            name: "fuzz".to_string(),
            label: None,
            runs: vec![(PathBuf::from("fuzz.txt"), run)],
            invalid_reasons: Vec::new(),
            commands: Vec::new(),
            cyclictest: true,
            tests: Vec::new(),
            thermal: None,
            throttling: None,
        };
        for threshold in [0.5, 100.0, 1e9] {
            let judged = judge::judge(&scenario, threshold);
            let _ = chart::latency_svg(&judged.threads, threshold);
        }
    }
}

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
/// as it records it, then read back by `rtbuild report`, gets the same verdict at every threshold
/// (`pass` is PASS; `fail` is FAIL on the max alone; `invalid` is FAIL with `invalid run:`
/// reasons). Samples above the histogram (the Qualcomm guide's `-h 100`) are a note in both.
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
            let (scenario, word) = crate::testrun::judge_finished_run(
                "golden", &json, &cpus, *histogram, *cycles, threshold,
            );
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("raw")).unwrap();
            crate::write::fixture(dir.path().join("raw/golden.json"), &json).unwrap();
            let record = crate::formats::run_json::RunRecord {
                schema: crate::formats::run_json::SCHEMA,
                threshold_us: Some(threshold as f64),
                verdict: Some(word.to_string()),
                scenarios: vec![scenario.clone()],
                ..Default::default()
            };
            crate::write::fixture(dir.path().join("run.json"), record.to_text().unwrap()).unwrap();
            let r =
                build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() })
                    .unwrap();
            let invalid = r.reasons.iter().any(|x| x.contains("invalid run:"));
            let agree = match word {
                "pass" => r.verdict == Verdict::Pass,
                "fail" => r.verdict == Verdict::Fail && !invalid,
                "invalid" => r.verdict == Verdict::Fail && invalid,
                other => panic!("verdict word {other}"),
            };
            assert!(agree, "{file} at {threshold} µs: test says {word}, report {:?}", r.reasons);
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
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["fail", "invalid", "pass"]);
}

fn scenario_of(report: &LatencyReport) -> &ScenarioReport {
    &report.inputs[0].scenarios[0]
}
