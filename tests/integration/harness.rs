//! The integration-test harness: runs the real `rtbuild` binary in a fresh temporary folder with
//! a controlled environment, and checks exit code, stdout and stderr together.

#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The rtbuild binary under test.
pub fn rtbuild_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rtbuild"))
}

/// The project root (for `machines/`, `layers/`, `tests/data/`).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file under `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    project_root().join("tests/data").join(name)
}

/// The Python venv `.ci/setup` creates (kas 5.5, bitbake-setup 2.19.0): `$RTBUILD_VENV`, else
/// `<project>/.venv`. Tests that need it fail with a clear message when it is missing.
pub fn venv() -> PathBuf {
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
pub struct Test {
    dir: tempfile::TempDir,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    path_prepend: Vec<PathBuf>,
    cwd: Option<PathBuf>,
    user: Option<Unprivileged>,
    limit_secs: Option<u64>,
}

/// The unprivileged account `.ci/setup` creates for tests that must not run as root (BitBake's
/// sanity check refuses root, and so does `rtbuild image`).
pub const TEST_USER: &str = "rtbuild-ci";

/// Uid and gid of [`TEST_USER`]; fails the test loudly when the account is missing.
#[derive(Clone, Copy, Debug)]
pub struct Unprivileged {
    pub uid: u32,
    pub gid: u32,
}

impl Unprivileged {
    pub fn get() -> Unprivileged {
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
    pub fn own(&self, path: &Path) {
        let status = Command::new("chown")
            .arg("-R")
            .arg(format!("{}:{}", self.uid, self.gid))
            .arg(path)
            .status()
            .expect("run chown");
        assert!(status.success(), "chown {} failed", path.display());
    }

    /// `setpriv` arguments that run the next program as the test user.
    pub fn setpriv_args(&self) -> Vec<String> {
        vec![
            format!("--reuid={}", self.uid),
            format!("--regid={}", self.gid),
            "--clear-groups".to_string(),
        ]
    }
}

impl Test {
    pub fn new() -> Test {
        Test {
            dir: tempfile::Builder::new().prefix("rtbuild-test").tempdir().expect("tempdir"),
            args: Vec::new(),
            env: Vec::new(),
            path_prepend: Vec::new(),
            cwd: None,
            user: None,
            limit_secs: None,
        }
    }

    /// Runs rtbuild as the unprivileged [`TEST_USER`] (through `setpriv`), owning the test folder,
    /// as a real build must run.
    pub fn unprivileged(mut self) -> Test {
        self.user = Some(Unprivileged::get());
        self
    }

    /// Kills rtbuild (exit 124, SIGKILL 5 s later) when it runs longer than `secs`: for tests of
    /// inputs that once made it hang, so a regression fails instead of stalling the suite.
    pub fn within_secs(mut self, secs: u64) -> Test {
        self.limit_secs = Some(secs);
        self
    }

    /// The test's temporary folder (the working folder unless [`Test::cwd`] changes it).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn args<I, S>(mut self, args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// One path argument.
    pub fn arg_path(mut self, path: &Path) -> Test {
        self.args.push(path.as_os_str().to_os_string());
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Test {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Puts `dir` in front of PATH.
    pub fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Test {
        self.path_prepend.push(dir.into());
        self
    }

    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Test {
        self.cwd = Some(dir.into());
        self
    }

    /// Writes `contents` to `relative` inside the test folder.
    pub fn file(self, relative: &str, contents: impl AsRef<[u8]>) -> Test {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    /// Runs rtbuild and returns the result for checking.
    #[must_use = "check the exit code and output of the run (success(), code_is(), usage_error(), ...)"]
    pub fn run(self) -> Run {
        let mut path: Vec<PathBuf> = self.path_prepend.clone();
        path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
        let cwd = self.cwd.clone().unwrap_or_else(|| self.dir.path().to_path_buf());
        let mut argv: Vec<OsString> = Vec::new();
        if let Some(secs) = self.limit_secs {
            argv.extend(["timeout", "--kill-after=5", &secs.to_string()].map(OsString::from));
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
        Run { output, dir: self.dir, args: self.args }
    }
}

/// A finished run. Its checks panic with the full output when they fail.
pub struct Run {
    pub output: Output,
    pub dir: tempfile::TempDir,
    args: Vec<OsString>,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    pub fn code(&self) -> i32 {
        self.output.status.code().unwrap_or(-1)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
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
            self.stdout(),
            self.stderr(),
            listing.join("\n")
        )
    }

    /// Exit code 0.
    pub fn success(self) -> Run {
        assert_eq!(self.code(), 0, "{}", self.report("expected success"));
        self
    }

    /// Exit code `code`.
    pub fn code_is(self, code: i32) -> Run {
        assert_eq!(self.code(), code, "{}", self.report(&format!("expected exit code {code}")));
        self
    }

    /// Exit code 2 and exactly `message` as stderr (one `error:` line plus newline).
    pub fn usage_error(self, message: &str) -> Run {
        let run = self.code_is(2);
        assert_eq!(run.stderr(), format!("error: {message}\n"), "{}", run.report("stderr differs"));
        assert_eq!(run.stdout(), "", "{}", run.report("stdout must be empty"));
        run
    }

    pub fn stdout_is(self, want: &str) -> Run {
        assert_eq!(self.stdout(), want, "{}", self.report("stdout differs"));
        self
    }

    pub fn stderr_is(self, want: &str) -> Run {
        assert_eq!(self.stderr(), want, "{}", self.report("stderr differs"));
        self
    }

    pub fn stderr_contains(self, want: &str) -> Run {
        assert!(self.stderr().contains(want), "{}", self.report(&format!("stderr lacks {want:?}")));
        self
    }

    pub fn stdout_contains(self, want: &str) -> Run {
        assert!(self.stdout().contains(want), "{}", self.report(&format!("stdout lacks {want:?}")));
        self
    }

    /// stdout parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.output.stdout)
            .unwrap_or_else(|e| panic!("{}", self.report(&format!("stdout is not JSON: {e}"))))
    }

    /// No file was written under `relative` (it does not exist or is empty).
    pub fn nothing_written(self, relative: &str) -> Run {
        let dir = self.dir.path().join(relative);
        let empty = !dir.exists()
            || std::fs::read_dir(&dir).map(|mut d| d.next().is_none()).unwrap_or(false);
        assert!(empty, "{}", self.report(&format!("{relative} must hold nothing")));
        self
    }
}
