//! `-v` samples (`"%8d:%8lu:%8ld"` = thread:cycle:latency, optionally followed by an SMI count):
//! the hot path for multi-gigabyte logs. Lines are parsed from bytes and counted into per-thread
//! histograms, so memory stays constant whatever the file size.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::model::{Histogram, Thread};

/// Values below this are counted in a flat array; larger ones (rare spikes, or `-N`
/// nanoseconds) in a map.
const DENSE: usize = 1 << 16;

/// One verbose line: thread index, cycle number, latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub thread: u64,
    pub cycle: u64,
    pub latency: i64,
}

/// Parses one `-v` line, or `None` when the line is something else.
#[inline]
pub fn parse_line(line: &[u8]) -> Option<Sample> {
    // The common case: three 8-wide fields, `%8d:%8lu:%8ld`, read eight bytes at a time.
    if let Ok(fixed) = <&[u8; FIXED]>::try_from(line)
        && let Some(sample) = parse_fixed(fixed)
    {
        return Some(sample);
    }
    parse_general(line)
}

/// Length of a `-v` line whose three fields fit their 8-character width.
pub(super) const FIXED: usize = 26;

/// `"       0:       1:      18"`: exactly 26 bytes, colons at 8 and 17. Never accepts a
/// line holding a `\n` (every other byte must be a space or digit). The three fields are
/// checked and converted eight bytes at a time, with one branch for the whole line.
#[inline]
pub(super) fn parse_fixed(line: &[u8; FIXED]) -> Option<Sample> {
    let word = |at: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&line[at..at + 8]);
        u64::from_le_bytes(bytes)
    };
    let (thread, bad_thread) = field8(word(0));
    let (cycle, bad_cycle) = field8(word(9));
    let (latency, bad_latency) = field8(word(18));
    let colons = (line[8] ^ b':') | (line[17] ^ b':');
    if bad_thread | bad_cycle | bad_latency | u64::from(colons) != 0 {
        return None;
    }
    Some(Sample { thread, cycle, latency: latency as i64 })
}

const ONES: u64 = 0x0101_0101_0101_0101;

/// Eight bytes (first character in the lowest byte) read as a right-aligned number: spaces
/// followed by at least one digit. Returns the number and a word that is non-zero when the
/// bytes are anything else (a sign, a space after a digit, other characters, no digit); the
/// number is meaningless then. No branches.
#[inline]
fn field8(raw: u64) -> (u64, u64) {
    // Digits become 0..=9 and spaces 0x10; every byte must then be below 0x20.
    let x = raw ^ (0x30 * ONES);
    let high = x & (0xE0 * ONES);
    // Bit 4 marks the bytes that are not digits (they must be spaces, 0x10 exactly).
    let spaces = x & (0x10 * ONES);
    let low = x & (0x0F * ONES);
    // A low nibble must be at most 9 in a digit and 0 in a space: adding 6 (digit) or 15
    // (space) carries into bit 4 exactly when it is too big.
    let too_big = (low + 0x06 * ONES + (spaces >> 4) * 9) & (0x10 * ONES);
    // Spaces only lead (the low bytes): no space right after a digit; and not all eight.
    let after_digit = spaces & !((spaces << 8) | 0x10);
    let no_digit = u64::from(spaces == 0x10 * ONES);
    let bad = high | too_big | after_digit | no_digit;
    // Eight decimal digits to a number, pairwise (first digit is the most significant); the
    // spaces' low nibbles are 0.
    let v = low.wrapping_mul(10).wrapping_add(low >> 8) & (0x00FF * 0x0001_0001_0001_0001);
    let v = v.wrapping_mul(100).wrapping_add(v >> 16) & 0x0000_FFFF_0000_FFFF;
    let v = v.wrapping_mul(10_000).wrapping_add(v >> 32) & 0xFFFF_FFFF;
    (v, bad)
}

#[inline]
fn parse_general(line: &[u8]) -> Option<Sample> {
    let mut i = skip_spaces(line, 0);
    let (thread, next) = digits(line, i)?;
    i = expect_colon(line, next)?;
    let (cycle, next) = digits(line, skip_spaces(line, i))?;
    i = expect_colon(line, next)?;
    i = skip_spaces(line, i);
    let negative = line.get(i) == Some(&b'-');
    if negative {
        i += 1;
    }
    let (value, next) = digits(line, i)?;
    // An optional SMI count, then nothing but spaces.
    let mut rest = skip_spaces(line, next);
    if rest < line.len() && rest > next {
        rest = skip_spaces(line, digits(line, rest)?.1);
    }
    if rest != line.len() {
        return None;
    }
    let value = i64::try_from(value).ok()?;
    Some(Sample { thread, cycle, latency: if negative { -value } else { value } })
}

#[inline]
fn skip_spaces(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && (line[i] == b' ' || line[i] == b'\t') {
        i += 1;
    }
    i
}

#[inline]
fn expect_colon(line: &[u8], i: usize) -> Option<usize> {
    (line.get(i) == Some(&b':')).then_some(i + 1)
}

/// Decimal digits at `i` (at least one, at most 19), and the index after them.
#[inline]
fn digits(line: &[u8], mut i: usize) -> Option<(u64, usize)> {
    let start = i;
    let mut value = 0u64;
    while i < line.len() && line[i].is_ascii_digit() && i - start < 19 {
        value = value * 10 + u64::from(line[i] - b'0');
        i += 1;
    }
    (i > start && !line.get(i).is_some_and(u8::is_ascii_digit)).then_some((value, i))
}

/// Dense slots (8 bytes each) the counts of one file hold over all threads together (64 MiB):
/// past it a thread counts its larger values in its map, one entry per distinct value.
const DENSE_BUDGET: u64 = 8 << 20;

/// Distinct latency values one thread's samples may hold (the buckets of its histogram).
pub(super) const MAX_THREAD_VALUES: u64 = 1 << 21;

/// Distinct latency values all threads' samples may hold together: the budget of a JSON file
/// (the maps of `-v` counts are filled out of order, so they hold more per value than a
/// histogram block's trees).
pub(super) const MAX_VALUES: u64 = crate::formats::cyclictest_json::MAX_HISTOGRAM_ENTRIES;

/// What the counts of one file hold, shared by the parts counted on other cores: the cold
/// path (a value past a thread's dense array) is the only one that touches it.
#[derive(Debug, Default)]
struct Budget {
    /// Dense slots allocated over all threads and parts.
    dense: AtomicU64,
    /// Map entries over all threads and parts.
    values: AtomicU64,
    /// One more than the first thread index whose map passed [`MAX_THREAD_VALUES`]; 0: none.
    thread_over: AtomicU64,
    /// The maps together passed [`MAX_VALUES`].
    total_over: AtomicBool,
}

/// The samples of a `-v` file hold more distinct values than rtbuild keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Excess {
    /// This thread's, past [`MAX_THREAD_VALUES`].
    Thread(u64),
    /// All threads' together, past [`MAX_VALUES`].
    Total,
}

/// Counts of one thread's samples.
#[derive(Debug, Default)]
struct Counts {
    dense: Vec<u64>,
    sparse: BTreeMap<u64, u64>,
    cycles: Cycles,
    blocks: super::model::BlockMaxima,
}

impl Counts {
    /// The counts of a thread whose first sample has cycle number `first`.
    fn starting_at(first: u64) -> Counts {
        Counts { cycles: Cycles { first, ..Cycles::default() }, ..Counts::default() }
    }

    /// Appends `later`, the counts of the samples that follow these in the file: exactly what
    /// counting those samples one by one after these would give.
    fn append(&mut self, later: Counts, budget: &Budget) {
        // The first later sample meets this thread's last cycle number, as it would in one pass.
        self.cycles.see(later.cycles.first);
        self.cycles.missing = self.cycles.missing.saturating_add(later.cycles.missing);
        self.cycles.next = later.cycles.next;
        // The merged counts hold the longer array and one entry per distinct value: what the
        // budget counted twice is given back.
        let (shorter, longer) = if later.dense.len() > self.dense.len() {
            (self.dense.len(), later.dense.len())
        } else {
            (later.dense.len(), self.dense.len())
        };
        if later.dense.len() > self.dense.len() {
            self.dense.resize(longer, 0);
        }
        for (slot, count) in self.dense.iter_mut().zip(later.dense) {
            *slot += count;
        }
        budget.dense.fetch_sub(shorter as u64, Ordering::Relaxed);
        let mut twice = 0u64;
        for (value, count) in later.sparse {
            match self.sparse.entry(value) {
                std::collections::btree_map::Entry::Occupied(mut slot) => {
                    *slot.get_mut() += count;
                    twice += 1;
                }
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(count);
                }
            }
        }
        budget.values.fetch_sub(twice, Ordering::Relaxed);
        self.blocks.merge(later.blocks);
    }

    /// Counts a non-negative latency of thread `thread`.
    #[inline]
    fn latency(&mut self, value: u64, thread: u64, budget: &Budget) {
        match self.dense.get_mut(value as usize) {
            Some(slot) => *slot += 1,
            None => self.beyond_dense(value, thread, budget),
        }
    }

    /// Counts `value`, which lies past the dense array: grows the array when the value is
    /// below [`DENSE`] and the file's dense budget allows, else counts it in the map. A new
    /// map entry past a budget is not made (the file is then refused, see [`Excess`]).
    #[cold]
    fn beyond_dense(&mut self, value: u64, thread: u64, budget: &Budget) {
        if (value as usize) < DENSE {
            let slot = value as usize;
            let len = (slot + 1).next_power_of_two().min(DENSE);
            let grow = (len - self.dense.len()) as u64;
            if budget.dense.fetch_add(grow, Ordering::Relaxed) + grow <= DENSE_BUDGET {
                self.dense.resize(len, 0);
                self.dense[slot] += 1;
                return;
            }
            budget.dense.fetch_sub(grow, Ordering::Relaxed);
        }
        if let Some(count) = self.sparse.get_mut(&value) {
            *count += 1;
            return;
        }
        if self.sparse.len() as u64 >= MAX_THREAD_VALUES {
            let _ = budget.thread_over.compare_exchange(
                0,
                thread + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            return;
        }
        if budget.values.fetch_add(1, Ordering::Relaxed) >= MAX_VALUES {
            budget.values.fetch_sub(1, Ordering::Relaxed);
            budget.total_over.store(true, Ordering::Relaxed);
            return;
        }
        self.sparse.insert(value, 1);
    }

    /// Distinct values counted.
    fn values(&self) -> u64 {
        self.dense.iter().filter(|c| **c > 0).count() as u64 + self.sparse.len() as u64
    }
}

/// One thread's cycle numbers in file order: the cycles missing between consecutive samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cycles {
    /// The cycle number of the thread's first sample in these counts.
    first: u64,
    /// The cycle number that follows the last one seen; `u64::MAX` before the first.
    next: u64,
    missing: u64,
}

impl Default for Cycles {
    fn default() -> Cycles {
        Cycles { first: u64::MAX, next: u64::MAX, missing: 0 }
    }
}

impl Cycles {
    /// The next sample's cycle number.
    #[inline]
    fn see(&mut self, cycle: u64) {
        if cycle > self.next {
            self.missing = self.missing.saturating_add(cycle - self.next);
        }
        self.next = cycle.saturating_add(1);
    }
}

/// The counts of `thread` in `threads`, created (starting at `cycle`) on its first sample.
#[inline]
fn counts_of(threads: &mut Vec<Option<Counts>>, thread: u64, cycle: u64) -> &mut Counts {
    let index = thread as usize;
    if index >= threads.len() {
        threads.resize_with(index + 1, || None);
    }
    threads[index].get_or_insert_with(|| Counts::starting_at(cycle))
}

/// Accumulates `-v` samples per thread, within the budgets of [`Budget`].
#[derive(Debug, Default)]
pub(super) struct VerboseCounts {
    threads: Vec<Option<Counts>>,
    budget: Arc<Budget>,
    /// Samples with a negative latency (not counted; cyclictest never writes them).
    pub negative: u64,
    pub lines: u64,
}

impl VerboseCounts {
    /// Counts one sample in file order; `thread` must already be range-checked by the caller.
    #[inline]
    pub(super) fn add(&mut self, sample: Sample) {
        self.lines += 1;
        let counts = counts_of(&mut self.threads, sample.thread, sample.cycle);
        counts.cycles.see(sample.cycle);
        match u64::try_from(sample.latency) {
            Ok(value) => {
                counts.latency(value, sample.thread, &self.budget);
                counts.blocks.add(sample.cycle, value);
            }
            Err(_) => self.negative += 1,
        }
    }

    /// Empty counts for a part of the same file, under the same budget.
    pub(super) fn part(&self) -> VerboseCounts {
        VerboseCounts { budget: Arc::clone(&self.budget), ..VerboseCounts::default() }
    }

    /// A budget this file's counts passed while counting (then some values were not kept).
    pub(super) fn over(&self) -> Option<Excess> {
        match self.budget.thread_over.load(Ordering::Relaxed) {
            0 => self.budget.total_over.load(Ordering::Relaxed).then_some(Excess::Total),
            thread => Some(Excess::Thread(thread - 1)),
        }
    }

    /// A budget the counts pass, counted exactly: each thread's distinct values, and all
    /// threads' together (what the histograms made of them hold).
    pub(super) fn excess(&self) -> Option<Excess> {
        if let Some(over) = self.over() {
            return Some(over);
        }
        let mut total = 0u64;
        for (index, counts) in self.threads.iter().enumerate() {
            let Some(counts) = counts else { continue };
            let values = counts.values();
            if values > MAX_THREAD_VALUES {
                return Some(Excess::Thread(index as u64));
            }
            total += values;
        }
        (total > MAX_VALUES).then_some(Excess::Total)
    }

    /// Counts the fixed-width `-v` lines at the start of `buf` (each [`FIXED`] bytes and its
    /// `\n`, a thread index below [`super::MAX_THREADS`]) in file order, up to the first line
    /// that is anything else; returns how many it counted. The hot loop of `rtbuild report`.
    pub(super) fn add_fixed_lines(&mut self, buf: &[u8]) -> u64 {
        let mut taken = 0u64;
        for line in buf.chunks_exact(FIXED + 1) {
            let Some((fixed, b"\n")) = line.split_first_chunk::<FIXED>() else { break };
            let Some(sample) = parse_fixed(fixed) else { break };
            if sample.thread >= super::MAX_THREADS {
                break;
            }
            let counts = counts_of(&mut self.threads, sample.thread, sample.cycle);
            counts.cycles.see(sample.cycle);
            // parse_fixed reads no sign: the latency is never negative.
            counts.latency(sample.latency as u64, sample.thread, &self.budget);
            counts.blocks.add(sample.cycle, sample.latency as u64);
            taken += 1;
        }
        self.lines += taken;
        taken
    }

    /// Appends `later`, the counts of the lines that follow these in the file; the result is
    /// exactly the counts of all the lines in one pass (histograms add, cycle gaps join at the
    /// seam).
    pub(super) fn append(&mut self, later: VerboseCounts) {
        self.lines += later.lines;
        self.negative += later.negative;
        if later.threads.len() > self.threads.len() {
            self.threads.resize_with(later.threads.len(), || None);
        }
        for (slot, counts) in self.threads.iter_mut().zip(later.threads) {
            match (slot.as_mut(), counts) {
                (Some(earlier), Some(counts)) => earlier.append(counts, &self.budget),
                (None, Some(counts)) => *slot = Some(counts),
                (_, None) => {}
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// The threads seen, each with its histogram (exact: nothing overflows).
    pub(super) fn into_threads(self) -> Vec<Thread> {
        let mut out = Vec::new();
        for (index, counts) in self.threads.into_iter().enumerate() {
            let Some(counts) = counts else { continue };
            // The map becomes the histogram: only the dense counts are inserted into it.
            let mut histogram = Histogram { buckets: counts.sparse, ..Histogram::default() };
            for (value, count) in counts.dense.iter().enumerate() {
                histogram.add(value as u64, *count);
            }
            let mut thread = Thread::new(index as u32);
            thread.missing_cycles = counts.cycles.missing;
            thread.histogram = Some(histogram);
            thread.histogram_from_samples = true;
            let mut blocks = counts.blocks;
            blocks.end = counts.cycles.next;
            thread.block_maxima = Some(blocks);
            out.push(thread);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_lines_parse_and_others_do_not() {
        type Case = (&'static str, Option<(u64, u64, i64)>);
        let cases: &[Case] = &[
            ("       0:       0:      18", Some((0, 0, 18))),
            ("       7:  123456:    3059", Some((7, 123456, 3059))),
            ("0:1:2", Some((0, 1, 2))),
            ("       1:       5:      22       0", Some((1, 5, 22))),
            ("       1:       5:      -3", Some((1, 5, -3))),
            ("       1:       5:", None),
            ("       1:       5:  12x", None),
            ("000005 000001\t000009", None),
            ("T: 0 ( 2475) P:99 I:1000", None),
            ("       1:99999999999999999999:1", None),
            ("", None),
        ];
        for (line, want) in cases {
            let got = parse_line(line.as_bytes()).map(|s| (s.thread, s.cycle, s.latency));
            assert_eq!(got, *want, "{line:?}");
        }
    }

    #[test]
    fn fixed_width_fast_path_agrees_with_the_general_parser() {
        let mut state = 88172645463325252u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let width = |r: u64| 10u64.pow((r % 9) as u32);
            let (t, c, v) = (
                state % width(state >> 3),
                (state >> 8) % width(state >> 13),
                (state >> 20) % width(state >> 29),
            );
            let line = format!("{t:8}:{c:8}:{v:8}");
            let want = parse_general(line.as_bytes());
            assert_eq!(parse_line(line.as_bytes()), want, "{line:?}");
            assert_eq!(
                want.map(|s| (s.thread, s.cycle, s.latency)),
                (line.len() == 26)
                    .then_some((t, c, v as i64))
                    .or(want.map(|s| (s.thread, s.cycle, s.latency)))
            );
        }
        for bad in [
            "       1:       2:     1 2",
            "       1:       2:      -3",
            "       1:       2:        ",
            "       1:       2:     1a2",
            "       1:       2:1234567 ",
        ] {
            assert_eq!(parse_fixed(bad.as_bytes().try_into().unwrap()), None, "{bad:?}");
            assert_eq!(parse_line(bad.as_bytes()), parse_general(bad.as_bytes()), "{bad:?}");
        }
        assert_eq!(parse_fixed(b"       1:       2:12345678").map(|s| s.latency), Some(12345678));
        assert_eq!(parse_fixed(b"       1:\n      2:       3"), None);
    }

    /// The plain reading of one field: spaces, then at least one digit, nothing else.
    fn field_by_hand(bytes: &[u8; 8]) -> Option<u64> {
        let digits = &bytes[bytes.iter().take_while(|b| **b == b' ').count()..];
        (!digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
            .then(|| digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0')))
    }

    #[test]
    fn eight_byte_fields_read_as_by_hand_for_every_byte_in_every_place() {
        let mut fields: Vec<[u8; 8]> = Vec::new();
        for text in ["       0", "       9", "  123456", "99999999", "00000042", "      10"] {
            fields.push(text.as_bytes().try_into().unwrap());
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let width = 1 + (state % 8) as usize;
            let text = format!("{:>8}", (state >> 8) % 10u64.pow(width as u32));
            fields.push(text.as_bytes().try_into().unwrap());
        }
        let mut checked = 0;
        for base in &fields {
            let mut check = |bytes: [u8; 8]| {
                let (value, bad) = field8(u64::from_le_bytes(bytes));
                let got = (bad == 0).then_some(value);
                assert_eq!(got, field_by_hand(&bytes), "{:?}", String::from_utf8_lossy(&bytes));
                checked += 1;
            };
            check(*base);
            for place in 0..8 {
                for byte in 0..=255u8 {
                    let mut bytes = *base;
                    bytes[place] = byte;
                    check(bytes);
                }
            }
        }
        assert!(checked > 2000 * 8 * 256);
    }

    #[test]
    fn counts_find_gaps_and_keep_big_values() {
        let mut counts = VerboseCounts::default();
        for (cycle, latency) in [(0, 5), (1, 7), (4, 5), (5, 1_000_000)] {
            counts.add(Sample { thread: 2, cycle, latency });
        }
        let threads = counts.into_threads();
        assert_eq!(threads.len(), 1);
        assert_eq!(threads[0].index, 2);
        assert_eq!(threads[0].missing_cycles, 2);
        // Gaps count per thread, whatever the other threads do in between.
        let mut cycles = Cycles::default();
        for cycle in [7, 8, 12, 13, 13, 20] {
            cycles.see(cycle);
        }
        assert_eq!(cycles.missing, 3 + 6);
        let h = threads[0].histogram.as_ref().unwrap();
        assert_eq!(
            h.buckets.iter().map(|(v, c)| (*v, *c)).collect::<Vec<_>>(),
            [(5, 2), (7, 1), (1_000_000, 1)]
        );
    }

    /// Issue 34: one spike per thread grew each thread's array to 64 Ki slots, 2 GiB over
    /// 4,096 threads. The arrays now share a budget; past it a thread's values go to its map,
    /// and every sample is still counted.
    #[test]
    fn spikes_of_4096_threads_stay_within_the_dense_budget_and_are_all_counted() {
        let mut counts = VerboseCounts::default();
        for thread in 0..4096 {
            counts.add(Sample { thread, cycle: 0, latency: 65_535 });
        }
        assert!(counts.budget.dense.load(Ordering::Relaxed) <= DENSE_BUDGET);
        assert_eq!(counts.excess(), None);
        let threads = counts.into_threads();
        assert_eq!(threads.len(), 4096);
        for thread in &threads {
            let buckets = &thread.histogram.as_ref().unwrap().buckets;
            assert_eq!(buckets, &BTreeMap::from([(65_535, 1)]), "thread {}", thread.index);
        }
    }

    /// A thread's distinct values are bounded: past [`MAX_THREAD_VALUES`] its map stops
    /// growing and the counts say which thread passed it.
    #[test]
    fn a_thread_past_its_distinct_values_stops_growing_and_is_named() {
        let mut counts = VerboseCounts::default();
        for i in 0..=MAX_THREAD_VALUES {
            counts.add(Sample { thread: 3, cycle: i, latency: (DENSE as u64 + i) as i64 });
        }
        assert_eq!(counts.over(), Some(Excess::Thread(3)));
        assert_eq!(counts.excess(), Some(Excess::Thread(3)));
        let kept = counts.threads[3].as_ref().unwrap().sparse.len() as u64;
        assert_eq!(kept, MAX_THREAD_VALUES);
    }
}
