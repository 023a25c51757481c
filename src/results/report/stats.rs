//! Statistics of one thread (or several merged) from what cyclictest wrote: exact figures from a
//! histogram or counted `-v` samples; percentiles that fall among overflowed samples are
//! unknown (`null`, "≥ limit"); the maximum is cyclictest's own figure whenever it gave one.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::results::cyclictest::{Histogram, Thread, Unit};

use crate::formats::report_json::ThreadReport;

/// Merged histograms whose values all lie below this are summed in an array (8 MiB at most).
const DENSE_MERGE: u64 = 1 << 20;

/// Percentiles in parts per million: median, p99, p99.9, p99.99.
const PERCENTILES: [u64; 4] = [500_000, 990_000, 999_000, 999_900];

/// The distribution of one thread or of several merged, in the run's unit.
/// A thread's histogram is borrowed, not copied: a file's histograms may be most of what
/// `report` holds (issue 34 item 11).
#[derive(Debug, Clone, Default)]
pub(super) struct Distribution<'a> {
    pub histogram: Option<Cow<'a, Histogram>>,
    /// `true` when the histogram was counted from `-v` samples.
    pub from_samples: bool,
    pub samples: u64,
    pub min: Option<u64>,
    pub avg: Option<f64>,
    pub max: Option<u64>,
}

impl<'a> Distribution<'a> {
    pub(super) fn of(thread: &'a Thread, from_samples: bool) -> Distribution<'a> {
        let samples = thread.samples();
        let none = samples == 0;
        Distribution {
            histogram: thread
                .histogram
                .as_ref()
                .filter(|h| h.overflows > 0 || h.buckets.values().any(|c| *c > 0))
                .map(Cow::Borrowed),
            from_samples,
            samples,
            min: thread.reported_min.or_else(|| first_bucket(thread)).filter(|_| !none),
            avg: thread.reported_avg.filter(|a| a.is_finite() && !none),
            max: thread.max().filter(|_| !none),
        }
    }

    /// All `parts` together: histograms summed when every part has one, extremes combined.
    pub(super) fn merge(parts: &[Distribution<'_>]) -> Distribution<'static> {
        let parts: Vec<&Distribution> = parts.iter().filter(|p| p.samples > 0).collect();
        let all_have = !parts.is_empty() && parts.iter().all(|p| p.histogram.is_some());
        let histogram = all_have.then(|| {
            let mut merged = Histogram { buckets: BTreeMap::new(), ..Histogram::default() };
            // Summed in an array when the values are small (the usual µs histogram), so many
            // threads' buckets are not each looked up in the merged tree.
            let top = parts
                .iter()
                .filter_map(|p| p.histogram.as_ref()?.buckets.keys().next_back().copied())
                .max()
                .unwrap_or(0);
            let mut dense =
                if top < DENSE_MERGE { vec![0u64; top as usize + 1] } else { Vec::new() };
            for part in parts.iter().filter_map(|p| p.histogram.as_ref()) {
                if dense.is_empty() {
                    for (value, count) in &part.buckets {
                        merged.add(*value, *count);
                    }
                } else {
                    for (value, count) in &part.buckets {
                        let slot = &mut dense[*value as usize];
                        *slot = slot.saturating_add(*count);
                    }
                }
                merged.overflows = merged.overflows.saturating_add(part.overflows);
                merged.overflows_unknown |= part.overflows_unknown;
                let floor = part.overflow_floor();
                if part.overflows > 0 {
                    merged.limit = Some(merged.limit.map_or(floor, |l| l.min(floor)));
                }
            }
            merged.buckets.extend(
                dense.into_iter().enumerate().filter(|(_, c)| *c > 0).map(|(v, c)| (v as u64, c)),
            );
            Cow::Owned(merged)
        });
        let samples = parts.iter().fold(0u64, |a, p| a.saturating_add(p.samples));
        let avg = if samples > 0 && parts.iter().all(|p| p.avg.is_some() || p.samples == 0) {
            let total: f64 = parts.iter().map(|p| p.avg.unwrap_or(0.0) * p.samples as f64).sum();
            Some(total / samples as f64)
        } else {
            None
        };
        let max = if parts.iter().all(|p| p.max.is_some() || p.samples == 0) {
            parts.iter().filter_map(|p| p.max).max()
        } else {
            None
        };
        Distribution {
            histogram,
            from_samples: parts.iter().all(|p| p.from_samples),
            samples,
            min: parts.iter().filter_map(|p| p.min).min(),
            avg,
            max,
        }
    }

    /// The statistics, converted to µs; `threshold_us` counts the samples above it.
    pub(super) fn report(&self, unit: Unit, threshold_us: f64) -> ThreadReport {
        let us = |v: u64| unit.to_us(v as f64);
        let mut report = ThreadReport {
            samples: self.samples,
            source: match (&self.histogram, self.from_samples) {
                (Some(_), true) => "samples",
                (Some(_), false) => "histogram",
                (None, _) => "summary",
            }
            .to_string(),
            min_us: self.min.map(us),
            avg_us: self.avg.map(|a| unit.to_us(a)),
            max_us: self.max.map(us),
            ..ThreadReport::default()
        };
        let threshold = match unit {
            Unit::Us => threshold_us,
            Unit::Ns => threshold_us * 1000.0,
        };
        let Some(h) = &self.histogram else {
            report.over_threshold = self.max.filter(|m| *m as f64 <= threshold).map(|_| 0);
            return report;
        };
        report.overflows = h.overflows;
        let exact = h.overflows == 0 && !h.overflows_unknown;
        let n = h.samples();
        let [median, p99, p999, p9999] = PERCENTILES.map(|ppm| percentile(h, n, ppm).map(us));
        (report.median_us, report.p99_us, report.p999_us, report.p9999_us) =
            (median, p99, p999, p9999);
        if [median, p99, p999, p9999].iter().any(Option::is_none) {
            report.percentiles_at_least_us = Some(us(h.overflow_floor()));
        }
        if exact {
            let (mean, stddev) = mean_stddev(h);
            report.avg_us = Some(unit.to_us(mean));
            report.stddev_us = Some(unit.to_us(stddev));
        }
        let above: u64 = h
            .buckets
            .iter()
            .filter(|(v, _)| **v as f64 > threshold)
            .fold(0u64, |a, (_, c)| a.saturating_add(*c));
        report.over_threshold = if h.overflows_unknown {
            None
        } else if h.overflows == 0 || h.overflow_floor() as f64 > threshold {
            Some(above.saturating_add(h.overflows))
        } else if self.max.is_some_and(|m| m as f64 <= threshold) {
            Some(above)
        } else {
            None
        };
        report.buckets = chart_buckets(h, unit);
        report
    }
}

fn first_bucket(thread: &Thread) -> Option<u64> {
    thread.histogram.as_ref().and_then(|h| h.buckets.keys().next().copied())
}

/// Nearest-rank percentile: the smallest value with at least `ceil(ppm/1e6 · n)` samples at
/// or below it; `None` when that rank lies among the overflowed samples.
fn percentile(h: &Histogram, n: u64, ppm: u64) -> Option<u64> {
    if n == 0 {
        return None;
    }
    let rank = ((u128::from(n) * u128::from(ppm)).div_ceil(1_000_000)).max(1) as u64;
    let mut seen = 0u64;
    for (value, count) in &h.buckets {
        seen = seen.saturating_add(*count);
        if seen >= rank {
            // Merged histograms can hold buckets above another part's limit, among which
            // that part's overflowed samples would sort: such a rank is not known either.
            let among_overflows = h.overflows > 0 && *value >= h.overflow_floor();
            return (!among_overflows).then_some(*value);
        }
    }
    None
}

/// Exact mean and population standard deviation of a histogram without overflows.
fn mean_stddev(h: &Histogram) -> (f64, f64) {
    let n = h.bucketed() as f64;
    if n == 0.0 {
        return (0.0, 0.0);
    }
    let sum: f64 = h.buckets.iter().map(|(v, c)| *v as f64 * *c as f64).sum();
    let mean = sum / n;
    let var: f64 =
        h.buckets.iter().map(|(v, c)| (*v as f64 - mean).powi(2) * *c as f64).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// 1 µs chart bins (nanosecond buckets are folded into whole microseconds).
fn chart_buckets(h: &Histogram, unit: Unit) -> Vec<(f64, u64)> {
    match unit {
        Unit::Us => h.buckets.iter().map(|(v, c)| (*v as f64, *c)).collect(),
        Unit::Ns => {
            let mut bins: BTreeMap<u64, u64> = BTreeMap::new();
            for (v, c) in &h.buckets {
                let slot = bins.entry(v / 1000).or_insert(0);
                *slot = slot.saturating_add(*c);
            }
            bins.into_iter().map(|(v, c)| (v as f64, c)).collect()
        }
    }
}
