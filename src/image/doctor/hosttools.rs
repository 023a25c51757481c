//! oe-core's `HOSTTOOLS`: the programs BitBake links into `${TMPDIR}/hosttools` and refuses to
//! build without. Read from the checked-out oe-core's `meta/conf/bitbake.conf` when the work
//! folder has one; else the list rtbuild ships for the supported release.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// `HOSTTOOLS` of oe-core `wrynose` (the commit meta-qcom's `ci/base.lock.yml` pins), without
/// the testimage-only tools. Used until kas has cloned oe-core into the work folder.
pub(crate) const SHIPPED: &[&str] = &[
    "[",
    "ar",
    "as",
    "awk",
    "basename",
    "bash",
    "bunzip2",
    "bzip2",
    "cat",
    "chgrp",
    "chmod",
    "chown",
    "chrpath",
    "cmp",
    "comm",
    "cp",
    "cpio",
    "cpp",
    "cut",
    "date",
    "dd",
    "diff",
    "diffstat",
    "dirname",
    "du",
    "echo",
    "egrep",
    "env",
    "expand",
    "expr",
    "false",
    "fgrep",
    "file",
    "find",
    "flock",
    "g++",
    "gawk",
    "gcc",
    "getconf",
    "getopt",
    "git",
    "grep",
    "gunzip",
    "gzip",
    "head",
    "hostname",
    "iconv",
    "id",
    "install",
    "ld",
    "ldd",
    "ln",
    "ls",
    "make",
    "md5sum",
    "mkdir",
    "mkfifo",
    "mknod",
    "mktemp",
    "mv",
    "nm",
    "objcopy",
    "objdump",
    "od",
    "patch",
    "perl",
    "pr",
    "printf",
    "pwd",
    "python3",
    "pzstd",
    "ranlib",
    "readelf",
    "readlink",
    "realpath",
    "rm",
    "rmdir",
    "rpcgen",
    "sed",
    "seq",
    "sh",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "sleep",
    "sort",
    "split",
    "stat",
    "strings",
    "strip",
    "tail",
    "tar",
    "tee",
    "test",
    "touch",
    "tr",
    "true",
    "truncate",
    "uname",
    "uniq",
    "unzstd",
    "wc",
    "wget",
    "which",
    "xargs",
    "zstd",
    "xz",
];

/// The release [`SHIPPED`] comes from.
pub(crate) const SHIPPED_RELEASE: &str = "oe-core wrynose";

/// Where oe-core sits in a kas work folder, by the repo names layer setups use.
const OE_CORE_DIRS: [&str; 3] = ["oe-core", "openembedded-core", "poky"];

/// The tools and which of them PATH lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostTools {
    pub names: Vec<String>,
    pub missing: Vec<String>,
    /// Where the list came from: a bitbake.conf path, or the shipped release.
    pub source: String,
}

impl HostTools {
    /// The list for `work` (its oe-core checkout, else [`SHIPPED`]), checked against `path`.
    pub(crate) fn for_work(work: &Path, path: Option<&OsStr>) -> HostTools {
        let (names, source) = match bitbake_conf(work)
            .and_then(|conf| {
                // bitbake.conf is about 40 KB; anything odd there is not read.
                let text = crate::files::input::read_to_string(&conf, 4 << 20).ok()?;
                Some((parse(&text), conf))
            })
            .filter(|(names, _)| !names.is_empty())
        {
            Some((names, conf)) => (names, conf.display().to_string()),
            None => (
                SHIPPED.iter().map(|s| s.to_string()).collect(),
                format!("the HOSTTOOLS of {SHIPPED_RELEASE}"),
            ),
        };
        let missing = names
            .iter()
            .filter(|n| crate::host::find_program(n, path).is_none())
            .cloned()
            .collect();
        HostTools { names, missing, source }
    }
}

/// The checked-out oe-core's `meta/conf/bitbake.conf` in `work`, if kas cloned it there.
pub(crate) fn bitbake_conf(work: &Path) -> Option<PathBuf> {
    OE_CORE_DIRS
        .iter()
        .map(|dir| work.join(dir).join("meta/conf/bitbake.conf"))
        .find(|p| p.is_file())
}

/// Every program `HOSTTOOLS` names in a bitbake.conf, in order, once each. Continuation lines
/// are joined; inline Python (`${@…}`, the testimage tools) is skipped, as it only adds tools
/// when test classes are inherited.
pub(crate) fn parse(conf: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut lines = conf.lines();
    while let Some(line) = lines.next() {
        let mut statement = line.trim_end().to_string();
        while statement.ends_with('\\') {
            statement.pop();
            statement.push(' ');
            match lines.next() {
                Some(next) => statement.push_str(next.trim_end()),
                None => break,
            }
        }
        let Some(value) = hosttools_value(&statement) else { continue };
        for word in strip_inline_python(value).split_whitespace() {
            if !names.iter().any(|n| n == word) {
                names.push(word.to_string());
            }
        }
    }
    names
}

/// The quoted value of `HOSTTOOLS = "…"`, `+=`, `?=`, `??=`, `:append` (not `HOSTTOOLS_*`).
fn hosttools_value(statement: &str) -> Option<&str> {
    let rest = statement.trim_start().strip_prefix("HOSTTOOLS")?;
    let rest = rest.strip_prefix(":append").unwrap_or(rest).trim_start();
    let rest = ["+=", "??=", "?=", ".=", "="].iter().find_map(|op| rest.strip_prefix(op))?.trim();
    let rest = rest.strip_prefix('"')?;
    Some(rest.strip_suffix('"').unwrap_or(rest))
}

/// `a ${@'x y' if … else ''} b` → `a  b`.
fn strip_inline_python(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${@") {
        out.push_str(&rest[..start]);
        let mut depth = 0;
        let mut end = rest.len();
        for (i, c) in rest[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(' ');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_continuations_and_inline_python() {
        let conf = "HOSTTOOLS_DIR = \"${TMPDIR}/hosttools\"\n\
                    HOSTTOOLS += \" \\\n    [ ar gawk \\\n    cpio \\\n\"\n\
                    HOSTTOOLS += \"${@'ip ping' if bb.utils.contains('IMAGE_CLASSES', 'testimage', True, False, d) else ''}\"\n\
                    HOSTTOOLS_NONFATAL += \"aws gpg\"\n\
                    HOSTTOOLS:append = \" gawk diffstat\"\n";
        assert_eq!(parse(conf), ["[", "ar", "gawk", "cpio", "diffstat"]);
    }

    #[test]
    fn a_missing_tool_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("oe-core/meta/conf/bitbake.conf");
        std::fs::create_dir_all(conf.parent().unwrap()).unwrap();
        crate::files::write::fixture(&conf, "HOSTTOOLS += \"sh no-such-tool-rtbuild\"\n").unwrap();
        let tools = HostTools::for_work(dir.path(), Some(OsStr::new("/bin:/usr/bin")));
        assert_eq!(tools.names, ["sh", "no-such-tool-rtbuild"]);
        assert_eq!(tools.missing, ["no-such-tool-rtbuild"]);
        assert_eq!(tools.source, conf.display().to_string());
        let shipped = HostTools::for_work(&dir.path().join("none"), Some(OsStr::new("")));
        assert_eq!(shipped.missing.len(), SHIPPED.len());
        assert_eq!(shipped.source, "the HOSTTOOLS of oe-core wrynose");
    }
}
