//! The `--trace-above-us` steps of a run (arm, keep, restore, and rtla's run), as methods of
//! the session's [`Session`]. Kept apart from `trace`, which the session calls to set tracing up,
//! so the two do not import each other.

use super::judge::Ending;
use super::session::Session;
use super::trace::{Analyzer, WINDOW_NS, breach, rtla_argv};
use crate::formats::run_json::TraceRecord;

impl Session<'_> {
    /// The analyzer of this run, when `--trace-above-us` was given.
    pub(super) fn analyzer(&self) -> Option<Analyzer> {
        self.req.trace.map(|t| t.analyzer)
    }

    /// Empties the buffer and starts recording, before a scenario's cyclictest.
    pub(super) fn trace_arm(&self) {
        if self.analyzer() == Some(Analyzer::Ftrace)
            && self.helper(&["trace-arm", &self.state]).is_none()
        {
            self.ui.warn("could not restart the trace on the target; the next breach may show an older window");
        }
    }

    /// After cyclictest: when it stopped at a breach, keeps the trace window and explains it.
    /// Returns whether cyclictest stopped at a breach.
    pub(super) fn trace_keep(&mut self, index: usize, name: &str) -> bool {
        if self.analyzer() != Some(Analyzer::Ftrace) {
            return false;
        }
        let stdout = std::fs::read_to_string(self.req.out.join(format!("raw/{name}.hist.txt")))
            .unwrap_or_default();
        let Some((tid, latency_us)) = breach(&stdout) else { return false };
        let file = format!("trace-{name}.txt");
        let text = self.helper(&["trace-read", &self.state]).unwrap_or_default();
        let kept = crate::measure::ftrace::keep_window(&text, WINDOW_NS, 20_000);
        if let Err(err) =
            crate::files::write::write_atomic(&self.req.out.join(&file), kept.as_bytes(), false)
        {
            self.ui.warn(format!("could not keep the trace: {err}"));
        }
        let spike = crate::measure::ftrace::spike::analyze(&crate::measure::ftrace::parse(&kept));
        let cpu = spike.as_ref().map(|s| s.cpu).or_else(|| {
            let s = &self.record.scenarios[index];
            s.threads
                .iter()
                .find(|t| t.max_us as f64 == latency_us)
                .and_then(|t| u32::try_from(t.cpu).ok())
        });
        let explanation = spike.map(|s| s.explanation).unwrap_or_else(|| {
            "the trace holds no breach mark from cyclictest (--tracemark), so it cannot be explained".into()
        });
        let above = self.req.trace.map_or(0, |t| t.above_us);
        self.ui.status(
            "Traced",
            format!(
                "{name}: a {latency_us} µs sample crossed --trace-above-us {above}; cyclictest stopped, kept {file}"
            ),
        );
        self.ui.status("Spike", format!("{name}: {explanation}"));
        self.record.scenarios[index].trace = Some(TraceRecord {
            file,
            cpu,
            latency_us: Some(latency_us),
            tid: Some(tid),
            explanation: Some(explanation),
        });
        true
    }

    /// `--analyzer rtla`: after cyclictest, under the same load, `rtla timerlat top -a US` on
    /// the measured CPUs for the same run time (it stops at its first breach). Its output is
    /// kept in `raw/`; on a breach also as `trace-<scenario>.txt`, with rtla's own trace as
    /// `trace-<scenario>.timerlat.txt`. Returns how the run ended.
    pub(super) fn run_rtla(&mut self, index: usize, name: &str, seconds: u64) -> Ending {
        let Some(trace) = self.req.trace.filter(|t| t.analyzer == Analyzer::Rtla) else {
            return Ending::Completed;
        };
        let argv = rtla_argv(trace.above_us, &self.req.measure_cpus, seconds);
        self.record.scenarios[index].commands.push(crate::text::quote::sh_join(&argv));
        // rtla writes timerlat_trace.txt into its working folder: the state folder.
        let mut args: Vec<String> = ["run-program", &self.state, "rtla", "sh", "-c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["cd \"$1\" && shift && exec \"$@\"".into(), "sh".into(), self.state.clone()]);
        args.extend(argv);
        let raw = format!("raw/{name}.rtla.txt");
        let stdout = self.req.out.join(&raw);
        let stderr = self.req.out.join(format!("raw/{name}.rtla.stderr.txt"));
        self.ui.status(
            "Analyzing",
            format!(
                "{name}: rtla timerlat -a {} for {} on CPUs {}",
                trace.above_us,
                crate::text::duration(seconds as f64),
                self.req.measure_cpus
            ),
        );
        let handle = match self.start_helper(&args, &stdout, &stderr) {
            Ok(h) => h,
            Err(warning) => {
                self.ui.warn(warning);
                return Ending::Completed;
            }
        };
        let mut ending = Ending::Completed;
        let started = std::time::Instant::now();
        loop {
            if handle.finished().is_some() {
                break;
            }
            if self.overran(started, seconds, "rtla timerlat", &handle) {
                ending = Ending::ConnectionLost;
                break;
            }
            if self.stop.raised() {
                self.ui
                    .warn(format!("interrupted: stopping rtla and the load on {}", self.req.host));
                ending = Ending::Interrupted;
                let _ = self.helper(&["stop", &self.state]);
                if !handle.wait_for(std::time::Duration::from_secs(10)) {
                    handle.kill();
                }
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let status = handle.finished();
        if ending == Ending::Completed && status.is_some_and(|s| self.req.host.connection_lost(&s))
        {
            ending = Ending::ConnectionLost;
        }
        let text = std::fs::read_to_string(&stdout).unwrap_or_default();
        self.record.scenarios[index].raw_files.push(raw);
        // A stop on the thread or the IRQ latency, or (rtla 6.1) a stop with no analysis: the
        // output and rtla's own trace are kept either way, never nothing.
        match crate::measure::ftrace::rtla::stop(&text) {
            Some(stop) => {
                let file = format!("trace-{name}.txt");
                self.keep_for(index, &file, &text);
                let timerlat = format!("trace-{name}.timerlat.txt");
                let trace = self.helper(&["fetch", &self.state, "timerlat_trace.txt"]);
                let kept = match trace {
                    Some(trace) => self.keep(&timerlat, trace).is_ok(),
                    None => false,
                };
                let mut explanation = crate::measure::ftrace::rtla::explanation(&text);
                if stop.kind == crate::measure::ftrace::rtla::StopKind::Unanalysed && !kept {
                    explanation.push_str(" (but rtla saved no timerlat_trace.txt)");
                }
                self.ui.status("Spike", format!("{name}: {explanation}"));
                self.record.scenarios[index].trace = Some(TraceRecord {
                    file,
                    cpu: stop.cpu,
                    latency_us: stop.latency_us,
                    tid: None,
                    explanation: Some(explanation),
                });
            }
            None if status.is_some_and(|s| !s.success()) && ending == Ending::Completed => {
                let err = std::fs::read_to_string(&stderr).unwrap_or_default();
                self.ui.warn(format!(
                    "{name}: rtla timerlat failed: {}",
                    crate::text::shown_tail(&err, 2)
                ));
            }
            None => {}
        }
        self.save();
        ending
    }

    /// Puts the target's tracing settings back (the helper reads each back). With rtla too:
    /// rtla records in an instance of its own, yet a stop can leave the top-level settings
    /// changed, so `restored` is what the target reads back, never assumed.
    pub(super) fn trace_restore(&mut self) {
        let Some(tracing) = self.record.tracing.as_mut() else { return };
        let Ok(out) =
            self.req.host.run_script(self.runner, super::HELPER, ["trace-restore", &self.state])
        else {
            self.ui.warn(format!(
                "could not reach {} to restore its tracing settings; check tracing_on, buffer_size_kb, tracing_cpumask and set_event in {}",
                self.req.host, tracing.tracefs
            ));
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        tracing.restore_problems =
            text.lines().filter_map(|l| l.strip_prefix("problem ")).map(str::to_string).collect();
        tracing.restored = text.lines().any(|l| l == "restored");
        if tracing.restored {
            self.ui.status("Restored", format!("the tracing settings in {}", tracing.tracefs));
        } else {
            self.ui.warn(format!(
                "tracing settings not restored in {}: {}",
                tracing.tracefs,
                tracing.restore_problems.join(", ")
            ));
        }
    }
}
