//! The `-v` hot path (runs of fixed-width lines counted straight from the reader's buffer)
//! gives exactly what the general line-by-line path gives: every golden file and generated logs
//! read through buffers of every size (a 1-byte buffer sends every line through the general
//! path), and generated `-v` logs agree with a deliberately plain count of the same lines.
//! Over-long lines are skipped in bounded memory.

use std::collections::BTreeMap;
use std::io::{BufReader, Read};

use super::lines::MAX_LINE;
use super::split::Splitter;
use super::text::{parse_text, parse_text_with};
use super::{ParseError, ParseErrorKind, ResultFile};

/// `input` read through a `capacity`-byte buffer, as `Debug` text (`ParseError` holds an
/// `io::Error`).
fn parsed(input: &[u8], capacity: usize) -> String {
    format!("{:?}", parse_text(BufReader::with_capacity(capacity, input)))
}

/// `input` read through a `capacity`-byte buffer with runs of `-v` lines counted in up to
/// `parts` parts of at least `min_part` bytes, as `Debug` text.
fn parsed_in_parts(input: &[u8], capacity: usize, parts: usize, min_part: usize) -> String {
    let split = Splitter::new(parts, min_part);
    format!("{:?}", parse_text_with(BufReader::with_capacity(capacity, input), split))
}

/// Every buffer size gives what the 1-byte buffer (no line is ever whole in it) gives, and so
/// does every way of counting runs in parts on several threads.
fn assert_same(name: &str, input: &[u8]) {
    let reference = parsed(input, 1);
    for capacity in [26, 27, 28, 53, 54, 1000, 4099, 1 << 20] {
        assert_eq!(parsed(input, capacity), reference, "{name}: {capacity}-byte buffer");
    }
    for (capacity, parts, min_part) in [
        (1 << 20, 2, 27),
        (1 << 20, 3, 54),
        (1 << 20, 8, 27),
        (4099, 2, 27),
        (4099, 5, 300),
        (1000, 3, 27),
    ] {
        assert_eq!(
            parsed_in_parts(input, capacity, parts, min_part),
            reference,
            "{name}: {capacity}-byte buffer in up to {parts} parts of {min_part} bytes"
        );
    }
}

#[test]
fn every_golden_file_parses_the_same_through_every_buffer_size() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("cyclictest-") || !name.ends_with(".txt") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        // Guard: the golden must parse (or this test compares two identical errors).
        assert!(parse_text(&bytes[..]).is_ok(), "{name}");
        assert_same(&name, &bytes);
        seen += 1;
    }
    assert!(seen >= 13, "only {seen} cyclictest text goldens found");
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn latency(&mut self) -> i64 {
        let r = self.next();
        match r % 1000 {
            0 => 70_000 + (r >> 20) as i64 % 900_000,
            1..=5 => 200 + (r >> 20) as i64 % 3000,
            6 => -((r >> 20) as i64 % 5) - 1,
            _ => 5 + (r >> 20) as i64 % 26,
        }
    }
}

/// How much besides cyclictest's own fixed-width lines a generated log holds.
#[derive(Clone, Copy, PartialEq)]
enum Mix {
    /// Only `%8d:%8lu:%8ld` lines (a rare negative latency included).
    Clean,
    /// Also cycle gaps, short and SMI-count sample lines and CRLF.
    Samples,
    /// Also `T:` lines and lines that are not cyclictest's.
    Everything,
}

/// A `-v` log like cyclictest's (threads in 10-sample batches), with more mixed in by `mix`.
fn verbose_log(seed: u64, threads: u64, batches: u64, mix: Mix) -> Vec<u8> {
    let mixed = mix != Mix::Clean;
    let mut rng = Rng(seed);
    let mut out = b"# /dev/cpu_dma_latency set to 0us\n".to_vec();
    for t in 0..threads {
        out.extend(format!("Thread {t} Interval: 1000\n").bytes());
    }
    let mut cycle = vec![0u64; threads as usize];
    for _ in 0..batches {
        for t in 0..threads {
            for _ in 0..10 {
                let c = &mut cycle[t as usize];
                if mixed && rng.next() % 97 == 0 {
                    *c += 1 + rng.next() % 5;
                }
                let v = rng.latency();
                let kinds = match mix {
                    Mix::Clean => 0,
                    Mix::Samples => 3,
                    Mix::Everything => 5,
                };
                let pick = rng.next() % 50;
                let line = match if pick < kinds { pick } else { 99 } {
                    0 => format!("{t}:{c}:{v}\n"),
                    1 => format!("{t:8}:{c:8}:{v:8}       0\n"),
                    2 => format!("{t:8}:{c:8}:{v:8}\r\n"),
                    3 => "T: 0 ( 2475) P:99 I:1000 C:   1000 Min:      5 Act:    9 Avg:   11 Max:      40\n".to_string(),
                    4 => "garbage line\n".to_string(),
                    _ => format!("{t:8}:{c:8}:{v:8}\n"),
                };
                out.extend(line.bytes());
                *c += 1;
            }
        }
    }
    out
}

#[test]
fn generated_logs_parse_the_same_through_every_buffer_size() {
    for (seed, threads, mix) in
        [(1, 8, Mix::Clean), (2, 3, Mix::Samples), (3, 1, Mix::Everything), (4, 8, Mix::Everything)]
    {
        let log = verbose_log(seed, threads, 40, mix);
        assert_same(&format!("seed {seed}"), &log);
        // Cut off in the middle of a line, and with a histogram after the samples.
        assert_same(&format!("seed {seed} cut"), &log[..log.len() - 5]);
        let mut with_hist = log.clone();
        with_hist.extend(b"# Histogram\n000005 000010\t000003\n# Total: 000000010 000000003\n");
        with_hist.extend(b"# Max Latencies: 00030 00031\n");
        assert_same(&format!("seed {seed} -v -h"), &with_hist);
    }
}

/// Fixed-width `-v` lines, one per (thread, cycle, latency).
fn fixed_lines(samples: &[(u64, u64, u64)]) -> Vec<u8> {
    samples.iter().flat_map(|(t, c, v)| format!("{t:8}:{c:8}:{v:8}\n").into_bytes()).collect()
}

#[test]
fn runs_counted_in_parts_join_exactly_at_every_seam() {
    // 24 lines: with up to 8 parts of at least one line, every line boundary is a seam in one
    // of the splits assert_same tries.
    let mut samples: Vec<(u64, u64, u64)> = (0..12).map(|c| (0, c, 10 + c % 3)).collect();
    // Thread 0: a gap of 5 cycles, then the count going back (a second run in the same file).
    samples.extend([(0, 17, 12), (0, 18, 70_000), (0, 3, 11), (0, 4, 12)]);
    // Thread 5 appears only in the last lines; thread 2 once, with the largest latency.
    samples.extend([(2, 0, 99_999_999), (5, 40, 7), (5, 42, 8), (5, 43, 9)]);
    samples.extend([(0, 5, 13), (0, 9, 14), (5, 44, 10), (0, 10, 15)]);
    let log = fixed_lines(&samples);
    assert_same("seams", &log);
    let run = parse_text_with(&log[..], Splitter::new(8, 27)).unwrap();
    let missing: Vec<(u32, u64)> =
        run.threads.iter().map(|t| (t.index, t.missing_cycles)).collect();
    // Worked by hand: thread 0 skips 12..=16 (5), 6..=8 (3); thread 5 skips 41 (1).
    assert_eq!(missing, [(0, 8), (2, 0), (5, 1)]);
    assert_eq!(run.threads[0].samples(), 19);
    assert_eq!(run.threads[1].max(), Some(99_999_999));
}

#[test]
fn a_part_that_meets_another_kind_of_line_ends_the_counted_run() {
    let head = fixed_lines(&(0..30).map(|c| (1, c, 20)).collect::<Vec<_>>());
    let tail = fixed_lines(&(31..60).map(|c| (1, c, 21)).collect::<Vec<_>>());
    let others: [&[u8]; 5] = [
        // A cycle number too wide for its 8 columns: a `-v` line of another length.
        b"       1: 123456789:      22\n",
        b"T: 0 ( 2475) P:99 I:1000 C:   1000 Min:      5 Act:    9 Avg:   11 Max:      40\n",
        // A thread index past MAX_THREADS: the error must name this line, whichever part holds it.
        b"    4096:      30:      22\n",
        b"       1:      30:     -22\n",
        b"       1:      30:      22       0\n",
    ];
    for (at, other) in others.iter().enumerate() {
        for cut in [0, 7, 15, 29] {
            let mut log = head[..cut * 27].to_vec();
            log.extend_from_slice(other);
            log.extend_from_slice(&head[cut * 27..]);
            log.extend_from_slice(&tail);
            assert_same(&format!("other line {at} after {cut} lines"), &log);
        }
    }
}

#[test]
fn the_default_splitter_counts_a_long_log_as_one_pass_does() {
    // Long enough for several parts of the default size in every 4 MiB buffer.
    let log = verbose_log(21, 8, 40_000, Mix::Clean);
    assert!(log.len() > 8 << 20);
    let want = plain_count(&log);
    let run = parse_text(BufReader::with_capacity(4 << 20, &log[..]));
    assert_eq!(format!("{run:?}"), parsed(&log, 777));
    assert_eq!(from_run(&run.unwrap()), want);
}

/// The plain reference: split lines, split fields, count.
#[derive(Debug, Default, PartialEq)]
struct Plain {
    counts: BTreeMap<u64, BTreeMap<u64, u64>>,
    missing: BTreeMap<u64, u64>,
    max: BTreeMap<u64, u64>,
    negative: u64,
}

fn plain_count(log: &[u8]) -> Plain {
    let mut plain = Plain::default();
    let mut last: BTreeMap<u64, u64> = BTreeMap::new();
    for line in String::from_utf8_lossy(log).lines() {
        let fields: Vec<&str> = line.split(':').map(str::trim).collect();
        let [t, c, v] = fields[..] else { continue };
        let v = v.split_whitespace().next().unwrap_or("");
        let (Ok(t), Ok(c), Ok(v)) = (t.parse::<u64>(), c.parse::<u64>(), v.parse::<i64>()) else {
            continue;
        };
        if let Some(&l) = last.get(&t)
            && c > l + 1
        {
            *plain.missing.entry(t).or_default() += c - l - 1;
        }
        plain.missing.entry(t).or_default();
        last.insert(t, c);
        if v < 0 {
            plain.negative += 1;
            continue;
        }
        *plain.counts.entry(t).or_default().entry(v as u64).or_default() += 1;
        let max = plain.max.entry(t).or_default();
        *max = (*max).max(v as u64);
    }
    plain
}

fn from_run(run: &ResultFile) -> Plain {
    let mut plain = Plain::default();
    for t in &run.threads {
        let h = t.histogram.as_ref().unwrap();
        let index = u64::from(t.index);
        plain.counts.insert(index, h.buckets.clone());
        plain.missing.insert(index, t.missing_cycles);
        plain.max.insert(index, t.max().unwrap());
    }
    plain.negative = run
        .warnings
        .iter()
        .find_map(|w| {
            w.message.split(' ').next()?.parse().ok().filter(|_| w.message.contains("negative"))
        })
        .unwrap_or(0);
    plain
}

#[test]
fn generated_verbose_logs_agree_with_a_plain_count() {
    // No `T:` lines here: cyclictest's own max in them would stand for the counted one.
    for (seed, threads, mix) in [(11, 8, Mix::Clean), (12, 4, Mix::Samples), (13, 2, Mix::Samples)]
    {
        let log = verbose_log(seed, threads, 300, mix);
        let want = plain_count(&log);
        assert!(want.negative > 0 && want.counts.len() == threads as usize, "{seed}");
        for capacity in [1, 777, 4096, 1 << 20] {
            let run = parse_text(BufReader::with_capacity(capacity, &log[..])).unwrap();
            assert_eq!(from_run(&run), want, "seed {seed}, {capacity}-byte buffer");
        }
    }
}

/// `n` bytes of `x`, produced as they are read (never held whole).
struct Endless(u64);

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.0) as usize;
        buf[..n].fill(b'x');
        self.0 -= n as u64;
        Ok(n)
    }
}

#[test]
fn a_file_without_newlines_is_skipped_not_collected() {
    let bytes = 64u64 << 20;
    // Nothing but the one over-long line: no cyclictest output.
    let err: ParseError = parse_text(BufReader::new(Endless(bytes))).unwrap_err();
    assert!(err.line == 1 && matches!(err.kind, ParseErrorKind::Empty), "{err:?}");
    // Between real lines, it is one warning with its line number; the rest still counts.
    let long = format!("{}\n", "y".repeat(MAX_LINE + 10));
    let input = format!("       0:       0:      10\n{long}       0:       1:      12\n{long}");
    assert_same("long lines", input.as_bytes());
    let run = parse_text(input.as_bytes()).unwrap();
    assert_eq!(run.threads[0].samples(), 2);
    let warnings: Vec<(Option<u64>, &str)> =
        run.warnings.iter().map(|w| (w.line, w.message.as_str())).collect();
    let want = format!(
        "line ignored: {} bytes long, longer than any cyclictest line (lines over 256 KiB are skipped unread)",
        MAX_LINE + 10
    );
    assert_eq!(warnings, [(Some(2), want.as_str()), (Some(4), want.as_str())]);
}
