//! A step rtbuild waits on that must not hang it or fill its memory: an on-target command over
//! ssh (a target can stop answering, or flood its output). It gets a deadline and a cap on what
//! is kept of its stdout and stderr; past either it is killed and the error names the step.

use std::io::{Read, Write};
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{Cmd, RunError};

/// What a step may take: `time` to finish, `bytes` of stdout and of stderr each. `step` names
/// it in errors (`` `probe` on ssh://root@board ``).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    pub step: String,
    pub time: Duration,
    pub bytes: usize,
}

/// Runs `cmd` with `stdin` as its input within `limits`, capturing stdout and stderr, whatever
/// the exit status. A signal rtbuild receives meanwhile is passed on to it (see
/// [`super::signals::Foreground`]).
pub(crate) fn output_within(cmd: &Cmd, stdin: &[u8], limits: &Limits) -> Result<Output, RunError> {
    let mut child = cmd
        .to_std()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| cmd.spawn_error(source))?;
    let _passed_on = super::signals::Foreground::new(&[child.id()]);
    let flooded = Arc::new(AtomicBool::new(false));
    let (Some(mut input), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(RunError::Spawn {
            cmd: cmd.to_string(),
            cause: std::io::Error::other("no pipes"),
        });
    };
    let bytes = stdin.to_vec();
    // A child that never reads its input must not block rtbuild: the writer has a thread.
    let _writer = std::thread::Builder::new().spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = collect(stdout, limits.bytes, &flooded);
    let err = collect(stderr, limits.bytes, &flooded);
    let deadline = Instant::now() + limits.time;
    let status = loop {
        if flooded.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(RunError::Flooded { step: limits.step.clone(), bytes: limits.bytes });
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(source) => return Err(RunError::Spawn { cmd: cmd.to_string(), cause: source }),
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let seconds = limits.time.as_secs_f64();
            return Err(RunError::TimedOut { step: limits.step.clone(), seconds });
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // What the child left running may hold the pipes open: wait for them until the deadline.
    let left =
        || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(100));
    let stdout = out.recv_timeout(left()).unwrap_or_default();
    let stderr = err.recv_timeout(left()).unwrap_or_default();
    if flooded.load(Ordering::SeqCst) {
        return Err(RunError::Flooded { step: limits.step.clone(), bytes: limits.bytes });
    }
    Ok(Output { status, stdout, stderr })
}

/// Reads `from` to its end on a thread, keeping at most `cap` bytes; past that `flooded` is
/// set (and the rest is read and dropped, so the writer never blocks).
fn collect(
    mut from: impl Read + Send + 'static,
    cap: usize,
    flooded: &Arc<AtomicBool>,
) -> mpsc::Receiver<Vec<u8>> {
    let (done, result) = mpsc::channel();
    let flooded = Arc::clone(flooded);
    let _ = std::thread::Builder::new().spawn(move || {
        let mut kept = Vec::new();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match from.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    if kept.len() + n > cap {
                        flooded.store(true, Ordering::SeqCst);
                        kept = Vec::new();
                    } else if !flooded.load(Ordering::SeqCst) {
                        kept.extend_from_slice(&chunk[..n]);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = done.send(kept);
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(time: Duration, bytes: usize) -> Limits {
        Limits { step: "`probe` on ssh://root@board".into(), time, bytes }
    }

    #[test]
    fn a_step_within_its_limits_gives_its_output_and_status() {
        let cmd = Cmd::new("sh").args(["-s", "--", "x"]);
        let out = output_within(
            &cmd,
            b"echo \"$1\"; echo e >&2; exit 3\n",
            &limits(Duration::from_secs(20), 1024),
        )
        .unwrap();
        assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b"x\n"[..], &b"e\n"[..]));
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn a_step_past_its_deadline_is_killed_and_named() {
        let started = Instant::now();
        let err = output_within(
            &Cmd::new("sh").arg("-s"),
            b"exec sleep 30\n",
            &limits(Duration::from_millis(300), 1024),
        )
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(
            err.to_string(),
            "`probe` on ssh://root@board did not finish within 0.3 s and was stopped; check that the target is up and answering, or allow more time with --target-timeout"
        );
    }

    #[test]
    fn a_step_that_floods_is_killed_and_named() {
        let started = Instant::now();
        let err = output_within(
            &Cmd::new("sh").arg("-s"),
            b"exec yes flood\n",
            &limits(Duration::from_secs(60), 1 << 20),
        )
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(matches!(err, RunError::Flooded { .. }), "{err}");
        assert!(err.to_string().starts_with("`probe` on ssh://root@board printed more than 1 MiB"));
    }

    #[test]
    fn a_step_that_never_reads_its_input_does_not_block() {
        let big = vec![b'#'; 4 << 20];
        let out =
            output_within(&Cmd::new("true"), &big, &limits(Duration::from_secs(20), 1024)).unwrap();
        assert!(out.status.success());
    }
}
