//! `-v` samples (`"%8d:%8lu:%8ld"` = thread:cycle:latency, optionally followed by an SMI count):
//! the hot path for multi-gigabyte logs. Lines are parsed from bytes and counted into per-thread
//! histograms, so memory stays constant whatever the file size.

use std::collections::BTreeMap;

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
/// line holding a `\n` (every other byte must be a space or digit).
#[inline]
pub(super) fn parse_fixed(line: &[u8; FIXED]) -> Option<Sample> {
    if line[8] != b':' || line[17] != b':' {
        return None;
    }
    let field = |at: usize| -> Option<u64> {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&line[at..at + 8]);
        field8(u64::from_le_bytes(bytes))
    };
    let thread = field(0)?;
    let cycle = field(9)?;
    let latency = field(18)?;
    Some(Sample { thread, cycle, latency: latency as i64 })
}

const ONES: u64 = 0x0101_0101_0101_0101;

/// Eight bytes (first character in the lowest byte) of spaces followed by at least one digit,
/// as a number; `None` for anything else (a sign, a space after a digit, other characters).
#[inline]
fn field8(raw: u64) -> Option<u64> {
    // Every byte must be 0x20 (space) or 0x30..=0x39 (digit).
    if raw & (0xE0 * ONES) != 0x20 * ONES {
        return None;
    }
    let is_digit = (raw >> 4) & ONES;
    let space_low_nibble = raw & (0x0F * ONES) & !(is_digit * 0x0F);
    if space_low_nibble != 0 {
        return None;
    }
    let digits = (raw | (0x10 * ONES)) - 0x30 * ONES;
    if (digits + 0x06 * ONES) & (0xF0 * ONES) != 0 {
        return None;
    }
    // Digits must be a non-empty run at the end (spaces only lead).
    let mask = is_digit * 0xFF;
    let leading = !mask;
    if mask == 0 || leading & leading.wrapping_add(1) != 0 {
        return None;
    }
    // Eight decimal digits to a number, pairwise (first digit is the most significant).
    let v = digits.wrapping_mul(10).wrapping_add(digits >> 8) & (0x00FF * 0x0001_0001_0001_0001);
    let v = v.wrapping_mul(100).wrapping_add(v >> 16) & 0x0000_FFFF_0000_FFFF;
    let v = v.wrapping_mul(10_000).wrapping_add(v >> 32) & 0xFFFF_FFFF;
    Some(v)
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

/// Counts of one thread's samples.
#[derive(Debug, Default)]
struct Counts {
    dense: Vec<u64>,
    sparse: BTreeMap<u64, u64>,
    samples: u64,
    cycles: Cycles,
}

/// One thread's cycle numbers in file order: the first and last seen and the cycles missing
/// between them. Two parts of a file join exactly ([`Cycles::then`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cycles {
    first: Option<u64>,
    last: Option<u64>,
    missing: u64,
}

impl Cycles {
    /// The next sample's cycle number.
    #[inline]
    pub(super) fn see(&mut self, cycle: u64) {
        if let Some(last) = self.last
            && cycle > last + 1
        {
            self.missing = self.missing.saturating_add(cycle - last - 1);
        }
        if self.first.is_none() {
            self.first = Some(cycle);
        }
        self.last = Some(cycle);
    }

    #[cfg(test)]
    /// No cycle seen yet.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    #[cfg(test)]
    /// Continues with `later`, the same thread's cycles in the part of the file that follows:
    /// the result is what one pass over both parts gives.
    pub(super) fn then(&mut self, later: &Cycles) {
        if let Some(first) = later.first {
            self.see(first);
            self.missing = self.missing.saturating_add(later.missing);
            self.last = later.last;
        }
    }
}

/// Accumulates `-v` samples per thread.
#[derive(Debug, Default)]
pub(super) struct VerboseCounts {
    threads: Vec<Option<Counts>>,
    /// Samples with a negative latency (not counted; cyclictest never writes them).
    pub negative: u64,
    pub lines: u64,
}

impl VerboseCounts {
    /// Counts one sample in file order; `thread` must already be range-checked by the caller.
    #[inline]
    pub(super) fn add(&mut self, sample: Sample) {
        self.counts_of(sample.thread).cycles.see(sample.cycle);
        self.count(sample);
    }

    #[inline]
    fn counts_of(&mut self, thread: u64) -> &mut Counts {
        let index = thread as usize;
        if index >= self.threads.len() {
            self.threads.resize_with(index + 1, || None);
        }
        self.threads[index].get_or_insert_with(Counts::default)
    }

    /// Counts one sample's latency, leaving its cycle number to the caller (a chunk of the file
    /// read out of order keeps its cycles apart and joins them with [`Self::then_cycles`]).
    #[inline]
    pub(super) fn count(&mut self, sample: Sample) {
        self.lines += 1;
        let counts = self.counts_of(sample.thread);
        let Ok(value) = u64::try_from(sample.latency) else {
            self.negative += 1;
            return;
        };
        counts.samples += 1;
        if (value as usize) < DENSE {
            let slot = value as usize;
            if slot >= counts.dense.len() {
                counts.dense.resize((slot + 1).next_power_of_two().min(DENSE), 0);
            }
            counts.dense[slot] += 1;
        } else {
            *counts.sparse.entry(value).or_insert(0) += 1;
        }
    }

    #[cfg(test)]
    /// Appends `cycles`, thread `thread`'s cycle numbers in the part of the file after
    /// everything added so far.
    pub(super) fn then_cycles(&mut self, thread: u64, cycles: &Cycles) {
        self.counts_of(thread).cycles.then(cycles);
    }

    #[cfg(test)]
    /// Adds the latency counts of `other` (cycle numbers are joined by [`Self::then_cycles`]).
    pub(super) fn add_counts(&mut self, other: VerboseCounts) {
        self.negative += other.negative;
        self.lines += other.lines;
        for (index, theirs) in other.threads.into_iter().enumerate() {
            let Some(theirs) = theirs else { continue };
            let ours = self.counts_of(index as u64);
            ours.samples += theirs.samples;
            if ours.dense.len() < theirs.dense.len() {
                ours.dense.resize(theirs.dense.len(), 0);
            }
            for (slot, count) in theirs.dense.iter().enumerate() {
                ours.dense[slot] += count;
            }
            for (value, count) in theirs.sparse {
                *ours.sparse.entry(value).or_insert(0) += count;
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
            let mut histogram = Histogram::default();
            for (value, count) in counts.dense.iter().enumerate() {
                histogram.add(value as u64, *count);
            }
            for (value, count) in counts.sparse {
                histogram.add(value, count);
            }
            let mut thread = Thread::new(index as u32);
            thread.missing_cycles = counts.cycles.missing;
            thread.histogram = Some(histogram);
            thread.histogram_from_samples = true;
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
        // The same cycles cut in two and joined give the same gaps.
        let (mut first, mut second) = (Cycles::default(), Cycles::default());
        for cycle in [0, 1] {
            first.see(cycle);
        }
        for cycle in [4, 5, 9] {
            second.see(cycle);
        }
        first.then(&second);
        first.then(&Cycles::default());
        assert_eq!((first.first, first.last, first.missing), (Some(0), Some(9), 5));
        let h = threads[0].histogram.as_ref().unwrap();
        assert_eq!(
            h.buckets.iter().map(|(v, c)| (*v, *c)).collect::<Vec<_>>(),
            [(5, 2), (7, 1), (1_000_000, 1)]
        );
    }
}
