//! Repo names: the ones meta-qcom's kas files use, and checks that a lock only names repos the
//! build knows. kas silently ignores an override for a repo it does not have, so a typo such as
//! `openembedded-core` for `oe-core` would leave the repo floating; rtbuild refuses it instead.

use std::collections::BTreeSet;
use std::path::Path;

use super::{LockError, LockFile};

/// Repo names as meta-qcom, meta-qcom-distro and meta-qcom-releases spell them.
pub(crate) const KNOWN_REPOS: &[&str] = &[
    "bitbake",
    "meta-ai",
    "meta-arm",
    "meta-audioreach",
    "meta-dpdk",
    "meta-lts-mixins",
    "meta-openembedded",
    "meta-qcom",
    "meta-qcom-distro",
    "meta-qcom-hwe",
    "meta-security",
    "meta-selinux",
    "meta-updater",
    "meta-virtualization",
    "oe-core",
];

/// Names people write for a repo that meta-qcom calls something else.
const ALIASES: &[(&str, &str)] = &[
    ("openembedded-core", "oe-core"),
    ("poky", "oe-core"),
    ("meta-oe", "meta-openembedded"),
    ("meta-qcom-bsp", "meta-qcom"),
];

/// A repo name must be a plain kas repo id.
pub(super) fn check_syntax(name: &str, path: &Path) -> Result<(), LockError> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.starts_with(['.', '-']);
    if ok {
        Ok(())
    } else {
        Err(LockError::BadName { path: path.to_path_buf(), repo: name.into() })
    }
}

/// Fails on the first repo in `lock` that is not in `known`, with a suggestion.
pub(crate) fn validate_names(
    lock: &LockFile,
    known: &BTreeSet<String>,
    path: &Path,
) -> Result<(), LockError> {
    for name in lock.repos.keys() {
        if known.contains(name) {
            continue;
        }
        let hint = match suggest(name, known) {
            Some(other) => format!("meta-qcom calls it `{other}`"),
            None => format!(
                "this build uses {}",
                known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            ),
        };
        return Err(LockError::UnknownRepo { path: path.to_path_buf(), repo: name.clone(), hint });
    }
    Ok(())
}

/// [`KNOWN_REPOS`] plus `extra`.
pub(crate) fn known_with(extra: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    KNOWN_REPOS.iter().map(|s| s.to_string()).chain(extra).collect()
}

fn suggest(name: &str, known: &BTreeSet<String>) -> Option<String> {
    if let Some((_, to)) = ALIASES.iter().find(|(from, _)| *from == name)
        && known.contains(*to)
    {
        return Some(to.to_string());
    }
    known
        .iter()
        .map(|k| (strsim::levenshtein(name, k), k))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, k)| k.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_of(name: &str) -> LockFile {
        let text = format!(
            "overrides:\n  repos:\n    {name}: {{commit: d51c6e87a10c7c75a692ca86b71af9a818026ecb}}\n"
        );
        LockFile::parse(&text, Path::new("l.yml")).unwrap()
    }

    #[test]
    fn unknown_names_get_the_meta_qcom_spelling() {
        let known = known_with([]);
        let cases = [
            ("openembedded-core", "unknown repo `openembedded-core`; meta-qcom calls it `oe-core`"),
            ("meta-oe", "unknown repo `meta-oe`; meta-qcom calls it `meta-openembedded`"),
            (
                "meta-qcom-distr",
                "unknown repo `meta-qcom-distr`; meta-qcom calls it `meta-qcom-distro`",
            ),
            ("zzzzzzzzzzzz", "unknown repo `zzzzzzzzzzzz`; this build uses `bitbake`, "),
        ];
        for (name, want) in cases {
            let err = validate_names(&lock_of(name), &known, Path::new("l.yml")).unwrap_err();
            assert!(err.to_string().contains(want), "{err}");
        }
        assert!(validate_names(&lock_of("oe-core"), &known, Path::new("l.yml")).is_ok());
    }
}
