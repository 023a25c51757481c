//! One writer per output folder: `generate` holds an exclusive `flock` on the folder itself
//! while it writes, so two runs into the same folder cannot both report success with one
//! losing its writes; the second is refused (exit 2) naming the holder's pid, read from
//! `/proc/locks`. Nothing is left in the folder: the lock is on its descriptor.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;

/// Held while a run writes into its output folder; dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct FolderLock {
    _dir: std::fs::File,
}

/// Another rtbuild writes into the folder.
#[derive(Debug, thiserror::Error)]
#[error(
    "output folder {} is being written by another rtbuild{}; wait for it to finish, or pass another --out",
    .dir.display(),
    .holder.map_or_else(String::new, |pid| format!(" (pid {pid})"))
)]
pub(crate) struct Busy {
    pub dir: PathBuf,
    pub holder: Option<u32>,
}

/// Locks `dir` (which must exist) for writing, without waiting.
pub(crate) fn lock(dir: &Path) -> std::io::Result<Result<FolderLock, Busy>> {
    let file = std::fs::File::open(dir)?;
    match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Ok(FolderLock { _dir: file })),
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let inode = file.metadata()?.ino();
            Ok(Err(Busy { dir: dir.to_path_buf(), holder: holder(inode) }))
        }
        Err(errno) => Err(errno.into()),
    }
}

/// The pid holding a `flock` on inode `inode`, from `/proc/locks`
/// (`1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF`).
fn holder(inode: u64) -> Option<u32> {
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, id) = (fields.get(1)?, fields.get(4)?, fields.get(5)?);
        let file_inode: u64 = id.rsplit(':').next()?.parse().ok()?;
        (*kind == "FLOCK" && file_inode == inode).then(|| pid.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path()).unwrap().unwrap();
        let busy = lock(dir.path()).unwrap().unwrap_err();
        assert_eq!(busy.holder, Some(std::process::id()));
        assert!(busy.to_string().contains(&format!("(pid {})", std::process::id())), "{busy}");
        drop(first);
        lock(dir.path()).unwrap().unwrap();
    }
}
