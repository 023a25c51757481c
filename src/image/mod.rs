//! Building an image: [`pipeline`] drives the whole `rtbuild image` journey (plan, generate,
//! kas, verify, bundle) for one machine, a matrix or a shell; [`kas`] finds and launches kas;
//! [`kasrun`] runs one build and follows it (BitBake's events, progress, logs, shared caches);
//! [`ci`] writes the CI pipelines that run those builds; [`doctor`] checks a build host first.
//! (The folder is not called `build`: ignore files and code search tools skip folders of that
//! name as build output.)

pub(crate) mod ci;
pub(crate) mod doctor;
pub(crate) mod kas;
pub(crate) mod kasrun;
pub(crate) mod pipeline;
