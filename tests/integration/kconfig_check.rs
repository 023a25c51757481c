//! `rtbuild kconfig-check`: the kernel's own defconfig + merge_config.sh + olddefconfig, on
//! Debian's real linux-source-6.12 (`.ci/setup` installs it; see [`crate::support::kernel_source`]).

use crate::support::harness::Test;
use crate::support::kernel_source::{kernel_tree, line_of};

#[test]
fn real_kernel_tree_keeps_preempt_rt_only_with_expert() {
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
        .code_is(1)
        // The summary line a failed verify ends with, built by the same helper.
        .stderr_is(&format!(
            "warning: 1 of 3 checks failed for {} (status `fail` in the JSON on stdout)\n",
            tree.display()
        ));
    let json = run.json();
    let rt = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "CONFIG_PREEMPT_RT")
        .unwrap();
    assert_eq!(rt["status"], "fail");
    assert_eq!(rt["found"], "absent");
    // The reason is read from the tree's own Kconfig, naming the line that says so.
    let line = line_of("kernel/Kconfig.preempt", "depends on EXPERT && ARCH_SUPPORTS_RT");
    assert_eq!(
        rt["reason"],
        format!(
            "CONFIG_PREEMPT_RT depends on EXPERT && ARCH_SUPPORTS_RT (kernel/Kconfig.preempt:{line}), \
             but CONFIG_EXPERT is not set; add CONFIG_EXPERT=y to the fragment"
        )
    );

    // The table on stdout, and the same line pointing at its FAIL rows.
    Test::new()
        .file("rt-noexpert.cfg", "CONFIG_PREEMPT_RT=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_CPUSETS=y\n")
        .args(["kconfig-check", "--fragment", "rt-noexpert.cfg", "--kernel-src"])
        .args([&tree])
        .run()
        .code_is(1)
        .stdout_contains("verdict: FAIL")
        .stderr_is(&format!(
            "warning: 1 of 3 checks failed for {} (FAIL rows in the table on stdout)\n",
            tree.display()
        ));

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
