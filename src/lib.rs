//! rtbuild: build, verify, release, tune and test Qualcomm Linux PREEMPT_RT images.
//!
//! The data flows one way (see README.md, "Architecture"):
//! `cli` → [`plan::Plan`] → [`render`] (pure, in memory) → [`write`] (atomic, idempotent) →
//! [`runner`] (kas/bitbake) → artifacts → verify → bundle. Tuning and testing read the same plan.

pub mod base;
pub mod build;
pub mod bundle;
pub mod catalog;
pub mod cli;
pub mod cyclictest;
pub mod digest;
pub mod doctor;
pub mod exit;
pub mod formats;
pub mod generate;
pub mod kconfig;
pub mod lava;
pub mod lock;
pub mod plan;
#[cfg(test)]
mod property_tests;
pub mod quote;
pub mod render;
pub mod report;
pub mod rttests;
pub mod run;
pub mod runner;
pub mod table;
pub mod target;
pub mod testrun;
pub mod toolargs;
pub mod tree;
pub mod tune;
pub mod ui;
pub mod verify;
pub mod write;

pub use run::run;
