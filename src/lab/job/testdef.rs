//! The job's test action: one inline test definition whose steps write and run one POSIX
//! shell script (rendered from `templates/rtbuild-rt.sh`): the RUN marker, the PREEMPT_RT
//! and tuning checks, then per scenario the load, each test with `rtbuild test`'s command
//! lines, its raw output between [`markers`] and one `lava-test-case`.

use super::request::JobRequest;
use super::{DEFINITION, WORK_DIR};
use crate::formats::lava_job::{
    Definition, Minutes, RunSteps, TestAction, TestDefinition, TestMetadata,
};
use crate::lab::markers;
use crate::measure::rttests::{Kind, Program};
use crate::measure::testrun::{Scenario, Sequence, Suite};
use crate::text::quote;

pub(super) fn test(req: &JobRequest) -> TestAction {
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
