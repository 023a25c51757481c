//! `rtbuild matrix`: the image pipeline for several plans (machines × distros) one after
//! another in one work folder, sharing the cloned layers, `downloads/` and `sstate-cache/`;
//! past a failed cell unless `fail_fast`; a per-cell table at the end.

use std::path::PathBuf;

use serde::Serialize;

use super::{BuildSetup, ImageError, OutputOptions, Post, after_build, prepare};
use crate::files::write::WriteOptions;
use crate::host::runner::Runner;
use crate::image::kasrun::report::{BuildResult, BuildStatus};
use crate::image::kasrun::run;
use crate::plan::Plan;
use crate::text::ui::Ui;

/// How the matrix runs.
#[derive(Debug, Clone)]
pub(crate) struct MatrixOptions {
    /// Work folder shared by every cell (each cell gets `<work>/<machine>/`, or
    /// `<work>/<machine>-<distro>/` when the cells have several distros).
    pub work: PathBuf,
    /// kas's work folder of every cell (`KAS_WORK_DIR`; the build folder is its `build/`)
    /// [default: `work`, each cell building in its own output folder].
    pub work_dir: Option<PathBuf>,
    /// Stop at the first failed cell.
    pub fail_fast: bool,
    /// Plan each cell and print its command; build nothing.
    pub dry_run: bool,
    pub setup: BuildSetup,
    pub post: Post,
}

/// One cell of the matrix and how it went.
#[derive(Debug, Serialize)]
pub(crate) struct Cell {
    pub machine: String,
    pub distro: String,
    /// `succeeded`, `failed`, `unverified` (built, but verification failed), `interrupted`,
    /// `planned` (dry run), or `skipped` after `--fail-fast` (see [`skipped_line`]).
    pub status: String,
    pub result: Option<BuildResult>,
    /// The verdict of `verify`, when it ran.
    pub verified: Option<bool>,
    /// The bundle archive, with `--bundle`.
    pub bundle: Option<PathBuf>,
}

/// Builds each plan in turn (the preflight runs once, for the shared work folder, before the
/// first cell is generated). In a dry run each cell's command is printed as it is planned.
pub(crate) fn matrix(
    plans: &[Plan],
    options: &MatrixOptions,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<Vec<Cell>, ImageError> {
    let several_distros = plans.iter().any(|p| p.settings.distro != plans[0].settings.distro);
    let mut cells = Vec::new();
    let mut stop = false;
    for plan in plans {
        let mut cell = Cell {
            machine: plan.machine.name.clone(),
            distro: plan.settings.distro.to_string(),
            status: "skipped".into(),
            result: None,
            verified: None,
            bundle: None,
        };
        if stop {
            cells.push(cell);
            continue;
        }
        let name = if several_distros {
            format!("{}-{}", plan.machine.name, plan.settings.distro)
        } else {
            plan.machine.name.clone()
        };
        let output = OutputOptions {
            out: Some(options.work.join(&name)),
            work_dir: options.work_dir.clone(),
            write: WriteOptions { force: false, dry_run: options.dry_run },
        };
        ui.status("Cell", format!("{} / {}", cell.machine, cell.distro));
        let job = prepare(plan, &output, &options.setup, ui)?;
        if options.dry_run {
            ui.out(format!("{} {}", cell.machine, job.command()));
            cell.status = "planned".into();
            cells.push(cell);
            continue;
        }
        let result = run::build(&job, runner, ui)?;
        run::report(&result, ui);
        let after = after_build(&result, &job, &plan.expectations(), options.post, runner, ui)?;
        cell.status = status_name(result.status).into();
        if !after.passed {
            cell.status = "unverified".into();
        }
        cell.verified = after.verified.as_ref().map(|v| v.verdict.passed);
        cell.bundle = after.bundle.map(|b| b.archive);
        stop = result.status == BuildStatus::Interrupted
            || (options.fail_fast && cell.status != "succeeded");
        cell.result = Some(result);
        cells.push(cell);
    }
    Ok(cells)
}

/// The one line that says which cells were skipped and why (the cell that stopped the matrix:
/// failed or unverified under `--fail-fast`, or interrupted), or `None` when none was:
/// `skipped 1 cell after rb3gen2-core-kit / qcom-distro failed (--fail-fast): iq-9075-evk /
/// qcom-distro`.
pub(crate) fn skipped_line(cells: &[Cell]) -> Option<String> {
    let name = |c: &Cell| format!("{} / {}", c.machine, c.distro);
    let skipped: Vec<String> = cells.iter().filter(|c| c.status == "skipped").map(name).collect();
    if skipped.is_empty() {
        return None;
    }
    let why = match cells.iter().rev().find(|c| c.status != "skipped") {
        Some(c) if c.status == "interrupted" => format!("after {} was interrupted", name(c)),
        Some(c) if c.status == "unverified" => {
            format!("after {} failed verification (--fail-fast)", name(c))
        }
        Some(c) => format!("after {} failed (--fail-fast)", name(c)),
        None => "(--fail-fast)".to_string(),
    };
    Some(format!(
        "skipped {} {why}: {}",
        crate::text::counted(skipped.len(), "cell"),
        skipped.join(", ")
    ))
}

fn status_name(status: BuildStatus) -> &'static str {
    match status {
        BuildStatus::Succeeded => "succeeded",
        BuildStatus::Failed => "failed",
        BuildStatus::Interrupted => "interrupted",
    }
}

/// The per-cell table: machine, distro, status, time, sstate match, qcomflash or failed task.
pub(crate) fn table(cells: &[Cell]) -> Vec<String> {
    let rows: Vec<[String; 6]> = cells
        .iter()
        .map(|c| {
            let r = c.result.as_ref();
            let time =
                r.map(|r| crate::text::duration(r.duration_secs)).unwrap_or_else(|| "-".into());
            let sstate = r
                .and_then(|r| r.sstate)
                .map(|s| format!("{}%", s.match_percent))
                .unwrap_or_else(|| "-".into());
            let detail = r
                .map(|r| match r.status {
                    BuildStatus::Succeeded => r
                        .artifacts
                        .as_ref()
                        .and_then(|a| a.qcomflash.as_ref())
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| "no qcomflash".into()),
                    _ => r
                        .failures
                        .first()
                        .map(|f| f.failure.task.clone())
                        .or_else(|| r.exit.clone())
                        .unwrap_or_default(),
                })
                .unwrap_or_default();
            [c.machine.clone(), c.distro.clone(), c.status.clone(), time, sstate, detail]
        })
        .collect();
    let header = ["MACHINE", "DISTRO", "STATUS", "TIME", "SSTATE", "RESULT"].map(String::from);
    crate::text::table::table(&header, &rows).lines().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(machine: &str, status: &str) -> Cell {
        Cell {
            machine: machine.to_string(),
            distro: "qcom-distro".to_string(),
            status: status.to_string(),
            result: None,
            verified: None,
            bundle: None,
        }
    }

    #[test]
    fn the_skipped_cells_are_named_with_the_cell_that_stopped_the_matrix() {
        let failed = [cell("rb3gen2-core-kit", "failed"), cell("iq-9075-evk", "skipped")];
        assert_eq!(
            skipped_line(&failed).unwrap(),
            "skipped 1 cell after rb3gen2-core-kit / qcom-distro failed (--fail-fast): iq-9075-evk / qcom-distro"
        );
        let unverified = [
            cell("rb3gen2-core-kit", "succeeded"),
            cell("iq-9075-evk", "unverified"),
            cell("qcs9100-ride-sx", "skipped"),
            cell("iq-8275-evk", "skipped"),
        ];
        assert_eq!(
            skipped_line(&unverified).unwrap(),
            "skipped 2 cells after iq-9075-evk / qcom-distro failed verification (--fail-fast): qcs9100-ride-sx / qcom-distro, iq-8275-evk / qcom-distro"
        );
        let interrupted = [cell("rb3gen2-core-kit", "interrupted"), cell("iq-9075-evk", "skipped")];
        assert_eq!(
            skipped_line(&interrupted).unwrap(),
            "skipped 1 cell after rb3gen2-core-kit / qcom-distro was interrupted: iq-9075-evk / qcom-distro"
        );
        assert_eq!(skipped_line(&[cell("rb3gen2-core-kit", "failed")]), None);
    }
}
