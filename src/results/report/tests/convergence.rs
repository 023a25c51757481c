//! Whether the worst case had settled: from verbose samples, from cyclictest's status
//! snapshots (in a folder or a LAVA log), and never from forged or cut frames.

use super::*;

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
