//! `rtbuild bundle`: one flashable archive of a build's qcomflash output with a manifest, or
//! `--check` an archive against its manifest.

use std::path::PathBuf;

use clap::Args;

use super::args::{BuildDirs, absolute};
use crate::bundle::{self, BundleError, BundleRequest, VerifySummary};
use crate::exit::{Exit, InputError};
use crate::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct BundleArgs {
    #[command(flatten)]
    pub dirs: BuildDirs,
    /// Image whose qcomflash output to bundle [default: the image in rtbuild-plan.json].
    #[arg(long)]
    pub image: Option<String>,
    /// kas build folder holding tmp/deploy/images/ [default: $KAS_BUILD_DIR, else
    /// <work-dir>/build when a work folder is given, else <dir>/build where `rtbuild image` builds].
    #[arg(long, value_name = "DIR", env = "KAS_BUILD_DIR")]
    pub build_dir: Option<PathBuf>,
    /// Folder for the archive and its manifest [default: <dir>/bundle].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The verify result: the JSON `rtbuild verify --json` printed for this build [default:
    /// <dir>/verify.json, which `rtbuild image` writes after a build].
    #[arg(long, value_name = "FILE")]
    pub verify_report: Option<PathBuf>,
    /// Bundle even without a passing verify result; the manifest and README say so.
    #[arg(long)]
    pub allow_unverified: bool,
    /// Archive mtime and fallback build time, seconds since 1970.
    #[arg(long, value_name = "SECONDS", env = "SOURCE_DATE_EPOCH")]
    pub source_date_epoch: Option<String>,
    /// Pack the target of a symlink in the qcomflash folder that points outside it and outside
    /// the deploy folder (refused by default: a release holds only what the build produced).
    #[arg(long)]
    pub follow_external_links: bool,
    /// Re-read BUNDLE (.tar.zst) and fail on any missing, extra or changed file.
    #[arg(long, value_name = "BUNDLE", conflicts_with_all = ["image", "verify_report", "allow_unverified"])]
    pub check: Option<PathBuf>,
}

pub(super) fn run(args: BundleArgs, ui: &Ui) -> anyhow::Result<Exit> {
    if let Some(archive) = &args.check {
        return check(archive, ui);
    }
    let machine = args.dirs.machine_name()?.ok_or_else(|| {
        InputError::msg(
            "--machine is required to make a bundle; pass --machine NAME (see `rtbuild machines`)",
        )
    })?;
    let kas_file = args.dirs.kas_file()?;
    let gen_dir = kas_file.as_ref().and_then(|k| k.parent().map(PathBuf::from));
    let plan = match kas_file.as_deref() {
        Some(kas_file) => bundle::plan_defaults(kas_file).map_err(input)?,
        None => None,
    };
    let image = match (&args.image, &plan) {
        (Some(image), _) => image.clone(),
        (None, Some(plan)) => plan.image.clone(),
        (None, None) if gen_dir.as_ref().is_some_and(|d| !d.is_dir()) => {
            let dir = gen_dir.as_deref().unwrap_or(std::path::Path::new("."));
            return Err(InputError::msg(format!(
                "nothing is built for {machine} (no {}); run `rtbuild image --machine {machine}` first, or pass --dir DIR where it generated",
                dir.display()
            ))
            .into());
        }
        (None, None) => {
            return Err(InputError::msg(
                "no --image and no rtbuild-plan.json to read it from; pass --image NAME",
            )
            .into());
        }
    };
    let epoch = match &args.source_date_epoch {
        None => None,
        Some(text) => Some(
            text.trim()
                .parse::<i64>()
                .map_err(|_| input(BundleError::SourceDateEpoch { value: text.clone() }))?,
        ),
    };
    // `--verify-report`, else the verdict `rtbuild image` left beside the generated files.
    let verify_report = args.verify_report.clone().or_else(|| {
        let left = gen_dir.as_ref()?.join(crate::kasrun::after::VERIFY_FILE);
        left.is_file().then_some(left)
    });
    let verify = match &verify_report {
        Some(path) => {
            if args.verify_report.is_none() {
                ui.note(format!("using the verify result {}", path.display()));
            }
            Some(VerifySummary::read(path).map_err(input)?)
        }
        None => None,
    };
    let work_dir = args.dirs.work_dir()?;
    let request = BundleRequest {
        machine,
        image,
        build_dir: match &args.build_dir {
            Some(dir) => absolute(dir),
            None => args.dirs.build_dir()?,
        },
        out_dir: args.out.clone().unwrap_or_else(|| {
            gen_dir.clone().unwrap_or_else(|| PathBuf::from(".")).join("bundle")
        }),
        work_dir,
        kas_file,
        verify,
        allow_unverified: args.allow_unverified,
        cmdline: plan.map(|p| p.cmdline),
        source_date_epoch: epoch,
        follow_external_links: args.follow_external_links,
    };
    bundle::verify_record(&request).map_err(input)?;
    bundle::find_qcomflash(&request.build_dir, &request.machine, &request.image).map_err(input)?;
    ui.status("Bundling", format!("{}-{}", request.image, request.machine));
    let outcome = bundle::create(&request).map_err(input)?;
    if outcome.manifest.verify.allowed_unverified {
        ui.warn(format!(
            "bundled with --allow-unverified (verify: {}); the manifest says so",
            outcome.manifest.verify.status
        ));
    }
    if ui.json() {
        ui.out_json(&outcome)?;
    } else {
        ui.out(outcome.archive.display());
        ui.out(outcome.manifest_file.display());
    }
    ui.status(
        "Bundled",
        format!("{} files, {} bytes", outcome.manifest.files.len(), outcome.archive_bytes),
    );
    Ok(Exit::Ok)
}

fn check(archive: &std::path::Path, ui: &Ui) -> anyhow::Result<Exit> {
    let report = bundle::check(archive).map_err(input)?;
    if ui.json() {
        ui.out_json(&report)?;
    } else {
        for p in &report.problems {
            let path = if p.path.is_empty() { String::new() } else { format!("{} ", p.path) };
            ui.out(format!("{:<10} {path}{}", p.kind, p.detail));
        }
    }
    if report.passed {
        ui.status("Checked", format!("{} files match the manifest", report.files));
    } else {
        ui.warn(format!("{} problems in {}", report.problems.len(), archive.display()));
    }
    Ok(Exit::from_pass(report.passed))
}

/// Input problems exit 2; a failed verification or I/O trouble exits 1.
fn input(err: BundleError) -> anyhow::Error {
    if err.is_input() { InputError(err.into()).into() } else { err.into() }
}
