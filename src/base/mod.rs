//! The bottom of the house: small shared types that every stage uses and that depend on no
//! other module of the crate but `exit`, which imports nothing (so nothing above can form an
//! import loop through them).

mod cpu_layout;
mod cpu_set;
pub(crate) mod input;
pub(crate) mod kernel_log;
mod latency;
mod layer_names;
pub(crate) mod output;
pub(crate) mod paths;
mod printable;
mod programs;
mod utc;
pub(crate) mod yaml;

pub(crate) use cpu_layout::{Board, CpuLayout, LayoutError};
pub(crate) use cpu_set::{CpuListError, CpuSet, MAX_CPUS};
pub(crate) use latency::{DEFAULT_THRESHOLD_US, MAX_THRESHOLD_US, MIN_THRESHOLD_US, overflow_note};
pub(crate) use layer_names::{RT_FRAGMENT_NAME, TUNE_RECIPE_NAME};
pub(crate) use printable::{
    escape_controls, escape_controls_but_lines, escape_json_text, is_hidden_format, needs_escape,
    printable, shown, shown_at, shown_path, shown_tail,
};
pub(crate) use programs::find_program;
pub(crate) use utc::{iso_from_epoch, parse_date};
