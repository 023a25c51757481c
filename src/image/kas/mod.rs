//! Which kas, run how: the one home of kas discovery, installation, the container engine and
//! the kas command lines. `doctor` judges what is found here, `kasrun` runs the commands made
//! here, and the image pipeline strings both together.
//!
//! 1. [`find::find`] finds kas (`--kas`, PATH, or the venv [`setup`] makes) and checks its
//!    version against the releases [`version`] knows (for a build, a pip-installed kas's
//!    version is read from its package by [`installed`], without a Python start);
//! 2. [`engine::Engine`] and [`Launcher`] decide whether kas runs on the host or through
//!    kas-container with docker or podman;
//! 3. [`paths::BuildPaths`] and [`paths::CacheDirs`] place the folders kas works in
//!    (`KAS_WORK_DIR`, `KAS_BUILD_DIR`, `DL_DIR`, `SSTATE_DIR`);
//! 4. [`command`] builds the argv of `kas build`, `checkout`, `dump` and `shell` (never a shell
//!    string), validating the targets, task and BitBake arguments a user gives.

pub(crate) mod command;
pub(crate) mod engine;
mod error;
pub(crate) mod find;
mod installed;
mod launch;
pub(crate) mod paths;
pub(crate) mod setup;
pub(crate) mod version;

pub(crate) use engine::Engine;
pub(crate) use error::KasError;
pub(crate) use find::Kas;
pub(crate) use launch::Launcher;
pub(crate) use paths::{BuildPaths, CacheDirs};
pub(crate) use version::{PINNED_KAS, install_hint};
