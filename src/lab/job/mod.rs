//! The LAVA job definition `rtbuild lava` writes.
//!
//! Shape (facts from qualcomm-linux/lava-test-plans' flasher jobs for meta-qcom boards, and
//! LAVA's own schema in Debian's `lava-common`): `deploy: to: downloads` fetches the bundle
//! (LAVA decompresses it) and a postprocess step writes `flash.settings` with the device type;
//! `deploy: to: flasher` flashes `downloads://…`; `boot: method: minimal` with auto-login as
//! root (password for the qcom-distro flavours) and the `root@<machine>` prompt; one inline
//! `test` definition. Its steps check `/sys/kernel/realtime`, run `rtbuild-tune.sh verify`
//! (installed in the image by the generated layer) and then, per scenario, start the load,
//! run each test of `--tests` in `rtbuild test`'s order, print each raw output between
//! [`markers`](super::markers) and report one `lava-test-case` per test: the max latency (or
//! oslat's OS noise) in µs against the threshold (or `--noise-us`), pass/fail for the
//! correctness tests.
//!
//! Every value that reaches a step is a catalog name, a number, a CPU list, or a word
//! checked here; the commands themselves come from
//! [`Scenario::commands`](crate::measure::testrun::Scenario::commands) and
//! [`Suite`](crate::measure::testrun::Suite), the builders `rtbuild test` uses.
//!
//! One file per part of the job: [`request`] is what the job is made from (the checked
//! flags: [`JobRequest`], [`Lab`], [`LavaVersion`], [`BundleUrl`], the download headers);
//! [`minutes`] how long it may take (its timeouts and the one-week ceiling); [`actions`] the
//! lab's deploy and boot actions (qdl, flasher; QEMU's come from [`qemu`](super::qemu));
//! [`testdef`] the inline test definition and the script its steps run; [`render`] puts
//! them together into the [`Job`](crate::formats::lava_job::Job) and its YAML text;
//! [`error`] is the one [`JobError`] they all return.

/// The prompt lava-test-plans adds after the board's own: any root shell.
const GENERIC_PROMPT: &str = "root@(.*):[/~]#";
/// lava-test-plans' qdl timeouts: the deploy, and each flashing stage.
const QDL_DEPLOY_MIN: u64 = 20;
const QDL_BOOT_MIN: u64 = 15;
/// lava-test-plans' `context:` for meta-qcom boards: the console gets 10 ms between characters.
const TEST_CHARACTER_DELAY: u64 = 10;
/// Where qdl applies LAVA's overlay (the test shell and definitions) in `rootfs.img`.
const QDL_OVERLAY_PATH: &str = "/home";
/// One job may hold a board this long at most (7 days).
pub(crate) const MAX_JOB_HOURS: u64 = 168;
/// Minutes for downloading the bundle, flashing it and booting (lava-test-plans allows 5, 12
/// and 2 for its smaller images; a multi-GB RT bundle gets more).
const DOWNLOAD_MIN: u64 = 30;
const FLASH_MIN: u64 = 20;
const BOOT_MIN: u64 = 10;
/// Minutes for the checks before the scenarios and for the log to close.
const SETUP_MIN: u64 = 5;
/// The image the postprocess step runs in (it only writes `flash.settings`).
const POSTPROCESS_IMAGE: &str = "debian:bookworm-slim";
/// The on-target folder for cyclictest's results (below `$TMPDIR`, else `/tmp`).
const WORK_DIR: &str = "${TMPDIR:-/tmp}/rtbuild-lava";
/// The inline test definition's name (and the LAVA result suite).
pub(crate) const DEFINITION: &str = "rtbuild-rt";
/// The longest `job_name` LAVA accepts (its schema and the server's submission check).
pub(crate) const MAX_JOB_NAME: usize = 200;

mod actions;
mod error;
mod minutes;
mod render;
mod request;
mod testdef;
#[cfg(test)]
mod tests;

pub(crate) use error::JobError;
pub(crate) use minutes::job_minutes;
pub(crate) use render::render;
pub(crate) use request::{Artifacts, BundleUrl, DownloadHeader, JobRequest, Lab, LavaVersion};
