//! Running cyclictest on the target while watching it: probes of its threads and the load
//! (about 1.5 s in, then at every progress tick and each doubling of the elapsed time), progress
//! with the current max (cyclictest's SIGUSR1 status, whose every block stays in the stderr
//! for `report`'s convergence), and a clean stop on Ctrl-C.

use std::time::{Duration, Instant};

use super::HELPER;
use super::judge::Ending;
use super::probe::Probe;
use super::session::Session;
use crate::host::Host;
use crate::host::runner::Background;
use crate::plan::CpuSet;
use crate::text::duration;

impl Session<'_> {
    /// Starts the on-host helper with `args` in its own process group (so Ctrl-C reaches the
    /// helper, not rtbuild's children twice), its output going to `stdout` and `stderr`. The
    /// error is the warning to print.
    pub(super) fn start_helper(
        &self,
        args: &[String],
        stdout: &std::path::Path,
        stderr: &std::path::Path,
    ) -> Result<Background, String> {
        let cmd = self.req.host.sh(self.pinned(args));
        self.runner
            .start(&cmd, HELPER.as_bytes(), stdout, stderr)
            .map_err(|err| format!("could not start `{cmd}`: {err}"))
    }

    /// Whether the program that started at `started` to run `seconds` overran its length plus
    /// the step limit (a target that stopped answering): then it is stopped, with a warning
    /// naming it and the target, and the run counts as a lost connection.
    pub(super) fn overran(
        &self,
        started: Instant,
        seconds: u64,
        what: &str,
        handle: &Background,
    ) -> bool {
        let margin = self.req.host.step_limit();
        if started.elapsed() < Duration::from_secs(seconds) + margin {
            return false;
        }
        self.ui.warn(format!(
            "{what} on {} did not end within its {} plus {} s; stopping it",
            self.req.host,
            duration(seconds as f64),
            margin.as_secs()
        ));
        // The target stopped answering: what is still owed to it is tried briefly.
        self.req.host.mark_stalled();
        let _ = self.helper(&["stop", &self.state.clone()]);
        if !handle.wait_for(Duration::from_secs(10)) {
            handle.kill();
        }
        true
    }

    /// One look at cyclictest's threads, the load and the helper itself, if cyclictest is
    /// still there to see; with `status` cyclictest is also asked for its current figures (one
    /// helper call serves the progress display and the check).
    fn probe(&self, status: bool) -> Option<Probe> {
        let state = self.state.clone();
        let args: &[&str] =
            if status { &["probe", &state, "--status"] } else { &["probe", &state] };
        let probe = Probe::parse(&self.helper(args)?);
        (!probe.cyclictest.is_empty()).then_some(probe)
    }

    /// Runs cyclictest, probing it once and showing progress, until it ends or a stop signal.
    pub(super) fn measure(
        &mut self,
        name: &str,
        argv: &[String],
        expected_s: u64,
    ) -> (Ending, Option<i32>, Vec<Probe>) {
        let req = self.req;
        // Unpinned threads go where cyclictest's own process may run: exactly the measured
        // CPUs, never the helper's mask (which keeps off them). Pinned threads set their CPU.
        let cpus = match req.measurement.threads {
            super::Threads::Unpinned(_) => req.measure_cpus.to_string(),
            super::Threads::PerCpu => "-".to_string(),
        };
        let mut args = vec!["run-cyclictest".to_string(), self.state.clone(), cpus];
        args.extend(argv.iter().cloned());
        let stdout = req.out.join(format!("raw/{name}.hist.txt"));
        let stderr = req.out.join(format!("raw/{name}.stderr.txt"));
        let handle = match self.start_helper(&args, &stdout, &stderr) {
            Ok(h) => h,
            Err(warning) => {
                self.ui.warn(warning);
                return (Ending::Completed, None, Vec::new());
            }
        };
        let bar = self.ui.progress(expected_s, name);
        let started = Instant::now();
        let cpu_at_start = self.own_cpu_s();
        let mut probe_at = Duration::from_millis((expected_s * 1000 / 2).clamp(300, 1500));
        // cyclictest's status snapshots at each doubling of the elapsed time (besides one per
        // progress tick): `report` reads them from the stderr for whether a histogram run's
        // maximum was still rising, at about each power-of-two block of cycles.
        let mut snapshot_at = Duration::from_secs(1);
        let mut probes: Vec<Probe> = Vec::new();
        let mut last_note = Instant::now();
        let mut ending = Ending::Completed;
        // Helper calls while cyclictest measures: the first probe, then one per progress tick.
        let mut calls = 0u64;
        loop {
            if handle.finished().is_some() {
                break;
            }
            if self.overran(started, expected_s, "cyclictest", &handle) {
                ending = Ending::ConnectionLost;
                break;
            }
            if req.host.stalled() {
                // A look at the target ran past --target-timeout: it stopped answering, so
                // the run cannot be seen and ends here (what is left is tried briefly).
                self.ui.warn(format!(
                    "{} stopped answering (a step there did not finish within --target-timeout); ending the run",
                    req.host
                ));
                ending = Ending::ConnectionLost;
                let _ = self.helper(&["stop", &self.state.clone()]);
                if !handle.wait_for(Duration::from_secs(10)) {
                    handle.kill();
                }
                break;
            }
            if self.stop.raised() {
                self.ui
                    .warn(format!("interrupted: stopping cyclictest and the load on {}", req.host));
                ending = Ending::Interrupted;
                let _ = self.helper(&["stop", &self.state.clone()]);
                if !handle.wait_for(Duration::from_secs(10)) {
                    handle.kill();
                }
                break;
            }
            self.note_own_threads();
            let elapsed = started.elapsed();
            // On a slow target (an emulated CPU under load) the first probe can come before
            // cyclictest started its SCHED_FIFO threads: probe again, at most once a second,
            // until they are seen or cyclictest ends (then the early probe stands).
            let early = probes.len() == 1 && !probes[0].measuring();
            if (probes.is_empty() || early) && elapsed >= probe_at {
                calls += 1;
                if let Some(probe) = self.probe(false) {
                    if early {
                        probes.clear();
                    }
                    probes.push(probe);
                }
                probe_at = elapsed + Duration::from_secs(1);
            }
            // Only once its threads were seen (a SIGUSR1 before cyclictest set its handler
            // would end it), and not in the last second, when its threads may be ending (the
            // final figures cover the end). A look that finds them gone is not kept.
            if elapsed >= snapshot_at
                && elapsed + Duration::from_secs(1) < Duration::from_secs(expected_s)
                && probes.first().is_some_and(Probe::measuring)
            {
                calls += 1;
                probes.extend(self.probe(true).filter(Probe::measuring));
                while snapshot_at <= elapsed {
                    snapshot_at *= 2;
                }
            }
            bar.set_position(elapsed.as_secs().min(expected_s));
            // Plain logs get about a hundred progress lines per scenario at most.
            let every =
                Duration::from_secs(if self.ui.fancy() { 5 } else { (expected_s / 100).max(60) });
            if last_note.elapsed() >= every {
                last_note = Instant::now();
                calls += 1;
                probes.extend(self.probe(true));
                std::thread::sleep(Duration::from_millis(200));
                let status = read_status(&req.out.join(format!("raw/{name}.stderr.txt")));
                let length = req.measurement.span.length;
                if self.ui.fancy() {
                    let left = left_text(elapsed.as_secs(), expected_s, length, status.as_ref());
                    bar.set_message(bar_message(status.and_then(|s| s.max_us), &left));
                } else {
                    let text = progress(elapsed.as_secs(), expected_s, length, status.as_ref());
                    self.ui.status("Measuring", format!("{name}: {text}"));
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bar.finish_and_clear();
        let measured_s = started.elapsed().as_secs_f64();
        self.note_own_cpus(&probes, calls, measured_s);
        self.note_overhead(measured_s, cpu_at_start);
        let status = handle.finished();
        let lost = status.is_some_and(|s| req.host.connection_lost(&s)) || req.host.stalled();
        if ending == Ending::Completed && lost {
            ending = Ending::ConnectionLost;
        }
        (ending, status.and_then(|s| s.code()), probes)
    }

    /// rtbuild's own CPU time so far, on a local run (over ssh it runs elsewhere).
    fn own_cpu_s(&self) -> Option<f64> {
        matches!(self.req.host, Host::Local).then(super::own_cpus::this_process_cpu_s).flatten()
    }

    /// On a local run: which of rtbuild's threads last ran on an RT CPU.
    fn note_own_threads(&mut self) {
        if matches!(self.req.host, Host::Local) {
            self.own_on_rt.extend(super::own_cpus::threads_last_on(&self.req.layout.rt));
        }
    }

    /// Adds one scenario's measuring time and rtbuild's CPU time in it to the overhead block.
    fn note_overhead(&mut self, measured_s: f64, cpu_at_start: Option<f64>) {
        let used = cpu_at_start.zip(self.own_cpu_s()).map(|(start, end)| (end - start).max(0.0));
        let Some(overhead) = self.record.overhead.as_mut() else { return };
        overhead.measuring_s = ((overhead.measuring_s + measured_s) * 10.0).round() / 10.0;
        if let (Some(total), Some(used)) = (overhead.rtbuild_cpu_s.as_mut(), used) {
            *total = ((*total + used) * 100.0).round() / 100.0;
        }
    }

    /// Records where the helper ran (its first probe's view) and how often it was called.
    fn note_own_cpus(&mut self, probes: &[Probe], calls: u64, seconds: f64) {
        let Some(own) = self.record.rtbuild_cpus.as_mut() else { return };
        own.helper_calls_measuring += calls;
        own.measuring_s = ((own.measuring_s + seconds) * 10.0).round() / 10.0;
        if let Some(seen) = probes.iter().find_map(|p| p.helper.as_ref()) {
            let seen = CpuSet::parse(&seen.allowed).unwrap_or_default();
            let known = own.helper.as_deref().and_then(|h| CpuSet::parse(h).ok());
            own.helper = Some(known.map_or(seen.clone(), |k| k.union(&seen)).to_string());
        }
    }
}

/// cyclictest's last status block: the highest `Max:` and the fewest cycles (`C:`) of its threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Status {
    max_us: Option<i64>,
    cycles: Option<u64>,
}

/// The progress bar's message: the current max first, so a narrow terminal cuts what is left
/// rather than it (the bar shows the elapsed time itself).
fn bar_message(max: Option<i64>, left: &str) -> String {
    match max {
        Some(m) => format!("current max {m} µs, {left}"),
        None => left.to_string(),
    }
}

/// The last status block cyclictest printed on SIGUSR1.
fn read_status(stderr: &std::path::Path) -> Option<Status> {
    let text = std::fs::read_to_string(stderr).ok()?;
    let block = text.rsplit("# cyclictest current status:").next()?;
    let threads: Vec<&str> = block.lines().filter(|l| l.starts_with("T:")).collect();
    let field = |line: &str, key: &str| -> Option<String> {
        let rest = line.split_once(key)?.1.trim_start();
        Some(rest.split_whitespace().next()?.to_string())
    };
    Some(Status {
        max_us: threads.iter().filter_map(|l| field(l, "Max:")?.parse().ok()).max(),
        cycles: threads.iter().filter_map(|l| field(l, "C:")?.parse().ok()).min(),
    })
}

/// What is left of the run: the time for a `--duration` run; for `--loops N` (whose time is
/// the loops at the interval only when every wake-up is on time, and longer on a slow target)
/// the loops done and the time left at the rate seen so far, never a `0s left` that stays.
fn left_text(
    elapsed: u64,
    expected: u64,
    length: super::Length,
    status: Option<&Status>,
) -> String {
    let super::Length::Loops(loops) = length else {
        return format!("{} left", duration(expected.saturating_sub(elapsed) as f64));
    };
    match status.and_then(|s| s.cycles).filter(|&done| done > 0 && elapsed > 0) {
        Some(done) => {
            let left = loops.saturating_sub(done).saturating_mul(elapsed).div_ceil(done);
            let loops = crate::text::counted(loops, "loop");
            format!("{done} of {loops}, about {} left", duration(left as f64))
        }
        None => format!(
            "{} (about {} at the interval)",
            crate::text::counted(loops, "loop"),
            duration(expected as f64)
        ),
    }
}

/// The plain progress line: elapsed, what is left, the current max.
fn progress(elapsed: u64, expected: u64, length: super::Length, status: Option<&Status>) -> String {
    let max =
        status.and_then(|s| s.max_us).map_or(String::new(), |m| format!(", current max {m} µs"));
    format!(
        "{} elapsed, {}{max}",
        duration(elapsed as f64),
        left_text(elapsed, expected, length, status)
    )
}

#[cfg(test)]
mod tests {
    /// On an 80-column terminal the bar's message keeps the current max whole, even for a
    /// 24-hour soak with a 7-digit max (the progress line once cut it off).
    #[test]
    fn the_current_max_fits_an_80_column_progress_line() {
        use crate::text::ui::{
            PROGRESS_FIXED_COLUMNS, PROGRESS_MESSAGE_COLUMNS, PROGRESS_TEMPLATE,
        };
        // The template's own columns before the message, each placeholder at its width.
        let fixed = PROGRESS_TEMPLATE
            .replace("{prefix:>12.cyan.bold}", &"p".repeat(12))
            .replace("{bar:20}", &"=".repeat(20))
            .replace("{elapsed_precise}", "00:00:00")
            .replace("{wide_msg}", "");
        assert!(!fixed.contains('{'), "a placeholder not counted: {fixed}");
        assert_eq!(fixed.chars().count(), PROGRESS_FIXED_COLUMNS, "{fixed:?}");
        assert_eq!(PROGRESS_FIXED_COLUMNS + PROGRESS_MESSAGE_COLUMNS, 80);
        for left in [0, 59, 3_599, 86_399, 86_400 * 7] {
            let message =
                super::bar_message(Some(1_234_567), &format!("{} left", duration(left as f64)));
            let kept: String = message.chars().take(PROGRESS_MESSAGE_COLUMNS).collect();
            assert!(kept.starts_with("current max 1234567 µs"), "{kept:?} from {message:?}");
        }
        assert!(super::bar_message(None, &format!("{} left", duration(300.0))).ends_with(" left"));
    }

    use super::*;

    #[test]
    fn the_status_is_read_from_the_last_status_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stderr.txt");
        let text = "#---------------------------\n# cyclictest current status:\n\
T: 0 ( 6330) P:99 I:1000 C:   1503 Min:      6 Act:   12 Avg:   25 Max:    2873\n\
#---------------------------\n#---------------------------\n# cyclictest current status:\n\
T: 0 ( 6330) P:99 I:1000 C:   3003 Min:      6 Act:   12 Avg:   25 Max:      40\n\
T: 1 ( 6331) P:99 I:1000 C:   3003 Min:      6 Act:   12 Avg:   25 Max:      52\n\
#---------------------------\n";
        crate::files::write::fixture(&path, text).unwrap();
        assert_eq!(read_status(&dir.path().join("none")), None);
        let status = read_status(&path).unwrap();
        assert_eq!(status, Status { max_us: Some(52), cycles: Some(3003) });
    }

    /// Issue 40: a `--loops` run shows the loops done and the time left at the rate seen (under
    /// TCG the loops take longer than loops × interval), never `0s left`; a `--duration` run
    /// keeps its time left.
    #[test]
    fn a_loops_run_shows_the_loops_left_not_zero_seconds() {
        use super::super::Length;
        let status = Status { max_us: Some(40), cycles: Some(1000) };
        assert_eq!(
            progress(20, 3, Length::Loops(3000), Some(&status)),
            format!(
                "{} elapsed, 1000 of 3000 loops, about {} left, current max 40 µs",
                duration(20.0),
                duration(40.0)
            )
        );
        assert_eq!(
            progress(5, 3, Length::Loops(3000), None),
            format!(
                "{} elapsed, 3000 loops (about {} at the interval)",
                duration(5.0),
                duration(3.0)
            )
        );
        assert_eq!(
            progress(5, 60, Length::Seconds(60), Some(&status)),
            format!("{} elapsed, {} left, current max 40 µs", duration(5.0), duration(55.0))
        );
    }
}
