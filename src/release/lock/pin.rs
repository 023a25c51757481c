//! [`pin`]: write or update the lock beside a kas file from the repos kas checked out.
//!
//! Without `update`, rtbuild asks kas which repos the build uses (`kas dump`, which also clones
//! what is missing), keeps every pin the lock already has and adds the missing ones from the
//! checkouts, so the lock covers every repo, meta-qcom and meta-qcom-distro included (plain
//! `kas lock` leaves out repos another lock file already pins).
//! With `update`, kas is not run (it would check the old pins out again); the named repos, or
//! all, move to the checkout's commit or to their branch tip after a `git fetch`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::Repository;
use serde::Serialize;

use super::checkout::{branch_tip, commit_to_oid, commits_between, oid_to_commit};
use super::install::{is_placeholder, write_lock};
use super::kas::{KasConfig, kas_dump};
use super::{Checkout, CommitSummary, LockError, LockFile, Pin, install::lock_path_for};
use crate::host::runner::{Cmd, Runner, check_status};
use crate::plan::values::CommitId;

/// Where an updated pin moves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateTo {
    /// What is checked out now.
    Checkout,
    /// `origin/<branch>` after `git fetch origin` (or without fetching when `fetch` is false).
    BranchTip { fetch: bool },
}

#[derive(Debug, Clone)]
pub(crate) struct PinRequest {
    pub kas: KasConfig,
    /// `Some` to move pins forward: the repos to move (empty = all) and where to.
    pub update: Option<(Vec<String>, UpdateTo)>,
}

/// What happened to one repo's pin.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PinChange {
    pub repo: String,
    pub commit: CommitId,
    /// `added`, `kept`, `updated` or `dropped`.
    pub action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_commit: Option<CommitId>,
    /// Commits between the old and the new pin (updates only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<CommitSummary>,
    pub dirty: bool,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct PinOutcome {
    pub lock_file: PathBuf,
    pub repos: Vec<PinChange>,
    /// Repos without a URL (the folder holding the kas file), which kas cannot pin.
    pub local_repos: Vec<String>,
    pub written: bool,
    /// Pins of this lock that a lock file inside a checked-out repo overrides (kas merges
    /// those after this one, so theirs win).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<Shadowed>,
}

/// A pin that another repo's lock file overrides.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Shadowed {
    pub repo: String,
    /// The other lock file, relative to the kas work folder.
    pub lock_file: PathBuf,
    pub commit: CommitId,
}

/// Writes or updates the lock beside `request.kas.kas_file`.
pub(crate) fn pin(request: &PinRequest, runner: &dyn Runner) -> Result<PinOutcome, LockError> {
    let kas_file = &request.kas.kas_file;
    if !kas_file.is_file() {
        return Err(LockError::NoKasFile { path: kas_file.clone() });
    }
    let lock_path = lock_path_for(kas_file);
    match &request.update {
        None => create(request, &lock_path, runner),
        Some((names, to)) => update(request, &lock_path, names, *to, runner),
    }
}

fn create(
    request: &PinRequest,
    lock_path: &Path,
    runner: &dyn Runner,
) -> Result<PinOutcome, LockError> {
    let old = if lock_path.exists() && !is_placeholder(lock_path) {
        Some(LockFile::read(lock_path)?)
    } else {
        None
    };
    let repos = kas_dump(&request.kas, runner)?;
    let mut pins = BTreeMap::new();
    let mut changes = Vec::new();
    let mut local_repos = Vec::new();
    for repo in &repos {
        if !repo.is_remote() {
            local_repos.push(repo.name.clone());
            continue;
        }
        let checkout = Checkout::open(&repo.name, &repo.path)?.ok_or_else(|| {
            LockError::NotCheckedOut { repo: repo.name.clone(), path: repo.path.clone() }
        })?;
        let kept = old.as_ref().and_then(|l| l.repos.get(&repo.name)).cloned();
        let (pin, action) = match kept {
            Some(pin) => (pin, "kept"),
            None => (Pin::commit(checkout.commit.clone()), "added"),
        };
        changes.push(PinChange {
            repo: repo.name.clone(),
            commit: pin.commit.clone(),
            action,
            old_commit: None,
            commits: Vec::new(),
            dirty: checkout.dirty,
        });
        pins.insert(repo.name.clone(), pin);
    }
    if let Some(old) = &old {
        for (name, pin) in &old.repos {
            if !pins.contains_key(name) {
                changes.push(dropped(name, pin));
            }
        }
    }
    finish(lock_path, old.as_ref(), pins, changes, local_repos)
}

fn update(
    request: &PinRequest,
    lock_path: &Path,
    names: &[String],
    to: UpdateTo,
    runner: &dyn Runner,
) -> Result<PinOutcome, LockError> {
    let old = LockFile::read(lock_path)?;
    for name in names {
        if !old.repos.contains_key(name) {
            let known = old.repos.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            return Err(LockError::UnknownUpdate { repo: name.clone(), known });
        }
    }
    let mut pins = old.repos.clone();
    let mut changes = Vec::new();
    for (name, pin) in &old.repos {
        let path = request.kas.work_dir.join(name);
        let checkout = Checkout::open(name, &path)?;
        let selected = names.is_empty() || names.contains(name);
        if !selected {
            changes.push(kept(name, pin, checkout.is_some_and(|c| c.dirty)));
            continue;
        }
        let checkout = checkout
            .ok_or_else(|| LockError::NotCheckedOut { repo: name.clone(), path: path.clone() })?;
        let git = |source| LockError::Git { repo: name.clone(), path: path.clone(), cause: source };
        let repo = Repository::open(&path).map_err(git)?;
        let new_oid = match to {
            UpdateTo::Checkout => commit_to_oid(&checkout.commit).map_err(git)?,
            UpdateTo::BranchTip { fetch } => {
                let branch =
                    pin.branch.clone().or(checkout.branch.clone()).ok_or(LockError::NoBranch {
                        repo: name.clone(),
                        fix: "pass --from-checkout, or check the repo out on its branch",
                    })?;
                if fetch {
                    let cmd = Cmd::new("git").arg("-C").arg(&path).args(["fetch", "-q", "origin"]);
                    runner
                        .capture(&cmd)
                        .and_then(|o| check_status(&cmd, o))
                        .map_err(|source| LockError::Fetch { repo: name.clone(), source })?;
                }
                branch_tip(&repo, &branch).ok_or(LockError::NoBranch {
                    repo: name.clone(),
                    fix: "the branch is not in the checkout; run `git fetch` there",
                })?
            }
        };
        let new_commit = oid_to_commit(new_oid).map_err(git)?;
        if new_commit == pin.commit {
            changes.push(kept(name, pin, checkout.dirty));
            continue;
        }
        let old_oid = commit_to_oid(&pin.commit).map_err(git)?;
        let commits = commits_between(&repo, old_oid, new_oid).unwrap_or_default();
        changes.push(PinChange {
            repo: name.clone(),
            commit: new_commit.clone(),
            action: "updated",
            old_commit: Some(pin.commit.clone()),
            commits,
            dirty: checkout.dirty,
        });
        pins.insert(name.clone(), Pin { commit: new_commit, ..pin.clone() });
    }
    let mut outcome = finish(lock_path, Some(&old), pins, changes, Vec::new())?;
    if !includes_its_lock(&request.kas.kas_file) {
        outcome.shadowed = shadowed(&request.kas.work_dir, &outcome.repos);
    }
    Ok(outcome)
}

/// True when `kas_file` names its own lock among its includes (what `rtbuild generate` writes):
/// kas then merges the lock after every include, so its pins win over any lock an include brings.
pub(super) fn includes_its_lock(kas_file: &Path) -> bool {
    let Some(lock_name) =
        lock_path_for(kas_file).file_name().map(|n| n.to_string_lossy().into_owned())
    else {
        return false;
    };
    let Ok(text) = crate::files::input::read_to_string(kas_file, crate::files::input::TEXT_LIMIT)
    else {
        return false;
    };
    let Ok(doc) = crate::text::yaml::from_str::<serde_yaml::Value>(&text) else { return false };
    let includes = doc.get("header").and_then(|h| h.get("includes")).and_then(|i| i.as_sequence());
    includes.into_iter().flatten().filter_map(|i| i.as_str()).any(|include| {
        Path::new(include).file_name().is_some_and(|n| n.to_string_lossy() == lock_name)
    })
}

/// Lock files in the checkouts (`<repo>/*.lock.yml`, `<repo>/*/*.lock.yml`, e.g. meta-qcom's
/// `ci/base.lock.yml`) that pin an updated repo to another commit. Unless the kas file includes
/// its lock (generated by an older rtbuild, or written by hand), kas loads such a lock after the
/// one beside the top kas file, so its pin wins.
fn shadowed(work_dir: &Path, changes: &[PinChange]) -> Vec<Shadowed> {
    let updated: Vec<&PinChange> = changes.iter().filter(|c| c.action == "updated").collect();
    if updated.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let walker = walkdir::WalkDir::new(work_dir).min_depth(2).max_depth(3).sort_by_file_name();
    for entry in walker.into_iter().filter_entry(|e| e.file_name() != ".git").flatten() {
        let name = entry.file_name().to_string_lossy();
        if !entry.file_type().is_file() || !name.ends_with(".lock.yml") {
            continue;
        }
        let Ok(other) = LockFile::read(entry.path()) else { continue };
        for change in &updated {
            if let Some(pin) = other.repos.get(&change.repo)
                && pin.commit != change.commit
            {
                found.push(Shadowed {
                    repo: change.repo.clone(),
                    lock_file: entry.path().strip_prefix(work_dir).unwrap_or(entry.path()).into(),
                    commit: pin.commit.clone(),
                });
            }
        }
    }
    found
}

fn kept(name: &str, pin: &Pin, dirty: bool) -> PinChange {
    PinChange {
        repo: name.to_string(),
        commit: pin.commit.clone(),
        action: "kept",
        old_commit: None,
        commits: Vec::new(),
        dirty,
    }
}

fn dropped(name: &str, pin: &Pin) -> PinChange {
    PinChange { action: "dropped", ..kept(name, pin, false) }
}

fn finish(
    lock_path: &Path,
    old: Option<&LockFile>,
    pins: BTreeMap<String, Pin>,
    mut changes: Vec<PinChange>,
    local_repos: Vec<String>,
) -> Result<PinOutcome, LockError> {
    changes.sort_by(|a, b| a.repo.cmp(&b.repo));
    let lock = LockFile::new(pins);
    let unchanged = old.is_some_and(|o| o.repos == lock.repos);
    let written = !unchanged;
    if written {
        write_lock(lock_path, &lock)?;
    }
    Ok(PinOutcome {
        lock_file: lock_path.to_path_buf(),
        repos: changes,
        local_repos,
        written,
        shadowed: Vec::new(),
    })
}
