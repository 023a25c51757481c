//! Small validated values that end up inside BitBake or kas YAML files. Each constructor
//! rejects anything that could escape its quotes: `"`, `\`, `$`, `{`, `}`, whitespace, control
//! characters. After construction a value can be pasted into a template as it is.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A value the user typed that is not safe or not well formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{}`; {reason}", printable(.value))]
pub(crate) struct ValueError {
    pub what: &'static str,
    pub value: String,
    pub reason: String,
}

/// Always the user's input (exit 2).
impl crate::error::ErrorCode for ValueError {
    fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Usage
    }
}

fn check(what: &'static str, value: &str, allowed: &[u8], reason: &str) -> Result<(), ValueError> {
    let ok = !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || allowed.contains(&b));
    if ok {
        Ok(())
    } else {
        Err(ValueError { what, value: value.to_string(), reason: reason.to_string() })
    }
}

/// Shows control characters escaped, so an error about a newline is readable on one line.
pub(crate) use crate::text::printable;

macro_rules! token {
    ($(#[$doc:meta])* $name:ident, $what:literal, $allowed:expr, $reason:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub(crate) struct $name(String);

        impl $name {
            pub(crate) fn new(value: &str) -> Result<$name, ValueError> {
                check($what, value, $allowed, $reason)?;
                Ok($name(value.to_string()))
            }

            // Not every token is read back as text (the others are only displayed).
            #[allow(dead_code)]
            pub(crate) fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

token!(
    /// A BitBake recipe/image name (`qcom-multimedia-image`).
    ImageName,
    "image name",
    b"-_.+",
    "use letters, digits, `-`, `_`, `.` and `+`"
);

token!(
    /// A git branch or tag name (`wrynose`, `qli-2.0`, `wrynose/linux-firmware`).
    GitRef,
    "git branch",
    b"-_./+",
    "use letters, digits, `-`, `_`, `.`, `/` and `+`"
);

token!(
    /// One kernel command-line argument (`efi=runtime`, `threadirqs`, `console=ttyMSM0,115200`).
    CmdlineArg,
    "kernel command-line argument",
    b"-_.,:=/+@",
    "use letters, digits and `-_.,:=/+@`, one argument per --cmdline"
);

impl GitRef {
    /// A ref must not start with `-` (it would read as an option) or contain `..`.
    pub(crate) fn parse(value: &str) -> Result<GitRef, ValueError> {
        let r = GitRef::new(value)?;
        if value.starts_with('-') || value.contains("..") || value.ends_with('/') {
            return Err(ValueError {
                what: "git branch",
                value: value.into(),
                reason: "a git ref cannot start with `-`, end with `/` or contain `..`".into(),
            });
        }
        Ok(r)
    }
}

impl CmdlineArg {
    /// The parameter name: `isolcpus` for `isolcpus=7`.
    pub(crate) fn key(&self) -> &str {
        self.0.split_once('=').map_or(self.0.as_str(), |(k, _)| k)
    }
}

/// A full 40-hex-digit git commit id, lowercase.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub(crate) struct CommitId(String);

impl CommitId {
    pub(crate) fn new(value: &str) -> Result<CommitId, ValueError> {
        if value.len() == 40 && value.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(CommitId(value.to_ascii_lowercase()))
        } else {
            Err(ValueError {
                what: "commit",
                value: value.into(),
                reason: "a commit must be the full 40-digit hex id (git rev-parse <ref>)".into(),
            })
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A git repository URL (`https://…`, `ssh://…`, `git://…`, `file:///…`, or `user@host:path`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub(crate) struct RepoUrl(String);

impl RepoUrl {
    pub(crate) fn new(value: &str) -> Result<RepoUrl, ValueError> {
        check(
            "repository URL",
            value,
            b"-_.~:/@+%=",
            "use a plain URL without spaces, quotes or `$`",
        )?;
        let schemes = ["https://", "http://", "ssh://", "git://", "file:///"];
        let scp_like = value.contains('@') && value.contains(':') && !value.contains("://");
        // A host (or an scp-like `user@host`) starting with `-` reads as an option to ssh.
        let host = value.split_once("://").map_or(value, |(_, rest)| rest);
        if value.starts_with('-') || host.starts_with('-') || host.contains("@-") {
            return Err(ValueError {
                what: "repository URL",
                value: value.into(),
                reason: "a URL or its host cannot start with `-` (it would read as an option)"
                    .into(),
            });
        }
        if !schemes.iter().any(|s| value.starts_with(s)) && !scp_like {
            return Err(ValueError {
                what: "repository URL",
                value: value.into(),
                reason: "start it with https://, ssh://, git:// or file:///".into(),
            });
        }
        Ok(RepoUrl(value.to_string()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RepoUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An absolute folder path safe to write into a BitBake assignment (`DL_DIR = "…"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub(crate) struct ConfPath(PathBuf);

impl ConfPath {
    pub(crate) fn new(what: &'static str, path: &Path) -> Result<ConfPath, ValueError> {
        let text = path.to_string_lossy();
        check(what, &text, b"-_./+@%,", "use an absolute path of letters, digits and `-_./+@%,`")?;
        if !path.is_absolute() || text.contains("/../") || text.ends_with("/..") {
            return Err(ValueError {
                what,
                value: text.into_owned(),
                reason: "use an absolute path without `..`".into(),
            });
        }
        Ok(ConfPath(path.to_path_buf()))
    }

    pub(crate) fn as_path(&self) -> &Path {
        &self.0
    }
}

impl fmt::Display for ConfPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_string_lossy())
    }
}

/// A file name for the generated layer (`rt-extra.cfg`, `0001-fix.patch`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub(crate) struct LayerFileName(String);

impl LayerFileName {
    pub(crate) fn new(value: &str) -> Result<LayerFileName, ValueError> {
        check("file name", value, b"-_.+", "rename it to letters, digits, `-`, `_`, `.` and `+`")?;
        if value.starts_with('.') {
            return Err(ValueError {
                what: "file name",
                value: value.into(),
                reason: "a file name cannot start with `.`".into(),
            });
        }
        Ok(LayerFileName(value.to_string()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LayerFileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injection_attempts_are_rejected() {
        let attempts = [
            "x\"\nDISTRO = \"evil",
            "${@os.system('reboot')}",
            "a b",
            "a\\b",
            "a'b",
            "a`b`",
            "$(reboot)",
            "{x}",
            "line\nbreak",
        ];
        for attempt in attempts {
            assert!(ImageName::new(attempt).is_err(), "image {attempt:?}");
            assert!(GitRef::parse(attempt).is_err(), "ref {attempt:?}");
            assert!(CmdlineArg::new(attempt).is_err(), "cmdline {attempt:?}");
            assert!(RepoUrl::new(attempt).is_err(), "url {attempt:?}");
            assert!(LayerFileName::new(attempt).is_err(), "file {attempt:?}");
            assert!(ConfPath::new("DL_DIR", Path::new(attempt)).is_err(), "path {attempt:?}");
        }
    }

    #[test]
    fn ordinary_values_pass() {
        assert!(ImageName::new("qcom-multimedia-image").is_ok());
        assert!(GitRef::parse("wrynose/linux-firmware").is_ok());
        assert!(CmdlineArg::new("console=ttyMSM0,115200").is_ok());
        assert_eq!(CmdlineArg::new("isolcpus=7").unwrap().key(), "isolcpus");
        assert!(RepoUrl::new("https://github.com/qualcomm-linux/meta-qcom").is_ok());
        assert!(RepoUrl::new("file:///tmp/x/meta-qcom").is_ok());
        assert!(RepoUrl::new("git@github.com:qualcomm-linux/meta-qcom.git").is_ok());
        assert!(ConfPath::new("DL_DIR", Path::new("/srv/yocto/downloads")).is_ok());
        assert!(CommitId::new(&"A".repeat(40)).is_ok());
    }

    #[test]
    fn bad_refs_and_commits() {
        assert!(GitRef::parse("-upload-pack=x").is_err());
        assert!(GitRef::parse("a..b").is_err());
        assert_eq!(
            CommitId::new("abc123").unwrap_err().to_string(),
            "invalid commit `abc123`; a commit must be the full 40-digit hex id (git rev-parse <ref>)"
        );
        assert!(ConfPath::new("DL_DIR", Path::new("relative/dir")).is_err());
    }
}
