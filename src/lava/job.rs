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
//! [`Suite`](crate::testrun::Suite), the builders `rtbuild test` uses.

use std::collections::BTreeMap;

use serde_yaml::{Mapping, Value};

use super::markers;
use crate::plan::Distro;
use crate::quote;
use crate::rttests::{Kind, Program};
use crate::testrun::{
    CommandSpec, Commands, Length, Measure, Measurement, Scenario, Sequence, Suite, load_argv,
};
use crate::tune::CpuLayout;

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
}

/// A bundle URL LAVA can download, with the compression LAVA undoes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BundleUrl {
    pub url: String,
    /// `zstd`, `gz` or `xz`.
    pub compression: &'static str,
    /// The file name LAVA gives the download once decompressed (`….tar`).
    pub unpacked: String,
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
pub(crate) struct JobRequest {
    /// The catalog machine name (the image's host name, so the shell prompt is `root@<name>`).
    pub machine: String,
    pub device_type: String,
    pub distro: Distro,
    pub bundle: BundleUrl,
    /// RT and housekeeping CPUs; cyclictest measures the RT CPUs.
    pub layout: CpuLayout,
    /// What to measure and under which load.
    pub measurement: Measurement,
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
        DOWNLOAD_MIN + FLASH_MIN + BOOT_MIN + self.test_minutes()
    }

    pub(crate) fn validate(&self) -> Result<(), JobError> {
        if self.measurement.scenarios.is_empty() {
            return Err(JobError::NoScenario);
        }
        if !lava_name(&self.device_type) {
            return Err(JobError::DeviceType(self.device_type.chars().take(80).collect()));
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
        noise_us: crate::rttests::DEFAULT_NOISE_US,
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
pub(crate) fn render(req: &JobRequest) -> Result<String, JobError> {
    req.validate()?;
    let scenario_list: Vec<String> =
        req.measurement.scenarios.iter().map(ToString::to_string).collect();
    let length = match req.measurement.span.length {
        Length::Seconds(s) => format!("{s} s"),
        Length::Loops(l) => format!("{l} loops"),
    };
    let test_list: Vec<&str> = req.measurement.tests.iter().map(|p| p.name()).collect();
    let job_name = format!(
        "rtbuild RT latency on {}: {} under {} ({} each)",
        req.machine,
        test_list.join(", "),
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
                // The tests are silent while they measure, and a scenario prints its results
                // test by test: the test shell waits at most a whole scenario for a line.
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
            ("rtbuild.duration", Value::from(req.measurement.duration_text.as_str())),
            ("rtbuild.rt-cpus", Value::from(req.layout.rt.to_string())),
            ("rtbuild.threshold-us", Value::from(req.threshold_us)),
            ("rtbuild.tests", Value::from(test_list.join(","))),
            ("rtbuild.noise-us", Value::from(req.measurement.noise_us)),
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
         # run {} under {}. Read the log back with `rtbuild report` (`lavacli jobs logs --raw ID`).\n{body}",
        req.machine,
        test_list.join(", "),
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
                                "PREEMPT_RT check, rtbuild-tune.sh verify, and the rt-tests programs of `rtbuild lava --tests` under each load scenario (rtbuild)",
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
pub(crate) fn steps(req: &JobRequest) -> Vec<String> {
    let scenario_list: Vec<String> =
        req.measurement.scenarios.iter().map(ToString::to_string).collect();
    let mut steps = vec![
        // LAVA's run script traces every command; the raw outputs are easier to read without.
        "set +x".to_string(),
        format!(
            "echo '{} machine={} threshold_us={} noise_us={} rt_cpus={} tests={} scenarios={} duration={}{}'",
            markers::RUN,
            req.machine,
            req.threshold_us,
            req.measurement.noise_us,
            req.layout.rt,
            req.measurement.tests.iter().map(|p| p.name()).collect::<Vec<_>>().join(","),
            scenario_list.join(","),
            req.measurement.duration_text,
            markers::CLOSE
        ),
        "lava-test-case preempt-rt --shell grep -qx 1 /sys/kernel/realtime".to_string(),
        "lava-test-case rtbuild-tune-verify --shell rtbuild-tune.sh verify".to_string(),
    ];
    steps.extend(req.measurement.scenarios.iter().map(|s| scenario_step(req, *s)));
    steps
}

/// One scenario as one subshell: start the load, run each test in the order `rtbuild test`
/// runs them, print every raw output between markers right after it ends, report one
/// `lava-test-case` per test, stop the load.
fn scenario_step(req: &JobRequest, scenario: Scenario) -> String {
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
        parts.push("kill $loads 2>/dev/null".into());
        parts.push("wait $loads 2>/dev/null".into());
    }
    format!("({})", parts.join("; "))
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
    let mut parts = vec![
        "rc=0".to_string(),
        format!("{} >{name}.out 2>&1 || rc=$?", quote::sh_join(argv)),
        "trc=$rc".to_string(),
    ];
    parts.extend(raw_parts(&fields, "json", json));
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
    let skipped = format!(
        "echo '{} scenario={name} test={program} reason=no-hwlat-tracer{}'; lava-test-case {case} --result skip",
        markers::SKIPPED,
        markers::CLOSE
    );
    vec![
        "hw=no".to_string(),
        "for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do if [ -r \"$t/available_tracers\" ]; then if grep -qw hwlat \"$t/available_tracers\"; then hw=yes; fi; break; fi; done".to_string(),
        format!("if [ \"$hw\" = yes ]; then {}; else {skipped}; fi", run.join("; ")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::CpuSet;
    use crate::testrun::Span;

    pub(crate) fn request() -> JobRequest {
        let online = CpuSet::range(0, 8);
        JobRequest {
            machine: "rb3gen2-core-kit".into(),
            device_type: "rb3gen2-core-kit".into(),
            distro: Distro::QcomDistroKvm,
            bundle: BundleUrl::parse("https://ci.example.com/b/rb3gen2-core-kit-rt.tar.zst")
                .unwrap(),
            layout: CpuLayout::new(&online, &CpuSet::parse("7").unwrap(), None, "t").unwrap(),
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
                threads: crate::testrun::Threads::PerCpu,
            },
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

    #[test]
    fn every_test_runs_with_rtbuild_tests_command_lines_in_its_order() {
        let mut req = request();
        req.layout =
            CpuLayout::new(&CpuSet::range(0, 8), &CpuSet::parse("6-7").unwrap(), None, "t")
                .unwrap();
        req.measurement.tests =
            crate::rttests::parse_list("cyclictest,pmqtest,oslat,rt-migrate-test,hwlatdetect")
                .unwrap();
        req.measurement
            .test_args
            .insert(Program::Oslat, crate::rttests::options::parse("oslat=-D 10m").unwrap().1);
        req.measurement
            .test_args
            .insert(Program::Hackbench, crate::rttests::options::parse("hackbench=-p").unwrap().1);
        req.measurement.scenarios = vec![Scenario::Hackbench];
        let step = steps(&req).pop().unwrap();
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

    #[test]
    fn output_is_deterministic() {
        assert_eq!(render(&request()).unwrap(), render(&request()).unwrap());
    }
}
