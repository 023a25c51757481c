//! One scenario of a test run: fingerprint → load → measure → stop → collect → fingerprint →
//! judge, saving `run.json` as it goes.

use std::time::{Duration, Instant};

use super::fingerprint::{Sections, landed_on};
use super::judge::{self, Ending};
use super::load_level::{load_levels, load_percent, load_shortfall};
use super::scenario::{CommandSpec, Scenario};
use super::sequence::{Sequence, load_argv};
use super::session::Session;
use crate::formats::run_json::{ScenarioRecord, ThreadSummary};
use crate::text::duration;

impl Session<'_> {
    pub(super) fn scenario(&mut self, scenario: Scenario) -> Ending {
        let req = self.req;
        let name = scenario.to_string();
        let measure = req.measurement.measure();
        let expected_s = measure.expected_seconds(req.measure_cpus.len());
        let json_remote = format!("{}/{name}.json", self.state);
        let custom = req.measurement.custom_load.as_ref();
        let spec = CommandSpec {
            measure: &measure,
            measure_cpus: &req.measure_cpus,
            load_percent: req.measurement.load_percent,
            cyclictest_args: &req.measurement.cyclictest_args,
            custom_load: custom,
        };
        let mut commands = scenario.commands(&req.layout, &spec, &json_remote);
        if let Some(trace) = req.trace.filter(|t| t.analyzer == super::Analyzer::Ftrace) {
            // Break at the first sample above the limit, writing a mark into the trace.
            commands.cyclictest.extend([
                "-b".to_string(),
                trace.above_us.to_string(),
                "--tracemark".to_string(),
            ]);
        }
        let suite = super::program::suite(req, expected_s);
        let sequence = Sequence::of(&req.measurement.tests);
        let has_ct = sequence.cyclictest;
        if !has_ct {
            commands.cyclictest = Vec::new();
        }
        let ct_argv = commands.cyclictest.clone();
        // The load must outlast every test of the scenario, not only cyclictest.
        let mut total_s = suite.total_seconds(expected_s);
        if has_ct && self.analyzer() == Some(super::Analyzer::Rtla) {
            // rtla timerlat runs after cyclictest under the same load.
            total_s += expected_s;
        }
        let loads = suite.loads(scenario, req.measurement.load_percent, custom, total_s);
        commands.load = loads.iter().map(load_argv).collect();
        let unpinned = scenario.unpinned_load(custom);
        let started = Instant::now();
        self.record.scenarios.push(ScenarioRecord {
            name: name.clone(),
            label: scenario.label().map(str::to_string),
            state: "running".into(),
            started_unix: super::now_unix(),
            commands: has_ct
                .then_some(&commands.cyclictest)
                .into_iter()
                .chain(&commands.load)
                .map(crate::text::quote::sh_join)
                .collect(),
            argv: commands,
            expected_cycles: measure.length.cycles(measure.interval_us),
            ..ScenarioRecord::default()
        });
        let index = self.record.scenarios.len() - 1;
        let mut reasons: Vec<String> = Vec::new();

        let before = self.fingerprint_before(&name);
        if before.is_none() {
            reasons.push("the fingerprint before the run could not be taken".into());
        }
        if let Some(before) = &before {
            self.record.scenarios[index].fingerprint = Some(before.summary());
            if self.record.fingerprint.is_none() {
                let summary = before.summary();
                if summary.realtime != Some(true) {
                    self.ui.warn(format!(
                        "the kernel on {} is not PREEMPT_RT (/sys/kernel/realtime is not 1): {}",
                        req.host,
                        summary.uname.as_deref().unwrap_or_default()
                    ));
                }
                if let Some(urm) = &summary.urm {
                    self.ui.warn(format!(
                        "{} on {} re-tunes governors, IRQ and workqueue affinities and cpuidle when cyclictest starts, which may change knobs rtbuild saved; pass --stop-urm to stop it for the run (rtbuild starts it again afterwards) for a measurement of rtbuild's tuning alone",
                        urm, req.host
                    ));
                }
                if self.record.machine.is_none() {
                    // No --machine nor --board: the board names itself (a devicetree model),
                    // so the history files the run under it rather than under no name.
                    self.record.machine = summary.board.as_deref().map(crate::text::printable);
                }
                self.record.fingerprint = Some(summary);
                self.before_run(before);
            }
            if unpinned && !req.layout.rt.is_subset(&before.isolated()) {
                let isolated = before.get("isolated").trim();
                reasons.push(format!(
                    "{name} runs its load unpinned, so it needs RT CPUs {} isolated (isolcpus=), but the kernel isolates {}",
                    req.layout.rt,
                    if isolated.is_empty() { "none".to_string() } else { format!("`{isolated}`") }
                ));
            }
        }
        self.record.scenarios[index]
            .fingerprint_files
            .push(format!("fingerprint/{name}-before.txt"));
        self.save();

        // Each load's process group, as the helper started it: every load in one call (one
        // connection, one shell on the target, however many housekeeping CPUs are loaded).
        let mut groups: Vec<(u32, usize)> = Vec::new();
        if !loads.is_empty() {
            let mut args = vec!["start-loads".to_string(), self.state.clone()];
            for load in &loads {
                let cpus = load.cpus.as_ref().map_or("-".to_string(), ToString::to_string);
                args.extend([load.name.clone(), cpus, load.argv.len().to_string()]);
                args.extend(load.argv.iter().cloned());
            }
            let reply = self.helper(&args.iter().map(String::as_str).collect::<Vec<_>>());
            let started: Vec<u32> = reply
                .as_deref()
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.strip_prefix("started ")?.trim().parse().ok())
                .collect();
            for (at, load) in loads.iter().enumerate() {
                match started.get(at) {
                    Some(&group) => groups.push((group, at)),
                    None => reasons.push(format!("load `{}` could not be started", load.name)),
                }
            }
        }
        if !loads.is_empty() {
            self.ui.status(
                "Loading",
                match scenario {
                    Scenario::StressIsolated => {
                        format!("{name}: stress-ng on every CPU, left to the kernel's isolation")
                    }
                    Scenario::Custom if unpinned => {
                        format!(
                            "{name}: the --load-cmd load on any CPU, left to the kernel's isolation"
                        )
                    }
                    Scenario::Custom => format!(
                        "{name}: the --load-cmd load pinned to CPUs {}",
                        req.layout.housekeeping
                    ),
                    Scenario::SystemLoad => format!(
                        "{name}: stress-ng on every CPU ({})",
                        super::scenario::SYSTEM_LOAD_LABEL
                    ),
                    Scenario::Hackbench => {
                        format!("{name}: hackbench pinned to CPUs {}", req.layout.housekeeping)
                    }
                    _ => format!(
                        "{name}: {} pinned to CPUs {}",
                        crate::text::counted(loads.len(), "stress-ng generator"),
                        req.layout.housekeeping
                    ),
                },
            );
            std::thread::sleep(Duration::from_secs(1));
        }

        let mut ending = Ending::Completed;
        for program in &sequence.before {
            if ending == Ending::Completed {
                ending = self.run_program(index, &name, *program, suite.run_seconds(*program));
            }
        }
        let (status, probes) = if has_ct && ending == Ending::Completed {
            self.ui.status(
                "Measuring",
                if req.measure_cpus == req.layout.rt {
                    format!(
                        "{name} for {} on RT CPUs {}",
                        duration(expected_s as f64),
                        req.layout.rt
                    )
                } else {
                    format!(
                        "{name} for {} on CPUs {} (RT CPUs {})",
                        duration(expected_s as f64),
                        req.measure_cpus,
                        req.layout.rt
                    )
                },
            );
            self.trace_arm();
            let (ct_ending, status, probes) = self.measure(&name, &ct_argv, expected_s);
            ending = ct_ending;
            if ending == Ending::Completed {
                ending = self.run_rtla(index, &name, expected_s);
            }
            (status, probes)
        } else {
            (None, Vec::new())
        };
        for program in &sequence.after {
            if ending == Ending::Completed {
                ending = self.run_program(index, &name, *program, suite.run_seconds(*program));
            }
        }

        let alive = self.helper(&["load-alive", &self.state.clone()]);
        let alive_n: usize = alive
            .as_deref()
            .and_then(|t| t.lines().find_map(|l| l.strip_prefix("alive "))?.trim().parse().ok())
            .unwrap_or(0);
        if let Some(text) = alive.as_deref()
            && !loads.is_empty()
        {
            let percent = load_percent(text, req.layout.housekeeping.len());
            self.record.scenarios[index].load_cpu_percent = percent;
            if let Some(p) = percent {
                self.ui
                    .detail(format!("{name}: the load kept the housekeeping CPUs {p:.0} % busy"));
            }
            // The stress scenario asks each generator for --load % of its CPU.
            let asked = (scenario == Scenario::Stress).then_some(req.measurement.load_percent);
            let levels = load_levels(text, &groups, &loads, asked);
            if ending == Ending::Completed {
                reasons.extend(levels.iter().filter_map(load_shortfall));
            }
            self.record.scenarios[index].load_levels = levels;
        }
        let stopped = self.helper(&["stop", &self.state.clone()]);
        let left: usize = stopped
            .as_deref()
            .and_then(|t| t.lines().find_map(|l| l.strip_prefix("left "))?.trim().parse().ok())
            .unwrap_or(0);
        if !loads.is_empty() && ending == Ending::Completed && alive_n == 0 {
            reasons.push(if has_ct {
                "the load had stopped before cyclictest finished".into()
            } else {
                "the load had stopped before the tests finished".into()
            });
        }
        if left > 0 {
            self.ui.warn(format!("{left} load processes did not stop on {}", req.host));
        }

        let json_local = format!("raw/{name}.json");
        if !has_ct {
            // Nothing of cyclictest's to fetch.
        } else if let Some(text) =
            self.helper(&["fetch", &self.state.clone(), &format!("{name}.json")])
        {
            self.keep_for(index, &json_local, text);
        }
        let raw: Vec<String> = ["json", "hist.txt", "stderr.txt"]
            .iter()
            .map(|suffix| format!("raw/{name}.{suffix}"))
            .filter(|f| std::fs::metadata(req.out.join(f)).is_ok_and(|m| m.len() > 0))
            .collect();
        let hist_local = format!("raw/{name}.hist.txt");
        let histogram_text = std::fs::read_to_string(req.out.join(&hist_local))
            .is_ok_and(|t| t.contains("# Histogram"));
        let s = &mut self.record.scenarios[index];
        s.files = if raw.contains(&json_local) {
            vec![json_local]
        } else if histogram_text {
            vec![hist_local]
        } else {
            Vec::new()
        };
        s.raw_files = raw;

        if ending != Ending::ConnectionLost
            && let Some(after) = self.fingerprint(&name, "after")
        {
            self.record.scenarios[index]
                .fingerprint_files
                .push(format!("fingerprint/{name}-after.txt"));
            if let Some(before) = &before {
                let s = &mut self.record.scenarios[index];
                (s.thermal, s.throttling) = super::fingerprint::changes(before, &after);
                s.interrupts_on_rt_cpus =
                    landed_on(before.get("interrupts"), after.get("interrupts"), &req.layout.rt);
                s.softirqs_on_rt_cpus =
                    landed_on(before.get("softirqs"), after.get("softirqs"), &req.layout.rt);
                let irqs = s.interrupts_on_rt_cpus.clone();
                self.record.interrupts.insert(name.clone(), irqs);
                let spoiled = super::spoilers::scenario(before, &after, &req.layout.rt);
                reasons.extend(spoiled.invalid);
                s.fail_reasons.extend(spoiled.fail);
                s.notes.extend(spoiled.notes);
            }
        }

        // A breach of --trace-above-us may stop cyclictest before the first look at it.
        let broke =
            stopped_at_breach_of(&req.out, &name, self.analyzer() == Some(super::Analyzer::Ftrace));
        if has_ct && probes.is_empty() && ending == Ending::Completed && !broke {
            reasons.push("cyclictest ended before it could be observed".into());
        }
        let place = scenario.load_place(custom);
        let mut probes = probes;
        for probe in &mut probes {
            probe.after_breach = broke;
        }
        for probe in &probes {
            let own = probe.helper_problem(&self.own_cpus);
            for problem in probe
                .problems(
                    &req.layout,
                    &req.measure_cpus,
                    req.measurement.threads,
                    !loads.is_empty(),
                    place,
                )
                .into_iter()
                .chain(own)
            {
                if !reasons.contains(&problem) {
                    reasons.push(problem);
                }
            }
        }
        if has_ct {
            reasons.extend(self.judge(index, &name, status, ending));
            if self.trace_keep(index, &name)
                && let Some(trace) = req.trace
            {
                let s = &self.record.scenarios[index];
                let latency = s.trace.as_ref().and_then(|t| t.latency_us).unwrap_or(0.0);
                if latency <= req.threshold.us as f64 {
                    reasons.push(format!(
                        "cyclictest stopped at its first sample above --trace-above-us {} ({latency} µs, within the {} µs limit), so it did not measure the whole run; trace kept in {}; pass --trace-above-us at or above the limit for a full verdict",
                        trace.above_us,
                        req.threshold.us,
                        s.trace.as_ref().map_or("", |t| t.file.as_str())
                    ));
                }
            }
        }
        // Thread numbers by id: cyclictest's `T: k (TID)` lines, printed on stdout at the end
        // of a run without a histogram and on stderr in every status block (a histogram run,
        // the usual one on a target, prints them nowhere else).
        let mut named = String::new();
        for raw in ["hist.txt", "stderr.txt"] {
            let path = req.out.join(format!("raw/{name}.{raw}"));
            if let Ok(text) =
                crate::files::input::read_to_string(&path, crate::files::input::TEXT_LIMIT)
            {
                named.push_str(&text);
                named.push('\n');
            }
        }
        let s = &mut self.record.scenarios[index];
        s.thread_placement = super::probe::placement(&probes, &named);
        if req.measurement.threads == super::Threads::PerCpu {
            // A histogram's output names no thread ids; a pinned thread is known by its CPU.
            for p in s.thread_placement.iter_mut().filter(|p| p.thread.is_none()) {
                let cpu = p.allowed.parse::<i64>().ok();
                p.thread = s.threads.iter().find(|t| Some(t.cpu) == cpu).map(|t| t.thread);
            }
        }
        s.cyclictest_affinity = match req.measurement.threads {
            super::Threads::Unpinned(_) if has_ct => Some(req.measure_cpus.to_string()),
            _ => None,
        };
        s.probe_count = probes.len();
        s.probe = probes.into_iter().next();
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

    /// What the first fingerprint shows that the run must know from the start: warnings the
    /// kernel logged before it (information) and a running irqbalance that does not ban the RT
    /// CPUs (it may move IRQs onto them; a move makes the scenario invalid).
    /// The fingerprint before scenario `name`. After a scenario it is the one taken at that
    /// scenario's end (nothing of the run happens on the target between the two), kept again as
    /// NAME-before.txt: one fingerprint between scenarios, not two (on a slow or loaded board
    /// each is many program starts on the housekeeping CPUs).
    fn fingerprint_before(&mut self, name: &str) -> Option<Sections> {
        match self.last_fingerprint.take() {
            Some(text) => {
                let _ = self.keep(&format!("fingerprint/{name}-before.txt"), &text);
                Some(Sections::parse(&text))
            }
            None => {
                let before = self.fingerprint(name, "before");
                self.last_fingerprint = None;
                before
            }
        }
    }

    pub(super) fn fingerprint(&mut self, name: &str, when: &str) -> Option<Sections> {
        let text = self.helper(&["fingerprint"])?;
        let file = format!("fingerprint/{name}-{when}.txt");
        // The parsed sections go into the record; the text file is a copy: a warning when lost.
        let _ = self.keep(&file, &text);
        let sections = Sections::parse(&text);
        self.last_fingerprint = Some(text);
        Some(sections)
    }

    fn before_run(&mut self, before: &Sections) {
        let req = self.req;
        let (warnings, _) = super::spoilers::kernel_warnings(before);
        if !warnings.is_empty() {
            self.ui.warn(format!(
                "the kernel log on {} already holds {} from before the run (information; only those logged during a scenario count), the last: {}",
                req.host,
                crate::text::counted(warnings.len(), "warning line"),
                warnings.last().map_or("", String::as_str)
            ));
        }
        self.record.kernel_warnings_before = warnings;
        let balancers = super::spoilers::irqbalance(before);
        for line in &balancers {
            let mut words = line.split_whitespace();
            let pid = words.next().unwrap_or("?");
            let banned = words.next().and_then(|b| crate::plan::CpuSet::parse(b).ok());
            if !banned.is_some_and(|b| req.layout.rt.is_subset(&b)) {
                self.ui.warn(format!(
                    "irqbalance (pid {pid}) runs on {} without banning RT CPUs {}: it may move IRQs onto them, which makes the run invalid; pass --tune (or `rtbuild tune --apply`), which bans them",
                    req.host, req.layout.rt
                ));
            }
        }
        self.record.irqbalance = balancers;
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
        let read = |suffix: &str| {
            std::fs::read_to_string(req.out.join(format!("raw/{name}.{suffix}"))).ok()
        };
        let stopped_at_breach =
            stopped_at_breach_of(&req.out, name, self.analyzer() == Some(super::Analyzer::Ftrace));
        let judged = judge::judge(&judge::Inputs {
            json: read("json").as_deref(),
            stderr: &read("stderr.txt").unwrap_or_default(),
            measure_cpus: &req.measure_cpus,
            threads: req.measurement.threads,
            interval_us: req.measurement.interval_us,
            distance_us: req.measurement.measure().distance_us(),
            loops: matches!(req.measurement.span.length, super::Length::Loops(_)),
            histogram_us: req.measurement.histogram_us,
            expected_cycles: self.record.scenarios[index].expected_cycles,
            status,
            ending,
            host: &req.host.to_string(),
            stopped_at_breach,
        });
        let s = &mut self.record.scenarios[index];
        s.max_us = judged.threads.iter().map(|t| t.max_us).max();
        s.threads = judged.threads;
        s.notes.extend(judged.notes);
        judged.reasons
    }

    fn report(&self, index: usize) {
        let s = &self.record.scenarios[index];
        let device: Vec<String> = s
            .interrupts_on_rt_cpus
            .iter()
            .filter(|d| d.device)
            .map(|d| format!("IRQ {} ({}) x{} on CPU{}", d.irq, d.description, d.count, d.cpu))
            .collect();
        self.ui.status("Measured", measured(s));
        for line in &device {
            self.ui.detail(line);
        }
        for reason in &s.invalid_reasons {
            self.ui.warn(format!("{}: {reason}", s.name));
        }
        for reason in &s.fail_reasons {
            self.ui.warn(format!("{}: fails: {reason}", s.name));
        }
        for note in &s.notes {
            self.ui.note(format!("{}: {note}", s.name));
        }
    }
}

/// The `Measured` line of scenario `s`: its validity, each cyclictest thread's max, and the
/// device interrupts that fired on the RT CPUs.
fn measured(s: &ScenarioRecord) -> String {
    let irqs = if s.interrupts_on_rt_cpus.iter().any(|d| d.device) {
        let mut names: Vec<String> = Vec::new();
        for d in s.interrupts_on_rt_cpus.iter().filter(|d| d.device) {
            let name = format!("IRQ {} {}", d.irq, d.description);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        format!(
            "{} on RT CPUs: {}",
            crate::text::counted(names.len(), "device interrupt source"),
            names.join(", ")
        )
    } else {
        "no device interrupts on RT CPUs".to_string()
    };
    let verdict = if s.invalid_reasons.is_empty() { "valid" } else { "INVALID" };
    let verdict = match &s.label {
        Some(label) => format!("{verdict} ({label})"),
        None => verdict.to_string(),
    };
    format!("{}: {verdict}; max {}; {irqs}", s.name, thread_maxes(&s.threads))
}

/// Each thread's max, named by its thread number and the CPU it measured on (`thread 0 on
/// CPU1 38 µs`): unpinned threads may share a CPU, so the CPU alone names no thread. `-` when
/// no thread reported.
fn thread_maxes(threads: &[ThreadSummary]) -> String {
    if threads.is_empty() {
        return "-".to_string();
    }
    let each = threads.iter().map(|t| match u32::try_from(t.cpu) {
        Ok(cpu) => format!("thread {} on CPU{cpu} {} µs", t.thread, t.max_us),
        Err(_) => format!("thread {} {} µs", t.thread, t.max_us),
    });
    each.collect::<Vec<_>>().join(", ")
}

/// Whether cyclictest stopped at its `-b` breach (its stdout says `# Break thread:`).
fn stopped_at_breach_of(out: &std::path::Path, name: &str, tracing: bool) -> bool {
    tracing
        && std::fs::read_to_string(out.join(format!("raw/{name}.hist.txt")))
            .is_ok_and(|t| super::trace::breach(&t).is_some())
}

#[cfg(test)]
#[path = "steps_tests.rs"]
mod tests;
