//! A warm run's meta-qcom: when the checkout in the work folder is already where `kas checkout`
//! would leave it, rtbuild reads it as it is instead of starting kas (a Python start and a
//! dozen git commands, about 2 s of a 9 s warm build on two cores; issue 27).
//!
//! kas 5.5 on an existing checkout, without `--update`, fetches nothing when the ref it wants
//! is already there (the local branch for a branch, the commit for a pin, and then only when
//! the remote branch contains it), then checks out the pinned commit or `origin/<branch>`.
//! So when HEAD already is that commit, kas would change no file: that is the only case
//! skipped. Anything else (no checkout, another commit, no local branch, a pin the branch does
//! not contain, a repository git cannot open) runs `kas checkout` as before.

use std::path::Path;

use git2::{Oid, Repository};

/// The commit HEAD is at, when `kas checkout` of `branch` (pinned to `pinned`, when a lock or
/// `--meta-qcom-commit` pins it) would leave the checkout at `dir` as it is.
pub(crate) fn unchanged_head(dir: &Path, branch: &str, pinned: Option<&str>) -> Option<Oid> {
    let repo = Repository::open(dir).ok()?;
    let head = repo.head().ok()?.peel_to_commit().ok()?.id();
    let remote = repo
        .find_reference(&format!("refs/remotes/origin/{branch}"))
        .ok()?
        .peel_to_commit()
        .ok()?
        .id();
    let wanted = match pinned {
        Some(commit) => {
            let commit = Oid::from_str(commit).ok()?;
            // kas fetches when the remote branch does not contain the pin.
            let contained = remote == commit || repo.graph_descendant_of(remote, commit).ok()?;
            contained.then_some(commit)?
        }
        None => {
            // Without the local branch, kas fetches before checking out.
            repo.find_reference(&format!("refs/heads/{branch}")).ok()?;
            remote
        }
    };
    (head == wanted).then_some(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::Signature;

    fn commit(repo: &Repository, message: &str) -> Oid {
        let who = Signature::now("dev", "dev@example.org").unwrap();
        let file = repo.workdir().unwrap().join("conf.txt");
        crate::files::write::fixture(&file, message).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("conf.txt")).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let parents: Vec<git2::Commit<'_>> =
            repo.head().ok().and_then(|h| h.peel_to_commit().ok()).into_iter().collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(Some("HEAD"), &who, &who, message, &tree, &parents).unwrap()
    }

    /// A checkout as kas leaves it: `origin/wrynose` fetched, the local `wrynose` branch, and
    /// HEAD at `head`.
    fn checkout(dir: &Path, remote: Oid, head: Oid, local_branch: bool) -> Repository {
        let repo = Repository::open(dir).unwrap();
        repo.reference("refs/remotes/origin/wrynose", remote, true, "fetch").unwrap();
        if local_branch {
            repo.reference("refs/heads/wrynose", head, true, "kas").unwrap();
        }
        repo.set_head_detached(head).unwrap();
        repo
    }

    #[test]
    fn a_checkout_at_the_remote_branch_is_read_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let first = commit(&repo, "first");
        let tip = commit(&repo, "tip");
        checkout(dir.path(), tip, tip, true);
        assert_eq!(unchanged_head(dir.path(), "wrynose", None), Some(tip));
        // Pinned to the tip, or to a commit the branch contains that HEAD is at.
        assert_eq!(unchanged_head(dir.path(), "wrynose", Some(&tip.to_string())), Some(tip));
        checkout(dir.path(), tip, first, true);
        assert_eq!(unchanged_head(dir.path(), "wrynose", Some(&first.to_string())), Some(first));
    }

    #[test]
    fn kas_runs_whenever_it_would_move_or_fetch() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let first = commit(&repo, "first");
        let tip = commit(&repo, "tip");
        // HEAD behind the remote branch: kas checks the tip out.
        checkout(dir.path(), tip, first, true);
        assert_eq!(unchanged_head(dir.path(), "wrynose", None), None);
        // Pinned elsewhere than HEAD: kas moves it.
        assert_eq!(unchanged_head(dir.path(), "wrynose", Some(&tip.to_string())), None);
        // A pin the remote branch does not contain (kas fetches), and one that is no commit.
        checkout(dir.path(), first, tip, true);
        assert_eq!(unchanged_head(dir.path(), "wrynose", Some(&tip.to_string())), None);
        assert_eq!(unchanged_head(dir.path(), "wrynose", Some("not-a-commit")), None);
        // Another branch than the one fetched; no local branch (kas fetches first).
        assert_eq!(unchanged_head(dir.path(), "scarthgap", None), None);
        let bare = tempfile::tempdir().unwrap();
        let other = Repository::init(bare.path()).unwrap();
        let only = commit(&other, "only");
        checkout(bare.path(), only, only, false);
        assert_eq!(unchanged_head(bare.path(), "wrynose", None), None);
        // No checkout at all.
        assert_eq!(unchanged_head(&dir.path().join("missing"), "wrynose", None), None);
    }
}
