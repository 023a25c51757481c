//! rtbuild: build, verify, release, tune and test Qualcomm Linux PREEMPT_RT images.
//!
//! Each folder is one journey or one shared layer under them (docs/architecture.md draws the
//! house and says what may import what):
//!
//! - journeys, in the order an engineer walks them: [`catalog`] (the boards) → [`plan`] (a
//!   machine plus every option, validated once) → [`layer`] (the kas file and the layer,
//!   rendered in memory and written) → [`image`] (building: kas and BitBake, matrices, CI
//!   pipelines, the host doctor) → [`verify`] (is it really the RT kernel asked for) → [`release`] (locks,
//!   bundles, provenance) → [`measure`] (tuning and `rtbuild test` on a target) → [`results`]
//!   (reading measurements, verdicts, reports, history) and [`lab`] (LAVA jobs and their logs);
//! - the command line: [`cli`], the only place clap and the environment are read;
//! - shared layers: [`formats`] (every document rtbuild writes or reads), [`host`] (running
//!   programs here and on a target), [`files`] (hostile input read within bounds, atomic
//!   writes), [`text`] (the one output channel, escaping, tables, dates) and [`error`].

mod catalog;
mod cli;
mod error;
mod files;
mod formats;
mod host;
mod image;
mod lab;
mod layer;
mod measure;
mod plan;
mod release;
mod results;
mod text;
mod verify;

pub use cli::run::run;
pub use results::cyclictest;
#[cfg(feature = "bench-support")]
pub use results::history::bench_support;
