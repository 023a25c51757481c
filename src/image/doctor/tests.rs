use std::path::PathBuf;

use super::host_packages::Os;
use super::hosttools::HostTools;
use super::*;

/// A host where everything is fine; each test breaks one thing.
fn ready_host() -> Facts {
    Facts {
        uid: 1000,
        os: Os::Debian,
        locales: vec!["C.utf8".into(), "en_US.utf8".into()],
        hosttools: HostTools {
            names: vec!["gawk".into()],
            missing: vec![],
            source: "the HOSTTOOLS of oe-core wrynose".into(),
        },
        python: Some("3.11.2".into()),
        git: Some("2.39.5".into()),
        kas: Ok(Kas { program: "/v/bin/kas".into(), version: KasVersion { major: 5, minor: 5 } }),
        container: None,
        disks: vec![],
        inotify_watches: Some(524288),
        open_files: Some((1024, Some(1048576))),
        kas_premirrors: None,
    }
}

fn target() -> Target {
    Target { work: PathBuf::from("/w"), ..Target::default() }
}

fn only_problems(facts: &Facts, target: &Target) -> Vec<String> {
    evaluate(facts, target)
        .into_iter()
        .filter(|c| c.status == Severity::Problem)
        .map(|c| format!("{}: {}", c.check, c.line()))
        .collect()
}

#[test]
fn a_ready_host_has_no_problem() {
    assert_eq!(only_problems(&ready_host(), &target()), Vec::<String>::new());
    let report = DoctorReport::new(evaluate(&ready_host(), &target()));
    assert!(report.ready);
    let ids: Vec<&str> = report.checks.iter().map(|c| c.check).collect();
    assert_eq!(
        ids,
        ["user", "locale", "hosttools", "python3", "git", "kas", "disk", "inotify", "open-files"]
    );
}

#[test]
fn root_is_refused_with_the_way_out() {
    let facts = Facts { uid: 0, ..ready_host() };
    let problems = only_problems(&facts, &target());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with(
            "user: running as root, and BitBake refuses root (oe-core sanity.bbclass: \"Do not \
             use Bitbake as root.\"); run rtbuild as an ordinary user"
        ),
        "{problems:?}"
    );
    assert!(problems[0].contains("--container"), "{problems:?}");
}

#[test]
fn missing_hosttools_name_the_packages_for_debian_and_fedora() {
    let mut facts = ready_host();
    facts.hosttools.missing = vec!["gawk".into(), "cpio".into(), "chrpath".into(), "awk".into()];
    let problems = only_problems(&facts, &target());
    assert_eq!(
        problems,
        ["hosttools: 4 HOSTTOOLS missing from PATH: gawk, cpio, chrpath, awk (the HOSTTOOLS of \
          oe-core wrynose); install them with `sudo apt-get install -y gawk cpio chrpath` \
          (Debian/Ubuntu: gawk cpio chrpath; Fedora: gawk cpio chrpath), or run `rtbuild setup \
          --host`"]
    );
}

#[test]
fn locale_python_git_and_kas_problems() {
    let facts = Facts {
        locales: vec!["C".into(), "POSIX".into()],
        python: Some("3.8.10".into()),
        git: None,
        kas: Err(KasError::Missing { looked: "PATH".into() }),
        ..ready_host()
    };
    let problems = only_problems(&facts, &target());
    let ids: Vec<&str> = problems.iter().map(|p| p.split(':').next().unwrap()).collect();
    assert_eq!(ids, ["locale", "python3", "git", "kas"], "{problems:?}");
    assert!(problems[0].contains("sudo locale-gen"), "{problems:?}");
    assert!(problems[1].contains("python3 3.8.10 is too old; BitBake 2.18 needs Python 3.9"));
    assert!(problems[3].starts_with("kas: kas was not found on PATH; install it with"));
}

#[test]
fn low_limits_are_warnings_not_problems() {
    let facts =
        Facts { inotify_watches: Some(8192), open_files: Some((256, Some(4096))), ..ready_host() };
    let report = DoctorReport::new(evaluate(&facts, &target()));
    assert!(report.ready);
    let warnings: Vec<String> = report.warnings().map(Check::line).collect();
    assert_eq!(
        warnings,
        [
            "fs.inotify.max_user_watches is 8192, below 65536; raise it with `sudo sysctl \
             fs.inotify.max_user_watches=524288` and keep it in /etc/sysctl.d/90-rtbuild.conf",
            "the open-file limit is 256, below 1024; raise it with `ulimit -n 4096`",
        ]
    );
}

#[test]
fn container_builds_check_kas_container_and_the_engine_not_host_tools() {
    let container = Target { container: Some(Engine::Podman), ..target() };
    let mut facts = ready_host();
    facts.hosttools.missing = vec!["gawk".into()];
    facts.locales.clear();
    let problems = only_problems(&facts, &container);
    assert_eq!(
        problems,
        ["container: kas-container was not found beside kas nor on PATH; install it with `pip \
          install kas==5.5` (or `pipx install kas==5.5`), or run `rtbuild setup` to create a \
          venv with it, then put it on PATH or pass --kas PATH (kas-container ships with kas)"]
    );
    facts.container =
        Some(facts::ContainerFacts { program: "/v/bin/kas-container".into(), engine_found: false });
    let problems = only_problems(&facts, &container);
    assert!(
        problems[0].starts_with(
            "container: --container podman was asked for, but `podman` is not on PATH"
        ),
        "{problems:?}"
    );
    facts.uid = 0;
    facts.container.as_mut().unwrap().engine_found = true;
    let problems = only_problems(&facts, &container);
    assert!(
        problems[0].starts_with("user: running as root: kas-container refuses root"),
        "{problems:?}"
    );
}

#[test]
fn json_shape_is_ready_problems_checks() {
    let facts = Facts { uid: 0, ..ready_host() };
    let report = DoctorReport::new(evaluate(&facts, &target()));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["ready"], false);
    assert_eq!(json["problems"][0]["check"], "user");
    assert!(
        json["problems"][0]["fix"].as_str().unwrap().starts_with("run rtbuild as an ordinary user")
    );
    assert_eq!(json["checks"][0]["status"], "problem");
    assert_eq!(json["checks"][1]["status"], "ok");
    assert_eq!(json["checks"][1]["fix"], serde_json::Value::Null);
}

#[test]
fn versions_compare_numerically() {
    assert!(version_at_least("3.11.2", &[3, 9]));
    assert!(version_at_least("3.9", &[3, 9]));
    assert!(!version_at_least("3.8.10", &[3, 9]));
    assert!(version_at_least("2.39.2.windows.1", &MIN_GIT));
    assert!(!version_at_least("1.8.3", &MIN_GIT));
    assert!(!version_at_least("garbage", &[3, 9]));
}

/// The preflight measures the folders the build uses: with a kas work folder (`--work-dir`,
/// KAS_WORK_DIR) that folder, not the output folder's parent.
#[test]
fn the_preflight_target_follows_the_kas_work_dir() {
    let request = crate::plan::PlanRequest {
        machine: Some("rb3gen2-core-kit".into()),
        ..crate::plan::PlanRequest::default()
    };
    let plan = crate::plan::Plan::new(&request, &crate::catalog::Catalog::embedded()).unwrap();
    let out = std::path::Path::new("/w/proj/rtbuild/rb3gen2-core-kit");
    assert_eq!(
        target_for(&plan, out, None, None, &Default::default()).work,
        std::path::Path::new("/w/proj/rtbuild")
    );
    let work = std::path::Path::new("/big/kas");
    assert_eq!(target_for(&plan, out, Some(work), None, &Default::default()).work, work);
}
