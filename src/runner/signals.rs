//! Ctrl-C and SIGTERM while rtbuild drives long-running tools (kas, BitBake).
//!
//! [`install`] replaces the default "die at once" behaviour for SIGINT and SIGTERM with a
//! watcher thread: each signal is counted and forwarded to the process groups of the children
//! that are running (see [`Forward`]). The first signal is passed on as it came (BitBake stops
//! cleanly: running tasks finish, the server shuts down), the second as SIGTERM, any further one
//! as SIGKILL. rtbuild itself keeps running, waits for its children, and then returns
//! [`crate::exit::Interrupted`] (exit 130), so nothing is left half-written.
//!
//! rtbuild also becomes a child subreaper: processes that its children leave behind (a BitBake
//! server, a `sleep` inside a task) are re-parented to rtbuild instead of init, and
//! [`sweep_orphans`] stops them and reaps them, so no orphan survives a build.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions};

/// Signals seen since [`install`].
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
/// Process groups that receive forwarded signals.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static INSTALLED: OnceLock<bool> = OnceLock::new();

/// Starts forwarding SIGINT/SIGTERM to registered children and makes rtbuild a subreaper.
/// Safe to call more than once; returns false when the handlers could not be installed (the
/// default behaviour then stays: a signal ends rtbuild).
pub fn install() -> bool {
    *INSTALLED.get_or_init(|| {
        let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
        let signals = signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
        ]);
        let Ok(mut signals) = signals else {
            return false;
        };
        std::thread::Builder::new()
            .name("rtbuild-signals".into())
            .spawn(move || {
                for raw in signals.forever() {
                    let count = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
                    forward(escalate(raw, count));
                }
            })
            .is_ok()
    })
}

/// True once the user asked rtbuild to stop (Ctrl-C or SIGTERM).
pub fn interrupted() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// The signal to send for the `count`-th signal received (`raw` is the one received).
fn escalate(raw: i32, count: usize) -> Signal {
    match count {
        1 if raw == signal_hook::consts::SIGTERM => Signal::TERM,
        1 => Signal::INT,
        2 => Signal::TERM,
        _ => Signal::KILL,
    }
}

fn forward(signal: Signal) {
    let groups: Vec<i32> = GROUPS.lock().map(|g| g.iter().copied().collect()).unwrap_or_default();
    for group in groups {
        if let Some(pid) = Pid::from_raw(group) {
            let _ = rustix::process::kill_process_group(pid, signal);
        }
    }
}

/// While alive, signals rtbuild receives are forwarded to the process group `pgid` (a child
/// started in its own group, see [`super::stream`]).
#[derive(Debug)]
pub struct Forward {
    pgid: i32,
}

impl Forward {
    pub fn new(pgid: u32) -> Forward {
        let pgid = i32::try_from(pgid).unwrap_or(0);
        if pgid > 0 {
            if let Ok(mut groups) = GROUPS.lock() {
                groups.insert(pgid);
            }
            // A signal that came before the child was registered still reaches it.
            if interrupted() {
                forward(Signal::INT);
            }
        }
        Forward { pgid }
    }

    /// Sends SIGKILL to the whole group (children that outlived their leader).
    pub fn kill_group(&self) {
        if let Some(pid) = Pid::from_raw(self.pgid) {
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        if let Ok(mut groups) = GROUPS.lock() {
            groups.remove(&self.pgid);
        }
    }
}

/// Processes re-parented to rtbuild (orphans of its children), from `/proc`.
fn adopted(exclude: &[u32]) -> Vec<i32> {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| !exclude.iter().any(|x| i32::try_from(*x).ok() == Some(*pid)))
        .filter(|pid| parent_of(*pid) == Some(me))
        .collect()
}

/// The parent pid in `/proc/<pid>/stat` (the field after the `(comm)` and the state).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

fn reap(pids: &[i32]) {
    for pid in pids.iter().filter_map(|p| Pid::from_raw(*p)) {
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
    }
}

/// Stops what the finished children left behind: waits up to `grace` for orphans to exit on
/// their own (a BitBake server shuts down about a second after its client), then sends
/// SIGTERM, then SIGKILL, and reaps them. Returns how many had to be signalled.
/// Does nothing unless [`install`] made rtbuild a subreaper (unit tests never do: their
/// process runs other tests' children).
pub fn sweep_orphans(grace: Duration, exclude: &[u32]) -> usize {
    if INSTALLED.get() != Some(&true) {
        return 0;
    }
    let deadline = Instant::now() + grace;
    loop {
        let left = adopted(exclude);
        reap(&left);
        let left = adopted(exclude);
        if left.is_empty() {
            return 0;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut signalled = 0;
    for signal in [Signal::TERM, Signal::KILL] {
        let left = adopted(exclude);
        if left.is_empty() {
            break;
        }
        for pid in left.iter().filter_map(|p| Pid::from_raw(*p)) {
            let _ = rustix::process::kill_process(pid, signal);
            signalled += 1;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let left = adopted(exclude);
            reap(&left);
            if adopted(exclude).is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    signalled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_escalate_from_polite_to_kill() {
        use signal_hook::consts::{SIGINT, SIGTERM};
        assert_eq!(escalate(SIGINT, 1), Signal::INT);
        assert_eq!(escalate(SIGTERM, 1), Signal::TERM);
        assert_eq!(escalate(SIGINT, 2), Signal::TERM);
        assert_eq!(escalate(SIGINT, 3), Signal::KILL);
    }

    #[test]
    fn parent_of_self_is_read_from_proc() {
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let parent = rustix::process::getppid().map(|p| p.as_raw_nonzero().get());
        assert_eq!(parent_of(me), parent);
    }
}
