//! Benchmark for `rtbuild image`'s own time against plain `kas build`, on a real warm BitBake
//! build (not a test; prints figures, gates nothing).
//!
//! What it runs, offline, as the unprivileged test user `rtbuild-ci` (BitBake refuses root):
//! 1. unpacks the upstream snapshot (`$RTBUILD_UPSTREAM`, else `../shared/upstream`: the real
//!    meta-qcom `wrynose`, openembedded-core and BitBake 2.18) into a temporary folder, and puts
//!    its `offline.yml` in the output folder, where kas reads local includes from;
//! 2. one cold `rtbuild image --json --machine iq-8275-evk --distro nodistro --include
//!    rtbuild/iq-8275-evk/offline.yml --target linux-qcom-rt --task listtasks`: kas clones the
//!    layers, BitBake parses every recipe and runs `linux-qcom-rt:do_listtasks`, a real task that
//!    needs no sources (a partial build: nothing is verified);
//! 3. one more `rtbuild image` run, printed but not counted: BitBake 2.18 keys its parse cache
//!    on a configuration hash that changes once its codeparser cache (`build/cache/
//!    bb_codeparser.dat`, written by the first parse) exists, so the second run parses every
//!    recipe again (with plain kas too);
//! 4. `RTBUILD_BENCH_RUNS` (default 5) warm rounds on the same work folder, alternating: plain
//!    `kas build` with the argv, folder and environment `rtbuild image --dry-run --json` prints
//!    (the files rtbuild generated), then the same `rtbuild image --json`.
//!
//! Per round and as min/median it prints: kas's wall time, rtbuild's wall time, rtbuild's
//! `rtbuild_overhead_s` (its time outside the kas processes), and rtbuild's wall time minus
//! kas's (what a user waits for beyond plain kas, including any `kas checkout` of meta-qcom
//! rtbuild runs before planning; on a warm run it reads the checkout as it is). Plain kas
//! returns while its BitBake server is still shutting down (1-2 s, saving its caches; the next
//! build waits for it), and rtbuild waits for that server so no process outlives the build: so
//! the bench also times plain kas until that server has exited, and rtbuild against that. Each
//! warm run says whether BitBake loaded its parse cache ("Loaded N entries from dependency
//! cache"); a round that did not is marked.
//!
//! Needs root (to switch to rtbuild-ci), the rtbuild-ci user (`.ci/setup` creates it), the venv
//! with kas 5.5 (`$RTBUILD_VENV`, else `.venv`), `setpriv` and the host tools oe-core's
//! HOSTTOOLS names; when one is missing it says so on stderr and exits 2 (no silent skip).
//!
//! Run: `cargo bench --bench image` (about 4 min cold plus 20 s per round on 2 idle cores).

// Printing figures is this program's whole job.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

const USER: &str = "rtbuild-ci";
const MACHINE: &str = "iq-8275-evk";

/// Stops the bench with a reason on stderr.
fn fail(why: impl std::fmt::Display) -> ! {
    eprintln!("error: bench image cannot run: {why}");
    std::process::exit(2);
}

/// The uid and gid of [`USER`].
fn test_user() -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id").args([flag, USER]).output();
        match out {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .unwrap_or_else(|_| fail(format!("`id {flag} {USER}` printed no number"))),
            _ => fail(format!("no user {USER}; run `bash .ci/setup` (it creates it)")),
        }
    };
    (id("-u"), id("-g"))
}

struct Bench {
    uid: u32,
    gid: u32,
    venv: PathBuf,
    rtbuild: PathBuf,
    premirrors: String,
    home: PathBuf,
    proj: PathBuf,
}

impl Bench {
    /// `program` as the test user, with a clean environment.
    fn as_user(&self, program: &Path) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .arg("--clear-groups")
            .arg(program)
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    self.venv.join("bin").display()
                ),
            )
            .env("LANG", "en_US.UTF-8")
            .env("HOME", &self.home)
            .env("KAS_PREMIRRORS", &self.premirrors);
        cmd
    }

    /// `rtbuild image` with `extra` (`--json`, `--dry-run`).
    fn image(&self, extra: &[&str]) -> Command {
        let mut cmd = self.as_user(&self.rtbuild);
        let offline = format!("rtbuild/{MACHINE}/offline.yml");
        cmd.args(["image", "--plain", "--machine", MACHINE, "--distro", "nodistro"])
            .args(["--include", &offline, "--target", "linux-qcom-rt", "--task", "listtasks"])
            .args(extra)
            .current_dir(&self.proj);
        cmd
    }
}

/// Runs `cmd`, returning its wall time and output.
fn timed(cmd: &mut Command) -> (f64, Output) {
    let t0 = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| fail(format!("cannot start {cmd:?}: {e}")));
    (t0.elapsed().as_secs_f64(), out)
}

fn check(what: &str, out: &Output) {
    if !out.status.success() {
        eprintln!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("error: {what} failed: {}", out.status);
        std::process::exit(1);
    }
}

/// Whether a BitBake server of the build folder `build` still runs (plain kas returns when its
/// BitBake client ends; the server shuts down a second or two later, saving its caches, and
/// holds the build folder meanwhile; rtbuild waits for it so no process outlives the build).
fn server_running(build: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.filter_map(Result::ok).any(|e| {
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline);
        text.contains("bitbake-server") && text.contains(build)
    })
}

/// The entries BitBake loaded from its parse cache, from its output.
fn cached_entries(text: &str) -> Option<u64> {
    text.lines().rev().find_map(|line| {
        let (before, _) = line.split_once(" entries from dependency cache")?;
        before.rsplit(' ').next()?.parse().ok()
    })
}

/// One `rtbuild image --json` run: wall time, `rtbuild_overhead_s`, kas's own seconds, parse
/// cache entries BitBake loaded.
fn rtbuild_run(bench: &Bench, log: &Path) -> (f64, f64, f64, Option<u64>) {
    let (wall, out) = timed(&mut bench.image(&["--json"]));
    check("rtbuild image --json", &out);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| fail(format!("rtbuild image --json printed no JSON: {e}")));
    let overhead = json["rtbuild_overhead_s"]
        .as_f64()
        .unwrap_or_else(|| fail(format!("no rtbuild_overhead_s in {json}")));
    let kas = json["duration_secs"].as_f64().unwrap_or(f64::NAN);
    let text = std::fs::read_to_string(log).unwrap_or_default();
    (wall, overhead, kas, cached_entries(&text))
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

fn cache_note(entries: Option<u64>) -> String {
    match entries {
        Some(n) if n > 0 => format!("parse cache: {n}"),
        _ => "PARSED AGAIN".to_string(),
    }
}

fn main() {
    let runs: usize =
        std::env::var("RTBUILD_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    if !rustix::process::geteuid().is_root() {
        fail(format!(
            "run it as root: it unpacks and builds as the user {USER} (BitBake refuses root)"
        ));
    }
    let (uid, gid) = test_user();
    let project = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let venv = std::env::var_os("RTBUILD_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| project.join(".venv"));
    if !venv.join("bin/kas").is_file() {
        fail(format!(
            "no kas in the venv {}; run `bash .ci/setup` or set RTBUILD_VENV",
            venv.display()
        ));
    }
    let snapshot = std::env::var_os("RTBUILD_UPSTREAM")
        .map(PathBuf::from)
        .unwrap_or_else(|| project.join("../shared/upstream"));
    if !snapshot.join("unpack.sh").is_file() {
        fail(format!(
            "no upstream snapshot (unpack.sh) in {}; set RTBUILD_UPSTREAM",
            snapshot.display()
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("rtbuild-bench-image")
        .tempdir()
        .unwrap_or_else(|e| fail(format!("no temporary folder: {e}")));
    let chown = |path: &Path| {
        let status = Command::new("chown").arg("-R").arg(format!("{uid}:{gid}")).arg(path).status();
        if !status.is_ok_and(|s| s.success()) {
            fail(format!("cannot give {} to {USER}", path.display()));
        }
    };
    chown(dir.path());
    let upstream = dir.path().join("upstream");
    let mut bench = Bench {
        uid,
        gid,
        venv,
        rtbuild: PathBuf::from(env!("CARGO_BIN_EXE_rtbuild")),
        premirrors: String::new(),
        home: dir.path().to_path_buf(),
        proj: dir.path().join("proj"),
    };
    let (_, out) =
        timed(bench.as_user(Path::new("bash")).arg(snapshot.join("unpack.sh")).arg(&upstream));
    check("unpack.sh", &out);
    let env = std::fs::read_to_string(upstream.join("env")).unwrap_or_default();
    bench.premirrors = env
        .split_once("KAS_PREMIRRORS=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(value, _)| value.to_string())
        .unwrap_or_else(|| {
            fail(format!("no KAS_PREMIRRORS in {}", upstream.join("env").display()))
        });
    let out_dir = bench.proj.join("rtbuild").join(MACHINE);
    std::fs::create_dir_all(&out_dir).unwrap_or_else(|e| fail(e));
    std::fs::copy(upstream.join("offline.yml"), out_dir.join("offline.yml"))
        .unwrap_or_else(|e| fail(e));
    chown(&bench.proj);
    let log = out_dir.join("build/rtbuild-image.log");

    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = |text: &str| text.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    println!(
        "bench image: {MACHINE}, nodistro, linux-qcom-rt:do_listtasks, real kas + BitBake 2.18, \
         offline, as {USER}; {runs} warm rounds; rtbuild {}",
        bench.rtbuild.display()
    );
    println!("load average at start: {}", load(&loadavg));

    let (wall, overhead, kas, _) = rtbuild_run(&bench, &log);
    println!("cold   rtbuild {wall:7.2} s  (kas {kas:7.2} s, outside kas {overhead:.3} s)");
    let (wall, overhead, kas, entries) = rtbuild_run(&bench, &log);
    println!(
        "second rtbuild {wall:7.2} s  (kas {kas:7.2} s, outside kas {overhead:.3} s; {}; not counted)",
        cache_note(entries)
    );

    // The plain kas run: exactly what rtbuild would run.
    let (_, out) = timed(&mut bench.image(&["--dry-run", "--json"]));
    check("rtbuild image --dry-run --json", &out);
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| fail(format!("rtbuild image --dry-run --json printed no JSON: {e}")));
    let argv: Vec<String> = plan["command"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let Some((program, args)) = argv.split_first() else { fail(format!("no command in {plan}")) };
    let kas_cmd = || {
        let mut cmd = bench.as_user(Path::new(program));
        cmd.args(args).current_dir(plan["cwd"].as_str().unwrap_or("/"));
        for pair in plan["env"].as_array().into_iter().flatten() {
            if let (Some(k), Some(v)) = (pair[0].as_str(), pair[1].as_str()) {
                cmd.env(k, v);
            }
        }
        cmd
    };
    let build = plan["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|pair| pair[0] == "KAS_BUILD_DIR")
        .and_then(|pair| pair[1].as_str())
        .unwrap_or_else(|| fail(format!("no KAS_BUILD_DIR in {plan}")))
        .to_string();
    println!("plain kas: {}", argv.join(" "));
    println!(
        "kas: until kas exits; +server: until its BitBake server has exited too (rtbuild waits for it)"
    );
    println!(
        "{:>5} {:>9} {:>9} {:>10} {:>11} {:>9} {:>15}  cache (kas / rtbuild)",
        "round", "kas", "+server", "rtbuild", "outside kas", "rt - kas", "rt - (+server)"
    );
    let mut figures: [Vec<f64>; 6] = Default::default();
    for round in 1..=runs {
        let started = Instant::now();
        let (kas_wall, out) = timed(&mut kas_cmd());
        check("plain kas build", &out);
        while server_running(&build) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let served = started.elapsed().as_secs_f64();
        let kas_entries = cached_entries(&String::from_utf8_lossy(&out.stderr));
        let (rt_wall, overhead, _, rt_entries) = rtbuild_run(&bench, &log);
        let row = [kas_wall, served, rt_wall, overhead, rt_wall - kas_wall, rt_wall - served];
        println!(
            "{round:>5} {:>7.2} s {:>7.2} s {:>8.2} s {:>9.3} s {:>7.2} s {:>13.2} s  {} / {}",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            row[5],
            cache_note(kas_entries),
            cache_note(rt_entries)
        );
        for (column, value) in figures.iter_mut().zip(row) {
            column.push(value);
        }
    }
    for (name, f) in [("min", min as fn(&[f64]) -> f64), ("median", median)] {
        let v: Vec<f64> = figures.iter().map(|column| f(column)).collect();
        println!(
            "{name:>6} {:>6.2} s {:>7.2} s {:>8.2} s {:>9.3} s {:>7.2} s {:>13.2} s",
            v[0], v[1], v[2], v[3], v[4], v[5]
        );
    }
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at end: {}", load(&loadavg));
}
