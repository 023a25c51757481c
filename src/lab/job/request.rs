//! What a job is made from: the checked flags of `rtbuild lava` ([`JobRequest`] with its
//! [`Lab`], [`Artifacts`], [`LavaVersion`] and [`DownloadHeader`]s), and the command lines
//! `rtbuild test` would run for each scenario, which the test definition runs on the board.

use super::SETUP_MIN;
use super::minutes::{minutes_within_limit, overhead_minutes, runs_per_scenario, scenario_minutes};
use super::{GENERIC_PROMPT, JobError};
use crate::catalog::{Deploy, LabPlansPin, LavaProfile, QdlStage, lab_plans, lava_name};
use crate::host::cpus::CpuLayout;
use crate::lab::qemu::QemuImages;
use crate::measure::testrun::{
    CommandSpec, Commands, Measure, Measurement, Scenario, Suite, Threads, load_argv,
};
use crate::plan::Distro;

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
        let bad = || JobError::HeaderFlag(crate::text::printable_first(text, 80));
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
            return Err(JobError::Prompt(crate::text::printable_first(prompt, 80)));
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
    pub(super) fn measure(&self) -> Measure {
        self.measurement.measure()
    }

    /// Seconds each measurement runs (`--duration`).
    pub(super) fn seconds(&self) -> u64 {
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
    pub(super) fn runs_per_scenario(&self) -> u64 {
        runs_per_scenario(&self.suite())
    }

    pub(super) fn scenario_minutes(&self) -> u64 {
        let seconds = self.suite().total_seconds(self.seconds());
        scenario_minutes(seconds, self.runs_per_scenario())
    }

    pub(super) fn test_minutes(&self) -> u64 {
        SETUP_MIN + self.scenario_minutes() * self.measurement.scenarios.len() as u64
    }

    pub(super) fn job_minutes(&self) -> u64 {
        overhead_minutes(self.lab.deploy, self.lab.qdl_stages.len()) + self.test_minutes()
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
