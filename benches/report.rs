//! Benchmark for `rtbuild report` (not a test; prints figures, gates nothing).
//!
//! Generates a realistic `-v` log (8 threads, 1 ms interval, cyclictest's `%8d:%8lu:%8ld` lines
//! drained in 10 ms batches, latencies around 5-30 µs with rare spikes up to a few ms) of at
//! least `RTBUILD_BENCH_MB` MB (default 1024) in a temp folder, then times, in one run:
//! - `rtbuild report --json` on it: throughput (MB/s) and peak RSS;
//! - a straightforward awk max/histogram script on the same file: the same figures;
//! - `rtbuild report` on a `-h 1000` histogram and on a `--json` file: wall time in ms.
//!
//! Run: `cargo bench --bench report` (needs GNU time at /usr/bin/time for peak RSS).

// Printing figures is this program's whole job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use rtbuild::runner::{Cmd, output_unchecked};

const THREADS: u64 = 8;
const BATCH: u64 = 10;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A cyclictest-like latency in µs: mostly 5-30, a tail to ~100, rare spikes to ~3 ms.
    fn latency(&mut self) -> u64 {
        let r = self.next();
        match r % 100_000 {
            0 => 200 + (r >> 20) % 3000,
            1..=200 => 40 + (r >> 20) % 80,
            _ => 5 + (r >> 20) % 14 + (r >> 40) % 12,
        }
    }
}

/// Right-aligns `value` in `width` columns, like `%8lu`.
fn push_padded(out: &mut Vec<u8>, value: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut n = value;
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        n /= 10;
        len += 1;
        if n == 0 {
            break;
        }
    }
    out.extend(std::iter::repeat_n(b' ', width.saturating_sub(len)));
    out.extend(digits[..len].iter().rev());
}

fn generate_verbose(path: &Path, min_bytes: u64) -> std::io::Result<u64> {
    let mut file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    file.write_all(b"Max CPUs = 8\nOnline CPUs = 8\n# /dev/cpu_dma_latency set to 0us\n")?;
    for t in 0..THREADS {
        writeln!(file, "Thread {t} Interval: 1000")?;
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut written = 0u64;
    let mut cycle = 0u64;
    let mut line = Vec::with_capacity(64 * 1024);
    while written < min_bytes {
        line.clear();
        for t in 0..THREADS {
            for c in cycle..cycle + BATCH {
                push_padded(&mut line, t, 8);
                line.push(b':');
                push_padded(&mut line, c, 8);
                line.push(b':');
                push_padded(&mut line, rng.latency(), 8);
                line.push(b'\n');
            }
        }
        cycle += BATCH;
        file.write_all(&line)?;
        written += line.len() as u64;
    }
    file.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

fn generate_histogram(path: &Path) -> std::io::Result<()> {
    let mut rng = Rng(42);
    let mut counts = vec![[0u64; THREADS as usize]; 1000];
    let mut overflows = [0u64; THREADS as usize];
    let mut max = [0u64; THREADS as usize];
    for _ in 0..2_000_000 {
        for t in 0..THREADS as usize {
            let v = rng.latency();
            max[t] = max[t].max(v);
            match counts.get_mut(v as usize) {
                Some(row) => row[t] += 1,
                None => overflows[t] += 1,
            }
        }
    }
    let mut out = String::from("# Histogram\n");
    for (i, row) in counts.iter().enumerate() {
        out.push_str(&format!("{i:06}"));
        for (t, c) in row.iter().enumerate() {
            out.push_str(&format!("{}{c:06}", if t == 0 { ' ' } else { '\t' }));
        }
        out.push('\n');
    }
    let join = |v: &[u64], w: usize| v.iter().map(|x| format!(" {x:0w$}")).collect::<String>();
    let totals: Vec<u64> =
        (0..THREADS as usize).map(|t| counts.iter().map(|r| r[t]).sum()).collect();
    out.push_str(&format!("# Total:{}\n# Min Latencies:{}\n", join(&totals, 9), join(&[5; 8], 5)));
    out.push_str(&format!(
        "# Avg Latencies:{}\n# Max Latencies:{}\n",
        join(&[17; 8], 5),
        join(&max, 5)
    ));
    out.push_str(&format!(
        "# Histogram Overflows:{}\n# Histogram Overflow at cycle number:\n",
        join(&overflows, 5)
    ));
    std::fs::write(path, out)
}

fn generate_json(path: &Path) -> std::io::Result<()> {
    let mut rng = Rng(7);
    let mut threads = serde_json::Map::new();
    for t in 0..THREADS {
        let mut hist = std::collections::BTreeMap::<u64, u64>::new();
        let mut max = 0;
        for _ in 0..2_000_000 {
            let v = rng.latency();
            max = max.max(v);
            *hist.entry(v).or_default() += 1;
        }
        let hist: serde_json::Map<String, serde_json::Value> =
            hist.into_iter().map(|(k, v)| (k.to_string(), v.into())).collect();
        threads.insert(t.to_string(), serde_json::json!({"histogram": hist, "cycles": 2_000_000, "min": 5, "max": max, "avg": 17.0, "cpu": t, "node": 0}));
    }
    let doc = serde_json::json!({"file_version": 1, "cmdline:": "cyclictest -m -p 99 -t 8 -i 1000 -q -h 5000 --json=x", "rt_test_version:": "2.40", "num_threads": 8, "resolution_in_ns": 0, "thread": threads});
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap_or_default())
}

/// Runs `cmd` under GNU time; returns (seconds, peak RSS in KB, stdout).
fn timed(cmd: Cmd) -> (f64, u64, String) {
    let argv = cmd.argv();
    let wrapped = Cmd::new("/usr/bin/time").args(["-f", "rtbuild-bench %e %M"]).args(argv);
    let start = Instant::now();
    let out = match output_unchecked(&wrapped) {
        Ok(out) => out,
        Err(err) => {
            eprintln!("bench: {err}");
            std::process::exit(1);
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss = stderr
        .lines()
        .find_map(|l| l.strip_prefix("rtbuild-bench "))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse().ok())
        .unwrap_or(0);
    (wall, rss, String::from_utf8_lossy(&out.stdout).into_owned())
}

const AWK: &str = r#"{ t = $1 + 0; v = $3 + 0; n[t]++; h[t, v]++; if (v > m[t]) m[t] = v }
END { for (t in n) print "thread", t, "samples", n[t], "max", m[t] }"#;

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let mb: u64 =
        std::env::var("RTBUILD_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(1024);
    let rtbuild = env!("CARGO_BIN_EXE_rtbuild");
    let dir = tempfile::Builder::new().prefix("rtbuild-bench").tempdir().expect("temp dir");
    let verbose = dir.path().join("verbose.log");
    let t0 = Instant::now();
    let bytes = generate_verbose(&verbose, mb << 20).expect("write the -v log");
    let size_mb = bytes as f64 / (1 << 20) as f64;
    println!(
        "generated {size_mb:.0} MB -v log ({} threads, 1 ms) in {:.1} s",
        THREADS,
        t0.elapsed().as_secs_f64()
    );

    let report =
        Cmd::new(rtbuild).args(["--json", "report", "--threshold-us", "100000"]).arg(&verbose);
    let (secs, rss, out) = timed(report);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    let samples = &json["inputs"][0]["scenarios"][0]["all"]["samples"];
    let max = &json["inputs"][0]["scenarios"][0]["all"]["max_us"];
    println!(
        "rtbuild report  -v: {:8.1} MB/s  {secs:6.2} s  peak RSS {:6.1} MB  (samples {samples}, max {max} µs)",
        size_mb / secs,
        rss as f64 / 1024.0
    );

    let (awk_secs, awk_rss, awk_out) = timed(Cmd::new("awk").args(["-F:", AWK]).arg(&verbose));
    let awk_max =
        awk_out.lines().filter_map(|l| l.split_whitespace().nth(5)?.parse::<u64>().ok()).max();
    println!(
        "awk max/histogram: {:8.1} MB/s  {awk_secs:6.2} s  peak RSS {:6.1} MB  (max {awk_max:?} µs)",
        size_mb / awk_secs,
        awk_rss as f64 / 1024.0
    );
    println!("speed-up: {:.1}x awk", awk_secs / secs);

    let hist = dir.path().join("hist.txt");
    generate_histogram(&hist).expect("write histogram");
    let json_file = dir.path().join("ct.json");
    generate_json(&json_file).expect("write json");
    for (name, path) in [("-h 1000 histogram, 8 threads", &hist), ("--json, 8 threads", &json_file)]
    {
        let (secs, rss, _) = timed(
            Cmd::new(rtbuild).args(["--json", "report", "--threshold-us", "100000"]).arg(path),
        );
        println!(
            "rtbuild report {name}: {:.0} ms, peak RSS {:.1} MB",
            secs * 1000.0,
            rss as f64 / 1024.0
        );
    }
}
