//! Argument structs that more than one command flattens into its own arguments, one file per
//! group. A command file imports from here, never from another command's file.

mod board;
mod build;
mod build_dirs;
mod caches;
mod cpus;
mod data_home;
mod host;
mod machine;
mod measure;
mod output;
mod plan;
mod post;
mod search_env;

pub(crate) use board::{BoardArg, board_name};
pub(crate) use build::BuildArgs;
pub(crate) use build_dirs::BuildDirs;
pub(crate) use caches::{CacheArgs, CacheEnvArgs};
pub(crate) use cpus::{CpuArgs, CpuFlags};
pub(crate) use data_home::DataHomeArgs;
pub(crate) use host::HostArgs;
pub(crate) use machine::{CatalogArgs, MachineArgs};
pub(crate) use measure::MeasureArgs;
pub(crate) use output::OutputArgs;
pub(crate) use plan::{PlanArgs, absolute};
pub(crate) use post::PostArgs;
pub(crate) use search_env::SearchEnvArgs;
