//! `rtbuild lock` with real kas 5.5 over meta-qcom-shaped fixture repos: the lock pins every
//! repo (meta-qcom ones included, where `kas lock` leaves out what another lock pins), `--check`
//! catches a moved, dirty or missing checkout, and `--diff` lists the commits between two locks.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::fixtures::{Bitbake, Fixtures, git, git_commit_all, write};
use crate::support::harness::{Test, venv};

const MACHINE: &str = "rb3gen2-core-kit";
/// The end of the line `rtbuild lock` prints on stdout: the lock file it wrote.
const LOCK_PATH: &str = "rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.lock.yml\n";
const REPOS: [&str; 4] = ["bitbake", "meta-qcom", "meta-qcom-distro", "oe-core"];

/// A generated build over fixture repos, whose meta-qcom pins oe-core and bitbake in its own
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
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let url = fixtures.url("meta-qcom");
        let generated = format!(
            "  Generating {MACHINE} (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)
     Created meta-rtbuild/conf/layer.conf
     Created meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/rtbuild-rt.cfg
     Created meta-rtbuild/recipes-kernel/linux/linux-qcom-rt_6.18.bbappend
     Created meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.service
     Created meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.sh
     Created meta-rtbuild/recipes-rt/rtbuild-tune/rtbuild-tune_1.0.bb
     Created {MACHINE}-rt.lock.yml
     Created {MACHINE}-rt.yml
     Created rtbuild-plan.json
   Generated {}/rtbuild/{MACHINE}: 9 new, 0 updated, 0 removed, 0 unchanged
",
            dir.path().display()
        );
        Test::new()
            .cwd(dir.path())
            .args(["generate", "--machine", MACHINE, "--meta-qcom-url", &url])
            .run()
            .ignore_stdout()
            .stderr_is(&generated)
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

    /// stderr of `rtbuild lock --machine` writing a lock: the status line and why the
    /// folder holding the kas file has no pin.
    fn locked(&self) -> String {
        format!(
            "     Locking {}\nnote: `rtbuild` is the folder holding the kas file; kas does not pin it\n",
            self.kas_file().display()
        )
    }

    /// stderr of `rtbuild lock --update`: the status line and the step that moves checkouts.
    fn locked_after_update(&self) -> String {
        format!(
            "     Locking {}\nnote: run `kas checkout` (or `rtbuild image`) to move the checkouts to the new pins\n",
            self.kas_file().display()
        )
    }

    /// stderr of a passing `rtbuild lock --check`.
    fn checked(&self) -> String {
        format!("     Checked 4 repos match {}\n", self.lock_file().display())
    }

    /// stderr of a failing `rtbuild lock --check` with one repo off its pin.
    fn one_repo_does_not_match(&self) -> String {
        format!("warning: 1 of 4 repos does not match {}\n", self.lock_file().display())
    }

    /// stderr of `rtbuild lock --install` of a release lock pinning one repo.
    fn installed(&self) -> String {
        format!("   Installed 1 repo pinned in {}\n", self.lock_file().display())
    }

    /// stderr of `rtbuild generate` run again with the same inputs: nothing written.
    fn generated_unchanged(&self) -> String {
        format!(
            "  Generating {MACHINE} (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)\n   Generated {}: 0 new, 0 updated, 0 removed, 9 unchanged\n",
            self.path().join(format!("rtbuild/{MACHINE}")).display()
        )
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

    let run =
        build.rtbuild(["lock", "--machine", MACHINE]).run().stderr_is(&build.locked()).success();
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
    build
        .rtbuild(["lock", "--machine", MACHINE])
        .run()
        .stdout_contains(LOCK_PATH)
        .stderr_is(&build.locked())
        .success();
    assert_eq!(std::fs::read(build.lock_file()).unwrap(), before);

    build
        .rtbuild(["lock", "--check", "--machine", MACHINE])
        .run()
        .stderr_is(&build.checked())
        .success()
        .stdout_contains("ok       meta-qcom-distro");
}

#[test]
fn new_commit_fails_check_and_diff_lists_its_subject() {
    let build = Build::new();
    build
        .rtbuild(["lock", "--machine", MACHINE])
        .run()
        .stdout_contains(LOCK_PATH)
        .stderr_is(&build.locked())
        .success();
    let old = build.path().join("old.lock.yml");
    std::fs::copy(build.lock_file(), &old).unwrap();

    // Upstream moves on; --update pins the new branch tip.
    let oe = build.fixtures.repo("oe-core");
    write(&oe.join("meta/conf/widget.conf"), "WIDGET = \"1\"\n");
    git_commit_all(&oe, "widget: fix the frobnicator");
    let run = build
        .rtbuild(["lock", "--machine", MACHINE, "--update", "oe-core"])
        .run()
        .stderr_is(&build.locked_after_update())
        .success();
    assert!(run.stdout().contains("updated  oe-core"), "{}", run.stdout());
    assert_eq!(build.pins(&build.lock_file())["oe-core"]["commit"].as_str().unwrap(), head(&oe));

    // The checkout is still on the old commit: --check names it.
    let run = build
        .rtbuild(["lock", "--check", "--machine", MACHINE])
        .run()
        .stderr_is(&build.one_repo_does_not_match())
        .code_is(1);
    assert!(run.stdout().contains("FAIL     oe-core"), "{}", run.stdout());
    assert!(run.stdout().contains("checked out at"), "{}", run.stdout());
    assert!(run.stdout().contains("ok       bitbake"), "{}", run.stdout());

    let new = build.lock_file();
    let run = build
        .rtbuild(["lock", "--diff", old.to_str().unwrap(), new.to_str().unwrap()])
        .run()
        .stderr_is("    Compared 1 of 4 repos changed\n")
        .success();
    assert!(run.stdout().contains("changed  oe-core"), "{}", run.stdout());
    assert!(run.stdout().contains("(1 commit)"), "{}", run.stdout());
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
    build
        .rtbuild(["lock", "--machine", MACHINE])
        .run()
        .stdout_contains(LOCK_PATH)
        .stderr_is(&build.locked())
        .success();
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
        .ignore_stdout()
        .stderr_is(&build.installed())
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
    build
        .rtbuild(["lock", "--machine", MACHINE])
        .run()
        .stdout_contains(LOCK_PATH)
        .stderr_is(&build.locked())
        .success();
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
    build
        .rtbuild(["lock", "--machine", MACHINE])
        .run()
        .stdout_contains(LOCK_PATH)
        .stderr_is(&build.locked())
        .success();
    // Upstream rewrites history: the pinned commit leaves the branch.
    let oe = build.fixtures.repo("oe-core");
    git(&oe, &["commit", "-q", "--amend", "-m", "fixture, rewritten"]);
    git(&build.work().join("oe-core"), &["fetch", "-q", "origin"]);
    let run = build
        .rtbuild(["lock", "--check", "--machine", MACHINE])
        .run()
        .stderr_is(&build.one_repo_does_not_match())
        .code_is(1);
    assert!(
        run.stdout().contains("FAIL     oe-core")
            && run.stdout().contains("pinned commit is not on branch wrynose"),
        "{}",
        run.stdout()
    );
    let json = build
        .rtbuild(["--json", "lock", "--check", "--machine", MACHINE])
        .run()
        .stderr_is(&build.one_repo_does_not_match())
        .code_is(1)
        .json();
    let oe_check =
        json["repos"].as_array().unwrap().iter().find(|r| r["repo"] == "oe-core").unwrap();
    assert_eq!(oe_check["problems"][0]["kind"], "not-on-branch");
    assert_eq!(json["passed"], false);
}

/// Commits `n` new files to a fixture repo; returns the new head.
fn advance(repo: &Path, what: &str) -> String {
    write(&repo.join(format!("{what}.txt")), &format!("{what}\n"));
    git_commit_all(repo, what);
    head(repo)
}

#[test]
fn real_kas_checks_out_our_pin_over_meta_qcoms_base_lock_after_update() {
    let build = Build::new();
    let base_pin = head(&build.fixtures.repo("bitbake"));
    build
        .rtbuild(["lock", "--machine", MACHINE])
        .run()
        .stdout_contains(LOCK_PATH)
        .stderr_is(&build.locked())
        .success();
    assert_eq!(build.pins(&build.lock_file())["bitbake"]["commit"].as_str().unwrap(), base_pin);
    let newer = advance(&build.fixtures.repo("bitbake"), "bitbake-newer");
    let run = build.rtbuild(["lock", "--machine", MACHINE, "--update", "bitbake"]).run().success();
    assert!(run.stdout().contains("updated  bitbake"), "{}", run.stdout());
    assert!(
        !run.stderr().contains("warning"),
        "our lock wins, nothing to warn about: {}",
        run.stderr()
    );
    // meta-qcom's ci/base.lock.yml still pins the old commit; plain kas moves to ours.
    let base_lock =
        std::fs::read_to_string(build.work().join("meta-qcom/ci/base.lock.yml")).unwrap();
    assert!(base_lock.contains(&base_pin), "{base_lock}");
    build.kas(&["checkout", build.kas_file().to_str().unwrap()]);
    assert_eq!(head(&build.work().join("bitbake")), newer);
    build
        .rtbuild(["lock", "--check", "--machine", MACHINE])
        .run()
        .stderr_is(&build.checked())
        .success()
        .stdout_contains("ok       bitbake");
}

#[test]
fn real_kas_checks_out_an_installed_release_pin_over_meta_qcoms_base_lock() {
    let build = Build::new();
    let oe = build.fixtures.repo("oe-core");
    let base_pin = head(&oe);
    let release_pin = advance(&oe, "oe-core-release");
    advance(&oe, "oe-core-after-release");
    let release = build.path().join("release.lock.yml");
    std::fs::write(
        &release,
        format!("header:\n  version: 14\noverrides:\n  repos:\n    oe-core:\n      commit: {release_pin}\n"),
    )
    .unwrap();
    build
        .rtbuild(["lock", "--machine", MACHINE, "--install", release.to_str().unwrap()])
        .run()
        .ignore_stdout()
        .stderr_is(&build.installed())
        .success();
    build.kas(&["checkout", build.kas_file().to_str().unwrap()]);
    assert_ne!(release_pin, base_pin);
    assert_eq!(head(&build.work().join("oe-core")), release_pin);
    // `kas dump` agrees: the merged configuration carries our commit.
    let dump = build.kas(&["dump", build.kas_file().to_str().unwrap()]);
    let merged: serde_yaml::Value = serde_yaml::from_slice(&dump.stdout).unwrap();
    assert_eq!(
        merged["overrides"]["repos"]["oe-core"]["commit"].as_str(),
        Some(release_pin.as_str())
    );
    // Generating again with the same inputs keeps the lock and its include.
    let url = build.fixtures.url("meta-qcom");
    Test::new()
        .cwd(build.path())
        .args(["generate", "--machine", MACHINE, "--meta-qcom-url", &url])
        .run()
        .ignore_stdout()
        .stderr_is(&build.generated_unchanged())
        .success();
    assert!(std::fs::read_to_string(build.lock_file()).unwrap().contains(&release_pin));
    build.kas(&["checkout", build.kas_file().to_str().unwrap()]);
    assert_eq!(head(&build.work().join("oe-core")), release_pin);
}
