//! Writing `run.json` ([`RunRecord`], defined in `crate::formats::run_json`) during a run: one
//! writer at a time, and none after the second Ctrl-C has taken the file over.

use std::path::Path;

use crate::files::write::WriteError;
pub(super) use crate::formats::run_json::FILE;
use crate::formats::run_json::RunRecord;

/// Every write of `run.json` holds this; the second Ctrl-C takes it for good (see [`freeze`]).
static WRITES: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Writes `record` to `dir/run.json` atomically, unless the file is frozen (then it blocks
/// until the process exits).
pub(super) fn write(dir: &Path, record: &RunRecord) -> Result<(), WriteError> {
    let _one_writer = WRITES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    write_unguarded(dir, record)
}

/// Writes `record` to `dir/run.json` through a temporary file and a rename, so a reader (or a
/// crash) never sees half of it. The caller holds [`freeze`]'s guard, or is [`write`].
pub(crate) fn write_unguarded(dir: &Path, record: &RunRecord) -> Result<(), WriteError> {
    let path = dir.join(FILE);
    let text =
        record.to_text().map_err(|e| WriteError::Io { path: path.clone(), cause: e.into() })?;
    crate::files::write::write_atomic(&path, text.as_bytes(), false)
}

/// Stops the run loop from writing `run.json` while (and after) the second Ctrl-C finishes it:
/// every later [`write`] blocks until the process exits. The caller writes with
/// [`write_unguarded`] while it holds the guard.
pub(super) fn freeze() -> std::sync::MutexGuard<'static, ()> {
    WRITES.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reads the `run.json` in `dir`.
pub(super) fn read(dir: &Path) -> Option<RunRecord> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    RunRecord::parse(&text).ok()
}
