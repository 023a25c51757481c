//! What runs after a successful build: verify it against the plan (a failed check fails the
//! build), then pack it into a bundle when asked.

use super::ImageError;
use super::verify_bundle::{self, Verified};
use crate::host::runner::{Runner, check_status};
use crate::image::kas::command::{self, BuildSpec};
use crate::image::kasrun::report::{BuildResult, BuildStatus};
use crate::image::kasrun::run::BuildJob;
use crate::plan::Expectations;
use crate::release::bundle::BundleOutcome;
use crate::text::ui::Ui;

/// The post-build steps that apply to one build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Post {
    pub verify: bool,
    pub bundle: bool,
    /// `--gzip`: the bundle as `.tar.gz`.
    pub gzip: bool,
    /// `SOURCE_DATE_EPOCH` as the environment gives it, for the bundle.
    pub source_date_epoch: Option<i64>,
}

impl Post {
    /// The steps asked for (`--no-verify`, `--bundle`) for a build of `spec`. Verification needs
    /// the whole image; a `--target`/`--task`/`--bitbake-args` build is partial, so it is not
    /// verified (and cannot be bundled).
    pub(crate) fn decide(
        no_verify: bool,
        bundle: bool,
        spec: &BuildSpec,
        ui: &Ui,
    ) -> Result<Post, ImageError> {
        let partial = spec.is_partial();
        if partial && bundle {
            return Err(ImageError::BundleNeedsWholeImage);
        }
        if partial && !no_verify {
            ui.note(
                "partial build (--target, --task or --bitbake-args): the result is not verified",
            );
        }
        Ok(Post { verify: !no_verify && !partial, bundle, gzip: false, source_date_epoch: None })
    }
}

/// What ran after the build.
#[derive(Debug, Default)]
pub(crate) struct After {
    /// False when verification failed.
    pub passed: bool,
    pub verified: Option<Verified>,
    pub bundle: Option<BundleOutcome>,
    /// Seconds kas ran after the build (`kas dump` for the bundle): kas's time, not rtbuild's.
    pub kas_secs: f64,
}

/// After a successful build: verify against the plan (a failed check fails the build), then
/// bundle when asked. Nothing runs after a failed or interrupted build.
pub(crate) fn after_build(
    result: &BuildResult,
    job: &BuildJob,
    expected: &Expectations,
    post: Post,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<After, ImageError> {
    if result.status != BuildStatus::Succeeded || !post.verify {
        return Ok(After { passed: true, ..After::default() });
    }
    let verified = verify_bundle::verify_build(&job.layout, expected).map_err(ImageError::After)?;
    if !verified.verdict.passed {
        ui.warn(format!(
            "the build of {} for {} does not match the plan",
            result.image, result.machine
        ));
        for line in verify_bundle::failed_checks(&verified) {
            ui.status("", line);
        }
        ui.note(format!("verdict: {}", crate::text::shown_path(&verified.file)));
        return Ok(After { passed: false, verified: Some(verified), ..After::default() });
    }
    let checks: usize = verified.verdict.reports.iter().map(|r| r.checks.len()).sum();
    ui.status(
        "Verified",
        format!(
            "{} passed ({})",
            crate::text::counted(checks, "check"),
            crate::text::shown_path(&verified.file)
        ),
    );
    let mut kas_secs = 0.0;
    let bundle = if post.bundle {
        kas_secs = keep_resolved_config(job, runner, ui)?;
        let outcome = verify_bundle::bundle_build(
            &job.layout,
            expected,
            &verified,
            post.source_date_epoch,
            post.gzip,
        )
        .map_err(ImageError::After)?;
        ui.status("Bundled", crate::text::shown_path(&outcome.archive));
        Some(outcome)
    } else {
        None
    };
    Ok(After { passed: true, verified: Some(verified), bundle, kas_secs })
}

/// `kas dump --resolve-refs --resolve-local --resolve-env` of the build, written as
/// `<out>/kas-dump.yml` for the bundle. Returns the seconds kas ran.
fn keep_resolved_config(job: &BuildJob, runner: &dyn Runner, ui: &Ui) -> Result<f64, ImageError> {
    let dump = command::in_container(
        command::kas_dump_resolved(&job.kas, &job.layout, &job.dirs),
        job.container,
    );
    ui.status("Resolving", &dump);
    let started = std::time::Instant::now();
    let ran = runner.capture(&dump);
    let kas_secs = started.elapsed().as_secs_f64();
    let output = ran
        .and_then(|output| check_status(&dump, output))
        .map_err(|e| ImageError::After(verify_bundle::AfterError::Dump(e)))?;
    let file = job.layout.out.join(crate::release::bundle::KAS_DUMP_FILE);
    crate::files::write::write_atomic(&file, &output.stdout, false)
        .map_err(|e| ImageError::After(verify_bundle::AfterError::Write(e)))?;
    Ok(kas_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_image_builds_are_verified_partial_ones_are_not() {
        let ui = Ui::silent();
        let whole = BuildSpec::default();
        let partial = BuildSpec::new(&["linux-qcom-rt".into()], None, None).unwrap();
        let post = |no_verify, bundle, spec: &BuildSpec| Post::decide(no_verify, bundle, spec, &ui);
        assert_eq!(
            post(false, false, &whole).unwrap(),
            Post { verify: true, bundle: false, gzip: false, source_date_epoch: None }
        );
        assert_eq!(
            post(true, false, &whole).unwrap(),
            Post { verify: false, bundle: false, gzip: false, source_date_epoch: None }
        );
        assert_eq!(
            post(false, true, &whole).unwrap(),
            Post { verify: true, bundle: true, gzip: false, source_date_epoch: None }
        );
        assert_eq!(
            post(false, false, &partial).unwrap(),
            Post { verify: false, bundle: false, gzip: false, source_date_epoch: None }
        );
        let err = post(false, true, &partial).unwrap_err();
        assert_eq!(crate::error::ErrorCode::exit(&err), crate::error::Exit::Usage);
    }
}
