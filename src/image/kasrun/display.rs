//! Showing a running build: an indicatif bar (phase, N/M, current tasks, elapsed time) on an
//! interactive terminal, plain timestamped lines for `--plain`, CI and pipes.

use std::time::Instant;

use indicatif::ProgressBar;

use super::events::Event;
use super::tracker::Tracker;
use crate::text::ui::Ui;

pub(super) struct Display<'a> {
    ui: &'a Ui,
    bar: Option<ProgressBar>,
    start: Instant,
    machine: String,
    /// Error and warning lines already shown: kas repeats BitBake's stderr when it fails.
    shown: std::collections::BTreeSet<String>,
}

impl<'a> Display<'a> {
    pub(super) fn new(ui: &'a Ui, machine: &str) -> Display<'a> {
        let bar = ui.fancy().then(|| ui.progress(0, "Building"));
        Display {
            ui,
            bar,
            start: Instant::now(),
            machine: machine.to_string(),
            shown: Default::default(),
        }
    }

    /// Shows what `event` changed.
    pub(super) fn show(&mut self, tracker: &Tracker, event: &Event) {
        let important = important(event).filter(|text| self.shown.insert(text.clone()));
        if let Some(bar) = &self.bar {
            let (position, length) = tracker.position();
            bar.set_length(length);
            bar.set_position(position);
            bar.set_message(tracker.describe());
            if let Some(text) = important {
                bar.suspend(|| self.ui.status("BitBake", text));
            }
            return;
        }
        let text = match event {
            Event::Parsed { recipes } => {
                Some(format!("parsed {}", crate::text::counted(*recipes, "recipe")))
            }
            Event::Setscene { number, total, task } => {
                Some(format!("setscene {number}/{total} {task}"))
            }
            Event::Task { number, total, task } => Some(format!("task {number}/{total} {task}")),
            _ => important,
        };
        if let Some(text) = text {
            self.ui.status(&self.elapsed(), format!("{} {text}", self.machine));
        }
    }

    fn elapsed(&self) -> String {
        crate::text::clock(self.start.elapsed().as_secs())
    }

    pub(super) fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Lines worth showing in both modes.
fn important(event: &Event) -> Option<String> {
    match event {
        Event::Sstate(s) => Some(format!(
            "sstate summary: {} wanted, {} local, {} mirrors, {} missed ({}% match)",
            s.wanted, s.local, s.mirrors, s.missed, s.match_percent
        )),
        Event::TaskError { recipe, task, message } => {
            Some(format!("ERROR: {recipe} {task}: {message}"))
        }
        Event::TaskFailed { task } => Some(format!("ERROR: task {task} failed")),
        Event::Error { message } => Some(format!("ERROR: {message}")),
        Event::Warning { message } => Some(format!("WARNING: {message}")),
        _ => None,
    }
}
