//! Running a build: the generated kas file → `kas build` → BitBake → artifacts. Which kas and
//! how it is invoked is [`crate::image::kas`]'s; what runs after a build is the image pipeline's.
//!
//! 1. [`caches::CacheSettings`] validates the shared-cache flags;
//! 2. [`run::build`] writes `caches.yml`, runs kas through [`crate::host::runner`] with BitBake's
//!    output folded into a [`tracker::Tracker`] that drives the progress display, and returns a
//!    [`report::BuildResult`] naming the failed tasks or the image and qcomflash folder.

pub(crate) mod caches;
mod display;
mod error;
pub(crate) mod events;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod tracker;
mod writable;

pub(crate) use error::BuildError;
pub(crate) use writable::check_writable;
