//! Issue 34 items 2, 3, 4, 10, 12, 13, 14 and 15, each through the binary under a time limit
//! and `prlimit --as` 1 GiB: a password that reached an error line, names that forged terminal
//! lines, lock values installed unchecked, a stored row that crashed or stalled `history`, the
//! kernel release taken from the host name, a runner cache that split a docker volume, reads
//! that took SQLite's write lock, and refusals that echoed 100 KB.

use std::path::{Path, PathBuf};

use crate::support::harness::{Test, data};
use crate::support::project::generated;

const SECS: u64 = 60;
const MIB: u64 = 1024;

/// `Test` for a hostile input: killed after 60 s, 1 GiB of address space.
fn bounded() -> Test {
    Test::new().within_secs(SECS).within_memory_mib(MIB)
}

/// A one-scenario `rtbuild test` result folder at `dir` (CPU 1: max 477 µs) whose run.json
/// carries `machine`, `scenario` and `fingerprint` as given.
fn result_folder(dir: &Path, machine: &str, scenario: &str, fingerprint: serde_json::Value) {
    std::fs::create_dir_all(dir.join("raw")).unwrap();
    std::fs::copy(data("cyclictest-2.4-json-1thread-cpu1.json"), dir.join("raw/s.json")).unwrap();
    let run = serde_json::json!({
        "machine": machine, "target": "ssh://root@rb3", "rt_cpus": "1", "housekeeping": "0",
        "threshold_us": 1000, "started_unix": 1_796_000_000u64, "state": "finished",
        "fingerprint": fingerprint,
        "scenarios": [{"name": scenario, "state": "done", "files": ["raw/s.json"], "elapsed_s": 60.0}],
    });
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
}

fn plain_fingerprint() -> serde_json::Value {
    serde_json::json!({"uname": "Linux rb3 6.6.52-rt43 #1 SMP PREEMPT_RT aarch64", "cmdline": "isolcpus=1"})
}

/// A history file with one run recorded from `run`, in a folder of its own.
struct History {
    dir: tempfile::TempDir,
}

impl History {
    fn new() -> History {
        History { dir: tempfile::Builder::new().prefix("rtbuild-hostile").tempdir().unwrap() }
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("history.sqlite")
    }

    fn url(&self) -> String {
        format!("sqlite:{}", self.file().display())
    }

    fn folder(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `history add` of `run`, a passing run: one line, its id (a digest rtbuild computes)
    /// written [ID].
    fn add(&self, run: &Path) {
        let id_redacted = |stderr: &str| match stderr.split_once("Recorded ") {
            Some((head, tail)) if tail.len() > 12 => format!("{head}Recorded [ID]{}", &tail[12..]),
            _ => stderr.to_string(),
        };
        bounded()
            .args(["history", "add"])
            .arg_path(run)
            .args(["--db", &self.url()])
            .run()
            .stderr_redacted_is(
                id_redacted,
                &format!("    Recorded [ID] PASS ({}) in {}\n", run.display(), self.url()),
            )
            .success();
    }

    fn sql(&self, statement: &str) {
        rusqlite::Connection::open(self.file()).unwrap().execute_batch(statement).unwrap();
    }
}

/// Item 2: `redact` cut the URL at the first `/` or `?` before it looked for `@`.
#[test]
fn a_postgres_password_holding_slash_or_question_mark_is_never_printed() {
    for (url, secret) in [
        ("postgres://lab:se/cr?et@127.0.0.1:1/rt", "se/cr?et"),
        ("postgres://lab:a?b/c@127.0.0.1:1/rt?sslmode=disable", "a?b/c"),
        ("postgresql://lab:x@y/z@127.0.0.1:1/rt", "x@y/z"),
    ] {
        let run = bounded().args(["history", "list", "--db", url]).run().code_is(2);
        let stderr = run.stderr();
        assert!(stderr.starts_with("error: cannot open the history database postgres"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        for part in [secret, &secret[1..secret.len() - 1]] {
            assert!(!stderr.contains(part), "the password `{secret}` shows in: {stderr}");
        }
        assert!(stderr.contains("lab:***@127.0.0.1:1/rt"), "{stderr}");
    }
}

/// Issue 34, the second probe: a password whose `@host` was left out, one in a `password=`
/// pair after a `@` in the query, and libpq's keyword form (`host=db password='a b'`, which
/// `--db` refuses) were printed whole in the error line.
#[test]
fn a_postgres_password_in_an_odd_url_or_the_keyword_form_is_never_printed() {
    for db in [
        "postgres://lab:hunter2",
        "postgres://lab:hunter2/rt",
        "postgres://127.0.0.1:1/rt?application_name=a@b&password=hunter2",
        "postgres://127.0.0.1:1/rt?p%61ssword=hunter2",
        "host=db user=u password=hunter2",
        "host=db password='a hunter2 b' user=u",
        "host=db password = hunter2",
    ] {
        let run = bounded().args(["history", "list", "--db", db]).run().code_is(2);
        let stderr = run.stderr();
        assert!(stderr.starts_with("error: "), "{db}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{db}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{db}: the password shows in {stderr}");
    }
}

/// Item 3: names from a result folder printed raw could forge a `PASS` line or send escapes.
#[test]
fn names_from_a_result_folder_cannot_forge_history_lines() {
    let history = History::new();
    let base = history.folder("base");
    result_folder(&base, "rb3\nPASS run 000000000000 (rb3): forged", "idle", plain_fingerprint());
    history.add(&base);
    let forged = history.folder("run\nPASS run 111111111111 (x): forged\u{1b}[2J");
    result_folder(
        &forged,
        "rb3\nPASS run 000000000000 (rb3): forged",
        "idle\r\u{1b}]0;x\u{7}",
        plain_fingerprint(),
    );
    let run = bounded()
        .args(["history", "add", "--check"])
        .arg_path(&forged)
        .args(["--db", &history.url()])
        .run();
    let (stdout, stderr) = (run.stdout(), run.stderr());
    assert!(matches!(run.code(), 0 | 1), "{stderr}");
    for text in [&stdout, &stderr] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(text.lines().all(|l| !l.trim_start().starts_with("PASS run 1")), "{text:?}");
        assert!(text.lines().all(|l| !l.trim_start().starts_with("PASS run 0")), "{text:?}");
    }
    assert!(stderr.contains("run\\nPASS run 111111111111 (x): forged\\u{1b}[2J"), "{stderr}");
    assert!(stdout.contains("(rb3\\nPASS run 000000000000 (rb3): forged)"), "{stdout}");
    // `report --history` prints the same verdict line.
    let run =
        bounded().args(["report"]).arg_path(&forged).args(["--history", &history.url()]).run();
    let stdout = run.stdout();
    assert!(matches!(run.code(), 0 | 1), "{stdout}");
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\r'), "{stdout:?}");
    assert!(stdout.lines().all(|l| !l.starts_with("PASS run 0")), "{stdout:?}");
}

/// Item 4: a full-form lock's `branch`/`url` were installed into the kas lock unchecked.
#[test]
fn a_lock_whose_branch_or_url_is_hostile_is_refused_before_anything_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    Test::new()
        .cwd(dir.path())
        .args(["generate", "--machine", "rb3gen2-core-kit"])
        .run()
        .ignore_stdout()
        .stderr_is(&generated(
            "rb3gen2-core-kit (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)",
            "rb3gen2-core-kit",
            &dir.path().join("rtbuild/rb3gen2-core-kit").display().to_string(),
            &[],
        ))
        .success();
    let installed = dir.path().join("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.lock.yml");
    let before = std::fs::read(&installed).ok();
    let sha = "d51c6e87a10c7c75a692ca86b71af9a818026ecb";
    let good_url = "https://github.com/qualcomm-linux/meta-qcom";
    for (branch, url, shown) in [
        (
            "\"${@os.system('touch${IFS}PWNED')}\"",
            good_url,
            "${@os.system(\\'touch${IFS}PWNED\\')}",
        ),
        ("\"--upload-pack=touch${IFS}PWNED\"", good_url, "--upload-pack=touch${IFS}PWNED"),
        ("\"main\\e[2J\"", good_url, "main\\u{1b}[2J"),
        ("main", "\"--upload-pack=touch${IFS}PWNED\"", "--upload-pack=touch${IFS}PWNED"),
        ("main", "\"ssh://-oProxyCommand=touch${IFS}PWNED/x\"", "ssh://-oProxyCommand"),
        ("main", "\"https://h/x$(id)\"", "https://h/x$(id)"),
    ] {
        let lock = format!(
            "repos:\n  meta-qcom:\n    branch: {branch}\n    commit: {sha}\n    url: {url}\n"
        );
        std::fs::write(dir.path().join("release.lock.yml"), lock).unwrap();
        let run = bounded()
            .cwd(dir.path())
            .args(["lock", "--machine", "rb3gen2-core-kit", "--install", "release.lock.yml"])
            .run()
            .code_is(2);
        let stderr = run.stderr();
        assert!(
            stderr.starts_with("error: lock file release.lock.yml has `") && stderr.contains(shown),
            "{branch} {url}: {stderr}"
        );
        assert!(stderr.trim_end().ends_with("or run `rtbuild lock` again"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert_eq!(
            std::fs::read(&installed).ok(),
            before,
            "a lock was installed for {branch} {url}"
        );
    }
    assert!(!dir.path().join("PWNED").exists());
}

/// Item 10: a non-ASCII digest panicked `history list` (byte slicing); a max of `inf` made
/// `history report --html` draw ~6.4e9 axis ticks.
#[test]
fn a_stored_row_with_a_non_ascii_digest_or_an_infinite_max_is_shown() {
    let history = History::new();
    let run = history.folder("run");
    result_folder(&run, "rb3gen2-core-kit", "idle", plain_fingerprint());
    history.add(&run);
    history.sql(
        "PRAGMA foreign_keys = OFF;
         UPDATE results SET run_digest = 'ééééééééééééé-digest', max_us = 9e999;
         UPDATE runs SET digest = 'ééééééééééééé-digest', bundle_digest = '€€€€€€€€€€€€€€€€';",
    );
    bounded()
        .args(["history", "list", "--db", &history.url()])
        .run()
        .stdout_contains("éééééééééééé  2026-11-30T00:53:20Z  rb3gen2-core-kit");
    let page = history.folder("trend.html");
    bounded()
        .args(["history", "report", "--html"])
        .arg_path(&page)
        .args(["--db", &history.url()])
        .run()
        .stderr_contains("Wrote ")
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg"), "a chart is drawn");
    assert!(html.len() < 1 << 20, "{} bytes", html.len());
}

/// Item 12: the third word of `uname -a` was recorded as the kernel release.
#[test]
fn the_kernel_release_is_run_jsons_not_a_word_of_uname() {
    let history = History::new();
    let run = history.folder("run");
    result_folder(
        &run,
        "rb3gen2-core-kit",
        "idle",
        serde_json::json!({
            "uname": "Linux lab rb3 6.6.52-rt43 #1 SMP PREEMPT_RT Tue Oct 1 2024 aarch64 GNU/Linux",
            "kernel_release": "6.6.52-rt43",
            "kernel_version": "#1 SMP PREEMPT_RT Tue Oct 1 2024",
        }),
    );
    history.add(&run);
    let list =
        bounded().args(["--json", "history", "list", "--db", &history.url()]).run().success();
    let json = list.json();
    assert_eq!(json["runs"][0]["kernel_release"], "6.6.52-rt43");
    assert_eq!(json["runs"][0]["kernel_version"], "#1 SMP PREEMPT_RT Tue Oct 1 2024");
}

/// Item 13: `--runner-cache /srv/c:/root` gave a four-field docker volume.
#[test]
fn a_runner_cache_outside_the_build_path_alphabet_is_refused_up_front() {
    for bad in ["/srv/c:/root", "/srv/${HOME}", "/srv/a b", "cache", "/srv/c\n"] {
        let run = bounded()
            .args(["ci", "--format", "github", "--machines", "iq-9075-evk"])
            .args(["--rtbuild-from", "crates", "--runner-cache", bad])
            .run()
            .code_is(2);
        let stderr = run.stderr();
        assert!(
            stderr.starts_with("error: bad --runner-cache `")
                && stderr.contains(
                    "expected an absolute folder whose path has only letters, digits and `-_./+@%,`"
                ),
            "{bad:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert_eq!(run.stdout(), "");
    }
    bounded()
        .args(["ci", "--format", "github", "--machines", "iq-9075-evk"])
        .args(["--rtbuild-from", "crates", "--runner-cache", "/srv/rtbuild-cache"])
        .run()
        .stdout_contains("/srv/rtbuild-cache:/srv/rtbuild-cache");
}

/// Item 14: every read took SQLite's write lock (waiting up to 120 s behind a writer, then
/// blaming a server), and a damaged or read-only file got the server hint.
#[test]
fn history_reads_take_no_write_lock_and_file_problems_say_what_they_are() {
    let history = History::new();
    let run = history.folder("run");
    result_folder(&run, "rb3gen2-core-kit", "idle", plain_fingerprint());
    history.add(&run);

    // A writer holds the write lock: reading goes on.
    let writer = rusqlite::Connection::open(history.file()).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE; UPDATE runs SET source = source").unwrap();
    let started = std::time::Instant::now();
    Test::new()
        .within_secs(20)
        .args(["history", "list", "--db", &history.url()])
        .run()
        .stdout_contains("rb3gen2-core-kit");
    Test::new()
        .within_secs(20)
        .args(["history", "report", "--html", "a.html", "--db", &history.url()])
        .run()
        .stderr_contains("Wrote ");
    assert!(started.elapsed().as_secs() < 20, "reads waited for the writer");
    writer.execute_batch("ROLLBACK").unwrap();
    drop(writer);

    // A read-only file (as the unprivileged test user: root may write anything): read, and
    // a write says how to get one.
    let shared = tempfile::Builder::new().prefix("rtbuild-ro").tempdir().unwrap();
    let file = shared.path().join("history.sqlite");
    std::fs::copy(history.file(), &file).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let url = format!("sqlite:{}", file.display());
    Test::new()
        .unprivileged()
        .within_secs(SECS)
        .args(["history", "list", "--db", &url])
        .run()
        .stdout_contains("rb3gen2-core-kit");
    let other = Test::new().unprivileged();
    let run_copy = other.path().join("run");
    result_folder(&run_copy, "rb3gen2-core-kit", "stress", plain_fingerprint());
    let denied = other.within_secs(SECS).args(["history", "add", "run", "--db", &url]).run();
    let stderr = denied.stderr();
    assert_ne!(denied.code(), 0, "{stderr}");
    assert!(
        stderr.contains("attempt to write a readonly database; you may only read it; recording a run needs write access"),
        "{stderr}"
    );
    assert!(!stderr.contains("server"), "{stderr}");

    // A damaged file.
    std::fs::write(history.file(), vec![0x5a; 8192]).unwrap();
    for args in [&["history", "list"][..], &["history", "add", run.to_str().unwrap()][..]] {
        let bad = bounded().args(args).args(["--db", &history.url()]).run().code_is(2);
        let stderr = bad.stderr();
        assert!(
            stderr.starts_with(&format!("error: cannot open the history database {}: file is not a database; the file is damaged or is no SQLite database; restore it from a backup, or move it away to start a new history", history.url())),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// Item 15: refusals echoed the whole value (a 100 KB `--machine` gave a 100 KB error line);
/// a 100 KB `--cmdline` was accepted though the kernel keeps 2,048 bytes.
#[test]
fn refusals_of_100_kb_values_are_short_and_a_long_cmdline_is_refused() {
    let long = "x".repeat(100_000);
    let cases: Vec<Vec<String>> = vec![
        vec!["generate".into(), "--machine".into(), long.clone()],
        vec![
            "generate".into(),
            "--machine".into(),
            "rb3gen2-core-kit".into(),
            "--config".into(),
            long.clone(),
        ],
        vec![
            "generate".into(),
            "--machine".into(),
            "rb3gen2-core-kit".into(),
            "--rt-cpus".into(),
            long.clone(),
        ],
        vec!["history".into(), "list".into(), "--db".into(), format!("mysql://{long}")],
        vec![
            "ci".into(),
            "--format".into(),
            "github".into(),
            "--rtbuild-from".into(),
            "crates".into(),
            "--machines".into(),
            long.clone(),
        ],
    ];
    for args in cases {
        let run = bounded().args(&args).run().code_is(2);
        let stderr = run.stderr();
        assert!(stderr.starts_with("error: "), "{}", &stderr[..stderr.len().min(300)]);
        assert_eq!(stderr.lines().count(), 1);
        assert!(stderr.len() < 2_000, "{} bytes for {}: {}", stderr.len(), args[0], &stderr[..300]);
        assert!(stderr.contains("characters left out]"), "{stderr}");
        assert!(run.stdout().is_empty());
    }
    let args: Vec<String> = (0..2_000).map(|i| format!("--cmdline=rtbuild.test{i}=1")).collect();
    let run = bounded()
        .args(["generate", "--machine", "rb3gen2-core-kit", "--out", "o"])
        .args(&args)
        .run()
        .code_is(2);
    let stderr = run.stderr();
    assert!(
        stderr.starts_with("error: the kernel command line rtbuild writes would be ")
            && stderr.trim_end().ends_with("more than the kernel's limit of 2048 (COMMAND_LINE_SIZE); pass fewer or shorter --cmdline arguments"),
        "{stderr}"
    );
    assert!(!run.path().join("o").exists(), "nothing is written");
    // One long argument is refused the same way.
    let run = bounded()
        .args(["generate", "--machine", "rb3gen2-core-kit", "--out", "o"])
        .args([format!("--cmdline=rtbuild.x={long}")])
        .run()
        .code_is(2);
    assert!(
        run.stderr().contains("more than the kernel's limit of 2048"),
        "{}",
        &run.stderr()[..300.min(run.stderr().len())]
    );
}

/// Issue 34, the second probe: absurd numbers were accepted (`--threshold-us 1e-320`, a
/// subnormal above 0; `--loops` past the C `int` cyclictest reads `-l` into, or running for
/// years at the interval). Each numeric flag of `test`, `report`, `lava`, `ci` and `history`
/// has a range, and a value outside it is refused in one line that names the range.
#[test]
fn every_numeric_flag_refuses_a_value_outside_its_range_in_one_line() {
    let lava =
        ["lava", "--machine", "rb3gen2-core-kit", "--bundle-url", "https://h.example/b.tar.gz"];
    let ci = ["ci", "--format", "gitlab", "--machines", "iq-9075-evk", "--rtbuild-from", "path:t"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["report", "r", "--threshold-us", "1e-320"], "from 0.001 (1 ns) to 1000000 (1 s)"),
        (vec!["report", "r", "--threshold-us", "1e-320"], "threshold 1e-320 µs"),
        (vec!["report", "r", "--threshold-us", "1000001"], "from 0.001 (1 ns) to 1000000 (1 s)"),
        (vec!["report", "r", "--threshold-us=-5"], "from 0.001 (1 ns) to 1000000 (1 s)"),
        (vec!["report", "r", "--noise-us", "1e-320"], "from 0.001 (1 ns) to 1000000 (1 s)"),
        (vec!["report", "r", "--noise-us", "1e300"], "noise limit 1e300 µs"),
        (
            vec!["report", "r", "--history", "sqlite:h.db", "--regression-pct", "1e9"],
            "--regression-pct",
        ),
        (
            vec!["history", "add", "r", "--db", "sqlite:h.db", "--threshold-us", "1e-320"],
            "from 0.001 (1 ns) to 1000000 (1 s)",
        ),
        (
            vec!["history", "add", "r", "--db", "sqlite:h.db", "--check", "--regression-pct=-1"],
            "--regression-pct",
        ),
        ([&lava[..], &["--threshold-us", "0"]].concat(), "1..=1000000"),
        ([&lava[..], &["--loops", "3000000000"]].concat(), "1..=2147483647"),
        (
            [&lava[..], &["--loops", "2000000000", "--interval-us", "10000"]].concat(),
            "--loops 2000000000 at 10000 µs runs 231 days, more than 30",
        ),
        ([&lava[..], &["--duration", "31d"]].concat(), "bad duration `31d`"),
        ([&lava[..], &["--interval-us", "10"]].concat(), "50..=1000000"),
        ([&lava[..], &["--noise-us", "0"]].concat(), "1..=1000000"),
        (vec!["test", "--local", "--rt-cpus", "1", "--loops", "99999999999"], "1..=2147483647"),
        (
            vec!["test", "--local", "--rt-cpus", "1", "--duration", "99999999999999999999d"],
            "bad duration",
        ),
        (vec!["test", "--local", "--rt-cpus", "1", "--max-us", "0"], "1..=1000000"),
        ([&ci[..], &["--lava", "--lava-duration", "31d"]].concat(), "bad duration `31d`"),
    ];
    for (args, want) in cases {
        let test = bounded();
        result_folder(&test.path().join("r"), "rb3", "idle", plain_fingerprint());
        let run = test.args(&args).run().code_is(2);
        let stderr = run.stderr();
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
        assert!(errors[0].contains(want), "{args:?}: want `{want}` in {stderr}");
        assert!(errors[0].len() < 400, "{args:?}: {stderr}");
        run.ignore_stdout();
    }
}

/// Issue 34, probe round 10: `tune`/`test --target ssh://<100 KB user>@h` tried ssh and then
/// printed a 100 KB `error:` line (exit 1): the target was echoed whole. A user or host longer
/// than Linux or DNS allows is refused as the URL is read, before anything echoes it.
#[test]
fn a_target_whose_user_or_host_is_too_long_is_refused_in_a_short_line() {
    let long = "a".repeat(100_000);
    for target in [format!("ssh://{long}@h"), format!("ssh://root@{long}:22")] {
        let part = if target.starts_with("ssh://root") { "host" } else { "user" };
        let limit = if part == "host" { 253 } else { 255 };
        let message = format!(
            "the target's {part} is 100000 characters long, more than a {part} can be ({limit}); \
             check the target URL"
        );
        for cmd in [&["tune", "--verify"][..], &["test"], &["verify"]] {
            bounded()
                .args(cmd)
                .args(["--machine", "rb3gen2-core-kit", "--target", &target])
                .args(["--target-timeout", "5"])
                .run()
                .usage_error(&message);
        }
    }
}

/// Issue 34, probe round 10: `--db postgres://…?sslmode=require` failed at the TLS handshake
/// with "check … that the server is running"; rtbuild speaks no TLS to PostgreSQL, so such a
/// URL is refused as it is read, saying so (password hidden).
#[test]
fn a_postgres_url_that_requires_tls_is_refused_saying_rtbuild_speaks_none() {
    for url in [
        "postgres://lab:hunter2@127.0.0.1:1/rt?sslmode=require",
        "postgresql://lab:hunter2@127.0.0.1:1/rt?connect_timeout=2&sslmode=require",
    ] {
        let shown = url.replace("hunter2", "***");
        bounded().args(["history", "list", "--db", url]).run().usage_error(&format!(
            "--db {shown}: it requires TLS (`sslmode=require`), which rtbuild does not speak to \
             PostgreSQL: drop `sslmode=require` and reach the server over a Unix socket or a \
             trusted network; pass `sqlite:PATH` or `postgres://USER@HOST/DB`"
        ));
    }
}
