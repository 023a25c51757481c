//! Whether the output folder can be written, checked before anything is generated.

use std::path::Path;

use super::error::BuildError;

/// Fails early, before anything is generated, when `out` cannot be created or written: its
/// nearest existing ancestor must be a folder rtbuild can create files in.
pub(crate) fn check_writable(out: &Path) -> Result<(), BuildError> {
    let unwritable =
        |path: &Path, cause| BuildError::Unwritable { path: path.to_path_buf(), cause };
    let Some(existing) = out.ancestors().find(|p| p.exists()) else { return Ok(()) };
    if !existing.is_dir() {
        let source = std::io::Error::new(std::io::ErrorKind::NotADirectory, "a file is in the way");
        return Err(unwritable(existing, source));
    }
    // Created through std: tempfile's own creation adds ` at path "/x/.rtbuild-write-testAbC12"`
    // to its errors, naming the probe file where the message names the folder.
    tempfile::Builder::new()
        .prefix(".rtbuild-write-test")
        .make_in(existing, |path| {
            std::fs::OpenOptions::new().write(true).create_new(true).open(path)
        })
        .map(drop)
        .map_err(|source| unwritable(existing, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_in_the_way_is_reported_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        crate::files::write::fixture(dir.path().join("blocker"), "x").unwrap();
        let err = check_writable(&dir.path().join("blocker/m")).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "cannot write {}/blocker: a file is in the way",
                dir.path().display()
            )),
            "{err}"
        );
        check_writable(&dir.path().join("new/m")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A folder that cannot take a new file (`/proc/1` refuses one even to root) is named with
    /// the system's own error, not the probe file rtbuild tried to create in it.
    #[test]
    fn an_unwritable_folder_is_named_not_the_probe_file() {
        let system = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open("/proc/1/.rtbuild-probe")
            .unwrap_err();
        let err = check_writable(Path::new("/proc/1/out")).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("cannot write /proc/1: {system}; choose a writable output folder with --out")
        );
    }
}
