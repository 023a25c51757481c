//! Issue 23 item 9: SIGTERM, SIGHUP, or two SIGINTs sent to rtbuild's own pid while an ssh
//! step runs (`verify`, `tune`, `test --target`) left the ssh child running with PPID 1 until
//! its connect timeout, and rtbuild exited 143/129 with no cleanup. Now each is handled like
//! Ctrl-C: the ssh child is stopped and waited for, and rtbuild exits 130. The real ssh client
//! talks to a listener that accepts and never answers, so the step hangs like one to a board
//! that stopped responding.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal};

use crate::support::harness::{rtbuild_bin, wait_for};
use crate::support::processes::alive;

/// The pids of `parent`'s children named `name`, from `/proc`.
fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((comm, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))
        else {
            continue;
        };
        let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        if comm == name && ppid == Some(parent) && alive(u64::from(pid)) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn sigterm_sighup_or_two_sigints_to_rtbuild_stop_its_ssh_step_and_exit_130() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accept and hold every connection: ssh waits for the server's banner.
    let _held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming() {
            open.push(stream);
        }
    });
    let url = format!("ssh://root@127.0.0.1:{port}");
    let home = tempfile::tempdir().unwrap();
    let commands: [&[&str]; 3] = [
        &["verify", "--target", &url],
        &["tune", "--verify", "--target", &url],
        &["test", "--target", &url, "--rt-cpus", "1"],
    ];
    let signals: [&[Signal]; 3] = [&[Signal::TERM], &[Signal::HUP], &[Signal::INT, Signal::INT]];
    for args in commands {
        for sent in signals {
            let child = Command::new(rtbuild_bin())
                .args(args)
                .env("HOME", home.path())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let rtbuild = child.id();
            let ssh = wait_for("rtbuild's ssh child", Duration::from_secs(30), || {
                children_named(rtbuild, "ssh").first().copied()
            });
            for signal in sent {
                rustix::process::kill_process(Pid::from_raw(rtbuild as i32).unwrap(), *signal)
                    .unwrap();
                std::thread::sleep(Duration::from_millis(50));
            }
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(130), "{args:?} {sent:?}: {stderr}");
            assert!(stderr.ends_with("error: interrupted\n"), "{args:?} {sent:?}: {stderr}");
            assert!(!alive(u64::from(ssh)), "{args:?} {sent:?}: ssh {ssh} outlived rtbuild");
        }
    }
}

/// Copies `from` to a fresh `to` with the system `cp -a` (modes and all).
fn restore(from: &std::path::Path, to: &std::path::Path) {
    if to.exists() {
        std::fs::remove_dir_all(to).unwrap();
    }
    assert!(Command::new("cp").arg("-a").arg(from).arg(to).status().unwrap().success());
}

/// Issue 34 item 5: Ctrl-C or SIGTERM at any point of a `generate` over an earlier one leaves
/// the folder wholly old or wholly new, with no `.rtbuild-*` temp file (before: a mix in 9 of 80
/// tries, temp files in 23 of 80).
#[test]
fn a_signal_at_any_point_of_generate_leaves_the_folder_wholly_old_or_wholly_new() {
    use crate::support::interrupt::{interrupt_at_random, snapshot};
    let root = tempfile::tempdir().unwrap();
    let (pristine, out) = (root.path().join("pristine"), root.path().join("out"));
    let generate = |dir: &std::path::Path, extra: &[&str]| {
        let mut cmd = Command::new(rtbuild_bin());
        cmd.args(["generate", "--machine", "rb3gen2-core-kit", "--out"]).arg(dir).args(extra);
        cmd
    };
    // The new run changes several files: the kas file, the plan, the kernel fragments.
    let new_args: &[&str] = &["--rt-cpus", "6-7", "--cmdline", "rcu_nocb_poll"];
    assert!(generate(&pristine, &[]).output().unwrap().status.success());
    let old = snapshot(&pristine);
    restore(&pristine, &out);
    let started = std::time::Instant::now();
    let run = generate(&out, new_args).output().unwrap();
    let took = started.elapsed();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let new = snapshot(&out);
    let seen = interrupt_at_random(
        0x5eed_0034_0005,
        60,
        took + took / 5,
        &out,
        &|| restore(&pristine, &out),
        &|| generate(&out, new_args),
        (&old, &new),
    );
    assert!(seen.interrupted > 0, "no signal came while generate ran: {seen:?}");
}
