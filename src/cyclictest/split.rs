//! A long run of fixed-width `-v` lines counted on every core: the run is cut into parts at line
//! boundaries, each part is counted on its own thread into its own [`VerboseCounts`], and the
//! parts are appended in file order ([`VerboseCounts::append`]), which gives exactly the counts
//! of one pass. Only the parts before the first one that stops short (a line of another kind)
//! count; the lines after it are offered again once the reader has dealt with that line.

use super::verbose::{FIXED, VerboseCounts};

/// One `-v` line and its `\n`.
const LINE: usize = FIXED + 1;

/// The smallest part worth a thread of its own (spawning one costs some tens of µs, counting
/// this many bytes some hundreds).
const MIN_PART: usize = 512 << 10;

/// At most this many parts, whatever the core count: the reader's buffer is only so big.
const MAX_PARTS: usize = 16;

/// Decides how many threads count each run, and counts it.
#[derive(Debug)]
pub(super) struct Splitter {
    max_parts: usize,
    min_part: usize,
    /// The last run reached the end of its buffer: the file is a plain `-v` log here, so the
    /// next run is worth splitting. A run that stopped at another kind of line clears it, so a
    /// file that mixes formats is counted on one core and no part is counted twice in vain.
    plain: bool,
}

impl Default for Splitter {
    /// As many parts as this process may use CPUs (its affinity, cgroup quota).
    fn default() -> Splitter {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Splitter { max_parts: cores.min(MAX_PARTS), min_part: MIN_PART, plain: true }
    }
}

impl Splitter {
    /// A splitter into at most `max_parts` parts of at least `min_part` bytes.
    #[cfg(test)]
    pub(super) fn new(max_parts: usize, min_part: usize) -> Splitter {
        Splitter { max_parts, min_part: min_part.max(LINE), plain: true }
    }

    /// Counts the fixed-width lines at the start of `buf` into `counts`, exactly as
    /// [`VerboseCounts::add_fixed_lines`] does; returns how many it counted.
    pub(super) fn count(&mut self, counts: &mut VerboseCounts, buf: &[u8]) -> u64 {
        let lines = buf.len() / LINE;
        let parts = if self.plain { self.max_parts.min(buf.len() / self.min_part) } else { 1 };
        let taken = if parts >= 2 {
            count_in_parts(counts, &buf[..lines * LINE], parts)
        } else {
            counts.add_fixed_lines(buf)
        };
        self.plain = taken == lines as u64;
        taken
    }
}

/// Counts `run` (whole lines) in `parts` parts, the first on this thread.
fn count_in_parts(counts: &mut VerboseCounts, run: &[u8], parts: usize) -> u64 {
    let lines = run.len() / LINE;
    let per_part = lines / parts;
    let bounds = |part: usize| {
        let end = if part + 1 == parts { lines } else { (part + 1) * per_part };
        (part * per_part * LINE, end * LINE)
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (1..parts)
            .map(|part| {
                let (start, end) = bounds(part);
                let slice = &run[start..end];
                std::thread::Builder::new().name("rtbuild-count".into()).spawn_scoped(
                    scope,
                    move || {
                        let mut counts = VerboseCounts::default();
                        let taken = counts.add_fixed_lines(slice);
                        (counts, taken)
                    },
                )
            })
            .collect();
        let mut taken = counts.add_fixed_lines(&run[..per_part * LINE]);
        let mut whole = taken == per_part as u64;
        for (part, worker) in (1..parts).zip(workers) {
            // Every worker is joined; a part counts only when all before it were whole. A
            // thread that could not start (or failed) ends the counted lines there: the rest is
            // offered again, and counted on this thread.
            let result = worker.ok().and_then(|handle| handle.join().ok());
            let Some((later, later_taken)) = result.filter(|_| whole) else {
                whole = false;
                continue;
            };
            let (start, end) = bounds(part);
            counts.append(later);
            taken += later_taken;
            whole = later_taken == ((end - start) / LINE) as u64;
        }
        taken
    })
}
