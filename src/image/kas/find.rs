//! Finding kas (`--kas`, PATH, then the venv `rtbuild setup` makes) and checking its version
//! before anything is built.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::error::KasError;
use super::version::{KasVersion, MIN_KAS};
use crate::host::runner::{Cmd, Runner};

/// A kas that answered `--version` with a supported release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kas {
    pub program: PathBuf,
    pub version: KasVersion,
}

/// The kas to use: `explicit` (`--kas PATH`), else `kas` on `path`. Checks the version.
pub(crate) fn find(
    explicit: Option<&Path>,
    path: Option<&OsStr>,
    runner: &dyn Runner,
) -> Result<Kas, KasError> {
    let program = locate(explicit, path)?;
    let version = answered_version(&program, runner)?;
    supported(program, version)
}

/// Like [`find`], but a pip-installed kas's version is read from its package
/// ([`super::installed`]) instead of a Python start: for the build commands, where `kas
/// --version` was most of rtbuild's own time (issue 27). `rtbuild doctor` runs kas.
pub(crate) fn find_for_build(
    explicit: Option<&Path>,
    path: Option<&OsStr>,
    runner: &dyn Runner,
) -> Result<Kas, KasError> {
    let program = locate(explicit, path)?;
    let version = match super::installed::declared_version(&program) {
        Some(version) => version,
        None => answered_version(&program, runner)?,
    };
    supported(program, version)
}

/// `explicit` (`--kas PATH`), else `kas` on `path`.
fn locate(explicit: Option<&Path>, path: Option<&OsStr>) -> Result<PathBuf, KasError> {
    match explicit {
        Some(p) if p.is_file() => Ok(p.to_path_buf()),
        Some(p) => Err(KasError::Missing { looked: p.display().to_string() }),
        None => crate::host::find_program("kas", path)
            .ok_or_else(|| KasError::Missing { looked: "PATH".to_string() }),
    }
}

/// The release `program --version` names.
fn answered_version(program: &Path, runner: &dyn Runner) -> Result<KasVersion, KasError> {
    let program = program.to_path_buf();
    let output = runner
        .capture(&Cmd::new(&program).arg("--version"))
        .map_err(|e| KasError::Broken { program: program.clone(), detail: e.to_string() })?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    KasVersion::parse(&text).ok_or_else(|| KasError::Broken {
        program: program.clone(),
        detail: format!("`--version` printed \"{}\"", crate::text::printable(text.trim())),
    })
}

/// `program` when its `version` is one rtbuild supports.
fn supported(program: PathBuf, version: KasVersion) -> Result<Kas, KasError> {
    if version < MIN_KAS {
        return Err(KasError::TooOld { program, version });
    }
    Ok(Kas { program, version })
}

/// Where `rtbuild setup` puts the venv by default: `$XDG_DATA_HOME/rtbuild/kas-venv`, else
/// `~/.local/share/rtbuild/kas-venv`.
pub(crate) fn default_venv(
    xdg_data_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    let base = xdg_data_home
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".local/share")))?;
    Some(base.join("rtbuild/kas-venv"))
}

/// The variables kas discovery starts from, read by the cli (clap `env =`) and passed in:
/// `PATH`, and the data home that holds the venv `rtbuild setup` makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SearchEnv {
    pub path: Option<OsString>,
    pub xdg_data_home: Option<PathBuf>,
    pub home: Option<PathBuf>,
}

impl SearchEnv {
    /// `PATH` plus the venv `rtbuild setup` makes, where kas is looked for last.
    pub(crate) fn search_path(&self) -> OsString {
        let path = self.path.clone().unwrap_or_default();
        let Some(venv) = default_venv(self.xdg_data_home.clone(), self.home.clone()) else {
            return path;
        };
        let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
        dirs.push(venv.join("bin"));
        std::env::join_paths(dirs).unwrap_or(path)
    }
}

/// The kas `--kas` names, else the one on [`SearchEnv::search_path`].
pub(crate) fn find_kas(
    explicit: Option<&Path>,
    env: &SearchEnv,
    runner: &dyn Runner,
) -> Result<Kas, KasError> {
    find(explicit, Some(&env.search_path()), runner)
}

/// The kas a build runs ([`find_for_build`]): `--kas`, else the one on
/// [`SearchEnv::search_path`].
pub(crate) fn find_kas_for_build(
    explicit: Option<&Path>,
    env: &SearchEnv,
    runner: &dyn Runner,
) -> Result<Kas, KasError> {
    find_for_build(explicit, Some(&env.search_path()), runner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::runner::Recorder;

    #[test]
    fn default_venv_follows_xdg_then_home() {
        assert_eq!(
            default_venv(Some("/x".into()), Some("/h".into())),
            Some("/x/rtbuild/kas-venv".into())
        );
        assert_eq!(
            default_venv(Some("rel".into()), Some("/h".into())),
            Some("/h/.local/share/rtbuild/kas-venv".into())
        );
        assert_eq!(default_venv(None, None), None);
    }

    #[test]
    fn search_path_is_the_given_path_then_the_setup_venv() {
        let env = SearchEnv {
            path: Some("/a/bin:/b/bin".into()),
            xdg_data_home: Some("/data".into()),
            home: Some("/home/u".into()),
        };
        assert_eq!(env.search_path(), OsString::from("/a/bin:/b/bin:/data/rtbuild/kas-venv/bin"));
        let home_only = SearchEnv { xdg_data_home: None, ..env.clone() };
        assert_eq!(
            home_only.search_path(),
            OsString::from("/a/bin:/b/bin:/home/u/.local/share/rtbuild/kas-venv/bin")
        );
        let no_home = SearchEnv { path: Some("/a/bin".into()), xdg_data_home: None, home: None };
        assert_eq!(no_home.search_path(), OsString::from("/a/bin"));
        assert_eq!(SearchEnv::default().search_path(), OsString::new());
    }

    #[test]
    fn old_kas_is_refused_with_the_install_command() {
        let dir = tempfile::tempdir().unwrap();
        let kas = dir.path().join("kas");
        crate::files::write::fixture(&kas, "").unwrap();
        let runner = Recorder::new("kas 4.0 (configuration format version 14)", 0);
        let err = find(Some(&kas), None, &runner).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("kas 4.0 is too old; rtbuild needs kas 4.8 or newer"), "{text}");
        assert!(text.contains("pip install kas==5.5"), "{text}");
    }

    #[test]
    fn missing_kas_names_what_was_searched() {
        let runner = Recorder::new("", 0);
        let err = find(None, Some(OsStr::new("/nonexistent")), &runner).unwrap_err();
        assert!(err.to_string().starts_with("kas was not found on PATH; install it with"), "{err}");
    }
}
