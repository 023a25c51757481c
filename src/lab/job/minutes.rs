//! How long a job may take: the minutes to flash and boot, each scenario's minutes, the
//! test action's and the whole job's timeouts, and the one-week ceiling (`rtbuild ci --lava`
//! sizes its wait for a LAVA job with [`job_minutes`] too).

use std::collections::BTreeMap;

use super::{
    BOOT_MIN, DOWNLOAD_MIN, FLASH_MIN, JobError, MAX_JOB_HOURS, QDL_BOOT_MIN, QDL_DEPLOY_MIN,
    SETUP_MIN,
};
use crate::catalog::Deploy;
use crate::host::cpus::CpuLayout;
use crate::measure::rttests::Program;
use crate::measure::testrun::{Length, Sequence, Suite};

/// Minutes to flash and boot before the tests: lava-test-plans' qdl deploy, one boot per
/// stage (`qdl_stages` of them) and as long again for the login; or rtbuild's download, flasher
/// and boot.
pub(super) fn overhead_minutes(deploy: Deploy, qdl_stages: usize) -> u64 {
    match deploy {
        Deploy::Qdl => QDL_DEPLOY_MIN + 2 * QDL_BOOT_MIN * qdl_stages as u64,
        Deploy::Flasher => DOWNLOAD_MIN + FLASH_MIN + BOOT_MIN,
        Deploy::Qemu => crate::lab::qemu::DEPLOY_MIN + crate::lab::qemu::BOOT_MIN,
    }
}

/// The most any board's flashing and boot takes (qdl with two stages), for the limit and for
/// the CI job that waits for a LAVA job.
const MAX_OVERHEAD_MIN: u64 = QDL_DEPLOY_MIN + 4 * QDL_BOOT_MIN;

/// Minutes one scenario may take: `seconds` of tests, a second of load warm-up, two minutes
/// to stop the load, and ten seconds per process to start it and print its results.
pub(super) fn scenario_minutes(seconds: u64, runs: u64) -> u64 {
    (seconds + 1 + 120 + 10 * runs).div_ceil(60)
}

/// Minutes a whole job may take (download, flash, boot, tests) when each of `scenarios` runs
/// `tests` with rtbuild's own options on `layout` for `length`, or why a job that long is
/// refused. `rtbuild ci --lava` sizes its CI job's wait with it.
pub(crate) fn job_minutes(
    duration: &str,
    length: Length,
    interval_us: u32,
    layout: &CpuLayout,
    tests: &[Program],
    scenarios: usize,
) -> Result<u64, JobError> {
    let no_args = BTreeMap::new();
    let suite = Suite {
        layout,
        tests,
        test_args: &no_args,
        noise_us: crate::measure::rttests::DEFAULT_NOISE_US,
        seconds: length.seconds(interval_us),
    };
    minutes_within_limit(
        duration,
        scenario_minutes(suite.total_seconds(suite.seconds), runs_per_scenario(&suite)),
        scenarios,
    )
}

/// Processes one scenario runs one after the other (cyclictest and each invocation).
pub(super) fn runs_per_scenario(suite: &Suite<'_>) -> u64 {
    let sequence = Sequence::of(suite.tests);
    let others: usize = sequence.others().map(|p| suite.runs(p)).sum();
    u64::from(sequence.cyclictest) + others as u64
}

pub(super) fn minutes_within_limit(
    duration: &str,
    scenario_minutes: u64,
    scenarios: usize,
) -> Result<u64, JobError> {
    let test = SETUP_MIN + scenario_minutes * scenarios as u64;
    let minutes = MAX_OVERHEAD_MIN + test;
    if minutes > MAX_JOB_HOURS * 60 {
        return Err(JobError::TooLong {
            duration: duration.chars().take(40).collect(),
            scenarios,
            hours: minutes.div_ceil(60),
        });
    }
    Ok(minutes)
}
