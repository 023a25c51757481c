use std::path::{Path, PathBuf};

use crate::support::fixtures::{Bitbake, Fixtures, write};
use crate::support::harness::{Test, rtbuild_bin};

#[test]
fn machines_table_lists_every_board() {
    let run = Test::new().args(["machines"]).run().success().stderr_is("");
    let out = run.stdout();
    for name in [
        "rb3gen2-core-kit",
        "iq-9075-evk",
        "iq-615-evk",
        "iq-8275-evk",
        "qcs615-ride",
        "qcs8300-ride-sx",
        "qcs9100-ride-sx",
        "iq-x7181-evk",
        "qcm6490-idp",
    ] {
        assert!(out.contains(name), "{name} missing from\n{out}");
    }
}

#[test]
fn machines_json_is_machine_readable() {
    let run = Test::new().args(["machines", "--json"]).run().success().stderr_is("");
    let json = run.json();
    let rb3 = json.as_array().unwrap().iter().find(|m| m["name"] == "rb3gen2-core-kit").unwrap();
    assert_eq!(rb3["rt"]["rt_cpus"], "7");
    assert_eq!(rb3["rt"]["housekeeping"], "0-6");
    assert_eq!(rb3["reference"]["results"][0]["max_us"], 6);
}

#[test]
fn show_alias_says_so_once() {
    Test::new()
        .args(["machines", "show", "qcs6490-rb3gen2"])
        .run()
        .success()
        .stderr_is("note: `qcs6490-rb3gen2` is an alias of `rb3gen2-core-kit`\n")
        .stdout_contains("RT CPUs         7");
}

#[test]
fn unknown_machine_suggests_the_closest() {
    Test::new().args(["machines", "show", "qcs649-rb3gen2"]).run().usage_error(
        "unknown machine `qcs649-rb3gen2`; did you mean qcs6490-rb3gen2? See `rtbuild machines`",
    );
}

#[test]
fn user_machines_dir_adds_a_board() {
    let yaml = "name: my-board\ndescription: test\nkas_file: ci/my-board.yml\nsoc: X\nsoc_family: x\n\
                cpus: 4\nrt: {rt_cpus: 3, housekeeping: 0-2, rcu_expedited: '1', cpuidle_off: '1'}\n\
                serial_console: ttyS0,115200\nstorage: emmc\n";
    Test::new()
        .file("boards/my-board.yaml", yaml)
        .args(["machines", "show", "my-board", "--machines-dir", "boards"])
        .run()
        .success()
        .stdout_contains("my-board — test");
}

/// The fixture meta-qcom (not committed: these tests read the folder), with rb3gen2-core-kit's
/// conf moved to RT CPUs 6-7 and a board only meta-qcom knows.
fn meta_qcom(dir: &Path) -> PathBuf {
    let fixtures = Fixtures::create(&dir.join("repos"), Bitbake::Fake("#!/bin/sh\nexit 0\n"));
    let qcom = fixtures.repo("meta-qcom");
    let rb3 = qcom.join("conf/machine/rb3gen2-core-kit.conf");
    let text = std::fs::read_to_string(&rb3)
        .unwrap()
        .replace("QCOM_RT_CPU        = \"7\"", "QCOM_RT_CPU        = \"6-7\"")
        .replace("QCOM_IRQAFF        = \"0-6\"", "QCOM_IRQAFF        = \"0-5\"")
        .replace("QCOM_RCU_NOCBS     = \"7\"", "QCOM_RCU_NOCBS     = \"6-7\"");
    std::fs::write(&rb3, text).unwrap();
    write(
        &qcom.join("conf/machine/new-evk.conf"),
        // `?=` before the require: qcom-common.inc's `?= ""` then leaves them alone.
        "#@NAME: A new EVK\nQCOM_RT_CPU ?= \"5\"\nQCOM_IRQAFF ?= \"0-4\"\nQCOM_RCU_NOCBS ?= \"5\"\n\
         require conf/machine/include/qcom-common.inc\n",
    );
    write(
        &qcom.join("ci/new-evk.yml"),
        "header:\n  version: 14\n  includes:\n  - ci/base.yml\nmachine: new-evk\n",
    );
    qcom
}

#[test]
fn meta_qcom_machines_are_compared_with_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let qcom = meta_qcom(dir.path());
    let run =
        Test::new().args(["--json", "machines", "--meta-qcom"]).arg_path(&qcom).run().success();
    let json = run.json();
    let entry = |name: &str| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {json}"))
            .clone()
    };
    let rb3 = entry("rb3gen2-core-kit");
    assert_eq!(rb3["status"], "differs");
    assert_eq!(rb3["rt"]["rt_cpus"], "6-7");
    assert_eq!(rb3["rt"]["housekeeping"], "0-5");
    assert_eq!(rb3["soc"], "QCS6490", "the catalog's facts stay");
    assert_eq!(rb3["differences"][0]["field"], "rt.rt_cpus");
    assert_eq!(rb3["differences"][0]["catalog"], "7");
    assert_eq!(rb3["differences"][0]["meta_qcom"], "6-7");
    assert_eq!(rb3["sources"]["QCOM_RT_CPU"]["op"], "=");
    assert_eq!(rb3["sources"]["QCOM_RT_CPU"]["file"], "conf/machine/rb3gen2-core-kit.conf");
    assert_eq!(rb3["sources"]["QCOM_RT_CPU"]["line"], 10);
    // The deprecated conf requires the new one and is compared as the catalog's alias.
    let alias = entry("qcs6490-rb3gen2-core-kit");
    assert_eq!(alias["catalog_name"], "rb3gen2-core-kit");
    assert_eq!(alias["status"], "differs");
    let x7181 = entry("iq-x7181-evk");
    assert_eq!(x7181["status"], "matches");
    assert_eq!(x7181["cpus"], 12);
    let new = entry("new-evk");
    assert_eq!(new["status"], "unknown");
    assert_eq!(new["cpus"], 6);
    assert_eq!(new["cpus_source"], "implied");
    assert_eq!(new["sources"]["QCOM_RT_CPU"]["op"], "?=");
    assert_eq!(new["description"], "A new EVK");

    let text = Test::new().args(["machines", "--meta-qcom"]).arg_path(&qcom).run().success();
    let out = text.stdout();
    let line = |name: &str| {
        out.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_default().to_string()
    };
    assert!(
        line("rb3gen2-core-kit").contains(
            "differs from the catalog: rt.rt_cpus (QCOM_RT_CPU): catalog 7, meta-qcom 6-7"
        ),
        "{out}"
    );
    assert!(line("new-evk").contains("not in the catalog"), "{out}");
    assert!(line("iq-615-evk").contains("matches the catalog"), "{out}");
    assert!(text.stderr().contains("2 differ from the catalog, 1 not in it"), "{}", text.stderr());
}

#[test]
fn generate_follows_meta_qcom_unless_rt_cpus_is_given_and_takes_a_board_only_it_knows() {
    let dir = tempfile::tempdir().unwrap();
    let qcom = meta_qcom(dir.path());
    let plan = |out: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(out.join("rtbuild-plan.json")).unwrap()).unwrap()
    };
    let out = dir.path().join("followed");
    let run = Test::new()
        .args(["generate", "--machine", "rb3gen2-core-kit", "--meta-qcom"])
        .arg_path(&qcom)
        .args(["--out"])
        .arg_path(&out)
        .run()
        .ignore_stdout()
        .success();
    assert!(run.stderr().contains("QCOM_RT_CPU = \"6-7\" (catalog: \"7\")"), "{}", run.stderr());
    assert!(run.stderr().contains("following meta-qcom"), "{}", run.stderr());
    let followed = plan(&out);
    assert_eq!(followed["rt_cpus"], "6-7");
    assert_eq!(followed["housekeeping"], "0-5");
    assert_eq!(followed["machine_defaults"]["source"], "meta-qcom");
    assert_eq!(followed["machine_defaults"]["differences"][1]["variable"], "QCOM_IRQAFF");
    let kas = std::fs::read_to_string(out.join("rb3gen2-core-kit-rt.yml")).unwrap();
    assert!(kas.contains("QCOM_RT_CPU:forcevariable = \"6-7\""), "{kas}");

    let out = dir.path().join("chosen");
    let run = Test::new()
        .args(["generate", "--machine", "rb3gen2-core-kit", "--rt-cpus", "5", "--meta-qcom"])
        .arg_path(&qcom)
        .args(["--out"])
        .arg_path(&out)
        .run()
        .ignore_stdout()
        .success();
    assert!(run.stderr().contains("--rt-cpus wins"), "{}", run.stderr());
    let chosen = plan(&out);
    assert_eq!(chosen["rt_cpus"], "5");
    assert_eq!(chosen["machine_defaults"]["source"], "catalog");

    let out = dir.path().join("new");
    Test::new()
        .args(["generate", "--machine", "new-evk", "--meta-qcom"])
        .arg_path(&qcom)
        .args(["--out"])
        .arg_path(&out)
        .run()
        .ignore_stdout()
        .success()
        .stderr_contains("`new-evk` is not in rtbuild's catalog");
    let new = plan(&out);
    assert_eq!(new["machine"], "new-evk");
    assert_eq!(new["rt_cpus"], "5");
    assert_eq!(new["housekeeping"], "0-4");
    assert_eq!(new["machine_defaults"]["in_catalog"], false);
    let kas = std::fs::read_to_string(out.join("new-evk-rt.yml")).unwrap();
    assert!(kas.contains("file: \"ci/new-evk.yml\""), "{kas}");
}

#[test]
fn bad_meta_qcom_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let qcom = meta_qcom(dir.path());
    let not = dir.path().join("repos/meta-qcom-distro");
    Test::new().args(["machines", "--meta-qcom"]).arg_path(&not).run().usage_error(&format!(
        "{} is not a meta-qcom checkout (it has no conf/layer.conf declaring BBFILE_COLLECTIONS \"qcom\"); pass the folder kas checked meta-qcom out to, e.g. rtbuild/meta-qcom",
        not.display()
    ));
    Test::new()
        .args(["generate", "--machine", "nope-evk", "--meta-qcom"])
        .arg_path(&qcom)
        .run()
        .code_is(2)
        .stderr_contains("machine `nope-evk` is neither in rtbuild's catalog nor a machine conf")
        .nothing_written("rtbuild");
    write(
        &qcom.join("conf/machine/orphan-evk.conf"),
        "QCOM_RT_CPU = \"3\"\nQCOM_IRQAFF = \"0-2\"\n",
    );
    Test::new()
        .args(["generate", "--machine", "orphan-evk", "--meta-qcom"])
        .arg_path(&qcom)
        .run()
        .usage_error(&format!(
            "meta-qcom in {} has conf/machine/orphan-evk.conf but no ci/orphan-evk.yml for kas; add one (like ci/rb3gen2-core-kit.yml) or pick another machine",
            qcom.display()
        ))
        .nothing_written("rtbuild");
    let conf = qcom.join("conf/machine/new-evk.conf");
    let text = std::fs::read_to_string(&conf).unwrap().replace("0-4", "0-4,x");
    std::fs::write(&conf, text).unwrap();
    let message = format!(
        "{}:3: QCOM_IRQAFF = \"0-4,x\" is not a CPU list (`x` is not a CPU number); fix the machine conf or pass --rt-cpus/--housekeeping",
        conf.display()
    );
    Test::new().args(["machines", "--meta-qcom"]).arg_path(&qcom).run().usage_error(&message);
    Test::new()
        .args(["generate", "--machine", "new-evk", "--meta-qcom"])
        .arg_path(&qcom)
        .run()
        .usage_error(&message)
        .nothing_written("rtbuild");
    Test::new()
        .args(["machines", "--meta-qcom"])
        .arg_path(&qcom)
        .args(["show", "iq-x7181-evk"])
        .run()
        .usage_error("--meta-qcom lists every machine; drop `show NAME`, or drop --meta-qcom");
}

#[test]
fn completions_and_man_pages_come_from_the_command_line_definition() {
    let run = Test::new().args(["completions", "bash"]).run().success();
    assert!(run.stdout().contains("_rtbuild()"), "{}", run.stdout());
    assert!(run.stdout().contains("--rtbuild-from"), "ci's flags complete");
    Test::new().args(["completions", "tcsh"]).run().code_is(2).stderr_is(
        "error: invalid value 'tcsh' for '<SHELL>'; did you mean 'zsh'? see `rtbuild completions --help`\n",
    );
    let test = Test::new();
    let out = test.path().join("man1");
    let run = test
        .args(["man-pages", "--out-dir", out.to_str().unwrap()])
        .run()
        .success()
        .stderr_contains("rtbuild-image.1");
    assert_eq!(run.stdout().trim_end(), out.display().to_string());
    for page in ["rtbuild.1", "rtbuild-image.1", "rtbuild-ci.1", "rtbuild-man-pages.1"] {
        let text = std::fs::read_to_string(out.join(page)).unwrap_or_default();
        assert!(text.contains(".SH"), "{page}: {text}");
    }
}

/// What bash's own completion offers for `words` (the last one being completed), with the script
/// `rtbuild completions bash` prints loaded into a real bash (non-interactive, no user files), by
/// the function the script registers with `complete -F` for rtbuild.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    bash_completes_with(script, words, &[])
}

/// [`bash_completes`] with `env` set for the bash that completes, and the rtbuild under test
/// first on its PATH (the script asks `rtbuild` for the boards of `--machines-dir`).
fn bash_completes_with(
    script: &std::path::Path,
    words: &[&str],
    env: &[(&str, &std::path::Path)],
) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE='{}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         read -ra spec <<< \"$(complete -p rtbuild)\"\n\
         for ((i = 0; i < ${{#spec[@]}}; i++)); do [[ ${{spec[i]}} == -F ]] && fn=${{spec[i + 1]}}; done\n\
         \"$fn\" rtbuild '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        words.join(" "),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let bin_dir = rtbuild_bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = std::process::Command::new("bash")
        .args(["--noprofile", "--norc", "-c", &program])
        .env("PATH", path)
        .env_remove("RTBUILD_MACHINES_DIR")
        .envs(env.iter().copied())
        .output()
        .expect("bash");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Issue 36 item 6: the completions offer the catalog's machine names and aliases for
/// `--machine` (and `--machines`), the scenarios for `--scenario` and the rt-tests programs for
/// `--tests`, checked through bash's completion itself.
#[test]
fn bash_completes_machines_scenarios_and_tests() {
    let run = Test::new().args(["completions", "bash"]).run().success();
    let script = run.path().join("rtbuild.bash");
    std::fs::write(&script, run.stdout()).unwrap();
    let offered = bash_completes(&script, &["rtbuild", "image", "--machine", "qcs"]);
    assert!(offered.contains(&"qcs6490-rb3gen2".to_string()), "{offered:?}");
    assert!(offered.iter().all(|m| m.starts_with("qcs")), "{offered:?}");
    let offered = bash_completes(&script, &["rtbuild", "test", "--machine", "rk35"]);
    assert!(offered.contains(&"rk3588-evb".to_string()), "{offered:?}");
    let offered = bash_completes(&script, &["rtbuild", "matrix", "--machines", "rb3"]);
    assert!(offered.contains(&"rb3gen2-core-kit".to_string()), "{offered:?}");
    let offered = bash_completes(&script, &["rtbuild", "test", "--scenario", "sys"]);
    assert_eq!(offered, ["system-load"]);
    let offered = bash_completes(&script, &["rtbuild", "test", "--tests", "osl"]);
    assert_eq!(offered, ["oslat"]);
    let offered = bash_completes(&script, &["rtbuild", "machines", "show", "iq-9"]);
    assert!(offered.contains(&"iq-9075-evk".to_string()), "{offered:?}");
    // Any name still parses: the catalog is a hint, --machines-dir boards are valid too.
    Test::new()
        .args(["tune", "--machine", "not-in-catalog", "--emit", "out"])
        .run()
        .code_is(2)
        .stderr_contains("not-in-catalog");
}

/// Bash also offers the boards of the `--machines-dir` on the line (or of
/// `$RTBUILD_MACHINES_DIR`), once each, after the catalog's; a folder whose name holds shell
/// syntax is passed as a folder, never run.
#[test]
fn bash_completes_the_boards_of_the_machines_dir_on_the_line() {
    let run = Test::new().args(["completions", "bash"]).run().success();
    let script = run.path().join("rtbuild.bash");
    std::fs::write(&script, run.stdout()).unwrap();
    let boards = run.path().join("boards $(touch pwned)");
    std::fs::create_dir(&boards).unwrap();
    std::fs::write(
        boards.join("bench.yaml"),
        "name: rk-bench-7\ncpus: 8\nrt: { rt_cpus: \"7\" }\n",
    )
    .unwrap();
    std::fs::write(
        boards.join("lab.yaml"),
        "name: rk-lab-2\naliases: [lab-two]\ncpus: 4\nrt: { rt_cpus: \"3\" }\n",
    )
    .unwrap();
    let dir = boards.display().to_string();
    let offered =
        bash_completes(&script, &["rtbuild", "test", "--machines-dir", &dir, "--machine", "rk"]);
    assert_eq!(offered, ["rk3562j-evm", "rk3588-evb", "rk-bench-7", "rk-lab-2"], "{offered:?}");
    let offered =
        bash_completes(&script, &["rtbuild", "machines", "--machines-dir", &dir, "show", "lab"]);
    assert_eq!(offered, ["lab-two"]);
    let offered = bash_completes_with(
        &script,
        &["rtbuild", "report", "--machine", "rk-"],
        &[("RTBUILD_MACHINES_DIR", boards.as_path())],
    );
    assert_eq!(offered, ["rk-bench-7", "rk-lab-2"]);
    // Without a folder, only the catalog; after other flags, no board.
    let offered = bash_completes(&script, &["rtbuild", "test", "--machine", "rk-"]);
    assert!(offered.is_empty(), "{offered:?}");
    assert!(!run.path().join("pwned").exists() && !Path::new("pwned").exists());
    // The list bash reads: every name and alias on a line.
    Test::new()
        .args(["machines", "--names", "--machines-dir"])
        .arg_path(&boards)
        .run()
        .success()
        .stdout_contains("\nlab-two\n")
        .stdout_contains("\nrk-bench-7\n")
        .stdout_contains("\nqcs6490-rb3gen2\n");
}

#[test]
fn machines_with_a_board_name_suggests_machines_show() {
    Test::new().args(["machines", "rb3gen2-core-kit"]).run().code_is(2).stderr_is(
        "error: unrecognized subcommand 'rb3gen2-core-kit'; to show one machine, run `rtbuild machines show rb3gen2-core-kit`\n",
    );
}

/// Issue 36 item 4: the seed guides' boards are listed, marked as measured only, and shown
/// with their sources; `--help` carries their procedures.
#[test]
fn the_seed_boards_are_listed_for_measuring() {
    let run = Test::new().args(["machines"]).run().success().stderr_is("");
    let out = run.stdout();
    for (name, cpus, rt) in
        [("rk3588-evb", "8", "7"), ("rk3562j-evm", "4", "3"), ("phytium-ft2000-4", "4", "2-3")]
    {
        let line = out.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_default();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.get(2..4), Some(&[cpus, rt][..]), "{line}");
        assert!(line.contains(" measure"), "{line}");
        assert!(!line.contains("build"), "{line}");
    }
    let rb3 = out.lines().find(|l| l.starts_with("rb3gen2-core-kit ")).unwrap_or_default();
    assert!(rb3.contains("build, measure"), "{rb3}");
    Test::new()
        .args(["machines", "show", "rk3562j-evm"])
        .run()
        .success()
        .stdout_contains("measuring only")
        .stdout_contains("source          ElecFans");
    let help = Test::new().args(["test", "--help"]).run().success();
    for procedure in ["--machine rk3588-evb", "--machine rk3562j-evm", "--machine phytium-ft2000-4"]
    {
        assert!(help.stdout().contains(procedure), "{procedure}");
    }
}

/// A build asks for the build fields: a board for measuring only is refused naming every
/// missing field at once, exit 2, nothing written; a machine file missing required fields
/// names them all at once too.
#[test]
fn a_build_for_a_measuring_only_board_names_every_missing_field() {
    Test::new()
        .args(["generate", "--machine", "rk3588-evb", "--out", "gen"])
        .run()
        .usage_error(
            "machine `rk3588-evb` is for measuring only: its file has no kas_file, soc_family, serial_console, storage, which a build needs; add them to its machine file (see `rtbuild machines show rb3gen2-core-kit` for a board that has them)",
        )
        .nothing_written("gen");
    let test = Test::new().file("boards/half.yaml", "name: half\ndescription: no CPUs\n");
    let dir = test.path().join("boards");
    test.args(["machines", "--machines-dir"]).arg_path(&dir).run().usage_error(&format!(
        "machine file {} is not valid: it lacks cpus, rt.rt_cpus (a board needs at least `name: NAME`, `cpus: N` and `rt: {{ rt_cpus: LIST }}`; kas_file, soc, soc_family, serial_console, storage only to build for it); fix the file or remove it",
        dir.join("half.yaml").display()
    ));
}
