//! `rtbuild doctor`: is this host ready to build? Every check `image`, `matrix` and `shell`
//! run before kas starts, each with its fix. Exit 0 ready, 2 not ready (with one summary line
//! on stderr).

use std::path::PathBuf;

use clap::Args;

use super::args::{CacheEnvArgs, PlanArgs, SearchEnvArgs};
use crate::error::Exit;
use crate::host::runner::System;
use crate::image::doctor::{self, DoctorReport, Facts, Severity, Target};
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Machine and build options, as for `rtbuild image`; with a machine, its repositories are
    /// checked and its output folder decides the work folder.
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Output folder, as for `rtbuild image` [default: rtbuild/<machine>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// kas work folder, as for `rtbuild image` (`KAS_WORK_DIR`) [default: the parent of the
    /// output folder].
    #[arg(long, value_name = "DIR", env = "KAS_WORK_DIR")]
    pub work_dir: Option<PathBuf>,
    /// The kas program to check [default: `kas` on PATH].
    #[arg(long, value_name = "PATH", env = "RTBUILD_KAS")]
    pub kas: Option<PathBuf>,
    /// Check for a build through kas-container with docker or podman instead of on the host.
    #[arg(long, value_name = "ENGINE", num_args = 0..=1, default_missing_value = "auto")]
    pub container: Option<String>,
    #[command(flatten)]
    pub cache_env: CacheEnvArgs,
    #[command(flatten)]
    pub search_env: SearchEnvArgs,
}

pub(super) fn run(args: DoctorArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    if let Some(dir) = &args.plan.meta_qcom {
        return upstream(&args, dir, ui);
    }
    let search_env = args.search_env.env();
    let engine = crate::image::pipeline::container_engine(args.container.as_deref(), &search_env)?;
    let target = target(&args, engine)?;
    let path = search_env.search_path();
    let kas = crate::image::kas::find::find_kas(args.kas.as_deref(), &search_env, &System);
    let facts = Facts::gather(&target, kas, Some(&path), &System);
    let report = doctor::run(&facts, &target, false);
    if ui.json() {
        ui.out_json(&report)?;
    } else {
        for line in lines(&report) {
            ui.out(line);
        }
    }
    if !report.ready {
        ui.warn(failed_summary(&report, ui.json()));
    }
    // Not ready is exit 2, as issue 11 asks and as the preflight of `image`, `matrix` and
    // `shell` stops (docs/build.md), with the JSON and without.
    Ok(if report.ready { Exit::Ok } else { Exit::Usage })
}

/// The line a doctor that found a problem ends with on stderr, as a failed verify does:
/// `3 of 10 checks failed for this host (`problem` rows on stdout)`.
fn failed_summary(report: &DoctorReport, json: bool) -> String {
    let place = if json { "`problems` in the JSON on stdout" } else { "`problem` rows on stdout" };
    super::verify::checks_failed(report.problems.len(), report.checks.len(), "this host", place)
}

/// `doctor --meta-qcom DIR`: what rtbuild relies on against what the checkout has (for the
/// machine given, else every catalog board); the host is not checked. Exit 1 when something
/// rtbuild needs is missing.
fn upstream(args: &DoctorArgs, dir: &std::path::Path, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let catalog = args.plan.catalog()?;
    let meta = crate::catalog::meta_qcom::MetaQcom::open(dir)?;
    let request = args.plan.request()?;
    let machines = match request.machine.as_deref() {
        Some(name) => vec![catalog.lookup(name).map_err(crate::plan::PlanError::from)?.machine],
        None => Vec::new(),
    };
    let report = doctor::upstream::compare(&meta, &catalog, &machines)?;
    if ui.json() {
        ui.out_json(&report)?;
    } else {
        let rows: Vec<[String; 4]> = report
            .rows
            .iter()
            .map(|r| {
                let status = match r.status {
                    doctor::upstream::RowStatus::Ok => "ok",
                    doctor::upstream::RowStatus::Differs => "differs",
                    doctor::upstream::RowStatus::Missing => "missing",
                };
                [status.to_string(), r.item.clone(), r.rtbuild.clone(), r.checkout.clone()]
            })
            .collect();
        let header = ["STATUS", "WHAT", "RTBUILD RELIES ON", "THE CHECKOUT HAS"].map(String::from);
        ui.out(crate::text::table::table(&header, &rows));
        let revision =
            report.revision.as_deref().map_or("an unknown revision", |r| &r[..r.len().min(12)]);
        ui.out(match (report.missing, report.differs) {
            (0, 0) => format!("meta-qcom at {revision} has everything rtbuild relies on"),
            (0, d) => format!("meta-qcom at {revision} has everything rtbuild needs; {d} {} from what rtbuild remembers", differ(d)),
            (m, d) => format!("meta-qcom at {revision} lacks {} rtbuild needs; {d} {}", crate::text::counted(m, "thing"), differ(d)),
        });
    }
    Ok(if report.complete() { Exit::Ok } else { Exit::Failed })
}

/// The verb after a count of things that differ: `1 differs`, `2 differ`.
fn differ(count: usize) -> &'static str {
    if count == 1 { "differs" } else { "differ" }
}

/// The folders and repositories to check: the machine's build when one is given (flag or
/// `rtbuild.yaml`), else the default work folder and meta-qcom's base repositories.
fn target(
    args: &DoctorArgs,
    engine: Option<crate::image::kas::Engine>,
) -> crate::cli::error::Result<Target> {
    let env = args.cache_env.env();
    let request = args.plan.request()?;
    if request.machine.is_some() {
        let plan = args.plan.plan()?;
        let out = args.out.clone().unwrap_or_else(|| crate::layer::generate::default_out(&plan));
        return Ok(doctor::target_for(&plan, &out, args.work_dir.as_deref(), engine, &env));
    }
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("rtbuild/machine"));
    let out = std::path::absolute(&out).unwrap_or(out);
    let work = match &args.work_dir {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
        None => out.parent().map(PathBuf::from).unwrap_or(out.clone()),
    };
    let dirs = crate::image::kas::CacheDirs::resolve(
        None,
        None,
        env.dl_dir.clone(),
        env.sstate_dir.clone(),
        &work,
    );
    let url = request.meta_qcom_url.unwrap_or_else(|| crate::plan::META_QCOM_URL.to_string());
    Ok(Target {
        urls: doctor::repos::urls(&url, &work, &["ci/base.yml"]),
        work,
        dl_dir: dirs.dl_dir,
        sstate_dir: dirs.sstate_dir,
        container: engine,
        kas_premirrors: env.kas_premirrors,
    })
}

/// One line per check (`ok`, `warning`, `problem`), the fix under each that has one, then the
/// verdict.
fn lines(report: &DoctorReport) -> Vec<String> {
    let mut lines = Vec::new();
    for check in &report.checks {
        let status = match check.status {
            Severity::Ok => "ok",
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        };
        lines.push(format!("{status:<8} {:<10} {}", check.check, check.message));
        if check.status != Severity::Ok
            && let Some(fix) = &check.fix
        {
            lines.push(format!("{:<8} {:<10} fix: {fix}", "", ""));
        }
    }
    lines.push(match report.problems.len() {
        0 => "ready to build".to_string(),
        n => format!("not ready: {}", crate::text::counted(n, "problem")),
    });
    lines
}
