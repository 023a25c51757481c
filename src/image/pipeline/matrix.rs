//! `rtbuild matrix`: the image pipeline for several requests (machines × distros) one after
//! another in one work folder, sharing the cloned layers, `downloads/` and `sstate-cache/`;
//! meta-qcom resolved once for that folder (as `image` resolves it for its own) and every
//! cell's plan composed from it before the first build; past a failed cell unless `fail_fast`;
//! a per-cell table at the end.

use std::path::PathBuf;

use serde::Serialize;

use super::meta_qcom::{self, Resolved};
use super::prepare::prepare_in;
use super::{
    BuildSetup, ImageError, ImageOptions, MetaQcomSource, OutputOptions, Post, after_build, prepare,
};
use crate::catalog::Catalog;
use crate::files::write::WriteOptions;
use crate::host::runner::Runner;
use crate::image::kasrun::report::{BuildResult, BuildStatus};
use crate::image::kasrun::run;
use crate::plan::{Plan, PlanError, PlanRequest, Settings};
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
    /// Where every cell's plan reads meta-qcom from: `--meta-qcom DIR`, else kas's checkout in
    /// the shared work folder (made, or read as it is when warm, once for all cells).
    pub meta_qcom: MetaQcomSource,
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

/// Builds each cell's request in turn. meta-qcom is resolved once, for the shared work folder
/// (the folders and the host are checked before its checkout, as `image` does), and every
/// cell's plan is composed from it before the first cell is generated, so a cell the checkout
/// cannot build stops the matrix before anything runs. In a dry run (no checkout) the cells
/// are composed from the catalog, as `image --dry-run` is, and each cell's command is printed
/// as it is planned.
pub(crate) fn matrix(
    requests: &[PlanRequest],
    catalog: &Catalog,
    options: &MatrixOptions,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<Vec<Cell>, ImageError> {
    let Some(first) = requests.first() else { return Ok(Vec::new()) };
    let settings: Vec<Settings> = requests.iter().map(Settings::new).collect::<Result<_, _>>()?;
    let several_distros = settings.iter().any(|s| s.distro != settings[0].distro);
    let outputs: Vec<OutputOptions> = requests
        .iter()
        .zip(&settings)
        .map(|(request, settings)| {
            let machine = request.machine.as_deref().unwrap_or_default();
            let name = if several_distros {
                format!("{machine}-{}", settings.distro)
            } else {
                machine.to_string()
            };
            OutputOptions {
                out: Some(options.work.join(name)),
                work_dir: options.work_dir.clone(),
                write: WriteOptions { force: false, dry_run: options.dry_run },
            }
        })
        .collect();
    // meta-qcom, once: every cell's output folder is in the one work folder, where kas checks
    // meta-qcom out (or in --work-dir, which every cell shares too).
    let first_options = ImageOptions {
        output: outputs[0].clone(),
        setup: options.setup.clone(),
        post: options.post,
        lock: None,
        meta_qcom: options.meta_qcom.clone(),
    };
    let name = first.machine.as_deref().ok_or(PlanError::NoMachine)?;
    let mut resolved =
        meta_qcom::resolve(catalog.lookup(name), &settings[0], &first_options, runner, ui)?;
    let mut first_site = resolved.site.take();
    let mut first_composed = resolved.composed.take();
    // Every cell's plan, made before the first build.
    let mut plans: Vec<Plan> = Vec::new();
    for (request, settings) in requests.iter().zip(settings) {
        let name = request.machine.as_deref().ok_or(PlanError::NoMachine)?;
        let cell = Resolved {
            known: catalog.lookup(name),
            meta_qcom: resolved.meta_qcom.clone(),
            checked_out: resolved.checked_out,
            kas_secs: 0.0,
            site: None,
            composed: if plans.is_empty() { first_composed.take() } else { None },
        };
        plans.push(super::plan(request, settings, cell, ui)?);
    }
    let mut cells = Vec::new();
    let mut stop = false;
    for (plan, output) in plans.iter().zip(&outputs) {
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
        ui.status("Cell", format!("{} / {}", cell.machine, cell.distro));
        // The first cell's folders and the host were checked before the checkout.
        let job = match first_site.take() {
            Some(site) => prepare_in(plan, site, output, &options.setup, ui)?,
            None => prepare(plan, output, &options.setup, ui)?,
        };
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
