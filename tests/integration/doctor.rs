//! `rtbuild doctor` and the preflight of `image`, `matrix` and `shell`: the real oe-core
//! `meta/conf/bitbake.conf` from the upstream snapshot drives the HOSTTOOLS check; runs as root
//! and as the unprivileged test user (setpriv); kas-container with a RECORDING FAKE docker and
//! podman (no container runs here).

use std::path::{Path, PathBuf};

use crate::support::fixtures::write_executable;
use crate::support::harness::{Test, Unprivileged, venv};
use crate::support::upstream::upstream;

/// The four tools a fresh Debian 12 cloud image lacks (research meta-qcom.md §11).
const HIDDEN: [&str; 4] = ["gawk", "cpio", "chrpath", "diffstat"];

/// A PATH folder with every program of /usr/bin except `hidden`.
fn path_without(dir: &Path, hidden: &[&str]) -> PathBuf {
    let bin = dir.join("sysbin");
    std::fs::create_dir_all(&bin).unwrap();
    for entry in std::fs::read_dir("/usr/bin").unwrap().flatten() {
        let name = entry.file_name();
        if !hidden.iter().any(|h| name == std::ffi::OsStr::new(h)) {
            std::os::unix::fs::symlink(entry.path(), bin.join(&name)).unwrap();
        }
    }
    bin
}

/// A doctor run whose work folder holds the real oe-core `bitbake.conf`, with `hidden` missing
/// from PATH.
fn doctor_with_real_bitbake_conf(test: Test, hidden: &[&str]) -> (Test, PathBuf) {
    let work = test.path().join("proj/rtbuild");
    let conf = work.join("oe-core/meta/conf/bitbake.conf");
    std::fs::create_dir_all(conf.parent().unwrap()).unwrap();
    std::fs::write(&conf, upstream().file("oe-core", "meta/conf/bitbake.conf")).unwrap();
    let bin = path_without(test.path(), hidden);
    let meta_qcom = format!("file://{}", upstream().repo("meta-qcom").display());
    let test = test
        .env("PATH", &bin)
        .args(["doctor", "--json", "--machine", "rb3gen2-core-kit", "--meta-qcom-url", &meta_qcom])
        .args(["--kas".into(), venv().join("bin/kas").into_os_string()])
        .args(["--out".into(), work.join("rb3gen2-core-kit").into_os_string()]);
    (test, conf)
}

fn problem_checks(json: &serde_json::Value) -> Vec<String> {
    json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["check"].as_str().unwrap().to_string())
        .collect()
}

/// What `doctor --json` ends its stderr with for `json` (its stdout): nothing when the host is
/// ready, else the one summary line counting the problems the JSON lists. For the tests whose
/// problems depend on this host (its disk, its user); the wording is stated here.
fn json_summary(json: &serde_json::Value) -> String {
    let problems = json["problems"].as_array().expect("problems in doctor's JSON").len();
    let checks = json["checks"].as_array().expect("checks in doctor's JSON").len();
    match problems {
        0 => String::new(),
        n => format!(
            "warning: {n} of {checks} checks failed for this host (`problems` in the JSON on stdout)\n"
        ),
    }
}

fn hosttools_message(conf: &Path) -> String {
    format!("4 HOSTTOOLS missing from PATH: chrpath, cpio, diffstat, gawk ({})", conf.display())
}

#[test]
fn doctor_as_root_with_real_bitbake_conf_names_root_and_the_missing_hosttools() {
    let (test, conf) = doctor_with_real_bitbake_conf(Test::new(), &HIDDEN);
    // The JSON on stdout, and on stderr the one line a failed verify ends with too.
    let run = test.run().code_is(2).stderr_is(
        "warning: 2 of 10 checks failed for this host (`problems` in the JSON on stdout)\n",
    );
    let json = run.json();
    assert_eq!(json["ready"], false);
    assert_eq!(problem_checks(&json), ["user", "hosttools"], "{json:#}");
    assert!(
        json["problems"][0]["message"].as_str().unwrap().starts_with("running as root"),
        "{json:#}"
    );
    assert_eq!(json["problems"][1]["message"], hosttools_message(&conf));
    let fix = json["problems"][1]["fix"].as_str().unwrap();
    assert!(
        fix.starts_with("install them with `sudo apt-get install -y chrpath cpio diffstat gawk`"),
        "{fix}"
    );
    assert!(fix.contains("Fedora: chrpath cpio diffstat gawk"), "{fix}");
    // Every check is listed, whatever its status.
    let checks: Vec<&str> =
        json["checks"].as_array().unwrap().iter().map(|c| c["check"].as_str().unwrap()).collect();
    assert_eq!(
        checks,
        [
            "user",
            "locale",
            "hosttools",
            "python3",
            "git",
            "kas",
            "disk",
            "inotify",
            "open-files",
            "repos"
        ]
    );
}

#[test]
fn doctor_as_user_with_real_bitbake_conf_is_ready_once_the_tools_are_there() {
    let (test, conf) = doctor_with_real_bitbake_conf(Test::new().unprivileged(), &HIDDEN);
    let run = test.run().code_is(2).stderr_is(
        "warning: 1 of 10 checks failed for this host (`problems` in the JSON on stdout)\n",
    );
    let json = run.json();
    assert_eq!(problem_checks(&json), ["hosttools"], "{json:#}");
    assert_eq!(json["problems"][0]["message"], hosttools_message(&conf));

    let (test, conf) = doctor_with_real_bitbake_conf(Test::new().unprivileged(), &[]);
    let run = test.run().success();
    let json = run.json();
    assert_eq!(json["ready"], true, "{json:#}");
    assert_eq!(json["problems"], serde_json::json!([]));
    let hosttools = &json["checks"][2];
    assert_eq!(hosttools["status"], "ok");
    let message = hosttools["message"].as_str().unwrap();
    assert!(message.ends_with(&format!("HOSTTOOLS are on PATH ({})", conf.display())), "{message}");
}

#[test]
fn doctor_prints_each_problem_with_its_fix_and_the_verdict() {
    let test = Test::new();
    let bin = path_without(test.path(), &HIDDEN);
    let missing = format!("file://{}/no-meta-qcom", test.path().display());
    let run = test
        .env("PATH", &bin)
        .args(["doctor", "--meta-qcom-url", &missing, "--kas"])
        .args([venv().join("bin/kas")])
        .run()
        .code_is(2)
        // Text and JSON alike: exit 2 (not ready) and one summary line on stderr.
        .stderr_is("warning: 3 of 10 checks failed for this host (`problem` rows on stdout)\n");
    let stdout = run.stdout();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("problem  user       running as root"), "{stdout}");
    assert!(lines[1].trim_start().starts_with("fix: run rtbuild as an ordinary user"), "{stdout}");
    assert!(
        stdout.contains(
            "problem  hosttools  4 HOSTTOOLS missing from PATH: chrpath, cpio, diffstat, gawk \
             (the HOSTTOOLS of oe-core wrynose)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "problem  repos      repositories kas must clone cannot be reached: {missing}: {}/no-meta-qcom does not exist",
            run.path().display()
        )),
        "{stdout}"
    );
    assert_eq!(lines.last(), Some(&"not ready: 3 problems"), "{stdout}");
}

/// A FAKE kas that answers `--version` as kas 5.5 and records every other call.
fn recording_kas(test: &Test) -> PathBuf {
    let bin = test.path().join("bin");
    let calls = test.path().join("kas-calls");
    write_executable(
        &bin.join("kas"),
        &format!(
            "#!/bin/sh\n# FAKE kas: answers --version, records anything else\n\
             if [ \"$1\" = --version ]; then echo 'kas 5.5 (configuration format version 23)'; exit 0; fi\n\
             echo \"$*\" >> '{}'\nexit 0\n",
            calls.display()
        ),
    );
    bin
}

#[test]
fn image_matrix_and_shell_as_root_stop_before_kas_is_asked_to_build() {
    let commands: [&[&str]; 3] = [
        &["image", "--machine", "rb3gen2-core-kit"],
        &["matrix", "--machines", "rb3gen2-core-kit"],
        &["shell", "--machine", "rb3gen2-core-kit", "-c", "true"],
    ];
    for command in commands {
        let test = Test::new();
        let bin = recording_kas(&test);
        let meta_qcom = format!("file://{}", test.path().display());
        let run = test
            .path_prepend(&bin)
            .args(command)
            .args(["--meta-qcom-url", &meta_qcom])
            .run()
            .code_is(2);
        let stderr = run.stderr();
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(errors.len(), 1, "{command:?}: {}", run.stderr());
        assert!(
            errors[0].starts_with(
                "error: running as root, and BitBake refuses root (oe-core sanity.bbclass: \"Do \
                 not use Bitbake as root.\"); run rtbuild as an ordinary user"
            ),
            "{command:?}: {}",
            run.stderr()
        );
        assert_eq!(run.stdout(), "");
        assert!(!run.path().join("kas-calls").exists(), "{command:?}: kas was asked to run");
        run.nothing_written("rtbuild");
    }
}

#[test]
fn an_unknown_container_engine_is_refused_with_exit_2() {
    for command in ["image", "matrix", "shell", "doctor"] {
        let machine = if command == "matrix" { "--machines" } else { "--machine" };
        Test::new()
            .args([command, machine, "rb3gen2-core-kit", "--container", "lxc"])
            .run()
            .usage_error(
                "unknown container engine `lxc`; use --container docker or --container podman (or \
                 --container alone to use whichever is installed)",
            )
            .nothing_written("rtbuild");
    }
}

/// A RECORDING FAKE container engine: answers kas-container's probes (`docker context show`,
/// `docker -v`) and, for `run`, records one argument per line, prints a BitBake-shaped failure
/// and exits 1. No container starts.
fn fake_engine(test: &Test, engine: &str) -> PathBuf {
    let bin = test.path().join("engine-bin");
    let record = test.path().join(format!("{engine}-run-argv"));
    write_executable(
        &bin.join(engine),
        &format!(
            "#!/bin/sh\n# FAKE {engine}: records `run` arguments, starts nothing\n\
             case \"$1\" in\n\
             context) echo default; exit 0 ;;\n\
             -v) echo 'Docker version 26.1.5'; exit 0 ;;\n\
             run) shift; for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{}'\n\
               echo 'ERROR: Task (/work/meta-qcom/recipes-kernel/linux/linux-qcom-rt_6.18.bb:do_fetch) failed with exit code 1'\n\
               exit 1 ;;\n\
             esac\nexit 0\n",
            record.display()
        ),
    );
    bin
}

/// The recorded argv without kas-container's host timezone pair (it is present only where
/// `timedatectl` is, with the host's zone).
fn recorded_argv(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut argv: Vec<String> = Vec::new();
    for arg in text.lines() {
        if arg.starts_with("KAS_HOST_TZ=") {
            argv.pop();
            continue;
        }
        argv.push(arg.to_string());
    }
    argv
}

#[test]
fn image_in_container_with_recording_fake_docker_mounts_the_folders_in_the_pinned_kas_image() {
    let test = Test::new().unprivileged().file("meta-qcom/README", "stand-in\n");
    let bin = fake_engine(&test, "docker");
    let meta_qcom = format!("file://{}/meta-qcom", test.path().display());
    let user = Unprivileged::get();
    let run = test
        .path_prepend(&bin)
        .path_prepend(venv().join("bin"))
        .args(["image", "--plain", "--machine", "rb3gen2-core-kit", "--container", "docker"])
        .args(["--meta-qcom-url", &meta_qcom])
        .run()
        .code_is(1);
    let dir = run.path();
    let out = dir.join("rtbuild/rb3gen2-core-kit");
    let want: Vec<String> = [
        "-v",
        &format!("{}:/repo:ro", out.display()),
        "-v",
        &format!("{}:/work:rw", dir.join("rtbuild").display()),
        "-e",
        "KAS_WORK_DIR=/work",
        "--workdir=/repo",
        "-e",
        "KAS_CONTAINER_SCRIPT_VERSION=5.5",
        "-e",
        &format!("USER_ID={}", user.uid),
        "-e",
        &format!("GROUP_ID={}", user.gid),
        "--rm",
        "--init",
        "-e",
        "SHELL=/bin/bash",
        "--log-driver=none",
        "--user=root",
        "-e",
        "KAS_BUILD_DIR=/work/rb3gen2-core-kit/build",
        "-e",
        "DL_DIR=/work/downloads",
        "-e",
        "SSTATE_DIR=/work/sstate-cache",
        "ghcr.io/siemens/kas/kas:5.5",
        "build",
        "/repo/rb3gen2-core-kit-rt.yml:/repo/caches.yml",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(recorded_argv(&dir.join("docker-run-argv")), want);
    // The same progress, log and failure report as a build on the host.
    let stderr = run.stderr();
    assert!(stderr.contains("Running "), "{stderr}");
    assert!(stderr.contains("/bin/kas-container build "), "{stderr}");
    assert!(
        stderr.contains("error: build of qcom-multimedia-image for rb3gen2-core-kit failed"),
        "{stderr}"
    );
    assert!(stderr.contains("linux-qcom-rt_6.18:do_fetch"), "{stderr}");
    let log = std::fs::read_to_string(out.join("build/rtbuild-image.log")).unwrap();
    assert!(log.contains("do_fetch) failed with exit code 1"), "{log}");
}

#[test]
fn shell_in_container_with_recording_fake_podman_keeps_the_users_id() {
    let test = Test::new().unprivileged().file("meta-qcom/README", "stand-in\n");
    let bin = fake_engine(&test, "podman");
    let meta_qcom = format!("file://{}/meta-qcom", test.path().display());
    let run = test
        .path_prepend(&bin)
        .path_prepend(venv().join("bin"))
        .args(["shell", "--machine", "rb3gen2-core-kit", "--container", "podman"])
        .args(["--meta-qcom-url", &meta_qcom, "-c", "bitbake -e linux-qcom-rt"])
        .run()
        .ignore_stdout()
        // What ran, as the user reads it (the disk-space warning before it depends on this
        // machine's free space and is left unchecked).
        .stderr_has_line("       Wrote [TMP]/rtbuild/rb3gen2-core-kit/caches.yml")
        .stderr_has_line(&format!(
            "     Running {} shell [TMP]/rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml:[TMP]/rtbuild/rb3gen2-core-kit/caches.yml -c 'bitbake -e linux-qcom-rt'",
            venv().join("bin/kas-container").display()
        ))
        .code_is(1);
    let argv = recorded_argv(&run.path().join("podman-run-argv"));
    let tail: Vec<&str> = argv.iter().rev().take(4).rev().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "shell",
            "-c",
            "bitbake -e linux-qcom-rt",
            "/repo/rb3gen2-core-kit-rt.yml:/repo/caches.yml"
        ]
    );
    for podman_only in ["--security-opt", "label=disable", "--userns=keep-id"] {
        assert!(argv.iter().any(|a| a == podman_only), "{podman_only}: {argv:?}");
    }
    assert!(argv.iter().any(|a| a == "ghcr.io/siemens/kas/kas:5.5"), "{argv:?}");
}

#[test]
fn image_in_container_as_root_is_refused_before_the_engine_runs() {
    let test = Test::new().file("meta-qcom/README", "stand-in\n");
    let bin = fake_engine(&test, "docker");
    let meta_qcom = format!("file://{}/meta-qcom", test.path().display());
    let run = test
        .path_prepend(&bin)
        .path_prepend(venv().join("bin"))
        .args(["image", "--machine", "rb3gen2-core-kit", "--container", "docker"])
        .args(["--meta-qcom-url", &meta_qcom])
        .run()
        .code_is(2)
        .stderr_contains("error: running as root: kas-container refuses root");
    assert!(!run.path().join("docker-run-argv").exists());
    run.nothing_written("rtbuild");
}

#[test]
fn image_container_dry_run_prints_kas_container_with_engine_and_image_version() {
    let run = Test::new()
        .path_prepend(venv().join("bin"))
        .args(["image", "--machine", "rb3gen2-core-kit", "--container", "podman", "--dry-run"])
        .args(["--json"])
        .run()
        .stderr_in_tmp_is(
            "  Generating rb3gen2-core-kit (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)
Would create meta-rtbuild/conf/layer.conf
Would create meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/rtbuild-rt.cfg
Would create meta-rtbuild/recipes-kernel/linux/linux-qcom-rt_6.18.bbappend
Would create meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.service
Would create meta-rtbuild/recipes-rt/rtbuild-tune/files/rtbuild-tune.sh
Would create meta-rtbuild/recipes-rt/rtbuild-tune/rtbuild-tune_1.0.bb
Would create rb3gen2-core-kit-rt.lock.yml
Would create rb3gen2-core-kit-rt.yml
Would create rtbuild-plan.json
     Dry run [TMP]/rtbuild/rb3gen2-core-kit: 9 new, 0 updated, 0 removed, 0 unchanged
 Would write [TMP]/rtbuild/rb3gen2-core-kit/caches.yml
",
        )
        .success();
    let json = run.json();
    assert!(json["command"][0].as_str().unwrap().ends_with("/bin/kas-container"), "{json:#}");
    assert_eq!(json["command"][1], "build");
    let env = json["env"].as_array().unwrap();
    assert!(env.contains(&serde_json::json!(["KAS_CONTAINER_ENGINE", "podman"])), "{json:#}");
    assert!(env.contains(&serde_json::json!(["KAS_IMAGE_VERSION", "5.5"])), "{json:#}");
}

#[test]
fn setup_host_as_a_user_prints_the_root_commands_and_runs_nothing() {
    // This machine and CI are Debian 12: the apt-get form.
    let run = Test::new().unprivileged().args(["setup", "--host"]).run().success();
    let stdout = run.stdout();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q", "{stdout}");
    assert!(
        lines[1].starts_with(
            "sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
             build-essential chrpath cpio"
        ),
        "{stdout}"
    );
    for package in ["gawk", "diffstat", "rpcsvc-proto", "locales"] {
        assert!(lines[1].split(' ').any(|w| w == package), "{package}: {stdout}");
    }
    assert_eq!(
        &lines[2..],
        [
            "sudo sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' /etc/locale.gen",
            "sudo locale-gen"
        ]
    );
    run.stderr_is(
        "note: not root: run these commands as root (e.g. with sudo), then `rtbuild doctor`\n",
    );
}

/// Issue 25 item 8: the disk check names each folder by the variable that sets it and measures
/// the kas work folder the build will use: `--work-dir`, else KAS_WORK_DIR (a flag wins).
#[test]
fn the_disk_check_names_kas_work_dir_and_follows_it() {
    let disk = |test: Test| -> String {
        // The checks are the JSON on stdout; stderr has only the summary line when one failed.
        let run = test.run();
        assert!(matches!(run.code(), 0 | 2), "doctor: {}", run.stderr());
        let json = run.json();
        assert_eq!(run.stderr(), json_summary(&json), "{json:#}");
        let check = json["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "disk")
            .unwrap_or_else(|| panic!("no disk check: {json:#}"))
            .clone();
        check["message"].as_str().unwrap().to_string()
    };
    let base = ["--json", "doctor", "--machine", "rb3gen2-core-kit"];
    let test = Test::new();
    let flag = test.path().join("big/kas");
    let env = test.path().join("env/kas");
    let message =
        disk(test.args(base).args(["--work-dir"]).arg_path(&flag).env("KAS_WORK_DIR", &env));
    assert!(message.contains(&format!("KAS_WORK_DIR {}", flag.display())), "{message}");
    assert!(message.contains(&format!("DL_DIR {}", flag.join("downloads").display())), "{message}");
    assert!(message.contains("SSTATE_DIR "), "{message}");
    let test = Test::new();
    let env = test.path().join("env/kas");
    let message = disk(test.args(base).env("KAS_WORK_DIR", &env));
    assert!(message.contains(&format!("KAS_WORK_DIR {}", env.display())), "{message}");
}
