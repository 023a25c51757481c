//! [`LockFile`]: a lock in memory, read from either form and written in kas's form.
//!
//! kas's form (what `kas lock` writes, and what kas reads beside a config file):
//! `header: {version: 14}` + `overrides: repos: <name>: {commit: <sha>}`.
//! meta-qcom-releases' full form: `repos: <name>: {url, branch, commit}`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_yaml::Value;

use super::LockError;
use crate::files::limits::MAX_LOCK;
use crate::plan::values::CommitId;

/// Which of the two layouts a lock file used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LockForm {
    /// `overrides: repos: <name>: commit:` (kas lock).
    Overrides,
    /// `repos: <name>: {url, branch, commit}` (meta-qcom-releases `lock.yml`).
    Full,
}

/// One pinned repo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Pin {
    pub commit: CommitId,
    /// The branch the commit must be on, when the lock says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The repo URL, when the lock says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl Pin {
    pub(crate) fn commit(commit: CommitId) -> Pin {
        Pin { commit, branch: None, url: None }
    }
}

/// A parsed, validated lock: repo name → pin, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct LockFile {
    pub form: LockForm,
    pub repos: BTreeMap<String, Pin>,
}

impl LockFile {
    pub(crate) fn new(repos: BTreeMap<String, Pin>) -> LockFile {
        LockFile { form: LockForm::Overrides, repos }
    }

    /// Reads and validates the lock file at `path`.
    pub(crate) fn read(path: &Path) -> Result<LockFile, LockError> {
        if path.symlink_metadata().is_err() {
            return Err(LockError::NoLock { path: path.to_path_buf() });
        }
        // A lock is a few KB; a FIFO or `/dev/zero` is refused, never read.
        let text = crate::files::input::read_to_string(path, MAX_LOCK).map_err(LockError::Input)?;
        LockFile::parse(&text, path)
    }

    /// Parses lock text in either form; `path` is only used in messages.
    pub(crate) fn parse(text: &str, path: &Path) -> Result<LockFile, LockError> {
        let shape = |problem: &str, fix: &'static str| LockError::Shape {
            path: path.to_path_buf(),
            problem: problem.to_string(),
            fix,
        };
        let doc: Value = crate::text::yaml::from_str(text)
            .map_err(|cause| LockError::Yaml { path: path.to_path_buf(), cause })?;
        let Value::Mapping(top) = doc else {
            return Err(shape(
                "is not a YAML mapping",
                "write `header:` and `overrides: repos:` (kas) or `repos:` (full form)",
            ));
        };
        for key in top.keys() {
            let name = key.as_str().unwrap_or("");
            if !matches!(name, "header" | "overrides" | "repos") {
                return Err(shape(
                    &format!("has an unexpected top-level key `{}`", printable_key(key)),
                    "a lock holds only `header`, `overrides` and `repos`",
                ));
            }
        }
        let overrides = top.get("overrides").map(|o| match o {
            Value::Mapping(m) => Ok(m.get("repos")),
            _ => Err(shape("has `overrides` that is not a mapping", "write `overrides: repos:`")),
        });
        let (form, repos) = match (overrides.transpose()?.flatten(), top.get("repos")) {
            (Some(_), Some(_)) => {
                return Err(shape(
                    "has both `overrides: repos:` and `repos:`",
                    "use one form: kas's `overrides:` or the full `repos:` form",
                ));
            }
            (Some(repos), None) => (LockForm::Overrides, repos),
            (None, Some(repos)) => (LockForm::Full, repos),
            (None, None) => {
                return Err(shape(
                    "pins no repos",
                    "add `overrides: repos: <name>: commit: <sha>` or run `rtbuild lock`",
                ));
            }
        };
        let Value::Mapping(repos) = repos else {
            return Err(shape(
                "has `repos` that is not a mapping",
                "write `<name>: {commit: <sha>}`",
            ));
        };
        let mut pins = BTreeMap::new();
        for (key, entry) in repos {
            let name = key.as_str().map(str::to_string).ok_or_else(|| LockError::BadName {
                path: path.to_path_buf(),
                repo: printable_key(key),
            })?;
            super::names::check_syntax(&name, path)?;
            let pin = parse_pin(&name, entry, path)?;
            pins.insert(name, pin);
        }
        if pins.is_empty() {
            return Err(shape("pins no repos", "run `rtbuild lock` to pin every repo"));
        }
        Ok(LockFile { form, repos: pins })
    }

    /// kas's overrides form, sorted by repo name. `branch` and `url` are written only when the
    /// pin carries them (a lock taken over from the full form).
    pub(crate) fn to_kas_yaml(&self, comment: &str) -> String {
        crate::formats::kas_yaml::lock_file(comment, &self.repos)
    }
}

fn parse_pin(name: &str, entry: &Value, path: &Path) -> Result<Pin, LockError> {
    let bad_entry = || LockError::Shape {
        path: path.to_path_buf(),
        problem: format!("has repo `{name}` without a commit"),
        fix: "write `<name>: {commit: <40-hex sha>}`",
    };
    let Value::Mapping(map) = entry else { return Err(bad_entry()) };
    for key in map.keys() {
        if !matches!(key.as_str(), Some("commit" | "branch" | "url")) {
            return Err(LockError::Shape {
                path: path.to_path_buf(),
                problem: format!("has `{}` under repo `{name}`", printable_key(key)),
                fix: "a pin holds only `commit`, `branch` and `url`",
            });
        }
    }
    let commit = match map.get("commit") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Null) | None => return Err(bad_entry()),
        Some(other) => format!("{other:?}"),
    };
    let commit = CommitId::new(&commit).map_err(|_| LockError::BadCommit {
        path: path.to_path_buf(),
        repo: name.to_string(),
        value: commit.chars().take(60).collect(),
    })?;
    let text = |key: &str| -> Result<Option<String>, LockError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() && !s.contains(char::is_whitespace) => {
                Ok(Some(s.clone()))
            }
            Some(_) => Err(LockError::Shape {
                path: path.to_path_buf(),
                problem: format!("has a bad `{key}` under repo `{name}`"),
                fix: "write it as one word without spaces",
            }),
        }
    };
    // Both reach the kas lock rtbuild writes and kas's git calls: each is checked as the value
    // it is (no `$`, `${@…}`, quote, control character, leading `-`), shown escaped when not.
    let checked = |key: &str, value: Option<String>| -> Result<Option<String>, LockError> {
        let Some(value) = value else { return Ok(None) };
        let verdict = match key {
            "branch" => crate::plan::values::GitRef::parse(&value).map(|_| ()),
            _ => crate::plan::values::RepoUrl::new(&value).map(|_| ()),
        };
        match verdict {
            Ok(()) => Ok(Some(value)),
            Err(bad) => Err(LockError::Shape {
                path: path.to_path_buf(),
                problem: format!(
                    "has `{key}: {}` under repo `{name}`: {}",
                    crate::plan::values::printable(&value),
                    bad.reason
                ),
                fix: "write the branch and URL the repo is fetched from, or run `rtbuild lock` again",
            }),
        }
    };
    Ok(Pin {
        commit,
        branch: checked("branch", text("branch")?)?,
        url: checked("url", text("url")?)?,
    })
}

fn printable_key(key: &Value) -> String {
    match key {
        Value::String(s) => s.chars().take(60).collect(),
        other => serde_yaml::to_string(other).unwrap_or_default().trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA_A: &str = "d51c6e87a10c7c75a692ca86b71af9a818026ecb";
    const SHA_B: &str = "7a3cb0d55e3698e883a9ff8491febc9d155482ca";

    fn parse(text: &str) -> Result<LockFile, String> {
        LockFile::parse(text, Path::new("x.lock.yml")).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_kas_form() {
        let text = format!(
            "header:\n    version: 14\noverrides:\n    repos:\n        oe-core:\n            commit: {SHA_A}\n        bitbake: {{commit: {SHA_B}}}\n"
        );
        let lock = parse(&text).unwrap();
        assert_eq!(lock.form, LockForm::Overrides);
        assert_eq!(lock.repos.keys().collect::<Vec<_>>(), ["bitbake", "oe-core"]);
        assert_eq!(lock.repos["oe-core"].commit.as_str(), SHA_A);
    }

    #[test]
    fn reads_full_form_with_url_and_branch() {
        let text = format!(
            "repos:\n  bitbake: {{branch: '2.18', commit: {SHA_B}, url: https://github.com/openembedded/bitbake}}\n  meta-qcom: {{branch: wrynose, commit: {SHA_A}, url: https://github.com/qualcomm-linux/meta-qcom}}\n"
        );
        let lock = parse(&text).unwrap();
        assert_eq!(lock.form, LockForm::Full);
        assert_eq!(lock.repos["bitbake"].branch.as_deref(), Some("2.18"));
        assert_eq!(
            lock.repos["meta-qcom"].url.as_deref(),
            Some("https://github.com/qualcomm-linux/meta-qcom")
        );
    }

    #[test]
    fn writes_sorted_kas_form_that_reads_back() {
        let mut repos = BTreeMap::new();
        repos.insert("oe-core".to_string(), Pin::commit(CommitId::new(SHA_A).unwrap()));
        repos.insert("bitbake".to_string(), Pin::commit(CommitId::new(SHA_B).unwrap()));
        let text = LockFile::new(repos).to_kas_yaml("pinned by a test\n\nsecond");
        assert_eq!(
            text,
            format!(
                "# pinned by a test\n#\n# second\nheader:\n  version: 14\noverrides:\n  repos:\n    bitbake:\n      commit: {SHA_B}\n    oe-core:\n      commit: {SHA_A}\n"
            )
        );
        assert_eq!(parse(&text).unwrap().repos.len(), 2);
    }

    #[test]
    fn bad_lock_files_are_clear_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "overrides:\n  repos:\n    oe-core: {commit: d51c6e8}\n",
                "repo `oe-core` has commit `d51c6e8`; a pin must be the full 40-digit hex",
            ),
            ("overrides:\n  repos:\n    oe-core: {commit: [\n", "is not valid YAML"),
            ("- a\n- b\n", "is not a YAML mapping"),
            ("header: {version: 14}\n", "pins no repos"),
            (
                "overrides:\n  repos:\n    oe-core: {branch: master}\n",
                "has repo `oe-core` without a commit",
            ),
            (
                "overrides:\n  repos:\n    oe-core: {commit: d51c6e87a10c7c75a692ca86b71af9a818026ecb, layers: x}\n",
                "has `layers` under repo `oe-core`",
            ),
            (
                "overrides:\n  repos:\n    'oe core': {commit: d51c6e87a10c7c75a692ca86b71af9a818026ecb}\n",
                "`oe core` is not a valid repo name",
            ),
            ("machine: x\nrepos: {}\n", "unexpected top-level key `machine`"),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(err.starts_with("lock file x.lock.yml"), "{err}");
        }
    }
}
