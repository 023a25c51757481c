//! A real `sshd` on a free loopback port for the remote-target tests: a throwaway host key and
//! client key, and a client config that keeps host-key checking on (the host key is in its own
//! known_hosts). It is killed when dropped.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) struct Sshd {
    pub child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "rtbuild-test", "-f"])
        .arg(path)
        .output()
        .expect("ssh-keygen (openssh-client) is needed; run `bash .ci/setup`");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The test's own user (root on CI, where cyclictest needs it).
pub(crate) fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Sshd {
    pub(crate) fn start() -> Sshd {
        Sshd::start_with("")
    }

    /// An sshd that runs `command` (through the login shell) whatever the client asks: a
    /// hostile target whose every step hangs or floods.
    pub(crate) fn forcing(command: &str) -> Sshd {
        Sshd::start_with(&format!("ForceCommand {command}\n"))
    }

    /// An sshd with `extra` lines appended to its configuration.
    pub(crate) fn start_with(extra: &str) -> Sshd {
        assert!(
            Path::new("/usr/sbin/sshd").is_file(),
            "/usr/sbin/sshd is missing; run `bash .ci/setup` (openssh-server)"
        );
        let dir = tempfile::Builder::new().prefix("rtbuild-sshd").tempdir().unwrap();
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        // sshd's privilege-separation folder; exists on a machine that runs sshd as a service.
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = format!(
            "ListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
             PidFile {d}/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
             PermitRootLogin prohibit-password\nAcceptEnv RTBUILD_SYSROOT\n{extra}",
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
                "Host *\n  IdentityFile {d}/client_key\n  IdentitiesOnly yes\n  \
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

    /// `ssh://<the test's user>@127.0.0.1:<port>`.
    pub(crate) fn url(&self) -> String {
        format!("ssh://{}@127.0.0.1:{}", user(), self.port)
    }

    /// The client config to pass as `--ssh-config`.
    pub(crate) fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// A client config that also sends `RTBUILD_SYSROOT=root` (the sshd accepts it), so the
    /// tune script works on a fake tree on the far side.
    pub(crate) fn config_with_sysroot(&self, root: &Path) -> PathBuf {
        let base = std::fs::read_to_string(self.config()).unwrap();
        let path = self.dir.path().join("ssh_config_sysroot");
        std::fs::write(&path, format!("{base}  SetEnv RTBUILD_SYSROOT={}\n", root.display()))
            .unwrap();
        path
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}
