//! Where a build's files live. The work folder (`rtbuild/` by default) holds what machines
//! share: the repositories kas clones, `downloads/` and `sstate-cache/`. Each machine's output
//! folder (`rtbuild/<machine>/`) holds the generated files, `caches.yml` and `build/`.

use std::path::{Path, PathBuf};

use super::caches::CACHES_FILE;

/// The log of the last `rtbuild image` run, inside the build folder.
pub(super) const LOG_FILE: &str = "rtbuild-image.log";

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct BuildPaths {
    /// `KAS_WORK_DIR`: the parent of the output folder.
    pub work: PathBuf,
    /// The per-machine output folder (generated files).
    pub out: PathBuf,
    /// `KAS_BUILD_DIR`.
    pub build_dir: PathBuf,
    pub kas_file: PathBuf,
    pub caches_file: PathBuf,
    pub log: PathBuf,
}

impl BuildPaths {
    /// `out` must be absolute (the generator returns it so).
    pub(crate) fn new(out: &Path, kas_file: &Path) -> BuildPaths {
        let work = out.parent().map(Path::to_path_buf).unwrap_or_else(|| out.to_path_buf());
        let build_dir = out.join("build");
        BuildPaths {
            work,
            out: out.to_path_buf(),
            log: build_dir.join(LOG_FILE),
            build_dir,
            kas_file: kas_file.to_path_buf(),
            caches_file: out.join(CACHES_FILE),
        }
    }

    /// The same build in the work folder `work` (`KAS_WORK_DIR`): kas clones there and builds
    /// in its `build/`, where `rtbuild bundle` and `rtbuild lock` look when KAS_WORK_DIR is set.
    pub(crate) fn in_work(self, work: &Path) -> BuildPaths {
        let build_dir = work.join("build");
        BuildPaths { work: work.to_path_buf(), log: build_dir.join(LOG_FILE), build_dir, ..self }
    }

    /// kas's config argument: the generated file, then the caches include.
    pub(crate) fn kas_config(&self) -> String {
        format!("{}:{}", self.kas_file.display(), self.caches_file.display())
    }

    /// `tmp/deploy/images/<machine>/` (the first `tmp*` folder that has it, for distros that
    /// move TMPDIR).
    pub(crate) fn deploy_dir(&self, machine: &str) -> PathBuf {
        let default = self.build_dir.join("tmp/deploy/images").join(machine);
        if default.is_dir() {
            return default;
        }
        let Ok(entries) = std::fs::read_dir(&self.build_dir) else { return default };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("tmp"))
            .map(|e| e.path().join("deploy/images").join(machine))
            .filter(|p| p.is_dir())
            .collect();
        found.sort();
        found.into_iter().next().unwrap_or(default)
    }
}

/// Fails early, before anything is generated, when `out` cannot be created or written: its
/// nearest existing ancestor must be a folder rtbuild can create files in.
pub(crate) fn check_writable(out: &Path) -> Result<(), super::BuildError> {
    let unwritable = |path: &Path, source| super::BuildError::Unwritable {
        path: path.to_path_buf(),
        cause: source,
    };
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
        std::fs::write(dir.path().join("blocker"), "x").unwrap();
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
