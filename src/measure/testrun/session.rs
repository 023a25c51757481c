//! One test run, start to end: preflight, optional tuning, then per scenario fingerprint →
//! load → cyclictest (probed while it runs) → stop → collect → fingerprint → judge, writing
//! `run.json` after every step. Ctrl-C or a lost connection stops the load, reverts the tuning
//! and keeps what was measured.

use super::judge::Ending;
use super::preflight::{self, Prepared};
use super::scenario::Scenario;
use super::signals::{Emergency, StopFlag};
use super::{HELPER, OutError, TestError, TestRequest, own_cpus};
use crate::formats::report_json::Verdict;
use crate::formats::run_json::{
    self, KernelIsolationRecord, OwnCpus, RunRecord, ScenarioRecord, Settings, Tuning, UrmStop,
};
use crate::host::Host;
use crate::host::runner::Runner;
use crate::measure::tune::{self, Action};
use crate::plan::CpuSet;
use crate::text::ui::Ui;

/// The state file (under `/run`) of the tuning `--tune` applies: separate from the boot-time
/// service's, so reverting after a test restores exactly what was there before the test.
const TUNE_STATE: &str = "rtbuild-test-tune.state";

/// Qualcomm's userspace resource manager, which `--stop-urm` stops for the run.
const URM_SERVICE: &str = "urm.service";

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunEnd {
    Pass,
    /// A latency limit was exceeded.
    Fail,
    /// At least one scenario's run cannot be trusted.
    Invalid,
    Interrupted,
    ConnectionLost,
}

impl RunEnd {
    /// The run's verdict in rtbuild's one vocabulary, as `rtbuild report` gives the same run:
    /// a run that did not end as planned cannot be trusted (INVALID).
    pub(crate) fn verdict(self) -> Verdict {
        match self {
            RunEnd::Pass => Verdict::Pass,
            RunEnd::Fail => Verdict::Fail,
            RunEnd::Invalid | RunEnd::Interrupted | RunEnd::ConnectionLost => Verdict::Invalid,
        }
    }
}

pub(super) struct Session<'a> {
    pub(super) req: &'a TestRequest,
    pub(super) runner: &'a dyn Runner,
    pub(super) ui: &'a Ui,
    pub(super) state: String,
    pub(super) stop: StopFlag,
    pub(super) record: RunRecord,
    /// The CPUs rtbuild's own processes keep to (the helper is told with `--pin`).
    pub(super) own_cpus: CpuSet,
    /// rtbuild's own threads found on an RT CPU while measuring (a local run).
    pub(super) own_on_rt: std::collections::BTreeSet<i32>,
    /// The last fingerprint's text: the one after a scenario is the next one's before.
    pub(super) last_fingerprint: Option<String>,
}

/// Runs every scenario of `req`, every process on the target started through `runner`. Input
/// problems (bad output folder, missing tools or
/// privileges) are errors before anything is written.
pub(crate) fn run(req: &TestRequest, runner: &dyn Runner, ui: &Ui) -> Result<RunEnd, TestError> {
    if req.out.exists() && !req.out.is_dir() {
        return Err(OutError::File(req.out.clone()).into());
    }
    if req.out.exists()
        && std::fs::read_dir(&req.out).map(|mut d| d.next().is_some()).unwrap_or(true)
    {
        return Err(OutError::NotEmpty(req.out.clone()).into());
    }
    let mut load_tools: Vec<&str> = Vec::new();
    for scenario in &req.measurement.scenarios {
        let tools: &[&str] = match scenario {
            Scenario::Idle => &[],
            Scenario::Custom => &["taskset", "setsid", "timeout"],
            Scenario::Hackbench => &["hackbench", "taskset", "setsid", "timeout"],
            _ => &["stress-ng", "taskset", "setsid"],
        };
        load_tools.extend(tools);
    }
    if req.measurement.scenarios.contains(&Scenario::Custom)
        && let Some(program) = req.measurement.custom_load.as_ref().and_then(|c| c.argv.first())
    {
        load_tools.push(program);
    }
    // The programs of --tests are needed in every scenario.
    load_tools.extend(req.measurement.tests.iter().map(|p| p.name()));
    load_tools.sort_unstable();
    load_tools.dedup();
    let own = keep_off_measured_cpus(req, ui);
    let Prepared { state } = preflight::prepare(runner, &req.host, &load_tools, req.apply_tuning)?;
    let isolation = match check_kernel_isolation(req, runner) {
        Ok(isolation) => isolation,
        Err(err) => {
            let _ = req.host.run_script(runner, HELPER, ["cleanup", &state]);
            return Err(err.into());
        }
    };
    let tracing = match req.trace {
        Some(trace) => {
            match super::trace::setup(runner, &req.host, &state, &req.measure_cpus, trace) {
                Ok(tracing) => Some(tracing),
                Err(err) => {
                    // Puts back whatever the setup changed, then removes the state folder.
                    let _ = req.host.run_script(runner, HELPER, ["cleanup", &state]);
                    return Err(err.into());
                }
            }
        }
        None => None,
    };
    for dir in ["raw", "fingerprint"] {
        std::fs::create_dir_all(req.out.join(dir))
            .map_err(|cause| TestError::CreateDir { path: req.out.join(dir), cause })?;
    }
    let stop = StopFlag::install(Emergency {
        host: req.host.clone(),
        state: state.clone(),
        out: req.out.clone(),
        ui: ui.clone(),
    });
    let record = RunRecord {
        schema: run_json::SCHEMA,
        rtbuild_version: env!("CARGO_PKG_VERSION").to_string(),
        target: match &req.host {
            Host::Local => "local".into(),
            Host::Ssh(t) => t.to_string(),
        },
        machine: req.machine.clone().or_else(|| req.board.clone()),
        rt_cpus: req.layout.rt.to_string(),
        housekeeping: req.layout.housekeeping.to_string(),
        measure_cpus: req.measure_cpus.to_string(),
        settings: Settings {
            duration: req.measurement.duration_text.clone(),
            length: req.measurement.span.length,
            interval_us: req.measurement.interval_us,
            histogram_us: req.measurement.histogram_us,
            cyclictest_args: req.measurement.cyclictest_args.clone(),
            load_percent: req.measurement.load_percent,
            load_cmd: req.measurement.custom_load.as_ref().map(|c| c.argv.clone()),
            load_unpinned: req.measurement.custom_load.as_ref().is_some_and(|c| !c.pinned),
            max_us: req.max_us,
            test_args: req
                .measurement
                .test_args
                .iter()
                .map(|(program, checked)| (program.name().to_string(), checked.words.clone()))
                .collect(),
            trace_above_us: req.trace.map(|t| t.above_us),
            analyzer: req.trace.map(|t| t.analyzer.name().to_string()),
        },
        threshold_us: Some(req.threshold.us as f64),
        threshold_source: Some(req.threshold.source.clone()),
        noise_us: Some(req.measurement.noise_us),
        tests: req.measurement.tests.iter().map(|p| p.name().to_string()).collect(),
        started_unix: super::now_unix(),
        state: "running".into(),
        verdict: None,
        tuning: None,
        urm_stop: None,
        fingerprint: None,
        interrupts: Default::default(),
        tracing,
        rtbuild_cpus: Some(own),
        overhead: Some(run_json::Overhead {
            rtbuild_cpu_s: matches!(req.host, Host::Local).then_some(0.0),
            own_tasks_seen_on_rt_cpus: matches!(req.host, Host::Local).then_some(0),
            ..Default::default()
        }),
        kernel_isolation: Some(isolation),
        kernel_warnings_before: Vec::new(),
        irqbalance: Vec::new(),
        scenarios: Vec::new(),
    };
    let own_cpus = own_cpus::allowed_set(&req.layout, &req.measure_cpus);
    let mut run = Session {
        req,
        runner,
        ui,
        state,
        stop,
        record,
        own_cpus,
        own_on_rt: Default::default(),
        last_fingerprint: None,
    };
    let result = run.all();
    // The record is the run's evidence: one that cannot be written fails the run (exit 1),
    // whatever was measured.
    let saved = run.finish();
    match (result, saved) {
        (Ok(_), Err(err)) => Err(err.into()),
        (result, _) => result,
    }
}

impl Session<'_> {
    pub(super) fn save(&self) {
        if let Err(err) = super::record::write(&self.req.out, &self.record) {
            self.ui.warn(err.to_string());
        }
    }

    /// Keeps a result file at `relative` under the output folder (through the one writer). One
    /// that cannot be written is a warning; the reason is returned for the caller to record.
    pub(super) fn keep(&self, relative: &str, bytes: impl AsRef<[u8]>) -> Result<(), String> {
        let path = self.req.out.join(relative);
        crate::files::write::write_atomic(&path, bytes.as_ref(), false).map_err(|err| {
            self.ui.warn(err.to_string());
            lost(relative)
        })
    }

    /// [`Session::keep`] for a file of scenario `index`: one that cannot be written makes the
    /// scenario invalid, so a run whose evidence is lost never passes.
    pub(super) fn keep_for(&mut self, index: usize, relative: &str, bytes: impl AsRef<[u8]>) {
        if let Err(reason) = self.keep(relative, bytes) {
            self.record.scenarios[index].invalid_reasons.push(reason);
        }
    }

    /// The overhead block's totals: the RT CPUs' interrupts over the scenarios, and rtbuild's
    /// CPU share.
    fn sum_overhead(&mut self) {
        let Some(overhead) = self.record.overhead.as_mut() else { return };
        let mut irqs: std::collections::BTreeMap<(String, u32), u64> = Default::default();
        for delta in self.record.interrupts.values().flatten() {
            *irqs.entry((delta.irq.clone(), delta.cpu)).or_default() += delta.count;
        }
        overhead.rt_cpu_irqs = irqs
            .into_iter()
            .map(|((irq, cpu), count)| run_json::IrqCount { irq, cpu, count })
            .collect();
        if overhead.own_tasks_seen_on_rt_cpus.is_some() {
            overhead.own_tasks_seen_on_rt_cpus = Some(self.own_on_rt.len() as u64);
        }
        overhead.rtbuild_cpu_pct = overhead
            .rtbuild_cpu_s
            .filter(|_| overhead.measuring_s > 0.0)
            .map(|cpu| (cpu / overhead.measuring_s * 10_000.0).round() / 100.0);
    }

    /// `--pin CPUS ARGS…`: the helper's arguments, led by the CPUs it must confine itself to.
    pub(super) fn pinned<S: AsRef<str>>(&self, args: &[S]) -> Vec<String> {
        let mut all = vec!["--pin".to_string(), self.own_cpus.to_string()];
        all.extend(args.iter().map(|a| a.as_ref().to_string()));
        all
    }

    /// Runs one helper subcommand on the target, pinned off the measured CPUs.
    pub(super) fn helper(&self, args: &[&str]) -> Option<String> {
        // A target that let a step run past --target-timeout has stopped answering: of what
        // is left, only stopping the load and cleaning up are tried (briefly, AFTER_STALL),
        // so a dead board costs one step limit, not one per look.
        if self.req.host.stalled() && !matches!(args.first(), Some(&("stop" | "cleanup"))) {
            return None;
        }
        let out = self.req.host.run_script(self.runner, HELPER, self.pinned(args)).ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn all(&mut self) -> Result<RunEnd, TestError> {
        self.save();
        if self.req.stop_urm {
            self.urm_stop();
        }
        if self.req.apply_tuning {
            self.tune_apply(&self.req.tune_script)?;
        } else {
            self.tune_check(&self.req.tune_script);
        }
        let mut ending = Ending::Completed;
        for &scenario in &self.req.measurement.scenarios {
            if self.stop.raised() {
                ending = Ending::Interrupted;
                break;
            }
            ending = self.scenario(scenario);
            // A step after the measurement (the IRQ or kernel-log look) that ran past
            // --target-timeout: the target stopped answering, so no further scenario starts.
            if ending == Ending::Completed && self.req.host.stalled() {
                ending = Ending::ConnectionLost;
            }
            if ending != Ending::Completed {
                break;
            }
        }
        let (state, finished, verdict) =
            conclude(ending, &self.record.scenarios, self.req.threshold.us);
        self.record.state = state.into();
        self.record.verdict = Some(verdict);
        Ok(finished)
    }

    /// Reverts tuning, removes the target's state folder and writes the final record; runs
    /// whatever happened before.
    fn finish(&mut self) -> Result<(), crate::files::write::WriteError> {
        if let Some(tuning) = &self.record.tuning
            && tuning.applied
        {
            let script = &self.req.tune_script;
            match tune::run_script(
                self.runner,
                &self.req.host,
                script,
                Action::Revert,
                Some(TUNE_STATE),
            ) {
                Ok(outcome) if outcome.ok => {
                    self.ui.status("Reverted", "the tuning rtbuild applied");
                    if let Some(t) = self.record.tuning.as_mut() {
                        t.reverted = true;
                    }
                }
                Ok(outcome) => self.ui.warn(format!(
                    "revert left {}: {}",
                    crate::text::counted(outcome.problems.len(), "knob"),
                    outcome
                        .problems
                        .iter()
                        .map(|p| crate::text::shown(p))
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
                Err(err) => self.ui.warn(format!("could not revert the tuning: {err}")),
            }
        }
        self.urm_restore();
        self.trace_restore();
        let _ = self.helper(&["cleanup", &self.state.clone()]);
        self.sum_overhead();
        super::record::write(&self.req.out, &self.record)
    }

    /// `--stop-urm`: stops an active `urm.service` for the run (the helper marks its state
    /// folder, so cleanup and a second Ctrl-C start it again too).
    fn urm_stop(&mut self) {
        let reply = self.helper(&["urm-stop", &self.state.clone()]);
        let mut urm = UrmStop { service: URM_SERVICE.into(), ..UrmStop::default() };
        match reply.as_deref().map(str::trim) {
            Some("urm stopped") => {
                self.ui
                    .status("Stopped", format!("{URM_SERVICE} on {} for the run", self.req.host));
                urm.stopped = true;
            }
            Some("urm inactive") => {
                self.ui.note(format!(
                    "--stop-urm: {URM_SERVICE} is not running on {}; nothing to stop",
                    self.req.host
                ));
            }
            other => {
                let problem = format!(
                    "could not stop {URM_SERVICE} on {}{}",
                    self.req.host,
                    other.map_or(String::new(), |o| format!(" ({o})"))
                );
                self.ui
                    .warn(format!("{problem}; it may change knobs rtbuild saved during the run"));
                // The helper's marker is there: the end of the run tries to start it again.
                urm.stopped = true;
                urm.problem = Some(problem);
            }
        }
        self.record.urm_stop = Some(urm);
        self.save();
    }

    /// Starts `urm.service` again when [`Session::urm_stop`] stopped it, and records whether it
    /// reads back active.
    fn urm_restore(&mut self) {
        let Some(urm) = self.record.urm_stop.as_ref().filter(|u| u.stopped) else { return };
        let host = self.req.host.to_string();
        let reply = self.helper(&["urm-start", &self.state.clone()]);
        let restored = reply.as_deref().map(str::trim) == Some("urm started");
        let mut urm = urm.clone();
        urm.restored = restored;
        if restored {
            self.ui.status("Restarted", format!("{URM_SERVICE} on {host}"));
        } else {
            let problem = format!("could not start {URM_SERVICE} again on {host}");
            self.ui.warn(format!("{problem}; start it by hand (systemctl start {URM_SERVICE})"));
            urm.problem = Some(urm.problem.map_or(problem.clone(), |p| format!("{p}; {problem}")));
        }
        self.record.urm_stop = Some(urm);
    }

    /// Without `--tune`: records which knobs are not tuned (read only; the boot-time service's
    /// state file tells which IRQs refused).
    fn tune_check(&mut self, script: &str) {
        match tune::run_script(self.runner, &self.req.host, script, Action::Verify, None) {
            Ok(mut verify) => {
                verify.mark_pinned(&self.req.layout.rt);
                for line in verify.pinned_warnings(&self.req.layout.rt) {
                    self.ui.warn(line);
                }
                // Informational (the problems are in the record): a warning when lost.
                let _ = self.keep("tune-verify.txt", verify.lines.join("\n") + "\n");
                if !verify.ok {
                    self.ui.warn(format!(
                        "{} {} not tuned on {} (see tune-verify.txt); pass --tune, or install the rtbuild-tune service (`rtbuild tune --help`)",
                        crate::text::counted(verify.problems.len(), "knob"),
                        if verify.problems.len() == 1 { "is" } else { "are" },
                        self.req.host
                    ));
                }
                self.record.tuning = Some(Tuning {
                    refused_irqs: verify.refused.len(),
                    verify_problems: verify.problems,
                    ..Tuning::default()
                });
            }
            Err(err) => self.ui.warn(format!("could not check the tuning: {err}")),
        }
        self.save();
    }

    fn tune_apply(&mut self, script: &str) -> Result<(), TestError> {
        self.ui
            .status("Tuning", format!("{} (saved values are restored afterwards)", self.req.host));
        let mut apply =
            tune::run_script(self.runner, &self.req.host, script, Action::Apply, Some(TUNE_STATE))?;
        apply.mark_pinned(&self.req.layout.rt);
        for line in apply.pinned_warnings(&self.req.layout.rt) {
            self.ui.warn(line);
        }
        let mut tuning = Tuning {
            applied: true,
            overcommit_never: self.req.overcommit_never,
            apply_problems: apply.problems.clone(),
            refused_irqs: apply.refused.len(),
            ..Tuning::default()
        };
        let path = self.req.out.join("tune-apply.txt");
        crate::files::write::write_atomic(
            &path,
            (apply.lines.join("\n") + "\n").as_bytes(),
            false,
        )?;
        // apply reads every knob back as it writes it: its problems are the knobs that do not
        // hold their tuned value, without a second pass over every knob on the target.
        tuning.verify_problems = apply.problems.clone();
        if !apply.ok {
            self.ui.warn(format!(
                "{} did not take the tuned value: {}",
                crate::text::counted(apply.problems.len(), "knob"),
                apply.problems.iter().map(|p| crate::text::shown(p)).collect::<Vec<_>>().join("; ")
            ));
        }
        self.record.tuning = Some(tuning);
        self.save();
        Ok(())
    }
}

/// Reads what the target's kernel isolates and refuses the run, before anything is measured
/// or written, when it is not the isolation the run needs ([`preflight::check_isolation`]).
fn check_kernel_isolation(
    req: &TestRequest,
    runner: &dyn Runner,
) -> Result<KernelIsolationRecord, preflight::PreflightError> {
    let host = req.host.to_string();
    let out = req
        .host
        .run_script(runner, HELPER, ["isolation"])
        .map_err(|cause| preflight::PreflightError::Unreachable { host: host.clone(), cause })?;
    let kernel = preflight::KernelIsolation::parse(&String::from_utf8_lossy(&out.stdout));
    let need = preflight::IsolationNeed {
        machine: req.machine.clone(),
        nohz_full: req.nohz_full,
        unpinned_loads: req
            .measurement
            .scenarios
            .iter()
            .filter(|s| s.unpinned_load(req.measurement.custom_load.as_ref()))
            .map(ToString::to_string)
            .collect(),
    };
    preflight::check_isolation(&host, &req.layout.rt, &need, &kernel)?;
    let required = match (&need.machine, kernel.any().is_empty()) {
        (Some(m), _) => format!(
            "the kernel isolates exactly RT CPUs {} (the plan of {m}{})",
            req.layout.rt,
            if need.nohz_full { ", nohz_full too" } else { "" }
        ),
        (None, false) => {
            format!("the RT CPUs {} are among those the kernel isolates", req.layout.rt)
        }
        (None, true) => "none: no plan, and the kernel isolates no CPU".to_string(),
    };
    Ok(KernelIsolationRecord {
        isolated: kernel.isolated.to_string(),
        nohz_full: kernel.nohz_full.to_string(),
        cmdline_isolcpus: kernel.isolcpus_arg.clone(),
        cmdline_nohz_full: kernel.nohz_full_arg.clone(),
        required,
    })
}

/// Confines a local rtbuild (every thread, and so all it starts from now on) to the CPUs
/// [`own_cpus::allowed_set`] leaves it, and says where it may run. Over ssh only the helper
/// is pinned (by itself, on the target): rtbuild runs on another machine.
fn keep_off_measured_cpus(req: &TestRequest, ui: &Ui) -> OwnCpus {
    let cpus = own_cpus::allowed_set(&req.layout, &req.measure_cpus);
    let mut record = OwnCpus { pinned_to: cpus.to_string(), ..OwnCpus::default() };
    if req.host == Host::Local {
        if let Err(err) = own_cpus::pin_this_process(&cpus) {
            ui.warn(format!("{err}; rtbuild may run on the measured CPUs"));
            record.problem = Some(err.to_string());
        }
        record.rtbuild = own_cpus::this_process_allowed().map(|c| c.to_string());
    }
    record
}

/// The invalid reason of a scenario whose result file `relative` could not be written.
pub(super) fn lost(relative: &str) -> String {
    format!("{relative} could not be written, so the scenario's evidence is incomplete")
}

/// The run's state, outcome and verdict, by the one judge ([`crate::formats::judge`]), as
/// `rtbuild report` gives the same run: `INVALID` when any scenario or test is invalid, the
/// run did not complete, or cyclictest left an output without a known maximum; else `FAIL`
/// when a scenario's maximum is over `threshold_us` or anything failed; else `PASS`.
pub(super) fn conclude(
    ending: Ending,
    scenarios: &[ScenarioRecord],
    threshold_us: u64,
) -> (&'static str, RunEnd, Verdict) {
    match ending {
        Ending::Interrupted => ("interrupted", RunEnd::Interrupted, Verdict::Invalid),
        Ending::ConnectionLost => ("connection-lost", RunEnd::ConnectionLost, Verdict::Invalid),
        Ending::Completed => match super::judge::findings(scenarios, threshold_us).verdict() {
            Verdict::Pass => ("finished", RunEnd::Pass, Verdict::Pass),
            // A test run has no history to regress against.
            Verdict::Fail | Verdict::Regression => ("finished", RunEnd::Fail, Verdict::Fail),
            Verdict::Invalid => ("finished", RunEnd::Invalid, Verdict::Invalid),
        },
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A scenario of `max` µs and these validity reasons (the judge's tests use it too).
    pub(in crate::measure::testrun) fn scenario(max: i64, reasons: &[&str]) -> ScenarioRecord {
        ScenarioRecord {
            max_us: Some(max),
            invalid_reasons: reasons.iter().map(ToString::to_string).collect(),
            ..ScenarioRecord::default()
        }
    }

    #[test]
    fn verdicts() {
        let ok = [scenario(40, &[]), scenario(90, &[])];
        assert_eq!(
            conclude(Ending::Completed, &ok, 100),
            ("finished", RunEnd::Pass, Verdict::Pass)
        );
        assert_eq!(conclude(Ending::Completed, &ok, 90), ("finished", RunEnd::Pass, Verdict::Pass));
        assert_eq!(conclude(Ending::Completed, &ok, 89), ("finished", RunEnd::Fail, Verdict::Fail));
        let bad =
            [scenario(40, &["thread 0 completed 30 of 3000 expected cycles"]), scenario(900, &[])];
        assert_eq!(
            conclude(Ending::Completed, &bad, 100),
            ("finished", RunEnd::Invalid, Verdict::Invalid)
        );
        assert_eq!(
            conclude(Ending::Interrupted, &ok, 100),
            ("interrupted", RunEnd::Interrupted, Verdict::Invalid)
        );
        assert_eq!(
            conclude(Ending::ConnectionLost, &ok, 100),
            ("connection-lost", RunEnd::ConnectionLost, Verdict::Invalid)
        );
    }
}
