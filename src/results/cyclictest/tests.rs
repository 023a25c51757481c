//! Golden-file and robustness tests for the cyclictest parsers. The `cyclictest-2.4-*` files
//! were captured from Debian's rt-tests 2.4; the `2.7` ones are written by hand in the sparse
//! layout rt-tests 2.7 introduced.

use std::path::PathBuf;

use super::*;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn golden(name: &str) -> ResultFile {
    parse_file(&data(name)).unwrap_or_else(|err| panic!("{err}"))
}

fn buckets(h: &Histogram) -> Vec<(u64, u64)> {
    h.buckets.iter().map(|(v, c)| (*v, *c)).collect()
}

#[test]
fn full_histogram_from_rt_tests_2_4() {
    let run = golden("cyclictest-2.4-hist-h50-2threads.txt");
    assert_eq!(run.formats, [Format::HistogramFull]);
    assert_eq!(run.threads.len(), 2);
    let t0 = &run.threads[0];
    let h = t0.histogram.as_ref().unwrap();
    assert_eq!((h.bucketed(), h.overflows, h.limit), (1972, 28, Some(50)));
    assert_eq!(
        (t0.reported_min, t0.reported_avg, t0.reported_max),
        (Some(5), Some(21.0), Some(231))
    );
    assert_eq!(h.overflow_cycles.len(), 28);
    assert_eq!(h.overflow_cycles[..3], [16, 49, 67]);
    assert_eq!(h.buckets.get(&5), Some(&1));
    assert_eq!(h.buckets.get(&49), Some(&2));
    let t1 = &run.threads[1];
    assert_eq!(t1.histogram.as_ref().unwrap().samples(), 1968 + 31);
    assert_eq!(t1.max(), Some(1302));
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
}

#[test]
fn histofall_sum_column_is_dropped() {
    let run = golden("cyclictest-2.4-histofall-H50-2threads.txt");
    assert_eq!(run.threads.len(), 2);
    assert_eq!(run.threads[0].histogram.as_ref().unwrap().bucketed(), 1968);
    assert_eq!(run.threads[1].histogram.as_ref().unwrap().overflows, 20);
    assert_eq!(run.threads[0].reported_max, Some(1378));
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);

    let sparse = golden("cyclictest-2.7-sparse-histofall-H20-3threads.txt");
    assert_eq!(sparse.formats, [Format::HistogramSparse]);
    assert_eq!(sparse.threads.len(), 3);
    assert_eq!(buckets(sparse.threads[2].histogram.as_ref().unwrap()), [(2, 2), (10, 1)]);
}

#[test]
fn every_sample_overflowed() {
    let run = golden("cyclictest-2.4-hist-h3-all-overflow.txt");
    let h = run.threads[0].histogram.as_ref().unwrap();
    assert_eq!((h.bucketed(), h.overflows, h.limit), (0, 2000, Some(3)));
    assert_eq!((h.overflow_cycles.clone(), h.overflow_cycles_not_listed), (vec![0, 1, 2], 1997));
    assert_eq!(run.threads[0].max(), Some(86));
}

#[test]
fn sparse_histogram_from_rt_tests_2_7() {
    let run = golden("cyclictest-2.7-sparse-hist-h100-2threads-overflow.txt");
    assert_eq!(run.formats, [Format::HistogramSparse]);
    let h = run.threads[0].histogram.as_ref().unwrap();
    assert_eq!(buckets(h), [(3, 10), (4, 500), (5, 300), (7, 150), (12, 30), (40, 9), (99, 1)]);
    assert_eq!((h.overflows, h.limit, h.overflow_floor()), (3, None, 100));
    assert_eq!((h.overflow_cycles.clone(), h.overflow_cycles_not_listed), (vec![17, 342], 1));
    assert_eq!(run.threads[1].histogram.as_ref().unwrap().samples(), 992);
}

#[test]
fn breaktrace_lines() {
    let run = golden("cyclictest-2.4-hist-h5-breaktrace.txt");
    assert_eq!(run.breaktrace, Some(Break { thread: Some(12345), value: Some(250) }));
    assert_eq!(run.threads[0].tid, Some(12345));
}

#[test]
fn quiet_summary_in_us_and_ns() {
    let run = golden("cyclictest-2.4-quiet-2threads.txt");
    assert_eq!((run.formats.clone(), run.unit()), (vec![Format::Summary], Unit::Us));
    let t0 = &run.threads[0];
    assert_eq!(
        (t0.cycles, t0.reported_min, t0.reported_max, t0.tid),
        (Some(1995), Some(5), Some(3284), Some(10443))
    );
    assert!(t0.histogram.is_none());
    let ns = golden("cyclictest-2.4-quiet-nsecs-2threads.txt");
    assert_eq!(ns.unit(), Unit::Ns);
    assert_eq!(ns.threads[0].reported_max, Some(157052));
}

#[test]
fn live_screen_keeps_only_the_last_block() {
    let run = golden("cyclictest-2.4-live-ansi-2threads.txt");
    assert_eq!(run.formats, [Format::Live]);
    let t0 = &run.threads[0];
    assert_eq!(
        (t0.cycles, t0.reported_min, t0.reported_avg, t0.reported_max),
        (Some(1997), Some(4), Some(12.0), Some(1988))
    );
    assert_eq!(run.threads[1].cycles, Some(1998));
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
}

#[test]
fn verbose_samples_are_counted_exactly() {
    let run = golden("cyclictest-2.4-verbose-2threads.txt");
    assert_eq!(run.formats, [Format::Verbose]);
    let t0 = &run.threads[0];
    assert_eq!(t0.interval_us, Some(1000));
    let h = t0.histogram.as_ref().unwrap();
    let sum: u64 = h.buckets.iter().map(|(v, c)| v * c).sum();
    assert_eq!((h.samples(), sum, h.overflows), (991, 16589, 0));
    assert_eq!((h.buckets.keys().next().copied(), t0.max()), (Some(5), Some(245)));
    assert_eq!(t0.missing_cycles, 0);
    let h1 = run.threads[1].histogram.as_ref().unwrap();
    assert_eq!((h1.samples(), run.threads[1].max()), (991, Some(32)));
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
}

#[test]
fn spike_lines_count_per_thread() {
    let run = golden("cyclictest-2.4-spike-5us.txt");
    assert_eq!(run.formats, [Format::Summary, Format::Spike]);
    assert_eq!((run.threads[0].spikes, run.threads[0].spike_max), (513, Some(27)));
    assert_eq!((run.threads[1].spikes, run.threads[1].spike_max), (511, Some(65)));
    assert_eq!(run.threads[0].max(), Some(417));
}

#[test]
fn json_with_histogram_and_colon_keys() {
    let run = golden("cyclictest-2.4-json-hist-h50.json");
    assert_eq!(run.formats, [Format::Json]);
    assert_eq!(run.version.as_deref(), Some("2.40"));
    assert!(run.cmdline.as_deref().unwrap().contains("-h 50"));
    let t0 = &run.threads[0];
    let h = t0.histogram.as_ref().unwrap();
    assert_eq!((t0.cpu, t0.cycles, t0.reported_max), (Some(0), Some(1998), Some(2213)));
    assert_eq!((h.bucketed(), h.overflows, h.limit), (1994, 4, Some(50)));
    assert_eq!(t0.reported_avg, Some(19.63));
}

#[test]
fn json_without_histogram_and_with_nan() {
    let run = golden("cyclictest-2.4-json-no-hist.json");
    assert!(run.threads.iter().all(|t| t.histogram.is_none()));
    assert_eq!(run.threads[1].reported_max, Some(95));
    let nan = golden("cyclictest-2.4-json-nan-zero-cycles.json");
    let t1 = &nan.threads[1];
    assert_eq!((t1.cycles, t1.reported_avg, t1.cpu), (Some(0), None, Some(6)));
    let t0 = nan.threads[0].histogram.as_ref().unwrap();
    assert_eq!((t0.overflows, t0.limit), (2, Some(20)));
}

#[test]
fn bad_input_names_the_line() {
    let cases: &[(&str, &str)] = &[
        ("", "line 1: no cyclictest output found"),
        ("hello\nworld\n", "line 2: no cyclictest output found"),
        ("{\"thread\": {\"0\": {\"cycles\": 1,}}}", "line 1: invalid cyclictest JSON"),
        ("{\n\"a\": 1\n}", "line 1: JSON has no `thread` object"),
        ("{\n\"thread\": {\n\"0\": {\"cycles\": 1 \n", "line 4: invalid cyclictest JSON"),
        ("1:1:1\n99999:1:1\n", "line 2: thread index 99999 is out of range"),
    ];
    for (input, want) in cases {
        let err = parse(input.as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with(want), "{input:?}: {err}");
    }
}

#[test]
fn file_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.txt");
    crate::files::write::fixture(&path, "junk\n").unwrap();
    let err = parse_file(&path).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}:1: no cyclictest output found (no `T:` lines, histogram, `-v` samples or JSON); pass a file cyclictest wrote",
            path.display()
        )
    );
    let missing = parse_file(&dir.path().join("missing")).unwrap_err().to_string();
    assert!(missing.ends_with("missing` does not exist; check the path"), "{missing}");
}

#[test]
fn truncated_files_warn_and_keep_the_rest() {
    let verbose = std::fs::read(data("cyclictest-2.4-verbose-2threads.txt")).unwrap();
    let cut = &verbose[..verbose.len() - 3];
    let run = parse(cut).unwrap();
    assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
    assert!(run.warnings[0].message.contains("cut off"));
    let samples: u64 = run.threads.iter().map(Thread::samples).sum();
    assert_eq!(samples, 991 * 2 - 1);

    let live = std::fs::read(data("cyclictest-2.4-live-ansi-2threads.txt")).unwrap();
    let run = parse(&live[..live.len() - 20]).unwrap();
    assert_eq!(run.threads[1].cycles, Some(1988), "previous block kept for the cut thread");
    assert_eq!(run.threads[0].cycles, Some(1997));
    assert!(!run.warnings.is_empty());

    let hist = std::fs::read_to_string(data("cyclictest-2.4-hist-h50-2threads.txt")).unwrap();
    let cut = &hist[..hist.find("# Min").unwrap()];
    let run = parse(cut.as_bytes()).unwrap();
    assert!(
        run.warnings.iter().any(|w| w.message.contains("no `# Max Latencies`")),
        "{:?}",
        run.warnings
    );
    assert_eq!(
        run.threads[0].max(),
        None,
        "maximum unknown when overflows exist and Max is missing"
    );
}

#[test]
fn warnings_are_capped() {
    let mut input = String::from("T: 0 ( 1) P:99 I:1000 C: 10 Min: 1 Act: 2 Avg: 2 Max: 5\n");
    for _ in 0..1000 {
        input.push_str("garbage\n");
    }
    let run = parse(input.as_bytes()).unwrap();
    assert_eq!(
        (run.warnings.len(), run.warnings_not_kept),
        (MAX_WARNINGS, 1000 - MAX_WARNINGS as u64)
    );
}

/// A small deterministic generator (xorshift) so the fuzz test needs no extra crate.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn arbitrary_bytes_never_panic() {
    let alphabet: &[u8] = b"0123456789 :\t\n#T-{}\"[]\x1bnaAHMinMaxvg.,()Spike=others";
    let seeds: Vec<Vec<u8>> = std::fs::read_dir(data(""))
        .unwrap()
        .filter_map(|e| std::fs::read(e.unwrap().path()).ok())
        .filter(|b| b.len() < 64 * 1024)
        .collect();
    let mut state = 0x9e37_79b9_7f4a_7c15;
    for round in 0..3000 {
        let mut input = if round % 2 == 0 {
            let len = (xorshift(&mut state) % 400) as usize;
            (0..len)
                .map(|_| {
                    let r = xorshift(&mut state);
                    if r % 4 == 0 { r as u8 } else { alphabet[(r >> 8) as usize % alphabet.len()] }
                })
                .collect::<Vec<u8>>()
        } else {
            seeds[round / 2 % seeds.len()].clone()
        };
        if round % 2 == 1 && !input.is_empty() {
            for _ in 0..1 + xorshift(&mut state) % 8 {
                let at = (xorshift(&mut state) as usize) % input.len();
                input[at] = alphabet[(xorshift(&mut state) as usize) % alphabet.len()];
            }
            let cut = (xorshift(&mut state) as usize) % input.len();
            input.truncate(cut.max(1));
        }
        let _ = parse(&input[..]);
    }
}

#[test]
fn live_screen_with_histogram_and_verbose_with_histogram() {
    let run = golden("cyclictest-2.4-live-ansi-with-hist-h30.txt");
    assert_eq!(run.formats, [Format::HistogramFull, Format::Live]);
    let t0 = &run.threads[0];
    let h = t0.histogram.as_ref().unwrap();
    assert_eq!((t0.cycles, h.bucketed(), h.overflows, t0.max()), (Some(976), 941, 36, Some(17105)));

    let run = golden("cyclictest-2.4-verbose-with-hist-h30-l200.txt");
    assert_eq!(run.formats, [Format::HistogramFull, Format::Verbose]);
    let t1 = &run.threads[1];
    let h = t1.histogram.as_ref().unwrap();
    // The -v samples are complete (200 each), so they replace the overflowing histogram.
    assert!(t1.histogram_from_samples);
    assert_eq!(
        (h.samples(), h.overflows, h.buckets.keys().next_back().copied(), t1.max()),
        (200, 0, Some(64), Some(64))
    );
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
}
