//! `rtbuild verify --target ssh://…` against a real `sshd` this test starts on loopback with a
//! throwaway key, host-key checking left on. The target is this machine, so the verdict is a
//! real one: on a non-RT kernel verify must fail naming PREEMPT_RT.

use std::process::Command;

use crate::support::harness::{Test, verify_json_summary};
use crate::support::sshd::{Sshd, keygen};

fn local_kernel_is_rt() -> bool {
    let out = Command::new("uname").arg("-v").output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().any(|w| w == "PREEMPT_RT")
}

/// What `verify` without `--machine` or `--plan` says of what it checked.
const NO_PLAN: &str = "note: no plan given (--machine or --plan): only PREEMPT_RT, the command line and rt-tests were checked\n";

/// What `verify --json` without a plan writes to stderr for `json` (its stdout): the note, then
/// the summary line when a check failed (how many fail depends on this host's kernel).
fn no_plan_stderr(json: &serde_json::Value) -> String {
    format!("{NO_PLAN}{}", verify_json_summary(json))
}

#[test]
fn live_target_over_loopback_sshd_is_judged_for_real() {
    let sshd = Sshd::start();
    let run = Test::new()
        .args(["--json", "verify", "--target", &sshd.url(), "--ssh-config"])
        .args([sshd.config()])
        .run();
    let json = run.json();
    let run = run.stderr_is(&no_plan_stderr(&json));
    let checks = json["reports"][0]["checks"].as_array().unwrap().clone();
    let find = |name: &str| checks.iter().find(|c| c["check"] == name).cloned();
    let version = find("kernel version").unwrap_or_else(|| panic!("{json:#}\n{}", sshd.log()));
    assert_eq!(version["where"], "uname -v");
    assert_eq!(json["reports"][0]["kind"], "live target");
    assert_eq!(find("package rt-tests").unwrap()["status"], "pass", "rt-tests is installed here");
    if local_kernel_is_rt() {
        run.success();
    } else {
        assert_eq!(version["status"], "fail");
        if let Some(config) = find("CONFIG_PREEMPT_RT") {
            assert_eq!(config["where"], "/proc/config.gz");
            assert_eq!(config["status"], "fail");
        }
        let run = run.code_is(1);
        assert!(run.stdout().contains("PREEMPT_RT"));
    }
}

/// `verify --local` reads this machine as `--target` reads it over ssh: the target of the
/// loopback sshd is this machine, so both give the same checks with the same statuses, and the
/// same exit code.
#[test]
fn verify_local_judges_this_machine_as_the_loopback_target_does() {
    let sshd = Sshd::start();
    let over_ssh = Test::new()
        .args(["--json", "verify", "--target", &sshd.url(), "--ssh-config"])
        .args([sshd.config()])
        .run();
    let ssh_stderr = no_plan_stderr(&over_ssh.json());
    let over_ssh = over_ssh.stderr_is(&ssh_stderr);
    let local = Test::new().args(["--json", "verify", "--local"]).run();
    let local_stderr = no_plan_stderr(&local.json());
    let local = local.stderr_is(&local_stderr);
    let checks = |json: &serde_json::Value| -> Vec<(String, String, String)> {
        json["reports"][0]["checks"]
            .as_array()
            .unwrap_or_else(|| panic!("no checks: {json:#}"))
            .iter()
            .map(|c| (c["check"].to_string(), c["status"].to_string(), c["where"].to_string()))
            .collect()
    };
    let (ssh_json, local_json) = (over_ssh.json(), local.json());
    assert_eq!(local_json["reports"][0]["source"], "this machine", "{local_json:#}");
    assert_eq!(local_json["reports"][0]["kind"], "live target");
    assert!(checks(&local_json).iter().any(|c| c.0 == "\"kernel version\""), "{local_json:#}");
    assert_eq!(checks(&local_json), checks(&ssh_json), "{}", sshd.log());
    let code = over_ssh.code();
    over_ssh.code_is(code);
    local.code_is(code);
}

/// Runs on any host: on a non-RT kernel the table's kernel-version row fails naming PREEMPT_RT,
/// on an RT kernel it passes naming it (no early return either way).
#[test]
fn live_target_table_names_preempt_rt() {
    let sshd = Sshd::start();
    let run = Test::new()
        .args(["verify", "--target", &sshd.url(), "--ssh-config"])
        .args([sshd.config()])
        .run()
        // Besides, a note counts the warnings in this host's kernel log, when it holds any.
        .stderr_has_line(NO_PLAN.trim_end());
    let out = run.stdout();
    let row = out
        .lines()
        .find(|l| l.contains("kernel version"))
        .unwrap_or_else(|| panic!("no kernel version row in\n{out}\n{}", sshd.log()));
    assert!(row.contains("PREEMPT_RT"), "{out}");
    if local_kernel_is_rt() {
        assert!(row.starts_with("ok "), "{out}");
        assert!(out.contains("verdict: PASS"), "{out}");
        run.success();
    } else {
        assert!(row.starts_with("FAIL "), "{out}");
        assert!(out.contains("verdict: FAIL"), "{out}");
        run.code_is(1);
    }
}

#[test]
fn wrong_host_key_is_refused_and_exits_2() {
    let sshd = Sshd::start();
    let other = tempfile::tempdir().unwrap();
    keygen(&other.path().join("k"));
    let pub_key = std::fs::read_to_string(other.path().join("k.pub")).unwrap();
    let fields: Vec<&str> = pub_key.split_whitespace().take(2).collect();
    std::fs::write(
        sshd.dir.path().join("known_hosts"),
        format!("[127.0.0.1]:{} {}\n", sshd.port, fields.join(" ")),
    )
    .unwrap();
    let run = Test::new()
        .args(["verify", "--target", &sshd.url(), "--ssh-config"])
        .args([sshd.config()])
        .run()
        .code_is(2);
    let stderr = run.stderr();
    assert!(stderr.starts_with(&format!("error: target {}: ssh failed:", sshd.url())), "{stderr}");
    assert!(stderr.contains("Host key verification failed"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The fix after `; ` (issue 34, probe round 10: the line ended with ssh's words).
    assert!(
        stderr.ends_with("; check the target URL, its host key and that ssh reaches it\n"),
        "{stderr}"
    );
}
