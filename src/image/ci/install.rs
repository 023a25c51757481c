//! How rtbuild gets onto the runners: one job per pipeline builds (or downloads and checks)
//! the binary into [`TOOLS_DIR`]`/bin/rtbuild`, and every other job takes it from that job's
//! artifact instead of compiling rtbuild again.

use crate::text::quote;

/// Where the install job leaves rtbuild (`cargo install --root`), relative to its folder.
pub(crate) const TOOLS_DIR: &str = ".rtbuild-tools";

/// How rtbuild gets onto the runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Install {
    /// `cargo install --locked rtbuild@=VERSION` (crates.io, once rtbuild is published there),
    /// with a minimal rustup toolchain.
    Crate { version: String },
    /// `cargo install --locked --path DIR`: rtbuild's source inside the checked-out repository
    /// (a git submodule or a vendored copy), so the pipeline needs nothing from outside.
    Path { dir: String },
    /// `cargo install --locked --git URL [--rev REV] rtbuild`.
    Git { url: String, rev: Option<String> },
    /// A prebuilt binary downloaded with curl (https:// or file://), checked against its
    /// SHA-256 (`--rtbuild-sha256`) before anything runs it.
    Binary { url: String, sha256: String },
}

/// A bad `--rtbuild-from` or `--rtbuild-sha256` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BadInstall {
    #[error(
        "bad --rtbuild-from `{0}`; pass path:DIR (rtbuild's source in the repository, cargo install --path), git+https://HOST/REPO[#REV] (cargo install --git), the https:// or file:// URL of an rtbuild binary, or `crates` (crates.io)"
    )]
    Source(String),
    #[error(
        "--rtbuild-from {0} downloads a binary the jobs then run; pass --rtbuild-sha256 HEX (`sha256sum` of that binary) so that they run the one you meant"
    )]
    NoChecksum(String),
    #[error("bad --rtbuild-sha256 `{0}`; pass the 64 hex digits `sha256sum` prints for the binary")]
    BadChecksum(String),
    #[error(
        "--rtbuild-sha256 checks a downloaded binary; --rtbuild-from {0} builds rtbuild from source, so drop --rtbuild-sha256 (or pass the binary's URL)"
    )]
    ChecksumWithoutBinary(String),
}

fn url_safe(text: &str) -> bool {
    !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-._~:/?[]@!&()*+,;=%".contains(c))
}

/// A folder inside the checkout: relative, no `..`, plain characters only.
fn relative_dir_ok(dir: &str) -> bool {
    !dir.is_empty()
        && !dir.starts_with('/')
        && dir.chars().all(|c| c.is_ascii_alphanumeric() || "-._/".contains(c))
        && dir.split('/').all(|part| part != "..")
}

impl Install {
    pub(crate) fn parse(
        text: &str,
        sha256: Option<&str>,
        version: &str,
    ) -> Result<Install, BadInstall> {
        let short = || text.chars().take(80).collect::<String>();
        let source =
            Install::parse_source(text, version).map_err(|()| BadInstall::Source(short()))?;
        match (source, sha256) {
            (Install::Binary { url, .. }, Some(sum)) => {
                let ok = sum.len() == 64 && sum.bytes().all(|b| b.is_ascii_hexdigit());
                if !ok {
                    return Err(BadInstall::BadChecksum(sum.chars().take(80).collect()));
                }
                Ok(Install::Binary { url, sha256: sum.to_ascii_lowercase() })
            }
            (Install::Binary { .. }, None) => Err(BadInstall::NoChecksum(short())),
            (_, Some(_)) => Err(BadInstall::ChecksumWithoutBinary(short())),
            (source, None) => Ok(source),
        }
    }

    fn parse_source(text: &str, version: &str) -> Result<Install, ()> {
        if text == "crates" {
            return Ok(Install::Crate { version: version.to_string() });
        }
        if let Some(dir) = text.strip_prefix("path:") {
            return if relative_dir_ok(dir) {
                Ok(Install::Path { dir: dir.to_string() })
            } else {
                Err(())
            };
        }
        if let Some(rest) = text.strip_prefix("git+") {
            let (url, rev) = match rest.split_once('#') {
                Some((url, rev)) => (url, Some(rev)),
                None => (rest, None),
            };
            let scheme_ok = url.starts_with("https://") || url.starts_with("http://");
            let rev_ok = rev.is_none_or(|r| {
                !r.is_empty() && r.chars().all(|c| c.is_ascii_alphanumeric() || "-._/".contains(c))
            });
            if !scheme_ok || !url_safe(url) || url.len() <= "https://".len() || !rev_ok {
                return Err(());
            }
            return Ok(Install::Git { url: url.to_string(), rev: rev.map(str::to_string) });
        }
        let scheme_ok = ["https://", "http://", "file:///"].iter().any(|s| text.starts_with(s));
        if !scheme_ok || !url_safe(text) || text.ends_with('/') {
            return Err(());
        }
        Ok(Install::Binary { url: text.to_string(), sha256: String::new() })
    }

    /// The install job's shell lines: they leave `rtbuild` in `<root>/bin` (rustup first when
    /// cargo is missing) and print its version. `root` is one shell word, e.g. [`TOOLS_DIR`] or
    /// `"$RTBUILD_WORK/tools"`.
    pub(crate) fn script(&self, root: &str) -> Vec<String> {
        let rustup = "command -v cargo >/dev/null || curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --no-modify-path";
        let cargo = format!("cargo install --locked --root {root}");
        let bin = format!("{root}/bin/rtbuild");
        let mut lines = vec!["export PATH=\"$HOME/.cargo/bin:$PATH\"".to_string()];
        match self {
            Install::Crate { version } => lines.push(format!(
                "{rustup} && {cargo} rtbuild --version {}",
                quote::sh(&format!("={version}"))
            )),
            Install::Path { dir } => {
                lines.push(format!("{rustup} && {cargo} --path {}", quote::sh(dir)));
            }
            Install::Git { url, rev } => {
                let rev =
                    rev.as_ref().map_or(String::new(), |r| format!(" --rev {}", quote::sh(r)));
                lines.push(format!("{rustup} && {cargo} --git {}{rev} rtbuild", quote::sh(url)));
            }
            Install::Binary { url, sha256 } => lines.extend([
                format!("mkdir -p {root}/bin"),
                format!("curl --fail --silent --show-error --location -o {bin} {}", quote::sh(url)),
                format!("printf '%s  %s\\n' {sha256} {bin} | sha256sum --check --strict -"),
            ]),
        }
        lines.push(format!("chmod 0755 {bin}"));
        lines.push(format!("{bin} --version"));
        lines
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Install::Crate { version } => {
                format!("`cargo install --locked rtbuild --version ={version}` (rustup if needed)")
            }
            Install::Path { dir } => {
                format!(
                    "`cargo install --locked --path {dir}` from this repository (rustup if needed)"
                )
            }
            Install::Git { url, rev } => format!(
                "`cargo install --locked --git {url}{}` (rustup if needed)",
                rev.as_ref().map_or(String::new(), |r| format!(" --rev {r}"))
            ),
            Install::Binary { url, sha256 } => {
                format!(
                    "the binary {url}, downloaded with curl and checked against SHA-256 {sha256}"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUM: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn install_sources() {
        assert_eq!(
            Install::parse("crates", None, "0.1.0").unwrap(),
            Install::Crate { version: "0.1.0".into() }
        );
        assert_eq!(
            Install::parse("git+https://git.example.com/rtbuild.git#v0.1.0", None, "x").unwrap(),
            Install::Git {
                url: "https://git.example.com/rtbuild.git".into(),
                rev: Some("v0.1.0".into())
            }
        );
        assert_eq!(
            Install::parse("file:///opt/rtbuild", Some(&SUM.to_uppercase()), "x").unwrap(),
            Install::Binary { url: "file:///opt/rtbuild".into(), sha256: SUM.into() }
        );
        for bad in [
            "",
            "cargo",
            "git+ssh://h/r",
            "https://h/a b",
            "https://h/$(id)",
            "git+https://h/r#a;b",
            "/opt/rtbuild",
            "path:",
            "path:/opt/rtbuild",
            "path:../rtbuild",
            "path:tools/../../x",
            "path:a b",
            "path:$(id)",
            "path:x;y",
        ] {
            assert!(matches!(Install::parse(bad, None, "x"), Err(BadInstall::Source(_))), "{bad}");
        }
        assert_eq!(
            Install::parse("path:tools/rtbuild", None, "x").unwrap(),
            Install::Path { dir: "tools/rtbuild".into() }
        );
    }

    #[test]
    fn a_binary_needs_its_checksum_and_a_build_from_source_takes_none() {
        let url = "https://example.com/rtbuild";
        assert!(matches!(Install::parse(url, None, "x"), Err(BadInstall::NoChecksum(_))));
        for bad in ["abc", &SUM[1..], "'; id; '", &format!("{}g", &SUM[1..])] {
            assert!(
                matches!(Install::parse(url, Some(bad), "x"), Err(BadInstall::BadChecksum(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Install::parse("crates", Some(SUM), "x"),
            Err(BadInstall::ChecksumWithoutBinary(_))
        ));
    }

    #[test]
    fn every_source_leaves_the_binary_in_the_tools_folder() {
        let script = Install::Path { dir: "tools/rtbuild".into() }.script(TOOLS_DIR).join("\n");
        assert!(
            script.contains("cargo install --locked --root .rtbuild-tools --path tools/rtbuild"),
            "{script}"
        );
        let script = Install::Crate { version: "0.1.0".into() }.script(TOOLS_DIR).join("\n");
        assert!(script.contains("--root .rtbuild-tools rtbuild --version =0.1.0"), "{script}");
        let script = Install::Binary { url: "https://h/rtbuild".into(), sha256: SUM.into() }
            .script(TOOLS_DIR);
        assert_eq!(
            script[3],
            format!(
                "printf '%s  %s\\n' {SUM} .rtbuild-tools/bin/rtbuild | sha256sum --check --strict -"
            )
        );
        assert_eq!(script.last().unwrap(), ".rtbuild-tools/bin/rtbuild --version");
    }
}
