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
    crate::files::write::fixture(dir.path().join("b"), "edited\n").unwrap();
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
    crate::files::write::fixture(dir.path().join("a"), "mine\n").unwrap();
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
    crate::files::write::fixture(dir.path().join("blocker"), "mine\n").unwrap();
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

/// Issue 34 item 1: `write_atomic` replaced whatever was at the path (as root, `/dev/null`).
/// Only a regular file or nothing is replaced; a FIFO with a reader is written into, one
/// without is refused at once; folders, sockets and symlinks to files are refused, and the
/// thing at the path is left as it was.
#[test]
fn write_atomic_replaces_only_files_and_writes_into_fifos() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);

    // A regular file and nothing: replaced, with the mode asked for.
    fixture(at("old.html"), "old").unwrap();
    write_atomic(&at("old.html"), b"new", false).unwrap();
    write_atomic(&at("sub/new.html"), b"new", false).unwrap();
    assert_eq!(std::fs::read(at("old.html")).unwrap(), b"new");
    assert_eq!(std::fs::read(at("sub/new.html")).unwrap(), b"new");

    // A FIFO with a reader gets the bytes and stays a FIFO.
    let fifo = at("pipe");
    rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            std::fs::File::open(fifo).unwrap().read_to_end(&mut got).unwrap();
            got
        })
    };
    // The reader opens the FIFO when its thread runs: until then, nobody reads it.
    let started = std::time::Instant::now();
    loop {
        match write_atomic(&fifo, &vec![b'x'; 300_000], false) {
            Ok(()) => break,
            Err(WriteError::NotWritable { .. }) if started.elapsed().as_secs() < 10 => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(reader.join().unwrap().len(), 300_000, "the reader got every byte");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

    // A FIFO nobody reads: refused at once, not waited on. A FIFO that was never opened: a child
    // another test thread forks while a read end is open holds a copy of it until its exec, which
    // under load made the FIFO above still have a reader here now and then.
    let unread = at("unread-pipe");
    rustix::fs::mkfifoat(rustix::fs::CWD, &unread, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
    let err = write_atomic(&unread, b"x", false).unwrap_err().to_string();
    assert!(err.ends_with("no process reads it (a FIFO or socket without a reader); start its reader first, or pass the name of a file"), "{err}");

    // A symlink to a FIFO is followed on purpose; to a file it is refused, link and file kept.
    let to_file = at("link.html");
    std::os::unix::fs::symlink(at("old.html"), &to_file).unwrap();
    let err = write_atomic(&to_file, b"x", false).unwrap_err().to_string();
    assert!(err.contains("is a symlink to the file `"), "{err}");
    assert!(std::fs::symlink_metadata(&to_file).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(at("old.html")).unwrap(), b"new");
    let dangling = at("dangling");
    std::os::unix::fs::symlink("gone", &dangling).unwrap();
    let err = write_atomic(&dangling, b"x", false).unwrap_err().to_string();
    assert!(err.ends_with("it is a symlink to `gone`, which does not exist; pass the file itself, or remove the link"), "{err}");
    assert!(!at("gone").exists());

    // A folder and a socket: refused, kept.
    let err = write_atomic(dir.path(), b"x", false).unwrap_err().to_string();
    assert!(err.ends_with("it is a folder; pass the name of a file to write"), "{err}");
    let socket = at("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let err = write_atomic(&socket, b"x", false).unwrap_err().to_string();
    assert!(
        err.ends_with("it is a socket, which cannot take a file; pass the name of a file"),
        "{err}"
    );
    assert!(std::fs::symlink_metadata(&socket).unwrap().file_type().is_socket());
    assert!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .all(|e| { !e.unwrap().file_name().to_string_lossy().starts_with(".rtbuild-") }),
        "no temp file left"
    );
}

/// Issue 34 item 15: a full disk said "make sure you may write to that folder".
#[test]
fn a_full_disk_is_named_as_such() {
    let full = WriteError::Io {
        path: "/srv/out/report.html".into(),
        cause: std::io::Error::from_raw_os_error(rustix::io::Errno::NOSPC.raw_os_error()),
    };
    let text = full.to_string();
    assert!(
        text.ends_with("the disk is full (or over quota); free some space and run again"),
        "{text}"
    );
    let denied = WriteError::Io {
        path: "/srv/out/report.html".into(),
        cause: std::io::Error::from_raw_os_error(rustix::io::Errno::ACCESS.raw_os_error()),
    };
    assert!(denied.to_string().ends_with("make sure you may write to that folder"));
}
