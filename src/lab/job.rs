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
//! checked here; the commands themselves come from [`Scenario::commands`] and
//! [`Suite`](crate::measure::testrun::Suite), the builders `rtbuild test` uses.

use std::collections::BTreeMap;

use super::markers;
use super::qemu::{QemuError, QemuImages};
use crate::catalog::{Deploy, LabPlansPin, LavaProfile, QdlStage, lab_plans, lava_name};
use crate::formats::lava_job::{
    Action, ActionTimeouts, AutoLogin, Boot, ContextValue, Definition, Deploy as DeployAction,
    Docker, Image, Job, Minutes, Postprocess, QcomflashImage, RunSteps, Seconds, TestAction,
    TestDefinition, TestMetadata, Timeouts,
};
use crate::host::cpus::CpuLayout;
use crate::measure::rttests::{Kind, Program};
use crate::measure::testrun::{
    CommandSpec, Commands, Length, Measure, Measurement, Scenario, Sequence, Suite, Threads,
    load_argv,
};
use crate::plan::Distro;
use crate::text::quote;

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

/// A LAVA release, `YYYY.MM` (LAVA's tags: `2023.01`, `2026.07`; a point release
/// `YYYY.MM.N` counts as its `YYYY.MM`). What rtbuild writes differs by release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct LavaVersion {
    pub year: u16,
    pub month: u8,
}

impl LavaVersion {
    /// The current LAVA release, what `--lava-version` defaults to.
    pub(crate) const CURRENT: LavaVersion = LavaVersion { year: 2026, month: 7 };
    /// The first release with the qdl deploy and boot.
    pub(crate) const QDL: LavaVersion = LavaVersion { year: 2026, month: 6 };
    /// The first release whose strict schema refuses `deploy.qdl.overlay_path`.
    pub(crate) const NO_OVERLAY_PATH: LavaVersion = LavaVersion { year: 2026, month: 7 };

    pub(crate) fn parse(text: &str) -> Result<LavaVersion, JobError> {
        let bad = || JobError::LavaVersion(text.chars().take(40).collect());
        let mut parts = text.split('.');
        let (Some(year), Some(month)) = (parts.next(), parts.next()) else { return Err(bad()) };
        let point_ok = parts
            .next()
            .is_none_or(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()));
        let digits = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(year, 4) || !digits(month, 2) || !point_ok || parts.next().is_some() {
            return Err(bad());
        }
        let version = LavaVersion {
            year: year.parse().map_err(|_| bad())?,
            month: month.parse().map_err(|_| bad())?,
        };
        if !(1..=12).contains(&version.month) || version.year < 2018 {
            return Err(bad());
        }
        Ok(version)
    }
}

impl std::fmt::Display for LavaVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:02}", self.year, self.month)
    }
}

/// One download header: its name, and the value the caller read from the environment
/// variable `--qcomflash-header NAME=VAR` names (never from the command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DownloadHeader {
    pub name: String,
    pub value: String,
}

impl DownloadHeader {
    /// `NAME=VAR`: an HTTP header name (RFC 9110 token) and an environment variable name.
    pub(crate) fn parse_flag(text: &str) -> Result<(String, String), JobError> {
        let bad = || {
            JobError::HeaderFlag(
                text.chars().take(80).collect::<String>().escape_debug().to_string(),
            )
        };
        let (name, var) = text.split_once('=').ok_or_else(bad)?;
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        let var_ok = var.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if name.is_empty()
            || name.len() > 100
            || !name.chars().all(token)
            || !var_ok
            || var.len() > 100
        {
            return Err(bad());
        }
        Ok((name.to_string(), var.to_string()))
    }

    /// The header with `value`, the content of variable `var`: refused when empty or when it
    /// holds anything but printable ASCII (a line break would forge more headers).
    pub(crate) fn new(
        name: &str,
        var: &str,
        value: Option<&str>,
    ) -> Result<DownloadHeader, JobError> {
        let value = value.unwrap_or_default();
        if value.is_empty()
            || value.len() > 8192
            || !value.chars().all(|c| c.is_ascii_graphic() || c == ' ')
        {
            return Err(JobError::HeaderValue {
                name: name.to_string(),
                var: var.to_string(),
                empty: value.is_empty(),
            });
        }
        Ok(DownloadHeader { name: name.to_string(), value: value.to_string() })
    }
}

/// Bad `rtbuild lava` input; every message names the flag and what to pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JobError {
    #[error(
        "bad --bundle-url `{url}`: {why}; pass the http(s) URL of a bundle (*.tar.zst from `rtbuild bundle`, or a *.qcomflash.tar.gz)"
    )]
    BundleUrl { url: String, why: &'static str },
    #[error(
        "bad --device-type `{0}`; use a LAVA device type name (letters, digits, `-`, `_`, `.`)"
    )]
    DeviceType(String),
    #[error("bad --tags entry `{0}`; use LAVA tag names (letters, digits, `-`, `_`, `.`)")]
    Tag(String),
    #[error(
        "{scenarios} scenario(s) of --duration {duration} make a LAVA job of {hours} h, longer than the {MAX_JOB_HOURS} h one job may hold a board; pass a shorter --duration, fewer --tests or fewer --scenario per job"
    )]
    TooLong { duration: String, scenarios: usize, hours: u64 },
    #[error("--scenario lists no scenario; pass e.g. --scenario idle,stress")]
    NoScenario,
    #[error(
        "--deploy qdl needs the board's qdl stages, and the catalog has no qdl profile for `{0}`; pass --deploy flasher, or add a `lava:` section with `deploy: qdl` to its machine file (--machines-dir)"
    )]
    NoQdlProfile(String),
    #[error("bad --image `{0}`; use an image recipe name (letters, digits, `-`, `_`, `.`)")]
    Image(String),
    #[error(transparent)]
    Qemu(#[from] QemuError),
    #[error("bad --prompt `{0}`; pass printable ASCII, at most 200 characters")]
    Prompt(String),
    #[error(
        "--deploy qemu boots files, not a bundle; pass --kernel-url and --rootfs-url (and --initrd-url) instead of --bundle-url"
    )]
    QemuNeedsFiles,
    #[error(
        "--deploy {0} flashes a bundle on a board; pass --bundle-url URL (--kernel-url, --initrd-url, --rootfs-url, --kernel-args, --arch and --no-login belong to --deploy qemu)"
    )]
    BoardNeedsBundle(&'static str),
    #[error("bad --lava-version `{0}`; pass a LAVA release as YYYY.MM, e.g. 2026.07")]
    LavaVersion(String),
    #[error(
        "LAVA {0} has no qdl deploy (it arrived in 2026.06); pass --lava-version 2026.06 or later, or --deploy flasher"
    )]
    QdlNeedsNewerLava(LavaVersion),
    #[error(
        "bad --qcomflash-header `{0}`; pass NAME=VAR: an HTTP header name and the environment variable (or CI secret) that holds its value, e.g. QLIAuthorization=LAB_TOKEN"
    )]
    HeaderFlag(String),
    #[error(
        "--qcomflash-header {name}: the environment variable {var} {}; set it (from a CI secret) to the header's value, printable ASCII on one line",
        if *.empty { "is empty or not set" } else { "holds a line break, a control or a non-ASCII character" }
    )]
    HeaderValue { name: String, var: String, empty: bool },
    #[error("--qcomflash-header belongs to a board deploy (qdl, flasher), not --deploy qemu")]
    QemuHeaders,
    #[error(
        "--bundle-url names `{0}`, but LAVA's qdl deploy unpacks the archive with gzip; pass the bundle's .tar.gz (`rtbuild bundle --gzip`, `rtbuild image --bundle --gzip`) or meta-qcom's *.qcomflash.tar.gz"
    )]
    QdlNeedsGzip(String),
}

/// A bundle URL LAVA can download. The lab receives the file as it is (no `compression:`:
/// LAVA would otherwise hand the flasher a decompressed `.tar` instead of the archive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BundleUrl {
    pub url: String,
    /// The file name (`downloads://NAME` after the download).
    pub file: String,
}

impl BundleUrl {
    /// An `http(s)://HOST/…/NAME.tar.zst|.tar.gz|.tar.xz` URL made of characters that need no
    /// quoting anywhere (no spaces, quotes, `$`, backslashes or control characters).
    pub(crate) fn parse(text: &str) -> Result<BundleUrl, JobError> {
        let bad = |why| JobError::BundleUrl { url: text.chars().take(80).collect(), why };
        let rest = text
            .strip_prefix("https://")
            .or_else(|| text.strip_prefix("http://"))
            .ok_or_else(|| bad("it is not an http:// or https:// URL"))?;
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~:/?#[]@!&()*+,;=%".contains(c);
        if let Some(c) = text.chars().find(|c| !allowed(*c)) {
            return Err(bad(if c.is_whitespace() {
                "it contains white space"
            } else {
                "it contains a character URLs must percent-encode"
            }));
        }
        let (host, path) = rest.split_once('/').ok_or_else(|| bad("it names no file"))?;
        if host.is_empty() || host.starts_with(':') {
            return Err(bad("it names no host"));
        }
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let file = path.rsplit('/').next().unwrap_or_default();
        let stem = [".tar.zst", ".tar.gz", ".tar.xz"]
            .iter()
            .find_map(|ext| file.strip_suffix(ext))
            .ok_or_else(|| bad("its file is not a .tar.zst, .tar.gz or .tar.xz archive"))?;
        if stem.is_empty() {
            return Err(bad("it names no file"));
        }
        if !lava_name(file) {
            return Err(bad(
                "its file name holds characters other than letters, digits, `-`, `_` and `.`",
            ));
        }
        Ok(BundleUrl { url: text.to_string(), file: file.to_string() })
    }
}

/// Where and how the lab flashes and boots the board: the catalog's [`LavaProfile`] with the
/// `--device-type`/`--deploy` overrides applied.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lab {
    pub device_type: String,
    pub deploy: Deploy,
    /// qdl: the firehose programmer and the stages (from the profile).
    pub firehose: String,
    pub qdl_stages: Vec<QdlStage>,
    /// Prompts after login, the profile's first.
    pub prompts: Vec<String>,
    /// flasher: the board name `flash.settings` gives the lab's flasher.
    pub flasher_device_type: String,
    /// flasher: more `KEY=VALUE` lines for `flash.settings`.
    pub flasher_settings: Vec<String>,
    /// The lava-test-plans revision the lab's view comes from.
    pub pin: LabPlansPin,
}

impl Lab {
    /// The lab's view of `machine` under meta-qcom `branch`'s lava-test-plans pin: its
    /// profile for that branch (else the machine name, the flasher and the `root@<machine>`
    /// prompt), then the overrides.
    pub(crate) fn resolve(
        machine: &str,
        profile: Option<&LavaProfile>,
        branch: &str,
        device_type: Option<&str>,
        deploy: Option<Deploy>,
    ) -> Result<Lab, JobError> {
        let pin = lab_plans(branch).0;
        let profile = profile.map(|p| p.for_branch(pin.branch));
        let deploy = deploy.or(profile.map(|p| p.deploy)).unwrap_or(Deploy::Flasher);
        // A QEMU job needs LAVA's `qemu` device type, whatever board the profile names.
        let profile_type =
            profile.filter(|p| (p.deploy == Deploy::Qemu) == (deploy == Deploy::Qemu));
        let device_type = device_type
            .map(str::to_string)
            .or_else(|| profile_type.map(|p| p.device_type.clone()))
            .unwrap_or_else(|| {
                if deploy == Deploy::Qemu { "qemu".to_string() } else { machine.to_string() }
            });
        let qdl = profile.filter(|p| p.deploy == Deploy::Qdl);
        if deploy == Deploy::Qdl && qdl.is_none() {
            return Err(JobError::NoQdlProfile(machine.to_string()));
        }
        let prompt = profile.map_or_else(|| format!("root@{machine}"), |p| p.boot_prompt.clone());
        Ok(Lab {
            firehose: qdl.and_then(|p| p.firehose.clone()).unwrap_or_default(),
            qdl_stages: qdl.map(|p| p.qdl_stages.clone()).unwrap_or_default(),
            prompts: vec![prompt, GENERIC_PROMPT.to_string()],
            flasher_device_type: profile
                .and_then(|p| p.flasher_device_type.clone())
                .unwrap_or_else(|| device_type.clone()),
            flasher_settings: profile.map(|p| p.flasher_settings.clone()).unwrap_or_default(),
            pin,
            device_type,
            deploy,
        })
    }

    /// `--prompt`: the shell prompt the boot waits for, before the generic `root@…` one.
    pub(crate) fn with_prompt(mut self, prompt: &str) -> Result<Lab, JobError> {
        let ok = !prompt.is_empty()
            && prompt.len() <= 200
            && prompt.chars().all(|c| c.is_ascii_graphic() || c == ' ');
        if !ok {
            return Err(JobError::Prompt(
                prompt.chars().take(80).collect::<String>().escape_debug().to_string(),
            ));
        }
        self.prompts[0] = prompt.to_string();
        Ok(self)
    }
}

/// What the job boots: a bundle the lab flashes on the board, or files QEMU boots.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Artifacts {
    Bundle(BundleUrl),
    Qemu(QemuImages),
}

/// Everything a job needs, validated by the caller except what [`render`] checks.
#[derive(Debug, Clone)]
pub(crate) struct JobRequest {
    /// The catalog machine name (the image's host name).
    pub machine: String,
    /// The image the bundle holds (its qcomflash folder is `<image>-<machine>`).
    pub image: String,
    /// How the lab names, flashes and boots the board.
    pub lab: Lab,
    pub distro: Distro,
    /// The bundle (qdl, flasher) or the QEMU files (qemu), as `lab.deploy` needs.
    pub artifacts: Artifacts,
    /// RT and housekeeping CPUs; cyclictest measures the RT CPUs.
    pub layout: CpuLayout,
    /// What to measure and under which load.
    pub measurement: Measurement,
    pub threshold_us: u64,
    pub tags: Vec<String>,
    /// The LAVA release the job is for (`--lava-version`).
    pub lava_version: LavaVersion,
    /// Headers for the bundle's download (`--qcomflash-header`).
    pub headers: Vec<DownloadHeader>,
}

impl JobRequest {
    fn measure(&self) -> Measure {
        self.measurement.measure()
    }

    /// Seconds each measurement runs (`--duration`).
    fn seconds(&self) -> u64 {
        self.measurement.span.length.seconds(self.measurement.interval_us)
    }

    /// What every program's command line is built from, as `rtbuild test` builds it.
    pub(crate) fn suite(&self) -> Suite<'_> {
        Suite {
            layout: &self.layout,
            tests: &self.measurement.tests,
            test_args: &self.measurement.test_args,
            noise_us: self.measurement.noise_us,
            seconds: self.seconds(),
        }
    }

    /// The commands `rtbuild test` would run for `scenario`: cyclictest (results in
    /// `json_path`) and the loads, which outlast every test of the scenario.
    pub(crate) fn commands(&self, scenario: Scenario, json_path: &str) -> Commands {
        let measure = self.measure();
        let spec = CommandSpec {
            measure: &measure,
            measure_cpus: &self.layout.rt,
            load_percent: self.measurement.load_percent,
            cyclictest_args: &self.measurement.cyclictest_args,
            custom_load: self.measurement.custom_load.as_ref(),
        };
        let mut commands = scenario.commands(&self.layout, &spec, json_path);
        // Unpinned threads go where cyclictest's own process may run, so the process gets
        // exactly the measured CPUs, as `rtbuild test`'s helper starts it (`run-cyclictest`:
        // `taskset -c CPUS`); pinned threads set their own CPU with `-a`.
        if let Threads::Unpinned(_) = self.measurement.threads {
            commands.cyclictest = ["taskset".to_string(), "-c".into(), self.layout.rt.to_string()]
                .into_iter()
                .chain(commands.cyclictest)
                .collect();
        }
        let suite = self.suite();
        let total_s = suite.total_seconds(self.seconds());
        commands.load = suite
            .loads(
                scenario,
                self.measurement.load_percent,
                self.measurement.custom_load.as_ref(),
                total_s,
            )
            .iter()
            .map(load_argv)
            .collect();
        commands
    }

    /// Processes one scenario runs one after the other (cyclictest and each invocation).
    fn runs_per_scenario(&self) -> u64 {
        runs_per_scenario(&self.suite())
    }

    fn scenario_minutes(&self) -> u64 {
        let seconds = self.suite().total_seconds(self.seconds());
        scenario_minutes(seconds, self.runs_per_scenario())
    }

    fn test_minutes(&self) -> u64 {
        SETUP_MIN + self.scenario_minutes() * self.measurement.scenarios.len() as u64
    }

    fn job_minutes(&self) -> u64 {
        overhead_minutes(&self.lab) + self.test_minutes()
    }

    pub(crate) fn validate(&self) -> Result<(), JobError> {
        if self.measurement.scenarios.is_empty() {
            return Err(JobError::NoScenario);
        }
        match (&self.artifacts, self.lab.deploy) {
            (Artifacts::Bundle(_), Deploy::Qemu) => return Err(JobError::QemuNeedsFiles),
            (Artifacts::Qemu(_), Deploy::Qdl | Deploy::Flasher) => {
                return Err(JobError::BoardNeedsBundle(self.lab.deploy.name()));
            }
            _ => {}
        }
        if self.lab.deploy == Deploy::Qdl && self.lava_version < LavaVersion::QDL {
            return Err(JobError::QdlNeedsNewerLava(self.lava_version));
        }
        if self.lab.deploy == Deploy::Qemu && !self.headers.is_empty() {
            return Err(JobError::QemuHeaders);
        }
        if let (Artifacts::Bundle(bundle), Deploy::Qdl) = (&self.artifacts, self.lab.deploy)
            && !bundle.file.ends_with(".tar.gz")
        {
            return Err(JobError::QdlNeedsGzip(bundle.file.clone()));
        }
        if !lava_name(&self.lab.device_type) {
            return Err(JobError::DeviceType(self.lab.device_type.chars().take(80).collect()));
        }
        if !lava_name(&self.image) {
            return Err(JobError::Image(self.image.chars().take(80).collect()));
        }
        if let Some(tag) = self.tags.iter().find(|t| !lava_name(t)) {
            return Err(JobError::Tag(tag.chars().take(80).collect()));
        }
        let seconds = self.suite().total_seconds(self.seconds());
        minutes_within_limit(
            &self.measurement.duration_text,
            scenario_minutes(seconds, self.runs_per_scenario()),
            self.measurement.scenarios.len(),
        )
        .map(drop)
    }
}

/// Minutes to flash and boot before the tests: lava-test-plans' qdl deploy, one boot per
/// stage and as long again for the login; or rtbuild's download, flasher and boot.
fn overhead_minutes(lab: &Lab) -> u64 {
    match lab.deploy {
        Deploy::Qdl => QDL_DEPLOY_MIN + 2 * QDL_BOOT_MIN * lab.qdl_stages.len() as u64,
        Deploy::Flasher => DOWNLOAD_MIN + FLASH_MIN + BOOT_MIN,
        Deploy::Qemu => super::qemu::DEPLOY_MIN + super::qemu::BOOT_MIN,
    }
}

/// The most any board's flashing and boot takes (qdl with two stages), for the limit and for
/// the CI job that waits for a LAVA job.
const MAX_OVERHEAD_MIN: u64 = QDL_DEPLOY_MIN + 4 * QDL_BOOT_MIN;

/// Minutes one scenario may take: `seconds` of tests, a second of load warm-up, two minutes
/// to stop the load, and ten seconds per process to start it and print its results.
fn scenario_minutes(seconds: u64, runs: u64) -> u64 {
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
fn runs_per_scenario(suite: &Suite<'_>) -> u64 {
    let sequence = Sequence::of(suite.tests);
    let others: usize = sequence.others().map(|p| suite.runs(p)).sum();
    u64::from(sequence.cyclictest) + others as u64
}

fn minutes_within_limit(
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

/// The job definition as YAML text (deterministic).
pub(crate) fn render(req: &JobRequest) -> Result<String, JobError> {
    let job = job(req)?;
    let scenarios: Vec<String> =
        req.measurement.scenarios.iter().map(ToString::to_string).collect();
    let tests: Vec<&str> = req.measurement.tests.iter().map(|p| p.name()).collect();
    let what = match req.lab.deploy {
        Deploy::Qemu => "boot the images under QEMU (no board)",
        _ => "flash the bundle, boot",
    };
    Ok(format!(
        "# LAVA job generated by `rtbuild lava` for {} ({} deploy): {what},\n\
         # verify the RT tuning, run {} under {}.\n\
         # Read the log back with `rtbuild report` (`lavacli jobs logs --raw ID`).\n{}",
        req.machine,
        req.lab.deploy.name(),
        tests.join(", "),
        scenarios.join(", "),
        job.to_yaml()
    ))
}

/// The job: the lab's deploy and boot for the board, then rtbuild's test.
pub(crate) fn job(req: &JobRequest) -> Result<Job, JobError> {
    req.validate()?;
    let scenario_list: Vec<String> =
        req.measurement.scenarios.iter().map(ToString::to_string).collect();
    let length = match req.measurement.span.length {
        Length::Seconds(s) => format!("{s} s"),
        Length::Loops(l) => format!("{l} loops"),
    };
    let test_list: Vec<&str> = req.measurement.tests.iter().map(|p| p.name()).collect();
    let text = |s: &str| ContextValue::Text(s.to_string());
    let mut metadata = vec![
        ("rtbuild.machine", text(&req.machine)),
        ("rtbuild.image", text(&req.image)),
        ("rtbuild.distro", text(req.distro.name())),
    ];
    match &req.artifacts {
        Artifacts::Bundle(bundle) => metadata.push(("rtbuild.bundle", text(&bundle.url))),
        Artifacts::Qemu(images) => metadata.extend(images.metadata()),
    }
    let headers: Vec<&str> = req.headers.iter().map(|h| h.name.as_str()).collect();
    if !headers.is_empty() {
        // The names only: the values are secrets.
        metadata.push(("rtbuild.download-headers", text(&headers.join(","))));
    }
    metadata.extend([
        ("rtbuild.lava-version", text(&req.lava_version.to_string())),
        ("rtbuild.lava-test-plans", text(req.lab.pin.revision)),
        ("rtbuild.meta-qcom-branch", text(req.lab.pin.branch)),
    ]);
    metadata.extend([
        ("rtbuild.scenarios", text(&scenario_list.join(","))),
        ("rtbuild.duration", text(&req.measurement.duration_text)),
        ("rtbuild.rt-cpus", text(&req.layout.rt.to_string())),
        ("rtbuild.threshold-us", ContextValue::Number(req.threshold_us)),
        ("rtbuild.tests", text(&test_list.join(","))),
        ("rtbuild.noise-us", ContextValue::Number(req.measurement.noise_us)),
    ]);
    let (mut actions, context) = match &req.artifacts {
        Artifacts::Bundle(bundle) => {
            let actions = match req.lab.deploy {
                Deploy::Flasher => flasher_actions(req, bundle),
                _ => qdl_actions(req, bundle),
            };
            let delay = ContextValue::Number(TEST_CHARACTER_DELAY);
            (actions, [("test_character_delay".to_string(), delay)].into())
        }
        Artifacts::Qemu(images) => (vec![Action::deploy(images.deploy())], images.context()),
    };
    actions.push(Action::boot(login_boot(req)));
    actions.push(Action::test(test(req)));
    Ok(Job {
        device_type: req.lab.device_type.clone(),
        job_name: job_name(&req.machine, &test_list, &scenario_list, &length),
        timeouts: Timeouts {
            job: Minutes::of(req.job_minutes()),
            connection: Minutes::of(2),
            // The tests are silent while they measure, and a scenario prints its results test
            // by test: the test shell waits at most a whole scenario for a line.
            connections: [("lava-test-shell".to_string(), Minutes::of(req.scenario_minutes() + 5))]
                .into(),
            actions: ActionTimeouts { finalize: Seconds { seconds: 60 } },
        },
        priority: "medium".to_string(),
        visibility: "public".to_string(),
        tags: req.tags.clone(),
        context,
        metadata: metadata.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        actions,
    })
}

/// The job's name, at most [`MAX_JOB_NAME`] characters: every test and scenario when they fit,
/// else their counts (the full lists are in the metadata, `rtbuild.tests` and
/// `rtbuild.scenarios`).
pub(crate) fn job_name(
    machine: &str,
    tests: &[&str],
    scenarios: &[String],
    length: &str,
) -> String {
    let full = format!(
        "rtbuild RT latency on {machine}: {} under {} ({length} each)",
        tests.join(", "),
        scenarios.join(", ")
    );
    if full.chars().count() <= MAX_JOB_NAME {
        return full;
    }
    let short = format!(
        "rtbuild RT latency on {machine}: {} tests under {} scenarios ({length} each)",
        tests.len(),
        scenarios.len()
    );
    short.chars().take(MAX_JOB_NAME).collect()
}

/// The download headers as LAVA's `headers:` map.
fn header_map(req: &JobRequest) -> BTreeMap<String, String> {
    req.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect()
}

/// The qcomflash folder inside the bundle (meta-qcom's and `rtbuild bundle`'s alike).
fn image_dir(req: &JobRequest) -> String {
    format!("{}-{}", req.image, req.machine)
}

/// lava-test-plans' qdl deploy: the archive as it is, LAVA's overlay applied to the rootfs
/// image; then one qdl boot per storage stage.
fn qdl_actions(req: &JobRequest, bundle: &BundleUrl) -> Vec<Action> {
    let dir = image_dir(req);
    let mut actions = vec![Action::deploy(DeployAction::Qdl {
        rootfs_image: format!("{dir}/rootfs.img"),
        overlay_path: (req.lava_version < LavaVersion::NO_OVERLAY_PATH)
            .then(|| QDL_OVERLAY_PATH.to_string()),
        qcomflash: QcomflashImage {
            headers: header_map(req),
            url: bundle.url.clone(),
            apply_overlay: true,
        },
        timeout: Minutes::of(QDL_DEPLOY_MIN),
    })];
    for stage in &req.lab.qdl_stages {
        actions.push(Action::boot(Boot::Qdl {
            firehose_program: req.lab.firehose.clone(),
            rawprogram: stage.rawprogram.join(" "),
            patch: stage.patch.join(" "),
            path: if stage.path.is_empty() { dir.clone() } else { format!("{dir}/{}", stage.path) },
            storage: stage.storage.clone(),
            debug: true,
            timeout: Minutes::of(QDL_BOOT_MIN),
        }));
    }
    actions
}

/// lava-test-plans' flasher deploy: download the archive unchanged; a postprocess step writes
/// `flash.settings` (the LAVA overlay, where it goes, the board); the lab's flasher flashes it.
fn flasher_actions(req: &JobRequest, bundle: &BundleUrl) -> Vec<Action> {
    let mut steps = vec![
        "export IMAGE_PATH=$PWD".to_string(),
        "cp overlay*.tar.gz overlay.tar.gz".to_string(),
        "echo \"OVERLAY=overlay.tar.gz\" >> $IMAGE_PATH/flash.settings".to_string(),
        "echo \"OVERLAY_PATH=/\" >> $IMAGE_PATH/flash.settings".to_string(),
        format!(
            "echo \"DEVICE_TYPE={}\" >> $IMAGE_PATH/flash.settings",
            req.lab.flasher_device_type
        ),
    ];
    steps.extend(
        req.lab
            .flasher_settings
            .iter()
            .map(|line| format!("echo \"{line}\" >> $IMAGE_PATH/flash.settings")),
    );
    steps.push("cat $IMAGE_PATH/flash.settings".to_string());
    let download = |name: &str| Image::of(format!("downloads://{name}"));
    vec![
        Action::deploy(DeployAction::Downloads {
            timeout: Minutes::of(DOWNLOAD_MIN),
            images: [(
                "flasher".to_string(),
                Image { headers: header_map(req), url: bundle.url.clone() },
            )]
            .into(),
            postprocess: Some(Postprocess {
                docker: Docker { image: POSTPROCESS_IMAGE.to_string(), steps },
            }),
        }),
        Action::deploy(DeployAction::Flasher {
            timeout: Minutes::of(FLASH_MIN),
            images: [
                ("image".to_string(), download(&bundle.file)),
                ("settings".to_string(), download("flash.settings")),
                ("overlay".to_string(), download("overlay.tar.gz")),
            ]
            .into(),
        }),
    ]
}

/// Power on and log in: as root, with a password on the qcom-distro flavours (as meta-qcom's
/// test workflow passes it to lava-test-plans), waiting for the lab's prompts.
fn login_boot(req: &JobRequest) -> Boot {
    let password = match req.distro {
        Distro::Nodistro => None,
        Distro::QcomDistro | Distro::QcomDistroKvm => {
            Some(("Password".to_string(), "oelinux123".to_string()))
        }
    };
    let auto_login = AutoLogin {
        login_prompt: "login:".to_string(),
        username: "root".to_string(),
        password_prompt: password.as_ref().map(|p| p.0.clone()),
        password: password.map(|p| p.1),
    };
    let minutes = match (&req.artifacts, req.lab.deploy) {
        (Artifacts::Qemu(images), _) => return images.boot(auto_login, &req.lab.prompts),
        (_, Deploy::Qdl) => QDL_BOOT_MIN * req.lab.qdl_stages.len() as u64,
        _ => BOOT_MIN,
    };
    Boot::Minimal { timeout: Minutes::of(minutes), auto_login, prompts: req.lab.prompts.clone() }
}

fn test(req: &JobRequest) -> TestAction {
    let definition = Definition {
        from: "inline".to_string(),
        name: DEFINITION.to_string(),
        path: format!("inline/{DEFINITION}.yaml"),
        repository: TestDefinition {
            metadata: TestMetadata {
                format: "Lava-Test Test Definition 1.0".to_string(),
                name: DEFINITION.to_string(),
                description: "PREEMPT_RT check, rtbuild-tune.sh verify, and the rt-tests programs \
                              of `rtbuild lava --tests` under each load scenario (rtbuild)"
                    .to_string(),
                maintainer: vec!["rtbuild".to_string()],
                os: vec!["openembedded".to_string()],
                devices: vec![req.lab.device_type.clone()],
                scope: vec!["performance".to_string(), "preempt-rt".to_string()],
            },
            run: RunSteps { steps: steps(req) },
        },
    };
    TestAction { timeout: Minutes::of(req.test_minutes()), definitions: vec![definition] }
}

/// The script's name in the test definition's folder on the board.
pub(crate) const SCRIPT: &str = "rtbuild-rt.sh";
/// Ends the script's here-document (a line the script itself never holds).
const SCRIPT_END: &str = "RTBUILD_SCRIPT_END";

/// The test definition's steps: write the [`script`] beside the definition (a quoted
/// here-document, so nothing in it is expanded on the way), then run it with `sh`.
pub(crate) fn steps(req: &JobRequest) -> Vec<String> {
    vec![
        format!("cat > {SCRIPT} <<'{SCRIPT_END}'\n{}{SCRIPT_END}", script(req)),
        format!("sh ./{SCRIPT}"),
    ]
}

/// The POSIX shell script the board runs (shellcheck-clean): the RUN marker, the PREEMPT_RT
/// and tuning checks, then one function per scenario, each run in a subshell so that nothing
/// fails the script early.
pub(crate) fn script(req: &JobRequest) -> String {
    let scenario_list: Vec<String> =
        req.measurement.scenarios.iter().map(ToString::to_string).collect();
    let functions: Vec<ScenarioFunction> = req
        .measurement
        .scenarios
        .iter()
        .map(|scenario| {
            let name = scenario.to_string();
            let function = format!("scenario_{}", name.replace('-', "_"));
            ScenarioFunction { name, function, lines: scenario_parts(req, *scenario) }
        })
        .collect();
    let ctx = minijinja::context! {
        run => markers::RUN,
        close => markers::CLOSE,
        machine => req.machine.as_str(),
        threshold => req.threshold_us,
        noise => req.measurement.noise_us,
        rt => req.layout.rt.to_string(),
        tests => req.measurement.tests.iter().map(|p| p.name()).collect::<Vec<_>>().join(","),
        scenarios => scenario_list.join(","),
        // One word in the run marker (`100000000-loops`).
        duration => req.measurement.duration_text.replace(' ', "-"),
        checks => markers::STATE_CHECKS,
        state_begin => markers::STATE_BEGIN,
        state_end => markers::STATE_END,
        kernel_pattern => crate::measure::kernel_log::PATTERN,
        functions => minijinja::Value::from(minijinja::value::Serde(&functions)),
    };
    match crate::text::templates::render("rtbuild-rt.sh", &ctx) {
        Ok(text) => text,
        // The template is part of rtbuild and every variable is set above.
        Err(err) => panic!("bug in rtbuild: the LAVA test script template does not render: {err}"),
    }
}

/// One scenario's shell function in the script: `name`'s commands, one a line.
#[derive(serde::Serialize)]
struct ScenarioFunction {
    name: String,
    function: String,
    lines: Vec<String>,
}

/// One scenario's commands, one a line: start the load, run each test in the order
/// `rtbuild test` runs them, print every raw output between markers right after it ends,
/// report one `lava-test-case` per test, stop the load.
fn scenario_parts(req: &JobRequest, scenario: Scenario) -> Vec<String> {
    let name = scenario.to_string();
    let json = format!("{name}.json");
    let commands = req.commands(scenario, &json);
    let suite = req.suite();
    let sequence = Sequence::of(&req.measurement.tests);
    let mut parts = vec![
        "set +e".to_string(),
        format!("d=\"{WORK_DIR}\""),
        "mkdir -p \"$d\" && cd \"$d\" || exit 1".to_string(),
        format!("rm -f {name}.*"),
        format!("rtbuild_state {name} before"),
        "loads=".to_string(),
    ];
    for load in &commands.load {
        parts.push(format!("{} >/dev/null 2>&1 & loads=\"$loads $!\"", quote::sh_join(load)));
    }
    if !commands.load.is_empty() {
        parts.push("sleep 1".into());
    }
    for program in &sequence.before {
        parts.extend(program_parts(req, &suite, &name, *program));
    }
    if sequence.cyclictest {
        parts.extend(cyclictest_parts(req, &name, &json, &commands.cyclictest));
    }
    for program in &sequence.after {
        parts.extend(program_parts(req, &suite, &name, *program));
    }
    if !commands.load.is_empty() {
        // Word splitting of the PID list is wanted here.
        parts.push("# shellcheck disable=SC2086".into());
        parts.push("kill $loads 2>/dev/null".into());
        parts.push("# shellcheck disable=SC2086".into());
        parts.push("wait $loads 2>/dev/null".into());
    }
    parts.push(format!("rtbuild_state {name} after"));
    parts
}

/// Prints `file` between the begin and end markers of `fields` (`scenario=… test=… run=…`),
/// ending its last line if the program did not.
fn raw_parts(fields: &str, format: &str, file: &str) -> Vec<String> {
    vec![
        format!("echo '{} {fields} format={format}{}'", markers::BEGIN, markers::CLOSE),
        format!("if [ -s {file} ]; then cat {file}; [ -z \"$(tail -c 1 {file})\" ] || echo; fi"),
        format!("echo \"{} {fields} exit=$rc{}\"", markers::END, markers::CLOSE),
    ]
}

/// The largest `"max":` of rt-tests JSON files (cyclictest, oslat and the others write one
/// per thread, spaces or tabs before it), into `$max`.
fn max_of(files: &[String]) -> String {
    format!(
        "max=$(sed -n 's/^[[:space:]]*\"max\":[[:space:]]*\\([0-9][0-9]*\\).*/\\1/p' {} 2>/dev/null | sort -n | tail -n 1)",
        files.join(" ")
    )
}

/// `lava-test-case CASE` with `$max` as its measurement in µs, passing when every run exited
/// 0 (`$trc`) and `$max` is at most `limit`.
fn measured_case(case: &str, limit: u64) -> Vec<String> {
    vec![
        format!(
            "if [ -n \"$max\" ] && [ \"$trc\" -eq 0 ] && [ \"$max\" -le {limit} ]; then result=pass; else result=fail; fi"
        ),
        format!(
            "if [ -n \"$max\" ]; then lava-test-case {case} --result \"$result\" --measurement \"$max\" --units us; else lava-test-case {case} --result fail; fi"
        ),
    ]
}

fn cyclictest_parts(req: &JobRequest, name: &str, json: &str, argv: &[String]) -> Vec<String> {
    let fields = format!("scenario={name} test=cyclictest run=cyclictest");
    let measure = req.measure();
    let cpus = req.layout.rt.len();
    // cyclictest in the background, asked for its status at each doubling of the elapsed time
    // (`rtbuild_snapshots`), then waited for: its exit status and outputs are what they are
    // in the foreground.
    let mut parts = vec![
        "rc=0".to_string(),
        format!(
            "ct_end={} ct_threads={}",
            measure.expected_seconds(cpus),
            measure.thread_count(cpus)
        ),
        format!("{} >{name}.out 2>&1 &", quote::sh_join(argv)),
        "ct=$!".to_string(),
        "rtbuild_snapshots >/dev/null 2>&1 &".to_string(),
        "snap=$!".to_string(),
        "wait \"$ct\" || rc=$?".to_string(),
        "kill \"$snap\" 2>/dev/null".to_string(),
        "wait \"$snap\" 2>/dev/null".to_string(),
        "trc=$rc".to_string(),
    ];
    parts.extend(raw_parts(&fields, "json", json));
    // Only the status blocks' own lines of its stderr (none can be a marker).
    parts.extend([
        format!("echo '{} scenario={name}{}'", markers::STATUS_BEGIN, markers::CLOSE),
        format!("grep -E '^(# cyclictest current status:|#-|T:)' {name}.out 2>/dev/null"),
        format!("echo '{} scenario={name}{}'", markers::STATUS_END, markers::CLOSE),
    ]);
    parts.push(max_of(&[json.to_string()]));
    parts.extend(measured_case(&format!("cyclictest-{name}"), req.threshold_us));
    parts
}

/// One rt-tests program other than cyclictest: each invocation (one per RT CPU for the
/// sender/receiver tests), its raw outputs, and one test case for the program.
fn program_parts(req: &JobRequest, suite: &Suite<'_>, name: &str, program: Program) -> Vec<String> {
    let invocations = suite.invocations(program, name);
    let case = format!("{program}-{name}");
    let mut run = vec!["trc=0".to_string()];
    let mut jsons = Vec::new();
    for invocation in &invocations {
        let stem = format!("{name}.{}", invocation.label);
        let fields = format!("scenario={name} test={program} run={}", invocation.label);
        // rt-tests 2.4's svsematest names its semaphore after `$_`, which only bash sets.
        let first = quote::sh(invocation.argv.first().map_or("", String::as_str));
        run.push("rc=0".into());
        run.push(format!(
            "env \"_=$(command -v {first} || echo {first})\" {} >{stem}.out 2>{stem}.err || rc=$?",
            quote::sh_join(&invocation.argv)
        ));
        run.push("[ \"$rc\" -eq 0 ] || trc=$rc".into());
        if let Some(json) = &invocation.json {
            run.extend(raw_parts(&fields, "json", json));
            jsons.push(json.clone());
        }
        // The plain output says what the JSON does not: rt-migrate-test's Passed!/Failed!,
        // everything of hwlatdetect's, and why a program failed.
        let text = raw_parts(&fields, "text", &format!("{stem}.out"));
        if invocation.json.is_none() || program == Program::RtMigrateTest {
            run.extend(text);
        } else {
            run.push(format!("if [ \"$rc\" -ne 0 ]; then {}; fi", text.join("; ")));
        }
        run.push(format!(
            "if [ \"$rc\" -ne 0 ] && [ -s {stem}.err ]; then {}; fi",
            raw_parts(&fields, "stderr", &format!("{stem}.err")).join("; ")
        ));
    }
    match program.kind() {
        Kind::Latency => {
            run.push(max_of(&jsons));
            run.extend(measured_case(&case, req.threshold_us));
        }
        Kind::Noise => {
            run.push(max_of(&jsons));
            run.extend(measured_case(&case, req.measurement.noise_us));
        }
        Kind::Correctness => {
            let passed = match program {
                // rt-migrate-test 2.4 exits 1 even when it prints Passed! (with -c).
                Program::RtMigrateTest => {
                    format!("grep -qx ' *Passed!' {name}.rt-migrate-test.out")
                }
                _ => "[ \"$trc\" -eq 0 ]".to_string(),
            };
            run.push(format!(
                "if {passed}; then result=pass; else result=fail; fi; lava-test-case {case} --result \"$result\""
            ));
        }
        Kind::Firmware => {
            // hwlatdetect exits 1 when samples exceed its threshold: that is the verdict.
            run.push(format!(
                "max=$(sed -n 's/^[[:space:]]*Max Latency:[[:space:]]*\\([0-9][0-9]*\\)us.*/\\1/p' {name}.hwlatdetect.out | tail -n 1)"
            ));
            run.push(format!(
                "if grep -qx '[[:space:]]*Samples exceeding threshold:[[:space:]]*0[[:space:]]*' {name}.hwlatdetect.out; then result=pass; else result=fail; fi"
            ));
            run.push(format!(
                "if [ -n \"$max\" ]; then lava-test-case {case} --result \"$result\" --measurement \"$max\" --units us; else lava-test-case {case} --result \"$result\"; fi"
            ));
        }
        Kind::Load => {}
    }
    if program != Program::Hwlatdetect {
        return run;
    }
    // Only a kernel with the hwlat tracer can run hwlatdetect; without it the test is skipped
    // and the log says so.
    let skipped = [
        format!(
            "echo '{} scenario={name} test={program} reason=no-hwlat-tracer{}'",
            markers::SKIPPED,
            markers::CLOSE
        ),
        format!("lava-test-case {case} --result skip"),
    ];
    let mut parts = vec![
        "hw=no".to_string(),
        "for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do if [ -r \"$t/available_tracers\" ]; then if grep -qw hwlat \"$t/available_tracers\"; then hw=yes; fi; break; fi; done".to_string(),
        "if [ \"$hw\" = yes ]; then".to_string(),
    ];
    parts.extend(run.iter().map(|line| format!("  {line}")));
    parts.push("else".to_string());
    parts.extend(skipped.iter().map(|line| format!("  {line}")));
    parts.push("fi".to_string());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::testrun::Span;
    use crate::plan::CpuSet;

    pub(crate) fn request() -> JobRequest {
        let online = CpuSet::range(0, 8);
        JobRequest {
            machine: "rb3gen2-core-kit".into(),
            image: "qcom-multimedia-image".into(),
            lab: Lab::resolve("rb3gen2-core-kit", None, "master", None, None).unwrap(),
            distro: Distro::QcomDistro,
            artifacts: Artifacts::Bundle(
                BundleUrl::parse("https://ci.example.com/b/rb3gen2-core-kit-rt.tar.gz").unwrap(),
            ),
            layout: CpuLayout::new(
                &online,
                &CpuSet::parse("7").unwrap(),
                None,
                crate::host::cpus::Board::Given,
            )
            .unwrap(),
            measurement: Measurement {
                custom_load: None,
                scenarios: vec![Scenario::Idle, Scenario::Stress],
                span: Span::parse("5m").unwrap(),
                duration_text: "5m".into(),
                interval_us: 1000,
                histogram_us: 1000,
                load_percent: 60,
                cyclictest_args: vec!["--spike=250".into()],
                tests: vec![Program::Cyclictest],
                test_args: BTreeMap::new(),
                noise_us: 20,
                main_cpu: None,
                threads: crate::measure::testrun::Threads::PerCpu,
            },
            threshold_us: 100,
            tags: vec![],
            lava_version: LavaVersion::CURRENT,
            headers: vec![],
        }
    }

    #[test]
    fn bundle_urls() {
        let ok = BundleUrl::parse("https://h.example/x/rt-bundle.tar.zst?sig=a%2Fb").unwrap();
        assert_eq!(ok.file, "rt-bundle.tar.zst");
        let gz =
            BundleUrl::parse("http://h:8080/core-image-base-iq-9075-evk.rootfs.qcomflash.tar.gz")
                .unwrap();
        assert_eq!(gz.file, "core-image-base-iq-9075-evk.rootfs.qcomflash.tar.gz");
        for (bad, why) in [
            ("rt.tar.zst", "not an http"),
            ("ftp://h/rt.tar.zst", "not an http"),
            ("https://h/rt.zip", "not a .tar.zst"),
            ("https://h/a b.tar.zst", "white space"),
            ("https://h/$(reboot).tar.zst", "percent-encode"),
            ("https://h/'x'.tar.zst", "percent-encode"),
            ("https:///x.tar.zst", "no host"),
            ("https://h/.tar.zst", "no file"),
        ] {
            let err = BundleUrl::parse(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn steps_use_the_test_command_builder() {
        let req = request();
        let script = script(&req);
        let stress = &script[script.find("scenario_stress()").unwrap()..];
        let measure = req.measure();
        let spec = CommandSpec {
            measure: &measure,
            measure_cpus: &req.layout.rt,
            load_percent: 60,
            cyclictest_args: &req.measurement.cyclictest_args,
            custom_load: None,
        };
        let commands = Scenario::Stress.commands(&req.layout, &spec, "stress.json");
        assert!(commands.cyclictest.ends_with(&["--spike=250".to_string()]));
        assert!(stress.contains(&quote::sh_join(&commands.cyclictest)), "{stress}");
        for load in &commands.load {
            assert!(stress.contains(&quote::sh_join(load)), "{stress}");
        }
        assert!(stress.contains("[ \"$max\" -le 100 ]"), "{stress}");
        assert!(stress.contains("--units us"), "{stress}");
    }

    /// cyclictest runs in the background while `rtbuild_snapshots` asks it for its status
    /// (knowing its one thread on CPU 7 and its 300 s), is waited for (its exit status is
    /// `rc`), and only the status block lines of its output are printed, in a frame of their
    /// own after the raw output.
    #[test]
    fn cyclictest_is_asked_for_its_status_and_the_blocks_are_framed() {
        let script = script(&request());
        let idle = &script[script.find("scenario_idle()").unwrap()..];
        let idle = &idle[..idle.find("( scenario_idle )").unwrap()];
        let at = |needle: &str| idle.find(needle).unwrap_or_else(|| panic!("{needle}: {idle}"));
        let order = [
            "  ct_end=300 ct_threads=1\n",
            " >idle.out 2>&1 &\n  ct=$!\n",
            "  rtbuild_snapshots >/dev/null 2>&1 &\n  snap=$!\n",
            "  wait \"$ct\" || rc=$?\n",
            "  kill \"$snap\" 2>/dev/null\n  wait \"$snap\" 2>/dev/null\n  trc=$rc\n",
            "<<<RTBUILD-RAW-END scenario=idle test=cyclictest run=cyclictest exit=$rc>>>",
            "  echo '<<<RTBUILD-STATUS-BEGIN scenario=idle>>>'\n  grep -E '^(# cyclictest current status:|#-|T:)' idle.out 2>/dev/null\n  echo '<<<RTBUILD-STATUS-END scenario=idle>>>'\n",
        ];
        let places: Vec<usize> = order.iter().map(|n| at(n)).collect();
        assert!(places.windows(2).all(|w| w[0] < w[1]), "{places:?}: {idle}");
        assert!(script.contains("rtbuild_snapshots() {\n"), "{script}");
        assert!(script.contains("kill -s USR1 \"$ct\""), "{script}");
    }

    /// lava-dispatcher's test definition writer (2023.01 and 2026.07,
    /// `actions/deploy/testdef.py`) puts a backslash before every `$` and digit of a step that
    /// holds `--shell` or `--cmd`, which the script's step does: the script must use none (the
    /// board's state markers printed `scenario=$1` under the real `lava-run`).
    #[test]
    fn the_steps_hold_no_positional_parameter_lava_would_rewrite() {
        let mut req = request();
        req.measurement.tests = crate::measure::rttests::parse_list(
            "cyclictest,pmqtest,oslat,rt-migrate-test,hwlatdetect",
        )
        .unwrap();
        for step in steps(&req) {
            let bytes = step.as_bytes();
            let at = bytes.windows(2).position(|w| w[0] == b'$' && w[1].is_ascii_digit());
            assert!(
                at.is_none(),
                "{}",
                &step[at.unwrap_or(0)..][..40.min(step.len() - at.unwrap_or(0))]
            );
        }
    }

    /// `--threads 8 --unpinned` (the RK3588 guide's `cyclictest -m -t 8 -p 99`): cyclictest
    /// places unpinned threads on the CPUs its own process may use, so on the board it runs
    /// under `taskset -c` with exactly the measured CPUs, as `rtbuild test`'s helper runs it,
    /// with no `-a` and no `-h` (cyclictest's own interval distance).
    #[test]
    fn unpinned_threads_run_under_taskset_with_exactly_the_measured_cpus() {
        let mut req = request();
        req.layout = CpuLayout::new(
            &CpuSet::range(0, 8),
            &CpuSet::parse("5-7").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        req.measurement.threads = Threads::Unpinned(8);
        req.measurement.histogram_us = 0;
        req.measurement.cyclictest_args = Vec::new();
        let commands = req.commands(Scenario::Stress, "stress.json");
        let argv = commands.cyclictest.join(" ");
        assert!(argv.starts_with("taskset -c 5-7 cyclictest -m -p 99 -t 8 "), "{argv}");
        assert!(!commands.cyclictest.iter().any(|a| a == "-a" || a == "-h"), "{argv}");
        // The load stays on the housekeeping CPUs.
        let housekeeping = CpuSet::parse("0-4").unwrap();
        assert!(
            commands.load.iter().all(|l| l[..2] == ["taskset", "-c"]
                && CpuSet::parse(&l[2]).unwrap().is_subset(&housekeeping)),
            "{commands:?}"
        );
        let text = script(&req);
        let stress = &text[text.find("scenario_stress()").unwrap()..];
        assert!(
            stress.contains(&format!("  {} >stress.out", quote::sh_join(&commands.cyclictest))),
            "{stress}"
        );
        // Pinned threads (the default) set their CPUs themselves: no taskset around cyclictest.
        let pinned = request().commands(Scenario::Stress, "stress.json").cyclictest;
        assert_eq!(pinned[..5], ["cyclictest", "-m", "-p", "99", "-a"], "{pinned:?}");
    }

    #[test]
    fn every_test_runs_with_rtbuild_tests_command_lines_in_its_order() {
        let mut req = request();
        req.layout = CpuLayout::new(
            &CpuSet::range(0, 8),
            &CpuSet::parse("6-7").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        req.measurement.tests = crate::measure::rttests::parse_list(
            "cyclictest,pmqtest,oslat,rt-migrate-test,hwlatdetect",
        )
        .unwrap();
        req.measurement.test_args.insert(
            Program::Oslat,
            crate::measure::rttests::options::parse("oslat=-D 10m").unwrap().1,
        );
        req.measurement.test_args.insert(
            Program::Hackbench,
            crate::measure::rttests::options::parse("hackbench=-p").unwrap().1,
        );
        req.measurement.scenarios = vec![Scenario::Hackbench];
        let step = script(&req);
        let suite = req.suite();
        let mut at = Vec::new();
        for program in
            [Program::Oslat, Program::Pmqtest, Program::RtMigrateTest, Program::Hwlatdetect]
        {
            for invocation in suite.invocations(program, "hackbench") {
                let line = quote::sh_join(&invocation.argv);
                let found = step.find(&format!(" {line} >hackbench.{}.out ", invocation.label));
                at.push(found.unwrap_or_else(|| panic!("{line} not in {step}")));
            }
        }
        let ct = step.find("cyclictest -m -p 99 -a 6-7 -t 2").unwrap();
        // oslat first, then cyclictest, then the others in --tests order.
        assert!(
            at[0] < ct && ct < at[1] && at[1] < at[2] && at[2] < at[3] && at[3] < at[4],
            "{at:?} {ct}"
        );
        assert!(step.contains("oslat -c 6-7 -C 5 -q --json=hackbench.oslat.json -D 10m"), "{step}");
        assert!(
            step.contains("pmqtest -a6 -t1 -p 99 -D 300 -q --json=hackbench.pmqtest-cpu6.json")
        );
        // The hackbench load outlasts every test: oslat 600 s, cyclictest 300 s, pmqtest twice
        // 300 s, rt-migrate-test and hwlatdetect 300 s each, plus 120 s.
        let total = 600 + 300 + 2 * 300 + 300 + 300 + 120;
        assert!(
            step.contains(&format!(
                "taskset -c 0-5 timeout {total}s hackbench -g 6 -s 512 -l 1000000000 -p >/dev/null"
            )),
            "{step}"
        );
        for case in ["oslat-hackbench", "cyclictest-hackbench", "pmqtest-hackbench"] {
            assert!(
                step.contains(&format!(
                    "lava-test-case {case} --result \"$result\" --measurement \"$max\" --units us"
                )),
                "{case}"
            );
        }
        assert!(step.contains("[ \"$max\" -le 20 ]"), "oslat is judged against --noise-us");
        assert!(step.contains("lava-test-case rt-migrate-test-hackbench --result \"$result\""));
        assert!(step.contains(
            "<<<RTBUILD-SKIPPED scenario=hackbench test=hwlatdetect reason=no-hwlat-tracer>>>"
        ));
        // The timeouts hold the whole run: one scenario of 2520 s of tests.
        assert!(req.scenario_minutes() * 60 >= total + 6 * 10, "{}", req.scenario_minutes());
        assert!(
            render(&req)
                .unwrap()
                .contains("rtbuild.tests: oslat,cyclictest,pmqtest,rt-migrate-test,hwlatdetect\n")
        );
    }

    #[test]
    fn timeouts_grow_with_the_duration_and_have_a_ceiling() {
        let mut req = request();
        req.measurement.span = Span::parse("24h").unwrap();
        req.measurement.duration_text = "24h".into();
        assert!(render(&req).unwrap().contains("timeouts:\n  job:\n    minutes: 2951\n"));
        req.measurement.scenarios =
            vec![Scenario::Idle, Scenario::Stress, Scenario::Full, Scenario::StressIsolated];
        req.measurement.span = Span::parse("2d").unwrap();
        req.measurement.duration_text = "2d".into();
        assert_eq!(
            render(&req).unwrap_err().to_string(),
            "4 scenario(s) of --duration 2d make a LAVA job of 194 h, longer than the 168 h one \
             job may hold a board; pass a shorter --duration, fewer --tests or fewer --scenario per job"
        );
    }

    /// The lab's facts for each catalog board, written by hand from qualcomm-linux/
    /// lava-test-plans a20c74e (`projects/meta-qcom/devices/<machine>` and the `devices/*`
    /// file it extends; `include/qdl.jinja2` for the action shapes): device type, firehose,
    /// stages as (storage, path, rawprogram, patch), the board's prompt. Boards the lab does not
    /// list get the machine name, the flasher and `root@<machine>`.
    #[test]
    fn every_catalog_board_gets_the_labs_device_type_qdl_stages_and_prompt() {
        let six_raw = "rawprogram0.xml rawprogram1.xml rawprogram2.xml rawprogram3.xml \
                       rawprogram4.xml rawprogram5.xml";
        let six_patch = "patch0.xml patch1.xml patch2.xml patch3.xml patch4.xml patch5.xml";
        let ufs = ("ufs", "", six_raw, six_patch);
        let sail = ("spinor", "/sail_nor", "rawprogram0.xml", "patch0.xml");
        let ddr = "prog_firehose_ddr.elf";
        type Stage<'a> = (&'a str, &'a str, &'a str, &'a str);
        let qdl: &[(&str, &str, &str, Vec<Stage<'_>>, &str)] = &[
            ("rb3gen2-core-kit", "qcs6490-rb3gen2", ddr, vec![ufs], "root@rb3gen2"),
            ("iq-9075-evk", "lemans-evk", ddr, vec![sail, ufs], "root@lemans-evk"),
            ("qcs8300-ride-sx", "monaco-ride", ddr, vec![sail, ufs], "root@monaco-ride"),
            ("iq-8275-evk", "monaco-evk", ddr, vec![sail, ufs], "root@monaco-evk"),
            ("qcs615-ride", "qcs615-ride", ddr, vec![ufs], "root@qcs615-ride"),
            ("qcs9100-ride-sx", "qcs9100-ride", ddr, vec![sail, ufs], "root@qcs9100-ride"),
            (
                "iq-x7181-evk",
                "hamoa-iot-evk",
                "xbl_s_devprg_ns.melf",
                vec![
                    ("spinor", "/spinor", "rawprogram0.xml", "patch0.xml"),
                    ("ufs", "", "rawprogram0.xml rawprogram1.xml", "patch0.xml patch1.xml"),
                ],
                "root@hamoa-iot-evk",
            ),
        ];
        let catalog = crate::catalog::Catalog::embedded();
        let job_for = |machine: &str| {
            let profile = catalog.lookup(machine).unwrap().machine.lava.clone();
            let mut req = request();
            req.machine = machine.to_string();
            req.lab = Lab::resolve(machine, profile.as_ref(), "master", None, None).unwrap();
            job(&req).unwrap()
        };
        for (machine, device_type, firehose, stages, prompt) in qdl {
            let job = job_for(machine);
            assert_eq!(job.device_type, *device_type, "{machine}");
            assert_eq!(
                job.context,
                [("test_character_delay".to_string(), ContextValue::Number(10))].into()
            );
            let dir = format!("qcom-multimedia-image-{machine}");
            let mut want = vec![Action::deploy(DeployAction::Qdl {
                rootfs_image: format!("{dir}/rootfs.img"),
                // LAVA 2026.07 (the default) refuses overlay_path.
                overlay_path: None,
                qcomflash: QcomflashImage {
                    headers: BTreeMap::new(),
                    url: "https://ci.example.com/b/rb3gen2-core-kit-rt.tar.gz".into(),
                    apply_overlay: true,
                },
                timeout: Minutes::of(20),
            })];
            for (storage, path, rawprogram, patch) in stages {
                want.push(Action::boot(Boot::Qdl {
                    firehose_program: firehose.to_string(),
                    rawprogram: rawprogram.to_string(),
                    patch: patch.to_string(),
                    path: format!("{dir}{path}"),
                    storage: storage.to_string(),
                    debug: true,
                    timeout: Minutes::of(15),
                }));
            }
            want.push(Action::boot(Boot::Minimal {
                timeout: Minutes::of(15 * stages.len() as u64),
                auto_login: AutoLogin {
                    login_prompt: "login:".into(),
                    username: "root".into(),
                    password_prompt: Some("Password".into()),
                    password: Some("oelinux123".into()),
                },
                prompts: vec![prompt.to_string(), "root@(.*):[/~]#".into()],
            }));
            assert_eq!(job.actions[..want.len()], want[..], "{machine}");
            assert!(matches!(job.actions.last(), Some(Action::Test { .. })), "{machine}");
            assert_eq!(job.actions.len(), want.len() + 1, "{machine}");
        }
        for machine in ["iq-615-evk", "qcm6490-idp"] {
            let job = job_for(machine);
            assert_eq!(job.device_type, machine);
            let Action::Boot { boot: Boot::Minimal { prompts, .. } } = &job.actions[2] else {
                panic!("{machine}: {:?}", job.actions[2]);
            };
            assert_eq!(prompts, &[format!("root@{machine}"), "root@(.*):[/~]#".to_string()]);
            assert!(matches!(
                job.actions[1],
                Action::Deploy { deploy: DeployAction::Flasher { .. } }
            ));
        }
    }

    /// `--deploy flasher` on a qdl board: lava-test-plans' flasher deploy (the download as it
    /// is, no `compression:`; `flash.settings` with the overlay and the board).
    #[test]
    fn the_flasher_deploy_hands_the_archive_over_unchanged() {
        let catalog = crate::catalog::Catalog::embedded();
        let profile = catalog.lookup("qcs8300-ride-sx").unwrap().machine.lava.clone();
        let mut req = request();
        req.machine = "qcs8300-ride-sx".into();
        let bundle = BundleUrl::parse(
            "https://h.example/qcom-multimedia-image-qcs8300-ride-sx.rootfs.qcomflash.tar.gz",
        )
        .unwrap();
        req.artifacts = Artifacts::Bundle(bundle.clone());
        req.lab =
            Lab::resolve(&req.machine, profile.as_ref(), "master", None, Some(Deploy::Flasher))
                .unwrap();
        let job = job(&req).unwrap();
        assert_eq!(job.device_type, "monaco-ride");
        let Action::Deploy { deploy: DeployAction::Downloads { images, postprocess, .. } } =
            &job.actions[0]
        else {
            panic!("{:?}", job.actions[0]);
        };
        assert_eq!(images["flasher"].url, bundle.url);
        let steps = &postprocess.as_ref().unwrap().docker.steps;
        assert_eq!(
            steps[1..5],
            [
                "cp overlay*.tar.gz overlay.tar.gz",
                "echo \"OVERLAY=overlay.tar.gz\" >> $IMAGE_PATH/flash.settings",
                "echo \"OVERLAY_PATH=/\" >> $IMAGE_PATH/flash.settings",
                // lava-test-plans' flasher_device_type for this board.
                "echo \"DEVICE_TYPE=qcs8300-ride-sx\" >> $IMAGE_PATH/flash.settings",
            ]
        );
        let Action::Deploy { deploy: DeployAction::Flasher { images, .. } } = &job.actions[1]
        else {
            panic!("{:?}", job.actions[1]);
        };
        assert_eq!(
            images["image"].url,
            "downloads://qcom-multimedia-image-qcs8300-ride-sx.rootfs.qcomflash.tar.gz"
        );
        assert_eq!(images["overlay"].url, "downloads://overlay.tar.gz");
        assert!(!render(&req).unwrap().contains("compression"));
        // --device-type wins over the profile; --deploy qdl needs a profile with stages.
        let lab = Lab::resolve("x", profile.as_ref(), "master", Some("my-type"), None).unwrap();
        assert_eq!((lab.device_type.as_str(), lab.deploy), ("my-type", Deploy::Qdl));
        assert_eq!(
            Lab::resolve("iq-615-evk", None, "master", None, Some(Deploy::Qdl)).unwrap_err(),
            JobError::NoQdlProfile("iq-615-evk".into())
        );
    }

    /// `--deploy qemu`: LAVA's `qemu` device type whatever board the profile names, the board's
    /// prompt, the files QEMU boots, and the board job's test action unchanged.
    #[test]
    fn a_qemu_job_boots_the_files_and_runs_the_board_jobs_test() {
        let catalog = crate::catalog::Catalog::embedded();
        let profile = catalog.lookup("iq-9075-evk").unwrap().machine.lava.clone();
        let lab = Lab::resolve("iq-9075-evk", profile.as_ref(), "master", None, Some(Deploy::Qemu))
            .unwrap();
        assert_eq!(
            (lab.device_type.as_str(), lab.prompts[0].as_str()),
            ("qemu", "root@lemans-evk")
        );
        let lab =
            Lab::resolve("x", profile.as_ref(), "master", Some("qemu-rt"), Some(Deploy::Qemu))
                .unwrap();
        assert_eq!(lab.device_type, "qemu-rt");

        let mut req = request();
        let mut board_test = test(&req);
        req.lab =
            Lab::resolve("rb3gen2-core-kit", None, "master", None, Some(Deploy::Qemu)).unwrap();
        assert_eq!(job(&req).unwrap_err(), JobError::QemuNeedsFiles);
        let url = |flag, u| super::super::qemu::ImageUrl::parse(flag, u).unwrap();
        req.artifacts = Artifacts::Qemu(QemuImages {
            kernel: url("--kernel-url", "file:///l/vmlinuz"),
            initrd: None,
            rootfs: url("--rootfs-url", "file:///l/rootfs.ext4"),
            kernel_args: vec!["root=/dev/vda".into()],
            arch: super::super::qemu::Arch::Amd64,
            cpus: 8,
            login: true,
        });
        let job = job(&req).unwrap();
        assert_eq!(job.device_type, "qemu");
        assert!(matches!(job.actions[0], Action::Deploy { deploy: DeployAction::Tmpfs { .. } }));
        let Action::Boot { boot: Boot::Qemu { auto_login: Some(login), prompts, .. } } =
            &job.actions[1]
        else {
            panic!("{:?}", job.actions[1]);
        };
        assert_eq!(login.username, "root");
        assert_eq!(prompts[0], "root@rb3gen2-core-kit");
        board_test.definitions[0].repository.metadata.devices = vec!["qemu".into()];
        assert_eq!(job.actions[2], Action::test(board_test));
        assert_eq!(job.actions.len(), 3);
        // A board deploy with QEMU files is refused the other way round.
        req.lab = Lab::resolve("rb3gen2-core-kit", None, "master", None, None).unwrap();
        assert_eq!(super::job(&req).unwrap_err(), JobError::BoardNeedsBundle("flasher"));
    }

    /// The lab's view under meta-qcom wrynose's pin, written by hand from lava-test-plans
    /// 62f75dd (`projects/meta-qcom/devices/<machine>` for `flasher_device_type`, the
    /// `devices/<machine>` it extends for the device type and `BOOT_OS_PROMPT`; flasher.jinja2).
    #[test]
    fn wrynose_boards_get_the_flasher_view_of_lava_test_plans_62f75dd() {
        let catalog = crate::catalog::Catalog::embedded();
        for (machine, flasher_type) in [
            ("rb3gen2-core-kit", "qcs6490"),
            ("iq-9075-evk", "iq-9075-evk"),
            ("qcs8300-ride-sx", "qcs8300-ride-sx"),
            ("iq-8275-evk", "iq-8275-evk"),
            ("qcs615-ride", "qcs615-ride"),
            ("qcs9100-ride-sx", "qcs9100-ride-sx"),
            ("iq-x7181-evk", "iq-x7181-evk"),
        ] {
            let profile = catalog.lookup(machine).unwrap().machine.lava.clone();
            let lab = Lab::resolve(machine, profile.as_ref(), "wrynose", None, None).unwrap();
            assert_eq!(lab.device_type, machine);
            assert_eq!(lab.deploy, Deploy::Flasher, "{machine}");
            assert_eq!(lab.prompts[0], format!("root@{machine}"));
            assert_eq!(lab.flasher_device_type, flasher_type);
            assert_eq!(lab.pin.revision, "62f75dda7cc3");
            let mut req = request();
            req.machine = machine.to_string();
            req.lab = lab;
            let steps = match &job(&req).unwrap().actions[0] {
                Action::Deploy { deploy: DeployAction::Downloads { postprocess, .. } } => {
                    postprocess.as_ref().unwrap().docker.steps.clone()
                }
                other => panic!("{other:?}"),
            };
            let firehose =
                "echo \"FIREHOSE_PROGRAM=xbl_s_devprg_ns.melf\" >> $IMAGE_PATH/flash.settings";
            assert_eq!(steps.iter().any(|s| s == firehose), machine == "iq-x7181-evk", "{steps:?}");
        }
        // A branch with no known pin gets master's view.
        let profile = catalog.lookup("rb3gen2-core-kit").unwrap().machine.lava.clone();
        let lab =
            Lab::resolve("rb3gen2-core-kit", profile.as_ref(), "qli-2.0", None, None).unwrap();
        assert_eq!((lab.device_type.as_str(), lab.pin.branch), ("qcs6490-rb3gen2", "master"));
    }

    #[test]
    fn overlay_path_only_for_lava_releases_that_read_it() {
        let catalog = crate::catalog::Catalog::embedded();
        let profile = catalog.lookup("rb3gen2-core-kit").unwrap().machine.lava.clone();
        let mut req = request();
        req.lab = Lab::resolve("rb3gen2-core-kit", profile.as_ref(), "master", None, None).unwrap();
        let overlay = |req: &JobRequest| match &job(req).unwrap().actions[0] {
            Action::Deploy { deploy: DeployAction::Qdl { overlay_path, .. } } => {
                overlay_path.clone()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(overlay(&req), None);
        req.lava_version = LavaVersion::parse("2026.06").unwrap();
        assert_eq!(overlay(&req).as_deref(), Some("/home"));
        req.lava_version = LavaVersion::parse("2025.10").unwrap();
        assert_eq!(job(&req).unwrap_err(), JobError::QdlNeedsNewerLava(req.lava_version));
        req.lava_version = LavaVersion::CURRENT;
        req.artifacts =
            Artifacts::Bundle(BundleUrl::parse("https://h/b.qcomflash.tar.zst").unwrap());
        assert_eq!(job(&req).unwrap_err(), JobError::QdlNeedsGzip("b.qcomflash.tar.zst".into()));
        assert_eq!(LavaVersion::parse("2026.07.1").unwrap(), LavaVersion::CURRENT);
        for bad in ["2026", "2026.7", "26.07", "2026.13", "2026.07.", "2026.07.1.2", "x.07", ""] {
            assert!(matches!(LavaVersion::parse(bad), Err(JobError::LavaVersion(_))), "{bad}");
        }
    }

    #[test]
    fn job_names_fit_lavas_limit_whatever_the_tests_and_scenarios() {
        let mut req = request();
        req.measurement.tests = crate::measure::rttests::parse_list(
            "cyclictest,cyclicdeadline,oslat,pi_stress,pmqtest,ptsematest,rt-migrate-test,ssdd,svsematest,signaltest,sigwaittest,hwlatdetect",
        )
        .unwrap();
        req.measurement.scenarios = vec![
            Scenario::Idle,
            Scenario::Stress,
            Scenario::Full,
            Scenario::StressIsolated,
            Scenario::Hackbench,
        ];
        req.machine = "qcs9100-ride-sx".into();
        let job = job(&req).unwrap();
        assert!(job.job_name.chars().count() <= MAX_JOB_NAME, "{}", job.job_name);
        assert_eq!(
            job.job_name,
            format!(
                "rtbuild RT latency on qcs9100-ride-sx: {} tests under 5 scenarios (300 s each)",
                req.measurement.tests.len()
            )
        );
        let ContextValue::Text(tests) = &job.metadata["rtbuild.tests"] else { panic!() };
        assert_eq!(tests.split(',').count(), req.measurement.tests.len());
        // A short list keeps every name.
        assert_eq!(
            super::job(&request()).unwrap().job_name,
            "rtbuild RT latency on rb3gen2-core-kit: cyclictest under idle, stress (300 s each)"
        );
    }

    #[test]
    fn download_headers_reach_the_qcomflash_download_and_never_the_metadata() {
        let catalog = crate::catalog::Catalog::embedded();
        let profile = catalog.lookup("rb3gen2-core-kit").unwrap().machine.lava.clone();
        let mut req = request();
        req.lab = Lab::resolve("rb3gen2-core-kit", profile.as_ref(), "master", None, None).unwrap();
        req.headers = vec![
            DownloadHeader::new("QLIAuthorization", "LAB_TOKEN", Some("Bearer s3cr3t")).unwrap(),
        ];
        let job = job(&req).unwrap();
        let Action::Deploy { deploy: DeployAction::Qdl { qcomflash, .. } } = &job.actions[0] else {
            panic!("{:?}", job.actions[0]);
        };
        assert_eq!(qcomflash.headers["QLIAuthorization"], "Bearer s3cr3t");
        assert_eq!(
            job.metadata["rtbuild.download-headers"],
            ContextValue::Text("QLIAuthorization".into())
        );
        assert!(!format!("{:?}", job.metadata).contains("s3cr3t"));
        // The flasher deploy sends them with the download.
        req.lab =
            Lab::resolve("rb3gen2-core-kit", profile.as_ref(), "wrynose", None, None).unwrap();
        let Action::Deploy { deploy: DeployAction::Downloads { images, .. } } =
            &super::job(&req).unwrap().actions[0]
        else {
            panic!()
        };
        assert_eq!(images["flasher"].headers["QLIAuthorization"], "Bearer s3cr3t");
        // Bad flags and values.
        assert_eq!(
            DownloadHeader::parse_flag("QLIAuthorization=LAB_TOKEN").unwrap(),
            ("QLIAuthorization".to_string(), "LAB_TOKEN".to_string())
        );
        for bad in ["QLIAuthorization", "=X", "A B=X", "A=1X", "A=X-Y", "A:=X", "A=$(id)"] {
            assert!(
                matches!(DownloadHeader::parse_flag(bad), Err(JobError::HeaderFlag(_))),
                "{bad}"
            );
        }
        for (value, empty) in [(None, true), (Some(""), true), (Some("a\r\nX-Evil: 1"), false)] {
            assert_eq!(
                DownloadHeader::new("H", "V", value).unwrap_err(),
                JobError::HeaderValue { name: "H".into(), var: "V".into(), empty }
            );
        }
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(render(&request()).unwrap(), render(&request()).unwrap());
    }
}
