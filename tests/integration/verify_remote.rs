//! `rtbuild verify --target ssh://…` against a real `sshd` this test starts on loopback with a
//! throwaway key, host-key checking left on. The target is this machine, so the verdict is a
//! real one: on a non-RT kernel verify must fail naming PREEMPT_RT.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::Test;

/// An sshd on 127.0.0.1, killed (by its own handle) when dropped.
struct Sshd {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "rtbuild-test", "-f"])
        .arg(path)
        .output()
        .expect("ssh-keygen (openssh-client) is needed; run `bash .ci/setup`");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Sshd {
    fn start() -> Sshd {
        assert!(
            Path::new("/usr/sbin/sshd").is_file(),
            "/usr/sbin/sshd is missing; run `bash .ci/setup` (openssh-server)"
        );
        let dir = tempfile::Builder::new().prefix("rtbuild-sshd").tempdir().unwrap();
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("id_ed25519"));
        std::fs::copy(d.join("id_ed25519.pub"), d.join("authorized_keys")).unwrap();
        // sshd's privilege-separation folder; exists on a machine that runs sshd as a service.
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        let config = format!(
            "ListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
             PidFile {d}/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\n",
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), config).unwrap();
        let host_pub = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
        let host_key: Vec<&str> = host_pub.split_whitespace().take(2).collect();
        std::fs::write(
            d.join("known_hosts"),
            format!("[127.0.0.1]:{port} {}\n", host_key.join(" ")),
        )
        .unwrap();
        std::fs::write(
            d.join("ssh_config"),
            format!(
                "Host *\n  IdentityFile {d}/id_ed25519\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n  \
                 StrictHostKeyChecking yes\n  LogLevel ERROR\n",
                d = d.display()
            ),
        )
        .unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .args(["-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("sshd.log")).unwrap())
            .spawn()
            .unwrap();
        let sshd = Sshd { child, port, dir };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "sshd did not start: {}",
                sshd.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        sshd
    }

    fn url(&self) -> String {
        format!("ssh://{}@127.0.0.1:{}", user(), self.port)
    }

    fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}

fn local_kernel_is_rt() -> bool {
    let out = Command::new("uname").arg("-v").output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().any(|w| w == "PREEMPT_RT")
}

#[test]
fn live_target_over_loopback_sshd_is_judged_for_real() {
    let sshd = Sshd::start();
    let run = Test::new()
        .args(["--json", "verify", "--target", &sshd.url(), "--ssh-config"])
        .args([sshd.ssh_config()])
        .run();
    let json = run.json();
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

#[test]
fn live_target_table_names_preempt_rt() {
    if local_kernel_is_rt() {
        return;
    }
    let sshd = Sshd::start();
    let run = Test::new()
        .args(["verify", "--target", &sshd.url(), "--ssh-config"])
        .args([sshd.ssh_config()])
        .run()
        .code_is(1);
    let out = run.stdout();
    let failed: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(
        failed.iter().any(|l| l.contains("kernel version") && l.contains("PREEMPT_RT")),
        "{out}"
    );
    assert!(out.contains("verdict: FAIL"), "{out}");
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
        .args([sshd.ssh_config()])
        .run()
        .code_is(2);
    let stderr = run.stderr();
    assert!(stderr.starts_with(&format!("error: target {}: ssh failed:", sshd.url())), "{stderr}");
    assert!(stderr.contains("Host key verification failed"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
