//! `verify` reads what ships: in a build folder, the deployed kernel (the qcomflash folder's
//! vmlinux, its IKCONFIG) or the image SBOM's kernel configuration wins over `${B}/.config`,
//! which is used only when proven to be the deployed kernel's. The latency killers of the
//! shipped config are warnings, with the fragment that set them when the kernel source is at
//! hand (Debian's linux-source-6.12, `kernel/configs/debug.config`).

use crate::support::harness::Test;
use crate::support::kernel_image::{RT_CONFIG, test_built_image};
use crate::support::kernel_source::kernel_tree;
use crate::support::spdx_fixture::{self, Spec};

const DEPLOY: &str = "build/tmp/deploy/images/rb3gen2-core-kit";
const STEM: &str = "qcom-multimedia-image-rb3gen2-core-kit.rootfs";
const B_CONFIG: &str =
    "build/tmp/work/rb3gen2_core_kit-qcom-linux/linux-qcom-rt/6.18.37/build/.config";
/// What an earlier cold build left in `${B}`: no PREEMPT_RT.
const OLD_CONFIG: &str = "CONFIG_EXPERT=y\nCONFIG_PREEMPT=y\n# CONFIG_PREEMPT_RT is not set\n";

/// A build folder with the stale `${B}/.config` and the image manifest.
fn build_folder(test: Test) -> Test {
    test.file(B_CONFIG, OLD_CONFIG).file(
        &format!("{DEPLOY}/{STEM}.manifest"),
        "rt-tests armv8a 2.8-r0\nstress-ng armv8a 0.18.06-r0\nrtbuild-tune all 1.0-r0\n",
    )
}

/// Deploys a qcomflash folder (and its link) whose vmlinux embeds `config`.
fn deploy_qcomflash(test: Test, config: &str) -> Test {
    let image = test_built_image(config.as_bytes(), "#1 SMP PREEMPT_RT Tue Jul 1 2026");
    let folder = format!("{STEM}-20260701120000.qcomflash");
    let test = test.file(&format!("{DEPLOY}/{folder}/vmlinux"), image);
    std::os::unix::fs::symlink(&folder, test.path().join(format!("{DEPLOY}/{STEM}.qcomflash")))
        .unwrap();
    test
}

fn report(json: &serde_json::Value) -> &serde_json::Value {
    &json["reports"][0]
}

fn check<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report(json)["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {json:#}"))
}

fn notes(json: &serde_json::Value) -> Vec<String> {
    report(json)["notes"]
        .as_array()
        .map_or_else(Vec::new, |n| n.iter().map(|v| v.as_str().unwrap().to_string()).collect())
}

#[test]
fn a_stale_build_folder_config_loses_to_the_deployed_kernel_and_says_so() {
    let test = deploy_qcomflash(build_folder(Test::new()), RT_CONFIG);
    let run = test.args(["--json", "verify", "build", "--machine", "rb3gen2-core-kit"]).run();
    let json = run.success().json();
    let rt = check(&json, "CONFIG_PREEMPT_RT");
    assert_eq!(rt["status"], "pass");
    let vmlinux = format!("{DEPLOY}/{STEM}.qcomflash/vmlinux → IKCONFIG");
    assert!(rt["where"].as_str().unwrap().ends_with(&vmlinux), "{rt}");
    let from = report(&json)["kernel_from"].as_str().unwrap();
    assert!(from.starts_with("deployed qcomflash folder ("), "{from}");
    let stale = notes(&json).into_iter().find(|n| n.contains(".config is not")).unwrap();
    assert!(stale.contains(B_CONFIG) && stale.ends_with("stale, not used"), "{stale}");
    // The config digest verify records is the deployed kernel's, not the stale file's.
    let digest = crate::support::fixtures::sha256_hex(RT_CONFIG.as_bytes());
    assert_eq!(report(&json)["config_sha256"], digest);
}

#[test]
fn the_build_folder_config_is_used_as_the_deployed_kernels_when_the_digests_match() {
    let test = deploy_qcomflash(Test::new(), RT_CONFIG).file(B_CONFIG, RT_CONFIG);
    let run = test.args(["--json", "verify", "build", "--machine", "rb3gen2-core-kit"]).run();
    let json = run.success().json();
    let same = notes(&json).into_iter().find(|n| n.contains("same config digest")).unwrap();
    assert!(same.contains(&crate::support::fixtures::sha256_hex(RT_CONFIG.as_bytes())), "{same}");
}

#[test]
fn without_ikconfig_the_image_sboms_kernel_config_is_read() {
    // A deployed kernel without IKCONFIG, and the SBOM oe-core's model wrote with the RT config.
    let mut image: Vec<u8> = vec![7u8; 8192];
    image.extend_from_slice(b"Linux version 6.18.37-rt (oe@b) #1 SMP PREEMPT_RT Tue Jul 1\n\0");
    let folder = format!("{STEM}-20260701120000.qcomflash");
    let test = build_folder(Test::new()).file(&format!("{DEPLOY}/{folder}/vmlinux"), image);
    std::os::unix::fs::symlink(&folder, test.path().join(format!("{DEPLOY}/{STEM}.qcomflash")))
        .unwrap();
    let sbom = test.path().join(format!("{DEPLOY}/{STEM}-20260701120000.spdx.json"));
    let spec = Spec { kernel_config: spdx_fixture::config_pairs(RT_CONFIG), ..Spec::default() };
    spdx_fixture::make(&spec, &sbom, None);
    std::os::unix::fs::symlink(
        sbom.file_name().unwrap(),
        test.path().join(format!("{DEPLOY}/{STEM}.spdx.json")),
    )
    .unwrap();
    let run = test.args(["--json", "verify", "build", "--machine", "rb3gen2-core-kit"]).run();
    let json = run.success().json();
    let rt = check(&json, "CONFIG_PREEMPT_RT");
    assert_eq!(rt["status"], "pass");
    assert!(rt["where"].as_str().unwrap().ends_with(".spdx.json → kernel configuration"), "{rt}");
    assert_eq!(check(&json, "kernel version")["status"], "pass");
    assert!(notes(&json).iter().any(|n| n.contains(".config is not the deployed")), "{json:#}");
}

#[test]
fn a_qcomflash_kernel_without_any_config_does_not_fall_back_on_the_stale_config() {
    let mut image: Vec<u8> = vec![7u8; 8192];
    image.extend_from_slice(b"Linux version 6.18.37-rt (oe@b) #1 SMP PREEMPT_RT Tue Jul 1\n\0");
    let folder = format!("{STEM}-20260701120000.qcomflash");
    let test = build_folder(Test::new()).file(&format!("{DEPLOY}/{folder}/vmlinux"), image);
    std::os::unix::fs::symlink(&folder, test.path().join(format!("{DEPLOY}/{STEM}.qcomflash")))
        .unwrap();
    let run = test.args(["--json", "verify", "build", "--machine", "rb3gen2-core-kit"]).run();
    let json = run.success().json();
    assert_eq!(check(&json, "requested options")["status"], "skip");
    assert!(notes(&json).iter().any(|n| n.contains("cannot be proven to be its: not used")));
}

#[test]
fn latency_killers_are_warnings_naming_the_kernels_debug_config() {
    let tree = kernel_tree();
    let debug = std::fs::read_to_string(tree.join("kernel/configs/debug.config")).unwrap();
    // What meta-qcom's DEBUG_BUILD does to the RT kernel: the RT config plus debug.config.
    let config = format!("{RT_CONFIG}{debug}");
    let test = deploy_qcomflash(Test::new(), &config);
    let run = test
        .args(["--json", "verify", "build", "--machine", "rb3gen2-core-kit", "--kernel-src"])
        .arg_path(&tree)
        .run();
    let json = run.success().json();
    let warnings = report(&json)["warnings"].as_array().unwrap();
    let named = |symbol: &str| {
        warnings
            .iter()
            .find(|w| w["check"] == symbol)
            .unwrap_or_else(|| panic!("no warning for {symbol}: {warnings:#?}"))
    };
    for symbol in [
        "CONFIG_PROVE_LOCKING",
        "CONFIG_DEBUG_OBJECTS",
        "CONFIG_SLUB_DEBUG_ON",
        "CONFIG_KASAN",
        "CONFIG_DEBUG_ATOMIC_SLEEP",
        "CONFIG_DEBUG_KMEMLEAK",
    ] {
        let w = named(symbol);
        assert_eq!(w["found"], "y");
        assert!(
            w["reason"].as_str().unwrap().ends_with("set by kernel/configs/debug.config"),
            "{w}"
        );
    }
    // Messages and the tracers rtla needs are not latency killers.
    for symbol in ["CONFIG_PRINTK_TIME", "CONFIG_FTRACE", "CONFIG_DEBUG_INFO"] {
        assert!(warnings.iter().all(|w| w["check"] != symbol), "{symbol} warned");
    }
    // Warnings do not fail the verdict; the table shows them.
    let test = deploy_qcomflash(Test::new(), &config);
    let run = test.args(["verify", "build", "--machine", "rb3gen2-core-kit"]).run();
    run.success().stdout_contains("warning: CONFIG_KASAN=y in ");
}
