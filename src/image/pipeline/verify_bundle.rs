//! The post-build steps [`super::post`] runs after a successful build: verify the result
//! against the plan ([`crate::verify`]), keep the verdict beside the generated files
//! (`verify.json`, the shape `rtbuild verify --json` prints), and on request pack the verified
//! qcomflash output into a bundle ([`crate::release::bundle`]).

use std::path::PathBuf;

use serde::Serialize;

use crate::formats::junit_xml::Timing;
use crate::formats::{self, verify_json::VerifyFile};
use crate::image::kas::BuildPaths;
use crate::plan::Expectations;
use crate::release::bundle::{self, BundleError, BundleOutcome, BundleRequest, VerifySummary};
use crate::verify::{self, VerifyError, VerifyReport};

/// The verdict file's name in the output folder.
pub(crate) use crate::formats::verify_json::FILE as VERIFY_FILE;
/// The same verdict as JUnit XML (one test case per check), for CI test reports.
pub(crate) const VERIFY_JUNIT_FILE: &str = "verify.junit.xml";

/// What verification found ([`VerifyFile`], as `rtbuild verify --json` prints it) and where it
/// was written.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Verified {
    #[serde(flatten)]
    pub verdict: VerifyFile,
    /// Where the verdict was written.
    #[serde(skip)]
    pub file: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum AfterError {
    #[error(transparent)]
    Verify(#[from] VerifyError),
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error(
        "cannot keep the resolved kas configuration: {0}; check that kas can read the build's repos"
    )]
    Dump(crate::host::runner::RunError),
    #[error(transparent)]
    Write(#[from] crate::files::write::WriteError),
}

/// Verifies the build folder against `expected` and writes `verify.json`.
pub(crate) fn verify_build(
    layout: &BuildPaths,
    expected: &Expectations,
) -> Result<Verified, AfterError> {
    let started = std::time::Instant::now();
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs());
    let report = verify::verify_build_dir(&layout.build_dir, expected)?;
    let timing = Timing { started_unix, elapsed_s: Some(started.elapsed().as_secs_f64()) };
    let file = layout.out.join(VERIFY_FILE);
    let verdict = VerifyFile::new(vec![report], Vec::new());
    let text = formats::to_json(&verdict).unwrap_or_default();
    crate::files::write::write_atomic(&file, text.as_bytes(), false)?;
    let junit = verify::junit::render(&verdict.reports, &expected.machine, timing);
    crate::files::write::write_atomic(
        &layout.out.join(VERIFY_JUNIT_FILE),
        junit.as_bytes(),
        false,
    )?;
    Ok(Verified { verdict, file })
}

/// Packs the build into `<out>/bundle/`; refuses an unverified or failed build.
pub(crate) fn bundle_build(
    layout: &BuildPaths,
    expected: &Expectations,
    verified: &Verified,
    source_date_epoch: Option<i64>,
    gzip: bool,
) -> Result<BundleOutcome, AfterError> {
    let summary = Some(VerifySummary::from_file(&verified.verdict));
    let request = BundleRequest {
        machine: expected.machine.clone(),
        image: expected.image.clone(),
        build_dir: layout.build_dir.clone(),
        out_dir: layout.out.join("bundle"),
        work_dir: layout.work.clone(),
        kas_file: Some(layout.kas_file.clone()),
        verify: summary,
        allow_unverified: false,
        cmdline: Some((expected.cmdline.join(" "), "rtbuild-plan.json (requested)".to_string())),
        source_date_epoch,
        verify_file: Some(verified.file.clone()),
        kas_dump: Some(layout.out.join(bundle::KAS_DUMP_FILE)).filter(|p| p.is_file()),
        measurement: None,
        // `image --bundle` packs only what the build produced.
        follow_external_links: false,
        gzip,
        signing_key: None,
    };
    Ok(bundle::create(&request)?)
}

/// The failed checks of a verdict, one line each, for the summary.
pub(crate) fn failed_checks(verified: &Verified) -> Vec<String> {
    verified
        .verdict
        .reports
        .iter()
        .flat_map(VerifyReport::failures)
        .map(|c| {
            let reason = c.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
            format!("{}: expected {}, found {}{reason}", c.check, c.expected, c.found)
        })
        .collect()
}
