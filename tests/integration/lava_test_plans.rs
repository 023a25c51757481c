//! `rtbuild lava` against what Qualcomm's lab renders: the real qualcomm-linux/lava-test-plans
//! templates (a checkout named by `RTBUILD_LAVA_TEST_PLANS`), rendered with jinja2 the way its
//! `lava_test_plans` command sets jinja2 up (its four template folders, strict undefined
//! variables, loop controls) and with the variables meta-qcom's test workflow passes it
//! (`.github/actions/lava-test-plans`: `PROJECT=projects/meta-qcom/`, `OS_INFO=qcom-distro`,
//! `IMAGE_FILE_NAME=<image>-<machine>.rootfs.qcomflash.tar.gz`, `ROOTFS_URL`, the qcom-distro
//! login, `--device-type projects/meta-qcom/devices/<machine>`). For every catalog board the
//! lab lists, the lab's part of the job must be equal field by field: device type, context,
//! the deploy, each qdl flashing stage, the login boot. Tests get no network and the
//! templates are not copied into this repository, so the test needs a checkout and is ignored
//! without one.

use std::process::Command;

use serde_json::Value;

use crate::support::harness::Test;

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

fn render(root: &str, device: &str, machine: &str, extra: &[(&str, &str)]) -> Value {
    let mut context = serde_json::json!({
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
    });
    for (k, v) in extra {
        context[*k] = (*v).into();
    }
    let out = Command::new("/usr/bin/python3")
        .args(["-c", RENDER, root, device])
        .arg(context.to_string())
        .output()
        .expect("python3 runs (.ci/setup installs python3-jinja2)");
    assert!(
        out.status.success(),
        "lava-test-plans does not render {device}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn rtbuild_job(machine: &str, extra: &[&str]) -> Value {
    let url = URL.replace("MACHINE", machine);
    let run = Test::new()
        .args(["lava", "--machine", machine, "--bundle-url", &url, "--distro", "qcom-distro"])
        .args(extra.iter().copied())
        .run()
        .success()
        .stderr_is("");
    serde_yaml::from_str(&run.stdout()).unwrap()
}

/// The actions of `kind` (`deploy`, `boot`) in order.
fn actions<'a>(job: &'a Value, kind: &str) -> Vec<&'a Value> {
    job["actions"].as_array().unwrap().iter().filter_map(|a| a.get(kind)).collect()
}

#[test]
#[ignore = "needs a lava-test-plans checkout: RTBUILD_LAVA_TEST_PLANS=DIR (git clone of qualcomm-linux/lava-test-plans)"]
fn lava_test_plans_renders_the_same_lab_actions() {
    let root = std::env::var("RTBUILD_LAVA_TEST_PLANS")
        .expect("set RTBUILD_LAVA_TEST_PLANS to a qualcomm-linux/lava-test-plans checkout");
    let boards = [
        "rb3gen2-core-kit",
        "iq-9075-evk",
        "qcs8300-ride-sx",
        "iq-8275-evk",
        "qcs615-ride",
        "qcs9100-ride-sx",
        "iq-x7181-evk",
    ];
    for machine in boards {
        let lab = render(&root, &format!("projects/meta-qcom/devices/{machine}"), machine, &[]);
        let ours = rtbuild_job(machine, &[]);
        assert_eq!(ours["device_type"], lab["device_type"], "{machine}");
        assert_eq!(ours["context"], lab["context"], "{machine}");
        let (lab_deploys, our_deploys) = (actions(&lab, "deploy"), actions(&ours, "deploy"));
        assert_eq!(our_deploys, lab_deploys, "{machine}: the qdl deploy");
        let (lab_boots, our_boots) = (actions(&lab, "boot"), actions(&ours, "boot"));
        assert_eq!(our_boots.len(), lab_boots.len(), "{machine}: {lab_boots:?}");
        // Every qdl stage exactly; the login boot in what the lab sets (auto-login, prompts,
        // method, timeout).
        let (last_lab, last_ours) = (lab_boots.len() - 1, our_boots.len() - 1);
        assert_eq!(our_boots[..last_ours], lab_boots[..last_lab], "{machine}: qdl stages");
        for key in ["auto_login", "prompts", "method", "timeout"] {
            assert_eq!(our_boots[last_ours][key], lab_boots[last_lab][key], "{machine}: {key}");
        }
    }
    // The flasher deploy (`--deploy flasher`), against the lab's flasher device file for the
    // same board: the download as it is, the same postprocess steps, the same flasher images.
    let machine = "iq-9075-evk";
    let lab = render(&root, "devices/iq-9075-evk", machine, &[("flasher_device_type", machine)]);
    let ours = rtbuild_job(machine, &["--deploy", "flasher", "--device-type", machine]);
    assert_eq!(ours["device_type"], lab["device_type"]);
    let (lab_deploys, our_deploys) = (actions(&lab, "deploy"), actions(&ours, "deploy"));
    assert_eq!(our_deploys[0]["images"], lab_deploys[0]["images"]);
    assert_eq!(
        our_deploys[0]["postprocess"]["docker"]["steps"],
        lab_deploys[0]["postprocess"]["docker"]["steps"]
    );
    assert_eq!(our_deploys[1]["to"], lab_deploys[1]["to"]);
    assert_eq!(our_deploys[1]["images"], lab_deploys[1]["images"]);
}
