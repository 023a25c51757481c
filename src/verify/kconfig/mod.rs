//! Kernel configurations: whole `.config` files ([`KernelConfig`], read plain or compressed),
//! the config embedded in a kernel image ([`image`], [`pe`] for UKIs), Kconfig trees and their
//! expressions ([`tree`], [`expr`]). Their lines are a format of their own
//! (`crate::formats::kconfig_lines`), re-exported here.

pub(crate) mod compress;
mod config;
pub(crate) mod expr;
pub(crate) mod image;
mod pe;
pub(crate) mod tree;

pub(crate) use crate::formats::kconfig_lines::{
    Line, LineError, Setting, Symbol, Value, parse_line,
};
pub(crate) use config::{ConfigError, KernelConfig, State};
