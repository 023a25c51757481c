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

pub(crate) use check::check;
pub(crate) use checkout::{Checkout, CommitSummary};
pub(crate) use diff::diff;
pub(crate) use error::LockError;
pub(crate) use file::{LockFile, LockForm, Pin};
pub(crate) use install::{install, lock_path_for, write_placeholder};
pub(crate) use kas::{KasConfig, declared_repos};
pub(crate) use names::{known_with, validate_names};
pub(crate) use pin::{PinRequest, UpdateTo, pin};
