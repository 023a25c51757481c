//! Signals at random points of a command that rewrites an output folder: after each one the
//! folder must hold exactly the files of before the run or exactly those of a complete run,
//! and no temp file (issue 34 items 5 and 6).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// A small seeded generator (xorshift64*), so a failing try can be replayed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Every entry under `dir` by relative path: a file's bytes, `None` for a folder.
pub(crate) fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(Result::unwrap)
        .map(|e| {
            let relative = e.path().strip_prefix(dir).unwrap().to_path_buf();
            let bytes = e.file_type().is_file().then(|| std::fs::read(e.path()).unwrap());
            (relative, bytes)
        })
        .collect()
}

/// The names that differ between two snapshots, for a failure message.
fn differing(
    a: &BTreeMap<PathBuf, Option<Vec<u8>>>,
    b: &BTreeMap<PathBuf, Option<Vec<u8>>>,
) -> Vec<String> {
    let mut names: Vec<&PathBuf> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    names.into_iter().filter(|n| a.get(*n) != b.get(*n)).map(|n| n.display().to_string()).collect()
}

/// What a run of [`interrupt_at_random`] saw.
#[derive(Debug, Default)]
pub(crate) struct Outcomes {
    /// Runs that ended with 130 (the signal came while the command ran), or by the signal
    /// itself (it came before the command installed its handlers).
    pub interrupted: usize,
    /// Runs that finished before the signal (exit 0).
    pub finished: usize,
    /// Tries that left the folder wholly old, and wholly new.
    pub old: usize,
    pub new: usize,
}

/// What [`snapshot`] takes of a folder.
pub(crate) type Snapshot = BTreeMap<PathBuf, Option<Vec<u8>>>;

/// `tries` times: `reset` puts `dir` back in its old state, `command` starts, and after a
/// random delay within `window` gets SIGINT or SIGTERM (chosen at random, `seed`ed). The folder
/// must then equal `old` or `new` (`states`) and hold no temp file (`.rtbuild-*`, `.tmp*`).
pub(crate) fn interrupt_at_random(
    seed: u64,
    tries: usize,
    window: Duration,
    dir: &Path,
    reset: &dyn Fn(),
    command: &dyn Fn() -> Command,
    states: (&Snapshot, &Snapshot),
) -> Outcomes {
    let (old, new) = states;
    assert_ne!(old, new, "the old and the new state must differ for the test to mean anything");
    let mut rng = Rng::new(seed);
    let mut seen = Outcomes::default();
    let window_us = u64::try_from(window.as_micros()).unwrap().max(1);
    for attempt in 0..tries {
        reset();
        let delay = Duration::from_micros(rng.below(window_us));
        let signal = if rng.below(2) == 0 { Signal::INT } else { Signal::TERM };
        let child = command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        std::thread::sleep(delay);
        let _ = rustix::process::kill_process(Pid::from_raw(child.id() as i32).unwrap(), signal);
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let what = format!(
            "try {attempt} (seed {seed}): {signal:?} after {delay:?}, exit {:?}",
            output.status.code()
        );
        assert!(started.elapsed() < Duration::from_secs(120), "{what}: too slow");
        match output.status.code() {
            Some(130) | None => seen.interrupted += 1,
            Some(0) => seen.finished += 1,
            other => panic!("{what}: unexpected exit {other:?}: {stderr}"),
        }
        let now = snapshot(dir);
        let temps: Vec<&PathBuf> = now
            .keys()
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.starts_with(".rtbuild-") || name.starts_with(".tmp")
            })
            .collect();
        assert!(temps.is_empty(), "{what}: temp files left: {temps:?}");
        if now == *old {
            seen.old += 1;
        } else if now == *new {
            seen.new += 1;
        } else {
            panic!(
                "{what}: the folder is a mix; differs from the old state in {:?}, from the new in {:?}",
                differing(&now, old),
                differing(&now, new)
            );
        }
    }
    seen
}
