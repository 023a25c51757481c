//! Folder paths that reach kas and BitBake unquoted: the output folder (kas writes the layer
//! path into `BBLAYERS` in `bblayers.conf`), the git work tree around it (kas's repo path when
//! the kas file sits in one), the work folder (`KAS_WORK_DIR`, the checkouts), the build folder
//! (`TOPDIR`), `DL_DIR` and `SSTATE_DIR`. BitBake expands `${…}` (and runs `${@…}` as Python) in
//! every one of them and splits `BBLAYERS` on whitespace; kas splits its config argument on `:`;
//! task scripts use them unquoted. So such a path may hold only a safe set of characters, both
//! as given (made absolute) and as it resolves through symlinks.

use std::path::{Path, PathBuf};

use super::values::ValueError;

/// The bytes, besides ASCII letters and digits, a path that reaches kas or BitBake may hold.
pub const SAFE_PATH_BYTES: &[u8] = b"-_./+@%,";

/// The fix every refusal names.
const REASON: &str = "kas and BitBake read it unquoted (BitBake runs `${@…}` in it and splits it at whitespace, kas splits at `:`); use a folder whose path has only letters, digits and `-_./+@%,`";

/// Whether `text` is made only of [`SAFE_PATH_BYTES`] and ASCII letters and digits.
pub fn is_safe(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || SAFE_PATH_BYTES.contains(&b))
}

/// Checks `path` (made absolute against the current folder) and its real path; returns the
/// absolute path. `what` names the path in the error (`output folder`, `DL_DIR`, …).
pub fn check(what: &'static str, path: &Path) -> Result<PathBuf, ValueError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    for candidate in [absolute.clone(), real_path(&absolute)] {
        let text = candidate.to_string_lossy();
        let utf8 = candidate.to_str().is_some();
        if !utf8 || !is_safe(&text) {
            return Err(ValueError { what, value: text.into_owned(), reason: REASON.into() });
        }
    }
    Ok(absolute)
}

/// `path` with symlinks resolved as far as it exists, the rest appended.
pub fn real_path(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = path;
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                existing = parent;
            }
            _ => break,
        }
    }
    let mut real = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    for name in missing.iter().rev() {
        real.push(name);
    }
    real
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injection_and_splitting_characters_are_refused() {
        for bad in [
            "/tmp/o${@os.system('touch PWNED')}x",
            "/tmp/my build",
            "/tmp/a\"b",
            "/tmp/a'b",
            "/tmp/a\\b",
            "/tmp/a:b",
            "/tmp/a\nb",
            "/tmp/a\tb",
            "/tmp/{x}",
            "/tmp/$HOME",
            "/tmp/a`b`",
            "/tmp/a;b",
        ] {
            let err = check("output folder", Path::new(bad)).unwrap_err();
            let text = err.to_string();
            assert!(text.starts_with("invalid output folder `"), "{text}");
            assert!(!text.contains('\n'), "{text}");
            assert!(text.contains("; use a folder whose path has only"), "{text}");
        }
    }

    #[test]
    fn ordinary_paths_pass_and_come_back_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rtbuild/rb3gen2-core-kit");
        assert_eq!(check("output folder", &out).unwrap(), out);
        assert!(check("DL_DIR", Path::new("/srv/yocto/downloads-2.0+x@y,z%1")).is_ok());
        assert!(check("output folder", Path::new("relative/out")).unwrap().is_absolute());
    }

    #[test]
    fn a_symlink_into_an_unsafe_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("bad ${x}");
        std::fs::create_dir(&target).unwrap();
        let link = dir.path().join("good");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = check("output folder", &link.join("out")).unwrap_err();
        assert!(err.to_string().contains("bad ${x}/out"), "{err}");
    }
}
