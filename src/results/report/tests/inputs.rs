//! Inputs that fail or are refused: invalid runs, regressions against a baseline, unusable
//! files, folders and thresholds, unknown figures, and a LAVA log's console.

use super::*;

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
