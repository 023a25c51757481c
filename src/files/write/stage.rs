//! All-or-nothing application of a decided write: every new file is first staged as a temp file
//! beside its target (which proves each folder can be written, and creates missing folders),
//! every folder that loses a file is probed the same way, and only then are the staged files
//! renamed into place and stale files moved aside. A failure anywhere undoes what was done:
//! staged files and the folders created for them are removed, replaced files get their old
//! bytes and mode back, moved-aside files come back. A failed generate leaves every file
//! exactly as it was.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::TempPath;

use super::{WriteError, io, temp_beside};

/// One change to make.
#[derive(Debug)]
pub(super) enum Op<'a> {
    Write { path: PathBuf, bytes: &'a [u8], executable: bool },
    Remove { path: PathBuf },
}

/// A file's content and mode before the change, to put back.
struct Old {
    bytes: Vec<u8>,
    mode: u32,
}

/// What the commit phase did to one target, for undoing it.
enum Done {
    Wrote { path: PathBuf, old: Option<Old> },
    MovedAside { path: PathBuf, aside: PathBuf },
}

/// Applies `ops` with `std::fs::rename`.
pub(super) fn apply(ops: Vec<Op<'_>>) -> Result<(), WriteError> {
    apply_with(ops, &mut |from, to| std::fs::rename(from, to))
}

/// Applies `ops`, renaming with `rename` (tests inject a failing one).
pub(super) fn apply_with(
    ops: Vec<Op<'_>>,
    rename: &mut dyn FnMut(&Path, &Path) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let staged = match stage(&ops, &mut created_dirs) {
        Ok(staged) => staged,
        Err(err) => {
            remove_dirs(&created_dirs);
            return Err(err);
        }
    };
    let mut done: Vec<Done> = Vec::new();
    let mut result = Ok(());
    for (op, temp) in ops.iter().zip(staged) {
        if let Err(err) = commit_one(op, temp, rename, &mut done) {
            result = Err(err);
            break;
        }
    }
    if result.is_err() {
        for step in done.into_iter().rev() {
            undo(step, rename);
        }
        remove_dirs(&created_dirs);
        return result;
    }
    for step in done {
        if let Done::MovedAside { aside, .. } = step {
            let _ = std::fs::remove_file(aside);
        }
    }
    Ok(())
}

/// Stages every write as a temp file beside its target, and probes each folder a file will be
/// removed from with an empty temp file. Returns one staged temp (or probe) per op.
fn stage(ops: &[Op<'_>], created_dirs: &mut Vec<PathBuf>) -> Result<Vec<TempPath>, WriteError> {
    let mut staged = Vec::with_capacity(ops.len());
    for op in ops {
        let (path, bytes, executable) = match op {
            Op::Write { path, bytes, executable } => (path, *bytes, *executable),
            Op::Remove { path } => (path, &[][..], false),
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        create_dirs(dir, created_dirs)?;
        staged.push(temp_beside(path, bytes, executable)?.into_temp_path());
    }
    Ok(staged)
}

/// Creates `dir` and its missing parents, recording each one created (outermost first).
fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> Result<(), WriteError> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    for d in missing.into_iter().rev() {
        if let Some(file) = d.parent().filter(|p| p.exists() && !p.is_dir()) {
            let source = std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a folder");
            return Err(WriteError::Io { path: file.to_path_buf(), cause: source });
        }
        std::fs::create_dir(d).map_err(io(d))?;
        created.push(d.to_path_buf());
    }
    Ok(())
}

fn commit_one(
    op: &Op<'_>,
    temp: TempPath,
    rename: &mut dyn FnMut(&Path, &Path) -> std::io::Result<()>,
    done: &mut Vec<Done>,
) -> Result<(), WriteError> {
    match op {
        Op::Write { path, .. } => {
            // A FIFO or device replaced with --force is not kept for a rollback (it would
            // never be read to the end).
            let old = match super::current(path).ok().flatten() {
                Some(bytes) => {
                    let mode = std::fs::metadata(path).map_err(io(path))?.permissions().mode();
                    Some(Old { bytes, mode })
                }
                None => None,
            };
            rename(&temp, path).map_err(io(path))?;
            // The temp file is now the target; it must not be deleted.
            let _ = temp.keep();
            done.push(Done::Wrote { path: path.clone(), old });
        }
        Op::Remove { path } => {
            // The probe's name is free and in the same folder: the file moves there, and is
            // deleted only once everything else succeeded.
            let aside = temp.to_path_buf();
            rename(path, &aside).map_err(io(path))?;
            let _ = temp.keep();
            done.push(Done::MovedAside { path: path.clone(), aside });
        }
    }
    Ok(())
}

/// Undoes one committed step (best effort: the folder was writable a moment ago).
fn undo(step: Done, rename: &mut dyn FnMut(&Path, &Path) -> std::io::Result<()>) {
    match step {
        Done::Wrote { path, old: None } => {
            let _ = std::fs::remove_file(path);
        }
        Done::Wrote { path, old: Some(old) } => {
            let dir = path.parent().unwrap_or(Path::new("."));
            let restored = tempfile::Builder::new().prefix(".rtbuild-").tempfile_in(dir).and_then(
                |mut temp| {
                    temp.write_all(&old.bytes)?;
                    temp.as_file().sync_all()?;
                    std::fs::set_permissions(
                        temp.path(),
                        std::fs::Permissions::from_mode(old.mode),
                    )?;
                    Ok(temp.into_temp_path())
                },
            );
            if let Ok(temp) = restored
                && rename(&temp, &path).is_ok()
            {
                let _ = temp.keep();
            }
        }
        Done::MovedAside { path, aside } => {
            let _ = rename(&aside, &path);
        }
    }
}

/// Removes the folders created for staging, innermost first, when they are empty again.
fn remove_dirs(created: &[PathBuf]) {
    for dir in created.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
}
