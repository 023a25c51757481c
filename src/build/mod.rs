//! Building an image: [`image`] drives the whole `rtbuild image` journey (plan, generate, kas,
//! verify, bundle) for one machine or a matrix; [`kas`] finds and launches kas;
//! [`kasrun`] runs one build and follows it (BitBake's events, progress, logs, shared caches);
//! [`ci`] writes the CI pipelines that run those builds; [`doctor`] checks a build host first.

pub(crate) mod ci;
pub(crate) mod doctor;
pub(crate) mod image;
pub(crate) mod kas;
pub(crate) mod kasrun;
