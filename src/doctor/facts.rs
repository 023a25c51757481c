//! Reading the host once: everything [`super::evaluate`] judges.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::disk::Folder;
use super::host_packages::Os;
use super::hosttools::HostTools;
use super::{Engine, Target};
use crate::base::find_program;
use crate::kasrun::BuildError;
use crate::kasrun::kas::{self, Kas};
use crate::runner::{Cmd, Runner};

/// kas-container and the engine it would run.
#[derive(Debug, Clone)]
pub(crate) struct ContainerFacts {
    pub program: PathBuf,
    pub engine_found: bool,
}

/// What the host looks like.
#[derive(Debug)]
pub(crate) struct Facts {
    pub uid: u32,
    pub os: Os,
    /// `locale -a`.
    pub locales: Vec<String>,
    pub hosttools: HostTools,
    /// `python3 --version` without the `Python ` prefix.
    pub python: Option<String>,
    /// `git --version` without the `git version ` prefix.
    pub git: Option<String>,
    pub kas: Result<Kas, BuildError>,
    pub container: Option<ContainerFacts>,
    pub disks: Vec<Folder>,
    pub inotify_watches: Option<u64>,
    /// Soft and hard `RLIMIT_NOFILE`.
    pub open_files: Option<(u64, Option<u64>)>,
    /// `KAS_PREMIRRORS`: kas clones through these mirrors instead of the URLs.
    pub kas_premirrors: Option<String>,
}

impl Facts {
    /// Reads the host. `kas` is the kas already found (or why not); `path` is the PATH programs
    /// are looked up on.
    pub(crate) fn gather(
        target: &Target,
        kas: Result<Kas, BuildError>,
        path: Option<&OsStr>,
        runner: &dyn Runner,
    ) -> Facts {
        let program = |name: &str| find_program(name, path);
        let first_line = |name: &str, prefix: &str| -> Option<String> {
            let exe = program(name)?;
            let out = runner.capture(&Cmd::new(exe).arg("--version")).ok()?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let line = text.lines().next()?.trim();
            Some(line.strip_prefix(prefix).unwrap_or(line).trim().to_string())
        };
        let locales = program("locale")
            .and_then(|exe| runner.capture(&Cmd::new(exe).arg("-a")).ok())
            .map(|out| String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect())
            .unwrap_or_default();
        let hosttools = HostTools::for_work(&target.work, path);
        let container = target.container.and_then(|engine| {
            let found = kas_container(kas.as_ref().ok().map(|k| k.program.as_path()), path)?;
            Some(ContainerFacts { program: found, engine_found: program(engine.name()).is_some() })
        });
        Facts {
            uid: rustix::process::getuid().as_raw(),
            os: Os::detect(&std::fs::read_to_string("/etc/os-release").unwrap_or_default()),
            locales,
            hosttools,
            python: first_line("python3", "Python "),
            git: first_line("git", "git version "),
            kas,
            container,
            disks: super::disk::folders(target),
            inotify_watches: std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
                .ok()
                .and_then(|t| t.trim().parse().ok()),
            open_files: open_file_limit(),
            kas_premirrors: target.kas_premirrors.clone(),
        }
    }
}

fn open_file_limit() -> Option<(u64, Option<u64>)> {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    Some((limit.current?, limit.maximum))
}

/// kas-container: beside the kas in use (it ships in the same wheel), else on `path`.
pub(crate) fn kas_container(kas: Option<&Path>, path: Option<&OsStr>) -> Option<PathBuf> {
    let beside = kas.and_then(Path::parent).map(|dir| dir.join("kas-container"));
    beside.filter(|p| p.is_file()).or_else(|| find_program("kas-container", path))
}

/// PATH plus the venv `rtbuild setup` makes, where kas is looked for last.
// The one read of the environment outside src/cli: the program search path kas discovery
// starts from (PATH, and the data home that holds `rtbuild setup`'s venv). It moves to the
// command line with kas discovery's own move (issue 22 item 2).
#[allow(clippy::disallowed_methods)]
pub(crate) fn search_path() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let Some(venv) = crate::kasrun::setup::default_venv(
        std::env::var_os("XDG_DATA_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    ) else {
        return path;
    };
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.push(venv.join("bin"));
    std::env::join_paths(dirs).unwrap_or(path)
}

/// The kas `--kas` names, else the one on [`search_path`].
pub(crate) fn find_kas(explicit: Option<&Path>, runner: &dyn Runner) -> Result<Kas, BuildError> {
    kas::find(explicit, Some(&search_path()), runner)
}

/// For a container build, the engine: the one asked for, else docker when installed, else
/// podman (kas-container's own order).
pub(crate) fn pick_engine(asked: Option<Engine>, path: Option<&OsStr>) -> Engine {
    asked.unwrap_or_else(|| {
        if find_program("docker", path).is_none() && find_program("podman", path).is_some() {
            Engine::Podman
        } else {
            Engine::Docker
        }
    })
}
