//! A real LAVA run: `rtbuild lava --deploy qemu` writes a job for the lab's PREEMPT_RT guest
//! (the kernel, initrd and ext4 root file system `tests/lab/rt-guest.sh build` caches), the real
//! `lava-run` (lava-dispatcher 2023.01, unpacked by `.ci/setup`) runs it offline against a
//! `qemu` device rendered from lava-server's own device-type templates, and `rtbuild report`
//! reads the log `lava-run` wrote. TCG: the test judges mechanics (the job ran every scenario,
//! the report parsed each from the real log, the LAVA verdicts agree), never latency values.
//!
//! Nothing is left running: `lava-run` runs under `setpriv --pdeathsig KILL` (it dies with this
//! process) and is killed by its PID if it overstays; QEMU is started through a wrapper that
//! gives it the same parent-death signal (its parent is `lava-run`); libguestfs's appliance has
//! its own recovery process. The test then checks that no process of the job is left.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::lab::{self, machines_dir};
use crate::support::lava_job::lava_schema;

pub(crate) fn lab_cache() -> PathBuf {
    std::env::var_os("RTBUILD_LAB_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
            .join(".cache/rtbuild-lab")
    })
}

/// lava-dispatcher (and lava-dispatcher-host, which it imports) as `.ci/setup` unpacked them.
pub(crate) fn dispatcher() -> PathBuf {
    let dir = lab_cache().join("lava-dispatcher");
    for file in [
        "usr/bin/lava-run",
        "usr/lib/python3/dist-packages/lava_dispatcher/job.py",
        "usr/lib/python3/dist-packages/lava_dispatcher_host/__init__.py",
    ] {
        assert!(
            dir.join(file).is_file(),
            "lava-dispatcher is not unpacked at {} (no {file}); run `bash .ci/setup`",
            dir.display()
        );
    }
    dir
}

/// lava-server's device-type templates (`qemu.jinja2`, `base.jinja2`), extracted by `.ci/setup`.
pub(crate) fn device_types() -> PathBuf {
    let dir = lab_cache().join("lava-server/usr/share/lava-server/device-types");
    assert!(
        dir.join("qemu.jinja2").is_file() && dir.join("base.jinja2").is_file(),
        "lava-server's device-type templates are not at {}; run `bash .ci/setup`",
        dir.display()
    );
    dir
}

/// The device dictionary a LAVA server would render for this job on a `qemu` worker without
/// KVM: the job's context (arch, memory, `-smp`; on arm64 also cpu, machine and the overlay's
/// interface) as the template's variables, the worker's TCG options (argv 3) before the job's
/// extra options, and QEMU's user-mode network restricted (the guest reaches nothing).
const DEVICE: &str = r#"
import json, sys, jinja2
templates, context, worker = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates), autoescape=False, trim_blocks=True)
variables = dict(context, no_kvm=True, netdevice="user,restrict=on",
                 extra_options=worker + context.get("extra_options", []))
text = "{% extends 'qemu.jinja2' %}\n" + "".join(
    "{%% set %s = %s %%}\n" % (k, json.dumps(v)) for k, v in sorted(variables.items()))
sys.stdout.write(env.from_string(text.replace("true", "True")).render())
"#;

/// Renders the device dictionary for `job` with the worker's TCG options `worker`.
pub(crate) fn render_device(job: &Value, out: &Path, worker: &[&str]) {
    let context = serde_json::to_string(&job["context"]).unwrap();
    let run = Command::new("/usr/bin/python3")
        .args(["-c", DEVICE])
        .arg(device_types())
        .arg(context)
        .arg(serde_json::to_string(worker).unwrap())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    fs::write(out, &run.stdout).unwrap();
}

/// The guest's kernel modules, for libguestfs's appliance (supermin): the host has none.
fn guest_modules(image: &Path, dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let out = Command::new("debugfs")
        .arg("-R")
        .arg(format!("rdump /lib/modules {}", dir.display()))
        .arg(image.join("rootfs.ext4"))
        .output()
        .unwrap();
    assert!(out.status.success(), "debugfs: {}", String::from_utf8_lossy(&out.stderr));
    let versions: Vec<PathBuf> = fs::read_dir(dir.join("modules"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("modules.dep").is_file())
        .collect();
    assert_eq!(versions.len(), 1, "one kernel in the guest: {versions:?}");
    versions[0].clone()
}

/// A `qemu` (`qemu-system-x86_64`, `qemu-system-aarch64`) first in PATH that execs the real one
/// with a parent-death signal.
fn qemu_wrapper(dir: &Path, qemu: &str) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let real = ["/usr/bin", "/usr/local/bin"]
        .into_iter()
        .map(|d| Path::new(d).join(qemu))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{qemu} is installed (bash .ci/setup)"));
    let wrapper = dir.join(qemu);
    fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec setpriv --pdeathsig KILL -- {} \"$@\"\n", real.display()),
    )
    .unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    dir.to_path_buf()
}

/// Kills `lava-run` by its PID when dropped (a failed assertion, an overstay).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        // Already reaped or gone: kill fails harmlessly.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Processes whose command line names `needle` (the job's own tmp folder), but this test's.
pub(crate) fn processes_naming(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z'));
        if text.contains(needle) && !zombie && pid != std::process::id() {
            found.push(format!("{pid}: {text}"));
        }
    }
    found
}

/// The `results` entries of a lava-run log: (definition, case, result).
pub(crate) fn lava_results(log: &str) -> Vec<(String, String, String)> {
    log.lines()
        .filter(|l| l.contains("\"lvl\": \"results\""))
        .filter_map(|l| serde_yaml::from_str::<serde_yaml::Value>(l).ok())
        .map(|v| {
            let msg = &v["msg"];
            let s = |k: &str| msg[k].as_str().unwrap_or_default().to_string();
            (s("definition"), s("case"), s("result"))
        })
        .collect()
}

/// Runs `root/job.yaml` with the real `lava-run` against `root/device.yaml`, QEMU being `qemu`;
/// libguestfs's appliance (LAVA's test overlay) boots the host-architecture `supermin_image`'s
/// kernel. Returns the log once `lava-run` finished, after checking it succeeded, finished the
/// job correctly and left no process of the job running.
pub(crate) fn run_lava(root: &Path, supermin_image: &Path, qemu: &str) -> String {
    let dispatcher = dispatcher();
    let modules = guest_modules(supermin_image, &root.join("guest"));
    let bin = qemu_wrapper(&root.join("bin"), qemu);
    // A job id of its own: lava-run works in /var/lib/lava/dispatcher/tmp/ID.
    let job_id = format!("{}", std::process::id());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let log = fs::File::create(root.join("lava-run.log")).unwrap();
    let child = Command::new("setpriv")
        .args(["--pdeathsig", "KILL", "--", "/usr/bin/python3"])
        .arg(dispatcher.join("usr/bin/lava-run"))
        .args(["--job-id", &job_id, "--output-dir"])
        .arg(root.join("output"))
        .arg("--device")
        .arg(root.join("device.yaml"))
        .arg(root.join("job.yaml"))
        .current_dir(root)
        .env("PATH", path)
        .env("PYTHONPATH", dispatcher.join("usr/lib/python3/dist-packages"))
        .env("LIBGUESTFS_BACKEND", "direct")
        .env("LIBGUESTFS_BACKEND_SETTINGS", "force_tcg")
        .env("SUPERMIN_KERNEL", supermin_image.join("vmlinuz"))
        .env("SUPERMIN_MODULES", &modules)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // lava-run logs to stderr: one {dt, lvl, msg} mapping a line.
        .stderr(log)
        .spawn()
        .unwrap();
    let mut running = Running(child);
    let deadline = Instant::now() + Duration::from_secs(30 * 60);
    let status = loop {
        if let Some(status) = running.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "lava-run overstayed 30 minutes; killed");
        std::thread::sleep(Duration::from_millis(500));
    };
    let log_text = fs::read_to_string(root.join("lava-run.log")).unwrap();
    let tail = &log_text[log_text.len().saturating_sub(4000)..];
    assert!(status.success(), "lava-run failed ({status}): {tail}");
    assert!(log_text.contains("\"msg\": \"Job finished correctly\""), "{tail}");
    let job_dir = format!("/var/lib/lava/dispatcher/tmp/{job_id}/");
    assert_eq!(processes_naming(&job_dir), Vec::<String>::new(), "left running");
    drop(running);
    log_text
}

#[test]
fn a_real_lava_run_of_the_qemu_job_on_the_lab_guest_is_reported_from_its_log() {
    let _one_guest_at_a_time = lab::exclusive();
    let image = lab::image();
    dispatcher();
    let test = Test::new();
    let root = test.path().to_path_buf();
    let url = |file: &str| format!("file://{}", image.join(file).display());
    let made = test
        .args(["lava", "--machines-dir"])
        .arg_path(&machines_dir())
        .args(["--machine", "rtlab-guest", "--deploy", "qemu", "--distro", "nodistro"])
        .args(["--kernel-url", &url("vmlinuz"), "--initrd-url", &url("initrd.img")])
        .args(["--rootfs-url", &url("rootfs.ext4")])
        // The lab's own init: a root shell on the console (no login), then sshd; and the
        // lab's `no_timer_check` (a loaded TCG host fails the kernel's IO-APIC timer check).
        .args([
            "--kernel-args",
            "console=ttyS0 root=/dev/vda rw init=/sbin/rtlab-init panic=-1 no_timer_check",
        ])
        .args(["--no-login", "--prompt", "# "])
        .args(["--scenario", "idle,stress", "--duration", "5s", "--interval-us", "10000"])
        .args(["--histogram-us", "200000", "--threshold-us", "1000000", "--out", "job.yaml"])
        .run()
        .ignore_stdout()
        .stderr_is("       Wrote job.yaml (LAVA job for rtlab-guest)\n")
        .success();
    let job_text = fs::read_to_string(root.join("job.yaml")).unwrap();
    if let Err(why) = lava_schema(&job_text) {
        panic!("LAVA rejects the job: {why}\n{job_text}");
    }
    let job: Value = serde_yaml::from_str(&job_text).unwrap();
    // The lab machine's RT layout reaches the guest's command line.
    let kernel_arg = job["actions"][0]["deploy"]["images"]["kernel"]["image_arg"].as_str().unwrap();
    assert!(
        kernel_arg.contains(" isolcpus=1 ") && kernel_arg.contains(" nohz_full=1"),
        "{kernel_arg}"
    );
    render_device(&job, &root.join("device.yaml"), &["-accel tcg,thread=multi", "-cpu max"]);
    let log_text = run_lava(&root, &image, "qemu-system-x86_64");

    lava_verdicts_and_report_agree(&root, &log_text, 1);
    drop(made);
}

/// LAVA's own verdicts (from the test shell: a PREEMPT_RT kernel, one case per scenario) and
/// `rtbuild report`'s reading of the log `lava-run` wrote in `root` agree; every measuring
/// thread ran on `rt_cpu`; the guest's state before and after each scenario was read whole.
pub(crate) fn lava_verdicts_and_report_agree(root: &Path, log_text: &str, rt_cpu: u64) {
    // LAVA's own verdicts, from the test shell: a PREEMPT_RT kernel, one case per scenario.
    let results = lava_results(log_text);
    let case = |name: &str| {
        results
            .iter()
            .find(|(d, c, _)| d.ends_with("rtbuild-rt") && c == name)
            .map(|r| r.2.clone())
            .unwrap_or_else(|| panic!("no LAVA result {name}: {results:?}"))
    };
    assert_eq!(case("preempt-rt"), "pass");
    let report = Test::new()
        .cwd(root)
        .args(["report", "--json", "--threshold-us", "1000000", "lava-run.log"])
        .run()
        // A real guest's console may print a kernel message into a raw output, which report
        // then warns it left out (whether one comes depends on the run): those warnings, and
        // nothing else, may be on stderr.
        .stderr_redacted_is(without_left_out_kernel_lines, "");
    assert!(report.code() == 0 || report.code() == 1, "{}", report.stderr());
    let json = report.json();
    let input = &json["inputs"][0];
    assert_eq!(input["kind"], "lava-log", "{json}");
    let scenarios = input["scenarios"].as_array().unwrap();
    let names: Vec<&str> = scenarios.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["idle", "stress"], "{json}");
    for scenario in scenarios {
        let name = scenario["name"].as_str().unwrap();
        // Parsed from the escaped console lines: every thread ran on the isolated CPU.
        assert!(scenario["all"]["samples"].as_u64().unwrap() > 0, "{name}: {scenario}");
        let threads = scenario["threads"].as_array().unwrap();
        assert!(
            !threads.is_empty() && threads.iter().all(|t| t["cpu"] == rt_cpu),
            "{name}: {threads:?}"
        );
        // The guest's verdict (its LAVA test case) and the report's agree: a case the guest
        // failed is a failed scenario; a passed scenario was a passed case.
        let verdict = scenario["verdict"].as_str().unwrap().to_lowercase();
        let lava = case(&format!("cyclictest-{name}"));
        assert!(verdict == "pass" || verdict == "fail", "{name}: {scenario}");
        assert!(lava == "pass" || lava == "fail", "{name}: {lava}");
        assert!(lava == "pass" || verdict == "fail", "{name}: LAVA {lava}, report {scenario}");
        // The guest printed its state before and after the scenario (IRQ affinities, kernel
        // warnings) and the report judged it: both states were read whole, once each (a
        // missing, cut or repeated state is an invalid reason naming it).
        for when in ["before", "after"] {
            let marker = format!("<<<RTBUILD-STATE-BEGIN scenario={name} when={when}>>>");
            assert!(log_text.contains(&marker), "{name}: no {marker}");
        }
        // The job asked cyclictest for its status at 1, 2 and 3 s of its 5 s and printed the
        // blocks between the status markers: the report has the convergence from them.
        assert_eq!(scenario["convergence_unknown"], Value::Null, "{name}: {scenario}");
        for thread in threads {
            let snapshots = thread["convergence"]["snapshots"].as_u64().unwrap_or(0);
            assert!(snapshots >= 1, "{name}: {thread}");
        }
        let marker = format!("<<<RTBUILD-STATUS-BEGIN scenario={name}>>>");
        assert!(log_text.contains(&marker), "{name}: no {marker}");
        let said = format!("{}{}", scenario["invalid_reasons"], scenario["warnings"]);
        assert!(
            !said.contains("state of the board") && !said.contains("were not checked"),
            "{name}: {said}"
        );
    }
}

/// `stderr` without report's warnings that it left kernel message lines out of a scenario's raw
/// output in `lava-run.log` (one line per scenario, a count of at least one).
fn without_left_out_kernel_lines(stderr: &str) -> String {
    let left_out = |line: &str| {
        let Some((_scenario, tail)) =
            line.strip_prefix("warning: lava-run.log#").and_then(|rest| rest.split_once(": "))
        else {
            return false;
        };
        matches!(
            tail.split_once(' '),
            Some((n, "kernel message line inside the raw output was left out")) if n == "1"
        ) || matches!(
            tail.split_once(' '),
            Some((n, "kernel message lines inside the raw output were left out"))
                if n.parse::<u32>().is_ok_and(|n| n > 1)
        )
    };
    stderr.lines().filter(|line| !left_out(line)).map(|line| format!("{line}\n")).collect()
}
