//! `rtbuild tune`: emitting the script, running it locally against a fake /proc + /sys tree
//! (RTBUILD_SYSROOT), and bad inputs.

use std::fs;

use crate::support::fake_tree::fake_tree;
use crate::support::harness::{Test, Unprivileged};

#[test]
fn emit_writes_an_executable_script_for_the_machine() {
    let run = Test::new()
        .args(["tune", "--machine", "iq-8275-evk", "--emit", "out", "--json"])
        .run()
        .success();
    let script = fs::read_to_string(run.path().join("out/rtbuild-tune.sh")).unwrap();
    assert!(script.contains("HK_MASK='f7'\nRT_CPUS='3'\n"), "{script}");
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(run.path().join("out/rtbuild-tune.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    assert!(run.json()["script"].as_str().unwrap().ends_with("out/rtbuild-tune.sh"));
}

/// As an ordinary user `apply` and `revert` stop before the script's first write, in one line
/// (they once ended with the shell's "cannot create /run/rtbuild-tune.state"); `verify` still runs.
/// The refusal comes alone: no `Tuning …` line says first that the tuning runs.
#[test]
fn apply_and_revert_as_non_root_refuse_up_front_in_one_line() {
    for action in ["apply", "revert"] {
        let test = Test::new().unprivileged();
        let root = test.path().join("root");
        fake_tree(&root, "0-3");
        let before = fs::read_to_string(root.join("proc/sys/kernel/timer_migration")).unwrap();
        let run = test
            .env("RTBUILD_SYSROOT", &root)
            .args(["tune", "--local", "--rt-cpus", "3", &format!("--{action}")])
            .run()
            .code_is(2);
        // One error line and nothing else; the user id is the test user's, read with `id`
        // (Unprivileged::get), not from rtbuild.
        let uid = Unprivileged::get().uid;
        let run = run
            .stderr_is(&format!(
                "error: tune --{action} needs root on this machine, which runs it as user id \
                 {uid}; run rtbuild as root for --local, or use --target ssh://root@HOST\n"
            ))
            .stdout_is("");
        assert_eq!(
            fs::read_to_string(run.path().join("root/proc/sys/kernel/timer_migration")).unwrap(),
            before
        );
    }
}

/// What `tune --local --rt-cpus 3` on the fake 4-CPU tree prints on stderr: the status line, and
/// for apply and a passing verify the note on the one IRQ (11) the tree refuses to move.
fn tuning(action: &str, irq_note: bool) -> String {
    let note = if irq_note {
        "note: 1 IRQ refused the housekeeping affinity (per-CPU or managed IRQs off the RT CPUs); \
         listed, not counted as failures\n"
    } else {
        ""
    };
    format!("      Tuning {action} on this machine: RT CPUs 3, housekeeping 0-2\n{note}")
}

#[test]
fn local_apply_verify_revert_through_the_cli_on_a_fake_tree() {
    let test = Test::new();
    let root = test.path().join("root");
    fake_tree(&root, "0-3");
    let args = |action: &str| {
        vec![
            "tune".to_string(),
            "--local".into(),
            "--rt-cpus".into(),
            "3".into(),
            format!("--{action}"),
        ]
    };
    let run = test
        .env("RTBUILD_SYSROOT", &root)
        .args(args("apply"))
        .run()
        .stderr_is(&tuning("apply", true))
        .success();
    assert!(
        run.stdout().contains("set /proc/sys/kernel/timer_migration 0 (was 1)"),
        "{}",
        run.stdout()
    );
    assert!(run.stdout().contains("refused /proc/irq/11/smp_affinity"), "{}", run.stdout());
    assert_eq!(fs::read_to_string(root.join("proc/irq/9/smp_affinity")).unwrap(), "7\n");
    let root2 = root.clone();
    let verify = Test::new()
        .env("RTBUILD_SYSROOT", &root2)
        .args(args("verify"))
        .run()
        .stderr_is(&tuning("verify", true))
        .success();
    assert!(!verify.stdout().contains("mismatch"), "{}", verify.stdout());
    let passing = Test::new()
        .env("RTBUILD_SYSROOT", &root)
        .args(args("verify"))
        .args(["--json"])
        .run()
        .stderr_is(&tuning("verify", true))
        .success()
        .json();
    fs::write(root.join("proc/sys/kernel/timer_migration"), "1\n").unwrap();
    // Failing, --json says on stderr what a passing run says (the IRQ note), then the warning;
    // the JSON has the same fields, the refused IRQ among them.
    let verify = Test::new()
        .env("RTBUILD_SYSROOT", &root)
        .args(args("verify"))
        .args(["--json"])
        .run()
        .stderr_is(&format!(
            "{}warning: 1 knob is not tuned (`problems` in the JSON)\n",
            tuning("verify", true)
        ))
        .code_is(1);
    let json = verify.json();
    assert_eq!(json["ok"], false);
    assert_eq!(json["problems"][0], "mismatch /proc/sys/kernel/timer_migration want 0 got 1");
    let fields =
        |v: &serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(fields(&json), fields(&passing));
    assert_eq!(json["refused_irqs"], passing["refused_irqs"]);
    assert_eq!(json["refused_irqs"][0]["irq"], "11");
    Test::new()
        .env("RTBUILD_SYSROOT", &root)
        .args(args("revert"))
        .run()
        .ignore_stdout()
        .stderr_is(&tuning("revert", false))
        .success();
    assert_eq!(fs::read_to_string(root.join("proc/irq/9/smp_affinity")).unwrap(), "f\n");
    assert_eq!(fs::read_to_string(root.join("proc/sys/kernel/printk")).unwrap(), "4 4 1 7\n");
}

#[test]
fn tune_bad_inputs_exit_2_and_write_nothing() {
    let test = Test::new();
    let root = test.path().join("root");
    fake_tree(&root, "0-3");
    let cases: [(&[&str], &str); 10] = [
        (
            &["tune", "--local", "--rt-cpus", "0", "--verify"],
            "CPU 0 cannot be an RT CPU: it keeps boot, timekeeping and unmovable interrupts; pick RT CPUs from 1-3",
        ),
        (
            &["tune", "--local", "--rt-cpus", "6", "--verify"],
            "RT CPU 6 is outside this machine, which has CPUs 0-3 online; pick RT CPUs from 0-3",
        ),
        (
            &["tune", "--local", "--verify"],
            "no RT CPU given; pass --rt-cpus LIST (e.g. --rt-cpus 7) or --machine NAME",
        ),
        (
            &["tune", "--rt-cpus", "2", "--apply"],
            "--apply needs a place to run; pass --local or --target ssh://USER@HOST[:PORT]",
        ),
        (
            &["tune", "--rt-cpus", "0", "--bootargs"],
            "CPU 0 cannot be an RT CPU: it keeps boot, timekeeping and unmovable interrupts; pick RT CPUs from CPU 1 up",
        ),
        (
            &["tune", "--rt-cpus", "2", "--housekeeping", "2", "--emit", "out"],
            "CPU 2 is both RT and housekeeping; give each CPU one role (--housekeeping must not overlap --rt-cpus)",
        ),
        (
            &["tune", "--bootargs"],
            "no RT CPU given; pass --rt-cpus LIST (e.g. --rt-cpus 7) or --machine NAME",
        ),
        (
            &["tune", "--rt-cpus", "3", "--bootargs"],
            "--bootargs cannot tell which CPUs irqaffinity gets: with RT CPUs 3 and no board, the board's other CPUs are unknown; pass --cpu-count N (the board's CPUs, e.g. --cpu-count 8), --housekeeping LIST, --machine NAME or --local/--target",
        ),
        (
            &["tune", "--rt-cpus", "8", "--cpu-count", "8", "--bootargs"],
            "RT CPU 8 is outside the board of --cpu-count 8, which has CPUs 0-7; pick RT CPUs from 0-7",
        ),
        (
            &["tune", "--target", "ssh://a;b@host", "--rt-cpus", "2", "--verify"],
            "target `ssh://a;b@host` has an invalid user `a;b`; use letters, digits, `.`, `-` and `_`",
        ),
    ];
    for (args, message) in cases {
        Test::new()
            .env("RTBUILD_SYSROOT", &root)
            .args(args.iter().copied())
            .run()
            .usage_error(message)
            .nothing_written("out");
    }
    assert_eq!(fs::read_to_string(root.join("proc/sys/kernel/timer_migration")).unwrap(), "1\n");
}

/// Parses the boot-time recipe with the real BitBake `bb` library (classes stubbed: only the
/// recipe's own syntax and values are under test), then runs its `do_install` with sh.
#[test]
fn real_bitbake_parses_the_tune_recipe_and_its_do_install_installs_the_unit() {
    let venv = crate::support::harness::venv();
    let tmp = tempfile::tempdir().unwrap();
    let classes = tmp.path().join("bbpath/classes-recipe");
    fs::create_dir_all(&classes).unwrap();
    for class in ["systemd", "allarch"] {
        fs::write(classes.join(format!("{class}.bbclass")), "").unwrap();
    }
    let (unpack, image) = (tmp.path().join("unpack"), tmp.path().join("image"));
    let recipe = crate::support::harness::project_root()
        .join("layers/meta-rtbuild-tune/recipes-rt/rtbuild-tune/rtbuild-tune_1.0.bb");
    let script = r#"
import json, sys, bb, bb.data, bb.parse, bb.siggen
bbpath, unpack, image, recipe = sys.argv[1:5]
d = bb.data.init()
for k, v in {"BBPATH": bbpath, "COMMON_LICENSE_DIR": "/licenses", "UNPACKDIR": unpack,
             "D": image, "sbindir": "/usr/sbin", "systemd_system_unitdir": "/usr/lib/systemd/system",
             "PN": "rtbuild-tune", "OVERRIDES": "rtbuild-tune", "__bbclasstype": "recipe",
             "BB_SIGNATURE_HANDLER": "noop"}.items():
    d.setVar(k, v)
bb.parse.siggen = bb.siggen.init(d)
d = bb.parse.handle(recipe, d)[""]
print(json.dumps({v: d.getVar(v) for v in ["SRC_URI", "S", "SYSTEMD_SERVICE", "SYSTEMD_AUTO_ENABLE",
                                           "LICENSE", "FILES", "do_install"]}))
"#;
    let out = std::process::Command::new(venv.join("bin/python3"))
        .args(["-c", script])
        .arg(tmp.path().join("bbpath"))
        .args([&unpack, &image, &recipe])
        .env(
            "PYTHONPATH",
            crate::support::harness::project_root().join("tests/support/bitbake/lib"),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let vars: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let words =
        |v: &str| vars[v].as_str().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(words("SRC_URI"), "file://rtbuild-tune.sh file://rtbuild-tune.service");
    assert_eq!(vars["S"], unpack.to_str().unwrap());
    assert_eq!(vars["SYSTEMD_SERVICE"], "rtbuild-tune.service");
    assert_eq!(vars["SYSTEMD_AUTO_ENABLE"], "enable");
    assert_eq!(words("FILES"), "/usr/lib/systemd/system/rtbuild-tune.service");

    // do_install, run for real on the files `generate` puts beside the recipe: the unit shipped
    // in the layer's `files/` and a stand-in for the rendered script.
    fs::create_dir_all(&unpack).unwrap();
    let files = recipe.parent().unwrap().join("files");
    for entry in fs::read_dir(&files).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), unpack.join(entry.file_name())).unwrap();
    }
    fs::write(unpack.join("rtbuild-tune.sh"), "#!/bin/sh\necho tuned\n").unwrap();
    let install = std::process::Command::new("sh")
        .args(["-ec", vars["do_install"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));
    let unit =
        fs::read_to_string(image.join("usr/lib/systemd/system/rtbuild-tune.service")).unwrap();
    assert!(unit.contains("ExecStart=/usr/sbin/rtbuild-tune.sh apply\n"), "{unit}");
    assert!(unit.contains("ExecStop=/usr/sbin/rtbuild-tune.sh revert\n"), "{unit}");
    assert!(unit.contains("ConditionPathExists=/usr/sbin/rtbuild-tune.sh\n"), "{unit}");
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(image.join("usr/sbin/rtbuild-tune.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

/// Boards without Yocto (RK3562J, Phytium): the boot arguments for the same CPU plan, from
/// `--rt-cpus` alone, ready for U-Boot, extlinux.conf and GRUB.
#[test]
fn bootargs_for_a_board_without_a_catalog_entry() {
    // Issue 40: IQ-8275's RT CPU 3 on its 8 CPUs: irqaffinity is every other CPU, on both sides,
    // as verify's consistency check wants it (without --cpu-count the board is unknown: refused).
    let run = Test::new()
        .args(["tune", "--rt-cpus", "3", "--cpu-count", "8", "--bootargs"])
        .run()
        .success();
    let line = "isolcpus=3 nohz_full=3 rcu_nocbs=3 irqaffinity=0-2,4-7";
    assert_eq!(run.stdout().lines().next(), Some(line));
    assert!(run.stdout().contains(&format!("setenv bootargs \"${{bootargs}} {line}\"; saveenv")));
    assert!(run.stdout().contains(&format!("GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {line}\"")));
    assert!(!run.stderr().contains("note"), "{}", run.stderr());
    let json = Test::new()
        .args(["--json", "tune", "--rt-cpus", "3", "--housekeeping", "0-2,4-5", "--bootargs"])
        .run()
        .success()
        .json();
    assert_eq!(json["bootargs"], "isolcpus=3 nohz_full=3 rcu_nocbs=3 irqaffinity=0-2,4-5");
    assert!(json["note"].is_null());
    // A catalog machine gives meta-qcom's full RT command line.
    let machine =
        Test::new().args(["tune", "--machine", "rb3gen2-core-kit", "--bootargs"]).run().success();
    assert!(
        machine.stdout().starts_with("isolcpus=7 irqaffinity=0-6 rcu_nocbs=7 "),
        "{}",
        machine.stdout()
    );
}

/// `--emit` without `--machine`: the script for the CPUs `--rt-cpus`/`--housekeeping` name.
#[test]
fn emit_without_a_machine_uses_the_given_cpus() {
    let run = Test::new()
        .args(["tune", "--rt-cpus", "3", "--housekeeping", "0-2", "--emit", "out"])
        .run()
        .stderr_is("       Wrote out/rtbuild-tune.sh\n")
        .success();
    let script = fs::read_to_string(run.path().join("out/rtbuild-tune.sh")).unwrap();
    assert!(
        script.contains("RT CPUs 3 (4 CPUs in all); housekeeping CPUs 0-2 (mask 7)"),
        "{script}"
    );
    assert!(script.contains("RT_CPUS='3'"), "{script}");
}
