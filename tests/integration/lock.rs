//! `rtbuild lock` with real kas 5.5 over meta-qcom-shaped fixture repos: the lock pins every
//! repo (meta-qcom ones included, where `kas lock` leaves out what another lock pins), `--check`
//! catches a moved, dirty or missing checkout, and `--diff` lists the commits between two locks.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::fixtures::{Bitbake, Fixtures, git, git_commit_all, write};
use crate::harness::{Test, venv};

const MACHINE: &str = "rb3gen2-core-kit";
const REPOS: [&str; 4] = ["bitbake", "meta-qcom", "meta-qcom-distro", "oe-core"];

/// A generated build over fixture repos, with meta-qcom pinning bitbake in its own
/// `ci/base.lock.yml` as the real meta-qcom does.
struct Build {
    dir: tempfile::TempDir,
    fixtures: Fixtures,
}

impl Build {
    fn new() -> Build {
        let dir = tempfile::tempdir().unwrap();
        let fixtures =
            Fixtures::create(&dir.path().join("repos"), Bitbake::Fake("#!/bin/sh\nexit 0\n"));
        let bitbake_head = head(&fixtures.repo("bitbake"));
        write(
            &fixtures.repo("meta-qcom").join("ci/base.lock.yml"),
            &format!(
                "header:\n  version: 14\noverrides:\n  repos:\n    bitbake:\n      commit: {bitbake_head}\n"
            ),
        );
        git_commit_all(&fixtures.repo("meta-qcom"), "ci: pin bitbake");
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let url = fixtures.url("meta-qcom");
        Test::new()
            .cwd(dir.path())
            .args(["generate", "--machine", MACHINE, "--meta-qcom-url", &url])
            .run()
            .success();
        Build { dir, fixtures }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn work(&self) -> PathBuf {
        self.path().join("work")
    }

    fn kas_file(&self) -> PathBuf {
        self.path().join(format!("rtbuild/{MACHINE}/{MACHINE}-rt.yml"))
    }

    fn lock_file(&self) -> PathBuf {
        self.path().join(format!("rtbuild/{MACHINE}/{MACHINE}-rt.lock.yml"))
    }

    /// rtbuild in the build folder, with the venv's kas on PATH and KAS_WORK_DIR set.
    fn rtbuild<I: IntoIterator<Item = S>, S: Into<std::ffi::OsString>>(&self, args: I) -> Test {
        Test::new()
            .cwd(self.path())
            .path_prepend(venv().join("bin"))
            .env("KAS_WORK_DIR", self.work())
            .args(args)
    }

    fn kas(&self, args: &[&str]) -> Output {
        let out = Command::new(venv().join("bin/kas"))
            .args(args)
            .current_dir(self.path())
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", venv().join("bin").display()))
            .env("HOME", self.path())
            .env("KAS_WORK_DIR", self.work())
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap();
        assert!(out.status.success(), "kas {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    fn pins(&self, file: &Path) -> serde_yaml::Value {
        let text = std::fs::read_to_string(file).unwrap();
        let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        doc["overrides"]["repos"].clone()
    }
}

fn head(repo: &Path) -> String {
    git(repo, &["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn real_kas_lock_leaves_out_pinned_repos_and_rtbuild_lock_pins_every_repo() {
    let build = Build::new();
    build.kas(&["lock", build.kas_file().to_str().unwrap()]);
    let kas_pins = build.pins(&build.lock_file());
    assert!(kas_pins.get("bitbake").is_none(), "kas pinned bitbake: {kas_pins:?}");
    assert!(kas_pins.get("meta-qcom").is_some(), "{kas_pins:?}");

    let run = build.rtbuild(["lock", "--machine", MACHINE]).run().success();
    assert!(run.stdout().contains("added    bitbake"), "{}", run.stdout());
    assert!(run.stdout().contains("kept     meta-qcom "), "{}", run.stdout());
    let pins = build.pins(&build.lock_file());
    for repo in REPOS {
        assert_eq!(
            pins[repo]["commit"].as_str().unwrap(),
            head(&build.fixtures.repo(repo)),
            "{repo}"
        );
    }
    assert!(pins.get("rtbuild").is_none(), "the local repo cannot be pinned: {pins:?}");
    let names: Vec<_> = pins.as_mapping().unwrap().keys().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(names, REPOS, "sorted repo names");

    // kas reads rtbuild's lock as its own: nothing left to lock, file untouched.
    let before = std::fs::read(build.lock_file()).unwrap();
    build.kas(&["lock", build.kas_file().to_str().unwrap()]);
    assert_eq!(std::fs::read(build.lock_file()).unwrap(), before);
    // Running rtbuild lock again changes nothing either.
    build.rtbuild(["lock", "--machine", MACHINE]).run().success();
    assert_eq!(std::fs::read(build.lock_file()).unwrap(), before);

    build
        .rtbuild(["lock", "--check", "--machine", MACHINE])
        .run()
        .success()
        .stdout_contains("ok       meta-qcom-distro");
}

#[test]
fn new_commit_fails_check_and_diff_lists_its_subject() {
    let build = Build::new();
    build.rtbuild(["lock", "--machine", MACHINE]).run().success();
    let old = build.path().join("old.lock.yml");
    std::fs::copy(build.lock_file(), &old).unwrap();

    // Upstream moves on; --update pins the new branch tip.
    let oe = build.fixtures.repo("oe-core");
    write(&oe.join("meta/conf/widget.conf"), "WIDGET = \"1\"\n");
    git_commit_all(&oe, "widget: fix the frobnicator");
    let run = build.rtbuild(["lock", "--machine", MACHINE, "--update", "oe-core"]).run().success();
    assert!(run.stdout().contains("updated  oe-core"), "{}", run.stdout());
    assert_eq!(build.pins(&build.lock_file())["oe-core"]["commit"].as_str().unwrap(), head(&oe));

    // The checkout is still on the old commit: --check names it.
    let run = build.rtbuild(["lock", "--check", "--machine", MACHINE]).run().code_is(1);
    assert!(run.stdout().contains("FAIL     oe-core"), "{}", run.stdout());
    assert!(run.stdout().contains("checked out at"), "{}", run.stdout());
    assert!(run.stdout().contains("ok       bitbake"), "{}", run.stdout());

    let new = build.lock_file();
    let run = build
        .rtbuild(["lock", "--diff", old.to_str().unwrap(), new.to_str().unwrap()])
        .run()
        .success();
    assert!(run.stdout().contains("changed  oe-core"), "{}", run.stdout());
    assert!(run.stdout().contains("(1 commits)"), "{}", run.stdout());
    assert!(run.stdout().contains("widget: fix the frobnicator"), "{}", run.stdout());
    assert!(run.stdout().contains("same     meta-qcom "), "{}", run.stdout());

    let json = build
        .rtbuild(["--json", "lock", "--diff", old.to_str().unwrap(), new.to_str().unwrap()])
        .run()
        .success()
        .json();
    let oe_diff =
        json["repos"].as_array().unwrap().iter().find(|r| r["repo"] == "oe-core").unwrap();
    assert_eq!(oe_diff["commits"][0]["subject"], "widget: fix the frobnicator");
    assert_eq!(oe_diff["new"], head(&oe));
}

#[test]
fn check_names_dirty_moved_missing_and_unpinned_checkouts() {
    let build = Build::new();
    build.rtbuild(["lock", "--machine", MACHINE]).run().success();
    let work = build.work();
    std::fs::write(work.join("bitbake/bin/bitbake"), "#!/bin/sh\nexit 1\n").unwrap();
    write(&work.join("meta-qcom-distro/extra.txt"), "local change\n");
    git_commit_all(&work.join("meta-qcom-distro"), "local hack");
    std::fs::remove_dir_all(work.join("oe-core")).unwrap();
    std::fs::create_dir_all(work.join("meta-stray")).unwrap();
    git_commit_all(
        &{
            write(&work.join("meta-stray/README"), "stray\n");
            work.join("meta-stray")
        },
        "stray",
    );

    let run = build.rtbuild(["lock", "--check", "--machine", MACHINE]).run().code_is(1);
    let out = run.stdout();
    assert!(out.contains("FAIL     bitbake") && out.contains("has uncommitted changes"), "{out}");
    assert!(out.contains("FAIL     meta-qcom-distro"), "{out}");
    assert!(out.contains("FAIL     oe-core") && out.contains("not checked out"), "{out}");
    assert!(out.contains("FAIL     meta-stray") && out.contains("not pinned by the lock"), "{out}");
    assert!(out.contains("ok       meta-qcom "), "{out}");
    assert!(run.stderr().contains("4 of 5 repos do not match"), "{}", run.stderr());
}

#[test]
fn bad_lock_files_are_clear_input_errors() {
    let sha = "d51c6e87a10c7c75a692ca86b71af9a818026ecb";
    let cases = [
        (
            "overrides:\n  repos:\n    oe-core: {commit: d51c6e8}\n".to_string(),
            "lock file bad.yml: repo `oe-core` has commit `d51c6e8`; a pin must be the full 40-digit hex commit id (git rev-parse <ref>)",
        ),
        (
            format!("overrides:\n  repos:\n    openembedded-core: {{commit: {sha}}}\n"),
            "lock file bad.yml: unknown repo `openembedded-core`; meta-qcom calls it `oe-core`",
        ),
        ("overrides: [\n".to_string(), "lock file bad.yml is not valid YAML: "),
    ];
    for (text, want) in cases {
        let run = Test::new()
            .file("bad.yml", text)
            .args(["lock", "--check", "bad.yml", "--work-dir", "."])
            .run()
            .code_is(2);
        assert!(run.stderr().starts_with(&format!("error: {want}")), "{}", run.stderr());
        assert_eq!(run.stderr().lines().count(), 1, "{}", run.stderr());
        assert_eq!(run.stdout(), "");
    }
    Test::new()
        .args(["lock", "x.lock.yml"])
        .run()
        .usage_error("a lock FILE is read only with --check; use --machine to write one");
    Test::new()
        .args(["lock", "--machine", MACHINE])
        .run()
        .code_is(2)
        .stderr_contains("no kas file at")
        .nothing_written("rtbuild");
}

#[test]
fn install_takes_the_full_releases_form_beside_the_kas_file() {
    let build = Build::new();
    let sha = head(&build.fixtures.repo("meta-qcom"));
    let release = build.path().join("lock.yml");
    std::fs::write(
        &release,
        format!(
            "repos:\n  meta-qcom:\n    branch: wrynose\n    commit: {sha}\n    url: {}\n",
            build.fixtures.url("meta-qcom")
        ),
    )
    .unwrap();
    build
        .rtbuild(["lock", "--machine", MACHINE, "--install", release.to_str().unwrap()])
        .run()
        .success();
    let pins = build.pins(&build.lock_file());
    assert_eq!(pins["meta-qcom"]["commit"].as_str().unwrap(), sha);
    assert_eq!(pins["meta-qcom"]["branch"].as_str().unwrap(), "wrynose");
    // kas accepts it and checks meta-qcom out at that commit.
    build.kas(&["checkout", build.kas_file().to_str().unwrap()]);
    assert_eq!(head(&build.work().join("meta-qcom")), sha);
}

#[test]
fn update_of_an_unknown_repo_is_an_input_error() {
    let build = Build::new();
    build.rtbuild(["lock", "--machine", MACHINE]).run().success();
    let before = std::fs::read(build.lock_file()).unwrap();
    build
        .rtbuild(["lock", "--machine", MACHINE, "--update", "openembedded-core"])
        .run()
        .usage_error("unknown repo `openembedded-core` to update; the lock pins `bitbake`, `meta-qcom`, `meta-qcom-distro`, `oe-core`");
    assert_eq!(std::fs::read(build.lock_file()).unwrap(), before);
}

#[test]
fn check_fails_when_the_pin_is_no_longer_on_its_branch() {
    let build = Build::new();
    build.rtbuild(["lock", "--machine", MACHINE]).run().success();
    // Upstream rewrites history: the pinned commit leaves the branch.
    let oe = build.fixtures.repo("oe-core");
    git(&oe, &["commit", "-q", "--amend", "-m", "fixture, rewritten"]);
    git(&build.work().join("oe-core"), &["fetch", "-q", "origin"]);
    let run = build.rtbuild(["lock", "--check", "--machine", MACHINE]).run().code_is(1);
    assert!(
        run.stdout().contains("FAIL     oe-core")
            && run.stdout().contains("pinned commit is not on branch wrynose"),
        "{}",
        run.stdout()
    );
    let json =
        build.rtbuild(["--json", "lock", "--check", "--machine", MACHINE]).run().code_is(1).json();
    let oe_check =
        json["repos"].as_array().unwrap().iter().find(|r| r["repo"] == "oe-core").unwrap();
    assert_eq!(oe_check["problems"][0]["kind"], "not-on-branch");
    assert_eq!(json["passed"], false);
}

#[test]
fn update_warns_when_meta_qcoms_own_lock_overrides_the_new_pin() {
    let build = Build::new();
    build.rtbuild(["lock", "--machine", MACHINE]).run().success();
    let bb = build.fixtures.repo("bitbake");
    write(&bb.join("NEWS"), "newer\n");
    git_commit_all(&bb, "bitbake: newer");
    let run = build.rtbuild(["lock", "--machine", MACHINE, "--update", "bitbake"]).run().success();
    assert!(
        run.stderr().contains("warning: `bitbake` is also pinned to")
            && run.stderr().contains("by meta-qcom/ci/base.lock.yml in the kas work folder"),
        "{}",
        run.stderr()
    );
}
