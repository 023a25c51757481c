//! Running one build: write `caches.yml`, run `kas build` with BitBake's output streamed into
//! the tracker, the display and the log file, then collect the result.

use std::path::PathBuf;
use std::time::Instant;

use super::caches::CacheSettings;
use super::display::Display;
use super::error::BuildError;
use super::report::{Artifacts, BuildResult, BuildStatus};
use super::tracker::Tracker;
use crate::error::Exit;
use crate::host::runner::{Cmd, Runner};
use crate::image::kas::command::{self, BuildSpec};
use crate::image::kas::{BuildPaths, CacheDirs, Engine};
use crate::text::ui::Ui;

/// Everything one `kas build` needs, decided before it starts.
#[derive(Debug, Clone)]
pub(crate) struct BuildJob {
    pub machine: String,
    pub image: String,
    pub kas: PathBuf,
    pub layout: BuildPaths,
    pub dirs: CacheDirs,
    pub caches: CacheSettings,
    pub spec: BuildSpec,
    /// Run through kas-container with this engine instead of kas on the host.
    pub container: Option<Engine>,
}

impl BuildJob {
    pub(crate) fn command(&self) -> Cmd {
        let cmd = command::kas_build(&self.kas, &self.layout, &self.dirs, &self.spec);
        command::in_container(cmd, self.container)
    }

    /// Writes `caches.yml` when its bytes differ (an unchanged file keeps its mtime), or says
    /// it would.
    pub(crate) fn write_caches(&self, dry_run: bool) -> Result<bool, BuildError> {
        let text = self.caches.kas_include(&self.machine);
        let path = &self.layout.caches_file;
        if std::fs::read(path).ok().as_deref() == Some(text.as_bytes()) {
            return Ok(false);
        }
        if !dry_run {
            crate::files::write::write_atomic(path, text.as_bytes(), false)?;
        }
        Ok(true)
    }

    /// The artifacts this build is expected to produce (for `--dry-run`).
    pub(crate) fn expected_artifacts(&self) -> Vec<PathBuf> {
        let deploy = self.layout.build_dir.join("tmp/deploy/images").join(&self.machine);
        let stem = format!("{}-{}.rootfs", self.image, self.machine);
        vec![
            deploy.join(format!("{stem}.qcomflash")),
            deploy.join(format!("{stem}.qcomflash.tar.gz")),
        ]
    }
}

/// oe-core sanity.bbclass's warning when SSTATE_DIR is outside the build folder but the hash
/// equivalence database is inside it.
const SHARED_SSTATE_WARNING: &str = "Sstate directory is shared between several builds";

/// Said once per build when BitBake warns anyway (a distro or local setting overrode rtbuild's
/// `BB_HASHSERVE_DB_DIR`).
const SHARED_SSTATE_NOTE: &str = "BitBake's \"Sstate directory is shared between several builds\" \
     warning: rtbuild shares sstate-cache/ between machines on purpose and sets \
     BB_HASHSERVE_DB_DIR ?= \"${SSTATE_DIR}\" so the hash database is shared too; a setting in \
     your distro or local.conf overrides it. Set BB_HASHSERVE_DB_DIR to the sstate folder, or \
     pass --hashserv none or HOST:PORT";

/// Runs the build; a failed or interrupted build is a result, not an error.
pub(crate) fn build(
    job: &BuildJob,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<BuildResult, BuildError> {
    std::fs::create_dir_all(&job.layout.build_dir).map_err(|source| BuildError::Unwritable {
        path: job.layout.build_dir.clone(),
        cause: source,
    })?;
    let cmd = job.command();
    ui.status("Running", &cmd);
    ui.note(format!("full log: {}", crate::text::shown_path(&job.layout.log)));
    let start = Instant::now();
    let mut tracker = Tracker::new();
    let mut display = Display::new(ui, &job.machine);
    let mut recent: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let mut shared_sstate = false;
    let finished = runner.stream(&cmd, Some(&job.layout.log), &mut |line| {
        shared_sstate |= line.contains(SHARED_SSTATE_WARNING);
        if recent.len() == 20 {
            recent.pop_front();
        }
        recent.push_back(line.to_string());
        if let Some(event) = tracker.feed(line) {
            display.show(&tracker, &event);
        }
    });
    display.finish();
    if shared_sstate {
        ui.note(SHARED_SSTATE_NOTE);
    }
    let finished = finished?;
    tracker.finish();
    let status = if finished.interrupted {
        BuildStatus::Interrupted
    } else if finished.success() {
        BuildStatus::Succeeded
    } else {
        BuildStatus::Failed
    };
    let partial = job.spec.partial(&job.image);
    // A partial build makes no image: its deploy folder is not looked into (nor warned about).
    let artifacts = (status == BuildStatus::Succeeded && partial.is_none())
        .then(|| Artifacts::find(&job.layout.deploy_dir(&job.machine), &job.image, &job.machine));
    Ok(BuildResult {
        machine: job.machine.clone(),
        image: job.image.clone(),
        partial,
        status,
        duration_secs: start.elapsed().as_secs_f64(),
        kas_file: job.layout.kas_file.clone(),
        build_dir: job.layout.build_dir.clone(),
        log: job.layout.log.clone(),
        command: cmd.argv(),
        exit: (!finished.success()).then(|| finished.describe()),
        tasks: BuildResult::tasks_from(&tracker),
        sstate: tracker.sstate,
        failures: BuildResult::failures_from(&tracker),
        errors: tracker.errors.clone(),
        warnings: tracker.warnings,
        artifacts,
        output_tail: if status == BuildStatus::Succeeded { Vec::new() } else { recent.into() },
    })
}

/// The line a failed build ends with (a failed build is an outcome, not an error rtbuild
/// returns: it is printed as one).
#[derive(Debug, thiserror::Error)]
#[error("build of {image} for {machine} failed after {took} ({how})")]
struct BuildFailed {
    image: String,
    machine: String,
    took: String,
    how: String,
}

/// Prints a finished build's outcome on stderr (the result itself goes to stdout).
pub(crate) fn report(result: &BuildResult, ui: &Ui) {
    match result.status {
        BuildStatus::Succeeded => {
            let mut lines = result.success_lines().into_iter();
            if let Some(first) = lines.next() {
                ui.status("Built", first);
            }
            for line in lines {
                ui.status("", line);
            }
            if let Some(a) = &result.artifacts {
                match &a.qcomflash {
                    Some(path) => ui.status(
                        "Image",
                        format!("qcomflash folder {}", crate::text::shown_path(path)),
                    ),
                    None => ui.warn(format!(
                        "no {}-{}.rootfs*.qcomflash in {}; is `qcomflash` in IMAGE_FSTYPES?",
                        result.image,
                        result.machine,
                        crate::text::shown_path(&a.deploy_dir)
                    )),
                }
                if let Some(tarball) = &a.qcomflash_tarball {
                    ui.status("", format!("tarball {}", crate::text::shown_path(tarball)));
                }
                ui.status("", format!("deploy folder {}", crate::text::shown_path(&a.deploy_dir)));
            }
            ui.status("Log", crate::text::shown_path(&result.log));
        }
        BuildStatus::Failed => {
            let failed = BuildFailed {
                image: result.image.clone(),
                machine: result.machine.clone(),
                took: crate::text::duration(result.duration_secs),
                how: result.exit.clone().unwrap_or_else(|| "failed".into()),
            };
            ui.error(&failed, Exit::Failed);
            for line in result.failure_lines() {
                ui.status("", line);
            }
            ui.note(format!("full log: {}", crate::text::shown_path(&result.log)));
            ui.note(format!(
                "the build folder {} is kept; look inside with `rtbuild shell --machine {}`",
                crate::text::shown_path(&result.build_dir),
                result.machine
            ));
        }
        BuildStatus::Interrupted => {
            ui.warn(format!("build of {} interrupted; BitBake was stopped", result.machine));
            ui.note(format!("full log: {}", crate::text::shown_path(&result.log)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::runner::Recorder;
    use std::path::Path;

    fn job(dir: &Path) -> BuildJob {
        let out = dir.join("rtbuild/m");
        BuildJob {
            machine: "m".into(),
            image: "img".into(),
            kas: "/v/bin/kas".into(),
            layout: BuildPaths::new(&out, &out.join("m-rt.yml")),
            dirs: CacheDirs { dl_dir: dir.join("dl"), sstate_dir: dir.join("sstate") },
            caches: CacheSettings::default(),
            spec: BuildSpec::default(),
            container: None,
        }
    }

    #[test]
    fn a_recorded_failed_build_is_reported_through_the_runner_seam() {
        let dir = tempfile::tempdir().unwrap();
        let job = job(dir.path());
        let output = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/bitbake-kas-build-linux-qcom-rt-do-compile-failed.txt"
        ));
        let runner = Recorder::new(output, 2);
        let result = build(&job, &runner, &Ui::silent()).unwrap();
        assert_eq!(runner.argvs(), [job.command().argv()]);
        assert_eq!(result.status, BuildStatus::Failed);
        assert_eq!(result.exit.as_deref(), Some("exit code 2"));
        assert_eq!(result.failures[0].failure.task, "linux-qcom-rt_6.18:do_compile");
        assert_eq!(result.tasks.map(|t| t.failed), Some(1));
        assert!(result.artifacts.is_none());
    }

    #[test]
    fn caches_file_is_rewritten_only_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let job = job(dir.path());
        assert!(job.write_caches(true).unwrap(), "a dry run says it would write");
        assert!(!job.layout.caches_file.exists(), "a dry run wrote");
        assert!(job.write_caches(false).unwrap());
        assert!(!job.write_caches(false).unwrap());
    }
}
