//! [`Checkout`]: what a repo kas checked out holds right now, read with git2 (no `git` process).
//!
//! kas checks a branch out with `git checkout <commit> -B <branch>`, so the local branch name is
//! the configured one. When kas applied patches it moved HEAD to `patched-<ref>` with one commit
//! per patch, authored by `kas <kas@example.com>`; [`upstream_commit`] steps back over those, so
//! a pin is always a commit that exists upstream.

use std::path::{Path, PathBuf};

use git2::{BranchType, Oid, Repository, StatusOptions};
use serde::Serialize;

use super::LockError;
use crate::plan::values::CommitId;

/// The author kas gives the commits it makes when applying patches.
const KAS_PATCH_EMAIL: &str = "kas@example.com";

/// A repo as checked out under the kas work folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Checkout {
    pub name: String,
    pub path: PathBuf,
    /// HEAD without kas's patch commits: the commit to pin.
    pub commit: CommitId,
    /// The branch kas checked out, when known.
    pub branch: Option<String>,
    /// `origin`'s URL.
    pub url: Option<String>,
    /// Tracked files differ from HEAD (kas's own definition of dirty).
    pub dirty: bool,
    /// kas applied patches on top of `commit`.
    pub patched: bool,
}

/// One commit, for `lock --diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CommitSummary {
    pub commit: String,
    pub subject: String,
}

impl Checkout {
    /// Reads the checkout of `name` at `path`; `Ok(None)` when nothing is checked out there.
    pub(crate) fn open(name: &str, path: &Path) -> Result<Option<Checkout>, LockError> {
        if !path.join(".git").exists() {
            return Ok(None);
        }
        let git = |source| LockError::Git { repo: name.into(), path: path.into(), cause: source };
        let repo = Repository::open(path).map_err(git)?;
        let head = repo.head().map_err(git)?;
        let head_oid = head.peel_to_commit().map_err(git)?.id();
        let upstream = upstream_commit(&repo, head_oid).map_err(git)?;
        let head_branch =
            head.shorthand().ok().filter(|b| head.is_branch() && !b.starts_with("patched-"));
        let branch = match head_branch {
            Some(b) => Some(b.to_string()),
            None => branch_at(&repo, upstream).map_err(git)?,
        };
        let url = match repo.find_remote("origin") {
            Ok(remote) => remote.url().ok().map(str::to_string),
            Err(_) => None,
        };
        let mut options = StatusOptions::new();
        options.include_untracked(false).include_ignored(false).exclude_submodules(true);
        let dirty = !repo.statuses(Some(&mut options)).map_err(git)?.is_empty();
        Ok(Some(Checkout {
            name: name.to_string(),
            path: path.to_path_buf(),
            commit: oid_to_commit(upstream).map_err(git)?,
            branch,
            url,
            dirty,
            patched: upstream != head_oid,
        }))
    }
}

/// `head` without the patch commits kas put on top of it.
pub(crate) fn upstream_commit(repo: &Repository, head: Oid) -> Result<Oid, git2::Error> {
    let mut commit = repo.find_commit(head)?;
    while commit.author().email().ok() == Some(KAS_PATCH_EMAIL)
        && commit.summary().ok().flatten().is_some_and(|s| s.starts_with("kas: "))
        && commit.parent_count() > 0
    {
        commit = commit.parent(0)?;
    }
    Ok(commit.id())
}

/// A local branch (not one of kas's `patched-*`) that points at `commit`.
fn branch_at(repo: &Repository, commit: Oid) -> Result<Option<String>, git2::Error> {
    for branch in repo.branches(Some(BranchType::Local))? {
        let (branch, _) = branch?;
        let Some(name) = branch.name()? else { continue };
        if !name.starts_with("patched-") && branch.get().target() == Some(commit) {
            return Ok(Some(name.to_string()));
        }
    }
    Ok(None)
}

/// The tip kas resolves a branch to: `origin/<branch>`, else the local branch.
pub(super) fn branch_tip(repo: &Repository, branch: &str) -> Option<Oid> {
    [format!("refs/remotes/origin/{branch}"), format!("refs/heads/{branch}")]
        .iter()
        .find_map(|r| repo.refname_to_id(r).ok())
}

/// Whether `commit` is on `branch` (`Some`), or `None` when the branch is not known there.
/// Without a branch name, any remote branch counts.
pub(super) fn on_branch(repo: &Repository, branch: Option<&str>, commit: Oid) -> Option<bool> {
    let reachable =
        |tip: Oid| tip == commit || repo.graph_descendant_of(tip, commit).unwrap_or(false);
    match branch {
        Some(b) => branch_tip(repo, b).map(reachable),
        None => {
            let remotes = repo.branches(Some(BranchType::Remote)).ok()?;
            let tips: Vec<Oid> =
                remotes.filter_map(Result::ok).filter_map(|(b, _)| b.get().target()).collect();
            if tips.is_empty() { None } else { Some(tips.into_iter().any(reachable)) }
        }
    }
}

/// Commits reachable from `new` but not from `old`, newest first.
pub(crate) fn commits_between(
    repo: &Repository,
    old: Oid,
    new: Oid,
) -> Result<Vec<CommitSummary>, git2::Error> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
    walk.push(new)?;
    walk.hide(old)?;
    let mut commits = Vec::new();
    for oid in walk {
        let commit = repo.find_commit(oid?)?;
        commits.push(CommitSummary {
            commit: commit.id().to_string(),
            subject: commit.summary().ok().flatten().unwrap_or("").to_string(),
        });
    }
    Ok(commits)
}

/// A git object id as a pin (SHA-1 repositories only, like kas).
pub(super) fn oid_to_commit(oid: Oid) -> Result<CommitId, git2::Error> {
    CommitId::new(&oid.to_string())
        .map_err(|_| git2::Error::from_str("only SHA-1 repositories can be pinned"))
}

pub(super) fn commit_to_oid(commit: &CommitId) -> Result<Oid, git2::Error> {
    Oid::from_str(commit.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::Signature;

    fn commit(repo: &Repository, who: &Signature<'_>, message: &str, file: &str) -> Oid {
        crate::files::write::fixture(repo.workdir().unwrap().join(file), message).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new(file)).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let parents: Vec<git2::Commit<'_>> =
            repo.head().ok().and_then(|h| h.peel_to_commit().ok()).into_iter().collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(Some("HEAD"), who, who, message, &tree, &parents).unwrap()
    }

    #[test]
    fn kas_patch_commits_are_stepped_over() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let dev = Signature::now("dev", "dev@example.org").unwrap();
        let kas = Signature::now("kas", KAS_PATCH_EMAIL).unwrap();
        let base = commit(&repo, &dev, "upstream", "a");
        let patched = commit(&repo, &kas, "kas: fix-igt-pause\n\npatch applied by kas", "b");
        assert_eq!(upstream_commit(&repo, patched).unwrap(), base);
        let later = commit(&repo, &dev, "a real commit", "c");
        assert_eq!(upstream_commit(&repo, later).unwrap(), later);
        let between = commits_between(&repo, base, later).unwrap();
        let subjects: Vec<_> = between.iter().map(|c| c.subject.as_str()).collect();
        assert_eq!(subjects, ["a real commit", "kas: fix-igt-pause"]);
    }
}
