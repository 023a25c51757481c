//! Reading the host once: everything [`super::evaluate`] judges.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::Target;
use super::disk::Folder;
use super::host_packages::Os;
use super::hosttools::HostTools;
use crate::host::find_program;
use crate::host::runner::{Cmd, Runner};
use crate::image::kas::engine::kas_container;
use crate::image::kas::{Kas, KasError};

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
    pub kas: Result<Kas, KasError>,
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
        kas: Result<Kas, KasError>,
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
            os: Os::detect(
                &crate::files::input::read_to_string(Path::new("/etc/os-release"), 1 << 20)
                    .unwrap_or_default(),
            ),
            locales,
            hosttools,
            python: first_line("python3", "Python "),
            git: first_line("git", "git version "),
            kas,
            container,
            disks: super::disk::folders(target),
            inotify_watches: crate::files::input::read_to_string(
                Path::new("/proc/sys/fs/inotify/max_user_watches"),
                4096,
            )
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
