//! `rtbuild generate` from the command line: outputs, idempotency, hand edits, and every bad
//! input (one clear line, exit 2, nothing written).

use std::time::{Duration, SystemTime};

use crate::support::harness::Test;
use crate::support::project::generated;

const PATCH: &str = "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a\n+b\n";

#[test]
fn generate_writes_kas_file_layer_plan_and_manifest() {
    let run = Test::new().args(["generate", "--machine", "rb3gen2-core-kit"]).run().success();
    assert!(run.stdout().trim_end().ends_with("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml"));
    let out = run.path().join("rtbuild/rb3gen2-core-kit");
    for file in [
        "rb3gen2-core-kit-rt.yml",
        "rtbuild-plan.json",
        "rtbuild-manifest.json",
        "meta-rtbuild/conf/layer.conf",
        "meta-rtbuild/recipes-kernel/linux/linux-qcom-rt_6.18.bbappend",
        "meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/rtbuild-rt.cfg",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    assert!(run.stderr().contains("Generated"), "{}", run.stderr());
}

#[test]
fn alias_is_resolved_and_noted_once() {
    let run = Test::new()
        .args(["generate", "--machine", "qcs6490-rb3gen2"])
        .run()
        .stdout_contains("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml\n")
        .success();
    let notes = run.stderr().matches("is an alias of `rb3gen2-core-kit`").count();
    assert_eq!(notes, 1, "{}", run.stderr());
    assert!(run.path().join("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml").is_file());
}

#[test]
fn second_generate_rewrites_nothing_and_keeps_mtimes() {
    let run = Test::new()
        .args(["generate", "--machine", "iq-9075-evk"])
        .run()
        .stdout_contains("rtbuild/iq-9075-evk/iq-9075-evk-rt.yml\n")
        .stderr_in_tmp_is(&generated(
            "iq-9075-evk (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)",
            "iq-9075-evk",
            "[TMP]/rtbuild/iq-9075-evk",
            &[],
        ))
        .success();
    let dir = run.path().to_path_buf();
    let kas = dir.join("rtbuild/iq-9075-evk/iq-9075-evk-rt.yml");
    let past = SystemTime::now() - Duration::from_secs(86_400);
    std::fs::File::options().write(true).open(&kas).unwrap().set_modified(past).unwrap();
    let second = Test::new()
        .cwd(&dir)
        .args(["generate", "--machine", "iq-9075-evk", "--json"])
        .run()
        .success();
    let json = second.json();
    let changes: Vec<&str> = json["report"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[1].as_str().unwrap())
        .collect();
    assert!(changes.iter().all(|c| *c == "unchanged"), "{json}");
    // What the user reads: the plan, then that nothing was written (no `Created`/`Updated` line).
    assert_eq!(
        second.stderr(),
        format!(
            "  Generating iq-9075-evk (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)\n   Generated {}: 0 new, 0 updated, 0 removed, {} unchanged\n",
            dir.join("rtbuild/iq-9075-evk").display(),
            changes.len()
        )
    );
    assert_eq!(std::fs::metadata(&kas).unwrap().modified().unwrap(), past);
    drop(run);
}

#[test]
fn changing_rt_cpus_changes_every_variable_together() {
    let run = Test::new()
        .args(["generate", "--machine", "rb3gen2-core-kit", "--rt-cpus", "6-7"])
        .run()
        .stdout_contains("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml\n")
        .stderr_has_line("  Generating rb3gen2-core-kit (RT CPUs 6-7, housekeeping 0-5, qcom-distro, qcom-multimedia-image)")
        .stderr_has_line("   Generated [TMP]/rtbuild/rb3gen2-core-kit: 9 new, 0 updated, 0 removed, 0 unchanged")
        .success();
    let kas = std::fs::read_to_string(
        run.path().join("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml"),
    )
    .unwrap();
    assert!(kas.contains("QCOM_RT_CPU:forcevariable = \"6-7\""));
    assert!(kas.contains("QCOM_IRQAFF:forcevariable = \"0-5\""));
    assert!(kas.contains("nohz_full=6-7"));
    let plan: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.path().join("rtbuild/rb3gen2-core-kit/rtbuild-plan.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(plan["cmdline"][0], "isolcpus=6-7");
    assert_eq!(plan["cmdline"][1], "irqaffinity=0-5");
}

#[test]
fn hand_edited_file_is_refused_then_forced() {
    let run = Test::new()
        .args(["generate", "--machine", "iq-615-evk"])
        .run()
        .stdout_contains("rtbuild/iq-615-evk/iq-615-evk-rt.yml\n")
        .stderr_in_tmp_is(&generated(
            "iq-615-evk (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)",
            "iq-615-evk",
            "[TMP]/rtbuild/iq-615-evk",
            &[],
        ))
        .success();
    let dir = run.path().to_path_buf();
    let conf = dir.join("rtbuild/iq-615-evk/meta-rtbuild/conf/layer.conf");
    std::fs::write(&conf, "# my edit\n").unwrap();
    let refused = Test::new()
        .cwd(&dir)
        .args(["generate", "--machine", "iq-615-evk", "--rt-cpus", "6-7"])
        .run();
    let stderr = refused.stderr();
    assert_eq!(refused.code(), 2, "{stderr}");
    assert!(stderr.contains("meta-rtbuild/conf/layer.conf was edited by hand"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), "# my edit\n");
    let kas = std::fs::read_to_string(dir.join("rtbuild/iq-615-evk/iq-615-evk-rt.yml")).unwrap();
    assert!(kas.contains("QCOM_RT_CPU:forcevariable = \"7\""), "nothing may be written on refusal");
    Test::new()
        .cwd(&dir)
        .args(["generate", "--machine", "iq-615-evk", "--force"])
        .run()
        .stdout_contains("rtbuild/iq-615-evk/iq-615-evk-rt.yml\n")
        .stderr_is(&format!(
            "  Generating iq-615-evk (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)\n     Updated meta-rtbuild/conf/layer.conf\n   Generated {}: 0 new, 1 updated, 0 removed, 8 unchanged\n",
            dir.join("rtbuild/iq-615-evk").display()
        ))
        .success();
    assert!(std::fs::read_to_string(&conf).unwrap().contains("BBFILE_COLLECTIONS"));
    drop(run);
}

#[test]
fn dry_run_prints_changes_and_writes_nothing() {
    Test::new()
        .args(["generate", "--machine", "qcs615-ride", "--dry-run"])
        .run()
        .ignore_stdout()
        .success()
        .stderr_contains("Would create meta-rtbuild/conf/layer.conf")
        .nothing_written("rtbuild");
}

#[test]
fn project_file_supplies_settings_and_flags_win() {
    let project = "machine: iq-8275-evk\nrt-cpus: \"2-3\"\ndistro: nodistro\nconfigs: [CONFIG_HZ_1000=y]\n\
                   fragments: [frags/extra.cfg]\n";
    let run = Test::new()
        .file("rtbuild.yaml", project)
        .file("frags/extra.cfg", "CONFIG_PREEMPT_RT=y\n")
        .args(["generate", "--rt-cpus", "3"])
        .run()
        .ignore_stdout()
        .stderr_has_line(
            "  Generating iq-8275-evk (RT CPUs 3, housekeeping 0-2,4-7, nodistro, core-image-base)",
        )
        .stderr_has_line(
            "     Created meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/extra.cfg",
        )
        .stderr_has_line(
            "   Generated [TMP]/rtbuild/iq-8275-evk: 10 new, 0 updated, 0 removed, 0 unchanged",
        )
        .success();
    let kas =
        std::fs::read_to_string(run.path().join("rtbuild/iq-8275-evk/iq-8275-evk-rt.yml")).unwrap();
    assert!(kas.contains("QCOM_RT_CPU:forcevariable = \"3\""), "flag must win:\n{kas}");
    assert!(kas.contains("core-image-base"), "{kas}");
    assert!(run.path().join("rtbuild/iq-8275-evk/meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/extra.cfg").is_file());
}

/// One bad-input case: arguments (after `generate --out out`), files to create, expected error.
struct Bad {
    args: &'static [&'static str],
    files: &'static [(&'static str, &'static str)],
    error: &'static str,
}

const BAD_INPUTS: &[Bad] = &[
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--rt-cpus", "8"],
        files: &[],
        error: "RT CPU 8 is outside rb3gen2-core-kit, which has CPUs 0-7; pick RT CPUs from 0-7",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--rt-cpus", "1-7", "--housekeeping", "0-1"],
        files: &[],
        error: "CPU 1 is both RT and housekeeping; give each CPU one role (--housekeeping must not overlap --rt-cpus)",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--rt-cpus", "0-7"],
        files: &[],
        error: "CPU 0 cannot be an RT CPU: it keeps boot, timekeeping and unmovable interrupts; pick RT CPUs from 1-7",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--rt-cpus", "0"],
        files: &[],
        error: "CPU 0 cannot be an RT CPU: it keeps boot, timekeeping and unmovable interrupts; pick RT CPUs from 1-7",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--rt-cpus", "7-5"],
        files: &[],
        error: "malformed CPU list `7-5`: range `7-5` runs backwards; write it like `7`, `6,7` or `0-2,4-7`",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--rt-cpus", "7;reboot"],
        files: &[],
        error: "malformed CPU list `7;reboot`: `7;reboot` is not a CPU number; write it like `7`, `6,7` or `0-2,4-7`",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--fragment", "missing.cfg"],
        files: &[],
        error: "fragment missing.cfg does not exist; check the path given to --fragment",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--fragment", "rt.config"],
        files: &[("rt.config", "CONFIG_X=y\n")],
        error: "fragment rt.config must end in .cfg: meta-qcom merges only *.cfg files from SRC_URI; rename it",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--fragment", "bad.cfg"],
        files: &[("bad.cfg", "CONFIG_A=y\nPREEMPT_RT=y\n")],
        error: "fragment bad.cfg:2: expected CONFIG_<NAME>=<value> or `# CONFIG_<NAME> is not set`; fix that line of the fragment",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--fragment", "inj.cfg"],
        files: &[("inj.cfg", "CONFIG_X=${@os.system('reboot')}\n")],
        error: "fragment inj.cfg:1: value `${@os.system(\\'reboot\\')}` is not y, m, n, a number or a double-quoted string; fix that line of the fragment",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--fragment", "nort.cfg"],
        files: &[("nort.cfg", "# CONFIG_PREEMPT_RT is not set\n")],
        error: "fragment nort.cfg:1 asks for # CONFIG_PREEMPT_RT is not set, but an RT build needs CONFIG_PREEMPT_RT=y; remove it",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--patch", "nope.patch"],
        files: &[],
        error: "patch nope.patch does not exist; check the path given to --patch",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--patch", "notes.patch"],
        files: &[("notes.patch", "just text\n")],
        error: "notes.patch is not a patch (no `---`/`+++` file headers); pass a `git format-patch` or `diff -u` file",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--distro", "poky"],
        files: &[],
        error: "unknown distro `poky`; use one of nodistro, qcom-distro, qcom-distro-kvm",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--hypervisor", "xen;reboot"],
        files: &[],
        error: "--hypervisor `xen;reboot` is not a hypervisor; pass --hypervisor kvm or --hypervisor gunyah",
    },
    Bad {
        args: &[
            "--machine",
            "rb3gen2-core-kit",
            "--distro",
            "qcom-distro-kvm",
            "--hypervisor",
            "gunyah",
        ],
        files: &[],
        error: "--distro qcom-distro-kvm is qcom-distro with KVM, and --hypervisor gunyah asks for Gunyah; pass --distro qcom-distro --hypervisor gunyah",
    },
    Bad {
        // Without a checkout, rtbuild remembers meta-qcom as it is since #2879: no KVM for a
        // board whose MACHINE_FEATURES lack it.
        args: &["--machine", "qcs615-ride", "--hypervisor", "kvm"],
        files: &[],
        error: "--hypervisor kvm cannot be built: rtbuild's catalog entry for qcs615-ride has no kvm in MACHINE_FEATURES, and meta-qcom as rtbuild's catalog remembers it (no checkout read) has no ci/qcom-distro-kvm.yml to add it; pass --hypervisor gunyah, or a meta-qcom whose machine conf has kvm",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--config", "CONFIG_PREEMPT_RT=n"],
        files: &[],
        error: "--config asks for # CONFIG_PREEMPT_RT is not set, but an RT build needs CONFIG_PREEMPT_RT=y; remove it",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--config", "HZ=1000"],
        files: &[],
        error: "--config `HZ=1000` is not a kernel option: expected CONFIG_<NAME>=<value> or `# CONFIG_<NAME> is not set`; write it like CONFIG_NO_HZ_FULL=y",
    },
    Bad {
        args: &[
            "--machine",
            "rb3gen2-core-kit",
            "--config",
            "CONFIG_LOCALVERSION=\"x\"\nDISTRO = \"evil\"",
        ],
        files: &[],
        error: "--config `CONFIG_LOCALVERSION=\\\"x\\\"\\nDISTRO = \\\"evil\\\"` is not a kernel option: value `\\\"x\\\"\\nDISTRO = \\\"evil\\\"` is not y, m, n, a number or a double-quoted string; write it like CONFIG_NO_HZ_FULL=y",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--cmdline", "isolcpus=3"],
        files: &[],
        error: "--cmdline isolcpus=3: rtbuild derives `isolcpus=` from --rt-cpus so the boot arguments stay consistent; use --rt-cpus",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--cmdline", "quiet\" MACHINE = \"x"],
        files: &[],
        error: "invalid kernel command-line argument `quiet\\\" MACHINE = \\\"x`; use letters, digits and `-_.,:=/+@`, one argument per --cmdline",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--image", "${@bb.utils.remove('/')}"],
        files: &[],
        error: "invalid image name `${@bb.utils.remove(\\'/\\')}`; use letters, digits, `-`, `_`, `.` and `+`",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--meta-qcom-branch=-upload-pack"],
        files: &[],
        error: "invalid git branch `-upload-pack`; a git ref cannot start with `-`, end with `/` or contain `..`",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--meta-qcom-commit", "ef0004df"],
        files: &[],
        error: "invalid commit `ef0004df`; a commit must be the full 40-digit hex id (git rev-parse <ref>)",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--meta-qcom-url", "https://x\"\nrepos: {}"],
        files: &[],
        error: "invalid repository URL `https://x\\\"\\nrepos: {}`; use a plain URL without spaces, quotes or `$`",
    },
    Bad {
        args: &["--machine", "rb3gen2-core-kit", "--dl-dir", "/srv/dl\" SSTATE_DIR = \"/x"],
        files: &[],
        error: "invalid DL_DIR `/srv/dl\\\" SSTATE_DIR = \\\"/x`; use an absolute path of letters, digits and `-_./+@%,`",
    },
    Bad {
        args: &["--machine", "qcs649"],
        files: &[],
        error: "unknown machine `qcs649`; did you mean qcs6490-rb3gen2? See `rtbuild machines`",
    },
    Bad {
        args: &[],
        files: &[],
        error: "no machine given; pass --machine NAME (see `rtbuild machines`)",
    },
];

#[test]
fn every_bad_input_is_one_clear_line_exit_2_and_nothing_written() {
    for case in BAD_INPUTS {
        let mut test = Test::new();
        for (path, text) in case.files {
            test = test.file(path, text);
        }
        let mut args = vec!["generate", "--out", "out"];
        args.extend(case.args);
        test.args(args).run().usage_error(case.error).nothing_written("out");
    }
}

#[test]
fn patches_and_fragments_land_in_the_layer_in_order() {
    let run = Test::new()
        .file("p/0001-first.patch", PATCH)
        .file("p/0002-second.patch", PATCH)
        .file("f/extra.cfg", "CONFIG_HZ_1000=y\n")
        .args(["generate", "--machine", "rb3gen2-core-kit", "--patch", "p/0001-first.patch"])
        .args(["--patch", "p/0002-second.patch", "--fragment", "f/extra.cfg"])
        .run()
        .stdout_contains("rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml\n")
        .stderr_has_line("  Generating rb3gen2-core-kit (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)")
        .stderr_has_line("     Created meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/0001-first.patch")
        .stderr_has_line("     Created meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/0002-second.patch")
        .stderr_has_line("     Created meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/extra.cfg")
        .stderr_has_line("   Generated [TMP]/rtbuild/rb3gen2-core-kit: 12 new, 0 updated, 0 removed, 0 unchanged")
        .success();
    let layer = run.path().join("rtbuild/rb3gen2-core-kit/meta-rtbuild/recipes-kernel/linux");
    let bbappend = std::fs::read_to_string(layer.join("linux-qcom-rt_6.18.bbappend")).unwrap();
    let first = bbappend.find("file://0001-first.patch").unwrap();
    let second = bbappend.find("file://0002-second.patch").unwrap();
    assert!(first < second, "{bbappend}");
    assert!(
        bbappend.find("file://rtbuild-rt.cfg").unwrap()
            < bbappend.find("file://extra.cfg").unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(layer.join("linux-qcom-rt-rtbuild/0001-first.patch")).unwrap(),
        PATCH
    );
}

#[test]
fn two_inputs_with_one_name_are_refused() {
    Test::new()
        .file("a/x.cfg", "CONFIG_A=y\n")
        .file("b/x.cfg", "CONFIG_B=y\n")
        .args(["generate", "--out", "out", "--machine", "iq-615-evk", "--fragment", "a/x.cfg", "--fragment", "b/x.cfg"])
        .run()
        .usage_error("two inputs are both named x.cfg (a/x.cfg and b/x.cfg); rename one, the layer keeps files by name")
        .nothing_written("out");
}
