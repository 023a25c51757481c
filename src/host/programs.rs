//! Finding a program the way a shell does, without running one.

use std::ffi::OsStr;
use std::path::PathBuf;

/// The first executable file called `name` in the `PATH`-style list `path`.
pub(crate) fn find_program(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?).map(|dir| dir.join(name)).find(|candidate| {
        candidate
            .metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    })
}
