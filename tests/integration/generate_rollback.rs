//! Issue 13 item 5: a generate that fails part-way leaves every file exactly as it was. The
//! reproducer runs as the unprivileged test user (root may write anywhere): the user owns the
//! generated layer's folders but cannot write the output folder's top level, where the kas
//! file, the plan and the manifest live.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::harness::{Test, Unprivileged};
use crate::support::project::generated;

/// Every file and folder under `dir` with its bytes and mode.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, u32)> {
    let mut entries: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .map(|e| {
            let meta = e.metadata().unwrap();
            let bytes = if meta.is_file() { std::fs::read(e.path()).unwrap() } else { Vec::new() };
            (e.path().to_path_buf(), bytes, meta.permissions().mode())
        })
        .collect();
    entries.sort();
    entries
}

#[test]
fn a_generate_that_cannot_write_the_top_level_changes_nothing_as_an_unprivileged_user() {
    let user = Unprivileged::get();
    let root = tempfile::Builder::new().prefix("rtbuild-rollback").tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = root.path().join("out");
    std::fs::create_dir(&out).unwrap();
    user.own(&out);
    let generate = |extra: &[&str]| {
        Test::new()
            .unprivileged()
            .args(["generate", "--machine", "rb3gen2-core-kit", "--out"])
            .args([&out])
            .args(extra)
            .run()
            .ignore_stdout()
    };
    let heading =
        "rb3gen2-core-kit (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)";
    let shown = out.display().to_string();
    generate(&[]).stderr_is(&generated(heading, "rb3gen2-core-kit", &shown, &[])).success();
    let kas = std::fs::read_to_string(out.join("rb3gen2-core-kit-rt.yml")).unwrap();
    assert!(kas.contains("QCOM_RT_CPU:forcevariable = \"7\""), "{kas}");

    // The top level now belongs to root; the layer's folders stay the user's.
    std::process::Command::new("chown").arg("0:0").arg(&out).status().unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = snapshot(&out);
    // One line naming the file that could not be written (the first one at the top level), not
    // the temporary file beside it; exit 1, as a write error is (not the user's input).
    generate(&["--rt-cpus", "6-7"]).code_is(1).stderr_is(&format!(
        "  Generating rb3gen2-core-kit (RT CPUs 6-7, housekeeping 0-5, qcom-distro, qcom-multimedia-image)\n\
         error: cannot write {shown}/rb3gen2-core-kit-rt.yml: Permission denied (os error 13); nothing was changed, make sure you may write to that folder\n"
    ));
    // Every file as it was, and no temporary file left (the snapshot lists every entry).
    assert_eq!(snapshot(&out), before, "a failed generate changed the output folder");

    // The next generate with the original inputs finds nothing to do: no "edited by hand".
    generate(&[])
        .stderr_is(&format!(
            "  Generating {heading}\n   Generated {shown}: 0 new, 0 updated, 0 removed, 9 unchanged\n"
        ))
        .success();
    assert_eq!(snapshot(&out), before);
}
