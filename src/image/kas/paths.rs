//! Where a build's files live. The work folder (`rtbuild/` by default) holds what machines
//! share: the repositories kas clones, `downloads/` and `sstate-cache/`. Each machine's output
//! folder (`rtbuild/<machine>/`) holds the generated files, `caches.yml` and `build/`.
//!
//! `DL_DIR` and `SSTATE_DIR` reach BitBake through the environment (kas forwards both), so one
//! default pair ([`CacheDirs`]) is shared by every machine in a work folder.

use std::path::{Path, PathBuf};

/// The kas include of shared-cache settings rtbuild writes beside the generated kas file,
/// composed on kas's command line after it (`<machine>-rt.yml:caches.yml`).
pub(crate) const CACHES_FILE: &str = "caches.yml";

/// The log of the last `rtbuild image` run, inside the build folder.
const LOG_FILE: &str = "rtbuild-image.log";

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

/// The folders BitBake shares between builds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct CacheDirs {
    pub dl_dir: PathBuf,
    pub sstate_dir: PathBuf,
}

impl CacheDirs {
    /// First the plan's (flag or project file), then the environment kas honours, then the
    /// shared defaults beside the per-machine folders in `work`.
    pub(crate) fn resolve(
        plan_dl: Option<&Path>,
        plan_sstate: Option<&Path>,
        env_dl: Option<PathBuf>,
        env_sstate: Option<PathBuf>,
        work: &Path,
    ) -> CacheDirs {
        let pick = |plan: Option<&Path>, env: Option<PathBuf>, default: &str| {
            plan.map(Path::to_path_buf)
                .or(env.filter(|p| p.is_absolute()))
                .unwrap_or_else(|| work.join(default))
        };
        CacheDirs {
            dl_dir: pick(plan_dl, env_dl, "downloads"),
            sstate_dir: pick(plan_sstate, env_sstate, "sstate-cache"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_dirs_prefer_plan_then_environment_then_shared_defaults() {
        let work = Path::new("/w/rtbuild");
        let d = CacheDirs::resolve(None, None, None, None, work);
        assert_eq!(
            (d.dl_dir.as_path(), d.sstate_dir.as_path()),
            (Path::new("/w/rtbuild/downloads"), Path::new("/w/rtbuild/sstate-cache"))
        );
        let d =
            CacheDirs::resolve(None, None, Some("/env/dl".into()), Some("relative".into()), work);
        assert_eq!(
            (d.dl_dir.as_path(), d.sstate_dir.as_path()),
            (Path::new("/env/dl"), Path::new("/w/rtbuild/sstate-cache"))
        );
        let d =
            CacheDirs::resolve(Some(Path::new("/p/dl")), None, Some("/env/dl".into()), None, work);
        assert_eq!(d.dl_dir, Path::new("/p/dl"));
    }
}
