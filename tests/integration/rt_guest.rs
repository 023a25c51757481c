//! rtbuild against a real PREEMPT_RT target: the lab's QEMU guest (Debian 12's
//! linux-image-rt-amd64, 2 CPUs, `isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0`, no
//! /proc/config.gz) over ssh with host-key checking on. See `support/lab.rs` for how the guest
//! is booted and always stopped. QEMU runs under TCG here: the tests judge mechanics, never
//! latency values (`--interval-us 10000 --histogram-us 200000 --max-us 1000000`).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::harness::{Test, verify_json_summary, wait_for};
use crate::support::lab::{self, exclusive, guest, machines_dir, qemu_alive};

/// Wide limits: TCG latencies are milliseconds.
const WIDE: [&str; 6] =
    ["--interval-us", "10000", "--histogram-us", "200000", "--max-us", "1000000"];

fn machine_args() -> Vec<String> {
    vec![
        "--machines-dir".into(),
        lab::path_str(&machines_dir()),
        "--machine".into(),
        "rtlab-guest".into(),
    ]
}

/// `rtbuild test ARGS` on the guest for `duration`, with the lab's machine, the wide limits and
/// its result folder `res`; its stderr holds each of `lines` as a whole line. The other lines
/// carry what the guest measured (latencies, lost cycles under TCG) or what earlier tests left
/// on the shared guest (knobs, kernel log lines), which no test may state.
fn test_on(
    guest: &lab::Guest,
    duration: &str,
    args: &[&str],
    lines: &[String],
) -> crate::support::harness::Run {
    assert!(!lines.is_empty(), "state at least one line of the run's stderr");
    let run = Test::new()
        .args(["test"])
        .args(args)
        .args(machine_args())
        .args(guest.target_args())
        .args(["--duration", duration, "--out", "res"])
        .args(WIDE)
        .run()
        .ignore_stdout();
    lines.iter().fold(run, |run, line| run.stderr_has_line(line))
}

/// What `rtbuild test` writes when it starts measuring `scenario` for `duration` on CPU 1.
fn measuring_line(scenario: &str, duration: &str) -> String {
    format!("   Measuring {scenario} for {duration} on RT CPUs 1")
}

fn run_json(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

fn knob_map(text: &str) -> BTreeMap<String, String> {
    text.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.into(), v.into())).collect()
}

/// The supervisor's guarantee, shown on two guests of its own (no need to wait for ssh): when
/// the stdin of `rt-guest.sh serve` closes, which the kernel does when the test process ends,
/// QEMU is stopped by its PID; when the supervisor is SIGKILLed, QEMU gets its parent-death
/// signal.
#[test]
fn the_guest_is_stopped_when_its_test_process_goes() {
    let _image = lab::image();
    let mut closed = lab::supervise("stdin-closed");
    let pid = closed.qemu_pid();
    assert!(qemu_alive(pid), "QEMU {pid} should be running");
    drop(closed.stdin.take());
    wait_for("QEMU to stop after stdin closed", Duration::from_secs(30), || {
        (!qemu_alive(pid)).then_some(())
    });
    let _ = closed.child.wait();

    let mut killed = lab::supervise("supervisor-killed");
    let pid = killed.qemu_pid();
    assert!(qemu_alive(pid), "QEMU {pid} should be running");
    killed.child.kill().unwrap();
    let _ = killed.child.wait();
    wait_for("QEMU to die with its supervisor", Duration::from_secs(30), || {
        (!qemu_alive(pid)).then_some(())
    });
}

/// verify --target on the RT guest: PREEMPT_RT from the running kernel, every plan option read
/// from /boot/config-$(uname -r) (the guest has no /proc/config.gz), the isolation from
/// /proc/cmdline and sysfs.
#[test]
fn verify_target_reads_the_boot_config_and_the_isolation_of_a_real_rt_kernel() {
    let guest = guest();
    let _one = exclusive();
    let release = guest.sh("uname -r").trim().to_string();
    let boot_config = format!("/boot/config-{release}");
    assert_eq!(guest.sh("ls /proc/config.gz 2>/dev/null || echo absent").trim(), "absent");
    let config = guest.sh(&format!("cat {boot_config}"));
    let run =
        Test::new().args(["--json", "verify"]).args(machine_args()).args(guest.target_args()).run();
    let json = run.json();
    // The checks are the JSON on stdout; stderr sums up the failed ones (the Debian kernel lacks
    // some of the plan's options) in one line.
    let run = run.stderr_is(&verify_json_summary(&json));
    let report = &json["reports"][0];
    assert_eq!(report["kind"], "live target", "{json:#}");
    let checks = report["checks"].as_array().unwrap();
    let find = |name: &str| {
        checks
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no {name} check in {json:#}"))
    };
    let version = find("kernel version");
    assert_eq!(version["status"], "pass", "{version}");
    assert!(version["found"].as_str().unwrap().contains("PREEMPT_RT"), "{version}");
    // Every kernel option of the plan was checked, against the guest's /boot config, and its
    // verdict agrees with what the file says (read here by the test, not by rtbuild).
    let options: Vec<&Value> =
        checks.iter().filter(|c| c["check"].as_str().unwrap().starts_with("CONFIG_")).collect();
    assert!(options.len() >= 4, "{json:#}");
    for option in &options {
        let name = option["check"].as_str().unwrap();
        let set = config.lines().any(|l| l == format!("{name}=y"));
        assert_eq!(option["status"], if set { "pass" } else { "fail" }, "{option}");
    }
    let rt = find("CONFIG_PREEMPT_RT");
    assert_eq!(rt["where"], boot_config, "{rt}");
    assert_eq!(rt["status"], "pass");
    let text = json.to_string();
    assert!(!text.contains("options not checked"), "{json:#}");
    for check in
        ["cmdline isolcpus", "cmdline nohz_full", "cmdline rcu_nocbs", "cmdline irqaffinity"]
    {
        assert_eq!(find(check)["status"], "pass", "{}", find(check));
    }
    assert_eq!(find("cmdline isolcpus")["where"], "/proc/cmdline");
    let isolated = find("isolated CPUs");
    assert_eq!((&isolated["status"], &isolated["found"]), (&"pass".into(), &"1".into()));
    assert_eq!(isolated["where"], "/sys/devices/system/cpu/isolated");
    assert_eq!(find("nohz_full CPUs")["status"], "pass");
    // The lab guest has no rtbuild-tune package and its command line lacks a few of the plan's
    // extras: verify fails on those only, exit 1.
    run.code_is(1);
}

/// tune --apply/--verify/--revert on the real kernel: revert gives every knob back as the test
/// read it before (IRQs 0 and 2 refuse writes: apply keeps them, revert must not write them).
#[test]
fn tune_apply_verify_revert_restores_every_knob_of_a_real_rt_kernel() {
    let guest = guest();
    let _one = exclusive();
    let before = knob_map(&guest.knobs());
    assert!(before.contains_key("/proc/irq/0/smp_affinity"), "{before:?}");
    // The guest's virtio request queue is a managed interrupt on RT CPU 1: apply and verify
    // say so (revert has nothing to warn of).
    let managed = "warning: IRQ 26 (virtio1-req.1) is fixed to RT CPU 1 by the kernel (a managed interrupt: its affinity cannot be written) and can fire there during a measurement; boot with isolcpus=managed_irq,1 to keep managed interrupts off the RT CPUs\n";
    let tune = |action: &str, warning: &str| {
        let word = action.trim_start_matches("--");
        Test::new()
            .args(["tune", action])
            .args(machine_args())
            .args(guest.target_args())
            .run()
            .stderr_is(&format!(
                "      Tuning {word} on {}: RT CPUs 1, housekeeping 0\n{warning}",
                guest.url()
            ))
    };
    let apply = tune("--apply", managed).success();
    assert!(apply.stdout().contains("set /proc/sys/kernel/timer_migration 0 (was 1)"));
    let tuned = knob_map(&guest.knobs());
    assert_eq!(tuned["/proc/sys/kernel/sched_rt_runtime_us"], "-1");
    assert_eq!(tuned["/sys/devices/virtual/workqueue/writeback/cpumask"], "1");
    let verify = tune("--verify", managed).success();
    assert!(!verify.stdout().contains("mismatch"), "{}", verify.stdout());
    let revert = tune("--revert", "").success();
    let out = revert.stdout();
    assert!(!out.contains("fail "), "{out}");
    // Each knob once, by its real path: the bus/workqueue symlink is not restored a second time.
    assert_eq!(out.matches("workqueue/writeback/cpumask").count(), 1, "{out}");
    assert!(!out.contains("/sys/bus/workqueue"), "{out}");
    assert_eq!(knob_map(&guest.knobs()), before, "revert must give back every knob");
}

/// A real test run with --tune on the RT guest: isolated CPU 1 measured, stress-isolated valid
/// (the kernel's isolation is real here), loads never on CPU 1, tuning reverted and recorded so.
#[test]
fn test_with_tune_on_an_isolated_rt_cpu_is_valid_and_reverts() {
    let guest = guest();
    let _one = exclusive();
    let before = knob_map(&guest.knobs());
    // Long enough for the probe to see cyclictest's thread: under TCG its start (mlockall)
    // and each ssh round trip take seconds.
    let run = test_on(
        guest,
        "20s",
        &["--tune", "--scenario", "idle,stress,stress-isolated", "--load", "40"],
        &[
            format!("      Tuning {} (saved values are restored afterwards)", guest.url()),
            measuring_line("idle", "20s"),
            "     Loading stress: 1 stress-ng generator pinned to CPUs 0".into(),
            measuring_line("stress", "20s"),
            "     Loading stress-isolated: stress-ng on every CPU, left to the kernel's isolation"
                .into(),
            measuring_line("stress-isolated", "20s"),
            "    Reverted the tuning rtbuild applied".into(),
        ],
    );
    let dir = run.path().join("res");
    let json = run_json(&dir);
    assert_eq!(json["state"], "finished", "{json:#}\n{}", run.stderr());
    assert_eq!(json["rt_cpus"], "1");
    assert_eq!(json["housekeeping"], "0");
    assert_eq!(json["tuning"]["applied"], true, "{:#}", json["tuning"]);
    assert_eq!(json["tuning"]["reverted"], true, "{:#}\n{}", json["tuning"], run.stderr());
    assert_eq!(json["fingerprint"]["isolated"], "1", "{:#}", json["fingerprint"]);
    let scenarios = json["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 3);
    for s in scenarios {
        let name = s["name"].as_str().unwrap();
        assert_eq!(s["state"], "done", "{name}: {s:#}");
        // Under TCG cycles are lost and samples land above any histogram: those reasons are
        // about latency and tolerated; every other check (isolation, pinning, policy) must pass.
        let reasons: Vec<&str> =
            s["invalid_reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        let mechanics: Vec<&&str> = reasons
            .iter()
            .filter(|r| {
                !r.contains("expected cycles")
                    && !r.contains("histogram")
                    && !r.contains("where --load asked")
            })
            .collect();
        assert!(mechanics.is_empty(), "{name}: {reasons:?}");
        let probe = &s["probe"];
        let workers: Vec<&Value> =
            probe["cyclictest"].as_array().unwrap().iter().filter(|t| t["policy"] == 1).collect();
        assert_eq!(workers.len(), 1, "{name}: {probe:#}");
        assert_eq!(workers[0]["cpu"], 1, "{name}: the measuring thread runs on CPU 1");
        assert_eq!(workers[0]["rt_priority"], 99);
        for task in probe["load"].as_array().unwrap() {
            assert_ne!(task["cpu"], 1, "{name}: load on the isolated CPU: {task}");
            assert!(!task["allowed"].as_str().unwrap().contains('1'), "{name}: {task}");
        }
        if name != "idle" {
            assert!(!probe["load"].as_array().unwrap().is_empty(), "{name}: no load seen");
        }
    }
    assert_eq!(scenarios[2]["name"], "stress-isolated");
    // The kernel config the run measured (issue 26 point 5): the guest has no
    // /proc/config.gz, so its /boot config, digested here by the test from the bytes it reads.
    let release = guest.sh("uname -r").trim().to_string();
    let boot_config = format!("/boot/config-{release}");
    let config = guest.sh(&format!("cat {boot_config}"));
    assert!(config.contains("CONFIG_PREEMPT_RT=y"), "not the RT kernel's config");
    let sha = {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(config.as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    for fingerprint in
        std::iter::once(&json["fingerprint"]).chain(scenarios.iter().map(|s| &s["fingerprint"]))
    {
        assert_eq!(fingerprint["kernel_config_sha256"], sha.as_str(), "{fingerprint:#}");
        assert_eq!(fingerprint["kernel_config_source"], boot_config.as_str(), "{fingerprint:#}");
    }
    assert_eq!(knob_map(&guest.knobs()), before, "test --tune must give back every knob");
    // Nothing of the run is left on the guest.
    let left = guest.sh("ps -eo comm | grep -cE '^(cyclictest|stress-ng)' || true");
    assert_eq!(left.trim(), "0");
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
}

/// --trace-above-us on a PREEMPT_RT kernel: TCG crosses 50 µs at once, so the breach is
/// certain; the trace is kept and explained, and every tracing setting reads back as before.
#[test]
fn a_breach_on_the_rt_guest_keeps_its_trace_explains_it_and_restores_tracing() {
    let guest = guest();
    let _one = exclusive();
    let before = guest.tracing_settings();
    let run = test_on(
        guest,
        "5s",
        &["--scenario", "idle", "--trace-above-us", "50"],
        &[
            measuring_line("idle", "5s"),
            "    Restored the tracing settings in /sys/kernel/tracing".into(),
        ],
    );
    let dir = run.path().join("res");
    let json = run_json(&dir);
    assert_eq!(json["tracing"]["restored"], true, "{:#}\n{}", json["tracing"], run.stderr());
    assert_eq!(json["settings"]["analyzer"], "ftrace");
    let trace = &json["scenarios"][0]["trace"];
    let file = trace["file"].as_str().unwrap_or_else(|| panic!("no trace kept: {json:#}"));
    let text = fs::read_to_string(dir.join(file)).unwrap();
    assert!(text.contains("tracing_mark_write"), "the kept trace has cyclictest's mark");
    assert_eq!(trace["cpu"], 1, "{trace}");
    let explanation = trace["explanation"].as_str().unwrap();
    assert!(!explanation.is_empty() && !explanation.contains("cannot be explained"), "{trace}");
    assert_eq!(guest.tracing_settings(), before, "tracing settings must read back as before");
    let report = Test::new().args(["report", "--json"]).arg_path(&dir).run().stderr_is("");
    let spikes = report.json()["spikes"].clone();
    assert_eq!(spikes[0]["scenario"], "idle", "{spikes:#}");
    assert!(matches!(report.code(), 0 | 1));
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
}

/// --analyzer rtla with the guest's real timerlat tracer and Debian 12's rtla 6.1, which stops
/// at `-a` but prints no auto-analysis: the stop is recorded, rtla's output and its own trace
/// are kept, and the explanation says there is no analysis — never nothing.
#[test]
fn rtla_on_the_rt_guest_keeps_its_trace_when_it_prints_no_analysis() {
    let guest = guest();
    let _one = exclusive();
    let version = guest.sh("rtla --version 2>&1 || true");
    let run = test_on(
        guest,
        "5s",
        &["--scenario", "idle", "--trace-above-us", "50", "--analyzer", "rtla"],
        &[
            measuring_line("idle", "5s"),
            "   Analyzing idle: rtla timerlat -a 50 for 5s on CPUs 1".into(),
            // rtla records in an instance of its own; the top-level settings are put back anyway.
            "    Restored the tracing settings in /sys/kernel/tracing".into(),
        ],
    );
    let dir = run.path().join("res");
    let json = run_json(&dir);
    let s = &json["scenarios"][0];
    let raw = fs::read_to_string(dir.join("raw/idle.rtla.txt")).unwrap();
    assert!(raw.contains("hit stop tracing"), "rtla {version} did not stop: {raw}\n{s:#}");
    let trace = &s["trace"];
    assert_eq!(trace["file"], "trace-idle.txt", "{s:#}\n{}", run.stderr());
    let explanation = trace["explanation"].as_str().unwrap();
    let timerlat = dir.join("trace-idle.timerlat.txt");
    assert!(timerlat.is_file(), "rtla's own trace is kept");
    assert!(fs::read_to_string(&timerlat).unwrap().contains("timerlat"), "a timerlat trace");
    if raw.contains("## CPU ") {
        // An rtla with auto-analysis (6.3 and later): the analysed CPU and its latency.
        assert_eq!(trace["cpu"], 1, "{trace}");
        assert!(trace["latency_us"].as_f64().is_some(), "{trace}");
    } else {
        assert!(explanation.contains("printed no auto-analysis"), "{explanation}");
        assert!(trace["cpu"].is_null() && trace["latency_us"].is_null(), "{trace}");
    }
    assert_eq!(json["tracing"]["restored"], true, "{:#}", json["tracing"]);
    let report = Test::new().args(["report", "--json"]).arg_path(&dir).run().stderr_is("");
    let spike = &report.json()["spikes"][0];
    assert_eq!(spike["explanation"], explanation, "report derives the same explanation");
    assert!(matches!(report.code(), 0 | 1));
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
}

/// A recording fake service manager on the guest (it runs tini, not systemd): `systemctl`
/// first on root's PATH, one unit `urm.service` whose state is a file; every call is logged.
/// Removed again when dropped, whatever the test did.
struct GuestFakeSystemctl<'a> {
    guest: &'a lab::Guest,
}

const GUEST_FAKE_SYSTEMCTL: &str = "/usr/local/sbin/systemctl";

impl<'a> GuestFakeSystemctl<'a> {
    fn install(guest: &'a lab::Guest) -> GuestFakeSystemctl<'a> {
        guest.sh("mkdir -p /usr/local/sbin && cat >/usr/local/sbin/systemctl <<'EOF'\n\
             #!/bin/sh\n\
             echo \"$*\" >>/tmp/fake-systemctl.log\n\
             case \"$1\" in\n\
             is-active) [ \"$(cat /tmp/fake-urm.state)\" = active ] ;;\n\
             stop) echo inactive >/tmp/fake-urm.state ;;\n\
             start) echo active >/tmp/fake-urm.state ;;\n\
             *) exit 1 ;;\n\
             esac\n\
             EOF\n\
             chmod 755 /usr/local/sbin/systemctl && echo active >/tmp/fake-urm.state && \
             rm -f /tmp/fake-systemctl.log");
        let fake = GuestFakeSystemctl { guest };
        assert_eq!(fake.guest.sh("command -v systemctl").trim(), GUEST_FAKE_SYSTEMCTL);
        fake
    }

    fn changes(&self) -> Vec<String> {
        self.guest
            .sh("cat /tmp/fake-systemctl.log 2>/dev/null || true")
            .lines()
            .filter(|l| !l.starts_with("is-active"))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for GuestFakeSystemctl<'_> {
    fn drop(&mut self) {
        // No assertion here: this may run while a failed assertion unwinds.
        let port = self.guest.url().rsplit(':').next().unwrap_or_default().to_string();
        let _ = std::process::Command::new("ssh")
            .arg("-F")
            .arg(self.guest.ssh_config())
            .args(["-p", &port, "root@127.0.0.1", "--"])
            .arg("rm -f /usr/local/sbin/systemctl /tmp/fake-urm.state /tmp/fake-systemctl.log")
            .output();
    }
}

/// Issue 24 item 7 on the real RT kernel: `test --tune --overcommit-never --stop-urm` over ssh
/// sets vm.overcommit_memory=2 with the tuning, reads it back, reverts it, and stops URM for the
/// run and starts it again (URM through a recording fake service manager: the guest has none).
#[test]
fn test_tune_overcommit_never_and_stop_urm_on_the_rt_guest_with_a_fake_service_manager() {
    let guest = guest();
    let _one = exclusive();
    let before = knob_map(&guest.knobs());
    let overcommit_before = guest.sh("cat /proc/sys/vm/overcommit_memory").trim().to_string();
    assert_ne!(overcommit_before, "2", "the guest starts with overcommit allowed");
    let fake = GuestFakeSystemctl::install(guest);
    let run = test_on(
        guest,
        "10s",
        &["--tune", "--overcommit-never", "--stop-urm", "--scenario", "idle"],
        &[
            format!("     Stopped urm.service on {} for the run", guest.url()),
            format!("      Tuning {} (saved values are restored afterwards)", guest.url()),
            measuring_line("idle", "10s"),
            "    Reverted the tuning rtbuild applied".into(),
            format!("   Restarted urm.service on {}", guest.url()),
        ],
    );
    let dir = run.path().join("res");
    let json = run_json(&dir);
    assert_eq!(json["state"], "finished", "{json:#}\n{}", run.stderr());
    let tuning = &json["tuning"];
    assert_eq!(tuning["applied"], true, "{tuning:#}");
    assert_eq!(tuning["overcommit_never"], true, "{tuning:#}");
    assert_eq!(tuning["reverted"], true, "{tuning:#}\n{}", run.stderr());
    let problems = tuning["verify_problems"].as_array().unwrap();
    assert!(!problems.iter().any(|p| p.as_str().unwrap().contains("overcommit")), "{tuning:#}");
    let apply = fs::read_to_string(dir.join("tune-apply.txt")).unwrap();
    assert!(
        apply.contains(&format!("set /proc/sys/vm/overcommit_memory 2 (was {overcommit_before})")),
        "{apply}"
    );
    assert_eq!(guest.sh("cat /proc/sys/vm/overcommit_memory").trim(), overcommit_before);
    assert_eq!(knob_map(&guest.knobs()), before, "test --tune must give back every knob");
    assert_eq!(
        json["urm_stop"],
        serde_json::json!({
            "service": "urm.service", "stopped": true, "restored": true, "problem": null
        }),
        "{}",
        run.stderr()
    );
    assert_eq!(fake.changes(), ["stop urm.service", "start urm.service"]);
    assert_eq!(guest.sh("cat /tmp/fake-urm.state").trim(), "active");
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
}

/// One cyclictest thread as the guest's own /proc showed it during a run.
#[derive(Debug, Clone, PartialEq)]
struct GuestThread {
    tid: u64,
    policy: u64,
    allowed: String,
}

/// Every thread of every cyclictest on the guest, read there from `/proc/PID/task/TID/stat`
/// (field 41, the policy) and `status` (`Cpus_allowed_list`).
fn guest_cyclictest_threads(guest: &lab::Guest) -> Vec<GuestThread> {
    let text = guest.sh(
        "for p in $(pgrep -x cyclictest); do for t in /proc/$p/task/*; do \
           s=$(cat $t/stat 2>/dev/null) || continue; \
           a=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' $t/status 2>/dev/null); \
           [ -n \"$a\" ] && printf '%s %s %s\\n' \"${t##*/}\" \"$(echo \"$s\" | cut -d' ' -f41)\" \"$a\"; \
         done; done; true",
    );
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some(GuestThread {
                tid: f.next()?.parse().ok()?,
                policy: f.next()?.parse().ok()?,
                allowed: f.next()?.to_string(),
            })
        })
        .collect()
}

/// Issue 39 item 1 on the lab's PREEMPT_RT kernel (CPU 1 isolated): `--rt-cpus 1 --threads 8
/// --unpinned` claims to measure CPU 1, so each of the eight SCHED_FIFO threads is allowed
/// exactly CPU 1, as the guest's own /proc says while the run goes on (polled over ssh by the
/// test, not by rtbuild); run.json's `cyclictest_affinity` and `thread_placement` say the same.
#[test]
fn eight_unpinned_threads_on_the_rt_guest_are_allowed_exactly_the_measured_cpu() {
    let guest = guest();
    let _one = exclusive();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (run, (seen, snapshots)) = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            // Every snapshot's size, for the failure message, and the one with the most
            // SCHED_FIFO threads.
            let mut snapshots: Vec<String> = Vec::new();
            let mut best: Vec<GuestThread> = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let all = guest_cyclictest_threads(guest);
                let workers: Vec<GuestThread> =
                    all.iter().filter(|t| t.policy == 1).cloned().collect();
                if !all.is_empty() {
                    snapshots.push(format!("{} threads, {} FIFO", all.len(), workers.len()));
                }
                if workers.len() > best.len() {
                    best = workers;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
            (best, snapshots)
        });
        // Eight threads on one emulated CPU: a long interval keeps TCG's guest answering ssh
        // (at 10 ms the run overran its deadline on this loaded host and lost the connection).
        let run = Test::new()
            .args(["test", "--rt-cpus", "1", "--threads", "8", "--unpinned", "--scenario", "idle"])
            .args(machine_args())
            .args(guest.target_args())
            .args(["--duration", "30s", "--out", "res", "--interval-us", "100000"])
            .args(["--histogram-us", "200000", "--max-us", "1000000"])
            .run()
            .ignore_stdout()
            .stderr_has_line(&measuring_line("idle", "30s"));
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        (run, watcher.join().unwrap())
    });
    let dir = run.path().join("res");
    let json_text = fs::read_to_string(dir.join("run.json")).unwrap_or_default();
    let why = format!("seen {seen:?}\nsnapshots {snapshots:?}\n{}\n{json_text}", run.stderr());
    assert!(matches!(run.code(), 0 | 1), "{why}");
    assert_eq!(
        seen.len(),
        8,
        "the test never saw cyclictest's 8 SCHED_FIFO threads on the guest: {why}"
    );
    for t in &seen {
        assert_eq!(t.allowed, "1", "a measuring thread may run off the measured CPU: {why}");
    }
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["state"], "finished", "{json:#}\n{}", run.stderr());
    assert_eq!(json["rt_cpus"], "1");
    assert_eq!(json["measure_cpus"], "1");
    let s = &json["scenarios"][0];
    assert_eq!(s["cyclictest_affinity"], "1", "{s:#}");
    let placement = s["thread_placement"].as_array().unwrap();
    assert_eq!(placement.len(), 8, "{placement:#?}");
    for t in &seen {
        let entry = placement.iter().find(|p| p["tid"] == t.tid).unwrap_or_else(|| {
            panic!("guest thread {} missing from thread_placement: {placement:#?}", t.tid)
        });
        assert_eq!(entry["allowed"], t.allowed.as_str(), "{entry}");
        assert_eq!(entry["ran_on"], "1", "{entry}");
    }
    // Numbered on a target too (the histogram names no ids; the status blocks do).
    let numbers: Vec<Option<u64>> = placement.iter().map(|p| p["thread"].as_u64()).collect();
    assert_eq!(numbers, (0..8).map(Some).collect::<Vec<_>>(), "{placement:#?}");
    // Nothing about where the threads ran may make the run invalid; TCG's lost cycles may.
    let reasons: Vec<&str> =
        s["invalid_reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert!(
        !reasons.iter().any(|r| r.contains("allowed") || r.contains("affinity")),
        "{reasons:?}"
    );
}

/// Issue 39 item 7 on the lab's PREEMPT_RT kernel: lines written by the test to the guest's
/// /dev/kmsg (as root there), each with a marker of its own. One logged before the run is
/// reported in `kernel_warnings_before` only; `BUG: scheduling while atomic` logged while
/// cyclictest runs is a fail reason; `sched: RT throttling activated` makes the run INVALID.
#[test]
fn kernel_warnings_injected_on_the_rt_guest_fail_invalidate_or_are_reported_before() {
    let guest = guest();
    let _one = exclusive();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let marker = format!("rtbuild-guest-{}-{nanos}", std::process::id());
    let kmsg = |line: String| guest.sh(&format!("printf '%s\\n' '{line}' >/dev/kmsg"));
    kmsg(format!("<4>WARNING: CPU: 0 PID: 1 at {marker}-before logged before the run"));
    let run = std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            test_on(guest, "30s", &["--scenario", "idle"], &[measuring_line("idle", "30s")])
        });
        wait_for("cyclictest to run on the guest", Duration::from_secs(240), || {
            let running = guest.sh("pgrep -x cyclictest || true");
            (!running.trim().is_empty() || run.is_finished()).then_some(())
        });
        assert!(!run.is_finished(), "the run ended before cyclictest was seen on the guest");
        kmsg(format!("<3>BUG: scheduling while atomic: {marker}-during/1/0x00000002"));
        kmsg(format!("<4>sched: RT throttling activated {marker}-throttled"));
        run.join().unwrap()
    });
    let json = run_json(&run.path().join("res"));
    assert_eq!(json["state"], "finished", "{json:#}\n{}", run.stderr());
    let list = |v: &Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect()
    };
    let s = &json["scenarios"][0];
    let fail = list(&s["fail_reasons"]);
    let invalid = list(&s["invalid_reasons"]);
    let before = list(&json["kernel_warnings_before"]);
    let bug = format!("BUG: scheduling while atomic: {marker}-during");
    assert!(
        fail.iter().any(|r| r.contains(&bug) && r.ends_with("` during the run")),
        "{fail:#?}\n{}",
        run.stderr()
    );
    assert!(
        invalid.iter().any(|r| r.contains(&format!("{marker}-throttled"))
            && r.contains("RT throttling stopped the RT tasks")),
        "{invalid:#?}"
    );
    assert!(!fail.iter().any(|r| r.contains("-throttled")), "throttling is not a FAIL: {fail:#?}");
    assert_eq!(json["verdict"], "INVALID", "{json:#}");
    assert!(before.iter().any(|l| l.contains(&format!("{marker}-before"))), "{before:#?}");
    assert!(!before.iter().any(|l| l.contains(&format!("{marker}-during"))), "{before:#?}");
    assert!(
        !fail.iter().chain(&invalid).any(|r| r.contains(&format!("{marker}-before"))),
        "a warning from before the run is not the run's: {fail:#?} {invalid:#?}"
    );
    assert!(run.stderr().contains(&bug), "{}", run.stderr());
    assert_ne!(run.code(), 0, "{}", run.stderr());
    // The verdict and its reasons go to stdout; report warns of nothing.
    let report = Test::new().args(["report"]).arg_path(&run.path().join("res")).run().stderr_is("");
    assert_ne!(report.code(), 0);
    assert!(report.stdout().contains(&bug), "{}", report.stdout());
}
