//! The real upstream, for tests that check rtbuild against it: one-commit bare repositories of
//! meta-qcom `wrynose`, openembedded-core and BitBake (at the commits meta-qcom's
//! `ci/base.lock.yml` pins) plus a stand-in for meta-lts-mixins, from the snapshot in
//! `../shared/upstream/` (its README says what each holds and how to run them offline).
//!
//! The snapshot is unpacked once per test process, by the unprivileged test user (git refuses
//! repositories another user owns, and BitBake refuses root), into `target/tmp/upstream/<pid>`;
//! folders left by earlier processes are removed first. Nothing from the snapshot is copied into
//! the project: it is test data, read here and nowhere else.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::support::harness::{Unprivileged, project_root, venv};

/// One unpacked snapshot, shared by every test of this process.
pub(crate) struct Upstream {
    /// The folder holding `meta-qcom.git`, `oe-core.git`, `bitbake.git`, `meta-lts-mixins.git`,
    /// `offline.yml` and `env`.
    pub dir: PathBuf,
    /// `KAS_PREMIRRORS`: the upstream URLs mapped to the bare repositories.
    pub premirrors: String,
    pub user: Unprivileged,
}

/// Where the snapshot lives: `$RTBUILD_UPSTREAM`, else `<project>/../shared/upstream`. Fails
/// loudly when it is missing: these tests must run, not pass silently.
pub(crate) fn snapshot_dir() -> PathBuf {
    let dir = std::env::var_os("RTBUILD_UPSTREAM")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join("../shared/upstream"));
    assert!(
        dir.join("unpack.sh").is_file() && dir.join("wrynose-snapshot.tar.gz").is_file(),
        "the upstream snapshot is not at {} (unpack.sh and wrynose-snapshot.tar.gz); \
         set RTBUILD_UPSTREAM to the folder that holds them",
        dir.display()
    );
    dir
}

/// The snapshot, unpacked on first use.
pub(crate) fn upstream() -> &'static Upstream {
    static UPSTREAM: OnceLock<Upstream> = OnceLock::new();
    UPSTREAM.get_or_init(Upstream::unpack)
}

impl Upstream {
    fn unpack() -> Upstream {
        let user = Unprivileged::get();
        let parent = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("upstream");
        std::fs::create_dir_all(&parent).unwrap();
        remove_stale(&parent);
        let dir = parent.join(std::process::id().to_string());
        if dir.exists() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
        std::fs::create_dir(&dir).unwrap();
        user.own(&dir);
        // The snapshot script runs as the test user, who must reach the folder.
        make_traversable(&parent);
        let out = Command::new("setpriv")
            .args(user.setpriv_args())
            .arg("bash")
            .arg(snapshot_dir().join("unpack.sh"))
            .arg(&dir)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("HOME", &dir)
            .output()
            .expect("run unpack.sh");
        assert!(
            out.status.success(),
            "unpacking the upstream snapshot into {} failed:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let env = std::fs::read_to_string(dir.join("env")).unwrap();
        let premirrors = env
            .split_once("KAS_PREMIRRORS=\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(value, _)| value.to_string())
            .unwrap_or_else(|| {
                panic!("no KAS_PREMIRRORS in {}:\n{env}", dir.join("env").display())
            });
        Upstream { dir, premirrors, user }
    }

    /// A bare repository of the snapshot: `meta-qcom`, `oe-core`, `bitbake` or `meta-lts-mixins`.
    pub(crate) fn repo(&self, name: &str) -> PathBuf {
        let repo = self.dir.join(format!("{name}.git"));
        assert!(repo.is_dir(), "the snapshot has no {name}.git");
        repo
    }

    /// The commit a snapshot repository holds.
    pub(crate) fn commit(&self, name: &str) -> String {
        self.git(name, &["rev-parse", "HEAD"]).trim().to_string()
    }

    /// A file of a snapshot repository at its one commit (for example
    /// `file("oe-core", "meta/conf/bitbake.conf")`).
    pub(crate) fn file(&self, name: &str, path: &str) -> String {
        self.git(name, &["show", &format!("HEAD:{path}")])
    }

    fn git(&self, name: &str, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-c")
            .arg("safe.directory=*")
            .arg("--git-dir")
            .arg(self.repo(name))
            .args(args)
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?} in {name}.git failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `offline.yml`: the kas file to put after the generated one (pins meta-lts-mixins to the
    /// stand-in, no network, AUTOREV recipes masked or pinned).
    pub(crate) fn offline_yml(&self) -> PathBuf {
        self.dir.join("offline.yml")
    }

    /// Clones a snapshot repository into `dest` (a work tree owned by the test user).
    pub(crate) fn checkout(&self, name: &str, dest: &Path) {
        let out = self
            .as_user("git")
            .arg("clone")
            .arg("-q")
            .arg(self.repo(name))
            .arg(dest)
            .env("HOME", dest.parent().unwrap())
            .output()
            .unwrap();
        ok(&out, &format!("git clone {name}"));
    }

    /// Runs the venv's kas as the test user in `cwd` with the snapshot's premirrors, a work
    /// folder `work` (created, owned by the test user) and `env` on top.
    pub(crate) fn kas(
        &self,
        cwd: &Path,
        work: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Output {
        std::fs::create_dir_all(work).unwrap();
        self.user.own(work);
        let mut cmd = self.as_user(venv().join("bin/kas").to_str().unwrap());
        cmd.args(args)
            .current_dir(cwd)
            .env("HOME", work)
            .env("KAS_WORK_DIR", work)
            .env("KAS_PREMIRRORS", &self.premirrors);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// A command that runs `program` as the test user with a clean environment (the venv and
    /// the system folders on PATH, the locale BitBake insists on).
    pub(crate) fn as_user(&self, program: &str) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.args(self.user.setpriv_args())
            .arg(program)
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    venv().join("bin").display()
                ),
            )
            .env("LANG", "en_US.UTF-8");
        cmd
    }
}

/// stdout of a successful command; otherwise fails with both streams.
pub(crate) fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Removes the folders of test processes that are gone.
fn remove_stale(parent: &Path) {
    for entry in std::fs::read_dir(parent).unwrap().flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn make_traversable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(dir).unwrap().permissions();
    perms.set_mode(perms.mode() | 0o755);
    std::fs::set_permissions(dir, perms).unwrap();
}

#[test]
fn the_snapshot_holds_the_commits_meta_qcom_base_lock_pins() {
    let up = upstream();
    let lock: serde_yaml::Value =
        serde_yaml::from_str(&up.file("meta-qcom", "ci/base.lock.yml")).unwrap();
    let pins = &lock["overrides"]["repos"];
    assert_eq!(pins["oe-core"]["commit"].as_str(), Some(up.commit("oe-core").as_str()));
    assert_eq!(pins["bitbake"]["commit"].as_str(), Some(up.commit("bitbake").as_str()));
    // The stand-in is not the real layer: the real lock pins a commit it does not have, which
    // is why offline.yml pins it again.
    assert_ne!(
        pins["meta-lts-mixins"]["commit"].as_str(),
        Some(up.commit("meta-lts-mixins").as_str())
    );
    let offline = std::fs::read_to_string(up.offline_yml()).unwrap();
    assert!(offline.contains(&up.commit("meta-lts-mixins")), "{offline}");
    for url in
        ["openembedded-core", "openembedded/bitbake", "qualcomm-linux/meta-qcom", "meta-lts-mixins"]
    {
        assert!(up.premirrors.contains(url), "{}", up.premirrors);
    }
}
