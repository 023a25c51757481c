//! LAVA: board farms that flash a bundle and measure it. [`job`] writes the job definition
//! `rtbuild lava` prints (download + flasher deploy, minimal boot with auto-login, one inline
//! test definition that runs `rtbuild-tune.sh verify` and each scenario with the same
//! cyclictest/stress-ng commands `rtbuild test` runs); [`log`] reads back the job log
//! `lavacli jobs logs --raw` returns, for `rtbuild report`.
//!
//! The two halves meet in [`markers`]: the job prints every raw cyclictest output between a
//! begin and an end line, and the log reader takes exactly those lines.

pub mod job;
pub mod log;
pub mod markers;

pub use job::{BundleUrl, JobError, JobRequest, render};
pub use log::{LavaLog, LogError, LogScenario};
