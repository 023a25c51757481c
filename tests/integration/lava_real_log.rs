//! `rtbuild report` on LAVA logs written by LAVA's own code: the console output of an
//! `rtbuild lava` job's steps (run here as LAVA runs them) goes through lava-dispatcher's real
//! console logger (`ShellLogger`, which writes every `"` of a board line as `\"`) and
//! lava-common's `YAMLLogger`, set up as offline `lava-run` sets it up (a plain stream handler:
//! one mapping per line, no list dash). The server's form (`lavacli jobs logs --raw`) is the
//! same lines behind `- `, as LAVA's HTTP handler sends them. Both must report exactly what the
//! raw cyclictest files report.
//!
//! lava-dispatcher is not installed (it pulls in systemd, udev, lvm2 and libguestfs): `.ci/setup`
//! unpacks its Debian package into the lab cache, and this test imports it from there.

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::support::harness::Test;
use crate::support::lava_job::{comparable, host_board, run_job_steps};

/// Where `.ci/setup` unpacked lava-dispatcher's Python package.
fn lava_dispatcher() -> PathBuf {
    let cache = std::env::var_os("RTBUILD_LAB_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
            .join(".cache/rtbuild-lab")
    });
    let dir = cache.join("lava-dispatcher/usr/lib/python3/dist-packages");
    assert!(
        dir.join("lava_dispatcher/shell.py").is_file(),
        "lava-dispatcher is not unpacked at {}; run `bash .ci/setup`",
        dir.display()
    );
    dir
}

/// Feeds the console through LAVA's loggers, in the chunks a serial line delivers (pexpect
/// hands the logger whatever arrived, often part of a line); returns what lava-run writes.
const LOGGER: &str = r#"
import logging, sys
from lava_common.log import YAMLLogger
from lava_dispatcher.shell import ShellLogger
logging.setLoggerClass(YAMLLogger)
logger = logging.getLogger("dispatcher")
logger.addHandler(logging.StreamHandler(sys.stdout))
logger.setLevel(logging.DEBUG)
logger.info("lava-dispatcher, installed at version: 2023.01")
shell = ShellLogger(logger)
data = sys.stdin.read().replace("\n", "\r\n")
for i in range(0, len(data), 37):
    shell.write(data[i:i + 37])
"#;

fn lava_logged(console: &str) -> String {
    let mut child = Command::new("/usr/bin/python3")
        .args(["-c", LOGGER])
        .env(
            "PYTHONPATH",
            format!("{}:/usr/lib/python3/dist-packages", lava_dispatcher().display()),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(console.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn logs_written_by_lavas_own_loggers_report_like_the_raw_outputs() {
    let _one_at_a_time = crate::support::measuring::measuring();
    let test = Test::new();
    let root = test.path().to_path_buf();
    let _ = host_board(&root.join("machines"));
    let made = test
        .args(["lava", "--machine", "host-board", "--machines-dir", "machines"])
        .args(["--bundle-url", "https://h.example/b.tar.zst", "--distro", "nodistro"])
        .args(["--scenario", "idle,stress", "--duration", "2s", "--histogram-us", "200000"])
        .args(["--threshold-us", "1000000", "--out", "job.yaml"])
        .run()
        .ignore_stdout()
        .stderr_is("       Wrote job.yaml (LAVA job for host-board)\n")
        .success();
    let console = run_job_steps(&root);
    let offline = lava_logged(&console);
    // The escaping this test is about: cyclictest's JSON arrives with every quote escaped.
    assert!(offline.contains(r#"\\\"thread\\\""#), "{}", &offline[..offline.len().min(2000)]);
    assert!(offline.starts_with("{\"dt\": "), "{}", &offline[..200]);
    fs::write(root.join("lava-run.log"), &offline).unwrap();
    let server: String = offline.lines().map(|l| format!("- {l}\n")).collect();
    fs::write(root.join("server.yaml"), server).unwrap();

    let report = |input: &str| {
        let run = Test::new()
            .cwd(&root)
            .args(["report", "--json", "--threshold-us", "1000000", input])
            .run()
            // A measurement the logger's escaping left whole: nothing to warn of.
            .stderr_is("");
        assert!(run.code() == 0 || run.code() == 1, "{input}: {}", run.stderr());
        run.json()
    };
    let work = root.join("tmp/rtbuild-lava");
    let from_files = {
        let run = Test::new()
            .cwd(&root)
            .args(["report", "--json", "--threshold-us", "1000000"])
            .arg_path(&work.join("idle.json"))
            .arg_path(&work.join("stress.json"))
            .run()
            .stderr_is("");
        run.json()
    };
    for input in ["lava-run.log", "server.yaml"] {
        let from_log = report(input);
        assert_eq!(from_log["inputs"][0]["kind"], "lava-log", "{input}");
        let scenarios = from_log["inputs"][0]["scenarios"].as_array().unwrap();
        assert_eq!(scenarios.len(), 2, "{input}: {from_log}");
        for (i, name) in ["idle", "stress"].iter().enumerate() {
            let a = &scenarios[i];
            assert_eq!(a["name"], *name);
            let b = &from_files["inputs"][i]["scenarios"][0];
            assert_eq!(comparable(a), comparable(b), "{input} {name}: log and raw file disagree");
        }
    }
    drop(made);
}
