//! Finding kas and checking its version before anything is built.
//!
//! `kas --version` prints `kas 5.5 (configuration format version 23, earliest compatible
//! version 1)`. meta-qcom-releases asks for kas 4.8 or newer; rtbuild is tested with
//! [`PINNED_KAS`].

use std::fmt;
use std::path::{Path, PathBuf};

use super::BuildError;
use crate::runner::{Cmd, Runner};

/// The kas version `rtbuild setup` installs and the test suite runs.
pub(crate) const PINNED_KAS: &str = "5.5";
/// The oldest kas meta-qcom's kas files work with.
pub(crate) const MIN_KAS: KasVersion = KasVersion { major: 4, minor: 8 };

/// How to get a suitable kas, appended to every kas error.
pub(crate) fn install_hint() -> String {
    format!(
        "install it with `pip install kas=={PINNED_KAS}` (or `pipx install kas=={PINNED_KAS}`), \
         or run `rtbuild setup` to create a venv with it, then put it on PATH or pass --kas PATH"
    )
}

/// A kas release number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct KasVersion {
    pub major: u32,
    pub minor: u32,
}

impl fmt::Display for KasVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl KasVersion {
    /// Reads `kas 5.5 (configuration format version 23, …)`; `kas 4.8.1` works too.
    pub(crate) fn parse(text: &str) -> Option<KasVersion> {
        let line = text.lines().find(|l| l.trim_start().starts_with("kas "))?;
        let number = line.trim_start().strip_prefix("kas ")?.split_whitespace().next()?;
        let mut parts = number.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next().unwrap_or("0").parse().ok()?;
        Some(KasVersion { major, minor })
    }
}

/// A kas that answered `--version` with a supported release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kas {
    pub program: PathBuf,
    pub version: KasVersion,
}

/// The kas to use: `explicit` (`--kas PATH`), else `kas` on `path`. Checks the version.
pub(crate) fn find(
    explicit: Option<&Path>,
    path: Option<&std::ffi::OsStr>,
    runner: &dyn Runner,
) -> Result<Kas, BuildError> {
    let program = match explicit {
        Some(p) if p.is_file() => p.to_path_buf(),
        Some(p) => return Err(BuildError::KasMissing { looked: p.display().to_string() }),
        None => crate::base::find_program("kas", path)
            .ok_or_else(|| BuildError::KasMissing { looked: "PATH".to_string() })?,
    };
    let output = runner
        .capture(&Cmd::new(&program).arg("--version"))
        .map_err(|e| BuildError::KasBroken { program: program.clone(), detail: e.to_string() })?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let version = KasVersion::parse(&text).ok_or_else(|| BuildError::KasBroken {
        program: program.clone(),
        detail: format!("`--version` printed {:?}", text.trim()),
    })?;
    if version < MIN_KAS {
        return Err(BuildError::KasTooOld { program, version });
    }
    Ok(Kas { program, version })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Recorder;

    #[test]
    fn versions_parse_from_kas_output() {
        let cases = [
            (
                "kas 5.5 (configuration format version 23, earliest compatible version 1)\n",
                Some((5, 5)),
            ),
            ("kas 4.8.1\n", Some((4, 8))),
            ("kas 4 (x)", Some((4, 0))),
            ("Kas five", None),
            ("", None),
        ];
        for (text, want) in cases {
            let got = KasVersion::parse(text).map(|v| (v.major, v.minor));
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn old_kas_is_refused_with_the_install_command() {
        let dir = tempfile::tempdir().unwrap();
        let kas = dir.path().join("kas");
        crate::write::fixture(&kas, "").unwrap();
        let runner = Recorder::new("kas 4.0 (configuration format version 14)", 0);
        let err = find(Some(&kas), None, &runner).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("kas 4.0 is too old; rtbuild needs kas 4.8 or newer"), "{text}");
        assert!(text.contains("pip install kas==5.5"), "{text}");
    }

    #[test]
    fn missing_kas_names_what_was_searched() {
        let runner = Recorder::new("", 0);
        let err = find(None, Some(std::ffi::OsStr::new("/nonexistent")), &runner).unwrap_err();
        assert!(err.to_string().starts_with("kas was not found on PATH; install it with"), "{err}");
    }
}
