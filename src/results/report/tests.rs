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
    crate::files::write::fixture(
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
    crate::files::write::fixture(&before_path, serde_json::to_string(&before).unwrap()).unwrap();
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
    crate::files::write::fixture(dir.path().join("stress.txt"), b"\x00\xffjunk\n").unwrap();
    crate::files::write::fixture(
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
    // A file that cannot be read measured nothing: INVALID, never PASS or a plain FAIL.
    assert_eq!((scenarios[1].name.as_str(), scenarios[1].verdict), ("stress", Verdict::Invalid));
    assert_eq!(scenarios[2].verdict, Verdict::Invalid);
    assert_eq!(r.verdict, Verdict::Invalid);
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

/// Issue 40: `report rb3-run iq8275-run` was headed rb3gen2-core-kit and put the IQ-8275 figures
/// beside the RB3 reference; folders of two boards are refused, naming each board's folders.
#[test]
fn folders_of_two_boards_are_refused_naming_each() {
    let folder = |machine: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(data("cyclictest-2.4-json-hist-h50.json"), dir.path().join("stress.json"))
            .unwrap();
        crate::files::write::fixture(
            dir.path().join("run.json"),
            format!(
                r#"{{"threshold_us": 5000, "machine": "{machine}", "scenarios": [{{"name": "stress", "files": ["stress.json"]}}]}}"#
            ),
        )
        .unwrap();
        dir
    };
    let (rb3, iq8275, alias) =
        (folder("rb3gen2-core-kit"), folder("iq-8275-evk"), folder("qcs6490-rb3gen2"));
    let inputs = vec![rb3.path().to_path_buf(), iq8275.path().to_path_buf()];
    let err = build(&Options { inputs, ..Options::default() }).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the inputs were measured on different boards (rb3gen2-core-kit: {}; iq-8275-evk: {}): one report compares every figure with one board's reference and requirement; run `rtbuild report` once per board",
            rb3.path().display(),
            iq8275.path().display()
        )
    );
    // The same board under its alias, and a folder naming no board, are one board.
    let raw = data("cyclictest-2.4-json-hist-h50.json");
    let inputs = vec![rb3.path().to_path_buf(), alias.path().to_path_buf(), raw];
    let r = build(&Options { inputs, ..Options::default() }).unwrap();
    assert_eq!(r.machine.as_deref(), Some("rb3gen2-core-kit"));
}

#[test]
fn bad_folders_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() })
        .unwrap_err();
    assert!(err.to_string().ends_with("has no run.json; pass an `rtbuild test` result folder or the cyclictest output files themselves"));
    crate::files::write::fixture(
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
    crate::files::write::fixture(
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
    crate::files::write::fixture(
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
        let Ok(run) = crate::results::cyclictest::parse(&input[..]) else { continue };
        let scenario = input::ScenarioInput {
            name: "fuzz".to_string(),
            label: None,
            runs: vec![(PathBuf::from("fuzz.txt"), run)],
            invalid_reasons: Vec::new(),
            fail_reasons: Vec::new(),
            commands: Vec::new(),
            cyclictest: true,
            tests: Vec::new(),
            thermal: None,
            throttling: None,
            status: None,
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
                verdict: Some(word.to_string()),
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

fn scenario_of(report: &LatencyReport) -> &ScenarioReport {
    &report.inputs[0].scenarios[0]
}

/// `data(name)` with each `(from, to)` replaced (each `from` must be there), in `dir`.
fn altered(dir: &std::path::Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(data(name)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name} has no `{from}`");
        text = text.replacen(from, to, 1);
    }
    let path = dir.join(name);
    crate::files::write::fixture(&path, text).unwrap();
    path
}

/// A figure that is not a finite number ≥ 0 is unknown in every cyclictest parser (`T:` lines,
/// histogram, JSON, `-v` samples), and unknown is INVALID with the reason, never PASS. Before,
/// a `T:` line with `Max: NaN` was dropped (the other thread passed alone), a negative `-v`
/// sample was only a warning, a bad histogram or JSON maximum was a FAIL for an "unknown" max.
#[test]
fn unknown_figures_in_every_cyclictest_parser_are_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, &str, &str, &str)> = vec![
        ("cyclictest-2.4-quiet-2threads.txt", "Max:     316", "Max:     NaN", "Max `NaN`"),
        ("cyclictest-2.4-quiet-2threads.txt", "Max:    3284", "Max:      -5", "Max `-5`"),
        ("cyclictest-2.4-quiet-2threads.txt", "Avg:   15", "Avg:  inf", "Avg `inf`"),
        (
            "cyclictest-2.4-hist-h50-2threads.txt",
            "# Max Latencies: 00231 01302",
            "# Max Latencies: 00231 inf",
            "Max `inf`",
        ),
        (
            "cyclictest-2.4-hist-h50-2threads.txt",
            "# Min Latencies: 00005 00005",
            "# Min Latencies: -0005 00005",
            "Min `-0005`",
        ),
        ("cyclictest-2.4-json-1thread-cpu1.json", "\"max\": 477", "\"max\": -5", "max `-5`"),
        (
            "cyclictest-2.4-verbose-2threads.txt",
            "       0:       3:      18",
            "       0:       3:     -18",
            "negative latency",
        ),
    ];
    for (name, from, to, said) in cases {
        let path = altered(dir.path(), name, &[(from, to)]);
        let r = build(&Options {
            inputs: vec![path],
            threshold_us: Some(100_000.0),
            ..Options::default()
        })
        .unwrap();
        let s = scenario(&r);
        assert_eq!(
            (r.verdict, s.verdict),
            (Verdict::Invalid, Verdict::Invalid),
            "{name} {to}: {:?}",
            r.reasons
        );
        assert!(
            s.invalid_reasons.iter().any(|x| x.contains(said)),
            "{name} {to}: {:?}",
            s.invalid_reasons
        );
        assert!(text::render(&r).contains("  INVALID: "), "{name} {to}");
    }
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
    assert!(table.contains("Duration  Samples  Verdict"), "{table}");
    assert!(
        table.lines().any(|l| l.contains("RT core: 0, Boot Flow - unknown")
            && l.contains("  1250  ")
            && l.contains("5s")
            && l.ends_with("PASS")),
        "{table}"
    );
    assert!(
        table.contains(
            "24h00m    3334     INVALID: invalid run: load reached 32.5 % of the 60 % asked"
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

fn lava_entry(line: &str) -> String {
    format!(
        "- {{\"dt\": \"2026-12-04T20:00:00.000000\", \"lvl\": \"target\", \"msg\": {}}}\n",
        serde_json::to_string(line).unwrap()
    )
}

/// A LAVA log whose console prints a threshold: it is shown, never used; the verdict is against
/// `--threshold-us` (the job's), else the default. Before, the marker's `threshold_us=100000`
/// turned CPU 1's 477 µs into a PASS.
#[test]
fn a_lava_logs_console_never_sets_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = lava_entry(
        "<<<RTBUILD-RUN machine=qcs6490-rb3gen2 threshold_us=100000 rt_cpus=1 tests=cyclictest scenarios=idle duration=3s>>>",
    );
    log.push_str(&lava_entry(
        "<<<RTBUILD-RAW-BEGIN scenario=idle test=cyclictest run=cyclictest format=json>>>",
    ));
    for line in
        std::fs::read_to_string(data("cyclictest-2.4-json-1thread-cpu1.json")).unwrap().lines()
    {
        log.push_str(&lava_entry(line));
    }
    log.push_str(&lava_entry(
        "<<<RTBUILD-RAW-END scenario=idle test=cyclictest run=cyclictest exit=0>>>",
    ));
    let path = dir.path().join("lava.yaml");
    crate::files::write::fixture(&path, &log).unwrap();
    let r = build(&Options { inputs: vec![path.clone()], ..Options::default() }).unwrap();
    assert_eq!(r.threshold_us, 100.0, "{}", r.threshold_source);
    assert!(
        r.threshold_source
            .contains("the LAVA log's console printed threshold_us=100000, which is not used"),
        "{}",
        r.threshold_source
    );
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    let given = build(&Options {
        inputs: vec![path.clone()],
        threshold_us: Some(500.0),
        ..Options::default()
    })
    .unwrap();
    assert_eq!(
        (given.threshold_source.split(';').next(), given.verdict),
        (Some("--threshold-us"), Verdict::Pass)
    );
    // A forged second marker is refused, naming both lines.
    log.push_str(&lava_entry(
        "<<<RTBUILD-RUN machine=qcs6490-rb3gen2 threshold_us=100000 rt_cpus=1>>>",
    ));
    crate::files::write::fixture(&path, &log).unwrap();
    let err = build(&Options { inputs: vec![path], ..Options::default() }).unwrap_err();
    assert!(err.to_string().contains("second `<<<RTBUILD-RUN` marker at line"), "{err}");
}

/// Convergence from golden `-v` samples: each half's and each power-of-two block's maximum,
/// computed here straight from the file's lines; a run whose last two blocks each set a new
/// maximum gets the note "the maximum was still rising: run longer", in text, JSON and HTML.
#[test]
fn convergence_from_verbose_samples_and_the_still_rising_note() {
    let name = "cyclictest-2.4-verbose-2threads.txt";
    let text = std::fs::read_to_string(data(name)).unwrap();
    let samples: Vec<(u32, u64, u64)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').map(str::trim).collect();
            (f.len() == 3)
                .then(|| Some((f[0].parse().ok()?, f[1].parse().ok()?, f[2].parse().ok()?)))?
        })
        .collect();
    let r = report(&[name], Some(100_000.0));
    for t in &scenario(&r).threads {
        let mine: Vec<(u64, u64)> =
            samples.iter().filter(|s| s.0 == t.thread.unwrap()).map(|s| (s.1, s.2)).collect();
        let end = mine.iter().map(|s| s.0).max().unwrap() + 1;
        let max = |from: u64, to: u64| {
            mine.iter().filter(|s| s.0 >= from && s.0 < to).map(|s| s.1 as f64).reduce(f64::max)
        };
        let c = t.convergence.as_ref().unwrap();
        assert_eq!((c.cycles, c.half_at), (end, end / 2));
        assert_eq!(
            (c.first_half_max_us, c.second_half_max_us),
            (max(0, end / 2), max(end / 2, end))
        );
        let mut bounds = vec![0u64];
        let mut at = 1u64;
        while at < end {
            bounds.push(at);
            at *= 2;
        }
        bounds.push(end);
        let blocks: Vec<(u64, u64, Option<f64>)> =
            c.blocks.iter().map(|b| (b.from_cycle, b.to_cycle, b.max_us)).collect();
        let expected: Vec<(u64, u64, Option<f64>)> =
            bounds.windows(2).map(|w| (w[0], w[1], max(w[0], w[1]))).collect();
        assert_eq!(blocks, expected);
    }
    // A run whose maximum keeps rising: each block's samples are larger than all before.
    let dir = tempfile::tempdir().unwrap();
    let rising: String = (0..64u64).map(|c| format!("       0:{c:>8}:{:>8}\n", 10 + c)).collect();
    let flat: String = (0..64u64)
        .map(|c| format!("       0:{c:>8}:{:>8}\n", if c == 3 { 90 } else { 10 + c % 7 }))
        .collect();
    crate::files::write::fixture(dir.path().join("rising.txt"), &rising).unwrap();
    crate::files::write::fixture(dir.path().join("flat.txt"), &flat).unwrap();
    let r = build(&Options {
        inputs: vec![dir.path().join("rising.txt"), dir.path().join("flat.txt")],
        threshold_us: Some(1000.0),
        ..Options::default()
    })
    .unwrap();
    let (rising, flat) = (&r.inputs[0].scenarios[0], &r.inputs[1].scenarios[0]);
    let c = rising.threads[0].convergence.as_ref().unwrap();
    assert!(c.still_rising);
    assert_eq!((c.first_half_max_us, c.second_half_max_us), (Some(41.0), Some(73.0)));
    assert!(
        rising.notes.contains(&"thread 0: the maximum was still rising: run longer".to_string()),
        "{:?}",
        rising.notes
    );
    assert!(!flat.threads[0].convergence.as_ref().unwrap().still_rising);
    assert!(!flat.notes.iter().any(|n| n.contains("still rising")));
    assert_eq!(rising.verdict, Verdict::Pass, "information, not a verdict");
    let out = text::render(&r);
    assert!(out.contains("convergence thread 0: max of the halves 41 | 73 µs (second half from cycle 32); max per block of cycles: 0-1 10, 1-2 11, 2-4 13, 4-8 17, 8-16 25, 16-32 41, 32-64 73 (the maximum was still rising: run longer)"), "{out}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["inputs"][0]["scenarios"][0]["threads"][0]["convergence"]["still_rising"],
        true
    );
    let page = html::render(&r);
    assert!(page.contains("<h3>Convergence</h3>") && page.contains("run longer"), "");
    // A histogram keeps no order: said so, no figures made up.
    let hist = report(&["cyclictest-2.4-hist-h50-2threads.txt"], Some(100_000.0));
    assert!(scenario(&hist).threads.iter().all(|t| t.convergence.is_none()));
    assert!(
        text::render(&hist)
            .contains("convergence: not known (a histogram or summary keeps no sample order")
    );
}

/// A result folder of a histogram run (`rtbuild test`'s default, `-h`): `run.json` lists the
/// histogram and cyclictest's stderr, holding the status blocks SIGUSR1 printed.
fn status_folder(stderr: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("raw")).unwrap();
    std::fs::copy(
        data("cyclictest-2.4-hist-h50-2threads.txt"),
        dir.path().join("raw/idle.hist.txt"),
    )
    .unwrap();
    let mut raw = vec!["raw/idle.hist.txt"];
    if let Some(text) = stderr {
        crate::files::write::fixture(dir.path().join("raw/idle.stderr.txt"), text).unwrap();
        raw.push("raw/idle.stderr.txt");
    }
    let json = serde_json::json!({
        "threshold_us": 100000, "rt_cpus": "0", "measure_cpus": "0-1",
        "scenarios": [{"name": "idle", "files": ["raw/idle.hist.txt"], "raw_files": raw}],
    });
    crate::files::write::fixture(dir.path().join("run.json"), json.to_string()).unwrap();
    dir
}

/// Issue 39 item 9 for histogram runs: the convergence comes from cyclictest's status
/// snapshots in the folder's stderr. Golden blocks at cycles 120, 250, 497, 990, 1500 (thread
/// 1 one cycle behind); the histogram's cycles are 1972 + 28 overflows = 2000 and 1968 + 31
/// = 1999 (the middles 1000 and 999 fall after the snapshots at 990 and 989), its maxima 231
/// and 1302 µs. Thread 0 rises at every snapshot and its final 231 µs is above the last
/// snapshot's 200, so the last block counts as a new maximum: still rising. Thread 1 had its
/// 1302 µs by the first snapshot: flat. Every expected figure is read off the golden files by
/// hand.
#[test]
fn convergence_of_a_histogram_run_from_its_status_snapshots() {
    let stderr =
        std::fs::read_to_string(data("cyclictest-2.4-status-blocks-h50-2threads.stderr.txt"))
            .unwrap();
    let dir = status_folder(Some(&stderr));
    let r =
        build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() }).unwrap();
    let s = scenario(&r);
    assert_eq!(s.verdict, Verdict::Pass, "information, not a verdict: {:?}", s.reasons);
    let rising = s.threads[0].convergence.as_ref().unwrap();
    let steps = |c: &crate::formats::report_json::Convergence| -> Vec<(u64, u64, Option<f64>)> {
        c.running_max.iter().map(|m| (m.cycle, m.snapshot_cycle, m.max_us)).collect()
    };
    assert_eq!(
        steps(rising),
        [
            (128, 120, Some(40.0)),
            (256, 250, Some(75.0)),
            (512, 497, Some(120.0)),
            (1024, 990, Some(180.0)),
            (2000, 2000, Some(231.0)),
        ]
    );
    assert_eq!((rising.cycles, rising.half_at, rising.snapshots), (2000, 990, Some(5)));
    assert_eq!(
        (rising.first_half_max_us, rising.second_half_max_us, rising.rose_in_second_half),
        (Some(180.0), Some(231.0), Some(true))
    );
    assert!(rising.still_rising && rising.blocks.is_empty());
    let flat = s.threads[1].convergence.as_ref().unwrap();
    assert_eq!(
        steps(flat),
        [
            (128, 119, Some(1302.0)),
            (256, 249, Some(1302.0)),
            (512, 496, Some(1302.0)),
            (1024, 989, Some(1302.0)),
            (1999, 1999, Some(1302.0)),
        ]
    );
    assert_eq!(
        (flat.half_at, flat.first_half_max_us, flat.second_half_max_us, flat.rose_in_second_half),
        (989, Some(1302.0), None, Some(false))
    );
    assert!(!flat.still_rising);
    assert_eq!(
        s.notes.iter().filter(|n| n.contains("still rising")).collect::<Vec<_>>(),
        ["thread 0: the maximum was still rising: run longer"]
    );
    let out = text::render(&r);
    assert!(out.contains("convergence thread 0 (from 5 status snapshots, not every sample): max of the halves 180 | 231 µs (second half from cycle 990); max so far by cycle (the snapshot at or before it; at the end the final figures): 128 40 (at 120), 256 75 (at 250), 512 120 (at 497), 1024 180 (at 990), end 2000 231 (the maximum was still rising: run longer)"), "{out}");
    assert!(out.contains("convergence thread 1 (from 5 status snapshots, not every sample): max of the halves 1302 | at most 1302 µs (second half from cycle 989: no new maximum); max so far by cycle (the snapshot at or before it; at the end the final figures): 128 1302 (at 119), 256 1302 (at 249), 512 1302 (at 496), 1024 1302 (at 989), end 1999 1302\n"), "{out}");
    let json = serde_json::to_value(&r).unwrap();
    let c = &json["inputs"][0]["scenarios"][0]["threads"][0]["convergence"];
    assert_eq!(
        (&c["still_rising"], &c["snapshots"], &c["rose_in_second_half"]),
        (&true.into(), &5.into(), &true.into())
    );
    assert_eq!(
        c["running_max"][4],
        serde_json::json!({"cycle": 2000, "snapshot_cycle": 2000, "max_us": 231.0})
    );
    let page = html::render(&r);
    assert!(
        page.contains("<h3>Convergence</h3>")
            && page.contains("from 5 status snapshots")
            && page.contains("run longer")
    );

    // No rise at the end: the final figures equal the last snapshot's, and the two snapshots
    // before set no new maximum either.
    let flat_end = stderr
        .replace("Max:     180", "Max:     231")
        .replace("Max:     200", "Max:     231")
        .replace("Max:     120", "Max:     231");
    let dir = status_folder(Some(&flat_end));
    let r =
        build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() }).unwrap();
    let c = scenario(&r).threads[0].convergence.as_ref().unwrap();
    assert!(!c.still_rising, "{c:?}");
    assert_eq!((c.first_half_max_us, c.rose_in_second_half), (Some(231.0), Some(false)));
}

/// A histogram folder without status snapshots keeps "not known", with the reason: a stderr
/// with no block, or none kept.
#[test]
fn a_histogram_folder_without_status_snapshots_says_why_convergence_is_not_known() {
    for (stderr, why) in [
        (
            Some("# /dev/cpu_dma_latency set to 0us\n"),
            "raw/idle.stderr.txt` holds no cyclictest status snapshot)",
        ),
        (
            None,
            "run.json lists no cyclictest stderr (`raw/<scenario>.stderr.txt`) to read them from)",
        ),
    ] {
        let dir = status_folder(stderr);
        let r = build(&Options { inputs: vec![dir.path().to_path_buf()], ..Options::default() })
            .unwrap();
        assert!(scenario(&r).threads.iter().all(|t| t.convergence.is_none()));
        let out = text::render(&r);
        assert!(out.contains("convergence: not known (a histogram or summary keeps no sample order; cyclictest's -v output does, as do the status snapshots `rtbuild test` and `rtbuild lava` jobs take while it measures, but "), "{out}");
        assert!(out.contains(why), "{out}");
        let json = serde_json::to_value(&r).unwrap();
        assert!(
            json["inputs"][0]["scenarios"][0]["convergence_unknown"]
                .as_str()
                .unwrap()
                .ends_with(why.trim_end_matches(')'))
        );
    }
}

/// Issue 39 item 9 for jobs LAVA runs on its own: the job asks cyclictest for its status at
/// each doubling of the elapsed time and prints the blocks between status markers. The golden
/// log (lava-run 2023.01's form, written by hand; cyclictest's JSON is
/// `cyclictest-2.4-json-1thread-cpu1.json`: 3000 cycles, maximum 477 µs on CPU 1) holds blocks
/// at cycles 999 (120 µs) and 1998 (300 µs) inside the frame, and one block the console printed
/// outside it (cycle 2500, 1 µs), which is not read. By hand: the running maximum is 120 at
/// 1024, 300 at 2048, 477 at the end 3000; the half (1500) falls after the snapshot at 999; the
/// last two steps each rose, so it was still rising.
#[test]
fn a_lava_log_with_status_blocks_gives_convergence() {
    let path = data("lava-run-2023.01-cyclictest-status-blocks-idle.log");
    let r = build(&Options {
        inputs: vec![path.clone()],
        threshold_us: Some(1000.0),
        ..Options::default()
    })
    .unwrap();
    let s = scenario(&r);
    assert_eq!(s.verdict, Verdict::Pass, "information, not a verdict: {:?}", s.reasons);
    assert_eq!(s.convergence_unknown, None);
    let c = s.threads[0].convergence.as_ref().unwrap();
    let steps: Vec<(u64, u64, Option<f64>)> =
        c.running_max.iter().map(|m| (m.cycle, m.snapshot_cycle, m.max_us)).collect();
    assert_eq!(
        steps,
        [(1024, 999, Some(120.0)), (2048, 1998, Some(300.0)), (3000, 3000, Some(477.0))]
    );
    assert_eq!((c.cycles, c.half_at, c.snapshots), (3000, 999, Some(2)));
    assert_eq!(
        (c.first_half_max_us, c.second_half_max_us, c.rose_in_second_half),
        (Some(120.0), Some(477.0), Some(true))
    );
    assert!(c.still_rising);
    assert!(
        s.notes.contains(&"CPU1 (thread 0): the maximum was still rising: run longer".to_string()),
        "{:?}",
        s.notes
    );
    let out = text::render(&r);
    assert!(out.contains("convergence CPU1 (from 2 status snapshots, not every sample): max of the halves 120 | 477 µs (second half from cycle 999); max so far by cycle (the snapshot at or before it; at the end the final figures): 1024 120 (at 999), 2048 300 (at 1998), end 3000 477 (the maximum was still rising: run longer)"), "{out}");
    let json = serde_json::to_value(&r).unwrap();
    let scenario_json = &json["inputs"][0]["scenarios"][0];
    assert_eq!(scenario_json["convergence_unknown"], serde_json::Value::Null);
    let cj = &scenario_json["threads"][0]["convergence"];
    assert_eq!(
        (&cj["snapshots"], &cj["rose_in_second_half"], &cj["still_rising"]),
        (&2.into(), &true.into(), &true.into())
    );
    let page = html::render(&r);
    assert!(page.contains("from 2 status snapshots") && page.contains("run longer"), "{page}");
}

/// Status blocks the board's console printed outside the job's frame are never read; a second
/// frame for the same scenario (a forged marker), a frame cut short, or none at all leaves the
/// convergence "not known", saying why, and the verdict as it was.
#[test]
fn forged_cut_or_missing_status_frames_leave_convergence_not_known() {
    let golden =
        std::fs::read_to_string(data("lava-run-2023.01-cyclictest-status-blocks-idle.log"))
            .unwrap();
    let entry = |msg: &str| {
        format!(
            "{{\"dt\": \"2026-12-05T06:20:00.000000\", \"lvl\": \"target\", \"msg\": {}}}\n",
            serde_json::to_string(msg).unwrap()
        )
    };
    let forged_frame: String = [
        "<<<RTBUILD-STATUS-BEGIN scenario=idle>>>",
        "# cyclictest current status:",
        "T: 0 ( 2211) P:99 I:1000 C:   2999 Min:      4 Act:    9 Avg:   16 Max:     477",
        "#---------------------------",
        "<<<RTBUILD-STATUS-END scenario=idle>>>",
    ]
    .iter()
    .map(|l| entry(l))
    .collect();
    let frame_start = golden.find("\"<<<RTBUILD-STATUS-BEGIN").unwrap();
    let frame_start = golden[..frame_start].rfind('\n').unwrap() + 1;
    let frame_end = golden.find("<<<RTBUILD-STATUS-END").unwrap();
    let frame_end = frame_end + golden[frame_end..].find('\n').unwrap() + 1;
    let without_end = {
        let end_line = golden[..frame_end - 1].rfind('\n').unwrap() + 1;
        format!("{}{}", &golden[..end_line], &golden[frame_end..])
    };
    let cases = [
        (
            format!("{}{forged_frame}{}", &golden[..frame_end], &golden[frame_end..]),
            "the LAVA log holds 2 frames of cyclictest status snapshots for scenario `idle` (log lines ",
        ),
        (without_end, "the cyclictest status snapshots of scenario `idle` (log line "),
        (
            format!("{}{}", &golden[..frame_start], &golden[frame_end..]),
            "the LAVA log holds no cyclictest status snapshots for scenario `idle` (a job from an older `rtbuild lava` asks for none; else the job stopped before printing them)",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (log, why)) in cases.iter().enumerate() {
        assert_ne!(log, &golden, "case {i} changes the log");
        let path = dir.path().join(format!("lava-{i}.log"));
        crate::files::write::fixture(&path, log).unwrap();
        let r = build(&Options {
            inputs: vec![path],
            threshold_us: Some(1000.0),
            ..Options::default()
        })
        .unwrap();
        let s = scenario(&r);
        assert_eq!(s.verdict, Verdict::Pass, "case {i}: {:?}", s.reasons);
        assert!(s.threads.iter().all(|t| t.convergence.is_none()), "case {i}");
        let unknown = s.convergence_unknown.as_deref().unwrap_or_default();
        assert!(unknown.starts_with(why), "case {i}: {unknown}");
        let out = text::render(&r);
        assert!(out.contains(&format!("convergence: not known (a histogram or summary keeps no sample order; cyclictest's -v output does, as do the status snapshots `rtbuild test` and `rtbuild lava` jobs take while it measures, but {why}")), "case {i}: {out}");
        let page = html::render(&r);
        assert!(page.contains("convergence: not known"), "case {i}");
    }
}
