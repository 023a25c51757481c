//! Lock files: every repo a build uses, pinned to a full commit.
//!
//! Where this sits: after `rtbuild generate` wrote `<machine>-rt.yml` and kas checked the repos
//! out under its work folder, [`pin`] reads the checkouts (git2) and writes
//! `<machine>-rt.lock.yml` beside the kas file in kas's own `overrides:` form, so plain `kas` uses
//! it too. [`check`] compares checkouts with a lock, [`diff`] compares two locks, and [`install`]
//! puts a lock from elsewhere (kas's form or meta-qcom-releases' full `repos:` form) where kas
//! finds it.

mod check;
mod checkout;
mod diff;
mod error;
mod file;
mod install;
mod kas;
mod names;
mod pin;

pub use check::{CheckReport, Problem, RepoCheck, check};
pub use checkout::{Checkout, CommitSummary, commits_between, upstream_commit};
pub use diff::{LockDiff, RepoDiff, diff};
pub use error::LockError;
pub use file::LOCK_HEADER_VERSION;
pub use file::{LockFile, LockForm, Pin};
pub use install::{InstallOutcome, install, is_placeholder, lock_path_for, write_placeholder};
pub use kas::{BuildRepo, KasConfig, declared_repos, kas_dump};
pub use names::{KNOWN_REPOS, known_with, validate_names};
pub use pin::{PinChange, PinOutcome, PinRequest, Shadowed, UpdateTo, pin};
