//! The outcome of a build, for people and for `--json`: on success the duration, task counts,
//! sstate reuse and where the image and qcomflash folder are; on failure the failed tasks, their
//! recipes and the tail of the task log BitBake pointed to.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::events::SstateSummary;
use super::tracker::{Failure, Tracker};
use crate::files::limits::TASK_LOG_TAIL;
use crate::text::duration;

/// How many lines of a failed task's log to show.
pub(crate) const TAIL_LINES: usize = 25;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum BuildStatus {
    Succeeded,
    Failed,
    Interrupted,
}

/// Task counts from BitBake's `Tasks Summary`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Tasks {
    pub attempted: u64,
    /// Tasks that did not need to run again.
    pub reused: u64,
    pub failed: u64,
}

/// Where the image landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub(crate) struct Artifacts {
    pub deploy_dir: PathBuf,
    /// `<image>-<machine>.rootfs.qcomflash` (the symlink meta-qcom makes, else the newest
    /// `<image>-<machine>.rootfs-<stamp>.qcomflash` folder).
    pub qcomflash: Option<PathBuf>,
    /// The `.qcomflash.tar.gz` beside it, when there is one.
    pub qcomflash_tarball: Option<PathBuf>,
}

impl Artifacts {
    pub(crate) fn find(deploy_dir: &Path, image: &str, machine: &str) -> Artifacts {
        let stem = format!("{image}-{machine}.rootfs");
        let link = deploy_dir.join(format!("{stem}.qcomflash"));
        let qcomflash = if link.is_dir() {
            Some(link)
        } else {
            newest(deploy_dir, &format!("{stem}-"), ".qcomflash", true)
        };
        let tarball = deploy_dir.join(format!("{stem}.qcomflash.tar.gz"));
        let qcomflash_tarball = if tarball.is_file() {
            Some(tarball)
        } else {
            newest(deploy_dir, &format!("{stem}-"), ".qcomflash.tar.gz", false)
        };
        Artifacts { deploy_dir: deploy_dir.to_path_buf(), qcomflash, qcomflash_tarball }
    }
}

/// The last (by name, which sorts by BitBake's timestamp) entry with `prefix`…`suffix`.
fn newest(dir: &Path, prefix: &str, suffix: &str, want_dir: bool) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .map(|e| e.path())
        .filter(|p| p.is_dir() == want_dir)
        .collect();
    found.sort();
    found.pop()
}

/// One failed task with the end of its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FailedTask {
    #[serde(flatten)]
    pub failure: Failure,
    /// The last lines of the task log (empty when it could not be read).
    pub log_tail: Vec<String>,
}

/// Everything `rtbuild image` reports about one build.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct BuildResult {
    pub machine: String,
    pub image: String,
    /// What a partial build (`--target`, `--task`, `--bitbake-args`) built, e.g.
    /// `linux-qcom-rt, task listtasks`; absent for the whole image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    pub status: BuildStatus,
    pub duration_secs: f64,
    pub kas_file: PathBuf,
    pub build_dir: PathBuf,
    pub log: PathBuf,
    pub command: Vec<String>,
    /// kas's exit status when it failed (`exit code 2`).
    pub exit: Option<String>,
    pub tasks: Option<Tasks>,
    pub sstate: Option<SstateSummary>,
    pub failures: Vec<FailedTask>,
    /// `ERROR:` lines that are not about a task.
    pub errors: Vec<String>,
    pub warnings: usize,
    pub artifacts: Option<Artifacts>,
    /// The last lines of the output, when no task failure explains a failed build.
    pub output_tail: Vec<String>,
}

impl BuildResult {
    pub(crate) fn failures_from(tracker: &Tracker) -> Vec<FailedTask> {
        tracker
            .failures
            .iter()
            .map(|f| FailedTask {
                failure: f.clone(),
                log_tail: f
                    .log
                    .as_deref()
                    .map(|p| tail(Path::new(p), TAIL_LINES))
                    .unwrap_or_default(),
            })
            .collect()
    }

    pub(crate) fn tasks_from(tracker: &Tracker) -> Option<Tasks> {
        tracker.summary.map(|(attempted, reused, failed)| Tasks { attempted, reused, failed })
    }

    /// The human summary of a successful build, one line each.
    pub(crate) fn success_lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{} for {} in {}",
            self.partial.as_deref().unwrap_or(&self.image),
            self.machine,
            duration(self.duration_secs)
        )];
        if let Some(t) = self.tasks {
            lines.push(format!(
                "{} attempted, {} reused without running",
                crate::text::counted(t.attempted, "task"),
                t.reused
            ));
        }
        if let Some(s) = self.sstate {
            lines.push(format!(
                "sstate: {}% match ({} wanted, {} local, {} from mirrors, {} missed)",
                s.match_percent, s.wanted, s.local, s.mirrors, s.missed
            ));
        }
        lines
    }

    /// The human report of a failed build: each failed task, its log's tail, other errors.
    pub(crate) fn failure_lines(&self) -> Vec<String> {
        let rule = "-".repeat(60);
        let mut lines = Vec::new();
        for failed in &self.failures {
            let f = &failed.failure;
            let recipe = f.recipe.as_deref().map(|r| format!(" (recipe {r})")).unwrap_or_default();
            let message = f.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
            lines.push(format!("task {} failed{recipe}{message}", f.task));
            if let Some(log) = &f.log {
                lines.push(format!("task log: {log}"));
            }
            if !failed.log_tail.is_empty() {
                lines.push(rule.clone());
                lines.extend(failed.log_tail.iter().cloned());
                lines.push(rule.clone());
            }
        }
        for error in &self.errors {
            lines.push(format!("bitbake: {error}"));
        }
        if self.failures.is_empty() && self.errors.is_empty() && !self.output_tail.is_empty() {
            lines.push(format!(
                "last lines of output ({}):",
                self.exit.as_deref().unwrap_or("failed")
            ));
            lines.push(rule.clone());
            lines.extend(self.output_tail.iter().cloned());
            lines.push(rule);
        }
        lines
    }
}

/// The last `n` lines of a file (lossy UTF-8), or nothing when it cannot be read. Only the
/// file's last [`TASK_LOG_TAIL`] bytes are read, through the one bounded opener (a FIFO or a
/// device in its place is not read).
pub(crate) fn tail(path: &Path, n: usize) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok((mut file, len)) = crate::files::input::open(path) else { return Vec::new() };
    let start = len.saturating_sub(TASK_LOG_TAIL);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(TASK_LOG_TAIL).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        // The first line read is the end of a line cut by the seek.
        lines.remove(0);
    }
    lines[lines.len().saturating_sub(n)..].iter().map(|l| l.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qcomflash_symlink_and_tarball_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("img-m.rootfs-20261129211402.qcomflash")).unwrap();
        std::os::unix::fs::symlink(
            "img-m.rootfs-20261129211402.qcomflash",
            d.join("img-m.rootfs.qcomflash"),
        )
        .unwrap();
        crate::files::write::fixture(d.join("img-m.rootfs-20261129211402.qcomflash.tar.gz"), b"")
            .unwrap();
        let found = Artifacts::find(d, "img", "m");
        assert_eq!(found.qcomflash, Some(d.join("img-m.rootfs.qcomflash")));
        assert_eq!(
            found.qcomflash_tarball,
            Some(d.join("img-m.rootfs-20261129211402.qcomflash.tar.gz"))
        );
        let none = Artifacts::find(d, "other", "m");
        assert_eq!((none.qcomflash, none.qcomflash_tarball), (None, None));
    }

    #[test]
    fn a_long_task_log_is_read_only_at_its_end_and_a_fifo_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log.do_compile");
        // Two MiB of filler, then the three lines the failure must show.
        let mut text = "x".repeat(2 << 20);
        text.push_str("\nfirst\nsecond\nthird\n");
        crate::files::write::fixture(&log, text.as_bytes()).unwrap();
        assert_eq!(tail(&log, 3), ["first", "second", "third"]);
        assert_eq!(tail(&log, 1), ["third"]);
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(tail(&fifo, 3).is_empty(), "a FIFO is not read (and does not block)");
    }

    #[test]
    fn failure_report_names_task_recipe_and_log_tail() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log.do_compile.1234");
        crate::files::write::fixture(
            &log,
            "make: *** [Makefile:2] Error 1\n| error: 'x' undeclared\n",
        )
        .unwrap();
        let mut tracker = Tracker::new();
        for line in [
            "ERROR: linux-qcom-rt-6.18.37-r0 do_compile: oe_runmake failed".to_string(),
            format!("ERROR: Logfile of failure stored in: {}", log.display()),
            "ERROR: Task (/l/linux-qcom-rt_6.18.bb:do_compile) failed with exit code '1'"
                .to_string(),
        ] {
            tracker.feed(&line);
        }
        tracker.finish();
        let failures = BuildResult::failures_from(&tracker);
        assert_eq!(
            failures[0].log_tail,
            ["make: *** [Makefile:2] Error 1", "| error: 'x' undeclared"]
        );
        let result = BuildResult {
            machine: "m".into(),
            image: "img".into(),
            partial: None,
            status: BuildStatus::Failed,
            duration_secs: 1.0,
            kas_file: "k.yml".into(),
            build_dir: "b".into(),
            log: "l".into(),
            command: vec![],
            exit: Some("exit code 2".into()),
            tasks: None,
            sstate: None,
            failures,
            errors: vec![],
            warnings: 0,
            artifacts: None,
            output_tail: vec![],
        };
        let lines = result.failure_lines();
        assert_eq!(
            lines[0],
            "task linux-qcom-rt_6.18:do_compile failed (recipe linux-qcom-rt-6.18.37-r0): oe_runmake failed"
        );
        assert_eq!(lines[1], format!("task log: {}", log.display()));
        assert_eq!(lines[3], "make: *** [Makefile:2] Error 1");
    }
}
