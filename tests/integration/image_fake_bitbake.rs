//! `rtbuild image` end to end: real kas 5.5 over fixture git repositories, where the `bitbake`
//! kas finds (put on PATH by the fixture's `oe-init-build-env`) is a FAKE that records its argv,
//! prints BitBake-shaped output and writes a meta-qcom-shaped deploy folder; one test runs real
//! BitBake (parse only) through the same path.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::support::fixtures::{Bitbake, Fixtures};
use crate::support::harness::{Test, Unprivileged, venv};
use crate::support::project::{Project, built, checking_out, generated};

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// The rb3gen2-core-kit layer as `image` generates it, and where (through
/// `Project::build_redacted`).
const HEADING: &str =
    "rb3gen2-core-kit (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)";
const OUT: &str = "[ROOT]/proj/rtbuild/rb3gen2-core-kit";
const BUILD: &str = "[ROOT]/proj/rtbuild/rb3gen2-core-kit/build";

/// stderr of a first `image --machine rb3gen2-core-kit` that builds in `build`, `between` said
/// after generating (a warning about the cache settings).
fn first_image(build: &str, between: &str) -> String {
    format!(
        "{}{}{between}       Wrote {OUT}/caches.yml\n{}",
        checking_out("[ROOT]/proj/rtbuild"),
        generated(HEADING, "rb3gen2-core-kit", OUT, &[]),
        built("rb3gen2-core-kit", OUT, build)
    )
}

/// A first `image --machine rb3gen2-core-kit` of `project`, its stderr stated.
fn image_first_time(project: &Project) {
    project
        .image("rb3gen2-core-kit", &[])
        .run()
        .ignore_stdout()
        .stderr_redacted_is(project.build_redacted(), &first_image(BUILD, ""))
        .success();
}

/// stderr of `lock --machine rb3gen2-core-kit` after an image.
fn locked() -> String {
    format!(
        "     Locking {OUT}/rb3gen2-core-kit-rt.yml\nnote: `rtbuild` is the folder holding the kas file; kas does not pin it\n"
    )
}

#[test]
fn image_with_fake_bitbake_builds_and_reports_artifacts() {
    let project = Project::new("ok");
    let run = project.image("rb3gen2-core-kit", &[]).run().success();
    let out = project.out("rb3gen2-core-kit");
    let deploy = out.join("build/tmp/deploy/images/rb3gen2-core-kit");
    let flash = deploy.join("qcom-multimedia-image-rb3gen2-core-kit.rootfs.qcomflash");
    assert_eq!(run.stdout().trim_end(), flash.display().to_string());
    assert_eq!(project.recorded("argv").trim_end(), "-c build qcom-multimedia-image");
    assert_eq!(project.recorded("cwd").trim_end(), out.join("build").display().to_string());
    let env = project.recorded("env");
    let work = project.root.join("proj/rtbuild");
    assert!(env.contains(&format!("DL_DIR={}\n", work.join("downloads").display())), "{env}");
    assert!(
        env.contains(&format!("SSTATE_DIR={}\n", work.join("sstate-cache").display())),
        "{env}"
    );
    let stderr = run.stderr();
    for want in [
        "parsed 12 recipes",
        "task 11/14 linux-qcom-rt_6.18:do_compile",
        "sstate summary: 10 wanted, 8 local, 0 mirrors, 2 missed (80% match)",
        "Built qcom-multimedia-image for rb3gen2-core-kit in",
        "14 tasks attempted, 10 reused without running",
        "sstate: 80% match",
        "qcomflash folder",
        "tarball",
        "Verified ",
    ] {
        assert!(stderr.contains(want), "stderr lacks {want:?}:\n{stderr}");
    }
    let log = std::fs::read_to_string(out.join("build/rtbuild-image.log")).unwrap();
    assert!(log.contains("Tasks Summary: Attempted 14 tasks"), "{log}");
    let caches = std::fs::read_to_string(out.join("caches.yml")).unwrap();
    assert!(caches.contains("header:\n  version: 14\n"), "{caches}");

    // A second run with nothing changed regenerates nothing and keeps every mtime.
    let kas_file = out.join("rb3gen2-core-kit-rt.yml");
    let files = [kas_file.clone(), out.join("caches.yml"), out.join("rtbuild-plan.json")];
    let before: Vec<SystemTime> = files.iter().map(|f| mtime(f)).collect();
    std::thread::sleep(Duration::from_millis(20));
    let again = project.image("rb3gen2-core-kit", &[]).run().ignore_stdout().success();
    assert!(again.stderr().contains("0 new, 0 updated, 0 removed"), "{}", again.stderr());
    assert!(!again.stderr().contains("Wrote"), "{}", again.stderr());
    let after: Vec<SystemTime> = files.iter().map(|f| mtime(f)).collect();
    assert_eq!(before, after);
    assert_eq!(project.recorded("argv").lines().count(), 2);
}

#[test]
fn image_with_fake_bitbake_json_and_pass_through_options() {
    let project = Project::new("ok");
    let started = std::time::Instant::now();
    let run = project
        .image(
            "iq-9075-evk",
            &[
                "--json",
                "--target",
                "linux-qcom-rt",
                "--task",
                "compile",
                "--bitbake-args",
                "-k -DD",
                "--hashserv",
                "none",
                "--prserv",
                "prserv.example.com:8585",
            ],
        )
        .run()
        .success();
    assert_eq!(project.recorded("argv").trim_end(), "-c compile -k -DD linux-qcom-rt");
    // A partial build says what it built, and does not look for (or warn about) an image.
    let stderr = run.stderr();
    assert!(
        stderr.contains("Built linux-qcom-rt, task compile, bitbake -k -DD for iq-9075-evk in"),
        "{stderr}"
    );
    assert!(!stderr.contains("qcomflash"), "{stderr}");
    let json = run.json();
    assert_eq!(json["partial"], "linux-qcom-rt, task compile, bitbake -k -DD");
    assert!(json["artifacts"].is_null(), "{}", json["artifacts"]);
    assert_eq!(json["status"], "succeeded");
    assert_eq!(json["tasks"]["attempted"], 14);
    assert_eq!(json["sstate"]["match_percent"], 80);
    // rtbuild's own time outside kas: present, a number of seconds, and part of the whole
    // (kas's own `duration_secs` is the rest); never judged as a speed here.
    let overhead = json["rtbuild_overhead_s"].as_f64().expect("rtbuild_overhead_s");
    let kas = json["duration_secs"].as_f64().unwrap();
    assert!(overhead >= 0.0 && overhead.is_finite(), "{overhead}");
    let whole = started.elapsed().as_secs_f64();
    assert!(overhead + kas <= whole, "overhead {overhead} s + kas {kas} s > the run's {whole} s");
    let caches = std::fs::read_to_string(project.out("iq-9075-evk").join("caches.yml")).unwrap();
    assert!(caches.contains("    BB_SIGNATURE_HANDLER = \"OEBasicHash\"\n"), "{caches}");
    assert!(caches.contains("    PRSERV_HOST = \"prserv.example.com:8585\"\n"), "{caches}");
}

#[test]
fn image_with_fake_bitbake_failing_task_names_it_and_shows_its_log() {
    let project = Project::new("fail");
    let run = project.image("rb3gen2-core-kit", &[]).run().code_is(1);
    let stderr = run.stderr();
    for want in [
        "build of qcom-multimedia-image for rb3gen2-core-kit failed after",
        "task linux-qcom-rt_6.18:do_compile failed (recipe linux-qcom-rt-6.18.37-r0): oe_runmake failed",
        "task log: ",
        "| kernel/sched/core.c:42: error: expected ; before }",
        "note: full log: ",
        "rtbuild shell --machine rb3gen2-core-kit",
    ] {
        assert!(stderr.contains(want), "stderr lacks {want:?}:\n{stderr}");
    }
    assert_eq!(run.stdout(), "");
    // kas repeats BitBake's stderr when bitbake fails; each error is shown once.
    assert_eq!(
        stderr.matches("ERROR: task linux-qcom-rt_6.18:do_compile failed").count(),
        1,
        "{stderr}"
    );
    assert!(project.out("rb3gen2-core-kit").join("build/conf/local.conf").is_file());
}

#[test]
fn image_with_fake_bitbake_dry_run_prints_the_command_and_runs_nothing() {
    let project = Project::new("ok");
    let run = project.image("rb3gen2-core-kit", &["--dry-run"]).run().success();
    let stdout = run.stdout();
    let out = project.out("rb3gen2-core-kit");
    assert!(
        stdout.contains(&format!(
            "{}:{}",
            out.join("rb3gen2-core-kit-rt.yml").display(),
            out.join("caches.yml").display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("KAS_BUILD_DIR="), "{stdout}");
    assert!(stdout.contains("# expected: "), "{stdout}");
    assert!(run.stderr().contains("Would create"), "{}", run.stderr());
    assert!(!out.exists(), "dry run wrote {}", out.display());
    assert_eq!(project.recorded("argv"), "");
}

#[test]
fn image_with_fake_bitbake_sigint_stops_kas_and_bitbake_without_orphans() {
    use std::process::{Command, Stdio};
    let project = Project::new("sleep");
    // The harness waits for the end; this test drives the process itself to interrupt it.
    let mut path = vec![venv().join("bin")];
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    // As the unprivileged test user, like every build (setpriv execs rtbuild: same pid).
    let mut child = Command::new("setpriv")
        .args(Unprivileged::get().setpriv_args())
        .arg(crate::support::harness::rtbuild_bin())
        .args(["image", "--plain", "--machine", "rb3gen2-core-kit", "--meta-qcom-url"])
        .arg(project.fixtures.url("meta-qcom"))
        .current_dir(project.root.join("proj"))
        .env_clear()
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("HOME", &project.root)
        .env("LANG", "C.UTF-8")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !project.control.join("sleeping").exists() {
        assert!(Instant::now() < deadline, "the fake bitbake never started");
        assert!(child.try_wait().unwrap().is_none(), "rtbuild ended before the build started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pids: Vec<i32> =
        project.recorded("pids").lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(pids.len(), 2, "fake bitbake and its sleep");
    let rtbuild = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(rtbuild, rustix::process::Signal::INT).unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("error: interrupted"), "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(10);
    for pid in pids {
        while alive(pid) {
            assert!(Instant::now() < deadline, "process {pid} survived the interrupt:\n{stderr}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// True while `/proc/<pid>` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

#[test]
fn image_with_fake_bitbake_honours_dl_dir_from_environment_and_flag() {
    let project = Project::new("ok");
    let env_dl = project.root.join("env-downloads");
    project
        .image("rb3gen2-core-kit", &[])
        .env("DL_DIR", &env_dl)
        .run()
        .ignore_stdout()
        .stderr_redacted_is(project.build_redacted(), &first_image(BUILD, ""))
        .success();
    let env = project.recorded("env");
    assert!(env.contains(&format!("DL_DIR={}\n", env_dl.display())), "{env}");
    let flag_sstate = project.root.join("flag-sstate");
    project
        .image("rb3gen2-core-kit", &["--sstate-dir", flag_sstate.to_str().unwrap()])
        .env("SSTATE_DIR", project.root.join("ignored"))
        .run()
        .ignore_stdout()
        .stderr_redacted_is(
            project.build_redacted(),
            &format!(
                "  Generating {HEADING}\n     Updated rb3gen2-core-kit-rt.yml\n   Generated {OUT}: 0 new, 1 updated, 0 removed, 8 unchanged\n{}",
                built("rb3gen2-core-kit", OUT, BUILD)
            ),
        )
        .success();
    let env = project.recorded("env");
    assert!(env.contains(&format!("SSTATE_DIR={}\n", flag_sstate.display())), "{env}");
}

#[test]
fn shell_with_fake_bitbake_runs_one_command_in_the_build_environment() {
    let project = Project::new("ok");
    let marker = project.root.join("shell-ran");
    // The user's own shell command, passed to `kas shell -c` as typed.
    let command =
        format!("command -v bitbake > '{}' && pwd >> '{}'", marker.display(), marker.display());
    image_first_time(&project);
    // Right after `image` with the same arguments, `shell` reads meta-qcom's checkout as `image`
    // did and so generates the same files: every one unchanged.
    let run = Test::new()
        .unprivileged()
        .cwd(project.root.join("proj"))
        .path_prepend(venv().join("bin"))
        .env("SHELL", "/bin/sh")
        .args(["shell", "--plain", "--machine", "rb3gen2-core-kit", "--meta-qcom-url"])
        .args([project.fixtures.url("meta-qcom"), "-c".into(), command])
        .run()
        .stderr_redacted_is(
            |stderr: &str| {
                // kas's own log lines (`2026-12-05 17:22:20 - INFO     - …`) pass through.
                let kas_log = |l: &&str| l.get(4..5) == Some("-") && l.get(19..22) == Some(" - ");
                let ours: String = stderr.split_inclusive('\n').filter(|l| !kas_log(l)).collect();
                project.build_redacted()(&ours)
            },
            &format!(
                "  Generating {HEADING}\n   Generated {OUT}: 0 new, 0 updated, 0 removed, 9 unchanged\n     Running [VENV]/bin/kas shell {OUT}/rb3gen2-core-kit-rt.yml:{OUT}/caches.yml -c 'command -v bitbake > '\\''[ROOT]/shell-ran'\\'' && pwd >> '\\''[ROOT]/shell-ran'\\'''\n"
            ),
        )
        .success();
    let seen = std::fs::read_to_string(&marker).unwrap();
    let build = project.out("rb3gen2-core-kit").join("build");
    assert!(seen.contains("/bitbake/bin/bitbake\n"), "{seen}");
    assert!(seen.ends_with(&format!("{}\n", build.display())), "{seen}\n{}", run.stderr());
}

/// `matrix` with the same machine and arguments as an `image` before it, in the same work
/// folder: it reads the meta-qcom checkout `image` left (no second checkout) and composes the
/// cell from it as `image` did, so the cell generates nothing new.
#[test]
fn matrix_after_image_with_the_same_arguments_generates_nothing_new() {
    let project = Project::new("ok");
    image_first_time(&project);
    let run = Test::new()
        .unprivileged()
        .cwd(project.root.join("proj"))
        .path_prepend(venv().join("bin"))
        .args(["matrix", "--plain", "--machines", "rb3gen2-core-kit", "--meta-qcom-url"])
        .args([project.fixtures.url("meta-qcom")])
        .run()
        .stderr_has_line(&format!(
            "   Generated {}: 0 new, 0 updated, 0 removed, 9 unchanged",
            project.out("rb3gen2-core-kit").display()
        ))
        .stderr_redacted_is(
            project.build_redacted(),
            &format!(
                "        Cell rb3gen2-core-kit / qcom-distro\n  Generating {HEADING}\n   Generated {OUT}: 0 new, 0 updated, 0 removed, 9 unchanged\n{}",
                built("rb3gen2-core-kit", OUT, BUILD)
            ),
        )
        .success();
    let table = run.stdout();
    assert!(
        table
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("rb3gen2-core-kit  qcom-distro  succeeded"),
        "{table}"
    );
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(needle))
        .collect()
}

#[test]
fn image_with_real_bitbake_parse_only_streams_progress_and_leaves_no_server() {
    let dir = tempfile::Builder::new().prefix("rtbuild-real").tempdir().unwrap();
    let fixtures = Fixtures::create(&dir.path().join("repos"), Bitbake::Real);
    std::fs::create_dir_all(dir.path().join("proj")).unwrap();
    Unprivileged::get().own(dir.path());
    let run = Test::new()
        .unprivileged()
        .cwd(dir.path().join("proj"))
        .path_prepend(venv().join("bin"))
        .args(["image", "--plain", "--machine", "rb3gen2-core-kit", "--bitbake-args", "-p"])
        .args(["--meta-qcom-url".to_string(), fixtures.url("meta-qcom")])
        .run()
        .success();
    assert!(run.stderr().contains("rb3gen2-core-kit parsed 5 recipes"), "{}", run.stderr());
    // `-p` only parses: the summary says so, and no image is looked for.
    let stderr = run.stderr();
    assert!(
        stderr.contains("Built qcom-multimedia-image, bitbake -p for rb3gen2-core-kit"),
        "{stderr}"
    );
    assert!(!stderr.contains("qcomflash"), "{stderr}");
    let left = processes_mentioning(&dir.path().to_string_lossy());
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn image_with_fake_bitbake_that_drops_preempt_rt_fails_verification() {
    let project = Project::new("drop-rt");
    let run = project.image("rb3gen2-core-kit", &[]).run().code_is(1);
    let stderr = run.stderr();
    assert!(stderr.contains("warning: the build of qcom-multimedia-image for rb3gen2-core-kit does not match the plan"), "{stderr}");
    assert!(
        stderr.contains("CONFIG_PREEMPT_RT: expected CONFIG_PREEMPT_RT=y, found not set"),
        "{stderr}"
    );
    let verdict: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.out("rb3gen2-core-kit").join("verify.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(verdict["passed"], false);
    // The same verdict as JUnit, for CI test reports: the failed check carries its evidence.
    let junit_path = project.out("rb3gen2-core-kit").join("verify.junit.xml");
    crate::support::harness::assert_junit_valid(&junit_path);
    let junit = std::fs::read_to_string(&junit_path).unwrap();
    assert!(
        junit.contains(
            "<testcase name=\"CONFIG_PREEMPT_RT\" \
             classname=\"rtbuild.verify.rb3gen2-core-kit.build-folder\">"
        ),
        "{junit}"
    );
    let suite = "<testsuite name=\"rtbuild.verify.rb3gen2-core-kit.build-folder\" tests=\"";
    assert!(junit.contains(suite), "{junit}");
    assert!(junit.contains(" time=\"") && junit.contains(" timestamp=\"20"), "{junit}");
    assert!(junit.contains("<failure message=\"CONFIG_PREEMPT_RT is not as planned\">"), "{junit}");
    // The image was built, so its path is still the result on stdout.
    assert!(run.stdout().ends_with(".rootfs.qcomflash\n"), "{}", run.stdout());
}

#[test]
fn image_with_fake_bitbake_bundle_builds_verifies_and_packs() {
    let project = Project::new("ok");
    let run = project.image("rb3gen2-core-kit", &["--bundle", "--json"]).run().success();
    let json = run.json();
    assert_eq!(json["status"], "succeeded");
    assert_eq!(json["verify"]["passed"], true);
    let archive = std::path::PathBuf::from(json["bundle"]["archive"].as_str().unwrap());
    assert!(archive.is_file(), "{}", archive.display());
    assert!(archive.starts_with(project.out("rb3gen2-core-kit").join("bundle")));
    assert!(run.stderr().contains("Bundled "), "{}", run.stderr());
}

/// `rtbuild image --provenance --bundle`: real kas writes the in-toto statement over the
/// artifacts the generated kas file declares; the bundle carries it with the SBOM and VEX
/// (written by oe-core's own SPDX model), the resolved kas configuration, the lock, the plan
/// and the verdict; `bundle --check` refuses the placeholder lock, passes once `rtbuild lock`
/// pinned every repo, prints the unpatched CVEs, and names a tampered statement subject.
#[test]
fn image_with_fake_bitbake_provenance_bundle_binds_the_release_evidence() {
    use crate::support::spdx_fixture::{self, Spec};
    let project = Project::new("ok");
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    let vex = |cve: &str, status: &str, severity: &str| {
        (cve.to_string(), (status.to_string(), severity.to_string()))
    };
    let spec = Spec {
        packages: vec![pair("busybox", "1.37.0"), pair("rt-tests", "2.8")],
        vex: vec![
            vex("CVE-2026-1001", "affected", "critical"),
            vex("CVE-2026-1002", "affected", "high"),
            vex("CVE-2026-1003", "affected", "high"),
            vex("CVE-2026-1004", "fixed", "medium"),
            vex("CVE-2026-1005", "not_affected", "low"),
        ],
        ..Spec::default()
    };
    spdx_fixture::make(
        &spec,
        &project.control.join("spdx.json"),
        Some(&project.control.join("sbom-cve-check.spdx.json")),
    );
    let mut kernel = vec![7u8; 4096];
    kernel.extend_from_slice(b"Linux version 6.18.37-rt (oe@b) #1 SMP PREEMPT_RT Tue Jul 1\n\0");
    std::fs::write(project.control.join("Image"), kernel).unwrap();
    Unprivileged::get().own(&project.control);

    let out = project.out("rb3gen2-core-kit");
    let run = project.image("rb3gen2-core-kit", &["--bundle", "--provenance", "--json"]).run();
    let run = run.success().stderr_contains("Resolving ");
    let json = run.json();
    assert!(out.join("build/attestation/kas-build.provenance.json").is_file());
    let dump = std::fs::read_to_string(out.join("kas-dump.yml")).unwrap();
    assert!(dump.contains("commit:"), "kas dump --resolve-refs gave no commits:\n{dump}");
    let archive = PathBuf::from(json["bundle"]["archive"].as_str().unwrap());
    let manifest = &json["bundle"]["manifest"];
    let release = manifest["release"].as_array().unwrap();
    let role = |name: &str| -> Vec<String> {
        release
            .iter()
            .filter(|r| r["role"] == name)
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    let stem = "qcom-multimedia-image-rb3gen2-core-kit.rootfs-20261129211402";
    assert_eq!(role("sbom"), [format!("release/{stem}.spdx.json")]);
    assert_eq!(role("vex"), [format!("release/{stem}.sbom-cve-check.spdx.json")]);
    assert_eq!(role("provenance"), ["release/kas-build.provenance.json"]);
    assert_eq!(role("resolved-config"), ["release/kas-dump.yml"]);
    assert_eq!(role("plan"), ["release/rtbuild-plan.json"]);
    assert_eq!(role("verify"), ["release/verify.json"]);
    assert_eq!(role("lock"), ["release/rb3gen2-core-kit-rt.lock.yml"]);
    let mut subjects = role("provenance-subject");
    subjects.sort();
    assert_eq!(
        subjects,
        [
            "release/artifacts/Image",
            "release/artifacts/qcom-multimedia-image-rb3gen2-core-kit.rootfs.qcomflash.tar.gz"
        ]
    );
    // The statement's subjects are the declared artifacts, by the names kas gives them.
    let statement: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.join("build/attestation/kas-build.provenance.json")).unwrap(),
    )
    .unwrap();
    let mut names: Vec<&str> = statement["subject"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "Image",
            "qcom-multimedia-image-rb3gen2-core-kit.rootfs.qcomflash.tar.gz",
            "qcom-multimedia-image-rb3gen2-core-kit.rootfs.spdx.json"
        ]
    );

    // The placeholder lock `generate` wrote pins nothing: refused, naming the repos.
    let proj = project.root.join("proj");
    let check = |archive: &Path| {
        Test::new().unprivileged().cwd(&proj).args(["bundle", "--check"]).arg_path(archive).run()
    };
    let refused = check(&archive).stderr_contains("1 problem in ").code_is(1);
    refused
        .stdout_contains("lock       release/rb3gen2-core-kit-rt.lock.yml does not pin ")
        .stdout_contains("oe-core")
        .stdout_contains("of the resolved configuration; run `rtbuild lock` for this build")
        .stdout_contains("unpatched CVEs: 3 (critical 1, high 2)");

    // Pinned by `rtbuild lock`, bundled again: the check passes.
    Test::new()
        .unprivileged()
        .cwd(&proj)
        .path_prepend(venv().join("bin"))
        .args(["lock", "--machine", "rb3gen2-core-kit"])
        .run()
        .ignore_stdout()
        .stderr_redacted_is(project.build_redacted(), &locked())
        .success();
    let bundled = Test::new()
        .unprivileged()
        .cwd(&proj)
        .args(["bundle", "--machine", "rb3gen2-core-kit", "--out", "again"])
        .run()
        .stderr_redacted_is(
            |stderr: &str| {
                // The archive's size is what the compressor made of it: written [BYTES].
                let text = project.build_redacted()(stderr);
                match text.split_once("     Bundled 18 files with the manifest and SHA256SUMS, ") {
                    Some((head, tail)) => match tail.split_once(" bytes\n") {
                        Some((_, rest)) => format!("{head}     Bundled 18 files with the manifest and SHA256SUMS, [BYTES] bytes\n{rest}"),
                        None => text.clone(),
                    },
                    None => text.clone(),
                }
            },
            &format!(
                "note: using the verify result {OUT}/verify.json\n    Bundling qcom-multimedia-image-rb3gen2-core-kit\n     Bundled 18 files with the manifest and SHA256SUMS, [BYTES] bytes\n"
            ),
        )
        .success();
    let again = proj.join(bundled.stdout().lines().next().unwrap());
    check(&again)
        .success()
        .stdout_is("unpatched CVEs: 3 (critical 1, high 2)\n")
        .stderr_contains("files against the manifest and SHA256SUMS");
}

#[test]
fn image_bundle_needs_the_whole_image() {
    Test::new()
        .args(["image", "--machine", "rb3gen2-core-kit", "--bundle", "--target", "linux-qcom-rt"])
        .run()
        .usage_error("--bundle needs the whole image; drop --target, --task and --bitbake-args")
        .nothing_written("rtbuild");
}

#[test]
fn image_with_fake_bitbake_builds_from_a_release_lock_in_full_form_over_meta_qcoms_base_lock() {
    let project = Project::new("ok");
    let qcom = project.fixtures.repo("meta-qcom");
    let pinned = crate::support::fixtures::git(&qcom, &["rev-parse", "HEAD"]).trim().to_string();
    std::fs::write(qcom.join("NEWER"), "a commit after the release\n").unwrap();
    crate::support::fixtures::git_commit_all(&qcom, "after the release");
    // meta-qcom's ci/base.lock.yml pins oe-core to its first commit; the release pins a later one.
    let oe = project.fixtures.repo("oe-core");
    let base_pin = crate::support::fixtures::git(&oe, &["rev-parse", "HEAD"]);
    std::fs::write(oe.join("RELEASE"), "the release's oe-core\n").unwrap();
    crate::support::fixtures::git_commit_all(&oe, "release");
    let oe_core = crate::support::fixtures::git(&oe, &["rev-parse", "HEAD"]);
    assert_ne!(oe_core, base_pin);
    let lock = format!(
        "repos:\n  meta-qcom:\n    url: {}\n    branch: wrynose\n    commit: {pinned}\n  oe-core:\n    url: {}\n    branch: wrynose\n    commit: {}\n",
        project.fixtures.url("meta-qcom"),
        project.fixtures.url("oe-core"),
        oe_core.trim()
    );
    std::fs::write(project.root.join("proj/release-lock.yml"), lock).unwrap();
    let run = project
        .image("rb3gen2-core-kit", &["--lock", "release-lock.yml"])
        .run()
        .ignore_stdout()
        .success();
    assert!(run.stderr().contains("Locked "), "{}", run.stderr());
    let installed = project.out("rb3gen2-core-kit").join("rb3gen2-core-kit-rt.lock.yml");
    let text = std::fs::read_to_string(&installed).unwrap();
    assert!(text.contains(&pinned), "{text}");
    let checkout = project.root.join("proj/rtbuild/meta-qcom");
    assert_eq!(crate::support::fixtures::git(&checkout, &["rev-parse", "HEAD"]).trim(), pinned);
    let checkout = project.root.join("proj/rtbuild/oe-core");
    assert_eq!(
        crate::support::fixtures::git(&checkout, &["rev-parse", "HEAD"]),
        oe_core,
        "the release lock must win over meta-qcom's ci/base.lock.yml"
    );
}

#[test]
fn image_with_a_bad_lock_is_refused_before_anything_is_generated() {
    let project = Project::new("ok");
    std::fs::write(
        project.root.join("proj/bad-lock.yml"),
        "header:\n  version: 14\noverrides:\n  repos:\n    meta-qcom:\n      commit: abc123\n",
    )
    .unwrap();
    let run = project.image("rb3gen2-core-kit", &["--lock", "bad-lock.yml"]).run().code_is(2);
    assert_eq!(run.stderr().lines().count(), 1, "{}", run.stderr());
    assert!(run.stderr().contains("abc123"), "{}", run.stderr());
    assert!(!project.root.join("proj/rtbuild").exists());
}

#[test]
fn image_with_fake_bitbake_then_lock_and_bundle_find_the_build_without_flags() {
    let project = Project::new("ok");
    image_first_time(&project);
    let proj = project.root.join("proj");
    let bundled = Test::new()
        .unprivileged()
        .cwd(&proj)
        .args(["bundle", "--machine", "rb3gen2-core-kit"])
        .run()
        .success()
        .stderr_contains("using the verify result");
    let archive = std::path::PathBuf::from(bundled.stdout().lines().next().unwrap_or_default());
    assert!(archive.starts_with(proj.join("rtbuild/rb3gen2-core-kit/bundle")), "{archive:?}");
    let locked = Test::new()
        .unprivileged()
        .cwd(&proj)
        .path_prepend(venv().join("bin"))
        .args(["lock", "--machine", "rb3gen2-core-kit"])
        .run()
        .ignore_stdout()
        .stderr_redacted_is(project.build_redacted(), &locked())
        .success();
    let lock = proj.join("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.lock.yml");
    let text = std::fs::read_to_string(&lock).unwrap();
    for repo in ["meta-qcom:", "meta-qcom-distro:", "oe-core:", "bitbake:"] {
        assert!(text.contains(repo), "{repo} not pinned:\n{text}\n{}", locked.stderr());
    }
}

#[test]
fn image_with_fake_bitbake_takes_cache_settings_from_the_project_file_and_flags_win() {
    let project = Project::new("ok");
    std::fs::write(
        project.root.join("proj/rtbuild.yaml"),
        "sstate-mirrors: [\"file:///srv/team-sstate\"]\nprserv: \"prserv.lab:8585\"\n",
    )
    .unwrap();
    project
        .image("rb3gen2-core-kit", &["--prserv", "other.lab:9000"])
        .run()
        .ignore_stdout()
        .stderr_redacted_is(
            project.build_redacted(),
            &first_image(
                BUILD,
                "warning: an sstate mirror with a local hash-equivalence server finds fewer matches (OE warns about it); pass --hashserv HOST:PORT for the server that filled the mirror, or --hashserv none\n",
            ),
        )
        .success();
    let caches =
        std::fs::read_to_string(project.out("rb3gen2-core-kit").join("caches.yml")).unwrap();
    assert!(caches.contains("file:///srv/team-sstate"), "{caches}");
    assert!(caches.contains("other.lab:9000"), "{caches}");
    assert!(!caches.contains("prserv.lab"), "the flag must win:\n{caches}");
}

#[test]
fn image_with_fake_bitbake_follows_meta_qcoms_conf_when_it_differs_from_the_catalog() {
    let project = Project::new("ok");
    isolate_cpus_6_7_in_meta_qcom(&project);

    let run = project.image("rb3gen2-core-kit", &[]).run().ignore_stdout().success();
    assert!(run.stderr().contains("Checking out"), "{}", run.stderr());
    assert!(
        run.stderr().contains("QCOM_RT_CPU = \"6-7\" (catalog: \"7\")")
            && run.stderr().contains("following meta-qcom"),
        "{}",
        run.stderr()
    );
    let out = project.out("rb3gen2-core-kit");
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("rtbuild-plan.json")).unwrap()).unwrap();
    assert_eq!(plan["rt_cpus"], "6-7");
    assert_eq!(plan["housekeeping"], "0-5");
    assert_eq!(plan["machine_defaults"]["source"], "meta-qcom");
    let recorded = plan["machine_defaults"]["conf"].as_str().unwrap();
    assert!(recorded.ends_with("proj/rtbuild/meta-qcom/conf/machine/rb3gen2-core-kit.conf"));
    let kas = std::fs::read_to_string(out.join("rb3gen2-core-kit-rt.yml")).unwrap();
    assert!(kas.contains("QCOM_RT_CPU:forcevariable = \"6-7\""), "{kas}");
    assert_eq!(project.recorded("argv").lines().count(), 1, "BitBake ran once, after the check");

    // The user's --rt-cpus wins over both; the plan says what meta-qcom has.
    let run =
        project.image("rb3gen2-core-kit", &["--rt-cpus", "5"]).run().ignore_stdout().success();
    assert!(run.stderr().contains("--rt-cpus wins over both"), "{}", run.stderr());
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("rtbuild-plan.json")).unwrap()).unwrap();
    assert_eq!(plan["rt_cpus"], "5");
}

#[test]
fn image_with_fake_bitbake_then_bundle_and_lock_follow_kas_work_dir_and_kas_machine() {
    // kas's rule for every command: the environment is honoured, a flag wins.
    let project = Project::new("ok");
    let proj = project.root.join("proj");
    let work = project.root.join("kaswork");
    std::fs::create_dir_all(&work).unwrap();
    Unprivileged::get().own(&work);
    let mut args: Vec<String> = vec!["image".into(), "--plain".into()];
    args.extend(["--meta-qcom-url".into(), project.fixtures.url("meta-qcom")]);
    Test::new()
        .unprivileged()
        .cwd(&proj)
        .path_prepend(venv().join("bin"))
        .env("KAS_WORK_DIR", &work)
        .env("KAS_MACHINE", "qcs6490-rb3gen2")
        .args(args)
        .run()
        .ignore_stdout()
        .stderr_redacted_is(
            project.build_redacted(),
            &format!(
                "{}note: `qcs6490-rb3gen2` is an alias of `rb3gen2-core-kit`\n{}       Wrote {OUT}/caches.yml\n{}",
                checking_out("[ROOT]/kaswork"),
                generated(HEADING, "rb3gen2-core-kit", OUT, &[]),
                built("rb3gen2-core-kit", OUT, "[ROOT]/kaswork/build")
            ),
        )
        .success();
    // kas cloned into KAS_WORK_DIR and BitBake built in its build/.
    assert!(work.join("meta-qcom/.git").exists(), "no checkout in KAS_WORK_DIR");
    assert!(work.join("build/tmp/deploy/images/rb3gen2-core-kit").is_dir());
    assert!(work.join("build/rtbuild-image.log").is_file());
    assert!(!proj.join("rtbuild/rb3gen2-core-kit/build").exists(), "built in the wrong folder");
    assert!(!proj.join("rtbuild/meta-qcom").exists(), "cloned in the wrong folder");
    let bundled = Test::new()
        .unprivileged()
        .cwd(&proj)
        .env("KAS_WORK_DIR", &work)
        .env("KAS_MACHINE", "rb3gen2-core-kit")
        .args(["bundle"])
        .run()
        .success()
        .stderr_contains("using the verify result");
    let archive = std::path::PathBuf::from(bundled.stdout().lines().next().unwrap_or_default());
    assert!(archive.starts_with(proj.join("rtbuild/rb3gen2-core-kit/bundle")), "{archive:?}");
    Test::new()
        .unprivileged()
        .cwd(&proj)
        .path_prepend(venv().join("bin"))
        .env("KAS_WORK_DIR", &work)
        // A flag wins over the environment.
        .env("KAS_MACHINE", "iq-9075-evk")
        .args(["lock", "--machine", "rb3gen2-core-kit"])
        .run()
        .ignore_stdout()
        .stderr_redacted_is(project.build_redacted(), &locked())
        .success();
    let lock = proj.join("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.lock.yml");
    let text = std::fs::read_to_string(&lock).unwrap();
    assert!(text.contains("meta-qcom:"), "{text}");
}

#[test]
fn image_takes_distro_target_task_and_kas_from_kas_environment_and_a_flag_wins() {
    let project = Project::new("ok");
    let run = project
        .image("rb3gen2-core-kit", &["--dry-run", "--distro", "qcom-distro"])
        .env("KAS_DISTRO", "nodistro")
        .env("KAS_TARGET", "linux-qcom-rt u-boot")
        .env("KAS_TASK", "compile")
        .env("RTBUILD_KAS", "/opt/kas-from-env/bin/kas")
        .run()
        .success();
    let text = run.stdout();
    assert!(
        text.contains(
            "/opt/kas-from-env/bin/kas build --target linux-qcom-rt --target u-boot --task compile"
        ),
        "{text}"
    );
    assert!(text.contains("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml"), "{text}");
    let generated = run.stderr();
    assert!(!generated.contains("nodistro"), "the --distro flag wins: {generated}");
}

/// Issue 27: rtbuild's own time outside kas on a warm run (the project generated, kas's repos
/// checked out), with real kas and the FAKE bitbake, as `image --json` reports it in
/// `rtbuild_overhead_s`. The figures are printed for the README (`--nocapture`), never judged
/// as a speed: the test checks only that each is a part of its run's whole time.
#[test]
fn image_overhead_outside_kas_on_warm_runs_with_fake_bitbake_is_reported() {
    let project = Project::new("ok");
    image_first_time(&project);
    let mut figures = Vec::new();
    for _ in 0..3 {
        let started = std::time::Instant::now();
        let run = project
            .image("rb3gen2-core-kit", &["--json"])
            .run()
            .stderr_redacted_is(
                project.build_redacted(),
                &format!(
                    "  Generating {HEADING}\n   Generated {OUT}: 0 new, 0 updated, 0 removed, 9 unchanged\n{}",
                    built("rb3gen2-core-kit", OUT, BUILD)
                ),
            )
            .success();
        let whole = started.elapsed().as_secs_f64();
        let json = run.json();
        let overhead = json["rtbuild_overhead_s"].as_f64().expect("rtbuild_overhead_s");
        let kas = json["duration_secs"].as_f64().unwrap();
        assert!(overhead >= 0.0 && overhead + kas <= whole, "{overhead} + {kas} > {whole}");
        figures.push((overhead, kas, whole));
    }
    eprintln!("warm rtbuild image (overhead s, kas s, whole s): {figures:?}");
}

/// The main journey goes one way: kas checks meta-qcom out before the plan is made, the plan
/// is made once from meta-qcom's own conf and prepared once (one `Generating`, each file
/// written once), and BitBake runs once. With meta-qcom from that checkout (no `--meta-qcom
/// DIR`), a `--cmdline` argument the included meta-qcom files already append (the fixture's
/// `ci/base.yml` appends `qcom_scm.download_mode=1`, as the real one does) is warned about and
/// written by meta-qcom only.
#[test]
fn image_with_fake_bitbake_checks_meta_qcom_out_then_plans_and_prepares_once() {
    let project = Project::new("ok");
    isolate_cpus_6_7_in_meta_qcom(&project);
    let args = ["--cmdline", "qcom_scm.download_mode=1", "--cmdline", "threadirqs"];
    // The private folder of the checkout goes where TMPDIR says, a folder of this test's own.
    let temp = project.root.join("temp");
    std::fs::create_dir(&temp).unwrap();
    Unprivileged::get().own(&temp);
    let run = project
        .image("rb3gen2-core-kit", &args)
        .env("TMPDIR", &temp)
        .run()
        .ignore_stdout()
        .success();
    let stderr = run.stderr();
    let checkout = stderr.find("Checking out").expect(&stderr);
    let generating = stderr.find("Generating").expect(&stderr);
    assert!(checkout < generating, "meta-qcom is resolved before the plan:\n{stderr}");
    assert_eq!(stderr.matches("Generating").count(), 1, "prepared once:\n{stderr}");
    assert_eq!(stderr.matches("following meta-qcom").count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "warning: --cmdline qcom_scm.download_mode=1 is already set by meta-qcom's ci/base.yml; not adding it twice"
        ),
        "{stderr}"
    );
    let out = project.out("rb3gen2-core-kit");
    let kas = std::fs::read_to_string(out.join("rb3gen2-core-kit-rt.yml")).unwrap();
    assert!(kas.contains("QCOM_RT_CPU:forcevariable = \"6-7\""), "{kas}");
    assert!(!kas.contains("download_mode"), "written by meta-qcom only:\n{kas}");
    assert!(kas.contains("threadirqs"), "{kas}");
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("rtbuild-plan.json")).unwrap()).unwrap();
    let cmdline = plan["cmdline"].as_array().unwrap();
    assert!(!cmdline.iter().any(|a| a == "qcom_scm.download_mode=1"), "{plan}");
    assert_eq!(plan["machine_defaults"]["source"], "meta-qcom");
    assert_eq!(project.recorded("argv").lines().count(), 1, "BitBake ran once");
    // The checkout ran on a private kas file naming meta-qcom alone, in a folder removed
    // afterwards; its line says what was checked out and where it stays, never that folder.
    let root = project.root.display();
    let line = format!(
        "Checking out meta-qcom file://{root}/repos/meta-qcom (branch wrynose) into {root}/proj/rtbuild/meta-qcom"
    );
    assert!(stderr.lines().any(|l| l == line), "no line {line:?} in:\n{stderr}");
    let left: Vec<_> = std::fs::read_dir(&temp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(
        !left.iter().any(|name| name.to_string_lossy().starts_with("rtbuild-checkout")),
        "the checkout's private folder was left behind: {left:?}"
    );
    let local = std::fs::read_to_string(out.join("build/conf/local.conf")).unwrap();
    assert!(local.contains("QCOM_RT_CPU:forcevariable = \"6-7\""), "{local}");
}

/// Issue 27: on a warm run the meta-qcom checkout is already where `kas checkout` would leave
/// it, so rtbuild reads it as it is (no second kas start before `kas build`) and still follows
/// meta-qcom's conf; a pin that moves meta-qcom (`--meta-qcom-commit` of a newer commit) runs
/// `kas checkout` again and the plan follows the newer conf.
#[test]
fn image_with_fake_bitbake_warm_run_reads_meta_qcom_as_it_is_and_a_new_pin_checks_out_again() {
    let project = Project::new("ok");
    isolate_cpus_6_7_in_meta_qcom(&project);
    let run = project.image("rb3gen2-core-kit", &[]).run().ignore_stdout().success();
    assert!(run.stderr().contains("Checking out"), "{}", run.stderr());

    let out = project.out("rb3gen2-core-kit");
    let plan = || -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(out.join("rtbuild-plan.json")).unwrap()).unwrap()
    };
    let run = project.image("rb3gen2-core-kit", &["-v"]).run().ignore_stdout().success();
    let stderr = run.stderr();
    assert!(!stderr.contains("Checking out"), "{stderr}");
    assert!(stderr.contains("where kas checkout would leave it; reading it as it is"), "{stderr}");
    assert!(stderr.contains("following meta-qcom"), "{stderr}");
    assert_eq!(plan()["rt_cpus"], "6-7");
    assert_eq!(plan()["machine_defaults"]["source"], "meta-qcom");
    assert_eq!(project.recorded("argv").lines().count(), 2, "BitBake ran on both runs");

    // meta-qcom moves on upstream; pinning the new commit checks it out again.
    let qcom = project.fixtures.repo("meta-qcom");
    let conf = qcom.join("conf/machine/rb3gen2-core-kit.conf");
    let text = std::fs::read_to_string(&conf)
        .unwrap()
        .replace("QCOM_RT_CPU        = \"6-7\"", "QCOM_RT_CPU        = \"5-7\"")
        .replace("QCOM_IRQAFF        = \"0-5\"", "QCOM_IRQAFF        = \"0-4\"")
        .replace("QCOM_RCU_NOCBS     = \"6-7\"", "QCOM_RCU_NOCBS     = \"5-7\"");
    std::fs::write(&conf, text).unwrap();
    crate::support::fixtures::git_commit_all(&qcom, "rb3gen2: isolate CPUs 5-7");
    let newer = crate::support::fixtures::git(&qcom, &["rev-parse", "HEAD"]).trim().to_string();
    let run = project
        .image("rb3gen2-core-kit", &["--meta-qcom-commit", &newer])
        .run()
        .ignore_stdout()
        .success();
    assert!(run.stderr().contains("Checking out"), "{}", run.stderr());
    assert_eq!(plan()["rt_cpus"], "5-7");
    assert_eq!(plan()["housekeeping"], "0-4");
}

/// Commits a meta-qcom rb3gen2 conf that differs from the catalog: RT CPUs 6-7 (the catalog
/// says 7), housekeeping 0-5.
fn isolate_cpus_6_7_in_meta_qcom(project: &Project) {
    let qcom = project.fixtures.repo("meta-qcom");
    let conf = qcom.join("conf/machine/rb3gen2-core-kit.conf");
    let text = std::fs::read_to_string(&conf)
        .unwrap()
        .replace("QCOM_RT_CPU        = \"7\"", "QCOM_RT_CPU        = \"6-7\"")
        .replace("QCOM_IRQAFF        = \"0-6\"", "QCOM_IRQAFF        = \"0-5\"")
        .replace("QCOM_RCU_NOCBS     = \"7\"", "QCOM_RCU_NOCBS     = \"6-7\"");
    std::fs::write(&conf, text).unwrap();
    crate::support::fixtures::git_commit_all(&qcom, "rb3gen2: isolate CPUs 6-7");
}
