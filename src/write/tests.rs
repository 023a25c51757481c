use std::path::PathBuf;

use std::time::{Duration, SystemTime};

use super::*;

fn tree(files: &[(&str, &str)]) -> Tree {
    let mut tree = Tree::new();
    for (path, text) in files {
        tree.insert(*path, text.as_bytes().to_vec());
    }
    tree
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn second_write_changes_nothing_and_keeps_mtimes() {
    let dir = tempfile::tempdir().unwrap();
    let t = tree(&[("a.yml", "a\n"), ("layer/conf/layer.conf", "b\n")]);
    let first = apply(&t, dir.path(), WriteOptions::default()).unwrap();
    assert_eq!(first.count(Change::Create), 2);
    let past = SystemTime::now() - Duration::from_secs(3600);
    let file = std::fs::File::options().write(true).open(dir.path().join("a.yml")).unwrap();
    file.set_modified(past).unwrap();
    let second = apply(&t, dir.path(), WriteOptions::default()).unwrap();
    assert!(second.is_noop(), "{second:?}");
    assert_eq!(mtime(&dir.path().join("a.yml")), past);
}

#[test]
fn changed_input_updates_and_stale_files_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    apply(&tree(&[("a", "1\n"), ("sub/b", "2\n")]), dir.path(), WriteOptions::default()).unwrap();
    let report = apply(&tree(&[("a", "3\n")]), dir.path(), WriteOptions::default()).unwrap();
    assert_eq!(report.files, vec![("a".into(), Change::Update), ("sub/b".into(), Change::Remove)]);
    assert!(!dir.path().join("sub").exists(), "empty folder left behind");
    assert_eq!(std::fs::read_to_string(dir.path().join("a")).unwrap(), "3\n");
}

#[test]
fn hand_edits_are_refused_without_force_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    apply(&tree(&[("a", "1\n"), ("b", "1\n")]), dir.path(), WriteOptions::default()).unwrap();
    crate::write::fixture(dir.path().join("b"), "edited\n").unwrap();
    let err = apply(&tree(&[("a", "2\n"), ("b", "2\n")]), dir.path(), WriteOptions::default())
        .unwrap_err();
    assert!(matches!(&err, WriteError::HandEdited { path } if path.ends_with("b")), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a")).unwrap(),
        "1\n",
        "a was written before the check"
    );
    let forced = WriteOptions { force: true, dry_run: false };
    apply(&tree(&[("a", "2\n"), ("b", "2\n")]), dir.path(), forced).unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("b")).unwrap(), "2\n");
}

#[test]
fn foreign_files_are_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    crate::write::fixture(dir.path().join("a"), "mine\n").unwrap();
    let err = apply(&tree(&[("a", "gen\n")]), dir.path(), WriteOptions::default()).unwrap_err();
    assert!(matches!(err, WriteError::Foreign { .. }));
}

#[test]
fn dry_run_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let options = WriteOptions { force: false, dry_run: true };
    let report = apply(&tree(&[("a", "1\n")]), dir.path(), options).unwrap();
    assert_eq!(report.count(Change::Create), 1);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn shell_scripts_are_executable_and_others_are_not() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    apply(
        &tree(&[("x.sh", "#!/bin/sh\n"), ("y.conf", "y\n")]),
        dir.path(),
        WriteOptions::default(),
    )
    .unwrap();
    let mode =
        |p: &str| std::fs::metadata(dir.path().join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("x.sh"), 0o755);
    assert_eq!(mode("y.conf"), 0o644);
}

/// Every file under `dir` with its bytes and mode, to compare before and after.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .map(|e| {
            let meta = e.metadata().unwrap();
            let bytes = if meta.is_file() { std::fs::read(e.path()).unwrap() } else { Vec::new() };
            (e.path().to_path_buf(), bytes, meta.permissions().mode())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_failure_at_any_rename_leaves_every_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let first = tree(&[("kas.yml", "rt 7\n"), ("layer/tune.sh", "7\n"), ("layer/old.cfg", "x\n")]);
    apply(&first, dir.path(), WriteOptions::default()).unwrap();
    let before = snapshot(dir.path());
    // Updates two files, creates one in a new folder, removes one, rewrites the manifest.
    let second = tree(&[("kas.yml", "rt 6-7\n"), ("layer/tune.sh", "6-7\n"), ("new/sub/a", "a\n")]);
    let mut ops_seen = 0;
    for fail_at in 0.. {
        let mut calls = 0;
        let mut rename = |from: &Path, to: &Path| {
            calls += 1;
            if calls == fail_at + 1 {
                Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied))
            } else {
                std::fs::rename(from, to)
            }
        };
        let ops = ops_for(&second, dir.path());
        ops_seen = ops.len();
        let result = stage::apply_with(ops, &mut rename);
        if fail_at >= ops_seen {
            assert!(result.is_ok());
            break;
        }
        assert!(result.is_err(), "rename {fail_at} must fail");
        assert_eq!(snapshot(dir.path()), before, "after a failure at rename {fail_at}");
    }
    assert_eq!(ops_seen, 5);
}

/// The ops [`apply`] would hand to the stager for `tree`, manifest last.
fn ops_for<'a>(t: &'a Tree, out: &Path) -> Vec<stage::Op<'a>> {
    let old = super::manifest::load(&out.join(MANIFEST_FILE)).unwrap();
    let plan = decide(t, out, &old, false).unwrap();
    let json: &'static str = Box::leak(super::manifest::of(t).to_json().into_boxed_str());
    ops(t, out, &plan, Some(json.as_bytes()))
}

#[test]
fn a_folder_that_cannot_be_created_stops_before_anything_changes() {
    let dir = tempfile::tempdir().unwrap();
    apply(&tree(&[("a", "1\n")]), dir.path(), WriteOptions::default()).unwrap();
    let before = snapshot(dir.path());
    // `a` is a file, so `a/b` cannot be created; `c` sorts after it and would be written.
    crate::write::fixture(dir.path().join("blocker"), "mine\n").unwrap();
    let before_with_blocker = snapshot(dir.path());
    let err = apply(
        &tree(&[("a", "2\n"), ("blocker/x", "y\n"), ("c", "3\n")]),
        dir.path(),
        WriteOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("; nothing was changed"), "{err}");
    assert_eq!(snapshot(dir.path()), before_with_blocker);
    assert_ne!(before, before_with_blocker);
}
