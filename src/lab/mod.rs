//! LAVA: board farms that flash a bundle and measure it. [`job`] writes the job definition
//! `rtbuild lava` prints (download + flasher deploy, minimal boot with auto-login, one inline
//! test definition that runs `rtbuild-tune.sh verify` and, under each scenario's load, the
//! tests of `--tests` with the command lines `rtbuild test` runs); [`log`] reads back the job
//! log `lavacli jobs logs --raw` returns (and offline `lava-run` writes), for `rtbuild report`.
//! [`qemu`] makes the board-less variant: the same test, booted under QEMU.
//!
//! The two halves meet in [`markers`]: the job prints every raw output (cyclictest's and each
//! other program's) between a begin and an end line, and the log reader takes exactly those
//! lines.

pub(crate) mod job;
pub(crate) mod log;
pub(crate) mod markers;
pub(crate) mod qemu;

pub(crate) use job::{Artifacts, BundleUrl, JobError, JobRequest, Lab, render};
pub(crate) use log::LogError;
