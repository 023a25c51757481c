//! [`diff`]: what changed between two locks, per repo, with the commits in between when the repo
//! is checked out under the kas work folder (git2 revwalk, no `git` process).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use git2::Repository;
use serde::Serialize;

use super::checkout::{CommitSummary, commit_to_oid, commits_between};
use super::{LockError, LockFile};
use crate::plan::values::CommitId;

#[derive(Debug, Clone, Serialize)]
pub(crate) struct RepoDiff {
    pub repo: String,
    /// `same`, `changed`, `added` or `removed`.
    pub change: &'static str,
    pub old: Option<CommitId>,
    pub new: Option<CommitId>,
    /// Where the repo is checked out, when it is.
    pub checkout: Option<PathBuf>,
    /// Commits in `new` that `old` lacks, newest first (when known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits: Option<Vec<CommitSummary>>,
    /// Commits in `old` that `new` lacks: non-zero when a pin moved back or sideways.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<usize>,
    /// Why the commits are not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct LockDiff {
    pub old_file: PathBuf,
    pub new_file: PathBuf,
    pub repos: Vec<RepoDiff>,
}

impl LockDiff {
    pub(crate) fn changed(&self) -> usize {
        self.repos.iter().filter(|r| r.change != "same").count()
    }
}

/// Compares `old` and `new` pin by pin.
pub(crate) fn diff(
    old: (&LockFile, &Path),
    new: (&LockFile, &Path),
    work_dir: &Path,
) -> Result<LockDiff, LockError> {
    let names: BTreeSet<&String> = old.0.repos.keys().chain(new.0.repos.keys()).collect();
    let mut repos = Vec::new();
    for name in names {
        let a = old.0.repos.get(name).map(|p| p.commit.clone());
        let b = new.0.repos.get(name).map(|p| p.commit.clone());
        let path = work_dir.join(name);
        let checkout = path.join(".git").exists().then_some(path);
        let change = match (&a, &b) {
            (Some(a), Some(b)) if a == b => "same",
            (Some(_), Some(_)) => "changed",
            (None, _) => "added",
            (_, None) => "removed",
        };
        let mut entry = RepoDiff {
            repo: name.clone(),
            change,
            old: a.clone(),
            new: b.clone(),
            checkout: checkout.clone(),
            commits: None,
            dropped: None,
            note: None,
        };
        if let (Some(a), Some(b), "changed") = (&a, &b, change) {
            match &checkout {
                None => entry.note = Some("not checked out here; commits not listed".into()),
                Some(dir) => match between(dir, a, b) {
                    Ok((ahead, behind)) => {
                        entry.commits = Some(ahead);
                        entry.dropped = Some(behind);
                    }
                    Err(e) => {
                        entry.note = Some(format!("commits not listed: {}", e.message()));
                    }
                },
            }
        }
        repos.push(entry);
    }
    Ok(LockDiff { old_file: old.1.to_path_buf(), new_file: new.1.to_path_buf(), repos })
}

fn between(
    dir: &Path,
    a: &CommitId,
    b: &CommitId,
) -> Result<(Vec<CommitSummary>, usize), git2::Error> {
    let repo = Repository::open(dir)?;
    let (a, b) = (commit_to_oid(a)?, commit_to_oid(b)?);
    let ahead = commits_between(&repo, a, b)?;
    let behind = commits_between(&repo, b, a)?.len();
    Ok((ahead, behind))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(text: &str) -> LockFile {
        LockFile::parse(text, Path::new("l.yml")).unwrap()
    }

    #[test]
    fn added_removed_and_unlisted_commits() {
        let a = "d51c6e87a10c7c75a692ca86b71af9a818026ecb";
        let b = "7a3cb0d55e3698e883a9ff8491febc9d155482ca";
        let old = lock(&format!(
            "overrides:\n  repos:\n    oe-core: {{commit: {a}}}\n    meta-arm: {{commit: {a}}}\n"
        ));
        let new = lock(&format!(
            "repos:\n  oe-core: {{commit: {b}, branch: wrynose}}\n  meta-qcom: {{commit: {b}}}\n"
        ));
        let work = tempfile::tempdir().unwrap();
        let d = diff((&old, Path::new("old")), (&new, Path::new("new")), work.path()).unwrap();
        let rows: Vec<(&str, &str)> = d.repos.iter().map(|r| (r.repo.as_str(), r.change)).collect();
        assert_eq!(rows, [("meta-arm", "removed"), ("meta-qcom", "added"), ("oe-core", "changed")]);
        assert_eq!(d.changed(), 3);
        let oe = &d.repos[2];
        assert_eq!(oe.note.as_deref(), Some("not checked out here; commits not listed"));
        assert!(oe.commits.is_none());
    }
}
