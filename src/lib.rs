//! rtbuild: build, verify, release, tune and test Qualcomm Linux PREEMPT_RT images.
//!
//! The data flows one way (see README.md, "Architecture"):
//! `cli` → [`plan::Plan`] → [`render`] (pure, in memory) → [`write`] (atomic, idempotent) →
//! [`runner`] (kas/bitbake) → artifacts → verify → bundle. Tuning and testing read the same plan.

mod base;
#[cfg(feature = "bench-support")]
pub mod bench_support;
mod bundle;
mod catalog;
mod ci;
mod cli;
pub mod cyclictest;
mod digest;
mod doctor;
mod error;
mod exit;
mod formats;
mod ftrace;
mod generate;
mod history;
mod host;
mod image;
mod kas;
mod kas_yaml;
mod kasrun;
mod kconfig;
mod lava;
mod lock;
mod plan;
#[cfg(test)]
mod property_tests;
mod quote;
mod render;
mod report;
mod rttests;
mod run;
mod runner;
mod table;
mod templates;
mod testrun;
mod toolargs;
mod tree;
mod tune;
mod ui;
mod verify;
mod write;

pub use run::run;
