//! The kas releases rtbuild knows: the one it is tested with, the oldest it accepts, and how
//! `kas --version` names them.
//!
//! `kas --version` prints `kas 5.5 (configuration format version 23, earliest compatible
//! version 1)`. meta-qcom-releases asks for kas 4.8 or newer; rtbuild is tested with
//! [`PINNED_KAS`].

use std::fmt;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
