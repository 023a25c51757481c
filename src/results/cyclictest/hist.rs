//! The `-h`/`-H` histogram block: bucket rows (`%06d` index then one TAB-separated count per
//! thread, plus a sum column with `-H`), then `# Total:` (before rt-tests 2.7), `# Min/Avg/Max
//! Latencies:`, `# Histogram Overflows:`, the overflow cycle lists and `# Break` lines.
//! Rows are counted as they stream by; the threads are built once the block is complete.

use std::collections::BTreeMap;

use super::model::{Break, Format, Histogram, ResultFile};

/// Overflow cycle numbers kept per thread.
const KEEP_CYCLES: usize = 64;

/// What a histogram block said, collected line by line.
#[derive(Debug, Default)]
pub(super) struct HistBlock {
    columns: Vec<Column>,
    rows: u64,
    /// Rows ran 0, 1, 2, … with none missing (the pre-2.7 layout).
    contiguous: bool,
    last_index: Option<u64>,
    totals: Option<Vec<u64>>,
    /// Per thread: the figure, or what was printed where it holds no latency (`nan`, `-5`).
    min: Option<Vec<Result<u64, String>>>,
    avg: Option<Vec<Result<u64, String>>>,
    max: Option<Vec<Result<u64, String>>>,
    overflows: Option<Vec<u64>>,
    cycles: BTreeMap<u64, (Vec<u64>, u64)>,
    pub breaktrace: Option<Break>,
    pub tids: Option<Vec<u64>>,
    /// Non-zero buckets kept so far, over all columns.
    entries: u64,
    /// A row would have passed [`MAX_ENTRIES`]; the rows from it on are not kept.
    pub full: bool,
}

/// Non-zero buckets a block keeps over all its columns: 4,096 threads by 5,376 buckets. Rows
/// arrive in bucket order, so each column is built as a packed tree (see [`Column`]): about
/// 18 bytes a bucket, and `report` stays under 1 GiB at this budget.
pub(super) const MAX_ENTRIES: u64 = 21 << 20;

/// Rows a column gathers before they join its tree, at the least.
const PENDING: usize = 256;

/// One column of a block: a tree of the buckets so far and the latest rows not in it yet.
/// Inserting in order one by one leaves a B-tree's leaves about half full (32 bytes a
/// bucket); appending sorted runs builds them full, so the rows are gathered and joined in
/// runs of at least a quarter of the tree (each bucket is moved a few times, not
/// once per row).
#[derive(Debug, Default, Clone)]
struct Column {
    tree: BTreeMap<u64, u64>,
    pending: Vec<(u64, u64)>,
}

impl Column {
    fn push(&mut self, index: u64, count: u64) {
        self.pending.push((index, count));
        if self.pending.len() >= PENDING.max(self.tree.len() / 4) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let mut run: BTreeMap<u64, u64> = self.pending.drain(..).collect();
            self.tree.append(&mut run);
        }
    }

    fn into_tree(mut self) -> BTreeMap<u64, u64> {
        self.flush();
        self.tree
    }
}

/// The numbers after the first `:` of a `# Name: 00001 00002` line.
pub(super) fn numbers_after_colon(line: &str) -> Result<Vec<u64>, &'static str> {
    let (_, rest) = line.split_once(':').ok_or("no `:`")?;
    rest.split_whitespace().map(|n| n.parse::<u64>().map_err(|_| "not a number")).collect()
}

/// The per-thread figures of a `# Max Latencies: 00012 nan` line: each a latency, or what was
/// printed in its place (unknown, never a reason to drop the other threads' figures).
fn figures_after_colon(line: &str) -> Result<Vec<Result<u64, String>>, &'static str> {
    let (_, rest) = line.split_once(':').ok_or("no `:`")?;
    Ok(rest
        .split_whitespace()
        .map(|n| n.parse::<u64>().map_err(|_| crate::text::printable(n)))
        .collect())
}

impl HistBlock {
    pub(super) fn new() -> HistBlock {
        HistBlock { contiguous: true, ..HistBlock::default() }
    }

    /// The block holds rows or per-thread figures (not just a `# Break` line).
    pub(super) fn has_data(&self) -> bool {
        self.rows > 0 || self.min.is_some() || self.max.is_some()
    }

    /// A bucket row; `Err` describes why it is not one.
    pub(super) fn row(&mut self, line: &str) -> Result<(), &'static str> {
        let mut fields = line.split_ascii_whitespace();
        let index: u64 = fields.next().and_then(|f| f.parse().ok()).ok_or("bad bucket index")?;
        let mut counts = Vec::new();
        for field in fields {
            counts.push(field.parse().map_err(|_| "bad bucket count")?);
        }
        if counts.is_empty() {
            return Err("bucket row without counts");
        }
        if !self.columns.is_empty() && counts.len() != self.columns.len() {
            return Err("bucket row has a different number of columns than the rows before it");
        }
        if self.columns.is_empty() {
            self.columns = vec![Column::default(); counts.len()];
        }
        let expected = self.last_index.map_or(0, |last| last.saturating_add(1));
        if index != expected {
            self.contiguous = false;
        }
        if self.last_index.is_some_and(|last| index <= last) {
            return Err("bucket rows are not in increasing order");
        }
        let nonzero = counts.iter().filter(|c| **c > 0).count() as u64;
        if self.full || self.entries + nonzero > MAX_ENTRIES {
            self.full = true;
            return Err("the histogram is too large to keep");
        }
        self.entries += nonzero;
        self.last_index = Some(index);
        self.rows += 1;
        for (column, count) in self.columns.iter_mut().zip(counts) {
            if count > 0 {
                column.push(index, count);
            }
        }
        Ok(())
    }

    /// A `#` line inside or after the block. Returns `Ok(false)` when the line is not one of
    /// the histogram's own lines.
    pub(super) fn hash_line(&mut self, line: &str) -> Result<bool, &'static str> {
        let body = line.trim_start_matches('#').trim_start();
        let figures = if body.starts_with("Min Latencies:") {
            Some(&mut self.min)
        } else if body.starts_with("Avg Latencies:") {
            Some(&mut self.avg)
        } else if body.starts_with("Max Latencies:") {
            Some(&mut self.max)
        } else {
            None
        };
        if let Some(slot) = figures {
            *slot = Some(figures_after_colon(line)?);
            return Ok(true);
        }
        let slot = if body.starts_with("Total:") {
            &mut self.totals
        } else if body.starts_with("Histogram Overflows:") {
            &mut self.overflows
        } else if body.starts_with("Thread Ids:") {
            &mut self.tids
        } else if let Some(rest) = body.strip_prefix("Break thread:") {
            let value = rest.trim().parse().map_err(|_| "bad break thread")?;
            self.breaktrace.get_or_insert(Break { thread: None, value: None }).thread = Some(value);
            return Ok(true);
        } else if let Some(rest) = body.strip_prefix("Break value:") {
            let value = rest.trim().parse().map_err(|_| "bad break value")?;
            self.breaktrace.get_or_insert(Break { thread: None, value: None }).value = Some(value);
            return Ok(true);
        } else if let Some(rest) = body.strip_prefix("Thread ") {
            return self.overflow_cycles(rest).map(|()| true);
        } else {
            return Ok(body.starts_with("Histogram Overflow at cycle number"));
        };
        *slot = Some(numbers_after_colon(line)?);
        Ok(true)
    }

    /// `# Thread 0: 01234 05678 # 00012 others`.
    fn overflow_cycles(&mut self, rest: &str) -> Result<(), &'static str> {
        let (thread, list) = rest.split_once(':').ok_or("bad overflow cycle line")?;
        let thread: u64 = thread.trim().parse().map_err(|_| "bad thread in overflow cycle line")?;
        let (list, others) = match list.split_once('#') {
            Some((list, others)) => (list, others.trim().trim_end_matches("others").trim()),
            None => (list, ""),
        };
        let others: u64 =
            if others.is_empty() { 0 } else { others.parse().map_err(|_| "bad `others` count")? };
        let entry = self.cycles.entry(thread).or_default();
        for cycle in list.split_whitespace() {
            let cycle = cycle.parse().map_err(|_| "bad overflow cycle number")?;
            if entry.0.len() < KEEP_CYCLES {
                entry.0.push(cycle);
            } else {
                entry.1 = entry.1.saturating_add(1);
            }
        }
        entry.1 = entry.1.saturating_add(others);
        Ok(())
    }

    /// Moves the block into `run`; `line` is where the block started, for warnings.
    pub(super) fn finish(mut self, run: &mut ResultFile, line: u64) {
        let mut columns: Vec<BTreeMap<u64, u64>> =
            std::mem::take(&mut self.columns).into_iter().map(Column::into_tree).collect();
        let full = self.totals.is_some() && self.contiguous;
        run.saw(if full { Format::HistogramFull } else { Format::HistogramSparse });
        if self.max.is_none() {
            run.warn(
                Some(line),
                "histogram has no `# Max Latencies` line (truncated?); the maximum may be unknown",
            );
        }
        let threads = self.thread_count(&columns);
        if let Some(totals) = &self.totals {
            for (i, column) in columns.iter().enumerate().take(threads) {
                let sum = column.values().fold(0u64, |a, b| a.saturating_add(*b));
                if totals.get(i).is_some_and(|t| *t != sum) {
                    run.warn(
                        Some(line),
                        format!(
                            "thread {i}: histogram rows add up to {sum} but `# Total:` says {}",
                            totals[i]
                        ),
                    );
                }
            }
        }
        columns.resize_with(threads, BTreeMap::new);
        for (i, buckets) in columns.into_iter().enumerate() {
            let at = |v: &Option<Vec<u64>>| v.as_ref().and_then(|v| v.get(i).copied());
            let figure = |v: &Option<Vec<Result<u64, String>>>| {
                v.as_ref().and_then(|v| v.get(i).cloned()).map_or(Ok(None), |f| f.map(Some))
            };
            let (listed, not_listed) = self.cycles.get(&(i as u64)).cloned().unwrap_or_default();
            let (min, avg, max) = (figure(&self.min), figure(&self.avg), figure(&self.max));
            for (name, printed) in [("Min", &min), ("Avg", &avg), ("Max", &max)] {
                if let Err(printed) = printed {
                    run.bad_figure(i as u32, format!("{name} `{printed}`"));
                }
            }
            let thread = run.thread_mut(i as u32);
            thread.histogram = Some(Histogram {
                buckets,
                overflows: at(&self.overflows).unwrap_or(0),
                overflows_unknown: self.overflows.is_none(),
                limit: full.then(|| self.last_index.map_or(0, |l| l.saturating_add(1))),
                overflow_cycles: listed,
                overflow_cycles_not_listed: not_listed,
            });
            thread.reported_min = min.ok().flatten().or(thread.reported_min);
            thread.reported_avg = avg.ok().flatten().map(|a| a as f64).or(thread.reported_avg);
            thread.reported_max = max.ok().flatten().or(thread.reported_max);
            if let Some(tid) = at(&self.tids) {
                thread.tid = u32::try_from(tid).ok();
            }
        }
        if self.overflows.is_none() {
            run.warn(Some(line), "histogram has no `# Histogram Overflows` line; samples above the histogram are unknown");
        }
        if self.breaktrace.is_some() {
            run.breaktrace = self.breaktrace;
        }
    }

    /// Threads: the `# Min Latencies` count; without it, drop a `-H` sum column when the last
    /// column is the sum of the others.
    fn thread_count(&self, columns: &[BTreeMap<u64, u64>]) -> usize {
        if let Some(min) = &self.min {
            return min.len();
        }
        let n = columns.len();
        // A sum column holds every other column's samples: compared by totals first, so
        // a wide histogram without one is not summed bucket by bucket.
        let total = |c: &BTreeMap<u64, u64>| c.values().fold(0u64, |a, b| a.saturating_add(*b));
        let others = || columns[..n - 1].iter().fold(0u64, |a, c| a.saturating_add(total(c)));
        if n > 2 && total(&columns[n - 1]) == others() {
            let last = &columns[n - 1];
            let summed = columns[..n - 1].iter().fold(BTreeMap::new(), |mut acc, c| {
                for (k, v) in c {
                    let slot = acc.entry(*k).or_insert(0u64);
                    *slot = slot.saturating_add(*v);
                }
                acc
            });
            if &summed == last {
                return n - 1;
            }
        }
        n
    }
}
