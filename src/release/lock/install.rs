//! Putting a lock where kas finds it: `<stem>.lock.yml` beside the kas file.
//!
//! [`install`] is what `rtbuild image --lock FILE` calls: it takes a lock in either form (kas's
//! `overrides:` or meta-qcom-releases' full `repos:` form), checks it, and writes it in kas's form
//! beside the generated kas file. No copying into meta-qcom's `ci/` is needed: kas reads
//! `<stem>.lock.yml` beside every config file it loads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::kas::declared_repos;
use super::names::{known_with, validate_names};
use super::{LockError, LockFile, LockForm};

/// The comment rtbuild writes at the top of its lock files.
const COMMENT: &str = "Pins every repo of the kas file beside it to a full commit.\n\
Written by `rtbuild lock`; move pins with `rtbuild lock --update [REPO...]`.\n\
kas reads it by itself: `kas build <machine>-rt.yml` uses these commits.";

/// What a lock without pins says (written by `rtbuild generate`, because the generated kas file
/// names its lock as an include and kas needs every include to exist).
const PLACEHOLDER: &str = "No pins yet: `rtbuild lock` pins every repo of the kas file beside it here, and\n\
`rtbuild lock --install FILE` or `rtbuild image --lock FILE` puts a release's pins here.\n\
The kas file includes this file last, so its pins win over meta-qcom's ci/base.lock.yml.";

/// Writes the pin-less lock at `path` unless a lock is already there (it is never overwritten);
/// true when it was written.
pub(crate) fn write_placeholder(path: &Path) -> Result<bool, LockError> {
    if path.exists() {
        return Ok(false);
    }
    let text = LockFile::new(BTreeMap::new()).to_kas_yaml(PLACEHOLDER);
    crate::files::write::write_atomic(path, text.as_bytes(), false)?;
    Ok(true)
}

/// True when `path` is a lock without pins (the placeholder, or a lock with an empty
/// `overrides: repos:`): there is nothing to keep from it.
pub(crate) fn is_placeholder(path: &Path) -> bool {
    let Ok(text) = crate::files::input::read_to_string(path, crate::files::input::TEXT_LIMIT)
    else {
        return false;
    };
    let Ok(doc) = crate::text::yaml::from_str::<serde_yaml::Value>(&text) else { return false };
    doc.get("repos").is_none()
        && doc
            .get("overrides")
            .and_then(|o| o.get("repos"))
            .is_some_and(|r| r.as_mapping().is_some_and(serde_yaml::Mapping::is_empty))
}

/// kas's lock file name for `kas_file`: `dir/x.yml` → `dir/x.lock.yml`.
pub(crate) fn lock_path_for(kas_file: &Path) -> PathBuf {
    let stem = kas_file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = kas_file.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    kas_file.with_file_name(format!("{stem}.lock{ext}"))
}

/// What [`install`] did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct InstallOutcome {
    /// The lock file kas will read.
    pub lock_file: PathBuf,
    /// The form of the source file.
    pub source_form: LockForm,
    /// Number of repos pinned.
    pub repos: usize,
    /// False when the lock in place already had the same pins.
    pub written: bool,
}

/// Installs the lock at `source` (either form) as `<stem>.lock.yml` beside `kas_file`, in kas's
/// form. Repo names are checked against meta-qcom's names and the kas file's own `repos:`;
/// `branch` and `url` from the full form are kept as overrides, so the build uses the branch and
/// URL the release was made from. Nothing is written when the source is bad.
pub(crate) fn install(source: &Path, kas_file: &Path) -> Result<InstallOutcome, LockError> {
    if !kas_file.is_file() {
        return Err(LockError::NoKasFile { path: kas_file.to_path_buf() });
    }
    let lock = LockFile::read(source)?;
    validate_names(&lock, &known_with(declared_repos(kas_file)), source)?;
    let target = lock_path_for(kas_file);
    let unchanged = target.exists() && LockFile::read(&target).is_ok_and(|t| t.repos == lock.repos);
    if !unchanged {
        write_lock(&target, &lock)?;
    }
    Ok(InstallOutcome {
        lock_file: target,
        source_form: lock.form,
        repos: lock.repos.len(),
        written: !unchanged,
    })
}

/// Writes `lock` in kas's form to `path` atomically (temp file in the same folder, then rename).
pub(super) fn write_lock(path: &Path, lock: &LockFile) -> Result<(), LockError> {
    Ok(crate::files::write::write_atomic(path, lock.to_kas_yaml(COMMENT).as_bytes(), false)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_name_follows_kas() {
        assert_eq!(lock_path_for(Path::new("r/m/m-rt.yml")), Path::new("r/m/m-rt.lock.yml"));
        assert_eq!(lock_path_for(Path::new("a.json")), Path::new("a.lock.json"));
    }

    #[test]
    fn installs_full_form_as_overrides_keeping_branch_and_url() {
        let dir = tempfile::tempdir().unwrap();
        let kas = dir.path().join("m-rt.yml");
        crate::files::write::fixture(&kas, "header:\n  version: 14\nrepos:\n  rtbuild:\n").unwrap();
        let src = dir.path().join("lock.yml");
        crate::files::write::fixture(
            &src,
            "repos:\n  meta-qcom: {branch: wrynose, commit: ef0004df267743cc89d6a09bc724bc99ff541c01, url: https://github.com/qualcomm-linux/meta-qcom}\n",
        )
        .unwrap();
        let outcome = install(&src, &kas).unwrap();
        assert_eq!(outcome.source_form, LockForm::Full);
        let text = std::fs::read_to_string(dir.path().join("m-rt.lock.yml")).unwrap();
        assert!(text.contains("overrides:\n  repos:\n    meta-qcom:\n      commit: ef0004df267743cc89d6a09bc724bc99ff541c01\n      branch: wrynose\n      url: https://github.com/qualcomm-linux/meta-qcom\n"), "{text}");
        assert!(!install(&src, &kas).unwrap().written);
    }

    #[test]
    fn the_placeholder_pins_nothing_and_is_never_written_over_a_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m-rt.lock.yml");
        assert!(write_placeholder(&path).unwrap());
        assert!(is_placeholder(&path));
        let err = LockFile::read(&path).unwrap_err().to_string();
        assert!(err.ends_with("pins no repos; run `rtbuild lock` to pin every repo"), "{err}");
        let sha = "ef0004df267743cc89d6a09bc724bc99ff541c01";
        crate::files::write::fixture(
            &path,
            format!("overrides:\n  repos:\n    oe-core: {{commit: {sha}}}\n"),
        )
        .unwrap();
        assert!(!is_placeholder(&path));
        assert!(!write_placeholder(&path).unwrap());
        assert!(std::fs::read_to_string(&path).unwrap().contains(sha));
    }

    #[test]
    fn bad_source_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let kas = dir.path().join("m-rt.yml");
        crate::files::write::fixture(&kas, "header:\n  version: 14\n").unwrap();
        let src = dir.path().join("lock.yml");
        crate::files::write::fixture(
            &src,
            "repos:\n  openembedded-core: {commit: ef0004df267743cc89d6a09bc724bc99ff541c01}\n",
        )
        .unwrap();
        let err = install(&src, &kas).unwrap_err().to_string();
        assert!(
            err.ends_with("unknown repo `openembedded-core`; meta-qcom calls it `oe-core`"),
            "{err}"
        );
        assert!(!dir.path().join("m-rt.lock.yml").exists());
    }
}
