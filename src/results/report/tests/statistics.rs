//! The figures: exact statistics of each golden file, histogram tails, units, and no panic or
//! overflow on absurd or mutated inputs.

use super::*;

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
