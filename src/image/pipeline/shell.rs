//! `kas shell` on the configuration the image pipeline prepares, to look inside the build
//! folder, rerun a task or read `bitbake -e`.
//!
//! `command` is handed to `kas shell -c` as one argument. kas runs it with the user's own shell
//! on the user's machine, exactly as if they had typed it there: it is a shell command by
//! design, the only place rtbuild hands text to a shell, and rtbuild adds nothing to it.

use super::{ImageError, ImageOptions, Prepared, prepared};
use crate::catalog::Catalog;
use crate::error::Interrupted;
use crate::host::runner::{Cmd, Runner};
use crate::image::kas::command;
use crate::image::kasrun::BuildError;
use crate::plan::PlanRequest;
use crate::text::ui::Ui;

/// How `kas shell` ended.
#[derive(Debug)]
pub(crate) enum ShellOutcome {
    /// A dry run: the command that would run.
    Planned(Cmd),
    /// The shell (or the command) ran; true when it exited 0.
    Ran { success: bool },
}

/// Prepares the build as `rtbuild image` does ([`prepared`]: meta-qcom resolved the same way,
/// so the files it generates are the ones `image` generated), then runs `kas shell` (with `-c
/// command`) on the user's terminal.
pub(crate) fn shell(
    request: &PlanRequest,
    catalog: &Catalog,
    options: &ImageOptions,
    command: Option<&str>,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<ShellOutcome, ImageError> {
    let Prepared { job, .. } = prepared(request, catalog, options, runner, ui)?;
    let cmd = command::in_container(
        command::kas_shell(&job.kas, &job.layout, &job.dirs, command),
        job.container,
    );
    if options.output.dry_run() {
        return Ok(ShellOutcome::Planned(cmd));
    }
    ui.status("Running", &cmd);
    let finished = runner.interactive(&cmd).map_err(BuildError::from)?;
    if finished.interrupted && !finished.success() {
        return Err(Interrupted.into());
    }
    Ok(ShellOutcome::Ran { success: finished.success() })
}
