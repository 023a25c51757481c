//! Issue 39 items 7 and 8: what else on the target spoils a run or a verdict. An IRQ moved onto
//! an RT CPU during a run (a fake irqbalance in a fake target root), kernel warnings logged
//! during a run (injected through the real /dev/kmsg; each test matches only its own marker),
//! a kernel of the wrong architecture, `KAS_MACHINE` named when it causes an error, and the
//! tuning as the generated layer installs it, looked for on a live target (a loopback sshd
//! with a fake root, and a recording fake `ssh` that plays an arm64 board).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::fake_tree::fake_tree;
use crate::support::harness::{Test, project_root, rtbuild_bin, verify_json_summary, wait_for};
use crate::support::measuring::{measuring, run_json};
use crate::support::sshd::Sshd;

/// A fake irqbalance: a real background process that waits until the run measures, then moves
/// IRQ 9 of the fake root onto CPUs 0-1 and records it. The fake root's `proc/PID/comm` names it
/// irqbalance (rtbuild reads processes under RTBUILD_SYSROOT, so no other run sees it).
struct FakeIrqbalance {
    child: Child,
    log: PathBuf,
}

impl FakeIrqbalance {
    fn start(root: &Path, trigger: &Path, dir: &Path) -> FakeIrqbalance {
        let log = dir.join("irqbalance.log");
        let script = format!(
            "while [ ! -e '{trigger}' ]; do sleep 0.1; done\n\
             echo 0-1 >'{root}/proc/irq/9/smp_affinity_list'\n\
             echo 'moved 9 0-1' >>'{log}'\n\
             exec sleep 300\n",
            trigger = trigger.display(),
            root = root.display(),
            log = log.display()
        );
        let child = Command::new("sh").args(["-c", &script]).spawn().unwrap();
        let proc_dir = root.join(format!("proc/{}", child.id()));
        fs::create_dir_all(&proc_dir).unwrap();
        fs::write(proc_dir.join("comm"), "irqbalance\n").unwrap();
        fs::write(proc_dir.join("environ"), "PATH=/usr/bin\0").unwrap();
        FakeIrqbalance { child, log }
    }

    fn moves(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for FakeIrqbalance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn reasons(s: &Value, field: &str) -> Vec<String> {
    s[field]
        .as_array()
        .map_or_else(Vec::new, |a| a.iter().map(|r| r.as_str().unwrap().to_string()).collect())
}

/// A run during which irqbalance moved a device IRQ onto the RT CPU is invalid, naming the IRQ
/// and irqbalance; a fake irqbalance does the moving (issue 39 item 7a).
#[test]
fn an_irq_moved_onto_the_rt_cpu_during_the_run_makes_it_invalid_with_a_fake_irqbalance() {
    let _one_at_a_time = measuring();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fake_tree(&root, "0-1");
    fs::write(root.join("proc/irq/9/smp_affinity_list"), "0\n").unwrap();
    let out = tmp.path().join("res");
    let irqbalance = FakeIrqbalance::start(&root, &out.join("raw/idle.hist.txt"), tmp.path());
    let pid = irqbalance.child.id();
    let run = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "4s"])
        .args(["--histogram-us", "200000", "--max-us", "1000000", "--out"])
        .arg(&out)
        .env("RTBUILD_SYSROOT", &root)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(irqbalance.moves(), "moved 9 0-1\n", "{stderr}");
    let json = run_json(&out);
    assert_eq!(json["verdict"], "INVALID", "{json:#}\n{stderr}");
    assert_ne!(run.status.code(), Some(0), "{stderr}");
    assert_eq!(json["irqbalance"], serde_json::json!([format!("{pid} -")]));
    let invalid = reasons(&json["scenarios"][0], "invalid_reasons");
    let moved = format!(
        "IRQ 9 moved onto RT CPU 1 during the run (affinity 0 → 0-1): irqbalance runs (pid {pid}) and moves IRQs onto the RT CPUs"
    );
    assert!(invalid.iter().any(|r| r.starts_with(&moved)), "{invalid:#?}");
    assert!(
        stderr.contains(&format!(
            "irqbalance (pid {pid}) runs on this machine without banning RT CPUs 1"
        )),
        "{stderr}"
    );
}

/// A marker no other line of the kernel log has.
fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("rtbuild-test-{}-{nanos}", std::process::id())
}

/// Writes `line` to the kernel log (root only; this is how the gate's warnings are injected).
fn kmsg(line: &str) {
    fs::write("/dev/kmsg", format!("{line}\n"))
        .expect("writing /dev/kmsg needs root (the tests run as root on CI)");
}

/// Linutronix's gate: a kernel `WARNING:` logged during the run fails it, `sched: RT throttling
/// activated` makes it invalid; each is named, and the warnings from before the run are
/// information (issue 39 item 7b). The lines are injected through /dev/kmsg with a unique
/// marker, and only lines with that marker are asserted on.
#[test]
fn kernel_warnings_logged_during_the_run_fail_it_and_rt_throttling_invalidates_it() {
    let _one_at_a_time = measuring();
    let marker = marker();
    kmsg(&format!("<4>WARNING: {marker}-before at the test's own line, before the run"));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let child = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "4s"])
        .args(["--histogram-us", "200000", "--max-us", "1000000", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the run never started measuring", Duration::from_secs(60), || {
        out.join("raw/idle.hist.txt").exists().then_some(())
    });
    kmsg(&format!("<4>WARNING: CPU: 0 PID: 1 at {marker}-during injected by the test"));
    kmsg(&format!("<4>sched: RT throttling activated {marker}-throttled"));
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let json = run_json(&out);
    let s = &json["scenarios"][0];
    let fail = reasons(s, "fail_reasons");
    let mine: Vec<&String> = fail.iter().filter(|r| r.contains(&marker)).collect();
    assert_eq!(mine.len(), 1, "{fail:#?}\n{stderr}");
    assert!(mine[0].starts_with("the kernel logged `["), "{}", mine[0]);
    assert!(
        mine[0].ends_with(&format!(
            "WARNING: CPU: 0 PID: 1 at {marker}-during injected by the test` during the run"
        )),
        "{}",
        mine[0]
    );
    let invalid = reasons(s, "invalid_reasons");
    assert!(
        invalid
            .iter()
            .any(|r| r.contains(&format!("sched: RT throttling activated {marker}-throttled"))
                && r.contains("RT throttling stopped the RT tasks")),
        "{invalid:#?}"
    );
    // Invalid outranks fail; the run is never PASS.
    assert_eq!(json["verdict"], "INVALID", "{json:#}");
    assert_ne!(output.status.code(), Some(0));
    let before = reasons(&json, "kernel_warnings_before");
    assert!(before.iter().any(|l| l.contains(&format!("{marker}-before"))), "{before:#?}");
    assert!(!fail.iter().chain(&invalid).any(|r| r.contains(&format!("{marker}-before"))));
    assert!(stderr.contains("already holds"), "{stderr}");
    // `report` reaches the same verdict from the folder: never PASS.
    // Its verdict goes to stdout; it warns of nothing.
    let report = Test::new().args(["report"]).arg_path(&out).run().ignore_stdout().stderr_is("");
    assert_ne!(report.code(), 0);
}

/// A warning alone (no throttling) fails the run, and `report` fails it naming the line.
#[test]
fn a_kernel_warning_during_the_run_is_a_fail_in_test_and_report() {
    let _one_at_a_time = measuring();
    let marker = marker();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let child = Command::new(rtbuild_bin())
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "idle", "--duration", "4s"])
        .args(["--histogram-us", "200000", "--max-us", "1000000", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the run never started measuring", Duration::from_secs(60), || {
        out.join("raw/idle.hist.txt").exists().then_some(())
    });
    kmsg(&format!("<3>BUG: scheduling while atomic: {marker}/1/0x00000002"));
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let json = run_json(&out);
    let s = &json["scenarios"][0];
    let fail = reasons(s, "fail_reasons");
    assert!(
        fail.iter().any(|r| r.contains(&format!("BUG: scheduling while atomic: {marker}"))),
        "{fail:#?}"
    );
    let invalid = reasons(s, "invalid_reasons");
    if invalid.is_empty() {
        assert_eq!(json["verdict"], "FAIL", "{json:#}");
        assert_eq!(output.status.code(), Some(1), "{stderr}");
    } else {
        // Only what this shared VM's scheduling may cause, never the warning itself.
        assert!(
            invalid.iter().all(|r| crate::support::measuring::latency_dependent(r)),
            "{invalid:#?}"
        );
        assert_eq!(json["verdict"], "INVALID", "{json:#}");
    }
    assert!(stderr.contains("idle: fails: the kernel logged"), "{stderr}");
    let report = Test::new().args(["report"]).arg_path(&out).run().stderr_is("");
    assert_ne!(report.code(), 0);
    assert!(report.stdout().contains(&marker), "{}", report.stdout());
}

const DEBIAN_RT: &str = "/usr/src/linux-config-6.12/config.amd64_rt_amd64.xz";

/// `verify` of an amd64 kernel against an arm64 board's plan fails with a clear line
/// (issue 39 item 7c); a bare CPU plan (any board) checks no architecture.
#[test]
fn an_amd64_config_against_an_arm64_board_fails_the_architecture_check() {
    assert!(Path::new(DEBIAN_RT).is_file(), "{DEBIAN_RT} is missing; run `bash .ci/setup`");
    let run = Test::new()
        .args(["--json", "verify", DEBIAN_RT, "--machine", "iq-8275-evk"])
        .run()
        .stderr_is(&format!(
            "warning: 1 of 6 checks failed for {DEBIAN_RT} (status `fail` in the JSON on stdout)\n"
        ))
        .code_is(1);
    let json = run.json();
    let checks = json["reports"][0]["checks"].as_array().unwrap();
    let arch = checks.iter().find(|c| c["check"] == "architecture").expect("an architecture check");
    assert_eq!(arch["status"], "fail", "{arch:#}");
    assert_eq!(arch["expected"], "arm64 (iq-8275-evk)");
    assert_eq!(arch["found"], "x86 (CONFIG_X86_64=y)");
    assert!(arch["reason"].as_str().unwrap().contains("needs an arm64 kernel"), "{arch:#}");

    let run = Test::new()
        .args(["verify", DEBIAN_RT, "--machine", "iq-8275-evk"])
        .run()
        .stderr_is(&format!(
            "warning: 1 of 6 checks failed for {DEBIAN_RT} (FAIL rows in the table on stdout)\n"
        ))
        .code_is(1);
    let row = run.stdout().lines().find(|l| l.contains("architecture")).map(str::to_string);
    let row = row.unwrap_or_else(|| panic!("{}", run.stdout()));
    assert!(row.starts_with("FAIL") && row.contains("x86 (CONFIG_X86_64=y)"), "{row}");

    let bare = Test::new().args(["--json", "verify", DEBIAN_RT, "--rt-cpus", "1"]).run();
    let json = bare.json();
    let checks = json["reports"][0]["checks"].as_array().unwrap();
    assert!(!checks.iter().any(|c| c["check"] == "architecture"), "{json:#}");
}

/// A value taken from KAS_MACHINE that causes an error is named as coming from it; `tune` and
/// `test` do not read it at all (issue 39 item 7d).
#[test]
fn kas_machine_is_named_when_it_causes_an_error_and_ignored_by_tune_and_test() {
    let run = Test::new()
        .env("KAS_MACHINE", "no-such-board")
        .args(["generate", "--out", "gen"])
        .run()
        .code_is(2);
    let stderr = run.stderr();
    assert!(stderr.starts_with("error: --machine no-such-board (from KAS_MACHINE): "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The same board on the command line is not said to come from the environment.
    let flag = Test::new().args(["generate", "--machine", "no-such-board", "--out", "gen"]).run();
    assert!(!flag.code_is(2).stderr().contains("KAS_MACHINE"));
    // A layout the environment's machine does not have.
    let run = Test::new()
        .env("KAS_MACHINE", "rb3gen2-core-kit")
        .args(["generate", "--rt-cpus", "9", "--out", "gen"])
        .run()
        .code_is(2);
    assert!(
        run.stderr().starts_with("error: --machine rb3gen2-core-kit (from KAS_MACHINE): "),
        "{}",
        run.stderr()
    );

    // tune ignores it: the boot arguments are those of the CPUs given, not rb3gen2's CPU 7.
    let run = Test::new()
        .env("KAS_MACHINE", "rb3gen2-core-kit")
        .args(["tune", "--bootargs", "--rt-cpus", "1", "--housekeeping", "0"])
        .run()
        .success();
    assert!(
        run.stdout().starts_with("isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0\n"),
        "{}",
        run.stdout()
    );
    // test ignores it: the 8-CPU machine's housekeeping CPUs would not fit a 2-CPU fake target.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fake_tree(&root, "0-1");
    let run = Test::new()
        .env("KAS_MACHINE", "rb3gen2-core-kit")
        .env("RTBUILD_SYSROOT", &root)
        .args(["test", "--local", "--rt-cpus", "1", "--scenario", "bogus", "--out", "res"])
        .run()
        .code_is(2);
    assert!(
        !run.stderr().contains("rb3gen2") && !run.stderr().contains("KAS_MACHINE"),
        "{}",
        run.stderr()
    );
}

/// The tuning as the generated layer installs it, under `root`: the script rendered for
/// `machine` in /usr/sbin, the unit in /usr/lib/systemd/system and, when `enabled`, the link
/// `systemctl enable` makes.
fn install_tune(root: &Path, machine: &str, enabled: bool) {
    let sbin = root.join("usr/sbin");
    fs::create_dir_all(&sbin).unwrap();
    let emit = Command::new(rtbuild_bin())
        .args(["tune", "--machine", machine, "--emit"])
        .arg(&sbin)
        .output()
        .unwrap();
    assert!(emit.status.success(), "{}", String::from_utf8_lossy(&emit.stderr));
    let units = root.join("usr/lib/systemd/system");
    fs::create_dir_all(&units).unwrap();
    fs::copy(
        project_root()
            .join("layers/meta-rtbuild-tune/recipes-rt/rtbuild-tune/files/rtbuild-tune.service"),
        units.join("rtbuild-tune.service"),
    )
    .unwrap();
    let wants = root.join("etc/systemd/system/multi-user.target.wants");
    fs::create_dir_all(&wants).unwrap();
    let link = wants.join("rtbuild-tune.service");
    let _ = fs::remove_file(&link);
    if enabled {
        std::os::unix::fs::symlink(
            "../../../../usr/lib/systemd/system/rtbuild-tune.service",
            &link,
        )
        .unwrap();
    }
}

fn tune_check(sshd: &Sshd, root: &Path) -> Value {
    let config = sshd.config_with_sysroot(root);
    let run = Test::new()
        .args(["--json", "verify", "--machine", "iq-8275-evk", "--target", &sshd.url()])
        .args(["--ssh-config".as_ref(), config.as_os_str()])
        .run();
    let json = run.json();
    // The checks are the JSON on stdout; stderr has one summary line counting its `fail`s (how
    // many fail depends on this host's kernel).
    run.stderr_is(&verify_json_summary(&json))
        // This machine is x86 and not booted with the IQ-8275's isolcpus=3: never a pass.
        .code_is(1);
    let checks = json["reports"][0]["checks"].as_array().unwrap().clone();
    checks
        .into_iter()
        .find(|c| c["check"] == "package rtbuild-tune")
        .unwrap_or_else(|| panic!("no package rtbuild-tune check in {json:#}\n{}", sshd.log()))
}

/// `verify --target --machine M` looks for rtbuild-tune the way the generated layer installs it
/// (issue 39 item 8): script, unit, enabled, made for the plan's RT CPUs. A loopback sshd, the
/// files in a fake root.
#[test]
fn verify_target_finds_the_tune_script_and_service_as_the_layer_installs_them() {
    let sshd = Sshd::start();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::create_dir_all(&root).unwrap();
    let check = tune_check(&sshd, &root);
    assert_eq!(check["status"], "fail", "{check:#}");
    assert_eq!(
        check["found"],
        "missing /usr/sbin/rtbuild-tune.sh (executable), rtbuild-tune.service"
    );

    install_tune(&root, "iq-8275-evk", true);
    let check = tune_check(&sshd, &root);
    assert_eq!(check["status"], "pass", "{check:#}");
    assert_eq!(check["found"], "installed, enabled, RT CPUs 3");
    assert_eq!(check["expected"], "installed, enabled, RT CPUs 3");

    install_tune(&root, "iq-8275-evk", false);
    let check = tune_check(&sshd, &root);
    assert_eq!(check["status"], "fail", "{check:#}");
    assert_eq!(check["found"], "missing rtbuild-tune.service enabled (multi-user.target.wants)");

    // A script rendered for another board's CPU plan does not tune this one.
    install_tune(&root, "rb3gen2-core-kit", true);
    let check = tune_check(&sshd, &root);
    assert_eq!(check["status"], "fail", "{check:#}");
    assert_eq!(check["found"], "installed, tuning RT CPUs 7");
}

/// The README's example, `rtbuild verify --machine iq-8275-evk --target ssh://root@board`,
/// exits 0 on a properly set up board: a recording fake `ssh` plays an arm64 IQ-8275 built from
/// the plan (its kernel config holds what the plan asks, its command line the plan's
/// arguments, the tuning installed in a fake root); everything else runs here for real.
#[test]
fn the_readme_verify_target_example_passes_on_a_set_up_board_with_a_fake_ssh() {
    let test = Test::new();
    let dir = test.path().to_path_buf();
    let generate = Command::new(rtbuild_bin())
        .args(["generate", "--machine", "iq-8275-evk", "--out", "gen"])
        .current_dir(&dir)
        .env("HOME", &dir)
        .output()
        .unwrap();
    assert!(generate.status.success(), "{}", String::from_utf8_lossy(&generate.stderr));
    let plan: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("gen/rtbuild-plan.json")).unwrap())
            .unwrap();
    let mut config = String::from("CONFIG_ARM64=y\n");
    for want in plan["kernel_config"].as_array().unwrap() {
        let (symbol, value) = (want["symbol"].as_str().unwrap(), want["value"].as_str().unwrap());
        if value == "n" {
            config.push_str(&format!("# {symbol} is not set\n"));
        } else {
            config.push_str(&format!("{symbol}={value}\n"));
        }
    }
    let board = dir.join("board");
    fs::create_dir_all(&board).unwrap();
    fs::write(board.join("config.gz"), crate::support::kernel_image::gzip(config.as_bytes()))
        .unwrap();
    let cmdline: Vec<&str> =
        plan["cmdline"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    fs::write(board.join("cmdline"), format!("root=/dev/sda2 rw {}\n", cmdline.join(" "))).unwrap();
    let root = board.join("root");
    install_tune(&root, "iq-8275-evk", true);
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let b = board.display();
    let ssh = format!(
        r#"#!/bin/sh
for last; do :; done
echo "$last" >>'{b}/ssh.log'
case "$last" in
    'uname -v') echo '#1 SMP PREEMPT_RT Thu Jan  1 00:00:00 UTC 2026' ;;
    'uname -m') echo aarch64 ;;
    'uname -r') echo 6.18.0-qcom-rt ;;
    'cat /proc/config.gz') cat '{b}/config.gz' ;;
    'cat /proc/cmdline') cat '{b}/cmdline' ;;
    'cat /sys/devices/system/cpu/isolated' | 'cat /sys/devices/system/cpu/nohz_full') echo 3 ;;
    'cat /sys/devices/system/cpu/possible') echo 0-7 ;;
    *'dmesg >/dev/null'*) echo '[    3.100000] WARNING: CPU: 1 PID: 1 at drivers/fake.c:1 probe+0x0/0x4' ;;
    *) RTBUILD_SYSROOT='{b}/root' exec sh -c "$last" ;;
esac
"#
    );
    fs::write(bin.join("ssh"), ssh).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(bin.join("ssh"), fs::Permissions::from_mode(0o755)).unwrap();
    let run = test
        .path_prepend(&bin)
        .args(["verify", "--machine", "iq-8275-evk", "--target", "ssh://root@board"])
        .run();
    let out = run.stdout();
    assert!(out.contains("verdict: PASS"), "{out}");
    // A warning from boot is information, not a failure of the kernel check.
    assert!(
        run.stderr().contains("the kernel log holds 1 warning line since boot")
            && run.stderr().contains("WARNING: CPU: 1 PID: 1 at drivers/fake.c:1"),
        "{}",
        run.stderr()
    );
    assert!(out.lines().any(|l| l.starts_with("ok") && l.contains("architecture")), "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("ok") && l.contains("package rtbuild-tune")),
        "{out}"
    );
    let _run = run.success();
    let log = fs::read_to_string(board.join("ssh.log")).unwrap();
    assert!(log.contains("rtbuild-tune.service") && log.contains("uname -m"), "{log}");
}
