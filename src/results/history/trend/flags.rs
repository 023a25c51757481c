//! Which runs regressed in which series, for the trend page: what [`regression::check`] finds of
//! each valid run against every run of its board, asked per series (scenario and test) of the
//! runs' valid figures alone, in one pass over each board's runs that holds only each series'
//! newest runs. The check's findings (texts, baselines, changed inputs) are never built: a
//! series of a run regressed when one of its valid rows' max or p99.9 is
//! [`regression::regressed`] against the median of the same CPU's figures in the series'
//! newest [`BASELINE_RUNS`] earlier valid runs of the board.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::formats::history_json::HistoryRun;
use crate::results::history::regression::{self, BASELINE_RUNS};

/// A valid row of a series as the check reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Figure {
    pub cpu: Option<u32>,
    pub max_us: Option<f64>,
    pub p999_us: Option<f64>,
}

impl Figure {
    /// Max, then p99.9: the metrics a check compares.
    fn metrics(&self) -> [Option<f64>; 2] {
        [self.max_us, self.p999_us]
    }
}

/// A valid run's valid rows, by series (the caller's number for a scenario and test); only the
/// series it has a valid row of.
pub(super) type Valid = Vec<(usize, Vec<Figure>)>;

/// A run fed: where it is in the runs, and its valid rows.
struct Fed {
    at: usize,
    series: Valid,
}

impl Fed {
    fn rows(&self, series: usize) -> &[Figure] {
        self.series.iter().find(|(s, _)| *s == series).map_or(&[], |(_, rows)| rows)
    }
}

/// Fed each board's valid runs in [`order`], it checks each run against a window of each
/// series' newest valid runs so far (the only runs a baseline is taken from) and holds only
/// that window, the board's runs of unknown start and the runs of one start time.
pub(super) struct Flags<'r> {
    runs: &'r [HistoryRun],
    pct: f64,
    /// The (run, series) pairs that regressed.
    out: HashSet<(usize, usize)>,
    /// The board whose runs are being fed.
    machine: Option<&'r str>,
    /// Per series, the newest BASELINE_RUNS + 1 runs so far, newest first (one more than a
    /// baseline needs: the run checked may be among them).
    window: HashMap<usize, Vec<Rc<Fed>>>,
    /// The board's runs of unknown start: every run of the board is their baseline, so they
    /// are checked at its end.
    undated: Vec<Rc<Fed>>,
    /// Runs of one start time, each a baseline for the others: checked when the next start
    /// time comes.
    group: Vec<Rc<Fed>>,
}

/// Which of `runs` [`Flags::feed`] takes, in the order it takes them: the valid runs that name
/// a board, board by board, those of unknown start first, then by start and digest.
pub(super) fn order(runs: &[HistoryRun]) -> Vec<usize> {
    let mut order: Vec<usize> =
        (0..runs.len()).filter(|&at| runs[at].valid && runs[at].machine.is_some()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&runs[a], &runs[b]);
        (&a.machine, a.started_unix.is_some(), a.started_unix, &a.digest).cmp(&(
            &b.machine,
            b.started_unix.is_some(),
            b.started_unix,
            &b.digest,
        ))
    });
    order
}

impl<'r> Flags<'r> {
    pub(super) fn new(runs: &'r [HistoryRun], pct: f64) -> Flags<'r> {
        Flags {
            runs,
            pct,
            out: HashSet::new(),
            machine: None,
            window: HashMap::new(),
            undated: Vec::new(),
            group: Vec::new(),
        }
    }

    /// The run at `at`, the next in [`order`], with its valid rows.
    pub(super) fn feed(&mut self, at: usize, series: Valid) {
        let run = &self.runs[at];
        if self.machine != run.machine.as_deref() {
            self.end_machine();
            self.machine = run.machine.as_deref();
        }
        let fed = Rc::new(Fed { at, series });
        if run.started_unix.is_none() {
            self.push(&fed);
            self.undated.push(fed);
            return;
        }
        let started = |f: &Fed| self.runs[f.at].started_unix;
        if self.group.first().is_some_and(|g| started(g) != run.started_unix) {
            self.check_group();
        }
        self.group.push(fed);
    }

    /// The (run, series) pairs that regressed.
    pub(super) fn finish(mut self) -> HashSet<(usize, usize)> {
        self.end_machine();
        self.out
    }

    fn end_machine(&mut self) {
        self.check_group();
        // The window now holds each series' newest runs of the whole board.
        for fed in std::mem::take(&mut self.undated) {
            self.check(&fed);
        }
        self.window.clear();
    }

    fn check_group(&mut self) {
        let group = std::mem::take(&mut self.group);
        for fed in &group {
            self.push(fed);
        }
        for fed in &group {
            self.check(fed);
        }
    }

    fn check(&mut self, fed: &Fed) {
        let run = &self.runs[fed.at];
        for (series, rows) in &fed.series {
            let Some(window) = self.window.get(series) else { continue };
            let baseline: Vec<&Fed> = window
                .iter()
                .filter(|h| self.runs[h.at].digest != run.digest)
                .take(BASELINE_RUNS)
                .map(Rc::as_ref)
                .collect();
            let regressed = rows.iter().any(|row| {
                (0..2).any(|metric| {
                    let Some(current) = row.metrics()[metric] else { return false };
                    let mut values: Vec<f64> = baseline
                        .iter()
                        .flat_map(|h| h.rows(*series))
                        .filter(|r| r.cpu == row.cpu)
                        .filter_map(|r| r.metrics()[metric])
                        .collect();
                    regression::median(&mut values).is_some_and(|baseline| {
                        regression::regressed(current, baseline, self.pct, run.threshold_us)
                    })
                })
            });
            if regressed {
                self.out.insert((fed.at, *series));
            }
        }
    }

    fn push(&mut self, fed: &Rc<Fed>) {
        let runs = self.runs;
        // Newest first: by start (unknown as 0), then digest, as a baseline is chosen.
        let key = |f: &Fed| (runs[f.at].started_unix.unwrap_or(0), &runs[f.at].digest);
        for (series, _) in &fed.series {
            let newest = self.window.entry(*series).or_default();
            let at = newest.partition_point(|h| key(h) > key(fed));
            newest.insert(at, Rc::clone(fed));
            newest.truncate(BASELINE_RUNS + 1);
        }
    }
}
