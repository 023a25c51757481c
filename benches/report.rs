//! Benchmark for `rtbuild report` (not a test; prints figures, gates nothing).
//!
//! Generates two `-v` logs of at least `RTBUILD_BENCH_MB` MB each (default 1024) in a temp
//! folder, both 8 threads at 1 ms in cyclictest's `%8d:%8lu:%8ld` layout drained in 10-sample
//! batches: the long-standing bench log (latencies mostly 5-30 µs, a tail to ~100 µs, rare
//! spikes to ~3 ms), and a second realistic one (5-30 µs, one sample in 10 000 a spike of
//! 100 µs-5 ms). Then, in one run and side by side for each log:
//! - `rtbuild report --json`: throughput (MB/s) from the median wall time of
//!   `RTBUILD_BENCH_RUNS` runs (default 5), its CPU time (user + system: above the wall time
//!   when the samples are counted on several cores) and peak RSS;
//! - a straightforward awk max/histogram script (one run) and `wc -l` (median) on the same file;
//! - with `RTBUILD_BENCH_BASELINE=PATH` another rtbuild binary (an older build) too, and
//!   whether its JSON output is byte for byte the same;
//! - with `RTBUILD_BENCH_KEEP=DIR` the logs are written to DIR and kept;
//!
//! and `rtbuild report` on a `-h 1000` histogram and on a `--json` file (wall time in ms).
//! Last, when cyclictest can run here (root), a 20 s `rtbuild test --local` on the last CPU:
//! the helper calls rtbuild made while measuring, per second (each one short `sh` on the
//! target).
//!
//! Run: `cargo bench --bench report` (needs GNU time at /usr/bin/time for peak RSS).

// Printing figures is this program's whole job; the logs it measures are fixtures it writes.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use std::process::Command;

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

/// A latency model: the next sample in µs.
type Latency = fn(&mut Rng) -> u64;

/// The latency model of the second log: 5-30 µs, a spike of 100 µs-5 ms one time in 10 000.
fn latency_second(rng: &mut Rng) -> u64 {
    let r = rng.next();
    if r % 10_000 == 0 { 100 + (r >> 20) % 4900 } else { 5 + (r >> 24) % 26 }
}

fn generate_verbose(
    path: &Path,
    min_bytes: u64,
    seed: u64,
    latency: Latency,
) -> std::io::Result<u64> {
    let mut file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    file.write_all(b"Max CPUs = 8\nOnline CPUs = 8\n# /dev/cpu_dma_latency set to 0us\n")?;
    for t in 0..THREADS {
        writeln!(file, "Thread {t} Interval: 1000")?;
    }
    let mut rng = Rng(seed);
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
                push_padded(&mut line, latency(&mut rng), 8);
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

/// One timed run: wall and CPU (user + system) seconds, peak RSS in KB, stdout.
struct Timing {
    wall: f64,
    cpu: f64,
    rss: u64,
    stdout: String,
}

/// Runs `cmd` under GNU time.
fn timed(cmd: &mut Command) -> Timing {
    let mut wrapped = Command::new("/usr/bin/time");
    wrapped.args(["-f", "rtbuild-bench %e %M %U %S"]).arg(cmd.get_program()).args(cmd.get_args());
    let start = Instant::now();
    let out = match wrapped.output() {
        Ok(out) => out,
        Err(err) => {
            eprintln!("bench: {err}");
            std::process::exit(1);
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let fields: Vec<f64> = stderr
        .lines()
        .find_map(|l| l.strip_prefix("rtbuild-bench "))
        .map(|l| l.split_whitespace().filter_map(|f| f.parse().ok()).collect())
        .unwrap_or_default();
    let field = |i: usize| fields.get(i).copied().unwrap_or(0.0);
    Timing {
        wall,
        cpu: field(2) + field(3),
        rss: field(1) as u64,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

/// `runs` timed runs of `cmd`; the one with the median wall time.
fn median_of(runs: usize, cmd: &mut Command) -> Timing {
    let mut all: Vec<Timing> = (0..runs.max(1)).map(|_| timed(cmd)).collect();
    all.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    all.swap_remove(all.len() / 2)
}

const AWK: &str = r#"{ t = $1 + 0; v = $3 + 0; n[t]++; h[t, v]++; if (v > m[t]) m[t] = v }
END { for (t in n) print "thread", t, "samples", n[t], "max", m[t] }"#;

/// One figure row: name, MB/s, wall and CPU seconds, peak RSS in MB, and a note.
fn row(name: &str, size_mb: f64, t: &Timing, note: &str) {
    println!(
        "  {name:<22} {:8.1} MB/s  {:6.2} s (CPU {:5.2} s)  peak RSS {:6.1} MB  {note}",
        size_mb / t.wall,
        t.wall,
        t.cpu,
        t.rss as f64 / 1024.0
    );
}

/// Times everything on one `-v` log, side by side.
fn bench_log(rtbuild: &str, baseline: Option<&str>, path: &Path, size_mb: f64, runs: usize) {
    let report = |bin: &str| {
        let mut cmd = Command::new(bin);
        cmd.args(["--json", "report", "--threshold-us", "100000"]).arg(path);
        cmd
    };
    let new = median_of(runs, &mut report(rtbuild));
    let json: serde_json::Value = serde_json::from_str(&new.stdout).unwrap_or_default();
    let all = &json["inputs"][0]["scenarios"][0]["all"];
    row(
        "rtbuild report",
        size_mb,
        &new,
        &format!(
            "(samples {}, p99.99 {} µs, max {} µs)",
            all["samples"], all["p9999_us"], all["max_us"]
        ),
    );
    if let Some(old) = baseline {
        let before = median_of(runs, &mut report(old));
        let same =
            if before.stdout == new.stdout { "same JSON output" } else { "JSON OUTPUT DIFFERS" };
        row("baseline rtbuild", size_mb, &before, same);
        println!("  speed-up over baseline: {:.2}x", before.wall / new.wall);
    }
    let awk = timed(Command::new("awk").args(["-F:", AWK]).arg(path));
    let awk_max =
        awk.stdout.lines().filter_map(|l| l.split_whitespace().nth(5)?.parse::<u64>().ok()).max();
    row("awk max/histogram", size_mb, &awk, &format!("(max {awk_max:?} µs)"));
    let wc = median_of(runs, Command::new("wc").arg("-l").arg(path));
    row(
        "wc -l",
        size_mb,
        &wc,
        &format!("({} lines)", wc.stdout.split_whitespace().next().unwrap_or("?")),
    );
    println!("  rtbuild is {:.1}x awk and {:.2}x wc -l", awk.wall / new.wall, wc.wall / new.wall);
}

/// A short local `rtbuild test` on the last CPU: the helper calls while measuring per second.
fn helper_wakeups(rtbuild: &str, dir: &Path) {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let last = online.trim().rsplit([',', '-']).next().unwrap_or("0").to_string();
    if last == "0" {
        println!("helper wakeups: skipped (one CPU online: nothing to measure on)");
        return;
    }
    let out = dir.join("test-run");
    let run = Command::new(rtbuild)
        .args(["test", "--local", "--rt-cpus", &last, "--scenario", "idle", "--duration", "20s"])
        .args(["--histogram-us", "200000", "--out"])
        .arg(&out)
        .output();
    if let Err(err) = run {
        println!("helper wakeups: skipped ({err})");
        return;
    }
    let record: serde_json::Value = std::fs::read_to_string(out.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let own = &record["rtbuild_cpus"];
    match (own["helper_calls_measuring"].as_u64(), own["measuring_s"].as_f64()) {
        (Some(calls), Some(secs)) if secs > 0.0 => println!(
            "helper while measuring (plain log): {calls} calls in {secs:.1} s = {:.2}/s; rtbuild allowed on CPUs {}, helper on {}",
            calls as f64 / secs,
            own["rtbuild"],
            own["helper"]
        ),
        _ => println!(
            "helper wakeups: skipped (the test run did not measure; is this root with cyclictest installed?)"
        ),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let mb: u64 =
        std::env::var("RTBUILD_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(1024);
    let baseline = std::env::var("RTBUILD_BENCH_BASELINE").ok();
    // RTBUILD_BENCH_RUNS: timed runs of each rtbuild and wc command; the median is printed.
    let runs: usize =
        std::env::var("RTBUILD_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let rtbuild = env!("CARGO_BIN_EXE_rtbuild");
    let dir = tempfile::Builder::new().prefix("rtbuild-bench").tempdir().expect("temp dir");
    // RTBUILD_BENCH_KEEP=DIR writes the -v logs there and keeps them (to time other tools on).
    let keep = std::env::var_os("RTBUILD_BENCH_KEEP").map(std::path::PathBuf::from);
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average at start: {} (CPUs: {})",
        loadavg.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let logs: [(&str, u64, Latency); 2] = [
        (
            "bench -v log (8 threads, tail to 100 µs, spikes to 3 ms)",
            0x2545_f491_4f6c_dd1d,
            Rng::latency,
        ),
        (
            "second -v log (8 threads, 5-30 µs, 1 in 10 000 a spike)",
            0x9e37_79b9_7f4a_7c15,
            latency_second,
        ),
    ];
    for (i, (name, seed, latency)) in logs.into_iter().enumerate() {
        let path = keep.as_deref().unwrap_or(dir.path()).join(format!("verbose-{i}.log"));
        let t0 = Instant::now();
        let bytes = generate_verbose(&path, mb << 20, seed, latency).expect("write the -v log");
        let size_mb = bytes as f64 / (1 << 20) as f64;
        println!("{name}: {size_mb:.0} MB, written in {:.1} s", t0.elapsed().as_secs_f64());
        // Warm the page cache, so every reader below starts from the same place.
        let _ = timed(Command::new("wc").arg("-l").arg(&path));
        bench_log(rtbuild, baseline.as_deref(), &path, size_mb, runs);
        if keep.is_none() {
            let _ = std::fs::remove_file(&path);
        }
    }

    let hist = dir.path().join("hist.txt");
    generate_histogram(&hist).expect("write histogram");
    let json_file = dir.path().join("ct.json");
    generate_json(&json_file).expect("write json");
    for (name, path) in [("-h 1000 histogram, 8 threads", &hist), ("--json, 8 threads", &json_file)]
    {
        let t = median_of(
            runs,
            Command::new(rtbuild).args(["--json", "report", "--threshold-us", "100000"]).arg(path),
        );
        println!(
            "rtbuild report {name}: {:.0} ms, peak RSS {:.1} MB",
            t.wall * 1000.0,
            t.rss as f64 / 1024.0
        );
    }
    helper_wakeups(rtbuild, dir.path());
}
