//! The pipeline driven through the runner seam with a recording fake (no kas runs here; the
//! integration tests run it with fake and real BitBake).

use std::path::Path;

use super::*;
use crate::error::Exit;
use crate::files::write::WriteOptions;
use crate::host::runner::Recorder;
use crate::image::kas::command::BuildSpec;
use crate::image::kas::{BuildPaths, CacheDirs, KasError};
use crate::image::kasrun::caches::CacheSettings;
use crate::image::kasrun::report::BuildStatus;
use crate::image::kasrun::run::BuildJob;

fn request() -> PlanRequest {
    PlanRequest { machine: Some("rb3gen2-core-kit".into()), ..PlanRequest::default() }
}

fn plan() -> Plan {
    Plan::new(&request(), &Catalog::embedded()).expect("valid plan")
}

fn options(out: &Path) -> ImageOptions {
    let launch = Launch::find(
        Some(Path::new("/nonexistent/kas")),
        None,
        true,
        &crate::image::kas::find::SearchEnv::default(),
    )
    .unwrap();
    ImageOptions {
        output: OutputOptions {
            out: Some(out.to_path_buf()),
            work_dir: None,
            write: WriteOptions { force: false, dry_run: true },
        },
        setup: BuildSetup { launch, spec: BuildSpec::default(), caches: CacheSettings::default() },
        post: Post { verify: true, bundle: false, gzip: false, source_date_epoch: None },
        lock: None,
        meta_qcom: MetaQcomSource::Checkout,
    }
}

#[test]
fn a_dry_run_plans_the_build_runs_nothing_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rtbuild/rb3gen2-core-kit");
    let runner = Recorder::new("", 0);
    let outcome =
        image(&request(), &Catalog::embedded(), &options(&out), &runner, &Ui::silent()).unwrap();
    let ImageOutcome::Planned(dry_run) = outcome else { panic!("a dry run built: {outcome:?}") };
    assert!(runner.argvs().is_empty(), "a dry run ran {:?}", runner.argvs());
    assert!(!out.exists(), "a dry run wrote {}", out.display());
    let lines = dry_run.lines();
    assert_eq!(lines[0], format!("# in {}", dir.path().join("rtbuild").display()));
    let command =
        format!("/nonexistent/kas build {0}/rb3gen2-core-kit-rt.yml:{0}/caches.yml", out.display());
    assert!(lines[1].ends_with(&command), "{lines:?}");
}

/// Before the plan, `image` checks the folders and runs the preflight, then checks meta-qcom
/// out; the build that follows uses those checks and does not ask for the preflight again.
#[test]
fn image_asks_a_counting_fake_preflight_once_for_the_checkout_and_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rtbuild/rb3gen2-core-kit");
    let mut options = options(&out);
    options.output.write.dry_run = false;
    options.post = Post { verify: false, bundle: false, gzip: false, source_date_epoch: None };
    options.setup.launch =
        Launch::with_counting_fake_preflight(options.setup.launch.launcher.clone());
    let runner = Recorder::new("", 0);
    crate::plan::compose::composed::take();
    let outcome =
        image(&request(), &Catalog::embedded(), &options, &runner, &Ui::silent()).unwrap();
    assert!(matches!(outcome, ImageOutcome::Built { .. }), "{outcome:?}");
    assert_eq!(options.setup.launch.preflights_asked(), 1);
    // The fake checkout leaves no meta-qcom to read: the kas files composed for the preflight
    // are the plan's, not composed a second time.
    assert_eq!(crate::plan::compose::composed::take(), 1, "the kas-file list composed twice");
    let verbs: Vec<String> = runner.argvs().iter().map(|argv| argv[1].clone()).collect();
    assert_eq!(verbs, ["checkout", "build"], "{:?}", runner.argvs());
}

#[test]
fn a_build_that_cannot_be_verified_is_a_typed_failure_not_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rtbuild/rb3gen2-core-kit");
    std::fs::create_dir_all(&out).unwrap();
    let plan = plan();
    let job = BuildJob {
        machine: plan.machine.name.clone(),
        image: plan.settings.image.to_string(),
        kas: "kas".into(),
        layout: BuildPaths::new(&out, &out.join("rb3gen2-core-kit-rt.yml")),
        dirs: CacheDirs { dl_dir: dir.path().join("dl"), sstate_dir: dir.path().join("sstate") },
        caches: CacheSettings::default(),
        spec: BuildSpec::default(),
        container: None,
    };
    let result = BuildResult {
        machine: job.machine.clone(),
        image: job.image.clone(),
        partial: None,
        status: BuildStatus::Succeeded,
        duration_secs: 1.0,
        kas_file: job.layout.kas_file.clone(),
        build_dir: job.layout.build_dir.clone(),
        log: job.layout.log.clone(),
        command: vec![],
        exit: None,
        tasks: None,
        sstate: None,
        failures: vec![],
        errors: vec![],
        warnings: 0,
        artifacts: None,
        output_tail: vec![],
    };
    let post = Post { verify: true, bundle: false, gzip: false, source_date_epoch: None };
    let err = after_build(
        &result,
        &job,
        &plan.expectations(),
        post,
        &crate::host::runner::System,
        &Ui::silent(),
    )
    .unwrap_err();
    assert!(matches!(err, ImageError::After(_)), "{err:?}");
    assert!(err.to_string().starts_with("after the build: "), "{err}");
    assert_eq!(crate::error::ErrorCode::exit(&err), Exit::Failed);

    let skipped = Post { verify: false, bundle: false, gzip: false, source_date_epoch: None };
    let after = after_build(
        &result,
        &job,
        &plan.expectations(),
        skipped,
        &crate::host::runner::System,
        &Ui::silent(),
    )
    .unwrap();
    assert!(after.passed && after.verified.is_none() && after.bundle.is_none());
}

#[test]
fn each_image_error_exits_with_its_stage_errors_code() {
    use crate::error::{ErrorCode, Interrupted};
    let cases = [
        (ImageError::Interrupted(Interrupted), Exit::Interrupted),
        (ImageError::BundleNeedsWholeImage, Exit::Usage),
        // No kas is a host that is not set up: exit 2 with the fix, like the preflight.
        (ImageError::Build(KasError::Missing { looked: "PATH".into() }.into()), Exit::Usage),
        (
            ImageError::Build(
                KasError::BadToken {
                    flag: "--out",
                    value: "a:b".into(),
                    expected: "drop the colon",
                }
                .into(),
            ),
            Exit::Usage,
        ),
    ];
    for (err, exit) in cases {
        assert_eq!(err.exit(), exit, "{err}");
    }
}

/// A plan error keeps its own exit code through the pipeline's error (it used to be erased
/// into anyhow and exit 1 unless found further down the chain): bad input exits 2, a meta-qcom
/// file that cannot be read exits 1.
#[test]
fn a_plan_error_carries_its_own_exit_code() {
    use crate::catalog::meta_qcom::MetaQcomError;
    use crate::error::ErrorCode;
    use crate::plan::PlanError;
    let unreadable = MetaQcomError::Read {
        path: "/m/conf/machine/x.conf".into(),
        cause: std::io::Error::other("EIO"),
    };
    let cases = [
        (ImageError::Plan(PlanError::NoMachine), Exit::Usage),
        (ImageError::Plan(PlanError::Include("ci/$(id).yml".into())), Exit::Usage),
        (ImageError::Plan(PlanError::MetaQcom(unreadable)), Exit::Failed),
    ];
    for (err, exit) in cases {
        assert_eq!(err.exit(), exit, "{err}");
    }
    let mut request = request();
    request.machine = None;
    let err = image(
        &request,
        &Catalog::embedded(),
        &options(Path::new("/o")),
        &Recorder::new("", 0),
        &Ui::silent(),
    )
    .unwrap_err();
    assert!(matches!(err, ImageError::Plan(PlanError::NoMachine)), "{err:?}");
    assert_eq!(err.exit(), Exit::Usage);
}
