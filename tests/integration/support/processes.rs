//! Processes seen from /proc, and signals sent with the system `kill`.

use std::fs;
use std::process::Command;

/// Whether a process is still alive (zombies waiting for init do not count).
pub(crate) fn alive(pid: u64) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Sends a signal with the system `kill` (the test crate forbids unsafe code).
pub(crate) fn unsafe_kill(pid: u32, signal: &str) {
    let status =
        Command::new("kill").args([format!("-{signal}"), pid.to_string()]).status().unwrap();
    assert!(status.success());
}

/// PIDs of the live `name` processes whose argument list holds `args` in a row.
pub(crate) fn processes_with_args(name: &str, args: &[&str]) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else { continue };
        let argv: Vec<String> =
            cmdline.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        let named = argv.first().is_some_and(|a| a.rsplit('/').next() == Some(name));
        if named && argv.windows(args.len()).any(|w| w == args) && alive(u64::from(pid)) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits up to `within` for `child` to exit and returns its status with everything it wrote to
/// its (piped) stderr; past `within` it kills the child and fails the test with `what`.
pub(crate) fn exit_and_stderr(
    child: &mut std::process::Child,
    within: std::time::Duration,
    what: &str,
) -> (std::process::ExitStatus, String) {
    let deadline = std::time::Instant::now() + within;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    (status, stderr)
}
