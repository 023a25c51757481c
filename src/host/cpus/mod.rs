//! CPU numbers: a validated [`CpuSet`] in the kernel's list and mask forms, and the
//! [`CpuLayout`] of RT and housekeeping CPUs that every stage taking CPUs builds here.

mod layout;
mod set;

pub(crate) use layout::{Board, CpuLayout, LayoutError};
pub(crate) use set::{CpuListError, CpuSet, MAX_CPUS};
