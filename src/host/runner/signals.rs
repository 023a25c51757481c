//! Ctrl-C, SIGTERM and SIGHUP while rtbuild drives other programs (kas, BitBake, ssh).
//!
//! Every command starts with [`install_default`]: SIGINT, SIGTERM and SIGHUP are all handled
//! alike. A signal that comes while a foreground child runs (an ssh step of `verify`, `tune`
//! or `test --target`: see [`Foreground`]) is passed on to that child (SIGTERM, then SIGKILL
//! for a second signal), rtbuild waits for it to end and exits 130; one that comes while no
//! child runs ends rtbuild at once with 130. A stage that stops cleanly by itself (`test`'s run
//! loop) takes the signals over with [`defer_to_owner`].
//!
//! [`install`] (the build commands) replaces that with a watcher thread that keeps rtbuild
//! running: each signal is counted and forwarded to the process groups of the children
//! that are running and of all their descendants (see [`Forward`]; kas starts BitBake in a
//! group of its own). The first signal is passed on as it came (BitBake stops cleanly), the
//! second as SIGTERM, any further one as SIGKILL; when the children do not stop on their own,
//! [`super::stream`] escalates after a grace period. rtbuild itself keeps running, waits for its
//! children, and then returns [`crate::error::Interrupted`] (exit 130), so nothing is left
//! half-written.
//!
//! Files are swapped into place inside a [`critical`] section: a signal that would end rtbuild
//! meanwhile waits until the swap is complete (so an output folder is wholly old or wholly
//! new), then ends it. A temp file registered with [`remove_on_signal`] (a bundle archive being
//! written) is removed before rtbuild ends on a signal.
//!
//! rtbuild also becomes a child subreaper: processes that its children leave behind (a BitBake
//! server, a `sleep` inside a task) are re-parented to rtbuild instead of init, and
//! [`sweep_orphans`] stops them and reaps them, so no orphan survives a build.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions};

/// Signals seen since [`install`].
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
/// Process groups that receive forwarded signals.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static INSTALLED: OnceLock<bool> = OnceLock::new();
/// When the first signal came.
static FIRST: OnceLock<Instant> = OnceLock::new();
/// Children rtbuild waits on in the foreground (pids), which a signal is passed on to.
static FOREGROUND: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
/// Set by [`install`]: a signal never ends rtbuild by itself (the build stops cleanly).
static KEEP_RUNNING: AtomicBool = AtomicBool::new(false);
/// Set by [`defer_to_owner`]: a stage handles the signals itself.
static DEFERRED: AtomicBool = AtomicBool::new(false);

/// Swaps in progress and temp files to remove when a signal ends rtbuild.
static SWAP: Mutex<Swap> = Mutex::new(Swap { depth: 0, pending: false, temps: Vec::new() });

struct Swap {
    /// Nested [`critical`] sections open.
    depth: usize,
    /// A signal came during a critical section and ends rtbuild when it closes.
    pending: bool,
    /// Registered by [`remove_on_signal`].
    temps: Vec<PathBuf>,
}

/// The signals rtbuild handles, all alike.
const HANDLED: [i32; 3] =
    [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP];

/// The handling every command starts with (see the module comment). Returns false when the
/// handlers could not be installed (a signal then ends rtbuild as by default).
pub(crate) fn install_default() -> bool {
    *INSTALLED.get_or_init(|| {
        let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
        let Ok(mut signals) = signal_hook::iterator::Signals::new(HANDLED) else {
            return false;
        };
        std::thread::Builder::new()
            .name("rtbuild-signals".into())
            .spawn(move || {
                for raw in signals.forever() {
                    let _ = FIRST.set(Instant::now());
                    let count = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
                    on_signal(raw, count);
                }
            })
            .is_ok()
    })
}

/// What one signal does: forward it to the build's process groups, pass it on to the
/// foreground children, or end rtbuild when nothing runs.
fn on_signal(raw: i32, count: usize) {
    forward(escalate(raw, count));
    if DEFERRED.load(Ordering::SeqCst) {
        return;
    }
    let children: Vec<i32> =
        FOREGROUND.lock().map(|c| c.iter().copied().collect()).unwrap_or_default();
    let signal = if count == 1 { Signal::TERM } else { Signal::KILL };
    for pid in children.iter().filter_map(|p| Pid::from_raw(*p)) {
        let _ = rustix::process::kill_process(pid, signal);
    }
    let groups = GROUPS.lock().map(|g| g.len()).unwrap_or(0);
    if children.is_empty() && groups == 0 && !KEEP_RUNNING.load(Ordering::SeqCst) {
        // Nothing runs that could be left behind: stop now, as the default action would, but
        // with the documented code (once a swap of files in progress is complete).
        end_unless_swapping();
    }
}

fn swap_state() -> std::sync::MutexGuard<'static, Swap> {
    SWAP.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Ends rtbuild with 130 after removing the registered temp files, or, while a [`critical`]
/// section is open, marks the end for when it closes. The state stays locked until the exit,
/// so no swap can start in between.
fn end_unless_swapping() {
    let mut swap = swap_state();
    if swap.depth > 0 {
        swap.pending = true;
        return;
    }
    end_now(&swap);
}

fn end_now(swap: &Swap) -> ! {
    for temp in &swap.temps {
        let _ = std::fs::remove_file(temp);
    }
    std::process::exit(130)
}

/// While alive, a signal does not end rtbuild: files being swapped into place are all swapped
/// (or all rolled back by the writer) first. Sections nest; when the outermost one closes
/// after a signal came, rtbuild ends with 130 there.
#[derive(Debug)]
#[must_use = "the section ends when this is dropped"]
pub(crate) struct Critical(());

pub(crate) fn critical() -> Critical {
    swap_state().depth += 1;
    Critical(())
}

impl Drop for Critical {
    fn drop(&mut self) {
        let mut swap = swap_state();
        swap.depth = swap.depth.saturating_sub(1);
        if swap.depth == 0 && swap.pending {
            end_now(&swap);
        }
    }
}

/// While alive, `path` (a temp file being filled) is removed if a signal ends rtbuild.
#[derive(Debug)]
#[must_use = "the path is forgotten when this is dropped"]
pub(crate) struct RemoveOnSignal(PathBuf);

/// Registers `path` (see [`RemoveOnSignal`]). Create the file and call this inside one
/// [`critical`] section, so no signal can end rtbuild in between.
pub(crate) fn remove_on_signal(path: &Path) -> RemoveOnSignal {
    swap_state().temps.push(path.to_path_buf());
    RemoveOnSignal(path.to_path_buf())
}

impl Drop for RemoveOnSignal {
    fn drop(&mut self) {
        let mut swap = swap_state();
        if let Some(at) = swap.temps.iter().position(|t| *t == self.0) {
            swap.temps.remove(at);
        }
    }
}

/// A stage that stops cleanly on a signal by itself (`test`'s run loop) takes the signals
/// over: from now on they are neither passed to foreground children nor end rtbuild here.
pub(crate) fn defer_to_owner() {
    DEFERRED.store(true, Ordering::SeqCst);
}

/// While alive, a signal rtbuild receives is passed on to the foreground child `pids`.
#[derive(Debug)]
pub(crate) struct Foreground {
    pids: Vec<i32>,
}

impl Foreground {
    pub(crate) fn new(pids: &[u32]) -> Foreground {
        let pids: Vec<i32> = pids.iter().filter_map(|p| i32::try_from(*p).ok()).collect();
        if let Ok(mut set) = FOREGROUND.lock() {
            set.extend(&pids);
        }
        // A signal that came while the child was being started reaches it too.
        if interrupted() && !DEFERRED.load(Ordering::SeqCst) {
            for pid in pids.iter().filter_map(|p| Pid::from_raw(*p)) {
                let _ = rustix::process::kill_process(pid, Signal::TERM);
            }
        }
        Foreground { pids }
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        if let Ok(mut set) = FOREGROUND.lock() {
            for pid in &self.pids {
                set.remove(pid);
            }
        }
    }
}

/// Waits up to `limit` until no process descends from rtbuild any more (reaping what it may),
/// then kills and reaps what is left: so rtbuild exits only after cyclictest, its load and
/// every helper shell are gone.
pub(crate) fn wait_for_descendants(limit: Duration) {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let reap_any = || while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {};
    let alive = || -> Vec<i32> {
        descendants(me).into_iter().map(|(pid, _)| pid).filter(|pid| !is_zombie(*pid)).collect()
    };
    let deadline = Instant::now() + limit;
    loop {
        reap_any();
        let left = alive();
        if left.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            for pid in left.iter().filter_map(|p| Pid::from_raw(*p)) {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
            let until = Instant::now() + Duration::from_secs(2);
            while Instant::now() < until && !alive().is_empty() {
                reap_any();
                std::thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `/proc/<pid>/stat` shows a zombie (exited, not yet reaped).
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')').is_some_and(|at| stat[at + 1..].trim_start().starts_with('Z'))
    })
}

/// Starts forwarding SIGINT/SIGTERM/SIGHUP to registered children and makes rtbuild a
/// subreaper; a signal never ends rtbuild by itself (the build stops cleanly and returns
/// [`crate::error::Interrupted`]). Safe to call more than once; returns false when the handlers
/// could not be installed (the default behaviour then stays: a signal ends rtbuild).
pub(crate) fn install() -> bool {
    KEEP_RUNNING.store(true, Ordering::SeqCst);
    install_default()
}

/// True once the user asked rtbuild to stop (Ctrl-C or SIGTERM).
pub(crate) fn interrupted() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// How long ago the first signal came, once one did.
pub(crate) fn interrupted_for() -> Option<Duration> {
    FIRST.get().map(Instant::elapsed)
}

/// The signal to send for the `count`-th signal received (`raw` is the one received).
fn escalate(raw: i32, count: usize) -> Signal {
    match count {
        1 if raw == signal_hook::consts::SIGTERM => Signal::TERM,
        1 if raw == signal_hook::consts::SIGHUP => Signal::HUP,
        1 => Signal::INT,
        2 => Signal::TERM,
        _ => Signal::KILL,
    }
}

/// Sends `signal` to each registered group and to every process group its descendants run in
/// (kas starts BitBake in a group of its own).
fn forward(signal: Signal) {
    let groups: Vec<i32> = GROUPS.lock().map(|g| g.iter().copied().collect()).unwrap_or_default();
    for group in groups {
        signal_tree(group, signal);
    }
}

/// `signal` to the group `leader` leads and to the groups of all its descendants, never to
/// rtbuild's own group.
fn signal_tree(leader: i32, signal: Signal) {
    let own = rustix::process::getpgrp().as_raw_nonzero().get();
    let mut targets: BTreeSet<i32> =
        descendants(leader).into_iter().map(|(_, pgid)| pgid).collect();
    targets.insert(leader);
    targets.remove(&own);
    for group in targets.into_iter().filter_map(Pid::from_raw) {
        let _ = rustix::process::kill_process_group(group, signal);
    }
}

/// `(pid, pgid)` of every descendant of `root`, from `/proc`.
fn descendants(root: i32) -> Vec<(i32, i32)> {
    let all: Vec<(i32, i32, i32)> = std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
                .filter_map(|pid| stat_ids(pid).map(|(ppid, pgid)| (pid, ppid, pgid)))
                .collect()
        })
        .unwrap_or_default();
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(parent) = queue.pop() {
        for (pid, _, pgid) in all.iter().filter(|(_, ppid, _)| *ppid == parent) {
            found.push((*pid, *pgid));
            queue.push(*pid);
        }
    }
    found
}

/// Parent pid and process group in `/proc/<pid>/stat` (after the `(comm)` and the state).
fn stat_ids(pid: i32) -> Option<(i32, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace().skip(1);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// Sends `signal` to every process re-parented to rtbuild. During an interrupted build these
/// are what a stopped parent left behind (and the BitBake server, which had its chance).
pub(crate) fn signal_adopted(signal: Signal) {
    if INSTALLED.get() != Some(&true) {
        return;
    }
    for pid in adopted().into_iter().filter_map(Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// While alive, signals rtbuild receives are forwarded to the process group `pgid` (a child
/// started in its own group, see [`super::stream`]).
#[derive(Debug)]
pub(crate) struct Forward {
    pgid: i32,
}

impl Forward {
    pub(crate) fn new(pgid: u32) -> Forward {
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
    pub(crate) fn kill_group(&self) {
        if let Some(pid) = Pid::from_raw(self.pgid) {
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }

    /// Sends `signal` to the child's group and its descendants' groups.
    pub(crate) fn signal_tree(&self, signal: Signal) {
        if self.pgid > 0 {
            signal_tree(self.pgid, signal);
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
fn adopted() -> Vec<i32> {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| parent_of(*pid) == Some(me))
        .collect()
}

/// The parent pid in `/proc/<pid>/stat`.
fn parent_of(pid: i32) -> Option<i32> {
    stat_ids(pid).map(|(ppid, _)| ppid)
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
pub(crate) fn sweep_orphans(grace: Duration) -> usize {
    if INSTALLED.get() != Some(&true) {
        return 0;
    }
    let deadline = Instant::now() + grace;
    loop {
        let left = adopted();
        reap(&left);
        let left = adopted();
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
        let left = adopted();
        if left.is_empty() {
            break;
        }
        for pid in left.iter().filter_map(|p| Pid::from_raw(*p)) {
            let _ = rustix::process::kill_process(pid, signal);
            signalled += 1;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let left = adopted();
            reap(&left);
            if adopted().is_empty() {
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
    fn descendants_are_found_with_their_groups() {
        let child = crate::host::runner::Cmd::new("sleep").arg("5").to_duct().start().unwrap();
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let pid = child.pids()[0] as i32;
        let found = descendants(me);
        let _ = child.kill();
        let own = rustix::process::getpgrp().as_raw_nonzero().get();
        assert!(found.contains(&(pid, own)), "{found:?}");
    }

    #[test]
    fn parent_of_self_is_read_from_proc() {
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let parent = rustix::process::getppid().map(|p| p.as_raw_nonzero().get());
        assert_eq!(parent_of(me), parent);
    }
}
