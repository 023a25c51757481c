//! `rtbuild bundle`: one flashable archive of a build's qcomflash output with a manifest, or
//! `--check` an archive against its manifest.

use std::path::PathBuf;

use clap::Args;

use super::args::{BuildDirs, absolute};
use crate::cli::error::Refusal;
use crate::error::Exit;
use crate::release::bundle::{self, BundleError, BundleRequest, VerifySummary};
use crate::text::ui::Ui;

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
    /// The resolved kas configuration of the build (`kas dump --resolve-refs --resolve-local
    /// --resolve-env`) [default: <dir>/kas-dump.yml, which `rtbuild image --bundle` writes].
    #[arg(long, value_name = "FILE")]
    pub kas_dump: Option<PathBuf>,
    /// An `rtbuild test` result folder of this image: its run.json (and report) go into the
    /// bundle, after checking that the run measured this kernel.
    #[arg(long, value_name = "RUN_DIR")]
    pub measurement: Option<PathBuf>,
    /// Pack the target of a symlink in the qcomflash folder that points outside it and outside
    /// the deploy folder (refused by default: a release holds only what the build produced).
    #[arg(long)]
    pub follow_external_links: bool,
    /// Write the archive as .tar.gz instead of .tar.zst: the flavour LAVA's qdl deploy unpacks
    /// (it gunzips whatever it downloads). Slower and larger; the manifest and --check are the same.
    #[arg(long)]
    pub gzip: bool,
    /// Sign the release provenance: an in-toto statement over the archive, its SBOM and VEX, in
    /// a DSSE envelope (`<archive stem>.intoto.json` beside it) signed with this ed25519 private
    /// key (PKCS#8 PEM, `openssl genpkey -algorithm ed25519`); the manifest names the public key,
    /// and `<archive stem>.pub.pem` beside the archive holds it.
    #[arg(long, value_name = "FILE")]
    pub signing_key: Option<PathBuf>,
    /// Check BUNDLE as --check does, and its signed provenance with --key: the signature and
    /// every subject's sha256.
    #[arg(long, value_name = "BUNDLE", requires = "key", conflicts_with_all = ["check", "image", "verify_report", "allow_unverified", "kas_dump", "measurement", "signing_key"])]
    pub verify: Option<PathBuf>,
    /// The signer's ed25519 public key (PEM, `openssl pkey -in KEY -pubout`) for --verify.
    #[arg(long, value_name = "PUB", requires = "verify")]
    pub key: Option<PathBuf>,
    /// Re-read BUNDLE (.tar.zst or .tar.gz) and fail on any missing, extra or changed file.
    #[arg(long, value_name = "BUNDLE", conflicts_with_all = ["image", "verify_report", "allow_unverified", "kas_dump", "measurement"])]
    pub check: Option<PathBuf>,
    /// Compare two bundles (OLD NEW): repos and commits, kernel config options, packages,
    /// CVEs fixed and new, boot arguments, and per-scenario latency when both carry a
    /// measurement.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with_all = ["check", "image", "verify_report", "allow_unverified", "kas_dump", "measurement"])]
    pub diff: Vec<PathBuf>,
}

pub(super) fn run(args: BundleArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    if let Some(archive) = &args.check {
        return check(archive, ui);
    }
    if let (Some(archive), Some(key)) = (&args.verify, &args.key) {
        return verify(archive, key, ui);
    }
    if let [old, new] = args.diff.as_slice() {
        return diff(old, new, ui);
    }
    // Before the build is looked at: a device, FIFO or file is no output folder.
    if let Some(out) = &args.out {
        crate::files::output::check_folder("--out", out).map_err(Refusal::Output)?;
    }
    let machine = args.dirs.machine_name()?.ok_or(Refusal::BundleNeedsMachine)?;
    let kas_file = args.dirs.kas_file()?;
    let gen_dir = kas_file.as_ref().and_then(|k| k.parent().map(PathBuf::from));
    let plan = match kas_file.as_deref() {
        Some(kas_file) => bundle::plan_defaults(kas_file)?,
        None => None,
    };
    let image = match (&args.image, &plan) {
        (Some(image), _) => image.clone(),
        (None, Some(plan)) => plan.image.clone(),
        (None, None) if gen_dir.as_ref().is_some_and(|d| !d.is_dir()) => {
            let dir = gen_dir.clone().unwrap_or_else(|| PathBuf::from("."));
            return Err(Refusal::NothingBuilt { machine, dir }.into());
        }
        (None, None) => {
            return Err(Refusal::NoImage.into());
        }
    };
    let epoch = match &args.source_date_epoch {
        None => None,
        Some(text) => Some(
            text.trim()
                .parse::<i64>()
                .map_err(|_| BundleError::SourceDateEpoch { value: text.clone() })?,
        ),
    };
    // `--verify-report`, else the verdict `rtbuild image` left beside the generated files.
    let verify_report = args.verify_report.clone().or_else(|| {
        let left = gen_dir.as_ref()?.join(crate::image::pipeline::verify_bundle::VERIFY_FILE);
        left.is_file().then_some(left)
    });
    let verify = match &verify_report {
        Some(path) => {
            if args.verify_report.is_none() {
                ui.note(format!("using the verify result {}", crate::text::shown_path(path)));
            }
            Some(VerifySummary::read(path)?)
        }
        None => None,
    };
    let work_dir = args.dirs.work_dir()?;
    let mut request = BundleRequest {
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
        verify_file: verify_report.clone(),
        kas_dump: args.kas_dump.clone().map(|p| absolute(&p)).or_else(|| {
            let left = gen_dir.as_ref()?.join(bundle::KAS_DUMP_FILE);
            left.is_file().then_some(left)
        }),
        measurement: None,
        follow_external_links: args.follow_external_links,
        gzip: args.gzip,
        signing_key: args.signing_key.clone(),
    };
    bundle::verify_record(&request)?;
    request.measurement =
        args.measurement.as_deref().map(|p| bundle::read_measurement(&absolute(p))).transpose()?;
    for warning in bundle::check_measurement(&request)? {
        ui.warn(warning);
    }
    bundle::find_qcomflash(&request.build_dir, &request.machine, &request.image)?;
    ui.status("Bundling", format!("{}-{}", request.image, request.machine));
    let outcome = bundle::create(&request)?;
    if outcome.manifest.verify.allowed_unverified {
        ui.warn(format!(
            "bundled with --allow-unverified (verify: {}); the manifest says so",
            outcome.manifest.verify.status
        ));
    }
    if ui.json() {
        ui.out_json(&outcome)?;
    } else {
        ui.out(crate::text::shown_path(&outcome.archive));
        ui.out(crate::text::shown_path(&outcome.manifest_file));
        if let Some(envelope) = &outcome.envelope {
            ui.out(crate::text::shown_path(envelope));
        }
        if let Some(public_key) = &outcome.public_key {
            ui.out(crate::text::shown_path(public_key));
        }
    }
    ui.status(
        "Bundled",
        // The count is the manifest's, as `--check` says it: the files it lists, beside the
        // manifest and SHA256SUMS themselves.
        format!(
            "{} with the manifest and SHA256SUMS, {} bytes",
            crate::text::counted(outcome.manifest.files.len(), "file"),
            outcome.archive_bytes
        ),
    );
    Ok(Exit::Ok)
}

/// How much of one problem's detail `bundle --check`/`--verify` print.
const DETAIL_CHARS: usize = 1000;

fn check(archive: &std::path::Path, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let report = bundle::check(archive)?;
    if ui.json() {
        ui.out_json(&report)?;
    } else {
        for p in &report.problems {
            // Member names and details come from the archive: escaped and cut, so a member
            // named with escape sequences or 100 KB long prints as one bounded line.
            let path = if p.path.is_empty() {
                String::new()
            } else {
                format!("{} ", crate::text::shown(&p.path))
            };
            ui.out(format!(
                "{:<10} {path}{}",
                p.kind,
                crate::text::shown_at(&p.detail, DETAIL_CHARS)
            ));
        }
    }
    if let Some(counts) = &report.unpatched_cves
        && !ui.json()
    {
        let total: usize = counts.values().sum();
        let by: Vec<String> = ["critical", "high", "medium", "low", "none", "unknown"]
            .iter()
            .filter_map(|s| counts.get(*s).map(|n| format!("{s} {n}")))
            .collect();
        let by = if by.is_empty() { String::new() } else { format!(" ({})", by.join(", ")) };
        ui.out(format!("unpatched CVEs: {total}{by}"));
    }
    if report.passed {
        let files = crate::text::counted(report.listed, "file");
        ui.status("Checked", format!("{files} against the manifest and SHA256SUMS"));
    } else {
        ui.warn(format!(
            "{} in {}",
            crate::text::counted(report.problems.len(), "problem"),
            crate::text::shown_path(archive)
        ));
    }
    Ok(Exit::from_pass(report.passed))
}

fn verify(
    archive: &std::path::Path,
    key: &std::path::Path,
    ui: &Ui,
) -> crate::cli::error::Result<Exit> {
    let report = bundle::verify_signed(archive, key)?;
    if ui.json() {
        ui.out_json(&report)?;
    } else {
        for problem in &report.problems {
            ui.out(crate::text::shown_at(problem, DETAIL_CHARS));
        }
    }
    if report.passed {
        ui.status(
            "Verified",
            format!(
                "the signature of {} and {}",
                crate::text::shown_path(&report.envelope),
                crate::text::counted(report.subjects.len(), "subject")
            ),
        );
    } else {
        ui.warn(format!(
            "{} in {}",
            crate::text::counted(report.problems.len(), "problem"),
            crate::text::shown_path(archive)
        ));
    }
    Ok(Exit::from_pass(report.passed))
}

fn diff(old: &std::path::Path, new: &std::path::Path, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let diff = bundle::diff(old, new)?;
    if ui.json() {
        ui.out_json(&diff)?;
        return Ok(Exit::Ok);
    }
    // Every name and value comes from the archives: escaped and cut.
    let value = |v: &Option<String>| v.as_deref().map_or_else(|| "-".into(), crate::text::shown);
    let name = |c: &crate::formats::bundle_diff_json::Change| crate::text::shown(&c.name);
    let list =
        |ids: &[String]| ids.iter().map(|i| crate::text::shown(i)).collect::<Vec<_>>().join(", ");
    // Boot arguments are their own values: only the name is shown.
    let section = |title: &str, changes: &[crate::formats::bundle_diff_json::Change]| {
        ui.out(
            format!("{title}: {}", if changes.is_empty() { "no change" } else { "" }).trim_end(),
        );
        let named = title != "boot arguments";
        for c in changes {
            let line = match (&c.old, &c.new, named) {
                (None, _, false) => format!("  + {}", name(c)),
                (_, None, false) => format!("  - {}", name(c)),
                (None, _, true) => format!("  + {} {}", name(c), value(&c.new)),
                (_, None, true) => format!("  - {} {}", name(c), value(&c.old)),
                _ => format!("  ~ {} {} -> {}", name(c), value(&c.old), value(&c.new)),
            };
            ui.out(line);
        }
    };
    section("repos", &diff.repos);
    match &diff.kernel_config {
        Some(changes) => section("kernel config", changes),
        None => ui.out("kernel config: not in both bundles (no SBOM kernel configuration)"),
    }
    match &diff.packages {
        Some(changes) => section("packages", changes),
        None => ui.out("packages: not in both bundles (no SBOM)"),
    }
    match &diff.cves {
        Some(cves) => {
            ui.out(format!(
                "CVEs fixed: {}",
                if cves.fixed.is_empty() { "none".into() } else { list(&cves.fixed) }
            ));
            ui.out(format!(
                "CVEs new: {}",
                if cves.new.is_empty() { "none".into() } else { list(&cves.new) }
            ));
        }
        None => ui.out("CVEs: not in both bundles (no VEX)"),
    }
    section("boot arguments", &diff.cmdline);
    match &diff.latency {
        Some(rows) => {
            ui.out("latency (µs):");
            let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v}"));
            for row in rows {
                ui.out(format!(
                    "  {}: max {} -> {}, p99.9 {} -> {}",
                    crate::text::shown(&row.scenario),
                    us(row.old_max_us),
                    us(row.new_max_us),
                    us(row.old_p999_us),
                    us(row.new_p999_us)
                ));
            }
        }
        None => ui.out("latency: not in both bundles (no measurement)"),
    }
    Ok(Exit::Ok)
}
