//! Processes that run while rtbuild does other work: started with bytes on stdin (a script fed
//! to `sh -s`, locally or over ssh), watched, and stopped.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use super::Cmd;

/// Runs `cmd` with `stdin` as its input for at most `limit`, killing it then. Its stdout when
/// it exited 0 in time; `None` when it could not start, failed or was killed. Its stderr is
/// dropped: this is for best-effort work (cleanup after an interruption) that must not hang.
pub(crate) fn stdout_within(cmd: &Cmd, stdin: &[u8], limit: Duration) -> Option<Vec<u8>> {
    let handle = cmd
        .to_duct()
        .stdin_bytes(stdin.to_vec())
        .stdout_capture()
        .stderr_null()
        .unchecked()
        .start()
        .ok()?;
    let _passed_on = super::signals::Foreground::new(&handle.pids());
    match handle.wait_timeout(limit) {
        Ok(Some(output)) if output.status.success() => Some(output.stdout.clone()),
        Ok(Some(_)) | Err(_) => None,
        Ok(None) => {
            let _ = handle.kill();
            None
        }
    }
}

/// A process started in the background by [`start_in_own_group`].
pub(crate) struct Background(duct::Handle);

/// Starts `cmd` with `stdin` as its input, its stdout and stderr going to the files `stdout`
/// and `stderr`, in its own process group (so a Ctrl-C at the terminal reaches it once, through
/// whoever stops it, not twice). The error is the one starting it gave.
pub(crate) fn start_in_own_group(
    cmd: &Cmd,
    stdin: &[u8],
    stdout: &Path,
    stderr: &Path,
) -> std::io::Result<Background> {
    cmd.to_duct()
        .stdin_bytes(stdin.to_vec())
        .stdout_path(stdout)
        .stderr_path(stderr)
        .unchecked()
        .before_spawn(|c| {
            c.process_group(0);
            Ok(())
        })
        .start()
        .map(Background)
}

impl Background {
    /// How it ended, once it has; `None` while it runs (or when it cannot be asked).
    pub(crate) fn finished(&self) -> Option<ExitStatus> {
        self.0.try_wait().ok().flatten().map(|output| output.status)
    }

    /// Waits up to `limit` for it to end; true when it did.
    pub(crate) fn wait_for(&self, limit: Duration) -> bool {
        matches!(self.0.wait_timeout(limit), Ok(Some(_)))
    }

    /// Kills it (SIGKILL), if it still runs.
    pub(crate) fn kill(&self) {
        let _ = self.0.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_within_kills_what_outlives_its_limit() {
        let cmd = Cmd::new("sh").arg("-s");
        assert_eq!(
            stdout_within(&cmd, b"echo ok\n", Duration::from_secs(20)),
            Some(b"ok\n".to_vec())
        );
        assert_eq!(stdout_within(&cmd, b"exit 1\n", Duration::from_secs(20)), None);
        let started = std::time::Instant::now();
        assert_eq!(stdout_within(&cmd, b"exec sleep 30\n", Duration::from_millis(200)), None);
        assert!(started.elapsed() < Duration::from_secs(20), "the process was not killed");
    }

    #[test]
    fn a_background_process_runs_in_its_own_group_writes_its_files_and_can_be_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let (out, err) = (dir.path().join("out"), dir.path().join("err"));
        let script = b"echo \"$$ $(cut -d' ' -f5 /proc/$$/stat)\"; echo e >&2\n";
        let bg = start_in_own_group(&Cmd::new("sh").arg("-s"), script, &out, &err).unwrap();
        assert!(bg.wait_for(Duration::from_secs(20)));
        assert_eq!(bg.finished().and_then(|s| s.code()), Some(0));
        let text = std::fs::read_to_string(&out).unwrap();
        let ids: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(ids.len(), 2, "{text}");
        assert_eq!(ids[0], ids[1], "the shell leads its own process group");
        assert_eq!(std::fs::read_to_string(&err).unwrap(), "e\n");

        let sleeper =
            start_in_own_group(&Cmd::new("sh").arg("-s"), b"exec sleep 30\n", &out, &err).unwrap();
        assert!(sleeper.finished().is_none());
        sleeper.kill();
        assert!(sleeper.wait_for(Duration::from_secs(20)));
    }
}
