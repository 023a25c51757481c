//! Shared build caches: the BitBake settings for sstate mirrors, hash equivalence, the PR
//! service and download premirrors (where downloads and sstate live is
//! [`crate::image::kas::CacheDirs`]).
//!
//! The settings are written to `caches.yml`, a kas include with its own `local_conf_header`
//! id, composed on kas's command line after the generated kas file
//! (`<machine>-rt.yml:caches.yml`). Every value is checked before it is written: nothing the
//! user types can end a BitBake string or add a line.

use std::path::{Path, PathBuf};

use super::error::BuildError;
use crate::image::kas::CacheDirs;
use crate::text::printable;

/// The `local_conf_header` id of `caches.yml` (after the generated `rtbuild` block in kas's
/// alphabetical order).
pub(crate) const HEADER_ID: &str = "rtbuild-caches";

/// `--hashserv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hashserv {
    /// A local server per build, its database shared in `SSTATE_DIR` (BitBake's default).
    Auto,
    /// No hash equivalence (`OEBasicHash`): what meta-qcom CI uses on NFS.
    None,
    /// A shared server.
    Remote(HostPort),
}

impl Hashserv {
    pub(crate) fn parse(text: &str) -> Result<Hashserv, BuildError> {
        match text {
            "auto" => Ok(Hashserv::Auto),
            "none" => Ok(Hashserv::None),
            other => HostPort::parse("--hashserv", other).map(Hashserv::Remote).map_err(|_| {
                BuildError::BadSetting {
                    flag: "--hashserv",
                    value: printable(other),
                    expected: "auto, none or HOST:PORT",
                }
            }),
        }
    }
}

/// `host:port` with a DNS name, IPv4 address or `[IPv6]` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPort(String);

impl HostPort {
    pub(crate) fn parse(flag: &'static str, text: &str) -> Result<HostPort, BuildError> {
        let bad = || BuildError::BadSetting { flag, value: printable(text), expected: "HOST:PORT" };
        let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
        let port: u16 = port.parse().map_err(|_| bad())?;
        let host_ok = if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            !v6.is_empty() && v6.chars().all(|c| c.is_ascii_hexdigit() || c == ':')
        } else {
            !host.is_empty()
                && !host.starts_with('-')
                && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        };
        if !host_ok || port == 0 {
            return Err(bad());
        }
        Ok(HostPort(text.to_string()))
    }
}

/// A mirror URL safe inside a BitBake string: `http(s)://`, `ftp://` or `file:///abs/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MirrorUrl(String);

impl MirrorUrl {
    pub(crate) fn parse(flag: &'static str, text: &str) -> Result<MirrorUrl, BuildError> {
        let bad = |expected| BuildError::BadSetting { flag, value: printable(text), expected };
        let safe = |c: char| c.is_ascii_alphanumeric() || "-._~:/@%+=,".contains(c);
        if !text.chars().all(safe) {
            return Err(bad(
                "a URL of letters, digits and -._~:/@%+=, only (no quotes, spaces, `;`, `$` or `#`)",
            ));
        }
        let rest = ["https://", "http://", "ftp://", "file://"]
            .iter()
            .find_map(|scheme| text.strip_prefix(scheme).map(|rest| (*scheme, rest)));
        match rest {
            Some(("file://", path)) if path.starts_with('/') && path.len() > 1 => {}
            Some(("file://", _)) => return Err(bad("file:///ABSOLUTE/PATH")),
            Some((_, host)) if !host.is_empty() && !host.starts_with('/') => {}
            _ => return Err(bad("an http://, https://, ftp:// or file:/// URL")),
        }
        Ok(MirrorUrl(text.trim_end_matches('/').to_string()))
    }
}

/// What the user asked for about caches, validated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct CacheSettings {
    pub sstate_mirrors: Vec<MirrorUrl>,
    pub hashserv: Option<Hashserv>,
    pub prserv: Option<HostPort>,
    pub premirrors: Vec<MirrorUrl>,
    /// `BB_GENERATE_MIRROR_TARBALLS = "1"`: DL_DIR can then serve as a premirror for others.
    pub mirror_tarballs: bool,
    /// The environment's caches (not written anywhere: BitBake gets them from kas).
    pub env: CacheEnv,
}

/// What the environment kas honours says about the caches: `DL_DIR` and `SSTATE_DIR` (kas
/// forwards both to BitBake) and `KAS_PREMIRRORS` (kas clones through them). The command line
/// reads them (clap `env =`) and passes them in; nothing below it reads the environment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct CacheEnv {
    pub dl_dir: Option<PathBuf>,
    pub sstate_dir: Option<PathBuf>,
    pub kas_premirrors: Option<String>,
}

impl CacheSettings {
    /// The BitBake lines, in a fixed order.
    pub(crate) fn conf_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.sstate_mirrors.is_empty() {
            lines.push("SSTATE_MIRRORS ?= \"\\".to_string());
            for url in &self.sstate_mirrors {
                let target = if url.0.starts_with("file://") {
                    format!("{}/PATH", url.0)
                } else {
                    format!("{}/PATH;downloadfilename=PATH", url.0)
                };
                lines.push(format!("file://.* {target} \\"));
            }
            lines.push("\"".to_string());
        }
        match &self.hashserv {
            Some(Hashserv::Auto) => {
                lines.push("BB_SIGNATURE_HANDLER = \"OEEquivHash\"".into());
                lines.push("BB_HASHSERVE = \"auto\"".into());
                lines.push("BB_HASHSERVE_DB_DIR ?= \"${SSTATE_DIR}\"".into());
            }
            Some(Hashserv::None) => {
                lines.push("BB_SIGNATURE_HANDLER = \"OEBasicHash\"".into());
                lines.push("BB_HASHSERVE = \"\"".into());
            }
            Some(Hashserv::Remote(host)) => {
                lines.push("BB_SIGNATURE_HANDLER = \"OEEquivHash\"".into());
                lines.push(format!("BB_HASHSERVE = \"{}\"", host.0));
            }
            // oe-core's default is a local server (`BB_HASHSERVE ??= "auto"`) whose database sits
            // in this build's TOPDIR; with SSTATE_DIR shared across machines on purpose, sanity
            // warns "Sstate directory is shared between several builds" on every build and
            // sstate reuse suffers. Keeping the database beside the shared sstate avoids both.
            None => lines.push("BB_HASHSERVE_DB_DIR ?= \"${SSTATE_DIR}\"".into()),
        }
        if let Some(host) = &self.prserv {
            lines.push(format!("PRSERV_HOST = \"{}\"", host.0));
        }
        if !self.premirrors.is_empty() {
            lines.push("PREMIRRORS:prepend = \"\\".to_string());
            for url in &self.premirrors {
                for scheme in ["git", "gitsm", "https?", "ftp"] {
                    lines.push(format!("{scheme}://.*/.* {}/ \\", url.0));
                }
            }
            lines.push("\"".to_string());
        }
        if self.mirror_tarballs {
            lines.push("BB_GENERATE_MIRROR_TARBALLS = \"1\"".into());
        }
        lines
    }

    /// The kas include file's text.
    pub(crate) fn kas_include(&self, machine: &str) -> String {
        let comment = format!(
            "Generated by rtbuild: shared-cache settings for {machine} (`rtbuild image --sstate-mirror`,\n\
             --hashserv, --prserv, --premirror). Do not edit; change the flags instead."
        );
        crate::formats::kas_yaml::local_conf_include(&comment, HEADER_ID, &self.conf_lines())
    }

    /// Combinations the research notes warn about, as messages.
    pub(crate) fn warnings(
        &self,
        dirs: &CacheDirs,
        fs_type: &dyn Fn(&Path) -> Option<String>,
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        let network = |path: &Path| {
            fs_type(path).filter(|t| ["nfs", "nfs4", "cifs", "smb3", "smbfs"].contains(&t.as_str()))
        };
        if self.hashserv == Some(Hashserv::Auto)
            && let Some(fs) = network(&dirs.sstate_dir)
        {
            warnings.push(format!(
                "the sstate folder {} is on {fs}: the local hash-equivalence database kept there \
                 breaks on network file systems (sqlite locking); use --hashserv HOST:PORT (a \
                 shared bitbake-hashserv) or --hashserv none",
                dirs.sstate_dir.display()
            ));
        }
        if !self.sstate_mirrors.is_empty() && matches!(self.hashserv, Some(Hashserv::Auto) | None) {
            warnings.push(
                "an sstate mirror with a local hash-equivalence server finds fewer matches (OE \
                 warns about it); pass --hashserv HOST:PORT for the server that filled the mirror, \
                 or --hashserv none"
                    .to_string(),
            );
        }
        warnings
    }
}

/// The file-system type `path` (or its nearest existing parent) is mounted with, from
/// `/proc/mounts`.
pub(crate) fn fs_type(path: &Path) -> Option<String> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let mut probe = path.to_path_buf();
    while !probe.exists() {
        probe = probe.parent()?.to_path_buf();
    }
    let probe = probe.canonicalize().ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let _device = fields.next()?;
            let point = fields.next()?.replace("\\040", " ");
            let kind = fields.next()?;
            Some((PathBuf::from(point), kind.to_string()))
        })
        .filter(|(point, _)| probe.starts_with(point))
        .max_by_key(|(point, _)| point.as_os_str().len())
        .map(|(_, kind)| kind)
}

#[cfg(test)]
#[path = "caches_tests.rs"]
mod tests;
