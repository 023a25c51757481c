//! The shared data model every cyclictest parser fills in and the report reads: one [`ResultFile`] per
//! file, one [`Thread`] per measurement thread, each with what cyclictest itself reported and,
//! when the output carries one, the latency distribution as a [`Histogram`].

use std::collections::BTreeMap;

use serde::Serialize;

/// The unit of every latency value in a run (`-N` switches cyclictest to nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Us,
    Ns,
}

impl Unit {
    /// Converts a value in this unit to microseconds.
    pub fn to_us(self, value: f64) -> f64 {
        match self {
            Unit::Us => value,
            Unit::Ns => value / 1000.0,
        }
    }
}

/// The kind of cyclictest output a file held, detected from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `--json=FILE`.
    Json,
    /// `-h`/`-H` histogram, every row printed and a `# Total:` line (rt-tests before 2.7).
    HistogramFull,
    /// `-h`/`-H` histogram with only non-empty rows (rt-tests 2.7 and later).
    HistogramSparse,
    /// `-v`: one `thread:cycle:latency` line per sample.
    Verbose,
    /// The live screen: `T:` blocks redrawn with ANSI cursor movement; the last block counts.
    Live,
    /// `-q`: one `T:` line per thread at exit.
    Summary,
    /// `--spike=N`: `T: n Spike: v: TS: t` lines.
    Spike,
}

/// `-b`/`--breaktrace` stopped the run: `# Break thread:` / `# Break value:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Break {
    pub thread: Option<u32>,
    pub value: Option<u64>,
}

/// Latency counts per value (1 µs buckets, or 1 ns with `-N`), plus the samples that fell at or
/// above the histogram limit and so have no bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Histogram {
    /// Count per latency value, only non-zero entries.
    pub buckets: BTreeMap<u64, u64>,
    /// Samples at or above the limit (`# Histogram Overflows`).
    pub overflows: u64,
    /// The output did not say how many samples overflowed (a histogram cut before its
    /// `# Histogram Overflows` line); `overflows` is then a lower bound.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overflows_unknown: bool,
    /// The histogram size (`-h N`) when the output shows it; overflowed samples are `>= limit`.
    pub limit: Option<u64>,
    /// The first cycle numbers that overflowed, as cyclictest listed them (at most 64 kept).
    pub overflow_cycles: Vec<u64>,
    /// Overflowing cycles cyclictest did not list (`# N others`) plus those not kept here.
    pub overflow_cycles_not_listed: u64,
}

impl Histogram {
    /// Samples in buckets (overflows excluded).
    pub fn bucketed(&self) -> u64 {
        self.buckets.values().fold(0, |a, b| a.saturating_add(*b))
    }

    /// Every sample, overflows included.
    pub fn samples(&self) -> u64 {
        self.bucketed().saturating_add(self.overflows)
    }

    /// A lower bound for overflowed samples: the limit, else one above the highest bucket.
    pub fn overflow_floor(&self) -> u64 {
        self.limit
            .unwrap_or_else(|| self.buckets.keys().next_back().map_or(0, |v| v.saturating_add(1)))
    }

    pub fn add(&mut self, value: u64, count: u64) {
        if count > 0 {
            let slot = self.buckets.entry(value).or_insert(0);
            *slot = slot.saturating_add(count);
        }
    }
}

/// The largest latency of each block of cycle numbers, in cycle order, from `-v` samples:
/// block `i` covers cycles `[i << shift, (i + 1) << shift)`. At most [`BlockMaxima::BLOCKS`]
/// blocks are kept: a longer run doubles the block size. Blocks follow cycle numbers, not file
/// order, so counts of a file's parts merge exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BlockMaxima {
    pub shift: u32,
    /// Per block, its largest latency plus one; 0 when no sample fell in it.
    pub maxima: Vec<u64>,
    /// The cycle number after the last sample's.
    pub end: u64,
}

impl BlockMaxima {
    /// The most blocks kept.
    pub const BLOCKS: usize = 4096;

    /// Counts `value` at `cycle`.
    #[inline]
    pub fn add(&mut self, cycle: u64, value: u64) {
        let stored = value.saturating_add(1);
        match self.maxima.get_mut((cycle >> self.shift) as usize) {
            Some(slot) => *slot = (*slot).max(stored),
            None => self.grow(cycle, stored),
        }
    }

    #[cold]
    fn grow(&mut self, cycle: u64, stored: u64) {
        while self.shift < 63 && (cycle >> self.shift) as usize >= Self::BLOCKS {
            self.coarsen();
        }
        let at = (cycle >> self.shift) as usize;
        if at >= self.maxima.len() {
            self.maxima.resize(at + 1, 0);
        }
        self.maxima[at] = self.maxima[at].max(stored);
    }

    /// Doubles the block size.
    fn coarsen(&mut self) {
        self.shift += 1;
        self.maxima = self.maxima.chunks(2).map(|c| c.iter().copied().max().unwrap_or(0)).collect();
    }

    /// Adds the maxima of other samples of the same thread (another part of the file).
    pub fn merge(&mut self, mut other: BlockMaxima) {
        while self.shift < other.shift {
            self.coarsen();
        }
        while other.shift < self.shift {
            other.coarsen();
        }
        if other.maxima.len() > self.maxima.len() {
            self.maxima.resize(other.maxima.len(), 0);
        }
        for (slot, value) in self.maxima.iter_mut().zip(other.maxima) {
            *slot = (*slot).max(value);
        }
        self.end = self.end.max(other.end);
    }

    /// The largest latency among cycles `[from, to)` (`from` and `to` on block boundaries),
    /// `None` when no sample lies there.
    pub fn max_between(&self, from: u64, to: u64) -> Option<u64> {
        let first = (from >> self.shift) as usize;
        let last = (to.saturating_add((1 << self.shift) - 1) >> self.shift) as usize;
        self.maxima
            .get(first.min(self.maxima.len())..last.min(self.maxima.len()))?
            .iter()
            .copied()
            .max()
            .filter(|m| *m > 0)
            .map(|m| m - 1)
    }
}

/// One measurement thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Thread {
    /// cyclictest's thread index (`T: 0`, `"0"` in JSON).
    pub index: u32,
    /// The CPU it ran on, when the output says (JSON only).
    pub cpu: Option<u32>,
    /// The Linux thread id (`T: 0 (2475)`).
    pub tid: Option<u32>,
    pub priority: Option<u32>,
    /// Interval in µs (`I:`).
    pub interval_us: Option<u64>,
    /// Cycles cyclictest says it measured (`C:`, `cycles`).
    pub cycles: Option<u64>,
    /// Minimum, average and maximum as cyclictest reported them.
    pub reported_min: Option<u64>,
    pub reported_avg: Option<f64>,
    pub reported_max: Option<u64>,
    /// The last cycle's latency when the `T:` line was printed (`Act:`).
    pub reported_act: Option<u64>,
    /// The latency distribution (`-h`/`-H`, sparse JSON histogram, or counted from `-v` lines).
    pub histogram: Option<Histogram>,
    /// `histogram` was counted from `-v` samples (exact, nothing overflows).
    pub histogram_from_samples: bool,
    /// `-v` only: samples missing between cycle numbers (cyclictest dropped or the log lost them).
    pub missing_cycles: u64,
    /// `--spike` lines for this thread: how many, and the largest.
    pub spikes: u64,
    pub spike_max: Option<u64>,
    /// Figures cyclictest printed for this thread that are not latencies (a finite number
    /// ≥ 0): `Max \`nan\``, `Min \`-5\``. Each one is unknown, so the thread's measurement
    /// is INVALID (and a bad maximum is never replaced by a histogram's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bad_figures: Vec<String>,
    /// `-v` only: the largest latency per block of cycles, for whether the maximum still rose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_maxima: Option<BlockMaxima>,
}

impl Thread {
    pub fn new(index: u32) -> Thread {
        Thread { index, ..Thread::default() }
    }

    /// Samples behind this thread's figures: the histogram's, else the reported cycles.
    pub fn samples(&self) -> u64 {
        match &self.histogram {
            Some(h) if h.samples() > 0 => h.samples(),
            _ => self.cycles.unwrap_or(0),
        }
    }

    /// Samples at or above the histogram limit (0 without a histogram).
    pub fn overflows(&self) -> u64 {
        self.histogram.as_ref().map_or(0, |h| h.overflows)
    }

    /// The true maximum: cyclictest's own figure, else the histogram's top bucket when nothing
    /// overflowed, else the largest spike. `None` when the data cannot say.
    pub fn max(&self) -> Option<u64> {
        if let Some(max) = self.reported_max {
            return Some(max);
        }
        if self.bad_figures.iter().any(|f| f.starts_with("Max")) {
            return None;
        }
        match &self.histogram {
            Some(h) if h.overflows == 0 && !h.overflows_unknown => {
                h.buckets.keys().next_back().copied()
            }
            _ => self.spike_max,
        }
    }
}

/// A problem in the input that did not stop parsing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// 1-based line, when the problem is on one line.
    pub line: Option<u64>,
    pub message: String,
}

/// Everything one cyclictest output file says.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ResultFile {
    /// The kinds of output seen, in a stable order (a file may hold several, e.g. `-v -h`).
    pub formats: Vec<Format>,
    pub unit: Option<Unit>,
    pub threads: Vec<Thread>,
    /// `cmdline:` from `--json`.
    pub cmdline: Option<String>,
    /// `rt_test_version:` from `--json` (note 2.4 prints as `2.40`).
    pub version: Option<String>,
    /// `return_code` from `--json`.
    pub return_code: Option<i64>,
    pub breaktrace: Option<Break>,
    pub warnings: Vec<Warning>,
    /// Warnings beyond the first [`MAX_WARNINGS`], counted but not kept (memory stays constant).
    pub warnings_not_kept: u64,
    /// `-v` samples with a negative latency: no latency, so not counted, and the run's
    /// figures are incomplete (cyclictest never writes one).
    #[serde(skip_serializing_if = "is_zero")]
    pub negative_samples: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How many warnings a [`ResultFile`] keeps.
pub const MAX_WARNINGS: usize = 20;

impl ResultFile {
    /// The unit, µs unless the output said otherwise.
    pub fn unit(&self) -> Unit {
        self.unit.unwrap_or(Unit::Us)
    }

    /// The thread with `index`, created when missing; threads stay sorted by index.
    pub fn thread_mut(&mut self, index: u32) -> &mut Thread {
        let pos = match self.threads.binary_search_by_key(&index, |t| t.index) {
            Ok(pos) => pos,
            Err(pos) => {
                self.threads.insert(pos, Thread::new(index));
                pos
            }
        };
        &mut self.threads[pos]
    }

    /// Records that `thread` printed `figure` (`Max \`nan\``), which is no latency.
    pub fn bad_figure(&mut self, thread: u32, figure: String) {
        let t = self.thread_mut(thread);
        if t.bad_figures.len() < MAX_WARNINGS && !t.bad_figures.contains(&figure) {
            t.bad_figures.push(figure);
        }
    }

    pub fn saw(&mut self, format: Format) {
        if let Err(pos) = self.formats.binary_search(&format) {
            self.formats.insert(pos, format);
        }
    }

    pub fn warn(&mut self, line: Option<u64>, message: impl Into<String>) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(Warning { line, message: message.into() });
        } else {
            self.warnings_not_kept += 1;
        }
    }
}
