//! `rtbuild verify` on real Debian kernel configs, test-built kernel images (IKCONFIG in the
//! kernel's own layout, Image.gz, UKI), packages and tarballs made with the real dpkg-deb and
//! tar, fixture build folders in both layouts, and every kind of bad input.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What verify says on stderr when it has no plan to check against.
const NO_PLAN_NOTE: &str = "note: no plan given (--machine or --plan): only PREEMPT_RT, the command line and rt-tests were checked\n";

/// Where the summary of a failed `verify` points: the table, or the JSON with --json.
const TABLE: &str = "FAIL rows in the table on stdout";
const JSON: &str = "status `fail` in the JSON on stdout";

/// The one line a failed verify ends with: how many of its checks failed, for which source,
/// and where the failed rows are.
fn failed(count: &str, source: &str, place: &str) -> String {
    format!("warning: {count} failed for {source} ({place})\n")
}

use crate::support::harness::Test;
use crate::support::kernel_image::{RT_CONFIG, gzip, test_built_image};

const DEBIAN_CONFIGS: &str = "/usr/src/linux-config-6.12";

/// A real config nobody here wrote, from Debian's linux-config-6.12 package.
fn debian_config(flavour: &str) -> PathBuf {
    let path = Path::new(DEBIAN_CONFIGS).join(format!("config.amd64_{flavour}_amd64.xz"));
    assert!(
        path.is_file(),
        "{} is missing; run `bash .ci/setup` (linux-config-6.12)",
        path.display()
    );
    path
}

fn debian_config_text(flavour: &str) -> Vec<u8> {
    let xz = std::fs::read(debian_config(flavour)).unwrap();
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut liblzma::read::XzDecoder::new(xz.as_slice()), &mut out)
        .unwrap();
    out
}

/// A minimal PE file with `.cmdline` and `.linux` sections, as a UKI carries them.
fn test_built_uki(cmdline: &str, kernel: &[u8]) -> Vec<u8> {
    let sections: [(&str, &[u8]); 2] = [(".cmdline", cmdline.as_bytes()), (".linux", kernel)];
    let (pe, optional) = (0x80usize, 0xf0usize);
    let table = pe + 24 + optional;
    let mut data = vec![0u8; table + sections.len() * 40];
    data[..2].copy_from_slice(b"MZ");
    data[0x3c..0x40].copy_from_slice(&(pe as u32).to_le_bytes());
    data[pe..pe + 4].copy_from_slice(b"PE\0\0");
    data[pe + 6..pe + 8].copy_from_slice(&2u16.to_le_bytes());
    data[pe + 20..pe + 22].copy_from_slice(&(optional as u16).to_le_bytes());
    for (i, (name, bytes)) in sections.iter().enumerate() {
        let offset = data.len() as u32;
        data.extend_from_slice(bytes);
        let h = table + i * 40;
        data[h..h + name.len()].copy_from_slice(name.as_bytes());
        data[h + 8..h + 12].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        data[h + 16..h + 20].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        data[h + 20..h + 24].copy_from_slice(&offset.to_le_bytes());
    }
    data
}

const RB3_CMDLINE: &str = "root=PARTLABEL=rootfs rw rootwait console=ttyMSM0,115200 isolcpus=7 \
    irqaffinity=0-6 rcu_nocbs=7 rcupdate.rcu_expedited=1 cpuidle.off=1 efi=runtime nohz_full=7";

fn check<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    json["reports"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {json:#}"))
}

#[test]
fn debian_rt_config_passes() {
    let run = Test::new()
        .args(["verify"])
        .args([debian_config("rt")])
        .run()
        .stderr_is(NO_PLAN_NOTE)
        .success();
    let out = run.stdout();
    assert!(out.contains("CONFIG_PREEMPT_RT") && out.contains("verdict: PASS"), "{out}");
}

#[test]
fn debian_non_rt_config_fails_naming_preempt_rt() {
    let run = Test::new()
        .args(["--json", "verify"])
        .args([debian_config("none")])
        .run()
        .stderr_is(&format!(
            "{NO_PLAN_NOTE}{}",
            failed("1 of 1 check", &debian_config("none").display().to_string(), JSON)
        ))
        .code_is(1);
    let json = run.json();
    assert_eq!(json["passed"], false);
    let rt = check(&json, "CONFIG_PREEMPT_RT");
    assert_eq!(rt["status"], "fail");
    assert_eq!(rt["found"], "not set");
    assert_eq!(rt["expected"], "CONFIG_PREEMPT_RT=y");
}

#[test]
fn gzip_config_is_read_like_proc_config_gz() {
    let test = Test::new().file("config.gz", gzip(&debian_config_text("rt")));
    test.args(["verify", "config.gz"])
        .run()
        .stderr_is(NO_PLAN_NOTE)
        .success()
        .stdout_contains("verdict: PASS");
}

#[test]
fn requested_option_missing_is_named_with_both_values() {
    let mut config = debian_config_text("rt");
    config.extend_from_slice(b"# CONFIG_HZ_1000 is not set\n");
    let run = Test::new()
        .file("config", config)
        .args(["--json", "verify", "config", "--machine", "rb3gen2-core-kit"])
        .args(["--config", "CONFIG_HZ_1000=y", "--config", "CONFIG_NO_SUCH_OPTION=y"])
        .run()
        .stderr_is(&failed("3 of 8 checks", "config", JSON))
        .code_is(1);
    let json = run.json();
    let hz = check(&json, "CONFIG_HZ_1000");
    assert_eq!((hz["status"].as_str(), hz["found"].as_str()), (Some("fail"), Some("not set")));
    assert_eq!(hz["expected"], "CONFIG_HZ_1000=y");
    let missing = check(&json, "CONFIG_NO_SUCH_OPTION");
    assert_eq!(missing["found"], "absent");
    assert!(missing["reason"].as_str().unwrap().contains("dependencies are unmet"));
    assert_eq!(check(&json, "CONFIG_PREEMPT_RT")["status"], "pass");
    assert_eq!(check(&json, "CONFIG_RCU_NOCB_CPU")["status"], "pass");
}

#[test]
fn preempt_rt_dropped_without_expert_names_the_dependency() {
    let config = "# CONFIG_EXPERT is not set\nCONFIG_ARCH_SUPPORTS_RT=y\nCONFIG_PREEMPT=y\n";
    let run = Test::new()
        .file(".config", config)
        .args(["verify", ".config"])
        .run()
        .stderr_is(&format!("{NO_PLAN_NOTE}{}", failed("1 of 1 check", ".config", TABLE)))
        .code_is(1);
    run.stdout_contains("FAIL    CONFIG_PREEMPT_RT  CONFIG_PREEMPT_RT=y  absent").stdout_contains(
        "CONFIG_PREEMPT_RT depends on CONFIG_EXPERT && CONFIG_ARCH_SUPPORTS_RT, but CONFIG_EXPERT \
         is not set; add CONFIG_EXPERT=y to the fragment",
    );
}

/// A failed verify ends with one line on stderr, as `lock --check` and `bundle --check` do: how
/// many checks failed, for which sources (a passing one is not named), and where the rows are;
/// stdout keeps the tables.
#[test]
fn a_failed_verify_says_what_failed_in_one_line_on_stderr() {
    let no_rt = "# CONFIG_EXPERT is not set\nCONFIG_ARCH_SUPPORTS_RT=y\nCONFIG_PREEMPT=y\n";
    let run = Test::new()
        .file("a.config", no_rt)
        .file("rt.config", RT_CONFIG)
        .file("b.config", no_rt)
        .args(["verify", "a.config", "rt.config", "b.config"])
        .run()
        .stderr_is(&format!(
            "{NO_PLAN_NOTE}warning: 2 of 2 checks failed for a.config and b.config (FAIL rows in \
             the table on stdout)\n"
        ))
        .code_is(1);
    let out = run.stdout();
    assert_eq!(out.matches("verdict: FAIL (1 of 1 check failed)").count(), 2, "{out}");
    assert_eq!(out.matches("verdict: PASS (1 check)").count(), 1, "{out}");
}

#[test]
fn test_built_kernel_image_with_ikconfig_passes() {
    let image = test_built_image(RT_CONFIG.as_bytes(), "#1 SMP PREEMPT_RT Tue Jul 1 2026");
    let test = Test::new().file("Image", &image).file("Image.gz", gzip(&image));
    let run =
        test.args(["--json", "verify", "Image", "Image.gz", "--machine", "rb3gen2-core-kit"]).run();
    let json = run.success().json();
    assert_eq!(json["reports"][1]["kind"], "kernel image");
    let checks = json["reports"][1]["checks"].as_array().unwrap();
    let config = checks.iter().find(|c| c["check"] == "CONFIG_PREEMPT_RT").unwrap();
    assert_eq!(config["where"], "Image.gz → gzip payload at 0x0 → IKCONFIG");
    let version = checks.iter().find(|c| c["check"] == "kernel version").unwrap();
    assert!(version["found"].as_str().unwrap().contains("PREEMPT_RT"));
}

#[test]
fn test_built_image_without_ikconfig_is_judged_by_its_version() {
    let mut image: Vec<u8> = vec![7u8; 8192];
    image.extend_from_slice(b"Linux version 6.12.1 (x@y) #1 SMP PREEMPT_DYNAMIC Mon\n\0");
    let run = Test::new()
        .file("vmlinux", image)
        .args(["verify", "vmlinux"])
        .run()
        .stderr_is(&format!(
            "note: vmlinux has no embedded config (CONFIG_IKCONFIG off); only its version string was checked\n{NO_PLAN_NOTE}{}",
            failed("1 of 1 check", "vmlinux", TABLE)
        ))
        .code_is(1);
    run.stdout_contains("kernel version").stdout_contains("FAIL");
}

#[test]
fn test_built_uki_command_line_is_checked_against_the_plan() {
    let kernel = gzip(&test_built_image(RT_CONFIG.as_bytes(), "#1 SMP PREEMPT_RT x"));
    let good = test_built_uki(RB3_CMDLINE, &kernel);
    let bad = test_built_uki(&RB3_CMDLINE.replace("nohz_full=7", "nohz_full=6-7"), &kernel);
    Test::new()
        .file("good.efi", good)
        .args(["verify", "good.efi", "--machine", "rb3gen2-core-kit"])
        .run()
        .success()
        .stdout_contains("cmdline isolcpus");
    let run = Test::new()
        .file("bad.efi", bad)
        .args(["--json", "verify", "bad.efi", "--machine", "rb3gen2-core-kit"])
        .run()
        .stderr_is(&failed("2 of 14 checks", "bad.efi", JSON))
        .code_is(1);
    let json = run.json();
    assert_eq!(check(&json, "cmdline nohz_full")["found"], "nohz_full=6-7");
    let consistent = check(&json, "cmdline isolation consistent");
    assert_eq!(consistent["status"], "fail");
    assert!(
        consistent["reason"].as_str().unwrap().contains("nohz_full=6-7 differs from isolcpus=7")
    );
}

/// A fixture build folder in either layout, with an image manifest and a `bitbake -e` dump.
fn build_folder(test: Test, rm_work: bool, config: &str) -> Test {
    let config_path = if rm_work {
        "build/tmp/work-shared/rb3gen2-core-kit/kernel-build-artifacts/.config"
    } else {
        "build/tmp/work/rb3gen2_core_kit-qcom-linux/linux-qcom-rt/6.18.37/build/.config"
    };
    test.file(config_path, config)
        .file(
            "build/tmp/deploy/images/rb3gen2-core-kit/qcom-multimedia-image-rb3gen2-core-kit.rootfs.manifest",
            "base-files rb3gen2_core_kit 3.0.14-r0\nrt-tests armv8a 2.8-r0\nstress-ng armv8a 0.18.06-r0\nrtbuild-tune all 1.0-r0\n",
        )
        .file("build/bitbake-env.txt", format!("KERNEL_CMDLINE_EXTRA=\" qcom_scm.download_mode=1 {RB3_CMDLINE}\"\n"))
}

#[test]
fn fixture_build_folder_passes_in_both_layouts() {
    for rm_work in [false, true] {
        let test = build_folder(Test::new(), rm_work, RT_CONFIG);
        let run = test.args(["--json", "verify", "build", "--machine", "rb3gen2-core-kit"]).run();
        let json = run.success().json();
        assert_eq!(json["reports"][0]["kind"], "build folder");
        let want = if rm_work { "kernel-build-artifacts/.config" } else { "6.18.37/build/.config" };
        assert!(check(&json, "CONFIG_PREEMPT_RT")["where"].as_str().unwrap().ends_with(want));
        assert_eq!(check(&json, "package rt-tests")["status"], "pass");
        assert_eq!(check(&json, "cmdline isolcpus")["status"], "pass");
    }
}

#[test]
fn fixture_build_folder_without_rt_tests_or_expert_fails() {
    let config = RT_CONFIG
        .replace("CONFIG_EXPERT=y", "# CONFIG_EXPERT is not set")
        .replace("CONFIG_PREEMPT_RT=y\n", "");
    let test = build_folder(Test::new(), false, &config).file(
        "build/tmp/deploy/images/rb3gen2-core-kit/qcom-multimedia-image-rb3gen2-core-kit.rootfs.manifest",
        "base-files rb3gen2_core_kit 3.0.14-r0\n",
    );
    let run = test
        .args(["--json", "verify", "build", "--machine", "rb3gen2-core-kit"])
        .run()
        .stderr_is(&failed("5 of 16 checks", "build", JSON))
        .code_is(1);
    let json = run.json();
    assert_eq!(check(&json, "package rt-tests")["status"], "fail");
    let rt = check(&json, "CONFIG_PREEMPT_RT");
    assert!(rt["reason"].as_str().unwrap().contains("CONFIG_EXPERT is not set"), "{rt}");
}

/// An `rtbuild-plan.json` as `generate` writes it, asking for CONFIG_HZ_1000 (not in RT_CONFIG).
fn plan_asking_for_hz_1000() -> serde_json::Value {
    serde_json::json!({
        "machine": "rb3gen2-core-kit", "image": "qcom-multimedia-image", "distro": "qcom-distro-kvm",
        "kernel_recipe": "linux-qcom-rt", "rt_cpus": "7", "housekeeping": "0-6", "nohz_full": true,
        "kernel_config": [{"symbol": "CONFIG_PREEMPT_RT", "value": "y"}, {"symbol": "CONFIG_HZ_1000", "value": "y"}],
        "cmdline": ["isolcpus=7"], "packages": ["rt-tests"]
    })
}

#[test]
fn plan_file_gives_the_expectations() {
    let plan = plan_asking_for_hz_1000();
    let test =
        build_folder(Test::new(), true, RT_CONFIG).file("rtbuild-plan.json", plan.to_string());
    let run = test
        .args(["verify", "build", "--plan", "rtbuild-plan.json"])
        .run()
        .stderr_is(&failed("1 of 5 checks", "build", TABLE))
        .code_is(1);
    run.stdout_contains("FAIL    CONFIG_HZ_1000");
    Test::new()
        .file("plan.json", "{\"machine\": 1}")
        .file(".config", RT_CONFIG)
        .args(["verify", ".config", "--plan", "plan.json"])
        .run()
        .code_is(2)
        .stderr_contains("cannot read the plan `plan.json`");
}

#[test]
fn debian_packages_made_with_dpkg_deb_are_read_whatever_the_compression() {
    for compression in ["xz", "zstd", "gzip"] {
        let test = Test::new()
            .file(
                "pkg/DEBIAN/control",
                "Package: linux-image-test\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: test\n",
            )
            .file("pkg/boot/config-6.12.1-rt-amd64", debian_config_text("rt"));
        let status = Command::new("dpkg-deb")
            .args(["--build", &format!("-Z{compression}"), "pkg", "linux-image-test.deb"])
            .current_dir(test.path())
            .output()
            .unwrap();
        assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
        let json = test
            .args(["--json", "verify", "linux-image-test.deb"])
            .run()
            .stderr_is(NO_PLAN_NOTE)
            .success()
            .json();
        assert_eq!(json["reports"][0]["kind"], "Debian kernel package");
        let from = check(&json, "CONFIG_PREEMPT_RT")["where"].as_str().unwrap().to_string();
        assert!(from.ends_with("boot/config-6.12.1-rt-amd64"), "{compression}: {from}");
    }
}

#[test]
fn qcomflash_folder_and_tarball_are_read_through_vmlinux() {
    let image = test_built_image(RT_CONFIG.as_bytes(), "#1 SMP PREEMPT_RT x");
    let dir = "core-image-base-rb3gen2-core-kit";
    let test = Test::new()
        .file(&format!("{dir}/vmlinux"), &image)
        .file(&format!("{dir}/rawprogram0.xml"), "<data/>");
    let status = Command::new("tar")
        .args(["-czf", "flash.qcomflash.tar.gz", dir])
        .current_dir(test.path())
        .output()
        .unwrap();
    assert!(status.status.success());
    let json = test
        .args(["--json", "verify", dir, "flash.qcomflash.tar.gz"])
        .run()
        .stderr_is(NO_PLAN_NOTE)
        .success()
        .json();
    assert_eq!(json["reports"][0]["kind"], "qcomflash folder");
    assert_eq!(json["reports"][1]["kind"], "qcomflash tarball");
}

#[test]
fn bad_inputs_exit_2_with_one_clear_line() {
    Test::new().file("empty", "").args(["verify", "empty"]).run().usage_error(
        "`empty` is empty; pass a kernel config, kernel image, package or build folder",
    );
    Test::new().file("d/readme.txt", "hello").args(["verify", "d"]).run().usage_error(
        "`d` holds no kernel config, kernel image or version string; a build folder has tmp*/work, \
         tmp*/work-shared or tmp*/deploy/images, a qcomflash folder has vmlinux, a kernel build folder has .config",
    );
    Test::new()
        .args(["verify", "missing.config"])
        .run()
        .usage_error("`missing.config` does not exist; pass a build folder, kernel config, kernel image, .deb, or qcomflash folder or tarball");
    Test::new().args(["verify"]).run().usage_error(
        "nothing to verify; pass a build folder, kernel config, kernel image, qcomflash folder or \
         tarball, .deb, --target ssh://user@host, or --local for this machine",
    );
    Test::new().file("notes.txt", "CONFIG_X=y\nthis is prose\n").args(["verify", "notes.txt"]).run().usage_error(
        "`notes.txt`: not a kernel config: line 2: expected CONFIG_<NAME>=<value> or `# CONFIG_<NAME> is not set`; pass a kernel .config or /proc/config.gz",
    );
    Test::new().file("tmp/work/x", "").args(["verify", "."]).run().usage_error(
        "`.` holds no kernel config, kernel image or version string; looked for \
         tmp*/deploy/images/*/ (qcomflash, Image, SBOM), tmp*/work/*/linux-qcom-rt/*/build/.config and tmp*/work-shared/*/kernel-build-artifacts/.config; \
         has the kernel been built?",
    );
    Test::new()
        .args(["verify", "--target", "root@host"])
        .run()
        .usage_error("target `root@host` is not an ssh URL; write it as ssh://user@host[:port]");
}

#[test]
fn truncated_or_corrupt_gzip_is_an_input_error_naming_the_file() {
    let gz = gzip(RT_CONFIG.as_bytes());
    let run =
        Test::new().file("config.gz", &gz[..gz.len() - 10]).args(["verify", "config.gz"]).run();
    let run = run.code_is(2);
    assert!(
        run.stderr().starts_with("error: `config.gz`: cannot read gzip data:"),
        "{}",
        run.stderr()
    );
    assert!(run.stderr().trim_end().ends_with("the file is truncated or corrupt"));
    assert_eq!(run.stderr().lines().count(), 1);
    let mut image = test_built_image(RT_CONFIG.as_bytes(), "#1 SMP PREEMPT_RT x");
    let at = image.windows(8).position(|w| w == b"IKCFG_ST").unwrap() + 20;
    image[at..at + 16].fill(0);
    let run = Test::new().file("Image", image).args(["verify", "Image"]).run().code_is(2);
    run.stderr_contains("error: `Image`: the embedded config (IKCONFIG at offset");
    let image_gz = gzip(&test_built_image(RT_CONFIG.as_bytes(), "#1 SMP PREEMPT_RT x"));
    Test::new()
        .file("Image.gz", &image_gz[..image_gz.len() / 2])
        .args(["verify", "Image.gz"])
        .run()
        .usage_error("`Image.gz`: cannot read gzip data: incomplete deflate stream; the file is truncated or corrupt");
}

#[test]
fn plan_written_by_generate_is_verified_against_a_build_folder() {
    let test = build_folder(Test::new(), true, RT_CONFIG);
    let dir = test.path().to_path_buf();
    let generate = Command::new(crate::support::harness::rtbuild_bin())
        .args(["generate", "--machine", "rb3gen2-core-kit", "--out", "gen"])
        .current_dir(&dir)
        .env("HOME", &dir)
        .output()
        .unwrap();
    assert!(generate.status.success(), "{}", String::from_utf8_lossy(&generate.stderr));
    let json = test
        .args(["--json", "verify", "--build-dir", "build", "--plan", "gen/rtbuild-plan.json"])
        .run()
        .success()
        .json();
    for name in ["CONFIG_EXPERT", "CONFIG_RCU_NOCB_CPU", "cmdline nohz_full", "package stress-ng"] {
        assert_eq!(check(&json, name)["status"], "pass", "{name}");
    }
}

/// Runs a real tool in `dir` and asserts it succeeded.
fn tool(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("MTOOLS_SKIP_CHECK", "1")
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}; run `bash .ci/setup` (dosfstools, mtools)"));
    assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// An ESP image made with the real mkfs.vfat and mcopy: systemd-boot stand-in plus a UKI with
/// a long file name under EFI/Linux, as meta-qcom's esp-qcom-image lays it out.
fn efi_bin(dir: &Path, fat32: bool, uki: &[u8]) {
    std::fs::write(dir.join("uki.efi"), uki).unwrap();
    std::fs::write(dir.join("BOOTAA64.EFI"), b"MZ not a uki").unwrap();
    let _ = std::fs::remove_file(dir.join("efi.bin"));
    if fat32 {
        tool(dir, "mkfs.vfat", &["-F", "32", "-C", "efi.bin", "40000"]);
    } else {
        tool(dir, "mkfs.vfat", &["-C", "efi.bin", "4096"]);
    }
    tool(dir, "mmd", &["-i", "efi.bin", "::/EFI", "::/EFI/BOOT", "::/EFI/Linux"]);
    tool(dir, "mcopy", &["-i", "efi.bin", "BOOTAA64.EFI", "::/EFI/BOOT/BOOTAA64.EFI"]);
    tool(dir, "mcopy", &["-i", "efi.bin", "uki.efi", "::/EFI/Linux/linux-6.18.37-rt-qcom.efi"]);
}

#[test]
fn qcomflash_efi_bin_made_with_mkfs_vfat_gives_the_uki_command_line() {
    let kernel = test_built_image(RT_CONFIG.as_bytes(), "#1 SMP PREEMPT_RT x");
    let uki = test_built_uki(RB3_CMDLINE, &gzip(&kernel));
    for fat32 in [false, true] {
        let test = Test::new().file("flash/vmlinux", &kernel);
        efi_bin(&test.path().join("flash"), fat32, &uki);
        let json = test
            .args(["--json", "verify", "--qcomflash", "flash", "--machine", "rb3gen2-core-kit"])
            .run()
            .success()
            .json();
        let isol = check(&json, "cmdline isolcpus");
        assert_eq!(isol["status"], "pass");
        let from = isol["where"].as_str().unwrap();
        assert!(
            from.ends_with("efi.bin → EFI/Linux/linux-6.18.37-rt-qcom.efi → .cmdline"),
            "{from}"
        );
        assert!(check(&json, "CONFIG_PREEMPT_RT")["where"].as_str().unwrap().contains("vmlinux"));
    }
}

#[test]
fn qcomflash_tarball_without_vmlinux_is_read_through_the_uki() {
    let kernel = test_built_image(RT_CONFIG.as_bytes(), "#1 SMP PREEMPT_RT x");
    let bad_cmdline = RB3_CMDLINE.replace("irqaffinity=0-6", "irqaffinity=0-7");
    let test = Test::new().file("img/rawprogram0.xml", "<data/>");
    efi_bin(&test.path().join("img"), false, &test_built_uki(&bad_cmdline, &gzip(&kernel)));
    tool(
        test.path(),
        "tar",
        &["-czf", "img.qcomflash.tar.gz", "img/efi.bin", "img/rawprogram0.xml"],
    );
    let run = test
        .args(["--json", "verify", "img.qcomflash.tar.gz", "--machine", "rb3gen2-core-kit"])
        .run()
        .stderr_is(&failed("2 of 14 checks", "img.qcomflash.tar.gz", JSON))
        .code_is(1);
    let json = run.json();
    assert_eq!(check(&json, "CONFIG_PREEMPT_RT")["status"], "pass");
    assert_eq!(check(&json, "cmdline irqaffinity")["found"], "irqaffinity=0-7");
    let consistent = check(&json, "cmdline isolation consistent");
    assert!(
        consistent["reason"].as_str().unwrap().contains("irqaffinity includes isolated CPUs 7")
    );
}

/// One unusable source does not hide the verdict of the others: the good report is printed,
/// then one `error:` line per bad source, and the run exits 2.
#[test]
fn an_unusable_source_still_prints_the_other_reports() {
    let test = Test::new().file("empty", "");
    let run = test.args(["verify"]).args([debian_config("rt")]).args(["missing", "empty"]).run();
    let run = run.code_is(2).stdout_contains("verdict: PASS");
    let stderr = run.stderr();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 2, "{}", run.stderr());
    assert!(errors[0].starts_with("error: `missing` does not exist; pass "), "{errors:?}");
    assert!(errors[1].starts_with("error: `empty` is empty"), "{errors:?}");

    let test = Test::new().file("empty", "");
    let run = test
        .args(["--json", "verify", "empty"])
        .args([debian_config("rt")])
        .run()
        .stderr_is(&format!(
            "{NO_PLAN_NOTE}error: `empty` is empty; pass a kernel config, kernel image, package or build folder\n"
        ));
    let json = run.code_is(2).json();
    assert_eq!(json["passed"], false);
    assert_eq!(json["reports"][0]["passed"], true);
    assert_eq!(json["errors"][0]["source"], "empty");
}

/// `--json` carries what a bundle manifest records: the config's sha256 (of the uncompressed
/// text) and the kernel version, at the top when every report agrees.
#[test]
fn json_carries_config_sha256_and_kernel_version() {
    let config = debian_config_text("rt");
    let sha = crate::support::fixtures::sha256_hex(&config);
    let test = Test::new().file("Image", test_built_image(&config, "#1 SMP PREEMPT_RT x"));
    let run = test
        .args(["--json", "verify", "Image"])
        .args([debian_config("rt")])
        .run()
        .stderr_is(NO_PLAN_NOTE);
    let json = run.success().json();
    assert_eq!(json["config_sha256"], sha.as_str());
    assert_eq!(json["reports"][1]["config_sha256"], sha.as_str());
    let version = json["kernel_version"].as_str().unwrap();
    assert!(version.ends_with("#1 SMP PREEMPT_RT x"), "{version}");
}

/// `--machine M` alone checks against `rtbuild/<M>/rtbuild-plan.json` when `rtbuild generate`
/// wrote one (and says so); any other plan flag, or `--plan`, overrides it.
#[test]
fn machine_alone_uses_the_generated_plan_file() {
    let plan = plan_asking_for_hz_1000();
    let generated = "rtbuild/rb3gen2-core-kit/rtbuild-plan.json";
    let test = || Test::new().file(".config", RT_CONFIG).file(generated, plan.to_string());
    // An alias finds the folder of the catalog name.
    let run = test().args(["verify", ".config", "--machine", "qcs6490-rb3gen2"]).run().code_is(1);
    run.stdout_contains("FAIL    CONFIG_HZ_1000").stderr_contains(&format!(
        "note: checking against {generated}, written by `rtbuild generate`"
    ));
    let run = test()
        .args(["verify", ".config", "--machine", "rb3gen2-core-kit", "--config", "CONFIG_EXPERT=y"])
        .run();
    let run = run.success();
    assert!(!run.stdout().contains("CONFIG_HZ_1000") && !run.stderr().contains(generated));
    Test::new()
        .file(".config", RT_CONFIG)
        .file(generated, "{")
        .args(["verify", ".config", "--machine", "rb3gen2-core-kit"])
        .run()
        .code_is(2)
        .stderr_contains(&format!("error: cannot read the plan `{generated}`"));
}

/// A folder given to a flag that names a file is one line saying what to do instead.
#[test]
fn a_folder_for_a_file_flag_says_what_to_pass() {
    for flag in ["--kernel-config", "--kernel-image", "--deb"] {
        Test::new().file("d/x", "").args(["verify", flag, "d"]).run().usage_error(
            "`d` is a folder, not a file; pass it as a SOURCE without a flag (a build or \
             qcomflash folder is recognised), or name the file inside it",
        );
    }
}

/// A board rtbuild's catalog does not know (an RK3562J, a Phytium): `--rt-cpus` and
/// `--housekeeping` alone describe the CPU plan the kernel and its boot arguments must show.
#[test]
fn a_bare_cpu_plan_checks_the_options_and_boot_arguments_without_a_machine() {
    let rt_config = debian_config_text("rt");
    let kernel = gzip(&test_built_image(&rt_config, "#1 SMP PREEMPT_RT x"));
    let cmdline = "console=ttyS2,1500000 isolcpus=3 nohz_full=3 rcu_nocbs=3 irqaffinity=0-2";
    let run = Test::new()
        .file("rk3562.efi", test_built_uki(cmdline, &kernel))
        .args(["--json", "verify", "rk3562.efi", "--rt-cpus", "3", "--housekeeping", "0-2"])
        .run()
        .success();
    assert!(!run.stderr().contains("no plan given"), "{}", run.stderr());
    let json = run.json();
    for option in ["CONFIG_PREEMPT_RT", "CONFIG_RCU_NOCB_CPU", "CONFIG_NO_HZ_FULL"] {
        assert_eq!(check(&json, option)["status"], "pass", "{option}");
    }
    assert_eq!(check(&json, "cmdline isolcpus")["expected"], "isolcpus=3");
    assert_eq!(check(&json, "cmdline irqaffinity")["expected"], "irqaffinity=0-2");
    assert_eq!(check(&json, "cmdline isolation consistent")["status"], "pass");

    // The same kernel booted with another CPU isolated fails on every CPU argument, and
    // Debian's non-RT config fails on PREEMPT_RT alone (it has the other two options).
    let other = cmdline.replace("=3", "=2").replace("0-2", "0-1,3");
    let run = Test::new()
        .file("rk3562.efi", test_built_uki(&other, &kernel))
        .args(["--json", "verify", "rk3562.efi", "--rt-cpus", "3", "--housekeeping", "0-2"])
        .run()
        .stderr_is(&failed("4 of 9 checks", "rk3562.efi", JSON))
        .code_is(1);
    let json = run.json();
    for key in ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"] {
        assert_eq!(check(&json, &format!("cmdline {key}"))["status"], "fail", "{key}");
    }
    let none = gzip(&test_built_image(&debian_config_text("none"), "#1 SMP PREEMPT_DYNAMIC x"));
    let run = Test::new()
        .file("generic.efi", test_built_uki(cmdline, &none))
        .args(["--json", "verify", "generic.efi", "--rt-cpus", "3"])
        .run()
        .stderr_is(&failed("2 of 8 checks", "generic.efi", JSON))
        .code_is(1);
    let json = run.json();
    assert_eq!(check(&json, "CONFIG_PREEMPT_RT")["status"], "fail");
    assert_eq!(check(&json, "CONFIG_NO_HZ_FULL")["status"], "pass");
    // Without --housekeeping, irqaffinity is not expected.
    assert!(
        json["reports"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] != "cmdline irqaffinity"),
        "{json}"
    );
}

#[test]
fn a_bare_cpu_plan_refuses_build_flags_and_overlapping_cpus() {
    Test::new()
        .file("config", RT_CONFIG)
        .args(["verify", "config", "--rt-cpus", "3", "--config", "CONFIG_HZ_1000=y"])
        .run()
        .usage_error(
            "--fragment, --config, --patch, --cmdline, --distro and --image describe an rtbuild \
             build; pass --machine (or --plan FILE) with them, or only --rt-cpus and \
             --housekeeping for another board",
        );
    Test::new()
        .file("config", RT_CONFIG)
        .args(["verify", "config", "--rt-cpus", "2-3", "--housekeeping", "0-2"])
        .run()
        .usage_error("CPU 2 is both RT and housekeeping; give each CPU one role (--housekeeping must not overlap --rt-cpus)");
    // The same layout rules as everywhere (one validator): CPU 0 is never an RT CPU.
    Test::new()
        .file("config", RT_CONFIG)
        .args(["verify", "config", "--rt-cpus", "0"])
        .run()
        .usage_error("CPU 0 cannot be an RT CPU: it keeps boot, timekeeping and unmovable interrupts; pick RT CPUs from CPU 1 up");
    let run = Test::new()
        .file("config", RT_CONFIG)
        .args(["verify", "config", "--rt-cpus", "3x"])
        .run()
        .code_is(2);
    assert!(
        run.stderr().starts_with("error: --rt-cpus: malformed CPU list `3x`"),
        "{}",
        run.stderr()
    );
}
