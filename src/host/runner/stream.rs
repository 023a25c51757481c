//! Streaming execution: run a [`Cmd`] in its own process group, hand every output line
//! (stdout and stderr merged, in order) to a callback, copy it to a log file, forward Ctrl-C /
//! SIGTERM to the group, and leave no orphan behind.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use super::signals::{self, Forward};
use super::{Cmd, RunError};

/// How a child process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChildExit {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when it was killed.
    pub signal: Option<i32>,
    /// The user asked rtbuild to stop while it ran.
    pub interrupted: bool,
}

impl ChildExit {
    #[cfg(test)]
    pub(crate) fn exited(code: i32) -> ChildExit {
        ChildExit { code: Some(code), signal: None, interrupted: false }
    }

    pub(crate) fn success(&self) -> bool {
        self.code == Some(0) && !self.interrupted
    }

    /// `exit code 2`, `signal 15`.
    pub(crate) fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "an unknown status".to_string(),
        }
    }

    fn from_status(status: &std::process::ExitStatus) -> ChildExit {
        use std::os::unix::process::ExitStatusExt;
        ChildExit {
            code: status.code(),
            signal: status.signal(),
            interrupted: signals::interrupted(),
        }
    }
}

/// How long orphans may take to exit on their own after the main child ended.
const ORPHAN_GRACE: Duration = Duration::from_secs(10);
const ORPHAN_GRACE_INTERRUPTED: Duration = Duration::from_secs(3);
/// After an interrupt, how long the children get to stop cleanly before what they left behind
/// is terminated, and before the whole tree is killed.
const STOP_GRACE: Duration = Duration::from_secs(15);
const KILL_AFTER: Duration = Duration::from_secs(45);

/// Runs `cmd` with stdin closed, calling `on_line` for each line of output (without the line
/// end, invalid UTF-8 replaced) and appending each line to `log` when given. The child gets its
/// own process group; signals rtbuild receives are forwarded to it (call
/// [`signals::install`] first). Any exit status is returned, not an error.
pub(crate) fn run_streaming(
    cmd: &Cmd,
    log: Option<&Path>,
    on_line: &mut dyn FnMut(&str),
) -> Result<ChildExit, RunError> {
    let mut log = match log {
        Some(path) => Some(open_log(path)?),
        None => None,
    };
    let expr = cmd.to_duct().stdin_null().stderr_to_stdout().unchecked().before_spawn(|command| {
        command.process_group(0);
        Ok(())
    });
    let handle = Arc::new(expr.reader().map_err(|source| cmd.spawn_error(source))?);
    let pids = handle.pids();
    let forward = Forward::new(pids.first().copied().unwrap_or(0));

    let (sender, lines) = mpsc::channel::<Vec<u8>>();
    let reader_handle = Arc::clone(&handle);
    let reader = std::thread::spawn(move || {
        let mut reader = BufReader::new(&*reader_handle);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if sender.send(line.clone()).is_err() {
                        break;
                    }
                }
            }
        }
    });

    let mut handle_line = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        if let Some(file) = log.as_mut() {
            let _ = writeln!(file, "{text}");
        }
        on_line(text);
    };

    // Read until the child exits; lines keep coming from the reader thread meanwhile.
    let mut escalated = 0;
    let status = loop {
        if let Some(waited) = signals::interrupted_for() {
            escalated = escalate(&forward, waited, escalated);
        }
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(bytes) => handle_line(&bytes),
            Err(RecvTimeoutError::Disconnected) => break wait(&handle, cmd)?,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some(output) = handle.try_wait().map_err(|e| wait_error(cmd, e))? {
            break output.status;
        }
    };
    // Leftovers in the child's group, then orphans re-parented to rtbuild, are stopped: this also
    // closes the pipe they may still hold, so the reader thread ends.
    forward.kill_group();
    let grace = if signals::interrupted() { ORPHAN_GRACE_INTERRUPTED } else { ORPHAN_GRACE };
    signals::sweep_orphans(grace);
    while let Ok(bytes) = lines.recv_timeout(Duration::from_secs(2)) {
        handle_line(&bytes);
    }
    drop(lines);
    let _ = reader.join();
    if let Some(file) = log.as_mut() {
        let _ = file.flush();
    }
    Ok(ChildExit::from_status(&status))
}

/// Runs `cmd` attached to the terminal (stdin, stdout and stderr inherited), for interactive
/// tools such as `kas shell`. The child stays in rtbuild's process group so the terminal's
/// Ctrl-C reaches it directly; rtbuild only waits.
pub(crate) fn run_interactive(cmd: &Cmd) -> Result<ChildExit, RunError> {
    let output = cmd.to_duct().unchecked().run().map_err(|source| cmd.spawn_error(source))?;
    signals::sweep_orphans(ORPHAN_GRACE_INTERRUPTED);
    Ok(ChildExit::from_status(&output.status))
}

/// Stops children that ignore an interrupt: orphans they left (holding pipes open) get SIGTERM
/// after [`STOP_GRACE`], then SIGKILL; the whole tree gets SIGKILL after [`KILL_AFTER`].
fn escalate(forward: &Forward, waited: Duration, done: u8) -> u8 {
    use rustix::process::Signal;
    match done {
        0 if waited >= STOP_GRACE => {
            signals::signal_adopted(Signal::TERM);
            1
        }
        1 if waited >= STOP_GRACE + Duration::from_secs(5) => {
            signals::signal_adopted(Signal::KILL);
            2
        }
        2 if waited >= KILL_AFTER => {
            forward.signal_tree(Signal::KILL);
            3
        }
        _ => done,
    }
}

fn wait(handle: &duct::ReaderHandle, cmd: &Cmd) -> Result<std::process::ExitStatus, RunError> {
    loop {
        if let Some(output) = handle.try_wait().map_err(|e| wait_error(cmd, e))? {
            return Ok(output.status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_error(cmd: &Cmd, source: std::io::Error) -> RunError {
    RunError::Spawn { cmd: cmd.to_string(), cause: source }
}

fn open_log(path: &Path) -> Result<std::fs::File, RunError> {
    let open = || -> std::io::Result<std::fs::File> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::File::create(path)
    };
    open().map_err(|source| RunError::Log { path: path.to_path_buf(), cause: source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_arrive_in_order_and_reach_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sub/run.log");
        let cmd = Cmd::new("sh").args(["-c", "echo one; echo two >&2; printf three"]);
        let mut seen = Vec::new();
        let finished = run_streaming(&cmd, Some(&log), &mut |l| seen.push(l.to_string())).unwrap();
        assert_eq!(finished, ChildExit::exited(0));
        assert_eq!(seen, ["one", "two", "three"]);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "one\ntwo\nthree\n");
    }

    #[test]
    fn a_failing_child_is_a_status_not_an_error() {
        let cmd = Cmd::new("sh").args(["-c", "echo bye; exit 3"]);
        let finished = run_streaming(&cmd, None, &mut |_| {}).unwrap();
        assert_eq!(finished.code, Some(3));
        assert!(!finished.success());
        assert_eq!(finished.describe(), "exit code 3");
    }

    #[test]
    fn the_child_leads_its_own_process_group() {
        let cmd = Cmd::new("sh").args(["-c", "echo $$; ps -o pgid= -p $$"]);
        let mut seen = Vec::new();
        run_streaming(&cmd, None, &mut |l| seen.push(l.trim().to_string())).unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0], seen[1], "pid and process group differ: {seen:?}");
    }

    #[test]
    fn an_unwritable_log_is_a_clear_error() {
        let err =
            run_streaming(&Cmd::new("true"), Some(Path::new("/proc/rtbuild/x.log")), &mut |_| {})
                .unwrap_err();
        assert!(
            err.to_string().starts_with("cannot write the log file /proc/rtbuild/x.log"),
            "{err}"
        );
    }
}
