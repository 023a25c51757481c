//! The bottom of the house: small shared types that every stage uses and that depend on no
//! other module of the crate (so nothing above can form an import loop through them).

mod cpu_set;
pub mod paths;

pub use cpu_set::{CpuListError, CpuSet, MAX_CPUS};
