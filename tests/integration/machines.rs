use crate::harness::Test;

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
