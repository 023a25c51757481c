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
    tempfile::Builder::new()
        .prefix(".rtbuild-write-test")
        .tempfile_in(existing)
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
}
