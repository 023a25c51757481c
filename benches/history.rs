//! Benchmark for `rtbuild history` at a lab's scale (not a test; prints figures, gates nothing).
//!
//! Builds the history of 50 boards measured nightly for about five and a half years
//! (`RTBUILD_BENCH_HISTORY_RUNS` runs, default 100 000; each 5 scenarios × cyclictest and oslat ×
//! 10 CPUs = 100 result rows, so 10 million rows) through the store's own write path
//! (`rtbuild::bench_support::fill`: the INSERTs `history add` runs, 500 runs a transaction), in
//! an SQLite file and in a private PostgreSQL server (Debian's `initdb`/`pg_ctl` in a temporary
//! folder, run as the unprivileged `rtbuild-ci` when this is root, Unix socket only, as the
//! tests start it). Then, on each, times the questions a lab asks, each as the `rtbuild` process
//! a user runs (median of `RTBUILD_BENCH_RUNS` runs, default 3), with its peak RSS and the size
//! of what it printed or wrote:
//! - `history add` of one more result folder, and `history add --check` (the regression
//!   baseline query), each time a new run;
//! - `history list --machine M --since D` (the last year of one board);
//! - `history compare A B` of two runs, two bundles and two kernel releases;
//! - `history report --html --machine M` (one board's five-year trend page).
//!
//! `RTBUILD_BENCH_BACKENDS=sqlite` (or `postgres`) times one backend only;
//! `RTBUILD_BENCH_HISTORY_MACHINES` (default 50) sets the boards, so a small history can still
//! give one board five years (`RTBUILD_BENCH_HISTORY_RUNS=2000 RTBUILD_BENCH_HISTORY_MACHINES=1`).
//! `RTBUILD_BENCH_HISTORY_KEEP=DIR` keeps the databases in DIR (the SQLite file, the server's
//! data folder, which DIR must let the `rtbuild-ci` account reach) after the bench, and a later
//! run with the same runs and boards times them again without filling them anew (the fill of
//! 100 000 runs takes 7 to 25 minutes here); each run adds its `history add` runs to board-00.
//! Every row states the 1-minute load average when it was taken.
//!
//! Run: `cargo bench --features bench-support --bench history` (needs GNU time at
//! /usr/bin/time for peak RSS, and `.ci/setup`'s postgresql for the server).

// Printing figures is this program's whole job; the result folders it adds are fixtures it writes.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rtbuild::bench_support::{Filled, Spec, describe, fill};

/// Where `.ci/setup`'s `postgresql` package puts the server binaries.
const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// The unprivileged account `.ci/setup` creates (PostgreSQL refuses to run as root).
const PG_USER: &str = "rtbuild-ci";

/// One timed run: wall seconds, peak RSS in KB, exit code, stdout bytes.
struct Timing {
    wall: f64,
    rss: u64,
    code: i32,
    stdout: usize,
}

/// Runs `cmd` under GNU time.
fn timed(cmd: &Command) -> Timing {
    let mut wrapped = Command::new("/usr/bin/time");
    wrapped.args(["-f", "rtbuild-bench %e %M"]).arg(cmd.get_program()).args(cmd.get_args());
    let start = Instant::now();
    let out = wrapped.output().unwrap_or_else(|err| {
        eprintln!("bench: /usr/bin/time: {err}");
        std::process::exit(1);
    });
    let wall = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss = stderr
        .lines()
        .find_map(|l| l.strip_prefix("rtbuild-bench "))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    // GNU time exits with the command's code.
    let code = out.status.code().unwrap_or(-1);
    if code > 1 {
        eprintln!(
            "bench: {:?} failed ({code}): {}",
            cmd.get_args().collect::<Vec<_>>(),
            stderr.trim()
        );
    }
    Timing { wall, rss, code, stdout: out.stdout.len() }
}

/// `runs` timed runs (`make` builds each run's command); the one with the median wall time,
/// and the slowest.
fn median_of(runs: usize, mut make: impl FnMut(usize) -> Command) -> (Timing, f64) {
    let mut all: Vec<Timing> = (0..runs.max(1)).map(|i| timed(&make(i))).collect();
    all.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    let slowest = all.last().map_or(0.0, |t| t.wall);
    (all.swap_remove(all.len() / 2), slowest)
}

fn row(name: &str, (t, slowest): &(Timing, f64), output: &str) {
    println!(
        "  {name:<44} {:7.0} ms (slowest {:5.0} ms)  peak RSS {:6.1} MB  exit {}  load {}  {output}",
        t.wall * 1000.0,
        slowest * 1000.0,
        t.rss as f64 / 1024.0,
        t.code,
        load_average(1),
    );
}

/// The first `n` load averages of /proc/loadavg, space-separated.
fn load_average(n: usize) -> String {
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    loadavg.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.2} MB", bytes as f64 / (1 << 20) as f64)
    } else {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    }
}

/// A result folder as `rtbuild test` writes it, of `machine`, started at `started`: one idle
/// scenario with a real cyclictest `--json` file.
fn result_folder(dir: &Path, name: &str, machine: &str, started: i64) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(folder.join("raw")).expect("result folder");
    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cyclictest-2.4-json-1thread-cpu1.json");
    std::fs::copy(data, folder.join("raw/idle.json")).expect("copy cyclictest output");
    let run = serde_json::json!({
        "machine": machine, "target": format!("ssh://root@{machine}"), "rt_cpus": "1",
        "housekeeping": "0", "threshold_us": 100, "started_unix": started, "state": "finished",
        "fingerprint": {
            "uname": "Linux board 6.6.60-rt45 #1 SMP PREEMPT_RT Tue Oct  1 00:00:00 UTC 2024 aarch64 GNU/Linux",
            "cmdline": "isolcpus=1 nohz_full=1", "isolated": "1", "nohz_full": "1", "realtime": true,
            "governors": ["policy0 performance"]
        },
        "scenarios": [{"name": "idle", "state": "done", "files": ["raw/idle.json"], "elapsed_s": 3600.0, "invalid_reasons": []}],
    });
    std::fs::write(folder.join("run.json"), run.to_string()).expect("run.json");
    folder
}

/// The private PostgreSQL server, stopped (by its PID) when dropped.
struct PgServer {
    /// The server's folder: a temporary one (removed when dropped), or a kept one.
    _temporary: Option<tempfile::TempDir>,
    dir: PathBuf,
    pid: u32,
}

impl PgServer {
    /// Starts the server on `kept` (its data folder made there unless it holds one), or in a
    /// temporary folder.
    fn start(kept: Option<&Path>) -> Result<PgServer, String> {
        if !Path::new(PG_BIN).join("initdb").is_file() {
            return Err(format!("{PG_BIN}/initdb is missing; run `bash .ci/setup`"));
        }
        let (temporary, dir) = match kept {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                (None, dir.to_path_buf())
            }
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("rtbuild-bench-pg")
                    .tempdir()
                    .map_err(|e| e.to_string())?;
                let dir = temp.path().to_path_buf();
                (Some(temp), dir)
            }
        };
        let root = rustix::process::geteuid().is_root();
        if root {
            let chown =
                Command::new("chown").arg(format!("{PG_USER}:{PG_USER}")).arg(&dir).status();
            if !chown.is_ok_and(|s| s.success()) {
                return Err(format!("cannot give {} to {PG_USER}", dir.display()));
            }
        }
        let as_user = |program: &str| {
            let mut cmd = Command::new("setpriv");
            if root {
                let (uid, gid) = ids(PG_USER).unwrap_or((65534, 65534));
                cmd.args([
                    format!("--reuid={uid}"),
                    format!("--regid={gid}"),
                    "--clear-groups".to_string(),
                ]);
            }
            cmd.arg(Path::new(PG_BIN).join(program))
                .env_clear()
                .env("LANG", "C.UTF-8")
                .current_dir(&dir);
            cmd
        };
        let data = dir.join("data");
        if !data.join("PG_VERSION").is_file() {
            let init = as_user("initdb")
                .arg("-D")
                .arg(&data)
                .args(["-U", PG_USER, "--auth=trust", "--locale=C", "-E", "UTF8", "-N"])
                .output()
                .map_err(|e| e.to_string())?;
            if !init.status.success() {
                return Err(format!("initdb: {}", String::from_utf8_lossy(&init.stderr)));
            }
        }
        // fsync off as in the tests (a throwaway server); everything else at Debian's defaults.
        let options = format!("-k {} -c listen_addresses='' -c fsync=off", dir.display());
        let started = as_user("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.join("server.log"))
            .args(["-w", "-t", "120", "-o", &options, "start"])
            .output()
            .map_err(|e| e.to_string())?;
        let pid = std::fs::read_to_string(data.join("postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
            .unwrap_or(0);
        let server = PgServer { _temporary: temporary, dir, pid };
        if !started.status.success() || pid == 0 {
            return Err(format!("pg_ctl start: {}", String::from_utf8_lossy(&started.stderr)));
        }
        Ok(server)
    }

    fn url(&self) -> String {
        format!("postgresql://{PG_USER}@/postgres?host={}", self.dir.display())
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.pid == 0 {
            return;
        }
        let _ = Command::new("kill").args(["-TERM", &self.pid.to_string()]).status();
        let start = Instant::now();
        while Path::new(&format!("/proc/{}", self.pid)).exists()
            && start.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The uid and gid of `user`, from /etc/passwd.
fn ids(user: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.first() == Some(&user))
            .then(|| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))?
    })
}

/// What a kept folder's fill mark holds for `spec`.
fn spec_line(spec: &Spec) -> String {
    format!("{} {} {}", spec.runs, spec.machines, spec.end_unix)
}

fn date(unix: i64) -> String {
    let out = Command::new("date").args(["-u", "-d", &format!("@{unix}"), "+%Y-%m-%d"]).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default()
}

/// Fills the database at `url` (unless `filled_mark` says an earlier run filled it for `spec`)
/// and times every question on it.
fn bench(name: &str, url: &str, spec: &Spec, runs: usize, dir: &Path, filled_mark: Option<&Path>) {
    println!("{name}:");
    let mark = spec_line(spec);
    let filled: Filled = if filled_mark
        .is_some_and(|m| std::fs::read_to_string(m).is_ok_and(|text| text == mark))
    {
        println!("  the history filled by an earlier run (RTBUILD_BENCH_HISTORY_KEEP)");
        describe(spec)
    } else {
        let t0 = Instant::now();
        let mut last_report = Instant::now();
        let filled = match fill(url, spec, &mut |done| {
            if last_report.elapsed() > Duration::from_secs(30) {
                eprintln!("  … {done} runs written ({:.0} s)", t0.elapsed().as_secs_f64());
                last_report = Instant::now();
            }
        }) {
            Ok(filled) => filled,
            Err(err) => {
                println!("  fill failed: {err}");
                return;
            }
        };
        let fill_s = t0.elapsed().as_secs_f64();
        println!(
            "  filled {} runs, {} result rows through Store::add_all in {:.0} s ({:.0} rows/s), load {}",
            filled.runs,
            filled.results,
            fill_s,
            filled.results as f64 / fill_s,
            load_average(3),
        );
        if let Some(m) = filled_mark {
            std::fs::write(m, &mark).expect("the kept folder is writable");
        }
        filled
    };
    let rtbuild = env!("CARGO_BIN_EXE_rtbuild");
    let history = |args: &[&str]| {
        let mut cmd = Command::new(rtbuild);
        cmd.arg("history").args(args).args(["--db", url]);
        cmd
    };
    // After the history's last night; a kept history gets new runs each time.
    let now = (spec.end_unix + 86_400).max(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
    );
    let add = median_of(runs, |i| {
        let folder =
            result_folder(dir, &format!("{name}-add-{i}"), &filled.machine, now + i as i64);
        let mut cmd = history(&["add"]);
        cmd.arg(folder);
        cmd
    });
    row("history add (one new run)", &add, "");
    let check = median_of(runs, |i| {
        let folder = result_folder(
            dir,
            &format!("{name}-check-{i}"),
            &filled.machine,
            now + 1000 + i as i64,
        );
        let mut cmd = history(&["add", "--check"]);
        cmd.arg(folder);
        cmd
    });
    row("history add --check (one new run)", &check, "");
    let since = date(spec.end_unix - 365 * 86_400);
    let list =
        median_of(runs, |_| history(&["list", "--machine", &filled.machine, "--since", &since]));
    let listed = list.0.stdout as u64;
    row(
        &format!("history list --machine {} --since {since}", filled.machine),
        &list,
        &format!("output {}", size(listed)),
    );
    let list_json = median_of(runs, |_| {
        let mut cmd = Command::new(rtbuild);
        cmd.args([
            "--json",
            "history",
            "list",
            "--machine",
            &filled.machine,
            "--since",
            &since,
            "--db",
            url,
        ]);
        cmd
    });
    let listed = list_json.0.stdout as u64;
    row("  the same, --json", &list_json, &format!("output {}", size(listed)));
    for (what, a, b) in [
        ("runs", &filled.run_a[..12], &filled.run_b[..12]),
        ("bundles", &filled.bundle_a[..12], &filled.bundle_b[..12]),
        ("kernel releases", filled.release_a.as_str(), filled.release_b.as_str()),
    ] {
        let compare = median_of(runs, |_| history(&["compare", a, b]));
        let out = compare.0.stdout as u64;
        row(&format!("history compare (two {what})"), &compare, &format!("output {}", size(out)));
    }
    let page = dir.join(format!("{name}-trend.html"));
    let page_arg = page.to_str().expect("the bench's temporary folder is UTF-8");
    // The page is `--html`'s value: it must follow the flag (the `--db` the helper appends
    // comes after it).
    let trend =
        median_of(runs, |_| history(&["report", "--machine", &filled.machine, "--html", page_arg]));
    let bytes = std::fs::metadata(&page).map_or(0, |m| m.len());
    row(
        &format!("history report --html --machine {}", filled.machine),
        &trend,
        &format!("page {}", size(bytes)),
    );
}

fn main() {
    let env_number = |name: &str, default: usize| {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let total = env_number("RTBUILD_BENCH_HISTORY_RUNS", 100_000);
    let runs = env_number("RTBUILD_BENCH_RUNS", 3);
    let backends =
        std::env::var("RTBUILD_BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".to_string());
    let mut end_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
        - 86_400;
    let machines = env_number("RTBUILD_BENCH_HISTORY_MACHINES", 50);
    let kept = std::env::var_os("RTBUILD_BENCH_HISTORY_KEEP").map(PathBuf::from);
    if let Some(kept) = &kept {
        std::fs::create_dir_all(kept).expect("RTBUILD_BENCH_HISTORY_KEEP names a folder");
        // A kept history keeps the nights it was filled with.
        let earlier = std::fs::read_to_string(kept.join("spec")).unwrap_or_default();
        let fields: Vec<i64> = earlier.split_whitespace().filter_map(|f| f.parse().ok()).collect();
        match fields[..] {
            [r, m, end] if r == total as i64 && m == machines as i64 => end_unix = end,
            _ => std::fs::write(kept.join("spec"), format!("{total} {machines} {end_unix}"))
                .expect("the kept folder is writable"),
        }
    }
    let spec = Spec { runs: total, machines, scenarios: 5, cpus: 10, chunk: 500, end_unix };
    println!(
        "load average at start: {} (CPUs: {}); {} runs of {} boards, {} result rows each",
        load_average(3),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        spec.runs,
        spec.machines,
        spec.scenarios * spec.cpus * 2
    );
    let dir = tempfile::Builder::new().prefix("rtbuild-bench-history").tempdir().expect("temp dir");
    let mark = |name: &str| kept.as_ref().map(|k| k.join(format!("{name}.filled")));
    if backends.split(',').any(|b| b == "sqlite") {
        let file = kept.as_deref().unwrap_or(dir.path()).join("history.sqlite");
        let url = format!("sqlite:{}", file.display());
        bench("sqlite", &url, &spec, runs, dir.path(), mark("sqlite").as_deref());
        let bytes = std::fs::metadata(&file).map_or(0, |m| m.len());
        println!("  database file {}", size(bytes));
    }
    if backends.split(',').any(|b| b == "postgres") {
        match PgServer::start(kept.as_ref().map(|k| k.join("pg")).as_deref()) {
            Ok(server) => bench(
                "postgres",
                &server.url(),
                &spec,
                runs,
                dir.path(),
                mark("postgres").as_deref(),
            ),
            Err(err) => println!("postgres: not measured ({err})"),
        }
    }
}
