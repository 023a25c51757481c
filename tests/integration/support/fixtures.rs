//! Git repositories shaped like meta-qcom's stack, made fresh for each test from
//! `tests/fixtures/` (see its README) plus a `bitbake` repository assembled from
//! `tests/support/bitbake` and the venv's `bb` library. kas clones them over `file://` URLs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::harness::{project_root, venv};

/// Machines of the fixture meta-qcom, with their hard QCOM_* assignments (from meta-qcom's
/// machine confs): name, RT CPU, IRQ affinity.
const MACHINES: &[(&str, &str, &str)] = &[
    ("rb3gen2-core-kit", "7", "0-6"),
    ("iq-9075-evk", "7", "0-6"),
    ("iq-615-evk", "7", "0-6"),
    ("iq-8275-evk", "3", "0-2,4-7"),
    ("qcs615-ride", "7", "0-6"),
    ("qcs8300-ride-sx", "3", "0-2,4-7"),
    ("qcs9100-ride-sx", "7", "0-6"),
    ("iq-x7181-evk", "11", "0-10"),
    ("qcm6490-idp", "7", "0-6"),
];

/// A set of fixture repositories under one folder.
pub(crate) struct Fixtures {
    pub root: PathBuf,
}

/// What the `bitbake` repository holds.
pub(crate) enum Bitbake<'a> {
    /// The real `bb` library with rtbuild's launcher (parsing only).
    Real,
    /// `bin/bitbake` is this script: a recording fake for tests that run tasks.
    Fake(&'a str),
}

impl Fixtures {
    /// Creates `oe-core`, `bitbake`, `meta-qcom` and `meta-qcom-distro` under `root`.
    pub(crate) fn create(root: &Path, bitbake: Bitbake<'_>) -> Fixtures {
        let src = project_root().join("tests/fixtures");
        for repo in ["oe-core", "meta-qcom", "meta-qcom-distro"] {
            copy_tree(&src.join(repo), &root.join(repo), root);
        }
        let qcom = root.join("meta-qcom");
        for (machine, rt, irqaff) in MACHINES {
            let conf = format!(
                "#@TYPE: Machine\n#@NAME: {machine} (rtbuild test fixture)\n\
                 # shaped like meta-qcom's {machine}.conf\n\n\
                 require conf/machine/include/qcom-common.inc\n\n\
                 MACHINE_FEATURES += \"efi pci\"\n\n\
                 # Isolate rt cpu\n\
                 QCOM_RT_CPU        = \"{rt}\"\nQCOM_IRQAFF        = \"{irqaff}\"\n\
                 QCOM_RCU_NOCBS     = \"{rt}\"\nQCOM_RCU_EXPEDITED = \"1\"\n\
                 QCOM_CPUIDLE_OFF   = \"1\"\n"
            );
            write(&qcom.join(format!("conf/machine/{machine}.conf")), &conf);
            let kas = format!(
                "header:\n  version: 14\n  includes:\n  - ci/base.yml\nmachine: {machine}\n"
            );
            write(&qcom.join(format!("ci/{machine}.yml")), &kas);
        }
        // meta-qcom keeps the deprecated name as a conf that requires the new one.
        write(
            &qcom.join("conf/machine/qcs6490-rb3gen2-core-kit.conf"),
            "#DEPRECATED, use rb3gen2-core-kit instead\nrequire conf/machine/rb3gen2-core-kit.conf\n",
        );
        std::os::unix::fs::symlink(
            "rb3gen2-core-kit.yml",
            qcom.join("ci/qcs6490-rb3gen2-core-kit.yml"),
        )
        .unwrap();
        make_bitbake(&root.join("bitbake"), bitbake);
        for repo in ["oe-core", "bitbake", "meta-qcom-distro"] {
            git_commit_all(&root.join(repo), "fixture");
        }
        // Like the real meta-qcom, `ci/base.lock.yml` (kas's overrides form) pins the repos
        // `ci/base.yml` declares; kas reads it beside base.yml.
        let pins: String = ["oe-core", "bitbake"]
            .iter()
            .map(|repo| {
                let head = git(&root.join(repo), &["rev-parse", "HEAD"]);
                format!("    {repo}:\n      commit: {}\n", head.trim())
            })
            .collect();
        write(
            &qcom.join("ci/base.lock.yml"),
            &format!("header:\n  version: 14\noverrides:\n  repos:\n{pins}"),
        );
        git_commit_all(&qcom, "fixture");
        Fixtures { root: root.to_path_buf() }
    }

    /// The `file://` URL of a fixture repository.
    pub(crate) fn url(&self, repo: &str) -> String {
        format!("file://{}", self.root.join(repo).display())
    }

    pub(crate) fn repo(&self, repo: &str) -> PathBuf {
        self.root.join(repo)
    }
}

fn make_bitbake(dir: &Path, bitbake: Bitbake<'_>) {
    let support = project_root().join("tests/support/bitbake");
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    match bitbake {
        Bitbake::Real => {
            copy_tree(&support, dir, dir);
            let bb = site_packages().join("bb");
            copy_tree(&bb, &dir.join("lib/bb"), dir);
        }
        Bitbake::Fake(script) => write_executable(&dir.join("bin/bitbake"), script),
    }
}

/// The venv's site-packages folder (where `bb` is).
fn site_packages() -> PathBuf {
    let lib = venv().join("lib");
    let python = std::fs::read_dir(&lib)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))
        .unwrap_or_else(|| panic!("no python folder in {}", lib.display()));
    python.path().join("site-packages")
}

/// Copies `from` to `to`, replacing `@FIXTURES@` with `root` in text files and keeping modes.
fn copy_tree(from: &Path, to: &Path, root: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        if entry.file_name() == "__pycache__"
            || entry.path().extension().is_some_and(|e| e == "pyc")
        {
            continue;
        }
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else if entry.path().components().any(|c| c.as_os_str() == "__pycache__") {
            continue;
        } else {
            let bytes = std::fs::read(entry.path()).unwrap();
            let bytes = match String::from_utf8(bytes) {
                Ok(text) => text.replace("@FIXTURES@", &root.to_string_lossy()).into_bytes(),
                Err(e) => e.into_bytes(),
            };
            std::fs::write(&target, bytes).unwrap();
            let mode = std::fs::metadata(entry.path()).unwrap().permissions();
            std::fs::set_permissions(&target, mode).unwrap();
        }
    }
}

pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub(crate) fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(path, text);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs git in `dir` and returns its stdout; panics with git's stderr on failure.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    // The repos may belong to the unprivileged test user that kas runs as.
    let out = Command::new("git")
        .args(["-c", "safe.directory=*"])
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "rtbuild test")
        .env("GIT_AUTHOR_EMAIL", "test@rtbuild.invalid")
        .env("GIT_COMMITTER_NAME", "rtbuild test")
        .env("GIT_COMMITTER_EMAIL", "test@rtbuild.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Makes `dir` a git repository on branch `wrynose` with everything committed.
pub(crate) fn git_commit_all(dir: &Path, message: &str) {
    if !dir.join(".git").exists() {
        git(dir, &["init", "-q", "-b", "wrynose"]);
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// Lowercase hex SHA-256 of `bytes`, computed here with the `sha2` crate (not by rtbuild).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
