//! [`check`]: do the checkouts under the kas work folder match a lock?
//!
//! Read-only: git2 on each checkout, no kas run (kas would check the pins out again and hide
//! the difference). A repo fails when it is missing, on another commit, dirty, or when its pin
//! is no longer on its branch (not an ancestor of `origin/<branch>`). A git checkout in the work
//! folder that the lock does not pin fails too: a lock must cover every repo.

use std::path::{Path, PathBuf};

use git2::Repository;
use serde::Serialize;

use super::checkout::{commit_to_oid, on_branch};
use super::{Checkout, LockError, LockFile};
use crate::plan::values::CommitId;

/// One thing wrong with one repo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum Problem {
    /// The lock pins it, nothing is checked out.
    Missing,
    /// Checked out at another commit.
    OtherCommit { checked_out: CommitId },
    /// Tracked files were changed.
    Dirty,
    /// The pin is not reachable from the branch tip (history rewritten, or a wrong pin).
    NotOnBranch { branch: String },
    /// No remote branch holds the pin.
    NotOnAnyBranch,
    /// Checked out, but the lock does not pin it.
    Unpinned,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Missing => f.write_str("not checked out"),
            Problem::OtherCommit { checked_out } => write!(f, "checked out at {checked_out}"),
            Problem::Dirty => f.write_str("has uncommitted changes"),
            Problem::NotOnBranch { branch } => write!(f, "pinned commit is not on branch {branch}"),
            Problem::NotOnAnyBranch => f.write_str("pinned commit is on no remote branch"),
            Problem::Unpinned => f.write_str("checked out but not pinned by the lock"),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct RepoCheck {
    pub repo: String,
    pub path: PathBuf,
    pub pinned: Option<CommitId>,
    pub branch: Option<String>,
    pub problems: Vec<Problem>,
}

impl RepoCheck {
    pub(crate) fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct CheckReport {
    pub lock_file: PathBuf,
    pub work_dir: PathBuf,
    pub passed: bool,
    pub repos: Vec<RepoCheck>,
}

/// Compares the checkouts under `work_dir` with `lock` (read from `lock_path`).
pub(crate) fn check(
    lock: &LockFile,
    lock_path: &Path,
    work_dir: &Path,
) -> Result<CheckReport, LockError> {
    let mut repos = Vec::new();
    for (name, pin) in &lock.repos {
        let path = work_dir.join(name);
        let mut problems = Vec::new();
        let mut branch = pin.branch.clone();
        match Checkout::open(name, &path)? {
            None => problems.push(Problem::Missing),
            Some(checkout) => {
                if checkout.commit != pin.commit {
                    problems.push(Problem::OtherCommit { checked_out: checkout.commit.clone() });
                }
                if checkout.dirty {
                    problems.push(Problem::Dirty);
                }
                branch = branch.or(checkout.branch);
                let git = |source| LockError::Git {
                    repo: name.clone(),
                    path: path.clone(),
                    cause: source,
                };
                let repo = Repository::open(&path).map_err(git)?;
                let oid = commit_to_oid(&pin.commit).map_err(git)?;
                match (on_branch(&repo, branch.as_deref(), oid), &branch) {
                    (Some(false), Some(b)) => {
                        problems.push(Problem::NotOnBranch { branch: b.clone() })
                    }
                    (Some(false), None) => problems.push(Problem::NotOnAnyBranch),
                    _ => {}
                }
            }
        }
        repos.push(RepoCheck {
            repo: name.clone(),
            path,
            pinned: Some(pin.commit.clone()),
            branch,
            problems,
        });
    }
    for (name, path) in unpinned_checkouts(lock, work_dir) {
        repos.push(RepoCheck {
            repo: name,
            path,
            pinned: None,
            branch: None,
            problems: vec![Problem::Unpinned],
        });
    }
    repos.sort_by(|a, b| a.repo.cmp(&b.repo));
    let passed = repos.iter().all(RepoCheck::ok);
    Ok(CheckReport {
        lock_file: lock_path.to_path_buf(),
        work_dir: work_dir.to_path_buf(),
        passed,
        repos,
    })
}

/// Git checkouts directly under `work_dir` that `lock` does not name.
fn unpinned_checkouts(lock: &LockFile, work_dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(work_dir) else { return Vec::new() };
    let mut found: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join(".git").exists())
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .filter(|(name, _)| !lock.repos.contains_key(name))
        .collect();
    found.sort();
    found
}
