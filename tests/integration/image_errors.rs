//! `rtbuild image` refusing to start: missing or too-old kas, bad input, unwritable folders.
//! Each is one clear error with the right exit code, and nothing is generated.

use crate::support::fixtures::write_executable;
use crate::support::harness::Test;

/// No kas is a host not set up for building: exit 2 with the fix, as the preflight's findings.
#[test]
fn image_without_kas_says_how_to_install_it() {
    let run = Test::new()
        .args(["image", "--machine", "rb3gen2-core-kit"])
        .env("PATH", "/usr/bin:/bin")
        .run()
        .code_is(2);
    assert_eq!(
        run.stderr(),
        "error: kas was not found on PATH; install it with `pip install kas==5.5` (or `pipx install \
         kas==5.5`), or run `rtbuild setup` to create a venv with it, then put it on PATH or pass \
         --kas PATH\n"
    );
    run.nothing_written("rtbuild");
}

#[test]
fn image_with_a_missing_kas_path_names_it() {
    Test::new()
        .args(["image", "--machine", "rb3gen2-core-kit", "--kas", "/nonexistent/kas"])
        .run()
        .code_is(2)
        .stderr_contains(
            "error: kas was not found on /nonexistent/kas; install it with `pip install kas==5.5`",
        )
        .nothing_written("rtbuild");
}

#[test]
fn image_with_fake_old_kas_is_refused() {
    let test = Test::new();
    let bin = test.path().join("bin");
    write_executable(
        &bin.join("kas"),
        "#!/bin/sh\n# FAKE kas: only answers --version, as kas 4.0 did\necho 'kas 4.0 (configuration format version 14, earliest compatible version 1)'\n",
    );
    let run =
        test.path_prepend(&bin).args(["image", "--machine", "rb3gen2-core-kit"]).run().code_is(2);
    let want = format!(
        "error: kas 4.0 is too old; rtbuild needs kas 4.8 or newer (found {}); install it with",
        bin.join("kas").display()
    );
    assert!(run.stderr().starts_with(&want), "{}", run.stderr());
    run.nothing_written("rtbuild");
}

#[test]
fn image_for_an_unknown_machine_is_an_input_error() {
    let run = Test::new().args(["image", "--machine", "qcs649", "--dry-run"]).run().code_is(2);
    assert!(run.stderr().starts_with("error: unknown machine `qcs649`"), "{}", run.stderr());
    assert_eq!(run.stderr().lines().count(), 1, "{}", run.stderr());
    run.nothing_written("rtbuild");
}

#[test]
fn image_bad_pass_through_values_are_input_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["--target", "img;id"], "bad --target `img;id`; a recipe name such as"),
        (&["--task", "compile id"], "bad --task `compile id`; a task name such as"),
        (&["--bitbake-args", "-k $(id)"], "bad --bitbake-args `$(id)`;"),
        (&["--sstate-mirror", "https://x/\"a"], "bad --sstate-mirror `https://x/\\\"a`;"),
        (
            &["--hashserv", "somewhere"],
            "bad --hashserv `somewhere`; expected auto, none or HOST:PORT",
        ),
        (&["--prserv", "host"], "bad --prserv `host`; expected HOST:PORT"),
        (
            &["--premirror", "file://relative"],
            "bad --premirror `file://relative`; expected file:///ABSOLUTE/PATH",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["image", "--machine", "rb3gen2-core-kit", "--dry-run"];
        args.extend(extra.iter());
        let run = Test::new().args(args).run().code_is(2);
        assert!(run.stderr().starts_with(&format!("error: {want}")), "{extra:?}: {}", run.stderr());
        assert_eq!(run.stderr().lines().count(), 1, "{}", run.stderr());
        run.nothing_written("rtbuild");
    }
}

#[test]
fn image_with_fake_kas_into_an_unwritable_folder_fails_clearly() {
    let test = Test::new().unprivileged().file("blocker", "a file, not a folder\n");
    let kas = test.path().join("bin/kas");
    write_executable(
        &kas,
        "#!/bin/sh\n# FAKE kas\necho 'kas 5.5 (configuration format version 23)'\n",
    );
    let out = test.path().join("blocker/rb3gen2-core-kit");
    let run = test
        .args(["image", "--machine", "rb3gen2-core-kit", "--kas", kas.to_str().unwrap(), "--out"])
        .args([out.to_str().unwrap()])
        .run();
    let blocker = run.path().join("blocker");
    // A file where a folder of --out must be is bad input, refused before anything is made.
    let run = run.code_is(2);
    assert_eq!(
        run.stderr(),
        format!(
            "error: --out `{}`: `{}` is a file, not a folder; pass a folder (it is created when missing)\n",
            out.display(),
            blocker.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "a file, not a folder\n");
}

#[test]
fn image_when_kas_cannot_fetch_shows_kas_last_lines() {
    // The folder exists (so the preflight's repository check passes) but is no git repository,
    // so kas fails to clone it.
    let test = Test::new().unprivileged().file("not-a-meta-qcom/README", "not a repository\n");
    let missing = format!("file://{}/not-a-meta-qcom", test.path().display());
    let run = test
        .path_prepend(crate::support::harness::venv().join("bin"))
        .args(["image", "--plain", "--machine", "rb3gen2-core-kit", "--meta-qcom-url", &missing])
        .run()
        .code_is(1);
    let stderr = run.stderr();
    assert!(
        stderr.contains("error: build of qcom-multimedia-image for rb3gen2-core-kit failed"),
        "{stderr}"
    );
    assert!(stderr.contains("last lines of output (exit code"), "{stderr}");
    assert!(stderr.contains("not-a-meta-qcom"), "{stderr}");
    assert_eq!(run.stdout(), "");
}
