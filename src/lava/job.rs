//! The LAVA job definition `rtbuild lava` writes.
//!
//! Shape (facts from qualcomm-linux/lava-test-plans' flasher jobs for meta-qcom boards, and
//! LAVA's own schema in Debian's `lava-common`): `deploy: to: downloads` fetches the bundle
//! (LAVA decompresses it) and a postprocess step writes `flash.settings` with the device type;
//! `deploy: to: flasher` flashes `downloads://…`; `boot: method: minimal` with auto-login as
//! root (password for the qcom-distro flavours) and the `root@<machine>` prompt; one inline
//! `test` definition. Its steps check `/sys/kernel/realtime`, run `rtbuild-tune.sh verify`
//! (installed in the image by the generated layer) and then, per scenario, start the load,
//! run cyclictest, print the raw JSON between [`markers`](super::markers) and report a
//! `lava-test-case` with the max latency in µs, pass or fail against the threshold.
//!
//! Every value that reaches a step is a catalog name, a number, a CPU list, or a word
//! checked here; the commands themselves come from [`Scenario::commands`], the builder
//! `rtbuild test` uses.

use serde_yaml::{Mapping, Value};

use super::markers;
use crate::plan::Distro;
use crate::quote;
use crate::testrun::{CommandSpec, Commands, CustomLoad, Length, Measure, Scenario, Span};
use crate::tune::Layout;

/// One job may hold a board this long at most (7 days).
pub const MAX_JOB_HOURS: u64 = 168;
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
pub const DEFINITION: &str = "rtbuild-rt";

/// Bad `rtbuild lava` input; every message names the flag and what to pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
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
        "{scenarios} scenario(s) of --duration {duration} make a LAVA job of {hours} h, longer than the {MAX_JOB_HOURS} h one job may hold a board; pass a shorter --duration or fewer --scenario per job"
    )]
    TooLong { duration: String, scenarios: usize, hours: u64 },
    #[error("--scenario lists no scenario; pass e.g. --scenario idle,stress")]
    NoScenario,
}

/// A bundle URL LAVA can download, with the compression LAVA undoes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleUrl {
    pub url: String,
    /// `zstd`, `gz` or `xz`.
    pub compression: &'static str,
    /// The file name LAVA gives the download once decompressed (`….tar`).
    pub unpacked: String,
}

impl BundleUrl {
    /// An `http(s)://HOST/…/NAME.tar.zst|.tar.gz|.tar.xz` URL made of characters that need no
    /// quoting anywhere (no spaces, quotes, `$`, backslashes or control characters).
    pub fn parse(text: &str) -> Result<BundleUrl, JobError> {
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
        let (stem, compression) = [(".tar.zst", "zstd"), (".tar.gz", "gz"), (".tar.xz", "xz")]
            .iter()
            .find_map(|(ext, comp)| file.strip_suffix(ext).map(|stem| (stem, *comp)))
            .ok_or_else(|| bad("its file is not a .tar.zst, .tar.gz or .tar.xz archive"))?;
        if stem.is_empty() {
            return Err(bad("it names no file"));
        }
        Ok(BundleUrl { url: text.to_string(), compression, unpacked: format!("{stem}.tar") })
    }
}

/// Everything a job needs, validated by the caller except what [`render`] checks.
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// The catalog machine name (the image's host name, so the shell prompt is `root@<name>`).
    pub machine: String,
    pub device_type: String,
    pub distro: Distro,
    pub bundle: BundleUrl,
    /// RT and housekeeping CPUs; cyclictest measures the RT CPUs.
    pub layout: Layout,
    /// `--load-cmd`: the load of scenario `custom`.
    pub custom_load: Option<CustomLoad>,
    pub scenarios: Vec<Scenario>,
    pub span: Span,
    /// `--duration` as given.
    pub duration_text: String,
    pub interval_us: u32,
    pub histogram_us: u32,
    pub load_percent: u8,
    /// Checked `--cyclictest-args`, appended as `rtbuild test` appends them.
    pub cyclictest_args: Vec<String>,
    pub threshold_us: u64,
    pub tags: Vec<String>,
}

fn lava_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 200
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl JobRequest {
    fn measure(&self) -> Measure {
        Measure {
            interval_us: self.interval_us,
            histogram_us: self.histogram_us,
            length: self.span.length,
        }
    }

    /// Minutes one scenario may take: the run, a second of load warm-up, and two minutes
    /// to stop the load and print the results.
    /// The commands `rtbuild test` would run for `scenario`, results in `json_path`.
    pub fn commands(&self, scenario: Scenario, json_path: &str) -> Commands {
        let measure = self.measure();
        let spec = CommandSpec {
            measure: &measure,
            measure_cpus: &self.layout.rt,
            load_percent: self.load_percent,
            cyclictest_args: &self.cyclictest_args,
            custom_load: self.custom_load.as_ref(),
        };
        scenario.commands(&self.layout, &spec, json_path)
    }

    fn scenario_minutes(&self) -> u64 {
        let seconds = self.span.length.seconds(self.interval_us) + 1 + 120;
        seconds.div_ceil(60)
    }

    fn test_minutes(&self) -> u64 {
        SETUP_MIN + self.scenario_minutes() * self.scenarios.len() as u64
    }

    fn job_minutes(&self) -> u64 {
        DOWNLOAD_MIN + FLASH_MIN + BOOT_MIN + self.test_minutes()
    }

    pub fn validate(&self) -> Result<(), JobError> {
        if self.scenarios.is_empty() {
            return Err(JobError::NoScenario);
        }
        if !lava_name(&self.device_type) {
            return Err(JobError::DeviceType(self.device_type.chars().take(80).collect()));
        }
        if let Some(tag) = self.tags.iter().find(|t| !lava_name(t)) {
            return Err(JobError::Tag(tag.chars().take(80).collect()));
        }
        job_minutes(&self.duration_text, self.span.length, self.interval_us, self.scenarios.len())
            .map(drop)
    }
}

/// Minutes one scenario may take: the run, a second of load warm-up, and two minutes to stop
/// the load and print the results.
fn scenario_minutes(length: Length, interval_us: u32) -> u64 {
    (length.seconds(interval_us) + 1 + 120).div_ceil(60)
}

/// Minutes a whole job of `scenarios` runs of `length` may take (download, flash, boot,
/// tests), or why a job that long is refused.
pub fn job_minutes(
    duration: &str,
    length: Length,
    interval_us: u32,
    scenarios: usize,
) -> Result<u64, JobError> {
    let test = SETUP_MIN + scenario_minutes(length, interval_us) * scenarios as u64;
    let minutes = DOWNLOAD_MIN + FLASH_MIN + BOOT_MIN + test;
    if minutes > MAX_JOB_HOURS * 60 {
        return Err(JobError::TooLong {
            duration: duration.chars().take(40).collect(),
            scenarios,
            hours: minutes.div_ceil(60),
        });
    }
    Ok(minutes)
}

/// `key: value` pairs in order (LAVA readers expect `device_type` and `job_name` first).
fn map<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut m = Mapping::new();
    for (k, v) in pairs {
        m.insert(Value::from(k), v);
    }
    Value::Mapping(m)
}

fn minutes(n: u64) -> Value {
    map([("minutes", Value::from(n.max(1)))])
}

fn strings(items: &[String]) -> Value {
    Value::Sequence(items.iter().map(|s| Value::from(s.as_str())).collect())
}

/// The job definition as YAML text (deterministic).
pub fn render(req: &JobRequest) -> Result<String, JobError> {
    req.validate()?;
    let scenario_list: Vec<String> = req.scenarios.iter().map(ToString::to_string).collect();
    let length = match req.span.length {
        Length::Seconds(s) => format!("{s} s"),
        Length::Loops(l) => format!("{l} loops"),
    };
    let job_name = format!(
        "rtbuild RT latency on {}: {} ({} each)",
        req.machine,
        scenario_list.join(", "),
        length
    );
    let mut top = vec![
        ("device_type", Value::from(req.device_type.as_str())),
        ("job_name", Value::from(job_name)),
        (
            "timeouts",
            map([
                ("job", minutes(req.job_minutes())),
                ("connection", minutes(2)),
                // cyclictest is silent while it measures: the test shell must wait a whole
                // scenario for the next line.
                ("connections", map([("lava-test-shell", minutes(req.scenario_minutes() + 5))])),
                ("actions", map([("finalize", map([("seconds", Value::from(60))]))])),
            ]),
        ),
        ("priority", Value::from("medium")),
        ("visibility", Value::from("public")),
    ];
    if !req.tags.is_empty() {
        top.push(("tags", strings(&req.tags)));
    }
    top.push((
        "metadata",
        map([
            ("rtbuild.machine", Value::from(req.machine.as_str())),
            ("rtbuild.distro", Value::from(req.distro.name())),
            ("rtbuild.bundle", Value::from(req.bundle.url.as_str())),
            ("rtbuild.scenarios", Value::from(scenario_list.join(","))),
            ("rtbuild.duration", Value::from(req.duration_text.as_str())),
            ("rtbuild.rt-cpus", Value::from(req.layout.rt.to_string())),
            ("rtbuild.threshold-us", Value::from(req.threshold_us)),
        ]),
    ));
    top.push(("actions", Value::Sequence(vec![download(req), flash(req), boot(req), test(req)])));
    let mut m = Mapping::new();
    for (k, v) in top {
        m.insert(Value::from(k), v);
    }
    let body = serde_yaml::to_string(&Value::Mapping(m)).unwrap_or_default();
    Ok(format!(
        "# LAVA job generated by `rtbuild lava` for {}: flash the bundle, boot, verify the RT tuning,\n\
         # measure {}. Read the log back with `rtbuild report` (`lavacli jobs logs --raw ID`).\n{body}",
        req.machine,
        scenario_list.join(", ")
    ))
}

fn download(req: &JobRequest) -> Value {
    map([(
        "deploy",
        map([
            ("timeout", minutes(DOWNLOAD_MIN)),
            ("to", Value::from("downloads")),
            (
                "images",
                map([(
                    "flasher",
                    map([
                        ("url", Value::from(req.bundle.url.as_str())),
                        ("compression", Value::from(req.bundle.compression)),
                    ]),
                )]),
            ),
            (
                "postprocess",
                map([(
                    "docker",
                    map([
                        ("image", Value::from(POSTPROCESS_IMAGE)),
                        (
                            "steps",
                            strings(&[format!(
                                "echo DEVICE_TYPE={} > flash.settings",
                                quote::sh(&req.device_type)
                            )]),
                        ),
                    ]),
                )]),
            ),
        ]),
    )])
}

fn flash(req: &JobRequest) -> Value {
    map([(
        "deploy",
        map([
            ("timeout", minutes(FLASH_MIN)),
            ("to", Value::from("flasher")),
            (
                "images",
                map([
                    (
                        "image",
                        map([("url", Value::from(format!("downloads://{}", req.bundle.unpacked)))]),
                    ),
                    ("settings", map([("url", Value::from("downloads://flash.settings"))])),
                ]),
            ),
        ]),
    )])
}

fn boot(req: &JobRequest) -> Value {
    // meta-qcom's test workflow logs in as root, with a password on the qcom-distro flavours.
    let login = match req.distro {
        Distro::Nodistro => {
            map([("login_prompt", Value::from("login:")), ("username", Value::from("root"))])
        }
        Distro::QcomDistro | Distro::QcomDistroKvm => map([
            ("login_prompt", Value::from("login:")),
            ("username", Value::from("root")),
            ("password_prompt", Value::from("Password")),
            ("password", Value::from("oelinux123")),
        ]),
    };
    map([(
        "boot",
        map([
            ("timeout", minutes(BOOT_MIN)),
            ("method", Value::from("minimal")),
            ("auto_login", login),
            ("prompts", strings(&[format!("root@{}", req.machine)])),
        ]),
    )])
}

fn test(req: &JobRequest) -> Value {
    let definition = map([
        ("from", Value::from("inline")),
        ("name", Value::from(DEFINITION)),
        ("path", Value::from(format!("inline/{DEFINITION}.yaml"))),
        (
            "repository",
            map([
                (
                    "metadata",
                    map([
                        ("format", Value::from("Lava-Test Test Definition 1.0")),
                        ("name", Value::from(DEFINITION)),
                        (
                            "description",
                            Value::from(
                                "PREEMPT_RT check, rtbuild-tune.sh verify, and cyclictest under each load scenario (rtbuild)",
                            ),
                        ),
                    ]),
                ),
                ("run", map([("steps", strings(&steps(req)))])),
            ]),
        ),
    ]);
    map([(
        "test",
        map([
            ("timeout", minutes(req.test_minutes())),
            ("definitions", Value::Sequence(vec![definition])),
        ]),
    )])
}

/// The test definition's shell steps. Each step is one line (LAVA writes the steps into one
/// script, in order); scenario steps run in a subshell so that nothing fails the script early.
pub fn steps(req: &JobRequest) -> Vec<String> {
    let scenario_list: Vec<String> = req.scenarios.iter().map(ToString::to_string).collect();
    let mut steps = vec![
        // LAVA's run script traces every command; the raw outputs are easier to read without.
        "set +x".to_string(),
        format!(
            "echo '{} machine={} threshold_us={} scenarios={} duration={}{}'",
            markers::RUN,
            req.machine,
            req.threshold_us,
            scenario_list.join(","),
            req.duration_text,
            markers::CLOSE
        ),
        "lava-test-case preempt-rt --shell grep -qx 1 /sys/kernel/realtime".to_string(),
        "lava-test-case rtbuild-tune-verify --shell rtbuild-tune.sh verify".to_string(),
    ];
    steps.extend(req.scenarios.iter().map(|s| scenario_step(req, *s)));
    steps
}

fn scenario_step(req: &JobRequest, scenario: Scenario) -> String {
    let name = scenario.to_string();
    let json = format!("{name}.json");
    let commands = req.commands(scenario, &json);
    let mut parts = vec![
        "set +e".to_string(),
        format!("d=\"{WORK_DIR}\""),
        "mkdir -p \"$d\" && cd \"$d\" || exit 1".to_string(),
        format!("rm -f {json}"),
        "loads=".to_string(),
    ];
    for load in &commands.load {
        parts.push(format!("{} >/dev/null 2>&1 & loads=\"$loads $!\"", quote::sh_join(load)));
    }
    if !commands.load.is_empty() {
        parts.push("sleep 1".into());
    }
    parts.push("rc=0".into());
    parts.push(format!("{} >{name}.out 2>&1 || rc=$?", quote::sh_join(&commands.cyclictest)));
    if !commands.load.is_empty() {
        parts.push("kill $loads 2>/dev/null".into());
        parts.push("wait $loads 2>/dev/null".into());
    }
    parts.push(format!("echo '{} scenario={name} format=json{}'", markers::BEGIN, markers::CLOSE));
    parts.push(format!("cat {json}"));
    parts.push(format!("echo \"{} scenario={name} exit=$rc{}\"", markers::END, markers::CLOSE));
    parts.push(format!(
        "max=$(sed -n 's/^ *\"max\": *\\([0-9][0-9]*\\).*/\\1/p' {json} | sort -n | tail -n 1)"
    ));
    parts.push(format!(
        "if [ -n \"$max\" ] && [ \"$rc\" -eq 0 ] && [ \"$max\" -le {} ]; then result=pass; else result=fail; fi",
        req.threshold_us
    ));
    parts.push(format!(
        "if [ -n \"$max\" ]; then lava-test-case cyclictest-{name} --result \"$result\" --measurement \"$max\" --units us; else lava-test-case cyclictest-{name} --result fail; fi"
    ));
    format!("({})", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::CpuSet;

    pub(crate) fn request() -> JobRequest {
        let online = CpuSet::range(0, 8);
        JobRequest {
            machine: "rb3gen2-core-kit".into(),
            device_type: "rb3gen2-core-kit".into(),
            distro: Distro::QcomDistroKvm,
            bundle: BundleUrl::parse("https://ci.example.com/b/rb3gen2-core-kit-rt.tar.zst")
                .unwrap(),
            layout: Layout::new(&online, &CpuSet::parse("7").unwrap(), None, "t").unwrap(),
            custom_load: None,
            scenarios: vec![Scenario::Idle, Scenario::Stress],
            span: Span::parse("5m").unwrap(),
            duration_text: "5m".into(),
            interval_us: 1000,
            histogram_us: 1000,
            load_percent: 60,
            cyclictest_args: vec!["--spike=250".into()],
            threshold_us: 100,
            tags: vec![],
        }
    }

    #[test]
    fn bundle_urls() {
        let ok = BundleUrl::parse("https://h.example/x/rt-bundle.tar.zst?sig=a%2Fb").unwrap();
        assert_eq!((ok.compression, ok.unpacked.as_str()), ("zstd", "rt-bundle.tar"));
        let gz =
            BundleUrl::parse("http://h:8080/core-image-base-iq-9075-evk.rootfs.qcomflash.tar.gz")
                .unwrap();
        assert_eq!(gz.unpacked, "core-image-base-iq-9075-evk.rootfs.qcomflash.tar");
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
        let steps = steps(&req);
        let stress = steps.last().unwrap();
        let measure = req.measure();
        let spec = CommandSpec {
            measure: &measure,
            measure_cpus: &req.layout.rt,
            load_percent: 60,
            cyclictest_args: &req.cyclictest_args,
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

    #[test]
    fn timeouts_grow_with_the_duration_and_have_a_ceiling() {
        let mut req = request();
        req.span = Span::parse("24h").unwrap();
        req.duration_text = "24h".into();
        assert!(render(&req).unwrap().contains("timeouts:\n  job:\n    minutes: 2951\n"));
        req.scenarios =
            vec![Scenario::Idle, Scenario::Stress, Scenario::Full, Scenario::StressIsolated];
        req.span = Span::parse("2d").unwrap();
        req.duration_text = "2d".into();
        assert_eq!(
            render(&req).unwrap_err().to_string(),
            "4 scenario(s) of --duration 2d make a LAVA job of 194 h, longer than the 168 h one \
             job may hold a board; pass a shorter --duration or fewer --scenario per job"
        );
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(render(&request()).unwrap(), render(&request()).unwrap());
    }
}
