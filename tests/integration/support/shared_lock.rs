//! Locks that hold across the test processes `.ci/test` runs side by side: a mutex for the
//! threads of one process and an exclusive `flock` on a file under `CARGO_TARGET_TMPDIR` for the
//! other processes. Which process runs a test then decides only how fast the suite is, never
//! whether two tests that must not overlap do.

use std::fs::{File, OpenOptions};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Held until dropped: the file's lock is released when the file is closed.
pub(crate) struct SharedLock {
    _file: File,
    _threads: MutexGuard<'static, ()>,
}

/// Takes `threads` (this process's) and then `<CARGO_TARGET_TMPDIR>/<name>.lock` (every
/// process's), waiting for both.
pub(crate) fn hold(threads: &'static Mutex<()>, name: &str) -> SharedLock {
    let guard = threads.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let path = dir.join(format!("{name}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
    SharedLock { _file: file, _threads: guard }
}
