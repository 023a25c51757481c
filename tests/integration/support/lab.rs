//! The lab's PREEMPT_RT guest (`tests/lab/rt-guest.sh`) for the tests in `rt_guest.rs`: one guest
//! per test process, booted on first use and shared, reachable as `ssh://root@127.0.0.1:PORT`
//! with a throwaway key and host-key checking on; on x86 every ssh through its `ssh_config` shares
//! the one connection `rt-guest.sh serve` opens (a control master: a new connection's key exchange
//! costs the TCG guest seconds).
//!
//! Shutdown is guaranteed without a destructor (statics are never dropped): the guest runs under
//! `rt-guest.sh serve`, which stops QEMU by PID as soon as its stdin closes. This process holds the
//! only write end of that pipe, so the kernel closes it when the process ends — normally, on a
//! panic that aborts, or on SIGKILL. QEMU itself runs under `setpriv --pdeathsig KILL`, so it also
//! dies if the supervisor is killed. `the_guest_is_stopped_when_its_test_process_goes` proves both.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::support::harness::project_root;
use crate::support::shared_lock::{self, SharedLock};

pub(crate) fn lab_script() -> PathBuf {
    project_root().join("tests/lab/rt-guest.sh")
}

/// The lab's machine definition (2 CPUs, RT CPU 1): `--machines-dir` for verify, tune and test.
pub(crate) fn machines_dir() -> PathBuf {
    project_root().join("tests/lab/machines")
}

/// A booted guest.
pub(crate) struct Guest {
    pub port: u16,
    /// The run folder: `ssh_config`, `known_hosts`, `console.log`, `qemu.pid`.
    pub dir: PathBuf,
    /// The cached image folder (kernel, initrd, rootfs, keys).
    pub image: PathBuf,
    pub qemu_pid: u32,
}

/// The supervisor of a guest: its process and the write end of its stdin.
pub(crate) struct Supervisor {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub dir: PathBuf,
    pub port: u16,
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The cached image, or a loud failure naming what to run.
pub(crate) fn image() -> PathBuf {
    let out = Command::new("bash").arg(lab_script()).arg("image").output().unwrap();
    assert!(
        out.status.success(),
        "{} (the lab image is built by `bash .ci/setup`, which runs `tests/lab/rt-guest.sh build`)",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Starts `rt-guest.sh serve PORT DIR`: QEMU is starting when this returns.
pub(crate) fn supervise(name: &str) -> Supervisor {
    supervise_with(&[], name)
}

/// `rt-guest.sh OPTIONS serve PORT DIR` (OPTIONS: `--arch arm64 --layout rb3`, ...).
fn supervise_with(options: &[&str], name: &str) -> Supervisor {
    let port = free_port();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rt-guest-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = std::fs::File::create(dir.join("serve.log")).unwrap();
    let mut child = Command::new("bash")
        .arg(lab_script())
        .args(options)
        .arg("serve")
        .arg(port.to_string())
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    Supervisor { child, stdin, dir, port }
}

impl Supervisor {
    /// QEMU's PID once it wrote its pidfile (QEMU starts slowly on a busy 2-CPU host).
    pub(crate) fn qemu_pid(&self) -> u32 {
        self.try_qemu_pid().unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_qemu_pid(&self) -> Result<u32, String> {
        let file = self.dir.join("qemu.pid");
        let deadline = Instant::now() + Duration::from_secs(300);
        while Instant::now() < deadline {
            if let Some(pid) =
                std::fs::read_to_string(&file).ok().and_then(|t| t.trim().parse().ok())
            {
                return Ok(pid);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let log = std::fs::read_to_string(self.dir.join("serve.log")).unwrap_or_default();
        Err(format!("QEMU wrote no {} within 300 s: {}", file.display(), log.trim()))
    }

    /// Waits for the `ready PORT` line (ssh answers); the supervisor's log on failure.
    fn ready(&mut self) -> Result<(), String> {
        let stdout = self.child.stdout.take().unwrap();
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        if line.starts_with("ready ") {
            return Ok(());
        }
        let log = std::fs::read_to_string(self.dir.join("serve.log")).unwrap_or_default();
        Err(format!("the lab guest did not boot: {}", log.trim()))
    }
}

/// Whether PID is a live (not zombie) QEMU.
pub(crate) fn qemu_alive(pid: u32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let zombie = stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z'));
    let cmdline = String::from_utf8_lossy(&cmdline);
    !zombie && (cmdline.contains("qemu-system-x86_64") || cmdline.contains("qemu-system-aarch64"))
}

/// The shared guest, booted by the first test that asks (up to about two minutes under TCG on a
/// busy host). A boot failure fails every guest test with the supervisor's message.
pub(crate) fn guest() -> &'static Guest {
    static GUEST: OnceLock<Result<Guest, String>> = OnceLock::new();
    // Held for the life of the process, never dropped: the kernel closes it at exit.
    static STDIN: Mutex<Option<ChildStdin>> = Mutex::new(None);
    let booted = GUEST.get_or_init(|| {
        let image = image();
        let mut sup = supervise("shared");
        *STDIN.lock().unwrap_or_else(PoisonError::into_inner) = sup.stdin.take();
        let qemu_pid = sup.try_qemu_pid()?;
        sup.ready()?;
        Ok(Guest { port: sup.port, dir: sup.dir.clone(), image, qemu_pid })
    });
    match booted {
        Ok(guest) => guest,
        Err(message) => panic!("{message}"),
    }
}

/// Guest tests change the guest (tuning, tracing, load), and two TCG guests at once would starve
/// each other: one at a time, in every test process.
pub(crate) fn exclusive() -> SharedLock {
    static LOCK: Mutex<()> = Mutex::new(());
    shared_lock::hold(&LOCK, "lab-guest")
}

impl Guest {
    pub(crate) fn url(&self) -> String {
        format!("ssh://root@127.0.0.1:{}", self.port)
    }

    pub(crate) fn ssh_config(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }

    /// `--target URL --ssh-config FILE`.
    pub(crate) fn target_args(&self) -> Vec<String> {
        vec![
            "--target".into(),
            self.url(),
            "--ssh-config".into(),
            self.ssh_config().display().to_string(),
        ]
    }

    /// Runs a fixed shell snippet of the test on the guest as root; its stdout, or a panic with
    /// its stderr.
    pub(crate) fn sh(&self, script: &str) -> String {
        let out = Command::new("ssh")
            .arg("-F")
            .arg(self.ssh_config())
            .args(["-p", &self.port.to_string(), "root@127.0.0.1", "--", script])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "on the guest: {script}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every knob the tune script touches, `PATH=VALUE` per line (first line of each file), read
    /// by the test itself (not by rtbuild): what revert must give back. One `awk` reads them all
    /// (a `head` per file costs seconds on the 8-CPU TCG guest; dash's `read` reads a byte at a
    /// time, which /proc/sys files do not allow).
    pub(crate) fn knobs(&self) -> String {
        self.sh("for f in /proc/sys/kernel/timer_migration /proc/sys/kernel/sched_rt_runtime_us \
             /proc/sys/kernel/printk /sys/devices/virtual/workqueue/cpumask \
             /sys/devices/virtual/workqueue/*/cpumask /sys/bus/workqueue/devices/*/cpumask \
             /sys/devices/system/cpu/cpufreq/policy*/scaling_governor \
             /proc/irq/default_smp_affinity /proc/irq/*/smp_affinity \
             /sys/devices/system/cpu/cpu*/cpuidle/state*/disable; do \
               [ -e \"$f\" ] && set -- \"$@\" \"$f\"; done; \
             [ $# -eq 0 ] || awk 'FNR == 1 { print FILENAME \"=\" $0 }' \"$@\"; true")
    }

    /// The tracing settings `--trace-above-us` changes, read by the test itself. A never-used
    /// buffer reads `7 (expanded: 1408)` and any trace grows it: the grown size is compared in
    /// whole 4 KB steps (the kernel rounds to buffer pages of 4080 data bytes: 1408 reads as
    /// 1410).
    pub(crate) fn tracing_settings(&self) -> String {
        let text = self.sh(
            "cd /sys/kernel/tracing && for f in tracing_on tracing_cpumask current_tracer; do \
               printf '%s=%s\\n' $f \"$(cat $f)\"; done; \
             printf 'buffer_size_kb=%s\\n' \"$(sed 's/.*expanded: \\([0-9]*\\).*/\\1/' buffer_size_kb)\"; \
             printf 'set_event=%s\\n' \"$(sort set_event | tr '\\n' ,)\"",
        );
        text.lines()
            .map(|l| {
                match l.strip_prefix("buffer_size_kb=").and_then(|kb| kb.parse::<u64>().ok()) {
                    Some(kb) => format!("buffer_size_kb≈{}", kb / 4),
                    None => l.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub(crate) fn console(&self) -> String {
        std::fs::read_to_string(self.dir.join("console.log")).unwrap_or_default()
    }
}

pub(crate) fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// The cached arm64 image (`rt-guest.sh --arch arm64 image`), or a loud failure naming what to
/// run.
pub(crate) fn arm64_image() -> PathBuf {
    let out = Command::new("bash").arg(lab_script()).args(["--arch", "arm64", "image"]).output();
    let out = out.unwrap();
    assert!(
        out.status.success(),
        "{} (the arm64 lab image is built by `bash .ci/setup`, which runs \
         `tests/lab/rt-guest.sh --arch arm64 build`)",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The 8-CPU arm64 guest booted with one board layout (`rb3`: RT CPU 7; `iq8275`: RT CPU 3),
/// owned by one test: dropping it closes the supervisor's stdin, which stops QEMU by its PID
/// (also when the test panics; if the process dies, the kernel closes the pipe the same way).
pub(crate) struct Arm64Guest {
    pub guest: Guest,
    supervisor: Supervisor,
}

impl Arm64Guest {
    /// Boots the guest (about one and a half minutes under TCG on an idle 2-CPU host).
    pub(crate) fn boot(layout: &str) -> Arm64Guest {
        let image = arm64_image();
        let mut sup = supervise_with(&["--arch", "arm64", "--layout", layout], layout);
        let qemu_pid = sup.try_qemu_pid().unwrap_or_else(|e| panic!("{e}"));
        sup.ready().unwrap_or_else(|e| panic!("{e}"));
        let guest = Guest { port: sup.port, dir: sup.dir.clone(), image, qemu_pid };
        Arm64Guest { guest, supervisor: sup }
    }
}

impl Drop for Arm64Guest {
    fn drop(&mut self) {
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.child.wait();
    }
}
