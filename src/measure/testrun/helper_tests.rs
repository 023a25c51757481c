//! The on-target helper run by the real `sh` on this machine: every load of a scenario started
//! by one call, and the probe reading `/proc` without starting a program (so the look rtbuild
//! takes while cyclictest measures costs a loaded or emulated board no program start).

use std::process::Output;

use super::HELPER;

/// Runs the helper with `args` under dash (a target's plain POSIX `sh`); with `path`, the
/// helper runs with that as its only PATH.
fn helper(args: &[&str], path: Option<&str>) -> Output {
    let mut argv = vec!["-s", "--"];
    argv.extend(args);
    let script = match path {
        Some(path) => format!("PATH='{path}'\n{HELPER}"),
        None => HELPER.to_string(),
    };
    duct::cmd("dash", argv)
        .stdin_bytes(script)
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .expect("dash runs (.ci/setup installs it)")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The first CPU this test may run on (never assumes which CPUs the machine has).
fn first_allowed_cpu() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list in /proc/self/status")
        .trim()
        .to_string();
    list.split([',', '-']).next().unwrap().to_string()
}

/// A state folder of the helper's shape (`/tmp/rtbuild-test.*`), removed by `cleanup`.
fn state() -> String {
    let out = helper(&["prepare"], None);
    let out = text(&out.stdout);
    out.lines().find_map(|l| l.strip_prefix("state ")).expect("prepare names its folder").into()
}

#[test]
fn one_call_starts_every_load_and_the_probe_sees_them_without_starting_a_program() {
    let state = state();
    let cpu = first_allowed_cpu();
    // Two loads in one call: one pinned, one left to PID 1's mask (`-`), whose argv has an
    // argument that looks like the next load's name.
    let started = helper(
        &[
            "start-loads",
            &state,
            "one",
            &cpu,
            "2",
            "sleep",
            "60",
            "two",
            "-",
            "3",
            "sh",
            "-c",
            "sleep 61",
        ],
        None,
    );
    let reply = text(&started.stdout);
    assert_eq!((started.status.code(), text(&started.stderr).as_str()), (Some(0), ""), "{reply}");
    let groups: Vec<&str> = reply.lines().filter_map(|l| l.strip_prefix("started ")).collect();
    assert_eq!(groups.len(), 2, "{reply}");
    let pids = std::fs::read_to_string(format!("{state}/load.pids")).unwrap();
    assert_eq!(pids.lines().collect::<Vec<_>>(), groups);

    // With no program reachable (PATH empty of programs) the probe still sees every load
    // process of both groups, and says nothing on stderr: it started none.
    let empty = tempfile::tempdir().unwrap();
    let empty = empty.path().to_str().unwrap();
    let mut probe = String::new();
    for _ in 0..50 {
        let out = helper(&["probe", &state], Some(empty));
        assert_eq!(text(&out.stderr), "", "the probe started a program");
        probe = text(&out.stdout);
        // sh -c's sleep is a second process of group two (once sh has started it).
        if probe.lines().filter(|l| l.starts_with("load ")).count() == 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let loads: Vec<&str> = probe.lines().filter(|l| l.starts_with("load ")).collect();
    assert_eq!(loads.len(), 3, "{probe}");
    let pinned = format!("load {}|{cpu}|", groups[0]);
    assert!(loads.iter().any(|l| l.starts_with(&pinned) && l.ends_with("|sleep")), "{probe}");
    assert!(probe.lines().any(|l| l.starts_with("helper ") && l.ends_with("|dash")), "{probe}");

    let alive = helper(&["load-alive", &state], None);
    let alive_text = text(&alive.stdout);
    assert!(alive_text.lines().any(|l| l == "alive 3"), "{alive_text}");
    let usage = alive_text.lines().filter(|l| l.starts_with("usage ")).count();
    assert_eq!(usage, 3, "{alive_text}");

    let stop = helper(&["stop", &state], None);
    assert_eq!(text(&stop.stderr), "");
    let gone = helper(&["load-alive", &state], None);
    assert!(text(&gone.stdout).lines().any(|l| l == "alive 0"), "{}", text(&gone.stdout));
    assert!(text(&stop.stdout).lines().any(|l| l == "left 0"), "{}", text(&stop.stdout));
    let cleanup = helper(&["cleanup", &state], None);
    assert_eq!((cleanup.status.code(), text(&cleanup.stderr).as_str()), (Some(0), ""));
}

#[test]
fn a_load_list_that_does_not_add_up_starts_nothing() {
    let state = state();
    for args in [
        vec!["one", "-", "3", "sleep", "60"],
        vec!["one", "-", "x", "sleep"],
        vec!["one", "-", "0"],
    ] {
        let mut all = vec!["start-loads", state.as_str()];
        all.extend(args.iter().copied());
        let out = helper(&all, None);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
    assert!(!std::path::Path::new(&format!("{state}/load.pids")).exists());
    let cleanup = helper(&["cleanup", &state], None);
    assert_eq!(cleanup.status.code(), Some(0));
}
