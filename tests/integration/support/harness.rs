//! The integration-test harness: runs the real `rtbuild` binary in a fresh temporary folder with
//! a controlled environment, and checks exit code, stdout and stderr together. A run is strict
//! (see [`Run`]): output a test did not state fails it.

#![allow(dead_code)]

use std::cell::Cell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The rtbuild binary under test.
pub(crate) fn rtbuild_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rtbuild"))
}

/// The project root (for `machines/`, `layers/`, `tests/data/`).
pub(crate) fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file under `tests/data/`.
pub(crate) fn data(name: &str) -> PathBuf {
    project_root().join("tests/data").join(name)
}

/// Validates the JUnit file at `path` with the real xmllint against the Jenkins xunit plugin's
/// `junit-10.xsd` (shipped in `tests/data/`): what Jenkins accepts, not what looks right.
pub(crate) fn assert_junit_valid(path: &Path) {
    let out = Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(data("junit-10.xsd"))
        .arg(path)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run xmllint ({e}); .ci/setup installs it (Debian package libxml2-utils)")
        });
    assert!(
        out.status.success(),
        "{} fails junit-10.xsd:\n{}\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(path).unwrap_or_default()
    );
}

/// The Python venv `.ci/setup` creates (kas 5.5, bitbake-setup 2.19.0): `$RTBUILD_VENV`, else
/// `<project>/.venv`. Tests that need it fail with a clear message when it is missing.
pub(crate) fn venv() -> PathBuf {
    let venv = std::env::var_os("RTBUILD_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join(".venv"));
    assert!(
        venv.join("bin/kas").is_file(),
        "the test venv {} has no kas; run `bash .ci/setup` (or set RTBUILD_VENV)",
        venv.display()
    );
    venv
}

/// One run of rtbuild, built up and then checked.
#[must_use]
pub(crate) struct Test {
    dir: tempfile::TempDir,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    path_prepend: Vec<PathBuf>,
    cwd: Option<PathBuf>,
    user: Option<Unprivileged>,
    limit_secs: Option<u64>,
    limit_mib: Option<u64>,
}

/// The unprivileged account `.ci/setup` creates for tests that must not run as root (BitBake's
/// sanity check refuses root, and so does `rtbuild image`).
pub(crate) const TEST_USER: &str = "rtbuild-ci";

/// Uid and gid of [`TEST_USER`]; fails the test loudly when the account is missing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unprivileged {
    pub uid: u32,
    pub gid: u32,
}

impl Unprivileged {
    pub(crate) fn get() -> Unprivileged {
        let id = |flag: &str| -> u32 {
            let out = Command::new("id").args([flag, TEST_USER]).output().expect("run id");
            assert!(
                out.status.success(),
                "the test user {TEST_USER} does not exist; run `bash .ci/setup` (it creates it)"
            );
            String::from_utf8_lossy(&out.stdout).trim().parse().expect("numeric id")
        };
        Unprivileged { uid: id("-u"), gid: id("-g") }
    }

    /// Gives `path` and everything below it to the test user.
    pub(crate) fn own(&self, path: &Path) {
        let status = Command::new("chown")
            .arg("-R")
            .arg(format!("{}:{}", self.uid, self.gid))
            .arg(path)
            .status()
            .expect("run chown");
        assert!(status.success(), "chown {} failed", path.display());
    }

    /// `setpriv` arguments that run the next program as the test user.
    pub(crate) fn setpriv_args(&self) -> Vec<String> {
        vec![
            format!("--reuid={}", self.uid),
            format!("--regid={}", self.gid),
            "--clear-groups".to_string(),
        ]
    }
}

impl Test {
    pub(crate) fn new() -> Test {
        Test {
            dir: tempfile::Builder::new().prefix("rtbuild-test").tempdir().expect("tempdir"),
            args: Vec::new(),
            env: Vec::new(),
            path_prepend: Vec::new(),
            cwd: None,
            user: None,
            limit_secs: None,
            limit_mib: None,
        }
    }

    /// Runs rtbuild as the unprivileged [`TEST_USER`] (through `setpriv`), owning the test folder,
    /// as a real build must run.
    pub(crate) fn unprivileged(mut self) -> Test {
        self.user = Some(Unprivileged::get());
        self
    }

    /// Kills rtbuild (exit 124, SIGKILL 5 s later) when it runs longer than `secs`: for tests of
    /// inputs that once made it hang, so a regression fails instead of stalling the suite.
    pub(crate) fn within_secs(mut self, secs: u64) -> Test {
        self.limit_secs = Some(secs);
        self
    }

    /// Runs rtbuild with its address space limited to `mib` MiB (`prlimit --as`): an input that
    /// makes it allocate more aborts it (exit 134), so a bomb regression fails the test.
    pub(crate) fn within_memory_mib(mut self, mib: u64) -> Test {
        self.limit_mib = Some(mib);
        self
    }

    /// The test's temporary folder (the working folder unless [`Test::cwd`] changes it).
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// One path argument.
    pub(crate) fn arg_path(mut self, path: &Path) -> Test {
        self.args.push(path.as_os_str().to_os_string());
        self
    }

    pub(crate) fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Test {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Puts `dir` in front of PATH.
    pub(crate) fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Test {
        self.path_prepend.push(dir.into());
        self
    }

    pub(crate) fn cwd(mut self, dir: impl Into<PathBuf>) -> Test {
        self.cwd = Some(dir.into());
        self
    }

    /// Writes `contents` to `relative` inside the test folder.
    pub(crate) fn file(self, relative: &str, contents: impl AsRef<[u8]>) -> Test {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    /// Runs rtbuild and returns the result for checking.
    #[must_use = "check the exit code and output of the run (success(), code_is(), usage_error(), ...)"]
    #[track_caller]
    pub(crate) fn run(self) -> Run {
        let called_at = std::panic::Location::caller();
        let mut path: Vec<PathBuf> = self.path_prepend.clone();
        path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
        let cwd = self.cwd.clone().unwrap_or_else(|| self.dir.path().to_path_buf());
        let mut argv: Vec<OsString> = Vec::new();
        if let Some(secs) = self.limit_secs {
            argv.extend(["timeout", "--kill-after=5", &secs.to_string()].map(OsString::from));
        }
        if let Some(mib) = self.limit_mib {
            argv.push("prlimit".into());
            argv.push(format!("--as={}", mib << 20).into());
            argv.push("--".into());
        }
        if let Some(user) = self.user {
            user.own(self.dir.path());
            argv.push("setpriv".into());
            argv.extend(user.setpriv_args().into_iter().map(OsString::from));
        }
        argv.push(rtbuild_bin().into());
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        cmd.args(&self.args)
            .current_dir(&cwd)
            .env_clear()
            .env("PATH", std::env::join_paths(path).unwrap())
            .env("HOME", self.dir.path())
            .env("LANG", "C.UTF-8");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let output = cmd.output().expect("run rtbuild");
        Run {
            output,
            dir: self.dir,
            args: self.args,
            called_at,
            stdout_stated: Cell::new(false),
            stderr_stated: Cell::new(false),
            code_stated: Cell::new(false),
        }
    }
}

/// A finished run, strict like just's `Test`: each of stdout, stderr and the exit code is
/// either stated by the test or must be empty (stdout, stderr) or 0 (exit code). A test states
/// a stream exactly (`stdout_is`, `stderr_is`, `usage_error`), in part (`stdout_contains`,
/// `stderr_contains`), by checking it itself (`stdout()`, `stderr()`, `json()`), or waives it
/// explicitly (`ignore_stdout`, `ignore_stderr`). Output nobody stated fails the test when the
/// `Run` is dropped (so a check chain may end anywhere). Its checks panic with the full output
/// when they fail.
pub(crate) struct Run {
    output: Output,
    dir: tempfile::TempDir,
    args: Vec<OsString>,
    called_at: &'static std::panic::Location<'static>,
    stdout_stated: Cell<bool>,
    stderr_stated: Cell<bool>,
    code_stated: Cell<bool>,
}

impl Drop for Run {
    fn drop(&mut self) {
        // A test that already failed is reported by its own panic; a second one would abort.
        if !std::thread::panicking() {
            self.fail_on_unstated_output();
        }
    }
}

impl Run {
    /// Panics when stdout, stderr or a non-zero exit code was left unstated.
    fn fail_on_unstated_output(&self) {
        let mut unstated = Vec::new();
        if !self.stdout_stated.get() && !self.output.stdout.is_empty() {
            unstated.push("stdout (state it, or call ignore_stdout())");
        }
        if !self.stderr_stated.get() && !self.output.stderr.is_empty() {
            unstated.push("stderr (state it, or call ignore_stderr())");
        }
        if !self.code_stated.get() && self.code() != 0 {
            unstated.push("a non-zero exit code (check it with code_is() or usage_error())");
        }
        if !unstated.is_empty() {
            panic!(
                "{}",
                self.report(&format!(
                    "the run at {} left unstated: {}",
                    self.called_at,
                    unstated.join("; ")
                ))
            );
        }
    }

    /// stdout as text; the test checks it itself.
    pub(crate) fn stdout(&self) -> String {
        self.stdout_stated.set(true);
        self.stdout_text()
    }

    /// stderr as text; the test checks it itself.
    pub(crate) fn stderr(&self) -> String {
        self.stderr_stated.set(true);
        self.stderr_text()
    }

    /// The exit code (-1 when killed by a signal); the test checks it itself.
    pub(crate) fn code(&self) -> i32 {
        self.code_stated.set(true);
        self.output.status.code().unwrap_or(-1)
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The run's stdout does not matter to this test.
    pub(crate) fn ignore_stdout(self) -> Run {
        self.stdout_stated.set(true);
        self
    }

    /// The run's stderr (status lines, notes, warnings) does not matter to this test.
    pub(crate) fn ignore_stderr(self) -> Run {
        self.stderr_stated.set(true);
        self
    }

    fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    fn report(&self, problem: &str) -> String {
        let listing: Vec<String> = walkdir::WalkDir::new(self.dir.path())
            .into_iter()
            .filter_map(Result::ok)
            .take(60)
            .map(|e| e.path().strip_prefix(self.dir.path()).unwrap().display().to_string())
            .collect();
        format!(
            "{problem}\nargs: {:?}\nexit: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- files ---\n{}",
            self.args,
            self.output.status,
            self.stdout_text(),
            self.stderr_text(),
            listing.join("\n")
        )
    }

    /// Exit code 0.
    pub(crate) fn success(self) -> Run {
        assert_eq!(self.code(), 0, "{}", self.report("expected success"));
        self
    }

    /// Exit code `code`.
    pub(crate) fn code_is(self, code: i32) -> Run {
        assert_eq!(self.code(), code, "{}", self.report(&format!("expected exit code {code}")));
        self
    }

    /// Exit code 2 and exactly `message` as stderr (one `error:` line plus newline).
    pub(crate) fn usage_error(self, message: &str) -> Run {
        self.code_is(2).stderr_is(&format!("error: {message}\n")).stdout_is("")
    }

    pub(crate) fn stdout_is(self, want: &str) -> Run {
        assert_eq!(self.stdout(), want, "{}", self.report("stdout differs"));
        self
    }

    pub(crate) fn stderr_is(self, want: &str) -> Run {
        assert_eq!(self.stderr(), want, "{}", self.report("stderr differs"));
        self
    }

    /// stderr, the run's temporary folder written `[TMP]`, is exactly `want`.
    #[track_caller]
    pub(crate) fn stderr_in_tmp_is(self, want: &str) -> Run {
        let seen = self.stderr().replace(&self.dir.path().display().to_string(), "[TMP]");
        assert_eq!(seen, want, "{}", self.report("stderr (with [TMP]) differs"));
        self
    }

    /// stderr, after `redact` wrote what the code under test computes (an id, a compressed size)
    /// as a placeholder, is exactly `want`.
    #[track_caller]
    pub(crate) fn stderr_redacted_is(self, redact: impl Fn(&str) -> String, want: &str) -> Run {
        let seen = redact(&self.stderr());
        assert_eq!(seen, want, "{}", self.report("stderr (redacted) differs"));
        self
    }

    /// stderr, the run's temporary folder written `[TMP]`, holds `line` as one whole line; the
    /// other lines (progress, timings, what this test is not about) go unchecked.
    #[track_caller]
    pub(crate) fn stderr_has_line(self, line: &str) -> Run {
        let seen = self.stderr().replace(&self.dir.path().display().to_string(), "[TMP]");
        let has = seen.lines().any(|l| l == line);
        assert!(has, "{}", self.report(&format!("stderr lacks the line {line:?}")));
        self
    }

    pub(crate) fn stderr_contains(self, want: &str) -> Run {
        assert!(self.stderr().contains(want), "{}", self.report(&format!("stderr lacks {want:?}")));
        self
    }

    pub(crate) fn stdout_contains(self, want: &str) -> Run {
        assert!(self.stdout().contains(want), "{}", self.report(&format!("stdout lacks {want:?}")));
        self
    }

    /// stdout parsed as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        self.stdout_stated.set(true);
        serde_json::from_slice(&self.output.stdout)
            .unwrap_or_else(|e| panic!("{}", self.report(&format!("stdout is not JSON: {e}"))))
    }

    /// No file was written under `relative` (it does not exist or is empty).
    pub(crate) fn nothing_written(self, relative: &str) -> Run {
        let dir = self.dir.path().join(relative);
        let empty = !dir.exists()
            || std::fs::read_dir(&dir).map(|mut d| d.next().is_none()).unwrap_or(false);
        assert!(empty, "{}", self.report(&format!("{relative} must hold nothing")));
        self
    }
}

/// What `verify --json` ends its stderr with for `json` (its stdout, one report): nothing when
/// every check passed, else the one summary line counting the `fail` statuses the JSON holds.
/// Tests against this host or a lab guest use it where how many checks fail depends on that
/// kernel; the wording is stated here, the count is the JSON's.
pub(crate) fn verify_json_summary(json: &serde_json::Value) -> String {
    let reports = json["reports"].as_array().expect("reports in verify's JSON");
    assert_eq!(reports.len(), 1, "one source verified: {json:#}");
    let checks = reports[0]["checks"].as_array().expect("checks in verify's JSON");
    match checks.iter().filter(|c| c["status"] == "fail").count() {
        0 => String::new(),
        failed => format!(
            "warning: {failed} of {} checks failed for {} (status `fail` in the JSON on stdout)\n",
            checks.len(),
            reports[0]["source"].as_str().expect("the report names its source")
        ),
    }
}

/// The harness itself: output and exit codes a test did not state fail it.
#[test]
fn a_run_fails_the_test_when_output_or_a_failure_went_unstated() {
    let failure = |check: fn()| -> String {
        let err = std::panic::catch_unwind(check).expect_err("the unstated run must fail the test");
        err.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let unstated = failure(|| drop(Test::new().args(["--version"]).run().success()));
    assert!(unstated.contains("left unstated: stdout"), "{unstated}");
    assert!(unstated.contains("tests/integration/support/harness.rs"), "names the run: {unstated}");
    let failed = failure(|| drop(Test::new().args(["no-such-command"]).run().ignore_stderr()));
    assert!(failed.contains("a non-zero exit code"), "{failed}");

    // Stated exactly, in part, or waived on purpose: the test passes.
    let version = format!("rtbuild {}\n", env!("CARGO_PKG_VERSION"));
    Test::new().args(["--version"]).run().success().stdout_is(&version);
    Test::new().args(["--version"]).run().success().stdout_contains("rtbuild");
    Test::new().args(["--version"]).run().success().ignore_stdout();
    Test::new().args(["no-such-command"]).run().code_is(2).stderr_contains("no-such-command");
}

/// Polls `ready` every 100 ms until it gives a value, and returns it; fails the test with
/// `what` when `limit` passes first.
pub(crate) fn wait_for<T>(what: &str, limit: Duration, mut ready: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(start.elapsed() < limit, "{what} (waited {limit:?})");
        std::thread::sleep(Duration::from_millis(100));
    }
}
