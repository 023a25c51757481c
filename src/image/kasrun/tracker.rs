//! [`Tracker`]: what a build has done so far, folded from BitBake's output line by line. It
//! drives the progress display while the build runs and the summary or failure report after.

use std::collections::BTreeMap;

use serde::Serialize;

use super::events::{self, Event, SstateSummary, TaskState};

/// Where the build is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Phase {
    Parsing,
    Setscene,
    Tasks,
}

/// A task BitBake reported as failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Failure {
    /// `linux-qcom-rt_6.18:do_compile`.
    pub task: String,
    /// `linux-qcom-rt-6.18.37-r0`, when an `ERROR: <recipe> do_x:` line named it.
    pub recipe: Option<String>,
    /// The task log BitBake pointed to.
    pub log: Option<String>,
    /// The first error message for this task.
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct Pending {
    recipe: String,
    task: String,
    message: String,
    log: Option<String>,
}

/// Everything learned from the output so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tracker {
    pub phase: Option<Phase>,
    pub parse_percent: Option<u32>,
    pub recipes: Option<u64>,
    /// `(number, total)` of the last `Running task N of M`.
    pub task: Option<(u64, u64)>,
    pub setscene: Option<(u64, u64)>,
    /// Tasks started and not yet finished: `recipe do_task`.
    pub active: BTreeMap<String, ()>,
    pub sstate: Option<SstateSummary>,
    /// `(attempted, reused, failed)` from `Tasks Summary`.
    pub summary: Option<(u64, u64, u64)>,
    pub failures: Vec<Failure>,
    /// `ERROR:` lines that are not about a task (e.g. `Nothing PROVIDES 'x'`).
    pub errors: Vec<String>,
    pub warnings: usize,
    seen_warnings: std::collections::BTreeSet<String>,
    /// The last `ERROR: <recipe> do_x:` line, waiting for BitBake's `Task (…) failed`.
    pending: Option<Pending>,
    /// Inside knotty's `Summary: N task(s) failed:` block.
    in_summary: bool,
}

impl Tracker {
    pub(crate) fn new() -> Tracker {
        Tracker::default()
    }

    /// Folds one raw output line in; returns its event for the display.
    pub(crate) fn feed(&mut self, raw: &str) -> Option<Event> {
        let line = events::clean(raw);
        let trimmed = line.trim();
        if self.in_summary && self.summary_line(trimmed) {
            return None;
        }
        if trimmed.starts_with("Summary: ") && trimmed.contains("failed:") {
            self.in_summary = true;
            return None;
        }
        let event = events::parse(&line)?;
        self.apply(&event);
        Some(event)
    }

    fn apply(&mut self, event: &Event) {
        match event {
            Event::Parsing { percent } => {
                self.phase = Some(Phase::Parsing);
                self.parse_percent = percent.or(self.parse_percent);
            }
            Event::Parsed { recipes } => {
                self.phase = Some(Phase::Parsing);
                self.recipes = Some(*recipes);
                self.parse_percent = Some(100);
            }
            Event::Setscene { number, total, .. } => {
                self.phase = Some(Phase::Setscene);
                self.setscene = Some((*number, *total));
            }
            Event::Task { number, total, .. } => {
                self.phase = Some(Phase::Tasks);
                self.task = Some((*number, *total));
            }
            Event::TaskState { recipe, task, state } => {
                let key = format!("{recipe} {task}");
                match state {
                    TaskState::Started => {
                        self.active.insert(key, ());
                    }
                    TaskState::Succeeded | TaskState::Failed => {
                        self.active.remove(&key);
                    }
                }
            }
            Event::Sstate(summary) => self.sstate = Some(*summary),
            Event::TasksSummary { attempted, reused, failed } => {
                self.summary = Some((*attempted, *reused, *failed));
            }
            Event::TaskError { recipe, task, message } => {
                let same =
                    self.pending.as_ref().is_some_and(|p| &p.recipe == recipe && &p.task == task);
                if !same {
                    self.flush_pending();
                    self.pending = Some(Pending {
                        recipe: recipe.clone(),
                        task: task.clone(),
                        message: message.clone(),
                        log: None,
                    });
                }
            }
            Event::FailureLog { path } => {
                if let Some(pending) = self.pending.as_mut() {
                    pending.log = Some(path.clone());
                }
            }
            Event::TaskFailed { task } => {
                let pending = self.pending.take_if(|p| task.ends_with(&format!(":{}", p.task)));
                let failure = self.failure_mut(task);
                if let Some(p) = pending {
                    failure.recipe.get_or_insert(p.recipe);
                    failure.message.get_or_insert(p.message);
                    if let Some(log) = p.log {
                        failure.log.get_or_insert(log);
                    }
                }
            }
            Event::Error { message } => {
                // kas repeats BitBake's stderr when the command fails.
                if !self.errors.contains(message) {
                    self.errors.push(message.clone());
                }
            }
            Event::Warning { message } => {
                if self.seen_warnings.insert(message.clone()) {
                    self.warnings += 1;
                }
            }
        }
    }

    /// The failure entry for `task`, created when new.
    fn failure_mut(&mut self, task: &str) -> &mut Failure {
        let at = match self.failures.iter().position(|f| f.task == task) {
            Some(at) => at,
            None => {
                self.failures.push(Failure {
                    task: task.to_string(),
                    recipe: None,
                    log: None,
                    message: None,
                });
                self.failures.len() - 1
            }
        };
        &mut self.failures[at]
    }

    /// A task error that BitBake never followed with `Task (…) failed` becomes a failure.
    fn flush_pending(&mut self) {
        if let Some(p) = self.pending.take() {
            let known = self.failures.iter().any(|f| f.recipe.as_deref() == Some(&p.recipe));
            if !known {
                let failure = self.failure_mut(&format!("{}:{}", p.recipe, p.task));
                failure.recipe = Some(p.recipe);
                failure.message = Some(p.message);
                failure.log = p.log;
            }
        }
    }

    /// Call after the last line.
    pub(crate) fn finish(&mut self) {
        self.flush_pending();
        self.in_summary = false;
    }

    /// Lines of knotty's `Summary: N tasks failed:` block; false when the block has ended.
    fn summary_line(&mut self, line: &str) -> bool {
        if let Some(path) = line.strip_prefix("log: ") {
            if let Some(last) = self.failures.last_mut() {
                last.log.get_or_insert_with(|| path.trim().to_string());
            }
            return true;
        }
        if line.contains(":do_") && !line.contains(' ') {
            let task = events::short_task(line);
            let at = self.failures.iter().position(|f| f.task == task);
            // Move it last so that a following `log:` line lands on it.
            let failure = match at {
                Some(at) => self.failures.remove(at),
                None => Failure { task, recipe: None, log: None, message: None },
            };
            self.failures.push(failure);
            return true;
        }
        self.in_summary = false;
        false
    }

    /// A one-line description of where the build is, for the progress display.
    pub(crate) fn describe(&self) -> String {
        match self.phase {
            None => "checking out layers".to_string(),
            Some(Phase::Parsing) => match (self.recipes, self.parse_percent) {
                (Some(n), _) => format!("parsed {}", crate::text::counted(n, "recipe")),
                (None, Some(p)) => format!("parsing recipes {p}%"),
                (None, None) => "parsing recipes".to_string(),
            },
            Some(Phase::Setscene) => match self.setscene {
                Some((n, m)) => format!("restoring from sstate {n}/{m}"),
                None => "restoring from sstate".to_string(),
            },
            Some(Phase::Tasks) => {
                let current: Vec<&str> = self.active.keys().map(String::as_str).take(3).collect();
                match self.task {
                    Some((n, m)) if current.is_empty() => format!("task {n}/{m}"),
                    Some((n, m)) => format!("task {n}/{m}: {}", current.join(", ")),
                    None => "running tasks".to_string(),
                }
            }
        }
    }

    /// Position and length for a progress bar in the current phase.
    pub(crate) fn position(&self) -> (u64, u64) {
        match self.phase {
            Some(Phase::Parsing) => (u64::from(self.parse_percent.unwrap_or(0)), 100),
            Some(Phase::Setscene) => self.setscene.unwrap_or((0, 0)),
            Some(Phase::Tasks) => self.task.unwrap_or((0, 0)),
            _ => (0, 0),
        }
    }
}

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tests;
