//! Parsing and judging real rt-tests 2.4 outputs captured on Debian 12 (tests/data), plus the
//! failure statements each program prints (from the 2.4 binaries' own message strings).

use super::*;
use crate::formats::report_json::Verdict;
use crate::measure::rttests::verdict::Limits;

/// The reasons' texts, the way every output shows them.
fn reasons(outcome: &ProgramOutput, limits: Limits) -> Vec<String> {
    crate::measure::rttests::verdict::reasons(outcome, limits)
        .iter()
        .map(|r| r.text().to_string())
        .collect()
}

/// The verdict the reasons lead to.
fn verdict(outcome: &ProgramOutput, limits: Limits) -> Verdict {
    crate::measure::rttests::verdict::reasons(outcome, limits)
        .iter()
        .map(crate::formats::report_json::Reason::verdict)
        .fold(Verdict::Pass, |a, b| crate::formats::judge::worst([a, b]))
}

fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn load(name: &str) -> ProgramOutput {
    let path = data(name);
    match sniff(&path, None).unwrap() {
        Sniffed::Other { program, json } => read(&path, program, json).unwrap(),
        Sniffed::Cyclictest => panic!("{name} was taken for cyclictest output"),
    }
}

const LIMITS: Limits = Limits { latency_us: 100.0, noise_us: 20.0 };

#[test]
fn each_program_is_recognised_by_content() {
    let cases = [
        ("oslat-2.4-json-cpu1.json", Program::Oslat, true),
        ("oslat-2.4-text-cpu1.txt", Program::Oslat, false),
        ("oslat-2.4-text-2cpus.txt", Program::Oslat, false),
        ("cyclicdeadline-2.4-json-2threads.json", Program::Cyclicdeadline, true),
        ("cyclicdeadline-2.4-text-2threads.txt", Program::Cyclicdeadline, false),
        ("pmqtest-2.4-json-cpu1.json", Program::Pmqtest, true),
        ("ptsematest-2.4-json-cpu1.json", Program::Ptsematest, true),
        ("sigwaittest-2.4-json-cpu1.json", Program::Sigwaittest, true),
        ("svsematest-2.4-json-cpu1.json", Program::Svsematest, true),
        ("signaltest-2.4-json-cpu1.json", Program::Signaltest, true),
        ("signaltest-2.4-text-cpu1.txt", Program::Signaltest, false),
        ("pi_stress-2.4-json.json", Program::PiStress, true),
        ("pi_stress-2.4-text.txt", Program::PiStress, false),
        ("rt-migrate-test-2.4-json-pass.json", Program::RtMigrateTest, true),
        ("rt-migrate-test-2.4-text-pass.txt", Program::RtMigrateTest, false),
        ("ssdd-2.4-json.json", Program::Ssdd, true),
        ("ssdd-2.4-text.txt", Program::Ssdd, false),
        ("hackbench-2.4-text.txt", Program::Hackbench, false),
    ];
    for (name, program, json) in cases {
        assert_eq!(sniff(&data(name), None).unwrap(), Sniffed::Other { program, json }, "{name}");
    }
    // The pair tests print identical text: the file name (or the test that wrote it) tells.
    assert_eq!(
        sniff(&data("pmqtest-2.4-text-cpu1.txt"), None).unwrap(),
        Sniffed::Other { program: Program::Pmqtest, json: false }
    );
    // cyclictest's own outputs stay with cyclictest's parser.
    for name in [
        "cyclictest-2.4-json-1thread-cpu1.json",
        "cyclictest-2.4-quiet-2threads.txt",
        "cyclictest-2.4-live-ansi-2threads.txt",
        "cyclictest-2.4-verbose-2threads.txt",
        "cyclictest-2.4-hist-h50-2threads.txt",
    ] {
        assert_eq!(sniff(&data(name), None).unwrap(), Sniffed::Cyclictest, "{name}");
    }
}

#[test]
fn oslat_json_and_text_give_the_same_per_cpu_noise() {
    let json = load("oslat-2.4-json-cpu1.json");
    let text = load("oslat-2.4-text-cpu1.txt");
    assert_eq!(
        json.cmdline.as_deref(),
        Some("oslat -c 1 -C 0 -D 2 -q --json=oslat-2.4-json-cpu1.json")
    );
    assert_eq!(json.version.as_deref(), Some("2.40"));
    assert_eq!(json.return_code, Some(0));
    assert_eq!(json.rows.len(), 1);
    let (j, t) = (&json.rows[0], &text.rows[0]);
    assert_eq!((j.cpu, j.min_us, j.max_us), (Some(1), Some(1.0), Some(19103.0)));
    assert_eq!((t.cpu, t.min_us, t.max_us), (j.cpu, j.min_us, j.max_us));
    assert_eq!(j.histogram, t.histogram);
    assert_eq!(j.samples, t.samples);
    assert_eq!(j.histogram.last(), Some(&(32, 232)));
    let two = load("oslat-2.4-text-2cpus.txt");
    assert_eq!(two.rows.iter().map(|r| r.cpu).collect::<Vec<_>>(), [Some(0), Some(1)]);
    assert!(two.rows.iter().all(|r| r.max_us.is_some() && !r.histogram.is_empty()));
}

#[test]
fn latency_programs_give_rows_per_thread_and_cpu() {
    let pmq = load("pmqtest-2.4-json-cpu1.json");
    assert_eq!(pmq.rows.len(), 1);
    assert_eq!(pmq.rows[0].cpu, Some(1));
    assert!(pmq.rows[0].samples.unwrap() > 1000);
    let pmq_text = parse_text(
        &std::fs::read_to_string(data("pmqtest-2.4-text-cpu1.txt")).unwrap(),
        Program::Pmqtest,
    );
    assert_eq!(pmq_text.rows[0].cpu, Some(1));
    assert_eq!(pmq_text.rows[0].max_us, pmq.rows[0].max_us);
    let signal = load("signaltest-2.4-json-cpu1.json");
    assert_eq!(signal.rows.len(), 2);
    assert_eq!(signal.rows[1].cpu, Some(1));
    let signal_text = load("signaltest-2.4-text-cpu1.txt");
    assert_eq!(signal_text.rows[1].max_us, signal.rows[1].max_us);
    let deadline = load("cyclicdeadline-2.4-json-2threads.json");
    assert_eq!(deadline.rows.len(), 2);
    assert_eq!(deadline.rows[0].cpu, None);
    let deadline_text = load("cyclicdeadline-2.4-text-2threads.txt");
    assert_eq!(deadline_text.rows[1].max_us, deadline.rows[1].max_us);
}

#[test]
fn verdicts_on_golden_outputs() {
    // These captured runs happened on a non-RT VM: their maxima are far above the limits.
    let oslat = load("oslat-2.4-json-cpu1.json");
    assert_eq!(
        reasons(&oslat, LIMITS),
        ["CPU 1: max OS noise 19103 µs exceeds the 20 µs noise limit"]
    );
    assert!(reasons(&oslat, Limits { latency_us: 1.0, noise_us: 20000.0 }).is_empty());
    let pmq = load("pmqtest-2.4-json-cpu1.json");
    let max = pmq.rows[0].max_us.unwrap();
    assert!(reasons(&pmq, Limits { latency_us: max, noise_us: 1.0 }).is_empty());
    assert_eq!(
        reasons(&pmq, Limits { latency_us: max - 1.0, noise_us: 1.0 }),
        [format!(
            "thread 0 (CPU 1): max latency {} µs exceeds the {} µs threshold",
            max,
            max - 1.0
        )]
    );
    for name in [
        "pi_stress-2.4-json.json",
        "pi_stress-2.4-text.txt",
        "ssdd-2.4-json.json",
        "ssdd-2.4-text.txt",
        "rt-migrate-test-2.4-text-pass.txt",
    ] {
        assert_eq!(reasons(&load(name), LIMITS), Vec::<String>::new(), "{name}");
    }
    // rt-migrate-test's JSON alone does not say whether the check passed.
    assert_eq!(
        reasons(&load("rt-migrate-test-2.4-json-pass.json"), LIMITS),
        ["rt-migrate-test stated no result (rt-migrate-test prints Passed!/Failed! only with -c)"]
    );
}

#[test]
fn failure_statements_fail_the_correctness_tests() {
    let migrate = parse_text("Task 1 FAILED\n\n Failed!\n", Program::RtMigrateTest);
    assert_eq!(
        reasons(&migrate, LIMITS),
        ["rt-migrate-test reported: Task 1 FAILED", "rt-migrate-test reported failure"]
    );
    let ssdd = parse_text(
        "forktest#0/17: EXITING, ERROR: attach failed.  errno 1\nOne or more tests FAILED\n",
        Program::Ssdd,
    );
    assert_eq!(reasons(&ssdd, LIMITS).len(), 2);
    let pi = parse_text("WATCHDOG triggered: group 0 is deadlocked!\n", Program::PiStress);
    assert_eq!(
        reasons(&pi, LIMITS),
        ["pi_stress reported: WATCHDOG triggered: group 0 is deadlocked!"]
    );
    let json = parse_json(
        "{\"cmdline:\": \"pi_stress -D 2\", \"return_code\": 1, \"inversion\": 4}",
        Program::PiStress,
    )
    .unwrap();
    assert_eq!(reasons(&json, LIMITS), ["pi_stress returned 1"]);
}

#[test]
fn hwlatdetect_summary() {
    // The summary lines hwlatdetect 2.4 prints (its `info(...)` calls); this VM's kernel has no
    // hwlat tracer, so no real run could be captured here.
    let quiet = "hwlatdetect:  test duration 10 seconds\n   detector: tracer\n\nStarting test\ntest finished\nMax Latency: Below threshold\nSamples recorded: 0\nSamples exceeding threshold: 0\n";
    let outcome = parse_text(quiet, Program::Hwlatdetect);
    assert_eq!(reasons(&outcome, LIMITS), Vec::<String>::new());
    let smi = "hwlatdetect:  test duration 10 seconds\nMax Latency: 37us\nSamples recorded: 3\nSamples exceeding threshold: 3\n3 SMIs occured on cpu 1\nSMIs during run: 3\n";
    let outcome = parse_text(smi, Program::Hwlatdetect);
    assert_eq!(outcome.rows[0].max_us, Some(37.0));
    assert_eq!(
        reasons(&outcome, LIMITS),
        [
            "hwlatdetect saw 3 hardware/firmware latency samples above its 20 µs threshold (SMIs or firmware stealing the CPU)"
        ]
    );
    assert!(outcome.facts.contains(&"3 SMIs occured on cpu 1".to_string()));
}

#[test]
fn nan_averages_and_cut_files() {
    let text = "{\n  \"cmdline:\": \"signaltest -a1\",\n  \"return_code\": 0,\n  \"thread\": {\n    \"0\": {\"cycles\": 0, \"min\": 0, \"max\": 0,\n      \"avg\": -nan,\n      \"cpu\": 1\n    }\n  }\n}\n";
    let outcome = parse_json(text, Program::Signaltest).unwrap();
    assert_eq!(outcome.rows[0].avg_us, None);
    assert_eq!(reasons(&outcome, LIMITS), ["thread 0 (CPU 1): no samples recorded"]);
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("oslat.json");
    crate::files::write::fixture(
        &cut,
        "{\n  \"file_version\": 1,\n  \"cmdline:\": \"oslat -c 1\",\n  \"thread\": {\n",
    )
    .unwrap();
    let err = read(&cut, Program::Oslat, true).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{} is not valid oslat JSON: ", cut.display())), "{err}");
    let empty = dir.path().join("pmqtest.txt");
    crate::files::write::fixture(&empty, "nothing here\n").unwrap();
    assert_eq!(
        read(&empty, Program::Pmqtest, false).unwrap_err().to_string(),
        format!(
            "{} holds no pmqtest results (it may have been cut short); rerun pmqtest",
            empty.display()
        )
    );
}

/// The RK3588 guide's `cyclictest -c 0 -m -t 8 -p 99 -D 600` live screen, longer than the sniff:
/// the real capture's header and first screen, then its redraw screens repeated.
fn long_live_screen() -> (Vec<u8>, usize) {
    let golden = std::fs::read(data("cyclictest-2.4-live-ansi-8threads-unpinned.txt")).unwrap();
    let redraw = |b: &[u8]| b.windows(4).position(|w| w == b"\x1b[10").unwrap();
    let first = redraw(&golden);
    let (start, screens) = golden.split_at(first);
    let screen = redraw(&screens[1..]) + 1;
    let mut out = start.to_vec();
    while out.len() < SNIFF_BYTES + 4 * screens.len() {
        out.extend_from_slice(screens);
    }
    (out, screen)
}

#[test]
fn a_line_cut_at_the_sniff_boundary_never_changes_the_format() {
    let (stream, screen) = long_live_screen();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rk3588-cyclictest.txt");
    // Every position of the 64 KiB boundary within one whole screen (each byte of every `T:` line).
    let mut cut_before_interval = 0;
    for shift in 0..=screen {
        let body = &stream[shift..];
        let at = &body[..SNIFF_BYTES];
        let last_line = &at[at.iter().rposition(|b| *b == b'\n').unwrap() + 1..];
        if last_line.starts_with(b"T:") && !last_line.windows(3).any(|w| w == b" I:") {
            cut_before_interval += 1;
        }
        crate::files::write::fixture(&path, body).unwrap();
        assert_eq!(sniff(&path, None).unwrap(), Sniffed::Cyclictest, "shifted by {shift} bytes");
    }
    assert!(cut_before_interval > 8, "the shifts cut `T:` lines before ` I:`");
    // signaltest's own output is still signaltest's, also when its head is cut mid-line.
    let signaltest = std::fs::read(data("signaltest-2.4-text-cpu1.txt")).unwrap();
    let mut long = Vec::new();
    while long.len() < SNIFF_BYTES + signaltest.len() {
        long.extend_from_slice(&signaltest);
    }
    for shift in 0..signaltest.len() {
        crate::files::write::fixture(&path, &long[shift..]).unwrap();
        assert_eq!(
            sniff(&path, None).unwrap(),
            Sniffed::Other { program: Program::Signaltest, json: false },
            "signaltest shifted by {shift} bytes"
        );
    }
}

/// A figure that is not a finite number ≥ 0 (`NaN`, `nan`, `inf`, `-5`) is unknown in every
/// rt-tests parser that reads a number, plain and JSON, and an unknown figure makes the run
/// INVALID, never PASS (before, `max > limit` was false for NaN and -5: PASS). Each golden
/// output has its figure replaced.
#[test]
fn nan_inf_and_negative_figures_are_invalid_in_every_parser() {
    let text = |name: &str| std::fs::read_to_string(data(name)).unwrap();
    let cases: Vec<(&str, Program, String, &str)> = vec![
        (
            "pmqtest text Max NaN",
            Program::Pmqtest,
            text("pmqtest-2.4-text-cpu1.txt").replace("Max   70", "Max NaN"),
            "max latency `NaN`",
        ),
        (
            "ptsematest text Max -5",
            Program::Ptsematest,
            text("ptsematest-2.4-text-cpu1.txt").replace("Max   65", "Max   -5"),
            "max latency `-5`",
        ),
        (
            "signaltest text Max -5",
            Program::Signaltest,
            text("signaltest-2.4-text-cpu1.txt").replace("Max:     262", "Max:     -5"),
            "max latency `-5`",
        ),
        (
            "cyclicdeadline text Min inf",
            Program::Cyclicdeadline,
            text("cyclicdeadline-2.4-text-2threads.txt").replace("Min:      1", "Min:    inf"),
            "min latency `inf`",
        ),
        (
            "oslat text Maximum nan",
            Program::Oslat,
            text("oslat-2.4-text-cpu1.txt").replace("19103 (us)", "nan (us)"),
            "max OS noise `NaN`",
        ),
        (
            "oslat text Average -1.5",
            Program::Oslat,
            text("oslat-2.4-text-cpu1.txt").replace("1.088 (us)", "-1.5 (us)"),
            "avg OS noise `-1.5`",
        ),
        (
            "hwlatdetect text Max Latency infus",
            Program::Hwlatdetect,
            "Max Latency: infus\nSamples recorded: 10\nSamples exceeding threshold: 0\n".into(),
            "max hardware latency `inf`",
        ),
    ];
    for (what, program, output, said) in cases {
        let outcome = parse_text(&output, program);
        let found = reasons(&outcome, LIMITS);
        assert!(found.iter().any(|r| r.contains(said)), "{what}: {found:?}");
        assert_eq!(verdict(&outcome, LIMITS), Verdict::Invalid, "{what}: {found:?}");
    }
    // JSON: a negative figure is read as written; `nan` is repaired to null, which is unknown.
    let json = |name: &str, from: &str, to: &str| {
        let text = text(name);
        assert!(text.contains(from), "{name}");
        parse_json(&text.replace(from, to), Program::Pmqtest).unwrap()
    };
    let negative = json("pmqtest-2.4-json-cpu1.json", "\"max\": 70", "\"max\": -5");
    assert_eq!(verdict(&negative, LIMITS), Verdict::Invalid, "{:?}", reasons(&negative, LIMITS));
    let nan = json("pmqtest-2.4-json-cpu1.json", "\"max\": 70", "\"max\": nan");
    assert_eq!(
        reasons(&nan, LIMITS),
        [
            "pmqtest wrote `\"max\": nan`, which is not a finite number ≥ 0, so the figure is unknown",
            "thread 0 (CPU 1): maximum latency unknown"
        ]
    );
    assert_eq!(verdict(&nan, LIMITS), Verdict::Invalid);
    let oslat = text("oslat-2.4-json-cpu1.json").replace("\"avg\": 1.087674", "\"avg\": -inf");
    let oslat = parse_json(&oslat, Program::Oslat).unwrap();
    assert_eq!(oslat.rows[0].avg_us, None);
    assert_eq!(verdict(&oslat, Limits { latency_us: 100.0, noise_us: 1e6 }), Verdict::Invalid);
}
