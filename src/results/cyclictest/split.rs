//! A long run of fixed-width `-v` lines counted on every core: the run is cut into parts at line
//! boundaries, the threads claim the parts one by one and count each into its own
//! [`VerboseCounts`], and the parts are appended in file order ([`VerboseCounts::append`]),
//! which gives exactly the counts of one pass. Only the parts up to the first one that stops
//! short (a line of another kind) count; the lines after it are offered again once the reader
//! has dealt with that line.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::verbose::{FIXED, VerboseCounts};

/// One `-v` line and its `\n`.
const LINE: usize = FIXED + 1;

/// The bytes of one part: a thread claims parts one at a time, so a thread the scheduler holds
/// back (the VM's other CPU busy) leaves its parts to the others instead of being waited for.
/// Spawning a thread costs some tens of µs, counting a part some hundreds.
const PART: usize = 512 << 10;

/// At most this many threads, whatever the core count: the reader's buffer is only so big.
const MAX_THREADS: usize = 16;

/// Runs counted on one thread after two split runs in a row whose helpers kept this thread
/// waiting (the other CPUs busy with other work): some hundred MB, then splitting is tried
/// again. One such run alone is the odd late wake-up of an idle CPU (a few in a GB here).
const BACK_OFF_RUNS: u32 = 32;

/// Decides how many threads count each run, and counts it.
#[derive(Debug)]
pub(super) struct Splitter {
    threads: usize,
    part: usize,
    /// The last run reached the end of its buffer: the file is a plain `-v` log here, so the
    /// next run is worth splitting. A run that stopped at another kind of line clears it, so a
    /// file that mixes formats is counted on one core and no part is counted in vain. Clear at
    /// the start: the first lines of a file are cyclictest's header.
    plain: bool,
    /// Runs still to count on this thread only, after helpers were waited for.
    back_off: u32,
    /// The last split run kept this thread waiting for its helpers.
    waited: bool,
}

impl Default for Splitter {
    /// As many threads as this process may use CPUs (its affinity, cgroup quota).
    fn default() -> Splitter {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Splitter {
            threads: cores.min(MAX_THREADS),
            part: PART,
            plain: false,
            back_off: 0,
            waited: false,
        }
    }
}

impl Splitter {
    /// A splitter onto at most `threads` threads, in parts of `part` bytes (rounded to lines),
    /// that splits from the first run on.
    #[cfg(test)]
    pub(super) fn new(threads: usize, part: usize) -> Splitter {
        Splitter { threads, part: part.max(LINE), plain: true, back_off: 0, waited: false }
    }

    /// Counts the fixed-width lines at the start of `buf` into `counts`, exactly as
    /// [`VerboseCounts::add_fixed_lines`] does; returns how many it counted.
    pub(super) fn count(&mut self, counts: &mut VerboseCounts, buf: &[u8]) -> u64 {
        let lines = buf.len() / LINE;
        let part_lines = self.part / LINE;
        let parts = lines / part_lines;
        let split = self.plain && self.threads >= 2 && parts >= 2;
        if split && self.back_off > 0 {
            self.back_off -= 1;
        }
        let taken = if split && self.back_off == 0 {
            let helpers = (self.threads - 1).min(parts - 1);
            let (taken, kept_waiting) =
                count_in_parts(counts, &buf[..lines * LINE], part_lines, helpers);
            // Judged on whole runs only: a run cut short by another kind of line is no measure.
            if taken == lines as u64 {
                if kept_waiting && self.waited {
                    self.back_off = BACK_OFF_RUNS;
                }
                self.waited = kept_waiting && !self.waited;
            }
            taken
        } else {
            counts.add_fixed_lines(buf)
        };
        self.plain = taken == lines as u64;
        taken
    }
}

/// Counts `run` (whole lines) in parts of `part_lines` lines (the last one takes the rest):
/// the first on this thread straight into `counts`, the others claimed in turn by this thread
/// and `helpers` more, each into its own counts, then appended in file order. Returns the lines
/// counted, and whether this thread then waited for the helpers longer than half the time it
/// counted itself (so one thread would have been about as fast).
fn count_in_parts(
    counts: &mut VerboseCounts,
    run: &[u8],
    part_lines: usize,
    helpers: usize,
) -> (u64, bool) {
    let lines = run.len() / LINE;
    let parts = lines / part_lines;
    let range = |part: usize| {
        let end = if part + 1 == parts { lines } else { (part + 1) * part_lines };
        part * part_lines..end
    };
    let bytes = |part: usize| {
        let lines = range(part);
        &run[lines.start * LINE..lines.end * LINE]
    };
    let results: Vec<OnceLock<(VerboseCounts, u64)>> =
        (0..parts).map(|_| OnceLock::new()).collect();
    let next = AtomicUsize::new(1);
    // The first part that stopped short: the parts after it are not claimed.
    let stopped = AtomicUsize::new(usize::MAX);
    // Each part's counts share the file's budget.
    let base = counts.part();
    let claim = || {
        loop {
            let part = next.fetch_add(1, Ordering::Relaxed);
            if part >= parts || part > stopped.load(Ordering::Relaxed) {
                return;
            }
            let mut counts = base.part();
            let taken = counts.add_fixed_lines(bytes(part));
            if taken < range(part).len() as u64 {
                stopped.fetch_min(part, Ordering::Relaxed);
            }
            // Each part is claimed once, so its slot is empty.
            let _ = results[part].set((counts, taken));
        }
    };
    let (first, kept_waiting) = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..helpers)
            .filter_map(|_| {
                let builder = std::thread::Builder::new().name("rtbuild-count".into());
                builder.spawn_scoped(scope, claim).ok()
            })
            .collect();
        let started = Instant::now();
        let first = counts.add_fixed_lines(bytes(0));
        if first < part_lines as u64 {
            stopped.fetch_min(0, Ordering::Relaxed);
        }
        claim();
        let counted = started.elapsed();
        for thread in threads {
            // A thread that failed leaves its part's slot empty, which ends the run there.
            let _ = thread.join();
        }
        (first, started.elapsed() > counted + counted / 2)
    });
    let mut taken = first;
    let mut whole = first == part_lines as u64;
    for (part, result) in results.into_iter().enumerate().skip(1) {
        let Some((later, later_taken)) = result.into_inner().filter(|_| whole) else { break };
        counts.append(later);
        taken += later_taken;
        whole = later_taken == range(part).len() as u64;
    }
    // The lines after a part that stopped short (or was lost) are offered again.
    (taken, kept_waiting)
}
