//! Issue 13 item 1: a folder path that reaches kas or BitBake (the output folder, the git work
//! tree around it, the current folder, the work and build folders under it, `DL_DIR`,
//! `SSTATE_DIR`) is validated like every other value. kas writes the layer path into
//! `BBLAYERS` in `bblayers.conf`, where BitBake runs `${@…}` as Python and splits at
//! whitespace; kas splits its config argument at `:`. Each attempt is refused with exit 2, one
//! line, nothing written, and the payload never runs (`rtbuild image` is checked with a
//! recording FAKE kas that must never be started).

use std::path::Path;

use crate::support::fixtures::{git, write_executable};
use crate::support::harness::Test;

/// The reproducer's payload: creates `PWNED` in the folder BitBake (or anything) runs it in.
const PAYLOAD: &str = "${@os.system('touch PWNED')}";

const FIX: &str = "; use a folder whose path has only letters, digits and `-_./+@%,`";

/// No `PWNED` anywhere under `dir`.
fn not_pwned(dir: &Path) {
    let hits: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "PWNED")
        .map(|e| e.path().to_path_buf())
        .collect();
    assert!(hits.is_empty(), "the payload ran: {hits:?}");
    assert!(!Path::new("PWNED").exists());
}

/// Only `keep` (relative names) exist directly in `dir`.
fn only(dir: &Path, keep: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = keep.iter().map(ToString::to_string).collect();
    want.sort();
    assert_eq!(names, want, "something was written in {}", dir.display());
}

#[test]
fn generate_refuses_an_output_folder_that_would_run_python_in_bitbake() {
    let test = Test::new();
    let out = test.path().join(format!("o{PAYLOAD}x"));
    let run = test.args(["generate", "--machine", "rb3gen2-core-kit", "--out"]).args([&out]).run();
    let run = run.code_is(2);
    let want = format!(
        "error: invalid output folder `{}`; kas and BitBake read it unquoted",
        out.display().to_string().escape_debug()
    );
    let stderr = run.stderr();
    let last = stderr.lines().last().unwrap();
    assert!(last.starts_with(&want), "{stderr}");
    assert!(last.ends_with(FIX), "{stderr}");
    only(run.path(), &[]);
    not_pwned(run.path());
}

#[test]
fn generate_refuses_whitespace_quotes_colons_and_control_characters_in_the_output_folder() {
    for name in ["my build", "a\"b", "a'b", "a\\b", "a:b", "tab\tx", "line\nbreak", "{x}", "a$b"] {
        let test = Test::new();
        let out = test.path().join(name);
        let run = test
            .args(["generate", "--machine", "rb3gen2-core-kit", "--out"])
            .args([&out])
            .run()
            .code_is(2);
        let stderr = run.stderr();
        let error: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(error.len(), 1, "{name:?}: {stderr}");
        assert!(error[0].starts_with("error: invalid output folder `"), "{name:?}: {stderr}");
        assert!(error[0].ends_with(FIX), "{name:?}: {stderr}");
        assert!(stderr.lines().count() <= 2, "{name:?}: the raw newline leaked: {stderr}");
        only(run.path(), &[]);
    }
}

#[test]
fn generate_refuses_a_current_folder_and_a_git_top_holding_the_payload() {
    // The default output folder, rtbuild/<machine>, sits in the current folder.
    let test = Test::new();
    let cwd = test.path().join(format!("cwd{PAYLOAD}"));
    std::fs::create_dir(&cwd).unwrap();
    let run = test.cwd(&cwd).args(["generate", "--machine", "rb3gen2-core-kit"]).run().code_is(2);
    assert!(run.stderr().contains("error: invalid output folder `"), "{}", run.stderr());
    only(&cwd, &[]);
    not_pwned(run.path());

    // A git work tree whose top folder holds the payload: kas would use the top as the
    // repository path of the layer.
    let test = Test::new();
    let top = test.path().join(format!("top{PAYLOAD}"));
    std::fs::create_dir(&top).unwrap();
    git(&top, &["init", "-q"]);
    let run = test
        .args(["generate", "--machine", "rb3gen2-core-kit", "--out"])
        .args([top.join("bsp/out")])
        .run()
        .code_is(2);
    assert!(run.stderr().contains("error: invalid output folder `"), "{}", run.stderr());
    only(&top, &[".git"]);
    not_pwned(run.path());
}

#[test]
fn generate_refuses_a_symlink_that_resolves_into_an_unsafe_folder() {
    let test = Test::new();
    let real = test.path().join("real folder");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, test.path().join("link")).unwrap();
    let run = test
        .args(["generate", "--machine", "rb3gen2-core-kit", "--out", "link/out"])
        .run()
        .code_is(2);
    assert!(run.stderr().contains("real folder/out`;"), "{}", run.stderr());
    only(&run.path().join("real folder"), &[]);
}

/// A recording FAKE kas: answers `--version` as kas 5.5 does and records any other call.
fn fake_kas(test: &Test) -> std::path::PathBuf {
    let bin = test.path().join("bin");
    let record = test.path().join("kas-calls");
    write_executable(
        &bin.join("kas"),
        &format!(
            "#!/bin/sh\n# FAKE kas for rtbuild's tests: records its calls, runs nothing.\n\
             if [ \"$1\" = --version ]; then echo 'kas 5.5 (configuration format version 20, earliest compatible version 1)'; exit 0; fi\n\
             echo \"$@\" >>'{}'\n",
            record.display()
        ),
    );
    bin
}

#[test]
fn image_refuses_dl_dir_and_sstate_dir_from_the_environment_before_kas_runs() {
    for (var, value) in [
        ("DL_DIR", format!("/srv/dl{PAYLOAD}")),
        ("SSTATE_DIR", "/srv/sstate cache".to_string()),
        ("DL_DIR", "/srv/dl\"x".to_string()),
    ] {
        let test = Test::new();
        let bin = fake_kas(&test);
        let run = test
            .path_prepend(&bin)
            .env(var, &value)
            .args(["image", "--machine", "rb3gen2-core-kit"])
            .run()
            .code_is(2);
        let want = format!("error: invalid {var} `{}`;", value.escape_debug());
        assert!(run.stderr().contains(&want), "{}", run.stderr());
        assert!(run.stderr().trim_end().ends_with(FIX), "{}", run.stderr());
        assert!(!run.path().join("kas-calls").exists(), "kas ran");
        only(run.path(), &["bin"]);
        not_pwned(run.path());
    }
}

#[test]
fn image_refuses_an_unsafe_output_folder_before_kas_runs() {
    let test = Test::new();
    let bin = fake_kas(&test);
    let out = test.path().join(format!("o{PAYLOAD}x"));
    let run = test
        .path_prepend(&bin)
        .args(["image", "--machine", "rb3gen2-core-kit", "--out"])
        .args([&out])
        .run()
        .code_is(2);
    assert!(run.stderr().contains("error: invalid output folder `"), "{}", run.stderr());
    assert!(!run.path().join("kas-calls").exists(), "kas ran");
    only(run.path(), &["bin"]);
    not_pwned(run.path());
}
