//! One test run, start to end: preflight, optional tuning, then per scenario fingerprint →
//! load → cyclictest (probed while it runs) → stop → collect → fingerprint → judge, writing
//! `run.json` after every step. Ctrl-C or a lost connection stops the load, reverts the tuning
//! and keeps what was measured.

use std::time::{Duration, Instant};

use anyhow::Context;

use super::cyclictest::{self, Measure};
use super::fingerprint::{Sections, landed_on};
use super::preflight::{self, Prepared};
use super::probe::Probe;
use super::record::{self, Commands, RunRecord, ScenarioRecord, Settings, ThreadSummary, Tuning};
use super::scenario::Scenario;
use super::signals::StopFlag;
use super::{HELPER, OutError, Request};
use crate::tune::{self, Action, Host};
use crate::ui::Ui;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    Pass,
    /// A latency limit was exceeded.
    Fail,
    /// At least one scenario's run cannot be trusted.
    Invalid,
    Interrupted,
    ConnectionLost,
}

/// How one scenario's measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Completed,
    Interrupted,
    ConnectionLost,
}

struct Run<'a> {
    req: &'a Request,
    ui: &'a Ui,
    state: String,
    stop: StopFlag,
    record: RunRecord,
}

/// Runs every scenario of `req`. Input problems (bad output folder, missing tools or
/// privileges) are errors before anything is written.
pub fn run(req: &Request, ui: &Ui) -> anyhow::Result<Finished> {
    if req.out.exists()
        && std::fs::read_dir(&req.out).map(|mut d| d.next().is_some()).unwrap_or(true)
    {
        return Err(crate::exit::InputError(OutError::NotEmpty(req.out.clone()).into()).into());
    }
    let needs_load = req.scenarios.iter().any(|s| *s != Scenario::Idle);
    let Prepared { state } = preflight::prepare(&req.host, needs_load, req.tune_script.is_some())
        .map_err(|e| crate::exit::InputError(e.into()))?;
    for dir in ["raw", "fingerprint"] {
        std::fs::create_dir_all(req.out.join(dir))
            .with_context(|| format!("could not create {}", req.out.join(dir).display()))?;
    }
    let stop = StopFlag::install();
    let record = RunRecord {
        schema: record::SCHEMA,
        rtbuild_version: env!("CARGO_PKG_VERSION"),
        target: match &req.host {
            Host::Local => "local".into(),
            Host::Ssh(t) => t.to_string(),
        },
        machine: req.machine.clone(),
        rt_cpus: req.layout.rt.to_string(),
        housekeeping: req.layout.housekeeping.to_string(),
        settings: Settings {
            duration: req.duration_text.clone(),
            length: req.span.length,
            interval_us: req.interval_us,
            histogram_us: req.histogram_us,
            load_percent: req.load_percent,
            max_us: req.max_us,
        },
        started_unix: record::now_unix(),
        state: "running".into(),
        verdict: None,
        tuning: None,
        scenarios: Vec::new(),
    };
    let mut run = Run { req, ui, state, stop, record };
    let result = run.all();
    run.finish();
    result
}

impl Run<'_> {
    fn save(&self) {
        if let Err(err) = record::write(&self.req.out, &self.record) {
            self.ui.warn(format!(
                "could not write {}: {err}",
                self.req.out.join(record::FILE).display()
            ));
        }
    }

    fn helper(&self, args: &[&str]) -> Option<String> {
        let out = self.req.host.run_script(HELPER, args).ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn all(&mut self) -> anyhow::Result<Finished> {
        self.save();
        if let Some(script) = &self.req.tune_script {
            self.tune_apply(script)?;
        }
        let mut ending = Ending::Completed;
        for &scenario in &self.req.scenarios {
            if self.stop.raised() {
                ending = Ending::Interrupted;
                break;
            }
            ending = self.scenario(scenario);
            if ending != Ending::Completed {
                break;
            }
        }
        let invalid = self.record.scenarios.iter().any(|s| !s.invalid_reasons.is_empty());
        let over = self.req.max_us.is_some_and(|limit| {
            self.record.scenarios.iter().any(|s| s.max_us.is_some_and(|m| m > limit as i64))
        });
        let (state, finished) = match ending {
            Ending::Interrupted => ("interrupted", Finished::Interrupted),
            Ending::ConnectionLost => ("connection-lost", Finished::ConnectionLost),
            Ending::Completed if invalid => ("finished", Finished::Invalid),
            Ending::Completed if over => ("finished", Finished::Fail),
            Ending::Completed => ("finished", Finished::Pass),
        };
        self.record.state = state.into();
        self.record.verdict = Some(
            match (invalid || ending != Ending::Completed, over) {
                (true, _) => "invalid",
                (false, true) => "fail",
                (false, false) => "pass",
            }
            .into(),
        );
        Ok(finished)
    }

    /// Reverts tuning, removes the target's state folder and writes the final record; runs
    /// whatever happened before.
    fn finish(&mut self) {
        if let (Some(script), Some(tuning)) = (&self.req.tune_script, &self.record.tuning)
            && tuning.applied
        {
            match tune::run_script(&self.req.host, script, Action::Revert) {
                Ok(outcome) if outcome.ok => {
                    self.ui.status("Reverted", "the tuning rtbuild applied");
                    if let Some(t) = self.record.tuning.as_mut() {
                        t.reverted = true;
                    }
                }
                Ok(outcome) => self.ui.warn(format!(
                    "revert left {} knobs: {}",
                    outcome.problems.len(),
                    outcome.problems.join("; ")
                )),
                Err(err) => self.ui.warn(format!("could not revert the tuning: {err}")),
            }
        }
        let _ = self.helper(&["cleanup", &self.state.clone()]);
        self.save();
    }

    fn tune_apply(&mut self, script: &str) -> anyhow::Result<()> {
        self.ui
            .status("Tuning", format!("{} (saved values are restored afterwards)", self.req.host));
        let apply = tune::run_script(&self.req.host, script, Action::Apply)?;
        let mut tuning = Tuning {
            applied: true,
            apply_problems: apply.problems.clone(),
            refused_irqs: apply.refused.len(),
            ..Tuning::default()
        };
        std::fs::write(self.req.out.join("tune-apply.txt"), apply.lines.join("\n") + "\n")?;
        let verify = tune::run_script(&self.req.host, script, Action::Verify)?;
        tuning.verify_problems = verify.problems.clone();
        if !verify.ok {
            self.ui.warn(format!(
                "{} knobs did not take the tuned value: {}",
                verify.problems.len(),
                verify.problems.join("; ")
            ));
        }
        self.record.tuning = Some(tuning);
        self.save();
        Ok(())
    }

    fn fingerprint(&self, name: &str, when: &str) -> Option<Sections> {
        let text = self.helper(&["fingerprint"])?;
        let file = format!("fingerprint/{name}-{when}.txt");
        let _ = std::fs::write(self.req.out.join(&file), &text);
        Some(Sections::parse(&text))
    }

    fn scenario(&mut self, scenario: Scenario) -> Ending {
        let req = self.req;
        let name = scenario.to_string();
        let measure = Measure {
            interval_us: req.interval_us,
            histogram_us: req.histogram_us,
            length: req.span.length,
        };
        let expected_s = measure.length.seconds(measure.interval_us);
        let json_remote = format!("{}/{name}.json", self.state);
        let ct_argv = cyclictest::argv(&req.layout, &measure, &json_remote);
        let loads = scenario.loads(&req.layout, req.load_percent, expected_s + 120);
        let load_argv: Vec<Vec<String>> = loads
            .iter()
            .map(|l| match &l.cpus {
                Some(cpus) => ["taskset".to_string(), "-c".into(), cpus.to_string()]
                    .into_iter()
                    .chain(l.argv.iter().cloned())
                    .collect(),
                None => l.argv.clone(),
            })
            .collect();
        let started = Instant::now();
        self.record.scenarios.push(ScenarioRecord {
            name: name.clone(),
            state: "running".into(),
            started_unix: record::now_unix(),
            commands: Commands { cyclictest: ct_argv.clone(), load: load_argv },
            expected_cycles: measure.length.cycles(measure.interval_us),
            ..ScenarioRecord::default()
        });
        let index = self.record.scenarios.len() - 1;
        let mut reasons: Vec<String> = Vec::new();

        let before = self.fingerprint(&name, "before");
        if before.is_none() {
            reasons.push("the fingerprint before the run could not be taken".into());
        }
        if let Some(before) = &before {
            self.record.scenarios[index].fingerprint = Some(before.summary());
            if scenario == Scenario::StressIsolated && !req.layout.rt.is_subset(&before.isolated())
            {
                reasons.push(format!(
                    "stress-isolated needs RT CPUs {} isolated (isolcpus=), but the kernel isolates `{}`",
                    req.layout.rt,
                    before.get("isolated").trim()
                ));
            }
        }
        self.record.scenarios[index]
            .fingerprint_files
            .push(format!("fingerprint/{name}-before.txt"));
        self.save();

        for load in &loads {
            let cpus = load.cpus.as_ref().map_or("-".to_string(), ToString::to_string);
            let mut args =
                vec!["start-load".to_string(), self.state.clone(), load.name.clone(), cpus];
            args.extend(load.argv.iter().cloned());
            if self.helper(&args.iter().map(String::as_str).collect::<Vec<_>>()).is_none() {
                reasons.push(format!("load `{}` could not be started", load.name));
            }
        }
        if !loads.is_empty() {
            self.ui.status(
                "Loading",
                format!(
                    "{name}: {} stress-ng generator(s) on CPUs {}",
                    loads.len(),
                    req.layout.housekeeping
                ),
            );
            std::thread::sleep(Duration::from_secs(1));
        }

        self.ui.status(
            "Measuring",
            format!("{name} for {} on RT CPUs {}", human(expected_s), req.layout.rt),
        );
        let (ending, status, probe) = self.measure(&name, &ct_argv, expected_s);

        let alive = self.helper(&["load-alive", &self.state.clone()]);
        let alive_n: usize = alive
            .as_deref()
            .and_then(|t| t.trim().strip_prefix("alive ")?.parse().ok())
            .unwrap_or(0);
        let stopped = self.helper(&["stop", &self.state.clone()]);
        let left: usize = stopped
            .as_deref()
            .and_then(|t| t.lines().find_map(|l| l.strip_prefix("left "))?.trim().parse().ok())
            .unwrap_or(0);
        if !loads.is_empty() && ending == Ending::Completed && alive_n == 0 {
            reasons.push("the load had stopped before cyclictest finished".into());
        }
        if left > 0 {
            self.ui.warn(format!("{left} load processes did not stop on {}", req.host));
        }

        let mut files = Vec::new();
        for (suffix, remote) in [("json", Some(format!("{name}.json"))), ("hist.txt", None)] {
            let local = format!("raw/{name}.{suffix}");
            if let Some(remote) = remote
                && let Some(text) = self.helper(&["fetch", &self.state.clone(), &remote])
            {
                let _ = std::fs::write(req.out.join(&local), text);
            }
            if req.out.join(&local).is_file() {
                files.push(local);
            }
        }
        self.record.scenarios[index].files = files;

        if ending != Ending::ConnectionLost
            && let Some(after) = self.fingerprint(&name, "after")
        {
            self.record.scenarios[index]
                .fingerprint_files
                .push(format!("fingerprint/{name}-after.txt"));
            if let Some(before) = &before {
                let s = &mut self.record.scenarios[index];
                s.interrupts_on_rt_cpus =
                    landed_on(before.get("interrupts"), after.get("interrupts"), &req.layout.rt);
                s.softirqs_on_rt_cpus =
                    landed_on(before.get("softirqs"), after.get("softirqs"), &req.layout.rt);
            }
        }

        match &probe {
            Some(p) => reasons.extend(p.problems(
                &req.layout,
                !loads.is_empty(),
                scenario != Scenario::StressIsolated,
            )),
            None if ending == Ending::Completed => {
                reasons.push("cyclictest ended before it could be observed".into())
            }
            None => {}
        }
        reasons.extend(self.judge(index, &name, status, ending));
        let s = &mut self.record.scenarios[index];
        s.probe = probe;
        s.invalid_reasons = reasons;
        s.elapsed_s = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        s.state = match ending {
            Ending::Completed => "done",
            Ending::Interrupted => "interrupted",
            Ending::ConnectionLost => "connection-lost",
        }
        .into();
        self.report(index);
        self.save();
        ending
    }

    /// Runs cyclictest, probing it once and showing progress, until it ends or a stop signal.
    fn measure(
        &self,
        name: &str,
        argv: &[String],
        expected_s: u64,
    ) -> (Ending, Option<i32>, Option<Probe>) {
        let req = self.req;
        let mut args = vec!["run-cyclictest".to_string(), self.state.clone()];
        args.extend(argv.iter().cloned());
        let cmd = req.host.sh(&args);
        let handle = cmd
            .to_duct()
            .stdin_bytes(HELPER.as_bytes().to_vec())
            .stdout_path(req.out.join(format!("raw/{name}.hist.txt")))
            .stderr_path(req.out.join(format!("raw/{name}.stderr.txt")))
            .unchecked()
            .before_spawn(|c| {
                use std::os::unix::process::CommandExt;
                c.process_group(0);
                Ok(())
            })
            .start();
        let handle = match handle {
            Ok(h) => h,
            Err(err) => {
                self.ui.warn(format!("could not start `{cmd}`: {err}"));
                return (Ending::Completed, None, None);
            }
        };
        let bar = self.ui.progress(expected_s, name);
        let started = Instant::now();
        let probe_at = Duration::from_millis((expected_s * 1000 / 2).clamp(300, 1500));
        let mut probe = None;
        let mut last_note = Instant::now();
        let mut ending = Ending::Completed;
        loop {
            if let Ok(Some(_)) = handle.try_wait() {
                break;
            }
            if self.stop.raised() {
                self.ui
                    .warn(format!("interrupted: stopping cyclictest and the load on {}", req.host));
                ending = Ending::Interrupted;
                let _ = self.helper(&["stop", &self.state.clone()]);
                if !matches!(handle.wait_timeout(Duration::from_secs(10)), Ok(Some(_))) {
                    let _ = handle.kill();
                }
                break;
            }
            let elapsed = started.elapsed();
            if probe.is_none() && elapsed >= probe_at {
                probe = self.helper(&["probe", &self.state.clone()]).map(|t| Probe::parse(&t));
            }
            bar.set_position(elapsed.as_secs().min(expected_s));
            let every = Duration::from_secs(if self.ui.fancy() { 5 } else { 60 });
            if last_note.elapsed() >= every {
                last_note = Instant::now();
                let _ = self.helper(&["status", &self.state.clone()]);
                std::thread::sleep(Duration::from_millis(200));
                let max = current_max(&req.out.join(format!("raw/{name}.stderr.txt")))
                    .map_or(String::new(), |m| format!(", current max {m} µs"));
                let left = expected_s.saturating_sub(elapsed.as_secs());
                let text =
                    format!("{} elapsed, {} left{max}", human(elapsed.as_secs()), human(left));
                if self.ui.fancy() {
                    bar.set_message(text);
                } else {
                    self.ui.status("Measuring", format!("{name}: {text}"));
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bar.finish_and_clear();
        let status = handle.try_wait().ok().flatten().map(|o| o.status);
        if ending == Ending::Completed && status.is_some_and(|s| req.host.connection_lost(&s)) {
            ending = Ending::ConnectionLost;
        }
        (ending, status.and_then(|s| s.code()), probe)
    }

    /// Validity from cyclictest's exit status and JSON; fills the thread summaries.
    fn judge(
        &mut self,
        index: usize,
        name: &str,
        status: Option<i32>,
        ending: Ending,
    ) -> Vec<String> {
        let req = self.req;
        let mut reasons = Vec::new();
        match ending {
            Ending::Interrupted => reasons.push("interrupted before the planned run time".into()),
            Ending::ConnectionLost => reasons.push(format!(
                "lost the connection to {}; stress-ng and cyclictest end on their own when their run time is over",
                req.host
            )),
            Ending::Completed => {}
        }
        if ending == Ending::Completed && status != Some(0) {
            let stderr = std::fs::read_to_string(req.out.join(format!("raw/{name}.stderr.txt")))
                .unwrap_or_default();
            reasons.push(format!(
                "cyclictest exited with {}: {}",
                status.map_or("a signal".to_string(), |c| format!("code {c}")),
                crate::runner::last_lines(stderr.trim(), 2).replace('\n', " / ")
            ));
        }
        let path = req.out.join(format!("raw/{name}.json"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            reasons.push("cyclictest wrote no JSON results; it did not measure (an unknown option makes it print help and exit 0)".into());
            return reasons;
        };
        let results = match cyclictest::parse(&text) {
            Ok(r) => r,
            Err(err) => {
                reasons.push(format!("cyclictest's JSON results are unreadable: {err}"));
                return reasons;
            }
        };
        if results.return_code.is_some_and(|c| c != 0) {
            reasons.push(format!("cyclictest reported return code {:?}", results.return_code));
        }
        if results.num_threads != req.layout.rt.len() {
            reasons.push(format!(
                "cyclictest ran {} threads, expected {}",
                results.num_threads,
                req.layout.rt.len()
            ));
        }
        let expected = self.record.scenarios[index].expected_cycles;
        let mut threads = Vec::new();
        for (key, t) in &results.thread {
            let overflows = t.overflows();
            if ending == Ending::Completed && t.cycles * 10 < expected * 9 {
                reasons.push(format!(
                    "thread {key} completed {} of {expected} expected cycles",
                    t.cycles
                ));
            }
            if overflows > 0 {
                reasons.push(format!(
                    "thread {key}: {overflows} samples above the {} µs histogram (max {} µs); rerun with a larger --histogram-us",
                    req.histogram_us, t.max
                ));
            }
            if u32::try_from(t.cpu).map_or(true, |c| !req.layout.rt.contains(c)) {
                reasons.push(format!("thread {key} measured on CPU {}, not an RT CPU", t.cpu));
            }
            threads.push(ThreadSummary {
                thread: key.parse().unwrap_or(0),
                cpu: t.cpu,
                cycles: t.cycles,
                min_us: t.min,
                avg_us: t.avg,
                max_us: t.max,
                overflows,
            });
        }
        threads.sort_by_key(|t| t.thread);
        let s = &mut self.record.scenarios[index];
        s.max_us = threads.iter().map(|t| t.max_us).max();
        s.threads = threads;
        reasons
    }

    fn report(&self, index: usize) {
        let s = &self.record.scenarios[index];
        let maxes: Vec<String> =
            s.threads.iter().map(|t| format!("CPU{} {} µs", t.cpu, t.max_us)).collect();
        let irqs: u64 = s.interrupts_on_rt_cpus.iter().map(|d| d.count).sum();
        let verdict = if s.invalid_reasons.is_empty() { "valid" } else { "INVALID" };
        self.ui.status(
            "Measured",
            format!(
                "{}: {verdict}; max {}; {irqs} interrupts on RT CPUs",
                s.name,
                if maxes.is_empty() { "-".into() } else { maxes.join(", ") }
            ),
        );
        for reason in &s.invalid_reasons {
            self.ui.warn(format!("{}: {reason}", s.name));
        }
    }
}

/// The highest `Max:` of the last status block cyclictest printed on SIGUSR1.
fn current_max(stderr: &std::path::Path) -> Option<i64> {
    let text = std::fs::read_to_string(stderr).ok()?;
    let block = text.rsplit("# cyclictest current status:").next()?;
    block
        .lines()
        .filter(|l| l.starts_with("T:"))
        .filter_map(|l| l.rsplit_once("Max:")?.1.trim().parse().ok())
        .max()
}

/// `90` → `1m30s`.
fn human(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_max_reads_the_last_status_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stderr.txt");
        let text = "#---------------------------\n# cyclictest current status:\n\
T: 0 ( 6330) P:99 I:1000 C:   1503 Min:      6 Act:   12 Avg:   25 Max:    2873\n\
#---------------------------\n#---------------------------\n# cyclictest current status:\n\
T: 0 ( 6330) P:99 I:1000 C:   3003 Min:      6 Act:   12 Avg:   25 Max:      40\n\
T: 1 ( 6331) P:99 I:1000 C:   3003 Min:      6 Act:   12 Avg:   25 Max:      52\n\
#---------------------------\n";
        std::fs::write(&path, text).unwrap();
        assert_eq!(current_max(&path), Some(52));
        assert_eq!(current_max(&dir.path().join("none")), None);
        assert_eq!(human(90), "1m30s");
        assert_eq!(human(86_400), "24h00m");
    }
}
