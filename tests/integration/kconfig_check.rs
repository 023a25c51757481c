//! `rtbuild kconfig-check`: the kernel's own defconfig + merge_config.sh + olddefconfig.
//! The real-kernel test needs Debian's linux-source-6.12 and about 40 s, so it runs only with
//! RTBUILD_SLOW_TESTS=1 (`.ci/setup` then installs the package).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::Test;

const KERNEL_TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";

fn slow_tests() -> bool {
    std::env::var_os("RTBUILD_SLOW_TESTS").is_some_and(|v| v == "1")
}

/// The Kconfig-relevant part of Debian's linux-source-6.12, extracted once per target folder.
fn kernel_tree() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kconfig-check");
    let tree = root.join("linux-source-6.12");
    if tree.join("scripts/kconfig/merge_config.sh").is_file()
        && tree.join("arch/arm64/Kconfig").is_file()
    {
        return tree;
    }
    assert!(
        Path::new(KERNEL_TARBALL).is_file(),
        "{KERNEL_TARBALL} is missing; run `RTBUILD_SLOW_TESTS=1 bash .ci/setup` (linux-source-6.12)"
    );
    std::fs::create_dir_all(&root).unwrap();
    let out = Command::new("tar")
        .args(["-xJf", KERNEL_TARBALL, "--wildcards"])
        .args([
            "*Kconfig*",
            "*/Makefile*",
            "linux-source-6.12/scripts/*",
            "linux-source-6.12/init/*",
        ])
        .args(["linux-source-6.12/arch/arm64/configs/*", "linux-source-6.12/arch/arm64/tools/*"])
        .arg("linux-source-6.12/include/*")
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "tar: {}", String::from_utf8_lossy(&out.stderr));
    tree
}

#[test]
fn real_kernel_tree_keeps_preempt_rt_only_with_expert() {
    if !slow_tests() {
        return;
    }
    let tree = kernel_tree();
    let run = Test::new()
        .file("rt-noexpert.cfg", "CONFIG_PREEMPT_RT=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_CPUSETS=y\n")
        .args([
            "--json",
            "kconfig-check",
            "--arch",
            "arm64",
            "--fragment",
            "rt-noexpert.cfg",
            "--kernel-src",
        ])
        .args([&tree])
        .run()
        .code_is(1);
    let json = run.json();
    let rt = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "CONFIG_PREEMPT_RT")
        .unwrap();
    assert_eq!(rt["status"], "fail");
    assert_eq!(rt["found"], "absent");
    assert!(rt["reason"].as_str().unwrap().contains("CONFIG_EXPERT is not set"), "{rt}");

    let run = Test::new()
        .file("rt-noexpert.cfg", "CONFIG_PREEMPT_RT=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_CPUSETS=y\n")
        .args(["kconfig-check", "--fragment", "rt-noexpert.cfg", "--config", "CONFIG_EXPERT=y"])
        .args(["--out", "o", "--kernel-src"])
        .args([&tree])
        .run()
        .success();
    let run = run.stdout_contains("verdict: PASS (4 checks)");
    let config = std::fs::read_to_string(run.path().join("o/.config")).unwrap();
    assert!(config.contains("\nCONFIG_PREEMPT_RT=y\n"));
}

/// A fake kernel tree: the two files kconfig-check looks for, never run.
fn fake_tree(test: Test) -> Test {
    test.file("linux/scripts/kconfig/merge_config.sh", "#!/bin/sh\nexit 99\n")
        .file("linux/arch/arm64/Kconfig", "")
}

#[test]
fn non_kernel_folder_is_an_input_error() {
    let run = Test::new()
        .file("src/README", "")
        .args(["kconfig-check", "--kernel-src", "src", "--config", "CONFIG_X=y"])
        .run()
        .code_is(2);
    let stderr = run.stderr();
    assert!(stderr.starts_with("error: `/") && stderr.lines().count() == 1, "{stderr}");
    assert!(
        stderr.ends_with(
            "/src` is not a usable kernel source tree: it has no scripts/kconfig/merge_config.sh; pass the unpacked kernel source (e.g. /usr/src/linux-source-6.12)\n"
        ),
        "{stderr}"
    );
}

#[test]
fn missing_kernel_folder_is_an_input_error() {
    let run = Test::new()
        .args(["kconfig-check", "--kernel-src", "nope", "--config", "CONFIG_X=y"])
        .run()
        .code_is(2);
    let stderr = run.stderr();
    assert!(
        stderr.lines().count() == 1
            && stderr.ends_with(
                "/nope` is not a usable kernel source tree: there is no such folder; pass the unpacked kernel source (e.g. /usr/src/linux-source-6.12)\n"
            ),
        "{stderr}"
    );
}

#[test]
fn fake_kernel_tree_rejects_bad_requests_before_running_anything() {
    let run =
        fake_tree(Test::new()).args(["kconfig-check", "--kernel-src", "linux"]).run().code_is(2);
    assert!(
        run.stderr().ends_with("no option requested; pass --fragment or --config\n"),
        "{}",
        run.stderr()
    );
    let run = fake_tree(Test::new())
        .args([
            "kconfig-check",
            "--kernel-src",
            "linux",
            "--arch",
            "riscv",
            "--config",
            "CONFIG_X=y",
        ])
        .run()
        .code_is(2);
    assert!(
        run.stderr().ends_with("it has no arch/riscv/Kconfig; check --arch\n"),
        "{}",
        run.stderr()
    );
    fake_tree(Test::new())
        .args(["kconfig-check", "--kernel-src", "linux", "--config", "CONFIG_X=$(reboot)"])
        .run()
        .usage_error("--config `CONFIG_X=$(reboot)` is not a kernel option: value `$(reboot)` is not y, m, n, a number or a double-quoted string; write it like CONFIG_EXPERT=y");
    let run = fake_tree(Test::new())
        .file("bad.cfg", "CONFIG_A=y\nPREEMPT_RT=y\n")
        .args(["kconfig-check", "--kernel-src", "linux", "--fragment", "bad.cfg"])
        .run()
        .code_is(2);
    assert!(
        run.stderr().contains("bad.cfg` is not a usable kernel config fragment: line 2:"),
        "{}",
        run.stderr()
    );
}
