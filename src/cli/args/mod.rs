//! Argument structs that more than one command flattens into its own arguments, one file per
//! group. A command file imports from here, never from another command's file.

mod build_dirs;
mod measure;
mod plan;

pub(crate) use build_dirs::BuildDirs;
pub(crate) use measure::{MeasureArgs, Measurement};
pub(crate) use plan::{PlanArgs, absolute, meta_qcom_error};
