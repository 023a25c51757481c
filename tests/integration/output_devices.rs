//! Issue 34 item 1: an output path that names a device. `report --junit /dev/null` run as root
//! renamed a temp file over the machine's `/dev/null` (and `/dev/full`), printing "Wrote",
//! exit 0. Every command that takes an output path is pointed at `/dev/null` here, and
//! `/dev/null` must still be the character device 1:3 afterwards. It runs as root in a private
//! mount namespace with its own `/dev` (a tmpfs holding a `mknod`'d `null` and `full`), so a
//! regression replaces that copy, never the machine's.

use std::path::Path;
use std::process::Command;

use crate::support::harness::{data, rtbuild_bin};

/// What the `/dev` of the namespace holds, made before any command runs. A fixed script: the
/// commands come from a file, one a line, arguments split at tabs.
const SCRIPT: &str = r#"set -eu
mount -t tmpfs -o mode=0755 rtbuild-test-dev /dev
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/full c 1 7
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
set +e
n=0
tab=$(printf '\t')
while IFS= read -r line; do
  n=$((n + 1))
  IFS=$tab; set -f; set -- $line; unset IFS; set +f
  timeout --kill-after=5 60 prlimit --as=1073741824 -- "$RTBUILD" "$@" \
    >"$OUT/$n.out" 2>"$OUT/$n.err" </dev/null
  echo $? >"$OUT/$n.rc"
  stat -c '%F %t:%T' /dev/null >"$OUT/$n.null"
  stat -c '%F %t:%T' /dev/full >"$OUT/$n.full"
done <"$LIST"
"#;

/// A one-scenario `rtbuild test` result folder (CPU 1: max 477 µs) for `history add`.
fn result_folder(dir: &Path) {
    std::fs::create_dir_all(dir.join("raw")).unwrap();
    std::fs::copy(data("cyclictest-2.4-json-1thread-cpu1.json"), dir.join("raw/idle.json"))
        .unwrap();
    let run = serde_json::json!({
        "machine": "rb3gen2-core-kit", "target": "ssh://root@rb3", "rt_cpus": "1",
        "housekeeping": "0", "threshold_us": 1000, "started_unix": 1_796_000_000u64,
        "state": "finished",
        "scenarios": [{"name": "idle", "state": "done", "files": ["raw/idle.json"], "elapsed_s": 60.0}],
    });
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
}

struct Outcome {
    args: Vec<String>,
    code: i32,
    stdout: String,
    stderr: String,
    null: String,
    full: String,
}

/// Runs each command (arguments) in one private namespace with its own `/dev`.
fn run_in_private_dev(dir: &Path, commands: &[Vec<String>]) -> Vec<Outcome> {
    assert!(
        rustix::process::geteuid().is_root(),
        "this test needs root (mknod and a private mount namespace); run it as the CI does"
    );
    let list = dir.join("commands.tsv");
    let text: String = commands.iter().map(|c| c.join("\t") + "\n").collect();
    std::fs::write(&list, text).unwrap();
    let out = dir.join("results");
    std::fs::create_dir_all(&out).unwrap();
    let status = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sh", "-c", SCRIPT])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("LANG", "C.UTF-8")
        .env("RTBUILD", rtbuild_bin())
        .env("OUT", &out)
        .env("LIST", &list)
        .current_dir(dir)
        .status()
        .expect("run unshare");
    assert!(status.success(), "the namespace could not be set up: {status}");
    let read = |n: usize, ext: &str| {
        std::fs::read_to_string(out.join(format!("{n}.{ext}")))
            .unwrap_or_else(|e| panic!("no {n}.{ext}: {e}"))
    };
    commands
        .iter()
        .enumerate()
        .map(|(i, args)| Outcome {
            args: args.clone(),
            code: read(i + 1, "rc").trim().parse().unwrap(),
            stdout: read(i + 1, "out"),
            stderr: read(i + 1, "err"),
            null: read(i + 1, "null").trim().to_string(),
            full: read(i + 1, "full").trim().to_string(),
        })
        .collect()
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

#[test]
fn no_command_replaces_dev_null_or_dev_full() {
    let dir = tempfile::Builder::new().prefix("rtbuild-devices").tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    result_folder(&dir.path().join("run"));
    std::fs::create_dir_all(dir.path().join("linux")).unwrap();
    let db = format!("sqlite:{}", d("history.sqlite"));
    let input = data("cyclictest-2.4-hist-h50-2threads.txt").display().to_string();
    let board = "rb3gen2-core-kit";
    let commands = [
        words(&["history", "add", &d("run"), "--db", &db]),
        words(&["report", &input, "--html", "/dev/null"]),
        words(&["report", &input, "--junit", "/dev/null"]),
        words(&["history", "report", "--html", "/dev/null", "--db", &db]),
        words(&[
            "lava",
            "--machine",
            board,
            "--bundle-url",
            "https://lab.example/b.tar.zst",
            "--out",
            "/dev/null",
        ]),
        words(&[
            "kconfig-check",
            "--kernel-src",
            &d("linux"),
            "--config",
            "CONFIG_PREEMPT_RT=y",
            "--out",
            "/dev/null",
        ]),
        words(&["generate", "--machine", board, "--out", "/dev/null"]),
        words(&["tune", "--machine", board, "--emit", "/dev/null"]),
        words(&["man", "--out-dir", "/dev/null"]),
        words(&["bundle", &d("run"), "--out", "/dev/null"]),
        // A device written into; rtbuild's own stdout through /dev/stdout.
        words(&["report", &input, "--junit", "/dev/full"]),
        words(&["report", &input, "--html", "/dev/stdout"]),
        words(&["report", &input, "--junit", "/dev/fd/1"]),
    ];
    let outcomes = run_in_private_dev(dir.path(), &commands);
    for o in &outcomes {
        let context =
            format!("rtbuild {}\nexit {}\nstderr: {}", o.args.join(" "), o.code, o.stderr);
        assert_eq!(o.null, "character special file 1:3", "/dev/null was replaced by {context}");
        assert_eq!(o.full, "character special file 1:7", "/dev/full was replaced by {context}");
        assert!(!matches!(o.code, 101 | 124 | 134 | 137), "crash or hang: {context}");
        let errors = o.stderr.lines().filter(|l| l.starts_with("error:")).count();
        assert!(
            errors == 0 || o.stderr.lines().last().is_some_and(|l| l.starts_with("error: ")),
            "{context}"
        );
        assert!(errors <= 1, "{context}");
    }
    let by = |i: usize| &outcomes[i];
    // The writes that go into /dev/null succeed (the verdict decides 0 or 1), say where.
    for i in [1, 2, 3, 4] {
        let o = by(i);
        assert!(matches!(o.code, 0 | 1), "rtbuild {}: {}", o.args.join(" "), o.stderr);
        assert!(o.stderr.contains("Wrote /dev/null"), "rtbuild {}: {}", o.args.join(" "), o.stderr);
    }
    // A folder flag given /dev/null is refused as input, one line.
    for i in [6, 7, 8, 9] {
        let o = by(i);
        assert_ne!(o.code, 0, "rtbuild {} accepted /dev/null as a folder", o.args.join(" "));
        let last = o.stderr.lines().last().unwrap_or_default();
        assert!(last.starts_with("error: "), "rtbuild {}: {}", o.args.join(" "), o.stderr);
    }
    // /dev/full: the write fails as a full disk, not as a permission problem.
    let full = by(10);
    assert_eq!(full.code, 1, "{}", full.stderr);
    assert!(
        full.stderr
            .trim_end()
            .ends_with("the disk is full (or over quota); free some space and run again")
            && full.stderr.starts_with("error: cannot write /dev/full: "),
        "{}",
        full.stderr
    );
    // /dev/stdout and /dev/fd/1 are rtbuild's stdout, here a regular file: the page lands in it.
    assert!(by(11).stdout.contains("<html"), "{}", by(11).stderr);
    assert!(by(12).stdout.contains("<testsuites"), "{}", by(12).stderr);
    assert_eq!(
        std::fs::metadata("/dev/null")
            .map(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_char_device()
            })
            .ok(),
        Some(true)
    );
}
