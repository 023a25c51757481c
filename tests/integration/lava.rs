//! `rtbuild lava` job definitions checked by LAVA's own schema (Debian's `lava-common`,
//! `lava_common.schemas.validate(job, strict=True)` through the system python3), bad input,
//! and `rtbuild report` on a LAVA job log built from the job's own steps run here with the
//! real cyclictest and stress-ng (a FAKE `lava-test-case` and `rtbuild-tune.sh` stand in for
//! LAVA's test shell helpers and the image's script).

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::lava_job::{comparable, host_board, lava_schema, run_job_steps};

/// `rtbuild lava ARGS` for meta-qcom master's lab (lava-test-plans a20c74e: qdl).
fn lava(args: &[&str]) -> String {
    Test::new()
        .args(["lava", "--meta-qcom-branch", "master"])
        .args(args.iter().copied())
        .run()
        .success()
        .stdout()
}

#[test]
fn jobs_are_valid_under_lavas_own_schema_and_flash_boot_and_measure() {
    let cases: &[(&[&str], &str, &[&str])] = &[
        (
            &["--machine", "qcs6490-rb3gen2", "--bundle-url", "https://ci.example.com/rb3.tar.gz"],
            "qcs6490-rb3gen2",
            &["idle", "stress"],
        ),
        (
            &[
                "--machine",
                "rb3gen2-core-kit",
                "--bundle-url",
                "https://ci.example.com/qcom-multimedia-image-rb3gen2-core-kit.rootfs.qcomflash.tar.gz",
                "--deploy",
                "flasher",
            ],
            "qcs6490-rb3gen2",
            &["idle", "stress"],
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--bundle-url",
                "https://s3.example.com/a/core-image-base-iq-9075-evk.rootfs.qcomflash.tar.gz?X-Sig=ab%2F",
                "--distro",
                "nodistro",
                "--scenario",
                "idle,stress,full,stress-isolated",
                "--duration",
                "osadl",
                "--device-type",
                "qcs9075-rb8",
                "--tags",
                "ufs,lab-2",
                "--threshold-us",
                "80",
                "--cyclictest-args",
                "--spike=250 -b 500",
            ],
            "qcs9075-rb8",
            &["idle", "stress", "full", "stress-isolated"],
        ),
        (
            &[
                "--machine",
                "qcs615-ride",
                "--bundle-url",
                "http://10.0.0.2:8080/qcs615-ride.tar.gz",
                "--scenario",
                "stress,custom",
                "--load-cmd",
                "stress-ng -c 2 --io 1",
                "--duration",
                "soak",
            ],
            "qcs615-ride",
            &["stress", "custom"],
        ),
    ];
    for (args, device_type, scenarios) in cases {
        let text = lava(args);
        assert_eq!(text, lava(args), "{args:?}: not deterministic");
        if let Err(why) = lava_schema(&text) {
            panic!("{args:?}: LAVA rejects the job: {why}\n{text}");
        }
        let job: Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(job["device_type"], *device_type);
        assert_eq!(job["context"]["test_character_delay"], 10);
        let actions = job["actions"].as_array().unwrap();
        let url = args[args.iter().position(|a| *a == "--bundle-url").unwrap() + 1];
        let machine = job["metadata"]["rtbuild.machine"].as_str().unwrap();
        if args.contains(&"flasher") {
            let download = &actions[0]["deploy"];
            assert_eq!(download["to"], "downloads");
            assert_eq!(download["images"]["flasher"]["url"], url);
            assert!(download["images"]["flasher"].get("compression").is_none(), "{text}");
            let flash = &actions[1]["deploy"];
            assert_eq!(flash["to"], "flasher");
            assert!(flash["images"]["image"]["url"].as_str().unwrap().starts_with("downloads://"));
        } else {
            let deploy = &actions[0]["deploy"];
            assert_eq!(deploy["to"], "qdl", "{text}");
            assert_eq!(deploy["qcomflash"]["url"], url);
            assert!(actions[1]["boot"]["method"] == "qdl", "{text}");
        }
        let boot = &actions[actions.len() - 2]["boot"];
        assert_eq!(boot["method"], "minimal");
        assert_eq!(boot["auto_login"]["username"], "root");
        assert_eq!(boot["prompts"][1], "root@(.*):[/~]#");
        let test = &actions[actions.len() - 1]["test"];
        let definition = &test["definitions"][0]["repository"];
        for key in ["name", "format", "description", "maintainer", "os", "devices", "scope"] {
            assert!(definition["metadata"].get(key).is_some(), "no metadata {key}: {text}");
        }
        assert_eq!(definition["metadata"]["devices"][0], *device_type);
        let script = job_script(&job);
        assert!(
            script.contains("lava-test-case rtbuild-tune-verify --shell rtbuild-tune.sh verify\n")
        );
        assert!(script.contains(&format!(" machine={machine} ")), "{script}");
        for scenario in *scenarios {
            let function = format!("scenario_{}() {{\n", scenario.replace('-', "_"));
            let at = script.find(&function).unwrap_or_else(|| panic!("no {function}: {script}"));
            let step = &script[at..at + script[at..].find("\n}\n").unwrap()];
            assert!(step.contains(&format!("lava-test-case cyclictest-{scenario} ")), "{step}");
            assert!(step.contains("--units us"), "{step}");
            if *scenario == "custom" {
                assert!(step.contains("timeout 86520 stress-ng -c 2 --io 1 "), "{step}");
            }
            if args.contains(&"--cyclictest-args") {
                assert!(
                    step.contains("-q --json=") && step.contains(" --spike=250 -b 500 "),
                    "{step}"
                );
            }
            assert!(step.contains(&format!("<<<RTBUILD-RAW-BEGIN scenario={scenario} ")), "{step}");
            assert!(step.lines().all(|l| l.len() < 600), "one command per line: {step}");
        }
        // The test shell waits out a whole silent scenario; the job outlasts every action.
        let shell = job["timeouts"]["connections"]["lava-test-shell"]["minutes"].as_u64().unwrap();
        let test = test["timeout"]["minutes"].as_u64().unwrap();
        assert!(shell * scenarios.len() as u64 <= test + 5 * scenarios.len() as u64, "{text}");
    }
}

/// The script the job's test definition writes and runs (its first step is `cat > … <<'END'`,
/// the script, `END`).
fn job_script(job: &Value) -> String {
    let actions = job["actions"].as_array().unwrap();
    let test = &actions.last().unwrap()["test"];
    let step = test["definitions"][0]["repository"]["run"]["steps"][0].as_str().unwrap();
    let (head, body) = step.split_once('\n').unwrap();
    assert!(head.starts_with("cat > rtbuild-rt.sh <<'"), "{head}");
    format!("{}\n", body.rsplit_once('\n').unwrap().0)
}

/// The script on the board is plain POSIX sh that shellcheck passes (every test, every
/// scenario, a custom load, test arguments).
#[test]
fn the_test_definition_script_is_shellcheck_clean() {
    let text = lava(&[
        "--machine",
        "iq-9075-evk",
        "--bundle-url",
        "https://h.example/b.tar.gz",
        "--scenario",
        "idle,stress,full,stress-isolated,hackbench,custom",
        "--load-cmd",
        "stress-ng -c 2",
        "--tests",
        "oslat,cyclictest,cyclicdeadline,pmqtest,ptsematest,sigwaittest,svsematest,signaltest,pi_stress,rt-migrate-test,ssdd,hwlatdetect",
        "--test-args",
        "oslat=-D 10",
    ]);
    let job: Value = serde_yaml::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rtbuild-rt.sh");
    fs::write(&path, job_script(&job)).unwrap();
    let out = Command::new("shellcheck")
        .args(["--shell=sh", "--severity=style"])
        .arg(&path)
        .output()
        .expect("shellcheck runs (.ci/setup installs it)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

/// The help of every flag `rtbuild lava` and `rtbuild test` share, keyed by flag: the lines
/// from `      --FLAG` up to the next flag.
fn flag_help(command: &str) -> std::collections::BTreeMap<String, String> {
    let text = Test::new().args([command, "--help"]).run().success().stdout();
    let mut flags = std::collections::BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        // The Examples section after the flags is no flag's help.
        if line.starts_with("Examples:") {
            break;
        }
        let trimmed = line.trim_start();
        // Flags start within the first 6 columns; wrapped help lines are indented further.
        let indent = line.len() - trimmed.len();
        if indent <= 6 && trimmed.starts_with('-') && trimmed.contains("--") {
            flags.extend(current.take());
            let flag = trimmed.split_whitespace().find(|w| w.starts_with("--")).unwrap();
            current = Some((flag.to_string(), String::new()));
        }
        if let Some((_, help)) = current.as_mut() {
            help.push_str(trimmed);
            help.push(' ');
        }
    }
    flags.extend(current);
    flags
}

#[test]
fn lava_and_test_share_every_measurement_flag_with_the_same_help() {
    let lava = flag_help("lava");
    let test = flag_help("test");
    for flag in [
        "--scenario",
        "--duration",
        "--load-cmd",
        "--load-unpinned",
        "--load",
        "--interval-us",
        "--histogram-us",
        "--cyclictest-args",
        "--tests",
        "--test-args",
        "--noise-us",
    ] {
        let (a, b) = (lava.get(flag), test.get(flag));
        assert!(a.is_some() && b.is_some(), "{flag}: lava {a:?}, test {b:?}");
        // `rtbuild lava --help` is printed in two columns, `rtbuild test --help` (longer) in
        // rows: compare the words.
        let words = |t: &str| t.split_whitespace().skip(1).collect::<Vec<_>>().join(" ");
        assert_eq!(words(a.unwrap()), words(b.unwrap()), "{flag}");
    }
    assert!(test["--tests"].contains("[default: cyclictest]"), "{}", test["--tests"]);
    assert!(lava["--noise-us"].contains("[default: 20]"), "{}", lava["--noise-us"]);
}

#[test]
fn the_schema_check_is_not_vacuous() {
    let text = lava(&["--machine", "iq-8275-evk", "--bundle-url", "https://h.example/b.tar.gz"]);
    let job: Value = serde_yaml::from_str(&text).unwrap();
    let mut short = job.clone();
    short["timeouts"]["job"]["minutes"] = 1.into();
    let err = lava_schema(&serde_yaml::to_string(&short).unwrap()).unwrap_err();
    assert!(err.contains("timeout is larger than job timeout"), "{err}");
    let mut extra = job.clone();
    let login = job["actions"].as_array().unwrap().len() - 2;
    extra["actions"][login]["boot"]["login"] = "root".into();
    assert!(lava_schema(&serde_yaml::to_string(&extra).unwrap()).is_err());
}

#[test]
fn bad_input_is_one_line_exit_2_and_writes_nothing() {
    let url = "https://h.example/b.tar.gz";
    let cases: &[(&[&str], &str)] = &[
        (&["--machine", "qcs649", "--bundle-url", url], "error: unknown machine `qcs649`"),
        (&["--bundle-url", url], "error: rtbuild lava needs --machine NAME"),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", "/srv/b.tar.zst"],
            "error: bad --bundle-url `/srv/b.tar.zst`: it is not an http:// or https:// URL; pass",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", "https://h/$(reboot).tar.zst"],
            "error: bad --bundle-url `https://h/$(reboot).tar.zst`: it contains a character",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", "https://h/image.ext4"],
            "error: bad --bundle-url `https://h/image.ext4`: its file is not a .tar.zst",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--duration", "8d"],
            "error: 2 scenarios of --duration 8d make a LAVA job of",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--lava-version", "2026.7"],
            "error: bad --lava-version `2026.7`; pass a LAVA release as YYYY.MM",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--meta-qcom-branch",
                "master",
                "--bundle-url",
                url,
                "--lava-version",
                "2025.10",
            ],
            "error: LAVA 2025.10 has no qdl deploy (it arrived in 2026.06); pass --lava-version 2026.06 or later",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--meta-qcom-branch",
                "master",
                "--bundle-url",
                "https://h/b.tar.zst",
            ],
            "error: --bundle-url names `b.tar.zst`, but LAVA's qdl deploy unpacks the archive with gzip;",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--bundle-url",
                url,
                "--qcomflash-header",
                "QLIAuthorization: Bearer x",
            ],
            "error: bad --qcomflash-header `QLIAuthorization: Bearer x`; pass NAME=VAR",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--bundle-url",
                url,
                "--qcomflash-header",
                "X-Token=$(id)",
            ],
            "error: bad --qcomflash-header `X-Token=$(id)`; pass NAME=VAR",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--bundle-url",
                url,
                "--qcomflash-header",
                "X-Token=RTBUILD_TEST_UNSET_TOKEN",
            ],
            "error: --qcomflash-header X-Token: the environment variable RTBUILD_TEST_UNSET_TOKEN is empty or not set; set it",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--bundle-url",
                url,
                "--duration",
                "2d",
                "--scenario",
                "idle,stress,full,stress-isolated,idle",
            ],
            "error: 4 scenarios of --duration 2d make a LAVA job of 194 h, longer than the 168 h",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--duration", "5 min"],
            "error: bad duration `5 min`",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--device-type", "x';reboot;'"],
            "error: bad --device-type `x';reboot;'`",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--tags", "ok,a b"],
            "error: bad --tags entry `a b`",
        ),
        (
            &["--machine", "iq-615-evk", "--bundle-url", url, "--deploy", "qdl"],
            "error: --deploy qdl needs the board's qdl stages, and the catalog has no qdl profile for `iq-615-evk`; pass --deploy flasher",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--deploy", "fastboot"],
            "error: unknown --deploy `fastboot`; use qdl, flasher or qemu",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--image", "img;reboot"],
            "error: bad --image `img;reboot`",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--scenario", "idle,$(id)"],
            "error: unknown scenario `$(id)`",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--cyclictest-args", "-D 10"],
            "error: --cyclictest-args: `-D` conflicts with what rtbuild sets",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--scenario", "idle,custom"],
            "error: scenario `custom` runs the --load-cmd load",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--distro", "poky"],
            "error: unknown distro",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--tests", "oslat,$(reboot)"],
            "error: unknown test `$(reboot)` in --tests; use cyclictest, cyclicdeadline, oslat,",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--tests", "hackbench"],
            "error: hackbench is a load, not a test; run it with --scenario hackbench",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--test-args", "oslat=-D 10m"],
            "error: --test-args oslat: oslat is not in --tests; add it there",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--bundle-url",
                url,
                "--tests",
                "oslat",
                "--test-args",
                "oslat=-D 1m ; reboot",
            ],
            "error: --test-args oslat: `;` only means something to a shell",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--bundle-url",
                url,
                "--tests",
                "oslat",
                "--test-args",
                "oslat=-c 0",
            ],
            "error: --test-args oslat: `-c` conflicts with what rtbuild sets",
        ),
        (
            &["--machine", "iq-9075-evk", "--bundle-url", url, "--test-args", "hackbench=-p"],
            "error: --test-args hackbench: no hackbench scenario runs",
        ),
        (
            &[
                "--machine",
                "iq-9075-evk",
                "--bundle-url",
                url,
                "--tests",
                "oslat,cyclictest,pmqtest",
                "--test-args",
                "oslat=-D 7d",
                "--duration",
                "1d",
            ],
            "error: 2 scenarios of --duration 1d make a LAVA job of",
        ),
    ];
    for (args, want) in cases {
        let run = Test::new()
            .args(["lava"])
            .args(args.iter().copied())
            .args(["--out", "job.yaml"])
            .run()
            .code_is(2);
        let stderr = run.stderr();
        assert!(stderr.starts_with(want), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("; ") || stderr.contains("pass "),
            "{args:?}: says how to fix: {stderr}"
        );
        assert_eq!(run.stdout(), "");
        assert!(!run.path().join("job.yaml").exists(), "{args:?}");
    }
}

/// One LAVA log entry as `lavacli jobs logs --raw` prints it (a double-quoted flow mapping).
fn entry(lvl: &str, msg: &str) -> String {
    format!(
        "- {{\"dt\": \"2026-11-30T15:00:00.000000\", \"lvl\": \"{lvl}\", \"msg\": {}}}\n",
        serde_json::to_string(msg).unwrap()
    )
}

/// The console as LAVA logs it, with a kernel message landing inside the first raw output
/// whose begin marker starts with `inject_after`.
fn console_log(console: &str, inject_after: &str) -> String {
    let mut log = entry("info", "lava-dispatcher, installed at version: 2023.01");
    let mut injected = false;
    for line in console.lines() {
        log.push_str(&entry("target", line));
        if line.starts_with(inject_after) && !injected {
            log.push_str(&entry("target", "[  812.123456] sched: RT throttling activated"));
            injected = true;
        }
    }
    log
}

#[test]
fn a_lava_log_of_the_jobs_own_steps_reports_like_the_raw_outputs() {
    let _one_at_a_time = crate::support::measuring::measuring();
    let test = Test::new();
    let root = test.path().to_path_buf();
    let (rt, housekeeping) = host_board(&root.join("machines"));
    let made = test
        .args(["lava", "--machine", "host-board", "--machines-dir", "machines"])
        .args(["--bundle-url", "https://h.example/b.tar.gz", "--distro", "nodistro"])
        .args(["--scenario", "idle,stress", "--duration", "4s", "--histogram-us", "200000"])
        .args(["--threshold-us", "1000000", "--out", "job.yaml"])
        .run()
        .ignore_stdout()
        .stderr_is("       Wrote job.yaml (LAVA job for host-board)\n")
        .success();
    let console = run_job_steps(&root);
    let mut log = console_log(&console, "<<<RTBUILD-RAW-BEGIN");
    log.push_str("- {\"dt\": \"2026-11-30T15:00:09.000000\", \"lvl\": \"results\", \"msg\": {\"case\": \"cyclictest-idle\", \"definition\": \"1_rtbuild-rt\", \"result\": \"pass\"}}\n");
    fs::write(root.join("lava.yaml"), &log).unwrap();

    let report = |inputs: &[&str], stderr: &str| {
        let run = Test::new()
            .cwd(&root)
            .args(["report", "--json", "--threshold-us", "1000000"])
            .args(inputs.iter().copied())
            .run()
            .stderr_is(stderr);
        assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
        run.json()
    };
    // The kernel message the log holds inside idle's raw output is left out, and said so.
    let from_log = report(
        &["lava.yaml"],
        "warning: lava.yaml#idle: 1 kernel message line inside the raw output was left out\n",
    );
    let work = root.join("tmp/rtbuild-lava");
    let idle = work.join("idle.json");
    let stress = work.join("stress.json");
    let from_files = report(&[idle.to_str().unwrap(), stress.to_str().unwrap()], "");

    assert_eq!(from_log["inputs"][0]["kind"], "lava-log");
    let log_scenarios = from_log["inputs"][0]["scenarios"].as_array().unwrap();
    assert_eq!(log_scenarios.len(), 2, "{from_log}");
    for (i, name) in ["idle", "stress"].iter().enumerate() {
        let a = &log_scenarios[i];
        let b = &from_files["inputs"][i]["scenarios"][0];
        assert_eq!(a["name"], *name);
        assert_eq!(comparable(a), comparable(b), "{name}: the log and the raw file disagree");
        assert!(a["all"]["samples"].as_u64().unwrap() > 0, "{a}");
        // The job asked the real cyclictest for its status (SIGUSR1 at 1 and 2 s of 4 s) and
        // printed the blocks: the convergence is known from them, for every thread.
        assert_eq!(a["convergence_unknown"], Value::Null, "{name}: {a}");
        for thread in a["threads"].as_array().unwrap() {
            let snapshots = thread["convergence"]["snapshots"].as_u64().unwrap_or(0);
            assert!(snapshots >= 1, "{name}: {thread}");
        }
        // Asked for its status, cyclictest still measured the whole run and exited 0.
        assert!(a["invalid_reasons"].as_array().unwrap().is_empty(), "{name}: {a}");
    }
    assert!(
        log_scenarios[0]["warnings"]
            .to_string()
            .contains("1 kernel message line inside the raw output was left out"),
        "{}",
        log_scenarios[0]
    );

    // The LAVA test cases: the RT check, the tuning check, one per scenario with its max.
    let cases = fs::read_to_string(root.join("cases.txt")).unwrap();
    let lines: Vec<&str> = cases.lines().collect();
    assert_eq!(lines[0].split(' ').next(), Some("preempt-rt"), "{cases}");
    assert_eq!(lines[1], "rtbuild-tune-verify --result pass", "{cases}");
    for (i, name) in ["idle", "stress"].iter().enumerate() {
        let max = log_scenarios[i]["all"]["max_us"].as_f64().unwrap();
        assert_eq!(
            lines[2 + i],
            format!("cyclictest-{name} --result pass --measurement {max} --units us"),
            "{cases}"
        );
    }
    // cyclictest measured on the RT CPU, as `rtbuild test` would have run it.
    let stress_cmd = log_scenarios[1]["commands"].to_string();
    assert!(stress_cmd.contains(&format!("-a {rt} ")), "{stress_cmd}");
    assert!(
        stress_cmd.contains(&format!(
            "--mainaffinity={}",
            housekeeping.rsplit(['-', ',']).next().unwrap()
        )),
        "{stress_cmd}"
    );
    drop(made);
}

/// Live processes whose working folder is inside `root` (the job's steps `cd` there, so every
/// test and load they start does): other test runs on this machine do not count.
fn processes_in(root: &Path) -> Vec<String> {
    let root = root.canonicalize().unwrap();
    let mut left = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cwd) = fs::read_link(entry.path().join("cwd")) else { continue };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else { continue };
        let zombie = stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z'));
        if cwd.starts_with(&root) && !zombie {
            left.push(format!(
                "{} ({})",
                stat.split_whitespace().nth(1).unwrap_or("?"),
                entry.file_name().to_string_lossy()
            ));
        }
    }
    left
}

/// The LAVA case line `NAME …` recorded by the FAKE `lava-test-case`.
fn case<'a>(cases: &'a str, name: &str) -> &'a str {
    cases
        .lines()
        .find(|l| l.split(' ').next() == Some(name))
        .unwrap_or_else(|| panic!("no LAVA test case {name}: {cases}"))
}

#[test]
fn a_lava_job_runs_the_rt_tests_like_rtbuild_test_and_report_reads_each_from_its_log() {
    let _one_at_a_time = crate::support::measuring::measuring();
    let test = Test::new();
    let root = test.path().to_path_buf();
    let (rt, housekeeping) = host_board(&root.join("machines"));
    let main_cpu = housekeeping.rsplit(['-', ',']).next().unwrap().to_string();
    let list = "cyclictest,pmqtest,oslat,pi_stress,rt-migrate-test,ssdd,hwlatdetect";
    // The run owns the test's folder: keep it until the end.
    let _made = test
        .args(["lava", "--machine", "host-board", "--machines-dir", "machines"])
        .args(["--bundle-url", "https://h.example/b.tar.gz", "--distro", "nodistro"])
        .args(["--scenario", "idle,hackbench", "--duration", "1s", "--histogram-us", "200000"])
        .args(["--tests", list, "--test-args", "oslat=-D 2", "--test-args", "hackbench=-p"])
        .args(["--out", "job.yaml"])
        .run()
        .ignore_stdout()
        .stderr_is("       Wrote job.yaml (LAVA job for host-board)\n")
        .success();
    let job_text = fs::read_to_string(root.join("job.yaml")).unwrap();
    if let Err(why) = lava_schema(&job_text) {
        panic!("LAVA rejects the job: {why}\n{job_text}");
    }
    let console = run_job_steps(&root);
    assert_eq!(processes_in(&root), Vec::<String>::new(), "left running");
    // hackbench, the load, pinned to the housekeeping CPUs with the user's -p, as `rtbuild
    // test` runs it.
    assert!(job_text.contains(&format!("taskset -c {housekeeping} timeout ")), "{job_text}");
    assert!(job_text.contains(" hackbench -g "), "{job_text}");
    let log = console_log(&console, "<<<RTBUILD-RAW-BEGIN scenario=idle test=oslat");
    fs::write(root.join("lava.yaml"), &log).unwrap();

    let report = |inputs: &[&Path]| {
        let run = Test::new().cwd(&root).args(["report", "--json"]).args(inputs).run();
        assert!(run.code() == 0 || run.code() == 1, "{}", run.stderr());
        run.json()
    };
    let from_log = report(&[Path::new("lava.yaml")]);
    let input = &from_log["inputs"][0];
    assert_eq!(input["kind"], "lava-log");
    let scenarios = input["scenarios"].as_array().unwrap();
    let names: Vec<&str> = scenarios.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["idle", "hackbench"]);
    let cases = fs::read_to_string(root.join("cases.txt")).unwrap();
    let work = root.join("tmp/rtbuild-lava");
    for scenario in scenarios {
        let name = scenario["name"].as_str().unwrap();
        let tests = scenario["tests"].as_array().unwrap();
        let reported: Vec<&str> = tests.iter().map(|t| t["test"].as_str().unwrap()).collect();
        // oslat first; cyclictest is the scenario's own figures.
        assert_eq!(
            reported,
            ["oslat", "pmqtest", "pi_stress", "rt-migrate-test", "ssdd", "hwlatdetect"],
            "{name}"
        );
        assert!(scenario["all"]["samples"].as_u64().unwrap() > 0, "{name}: {scenario}");
        for t in tests {
            let program = t["test"].as_str().unwrap();
            let verdict = t["verdict"].as_str().unwrap().to_lowercase();
            let lava = case(&cases, &format!("{program}-{name}"));
            if program == "hwlatdetect" && t["skipped"].is_string() {
                // This kernel has no hwlat tracer (no tracefs here): skipped on both sides.
                assert!(t["skipped"].as_str().unwrap().contains("no hwlat tracer"), "{t}");
                assert_eq!(lava, format!("hwlatdetect-{name} --result skip"));
                continue;
            }
            // Ran where it was placed, exited well, wrote its results: judged, not invalid.
            assert!(verdict == "pass" || verdict == "fail", "{name}: {program}: {t}");
            assert!(!t["reasons"].to_string().contains("invalid run"), "{name}: {program}: {t}");
            // The board's own verdict (the LAVA test case) is the report's.
            let board = if verdict == "pass" { "pass" } else { "fail" };
            assert!(
                lava.starts_with(&format!("{program}-{name} --result {board}")),
                "{lava} vs {t}"
            );
            // The same figures as reading the raw output file itself.
            let label =
                if program == "pmqtest" { format!("pmqtest-cpu{rt}") } else { program.to_string() };
            let file = work.join(format!("{name}.{label}.json"));
            let from_file = report(&[&file]);
            let direct = &from_file["inputs"][0]["scenarios"][0]["tests"][0];
            assert_eq!(t["rows"], direct["rows"], "{name}: {program}");
            assert_eq!(t["commands"], direct["commands"], "{name}: {program}");
            if matches!(program, "oslat" | "pmqtest") {
                let rows = t["rows"].as_array().unwrap();
                assert!(
                    !rows.is_empty() && rows.iter().all(|r| r["cpu"] == rt),
                    "{program}: {rows:?}"
                );
                let max = rows.iter().map(|r| r["max_us"].as_f64().unwrap()).fold(0.0, f64::max);
                assert!(lava.ends_with(&format!(" --measurement {max} --units us")), "{lava}");
            }
        }
        let oslat = &tests[0];
        assert!(
            oslat["commands"][0].as_str().unwrap().starts_with(&format!(
                "oslat -c {rt} -C {main_cpu} -q --json={name}.oslat.json -D 2"
            )),
            "{oslat}"
        );
        assert!(!oslat["rows"][0]["histogram"].as_array().unwrap().is_empty(), "{oslat}");
        let ct = case(&cases, &format!("cyclictest-{name}"));
        let ct_max = scenario["all"]["max_us"].as_f64().unwrap();
        assert!(ct.ends_with(&format!(" --measurement {ct_max} --units us")), "{ct}");
    }
    // JUnit: a case per test and scenario, as for a local run.
    let junit_run = Test::new()
        .cwd(&root)
        .args(["report", "--junit", "junit.xml", "lava.yaml"])
        .run()
        .ignore_stdout()
        .stderr_is("       Wrote junit.xml\n");
    assert!(junit_run.code() == 0 || junit_run.code() == 1, "{}", junit_run.stderr());
    crate::support::harness::assert_junit_valid(&root.join("junit.xml"));
    let junit = fs::read_to_string(root.join("junit.xml")).unwrap();
    for name in ["idle", "hackbench"] {
        for program in ["cyclictest", "oslat", "pmqtest", "pi_stress", "rt-migrate-test", "ssdd"] {
            assert!(
                junit.contains(&format!("name=\"{name}: {program}")),
                "{name}: {program}: {junit}"
            );
        }
    }
}

#[test]
fn an_injection_attempt_in_test_args_stays_one_argument_on_the_board() {
    let _one_at_a_time = crate::support::measuring::measuring();
    let test = Test::new();
    let root = test.path().to_path_buf();
    host_board(&root.join("machines"));
    let made = test
        .args(["lava", "--machine", "host-board", "--machines-dir", "machines"])
        .args(["--bundle-url", "https://h.example/b.tar.gz", "--distro", "nodistro"])
        .args(["--scenario", "idle", "--duration", "1s", "--tests", "oslat"])
        .args(["--test-args", "oslat=-w \"$(touch pwned)\" -m '`touch pwned2`'"])
        .args(["--out", "job.yaml"])
        .run()
        .success()
        .ignore_stdout()
        .stderr_is("       Wrote job.yaml (LAVA job for host-board)\n");
    let console = run_job_steps(&root);
    assert!(!root.join("pwned").exists() && !root.join("pwned2").exists(), "{console}");
    assert!(!root.join("tmp/rtbuild-lava/pwned").exists(), "{console}");
    // oslat got the words as its arguments, refused them, and the log says so.
    fs::write(root.join("lava.yaml"), console_log(&console, "<<<never")).unwrap();
    // The invalid oslat run fails the verdict (exit 1).
    let run = Test::new().cwd(&root).args(["report", "--json", "lava.yaml"]).run().code_is(1);
    let oslat = &run.json()["inputs"][0]["scenarios"][0]["tests"][0];
    let reasons = oslat["reasons"].to_string();
    assert!(reasons.contains("invalid run: oslat exited with code 1 on the board: "), "{oslat}");
    assert!(reasons.contains("wrote no JSON results"), "{oslat}");
    let cases = fs::read_to_string(root.join("cases.txt")).unwrap();
    assert_eq!(case(&cases, "oslat-idle"), "oslat-idle --result fail", "{cases}");
    drop(made);
}

/// A download header's value comes from the environment, never the command line, and a line
/// break in it (which would forge more headers) is refused; the value is in the job only where
/// LAVA sends it, its name in the metadata.
#[test]
fn download_headers_come_from_the_environment_and_cannot_forge_more() {
    let url = "https://h.example/b.tar.gz";
    let args =
        ["lava", "--machine", "iq-9075-evk", "--meta-qcom-branch", "master", "--bundle-url", url];
    let run = Test::new()
        .args(args)
        .args(["--qcomflash-header", "QLIAuthorization=LAB_TOKEN", "--out", "job.yaml"])
        .env("LAB_TOKEN", "Bearer ok\r\nX-Evil: 1")
        .run()
        .code_is(2);
    assert_eq!(
        run.stderr(),
        "error: --qcomflash-header QLIAuthorization: the environment variable LAB_TOKEN holds a line break, a control or a non-ASCII character; set it (from a CI secret) to the header's value, printable ASCII on one line\n"
    );
    assert!(!run.path().join("job.yaml").exists());
    let text = Test::new()
        .args(args)
        .args(["--qcomflash-header", "QLIAuthorization=LAB_TOKEN"])
        .env("LAB_TOKEN", "Bearer s3cr3t-value")
        .run()
        .success()
        .stderr_is("")
        .stdout();
    lava_schema(&text).unwrap();
    let job: Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(
        job["actions"][0]["deploy"]["qcomflash"]["headers"]["QLIAuthorization"],
        "Bearer s3cr3t-value"
    );
    assert_eq!(job["metadata"]["rtbuild.download-headers"], "QLIAuthorization");
    assert_eq!(text.matches("s3cr3t-value").count(), 1, "{text}");
}

/// meta-qcom removed `ci/qcom-distro-kvm.yml` (#2879, #3189): `lava` defaults to qcom-distro
/// as `image` and `generate` do, and `--distro qcom-distro-kvm` (or `KAS_DISTRO`) unfolds to
/// qcom-distro with a note, as the plan unfolds it.
#[test]
fn the_default_distro_is_qcom_distro_and_the_kvm_alias_unfolds_to_it() {
    let job = |extra: &[&str], env: Option<&str>| {
        let mut test = Test::new()
            .args(["lava", "--meta-qcom-branch", "master", "--machine", "qcs6490-rb3gen2"])
            .args(["--bundle-url", "https://ci.example.com/rb3.tar.gz"])
            .args(extra.iter().copied());
        if let Some(value) = env {
            test = test.env("KAS_DISTRO", value);
        }
        let run = test.run().success();
        let stderr = run.stderr();
        let job: Value = serde_yaml::from_str(&run.stdout()).unwrap();
        (job, stderr)
    };
    let (default, stderr) = job(&[], None);
    assert_eq!(default["metadata"]["rtbuild.distro"], "qcom-distro", "{default}");
    assert!(!stderr.contains("alias"), "{stderr}");
    let login = &default["actions"].as_array().unwrap().iter().rev().nth(1).unwrap()["boot"];
    assert_eq!(login["auto_login"]["password_prompt"], "Password", "{login}");
    for (extra, env) in
        [(&["--distro", "qcom-distro-kvm"][..], None), (&[][..], Some("qcom-distro-kvm"))]
    {
        let (alias, stderr) = job(extra, env);
        assert_eq!(alias, default, "{extra:?} {env:?}: the alias is qcom-distro's job");
        assert!(
            stderr.contains(
                "note: --distro qcom-distro-kvm is kept as an alias of --distro qcom-distro"
            ),
            "{stderr}"
        );
    }
    let (nodistro, _) = job(&["--distro", "nodistro"], None);
    assert_eq!(nodistro["metadata"]["rtbuild.distro"], "nodistro");
}

/// Each SCHED_FIFO thread of `pid` and its `Cpus_allowed_list`, read from /proc.
fn fifo_threads_allowed(pid: u32) -> Vec<String> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut allowed = Vec::new();
    for task in dir.filter_map(Result::ok) {
        let status = fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let stat = fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // Field 41 of stat is the policy (1: SCHED_FIFO); the text after `) ` starts at 3.
        let fifo = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split_whitespace().nth(41 - 3))
            .is_some_and(|p| p == "1");
        let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"));
        if let (true, Some(list)) = (fifo, list) {
            allowed.push(list.trim().to_string());
        }
    }
    allowed
}

/// `rtbuild lava --threads 4 --unpinned` (the RK3588 guide's unpinned threads): the job's own
/// steps, run here as the board runs them with the real cyclictest, start cyclictest under
/// `taskset -c` with exactly the RT CPU, so each of its 4 measuring threads, read from /proc
/// by this test during the run, may run on the RT CPU only (as `rtbuild test --unpinned`).
#[test]
fn a_lava_jobs_unpinned_threads_run_on_exactly_the_measured_cpus() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let _one_at_a_time = crate::support::measuring::measuring();
    let test = Test::new();
    let root = test.path().to_path_buf();
    let (rt, _) = host_board(&root.join("machines"));
    let made = test
        .args(["lava", "--machine", "host-board", "--machines-dir", "machines"])
        .args(["--bundle-url", "https://h.example/b.tar.gz", "--distro", "nodistro"])
        .args(["--scenario", "idle", "--duration", "3s", "--threads", "4", "--unpinned"])
        .args(["--interval-us", "1019", "--threshold-us", "1000000", "--out", "job.yaml"])
        .run()
        .ignore_stdout()
        .stderr_is("       Wrote job.yaml (LAVA job for host-board)\n")
        .success();
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                for pid in
                    crate::support::processes::processes_with_args("cyclictest", &["-i", "1019"])
                {
                    let seen = fifo_threads_allowed(pid);
                    if seen.len() == 4 {
                        return seen;
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Vec::new()
        })
    };
    let console = run_job_steps(&root);
    done.store(true, Ordering::SeqCst);
    let seen = watcher.join().unwrap();
    assert_eq!(seen.len(), 4, "the test never saw cyclictest's 4 threads: {console}");
    assert!(seen.iter().all(|a| *a == rt.to_string()), "RT CPU {rt}: {seen:?}");
    let job = fs::read_to_string(root.join("job.yaml")).unwrap();
    assert!(job.contains(&format!("taskset -c {rt} cyclictest -m -p 99 -t 4 ")), "{job}");
    drop(made);
}

/// The board's state as the job's `rtbuild_state` prints it (no `interrupts` before).
fn board_state(
    scenario: &str,
    when: &str,
    irqs: &str,
    balancers: &str,
    dmesg: &str,
) -> Vec<String> {
    let mut lines = vec![format!("<<<RTBUILD-STATE-BEGIN scenario={scenario} when={when}>>>")];
    if when == "after" {
        lines.push("=== interrupts".into());
        lines.push("           CPU0       CPU1       ".into());
        lines.push(
            " 24:       1201          0   PCI-MSI 512000-edge      ahci[0000:00:1f.2]".into(),
        );
        lines.push(" 31:        977          0   GICv3 165 Level     ufshcd".into());
    }
    lines.push("=== irq_affinity".into());
    lines.extend(irqs.lines().map(String::from));
    lines.push("=== irqbalance".into());
    lines.extend(balancers.lines().map(String::from));
    lines.push("=== kernel_warnings".into());
    lines.extend(dmesg.lines().map(String::from));
    lines.push(format!("<<<RTBUILD-STATE-END scenario={scenario} when={when}>>>"));
    lines
}

/// A golden LAVA log of one scenario `idle` on RT CPU 1: the RUN marker (with the state
/// checks unless `old`), the state before, cyclictest's real 2.4 JSON (max 477 µs on CPU 1),
/// the state after; `before`/`after` are (irq_affinity, irqbalance, dmesg) and `extra` lines
/// are inserted just before the after state.
fn golden_log(
    old: bool,
    before: (&str, &str, &str),
    after: (&str, &str, &str),
    inside_raw: &[&str],
    extra: &[String],
) -> String {
    let json =
        fs::read_to_string(crate::support::harness::data("cyclictest-2.4-json-1thread-cpu1.json"))
            .unwrap();
    let checks = if old { "" } else { " checks=irq-affinity,kernel-log" };
    let mut lines = vec![format!(
        "<<<RTBUILD-RUN machine=qcs6490-rb3gen2 threshold_us=100 noise_us=20 rt_cpus=1 tests=cyclictest scenarios=idle duration=3{checks}>>>"
    )];
    if !old {
        lines.extend(board_state("idle", "before", before.0, before.1, before.2));
    }
    lines.push(
        "<<<RTBUILD-RAW-BEGIN scenario=idle test=cyclictest run=cyclictest format=json>>>".into(),
    );
    lines.extend(json.lines().map(String::from));
    lines.extend(inside_raw.iter().map(|l| l.to_string()));
    lines.push("<<<RTBUILD-RAW-END scenario=idle test=cyclictest run=cyclictest exit=0>>>".into());
    lines.extend(extra.iter().cloned());
    if !old {
        lines.extend(board_state("idle", "after", after.0, after.1, after.2));
    }
    let mut log = entry("info", "lava-dispatcher, installed at version: 2026.07");
    for line in lines {
        log.push_str(&entry("target", &line));
    }
    log
}

/// `rtbuild report --json --threshold-us 1000` of `log`, whose stderr is exactly `stderr`: its
/// exit code and the one scenario.
fn report_log(log: &str, stderr: &str) -> (i32, Value) {
    let test = Test::new();
    fs::write(test.path().join("lava.yaml"), log).unwrap();
    let run = test
        .args(["report", "--json", "--threshold-us", "1000", "lava.yaml"])
        .run()
        .stderr_is(stderr);
    let code = run.code();
    let json = run.json();
    (code, json["inputs"][0]["scenarios"][0].clone())
}

/// What `report` says of a log from a job older than the board states.
const OLD_JOB_WARNING: &str = "warning: lava.yaml#idle: the LAVA job printed no state of the board around this scenario (a job from an older `rtbuild lava`), so IRQs moved onto the RT CPUs and kernel warnings during the run were not checked\n";

const BOOT_WARNING: &str = "[    2.000000] WARNING: CPU: 0 PID: 1 at drivers/x.c:10 probe+0x1/0x2";

/// #39 item 7 on the board: the state the LAVA job prints before and after each scenario is
/// judged by `rtbuild test`'s rules. An IRQ moved onto the RT CPU (naming it and irqbalance)
/// and RT throttling make the scenario INVALID; `BUG:`, `WARNING:`, `Oops` and
/// `hrtimer: interrupt took` logged during it FAIL it (`fail_reasons`), whatever the latency;
/// a warning from boot (in both states) does not. A log without states (an older job) is
/// judged as before, with a warning that the checks were not made.
#[test]
fn a_lava_log_is_judged_by_the_boards_irq_affinity_and_kernel_log_like_rtbuild_test() {
    let still = ("24 0 0\n31 0 0\n", "", BOOT_WARNING);
    // Clean: PASS (477 µs against 1000), the boot warning no reason.
    let (code, s) = report_log(&golden_log(false, still, still, &[], &[]), "");
    assert_eq!((code, s["verdict"].as_str()), (0, Some("PASS")), "{s:#}");
    // An IRQ moved onto RT CPU 1 while irqbalance ran: INVALID, naming the IRQ and irqbalance.
    let (code, s) = report_log(
        &golden_log(false, still, ("24 0-1 1\n31 0 0\n", "812 -\n", BOOT_WARNING), &[], &[]),
        "",
    );
    assert_eq!((code, s["verdict"].as_str()), (1, Some("INVALID")), "{s:#}");
    let reasons = s["invalid_reasons"].to_string();
    assert!(
        reasons.contains("IRQ 24 (PCI-MSI 512000-edge ahci[0000:00:1f.2]) moved onto RT CPU 1 during the run (affinity 0 → 1): irqbalance runs (pid 812)"),
        "{reasons}"
    );
    // RT throttling during the run: INVALID.
    let throttled = format!("{BOOT_WARNING}\n[  100.000001] sched: RT throttling activated");
    let (code, s) =
        report_log(&golden_log(false, still, ("24 0 0\n31 0 0\n", "", &throttled), &[], &[]), "");
    assert_eq!((code, s["verdict"].as_str()), (1, Some("INVALID")), "{s:#}");
    assert!(s["invalid_reasons"].to_string().contains("sched: RT throttling activated"), "{s:#}");
    // Each kernel gate line logged during the run: FAIL, with the line.
    for line in [
        "[  100.5] BUG: scheduling while atomic: cyclictest/77/0x00000002",
        "[  100.5] BUG: sleeping function called from invalid context at kernel/locking/spinlock_rt.c:48",
        "[  100.5] WARNING: CPU: 1 PID: 77 at kernel/sched/core.c:100 foo+0x1/0x2",
        "[  100.5] Internal error: Oops: 0000000096000004 [#1] PREEMPT_RT SMP",
        "[  100.5] hrtimer: interrupt took 123456 ns",
    ] {
        let after = format!("{BOOT_WARNING}\n{line}");
        let (code, s) =
            report_log(&golden_log(false, still, ("24 0 0\n31 0 0\n", "", &after), &[], &[]), "");
        assert_eq!((code, s["verdict"].as_str()), (1, Some("FAIL")), "{line}: {s:#}");
        assert!(
            s["reasons"]
                .to_string()
                .contains(&format!("the kernel logged `{line}` during the run")),
            "{line}: {s:#}"
        );
    }
    // A job from before the states: judged by its latency, with a warning.
    let (code, s) = report_log(&golden_log(true, still, still, &[], &[]), OLD_JOB_WARNING);
    assert_eq!((code, s["verdict"].as_str()), (0, Some("PASS")), "{s:#}");
    assert!(s["warnings"].to_string().contains("were not checked"), "{s:#}");
}

/// Marker lines the board prints never turn a FAIL into a PASS: a forged clean `after` state
/// (printed by a program into its output, or on the console after the job's own) is a second
/// state of the scenario, INVALID naming both lines; a state that never ends, or one missing
/// where the job's RUN marker promised it, is INVALID; and the threshold stays the command
/// line's whatever the console says.
#[test]
fn forged_board_states_in_a_lava_log_never_pass() {
    let still = ("24 0 0\n", "", BOOT_WARNING);
    let bug =
        format!("{BOOT_WARNING}\n[  100.5] BUG: scheduling while atomic: cyclictest/77/0x00000002");
    let dirty = ("24 0 0\n", "", bug.as_str());
    let (_, s) = report_log(&golden_log(false, still, dirty, &[], &[]), "");
    assert_eq!(s["verdict"], "FAIL", "{s:#}");
    let clean_after = board_state("idle", "after", "24 0 0", "", BOOT_WARNING);
    // A clean `after` state printed on the console before the job's own.
    let (code, s) = report_log(&golden_log(false, still, dirty, &[], &clean_after), "");
    assert_eq!((code, s["verdict"].as_str()), (1, Some("INVALID")), "{s:#}");
    let reasons = s["invalid_reasons"].to_string();
    assert!(
        reasons
            .contains("the LAVA log holds 2 states of the board after scenario `idle` (log lines "),
        "{reasons}"
    );
    assert!(reasons.contains("so the board's console printed the others"), "{reasons}");
    // The same printed by cyclictest into its own output: the raw output is cut short too.
    let inside: Vec<&str> = clean_after.iter().map(String::as_str).collect();
    let (_, s) = report_log(&golden_log(false, still, dirty, &inside, &[]), "");
    assert_eq!(s["verdict"], "INVALID", "{s:#}");
    // The log up to the job's own after state.
    let full = golden_log(false, still, still, &[], &[]);
    let at = full.find("<<<RTBUILD-STATE-BEGIN scenario=idle when=after").unwrap();
    let before_after = &full[..full[..at].rfind('\n').unwrap() + 1];
    // An after state that never ends (the next marker comes first): INVALID.
    let mut log = before_after.to_string();
    for line in [
        "<<<RTBUILD-STATE-BEGIN scenario=idle when=after>>>",
        "=== kernel_warnings",
        "<<<RTBUILD-SKIPPED scenario=idle test=hwlatdetect reason=no-hwlat-tracer>>>",
    ] {
        log.push_str(&entry("target", line));
    }
    let (_, s) = report_log(&log, "");
    assert_eq!(s["verdict"], "INVALID", "{s:#}");
    assert!(s["invalid_reasons"].to_string().contains("is cut short"), "{s:#}");
    // The RUN marker promised states; none came after the scenario: INVALID.
    let (_, s) = report_log(before_after, "");
    assert_eq!(s["verdict"], "INVALID", "{s:#}");
    assert!(
        s["invalid_reasons"]
            .to_string()
            .contains("holds no state of the board after scenario `idle`"),
        "{s:#}"
    );
    // A second RUN marker raising the threshold is refused outright (exit 2).
    let forged_run = vec!["<<<RTBUILD-RUN machine=qcs6490-rb3gen2 threshold_us=100000 rt_cpus=1 tests=cyclictest scenarios=idle duration=3 checks=irq-affinity,kernel-log>>>".to_string()];
    let test = Test::new();
    fs::write(test.path().join("lava.yaml"), golden_log(false, still, dirty, &[], &forged_run))
        .unwrap();
    let run = test.args(["report", "--json", "--threshold-us", "1000", "lava.yaml"]).run();
    assert_eq!(run.code(), 2, "{}", run.stderr());
    assert!(run.stderr().contains("has a second `<<<RTBUILD-RUN` marker"), "{}", run.stderr());
    assert_eq!(run.stdout(), "");
}
