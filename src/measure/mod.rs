//! Measuring on a target, any Linux board: [`tune`] applies, checks and reverts the RT tuning;
//! [`testrun`] is `rtbuild test` (cyclictest and the other rt-tests under stress-ng, checked
//! from the target itself); [`rttests`] and [`toolargs`] know the rt-tests programs and their
//! options; [`ftrace`] keeps a trace of a latency breach; [`kernel_log`] says which kernel log
//! lines spoil a run.

pub(crate) mod ftrace;
pub(crate) mod kernel_log;
pub(crate) mod rttests;
pub(crate) mod testrun;
pub(crate) mod toolargs;
pub(crate) mod tune;
