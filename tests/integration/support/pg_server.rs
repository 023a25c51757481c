//! A private PostgreSQL server for one test: Debian's `initdb` and `pg_ctl` run as the
//! unprivileged test user, the data and the Unix socket in a temporary folder, no TCP
//! (`listen_addresses=''`). Dropping it stops the server by its PID (SIGTERM, then SIGKILL),
//! also when the test failed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::harness::{Unprivileged, wait_for};

/// Where `.ci/setup`'s `postgresql` package puts the server binaries.
const BIN: &str = "/usr/lib/postgresql/15/bin";

pub(crate) struct PgServer {
    dir: tempfile::TempDir,
    pid: u32,
}

impl PgServer {
    pub(crate) fn start() -> PgServer {
        assert!(
            Path::new(BIN).join("initdb").is_file(),
            "{BIN}/initdb is missing; run `bash .ci/setup` (it installs Debian's postgresql)"
        );
        let user = Unprivileged::get();
        let dir = tempfile::Builder::new().prefix("rtbuild-pg").tempdir().unwrap();
        user.own(dir.path());
        let data = dir.path().join("data");
        let as_user = |program: &str| {
            let mut cmd = Command::new("setpriv");
            cmd.args(user.setpriv_args()).arg(Path::new(BIN).join(program));
            cmd.env_clear().env("LANG", "C.UTF-8").current_dir(dir.path());
            cmd
        };
        let init = as_user("initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                crate::support::harness::TEST_USER,
                "--auth=trust",
                "--locale=C",
                "-E",
                "UTF8",
                "-N",
            ])
            .output()
            .unwrap();
        assert!(init.status.success(), "initdb failed: {}", String::from_utf8_lossy(&init.stderr));
        let options = format!("-k {} -c listen_addresses='' -c fsync=off", dir.path().display());
        let started = as_user("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.path().join("server.log"))
            .args(["-w", "-t", "120", "-o", &options, "start"])
            .output()
            .unwrap();
        // The PID is read even when pg_ctl gave up waiting, so the server is stopped anyway.
        let pid = std::fs::read_to_string(data.join("postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()));
        let server = PgServer { pid: pid.unwrap_or(0), dir };
        assert!(
            started.status.success() && pid.is_some(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&started.stderr),
            std::fs::read_to_string(server.dir.path().join("server.log")).unwrap_or_default()
        );
        server
    }

    /// The folder holding the server's Unix socket.
    pub(crate) fn socket_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// The URL of database `postgres` as the test user.
    pub(crate) fn url(&self) -> String {
        format!(
            "postgresql://{}@/postgres?host={}",
            crate::support::harness::TEST_USER,
            self.socket_dir().display()
        )
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // pid 0: the server never started, so there is nothing to stop.
        let 1.. = self.pid else { return };
        // A zombie (its parent has not reaped it yet) has stopped.
        let alive = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
            })
        };
        let _ = Command::new("kill").args(["-TERM", &self.pid.to_string()]).status();
        let start = std::time::Instant::now();
        while alive(self.pid) && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(100));
        }
        if alive(self.pid) {
            let _ = Command::new("kill").args(["-KILL", &self.pid.to_string()]).status();
            wait_for("the PostgreSQL server to die", Duration::from_secs(10), || {
                (!alive(self.pid)).then_some(())
            });
        }
    }
}
