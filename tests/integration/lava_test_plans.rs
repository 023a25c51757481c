//! `rtbuild lava` against what Qualcomm's lab renders, at both pins meta-qcom's CI uses: the real
//! qualcomm-linux/lava-test-plans templates of the snapshot (`a20c74e`, meta-qcom master's pin:
//! qdl; `62f75dd`, wrynose's pin: flasher), rendered offline with Debian's python3-jinja2 the
//! way its `lava_test_plans` command sets jinja2 up (its four template folders, strict
//! undefined variables, loop controls) and with the variables meta-qcom's test workflow passes
//! it (`.github/actions/lava-test-plans`: `PROJECT=projects/meta-qcom/`, `OS_INFO=qcom-distro`,
//! `IMAGE_FILE_NAME=<image>-<machine>.rootfs.qcomflash.tar.gz`, `ROOTFS_URL`, the qcom-distro
//! login, `--device-type projects/meta-qcom/devices/<machine>`; the lab's download header as
//! `AUTH_HEADER_NAME`/`AUTH_HEADER_TOKEN`). For every catalog board the lab lists, the lab's part
//! of the job must be equal field by field: device type, context, each deploy, each qdl flashing
//! stage, the login boot (auto-login, prompts, method).
//!
//! What differs on purpose, and is therefore not compared: timeouts of the flasher deploy and
//! its boot (a multi-GB RT bundle gets more than the templates' 5/12/2 minutes), the
//! postprocess container image (rtbuild's `debian:bookworm-slim`, the templates' `debian:buster`),
//! and `overlay_path`, which a20c74e writes and LAVA 2026.07 refuses (compared with
//! `--lava-version 2026.06`, where rtbuild writes it too).

use std::process::Command;

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::lab_snapshots::snapshots;
use crate::support::lava_job::lava_schema;

/// Renders one job from the checkout at `root` as the lab would: prints it as JSON.
const RENDER: &str = r#"
import json, os, sys, yaml
from jinja2 import Environment, FileSystemLoader, StrictUndefined
root, device, context = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
ltp = os.path.join(root, "lava_test_plans")
folders = [ltp, os.path.join(ltp, "testplans"), os.path.join(ltp, "testcases"),
           os.path.join(ltp, "projects/meta-qcom/devices")]
env = Environment(loader=FileSystemLoader(folders, followlinks=True),
                  undefined=StrictUndefined, extensions=["jinja2.ext.loopcontrols"])
context["device_type"] = device
case = '{% extends "testcases/templates/master.jinja2" %}{% set test_name = "rtbuild" %}'
print(json.dumps(yaml.safe_load(env.from_string(case).render(context))))
"#;

const URL: &str = "https://ci.example.com/b/qcom-multimedia-image-MACHINE.rootfs.qcomflash.tar.gz";
const HEADER: &str = "QLIAuthorization";
const TOKEN: &str = "Bearer lab-token-1234";

fn render(rev: &str, machine: &str) -> Value {
    let root = snapshots().test_plans(rev);
    let context = serde_json::json!({
        "PROJECT": "projects/meta-qcom/",
        "PROJECT_NAME": "meta-qcom",
        "OS_INFO": "qcom-distro",
        "BUILD_NUMBER": "1",
        "LAVA_JOB_PRIORITY": "50",
        "IMAGE_FILE_NAME": format!("qcom-multimedia-image-{machine}.rootfs.qcomflash.tar.gz"),
        "ROOTFS_URL": URL.replace("MACHINE", machine),
        "AUTO_LOGIN_PASSWORD_PROMPT": "Password",
        "AUTO_LOGIN_PASSWORD": "oelinux123",
        "BUILD_URL": "",
        "AUTH_HEADER_NAME": HEADER,
        "AUTH_HEADER_TOKEN": TOKEN,
    });
    let device = format!("projects/meta-qcom/devices/{machine}");
    let out = Command::new("/usr/bin/python3")
        .args(["-c", RENDER])
        .arg(&root)
        .arg(&device)
        .arg(context.to_string())
        .output()
        .expect("python3 runs (.ci/setup installs python3-jinja2)");
    assert!(
        out.status.success(),
        "lava-test-plans {rev} does not render {device}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// rtbuild's job for `machine` built from meta-qcom `branch`, with the lab's header; checked
/// by LAVA 2026.07's strict schema unless written for another release.
fn rtbuild_job(machine: &str, branch: &str, extra: &[&str]) -> Value {
    let url = URL.replace("MACHINE", machine);
    let run = Test::new()
        .args(["lava", "--machine", machine, "--bundle-url", &url, "--distro", "qcom-distro"])
        .args(["--meta-qcom-branch", branch])
        .args(["--qcomflash-header", &format!("{HEADER}=RTBUILD_TEST_LAB_TOKEN")])
        .env("RTBUILD_TEST_LAB_TOKEN", TOKEN)
        .args(extra.iter().copied())
        .run()
        .success()
        .stderr_is("");
    let text = run.stdout();
    if !extra.contains(&"--lava-version") {
        lava_schema(&text).unwrap_or_else(|why| panic!("{machine} ({branch}): {why}\n{text}"));
    }
    serde_yaml::from_str(&text).unwrap()
}

/// The actions of `kind` (`deploy`, `boot`) in order.
fn actions<'a>(job: &'a Value, kind: &str) -> Vec<&'a Value> {
    job["actions"].as_array().unwrap().iter().filter_map(|a| a.get(kind)).collect()
}

const BOARDS: [&str; 7] = [
    "rb3gen2-core-kit",
    "iq-9075-evk",
    "qcs8300-ride-sx",
    "iq-8275-evk",
    "qcs615-ride",
    "qcs9100-ride-sx",
    "iq-x7181-evk",
];

/// The login boot: what the lab sets.
fn same_login(ours: &Value, lab: &Value, what: &str, with_timeout: bool) {
    let mut keys = vec!["auto_login", "prompts", "method"];
    if with_timeout {
        keys.push("timeout");
    }
    for key in keys {
        assert_eq!(ours[key], lab[key], "{what}: boot {key}");
    }
}

#[test]
fn lava_test_plans_a20c74e_master_renders_the_same_qdl_actions() {
    for machine in BOARDS {
        let lab = render("a20c74e", machine);
        for version in ["2026.06", "2026.07"] {
            let what = format!("{machine} (master, LAVA {version})");
            let ours = rtbuild_job(
                machine,
                "master",
                if version == "2026.06" { &["--lava-version", "2026.06"] } else { &[] },
            );
            assert_eq!(ours["device_type"], lab["device_type"], "{what}");
            assert_eq!(ours["context"], lab["context"], "{what}");
            let mut lab_deploys: Vec<Value> =
                actions(&lab, "deploy").into_iter().cloned().collect();
            if version == "2026.07" {
                // a20c74e still writes it; 2026.07's schema refuses it (lava-test-plans PR #83).
                lab_deploys[0].as_object_mut().unwrap().remove("overlay_path");
            }
            let our_deploys: Vec<Value> = actions(&ours, "deploy").into_iter().cloned().collect();
            assert_eq!(our_deploys, lab_deploys, "{what}: the qdl deploy");
            let (lab_boots, our_boots) = (actions(&lab, "boot"), actions(&ours, "boot"));
            assert_eq!(our_boots.len(), lab_boots.len(), "{what}: {lab_boots:?}");
            let (last_lab, last_ours) = (lab_boots.len() - 1, our_boots.len() - 1);
            assert_eq!(our_boots[..last_ours], lab_boots[..last_lab], "{what}: qdl stages");
            same_login(our_boots[last_ours], lab_boots[last_lab], &what, true);
        }
    }
}

#[test]
fn lava_test_plans_62f75dd_wrynose_renders_the_same_flasher_actions() {
    for machine in BOARDS {
        let what = format!("{machine} (wrynose)");
        let lab = render("62f75dd", machine);
        // wrynose is rtbuild's default meta-qcom branch: no flag needed.
        let ours = {
            let url = URL.replace("MACHINE", machine);
            let run = Test::new()
                .args(["lava", "--machine", machine, "--bundle-url", &url, "--distro"])
                .args(["qcom-distro", "--qcomflash-header", &format!("{HEADER}=LAB_TOKEN")])
                .env("LAB_TOKEN", TOKEN)
                .run()
                .success();
            lava_schema(&run.stdout()).unwrap_or_else(|why| panic!("{what}: {why}"));
            serde_yaml::from_str::<Value>(&run.stdout()).unwrap()
        };
        assert_eq!(ours, rtbuild_job(machine, "wrynose", &[]), "{what}: the default branch");
        assert_eq!(ours["device_type"], lab["device_type"], "{what}");
        assert_eq!(ours["context"], lab["context"], "{what}");
        let (lab_deploys, our_deploys) = (actions(&lab, "deploy"), actions(&ours, "deploy"));
        assert_eq!(our_deploys.len(), 2, "{what}");
        assert_eq!(lab_deploys.len(), 2, "{what}");
        for (i, to) in ["downloads", "flasher"].iter().enumerate() {
            assert_eq!(our_deploys[i]["to"], *to, "{what}");
            assert_eq!(our_deploys[i]["to"], lab_deploys[i]["to"], "{what}");
            assert_eq!(our_deploys[i]["images"], lab_deploys[i]["images"], "{what}: {to} images");
        }
        assert_eq!(
            our_deploys[0]["postprocess"]["docker"]["steps"],
            lab_deploys[0]["postprocess"]["docker"]["steps"],
            "{what}: flash.settings"
        );
        let (lab_boots, our_boots) = (actions(&lab, "boot"), actions(&ours, "boot"));
        assert_eq!((our_boots.len(), lab_boots.len()), (1, 1), "{what}");
        same_login(our_boots[0], lab_boots[0], &what, false);
    }
}
