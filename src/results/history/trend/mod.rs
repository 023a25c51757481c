//! `history report --html`: the long-term trend page. Per machine, scenario and test, the
//! worst max and p99.9 over the run's CPUs against time (log y axis), the threshold as a line,
//! each point a link to its run's build identity in the table below it, regressions
//! ([`super::regression`]) ringed, invalid runs drawn apart and never joined to the line.
//!
//! Figures and positions are computed here; `templates/history.html.j2` lays them out, with
//! HTML auto-escaping.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

mod plot;

use super::HistoryError;
use super::compare::short;
use super::regression;
use super::store::{Filter, RUNS_A_QUERY, Store};
use crate::formats::history_json::{HistoryResult, HistoryRun};
use plot::{HEIGHT, Key, LEFT, Page, TOP, WIDTH, series};

/// One run in one series (its scenario and test): its worst figures, and whether it regressed
/// there.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub scenario: String,
    pub test: String,
    /// The run's worst max and p99.9 over its valid (or, for an invalid run, all) rows of the
    /// series; unknown when a CPU's figure is (a p99.9 among overflowed samples), never the
    /// best of the rest.
    pub max_us: Option<f64>,
    pub p999_us: Option<f64>,
    /// [`regression::check`] finds a regression in the series against the runs of its machine.
    pub regression: bool,
}

/// What the page is drawn from: the runs (without their result rows) and, for each, a cell per
/// series it is in.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trend {
    pub runs: Vec<HistoryRun>,
    pub cells: Vec<Vec<Cell>>,
}

/// The trend of the runs `filter` selects, asked of `store` so that rtbuild never holds a
/// board's years of per-CPU rows: the database counts each run's worst figures per series
/// ([`Store::series_worst`], one row per run and series), and the regression checks read the
/// runs' valid rows [`RUNS_A_QUERY`] runs at a time in the order the checks need them, keeping
/// only each series' newest runs ([`Flags`]).
pub(crate) fn read(store: &mut Store, filter: &Filter, pct: f64) -> Result<Trend, HistoryError> {
    let runs = store.run_headers(filter)?;
    let at: HashMap<&str, usize> =
        runs.iter().enumerate().map(|(at, run)| (run.digest.as_str(), at)).collect();
    let mut cells: Vec<Vec<Cell>> = vec![Vec::new(); runs.len()];
    for chunk in runs.chunks(RUNS_A_QUERY) {
        let digests: Vec<&str> = chunk.iter().map(|run| run.digest.as_str()).collect();
        for worst in store.series_worst(&digests)? {
            if let Some(&at) = at.get(worst.run_digest.as_str()) {
                cells[at].push(Cell {
                    scenario: worst.scenario,
                    test: worst.test,
                    max_us: worst.max_us,
                    p999_us: worst.p999_us,
                    regression: false,
                });
            }
        }
    }
    let mut flags = Flags::new(pct);
    for chunk in Flags::order(&runs).chunks(RUNS_A_QUERY) {
        let digests: Vec<&str> = chunk.iter().map(|&at| runs[at].digest.as_str()).collect();
        let mut rows: HashMap<String, Vec<HistoryResult>> = HashMap::new();
        for (digest, row) in store.valid_figures(&digests)? {
            rows.entry(digest).or_default().push(row);
        }
        for &at in chunk {
            let run = &runs[at];
            // What a check reads of a run.
            flags.feed(HistoryRun {
                digest: run.digest.clone(),
                machine: run.machine.clone(),
                started_unix: run.started_unix,
                threshold_us: run.threshold_us,
                verdict: run.verdict,
                valid: run.valid,
                results: rows.remove(&run.digest).unwrap_or_default(),
                ..HistoryRun::default()
            });
        }
    }
    mark(&runs, &mut cells, &flags.finish());
    Ok(Trend { runs, cells })
}

/// The trend of `runs` at hand, each with its results: figures and regressions counted here row
/// by row (what [`read`] asks the database for).
#[cfg(test)]
pub(crate) fn from_runs(runs: &[HistoryRun], pct: f64) -> Trend {
    let mut flags = Flags::new(pct);
    for at in Flags::order(runs) {
        flags.feed(runs[at].clone());
    }
    let mut cells: Vec<Vec<Cell>> = runs
        .iter()
        .map(|run| {
            let mut pairs: Vec<(&str, &str)> =
                run.results.iter().map(|r| (r.scenario.as_str(), r.test.as_str())).collect();
            pairs.sort_unstable();
            pairs.dedup();
            pairs
                .into_iter()
                .map(|(scenario, test)| Cell {
                    scenario: scenario.to_string(),
                    test: test.to_string(),
                    max_us: worst(run, scenario, test, "max"),
                    p999_us: worst(run, scenario, test, "p99.9"),
                    regression: false,
                })
                .collect()
        })
        .collect();
    mark(runs, &mut cells, &flags.finish());
    let runs = runs.iter().map(|run| HistoryRun { results: Vec::new(), ..run.clone() }).collect();
    Trend { runs, cells }
}

/// The page for `runs` (all runs of the machines shown), each with its results.
#[cfg(test)]
pub(crate) fn render(runs: &[HistoryRun], pct: f64) -> Result<String, minijinja::Error> {
    page(&from_runs(runs, pct))
}

/// The page of `trend`.
pub(crate) fn page(trend: &Trend) -> Result<String, minijinja::Error> {
    type Members<'a> = (Vec<(&'a HistoryRun, &'a Cell)>, HashSet<&'a str>);
    let mut by_series: BTreeMap<Key, Members> = BTreeMap::new();
    for (run, cells) in trend.runs.iter().zip(&trend.cells) {
        // Runs that name no board are one series each: nothing says they share a board.
        let machine = run
            .machine
            .clone()
            .unwrap_or_else(|| format!("{} (run {})", regression::UNNAMED, short(&run.digest)));
        for cell in cells {
            let key = (machine.clone(), cell.scenario.clone(), cell.test.clone());
            let (list, seen) = by_series.entry(key).or_default();
            if seen.insert(run.digest.as_str()) {
                list.push((run, cell));
            }
        }
    }
    let series = by_series
        .into_iter()
        .enumerate()
        .filter_map(|(at, (key, (list, _)))| series(at, &key, list))
        .collect();
    let page = Page {
        runs: trend.runs.len(),
        series,
        version: env!("CARGO_PKG_VERSION"),
        width: WIDTH,
        height: HEIGHT,
        left: LEFT,
        top: TOP,
        svg_width: LEFT + WIDTH + 20.0,
        svg_height: TOP + HEIGHT + 40.0,
    };
    crate::text::templates::render("history.html", &page)
}

/// Sets each cell's regression from `flagged`.
fn mark(
    runs: &[HistoryRun],
    cells: &mut [Vec<Cell>],
    flagged: &HashMap<String, HashSet<(String, String)>>,
) {
    for (run, cells) in runs.iter().zip(cells) {
        if let Some(pairs) = flagged.get(&run.digest) {
            for cell in cells {
                cell.regression = pairs.contains(&(cell.scenario.clone(), cell.test.clone()));
            }
        }
    }
}

/// A run's worst figure over its valid (or, for an invalid run, all) rows of a scenario and
/// test; unknown when a CPU's figure is, never the best of the rest.
#[cfg(test)]
fn worst(run: &HistoryRun, scenario: &str, test: &str, metric: &str) -> Option<f64> {
    let figures: Vec<Option<f64>> = run
        .results
        .iter()
        .filter(|r| r.scenario == scenario && r.test == test && (r.valid || !run.valid))
        .map(|r| super::compare::figure(r, metric))
        .collect();
    if figures.iter().any(Option::is_none) {
        return None;
    }
    figures.into_iter().flatten().reduce(f64::max)
}

fn when(run: &HistoryRun) -> i64 {
    run.started_unix.unwrap_or(run.added_unix)
}

/// Each valid run's regressions as (scenario, test) pairs: what [`regression::check`] finds
/// against every run of its machine. Fed each machine's valid runs in [`Flags::order`], it
/// checks each run against a window of each pair's newest valid runs so far (the only runs
/// `check` takes a baseline from) instead of all of them, and holds only that window, the
/// machine's runs of unknown start and the runs of one start time.
struct Flags {
    pct: f64,
    out: HashMap<String, HashSet<(String, String)>>,
    /// The machine whose runs are being fed.
    machine: Option<String>,
    /// The newest BASELINE_RUNS + 1 valid runs of each pair so far (one more than a baseline
    /// needs: the run checked may be among them).
    window: HashMap<(String, String), Vec<Rc<HistoryRun>>>,
    /// The machine's runs of unknown start: they take their baseline from every run of the
    /// machine, so they are checked at its end.
    undated: Vec<Rc<HistoryRun>>,
    /// Runs of one start time, each a baseline for the others: checked when the next start
    /// time comes.
    group: Vec<Rc<HistoryRun>>,
}

impl Flags {
    fn new(pct: f64) -> Flags {
        Flags {
            pct,
            out: HashMap::new(),
            machine: None,
            window: HashMap::new(),
            undated: Vec::new(),
            group: Vec::new(),
        }
    }

    /// Which of `runs` [`Flags::feed`] takes, in the order it takes them: the valid runs that
    /// name a board, board by board, those of unknown start first, then by start and digest.
    fn order(runs: &[HistoryRun]) -> Vec<usize> {
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

    /// The next run in [`Flags::order`], with (at least) its valid rows.
    fn feed(&mut self, run: HistoryRun) {
        if self.machine != run.machine {
            self.end_machine();
            self.machine = run.machine.clone();
        }
        let run = Rc::new(run);
        if run.started_unix.is_none() {
            self.push(&run);
            self.undated.push(run);
            return;
        }
        if self.group.first().is_some_and(|g| g.started_unix != run.started_unix) {
            self.check_group();
        }
        self.group.push(run);
    }

    /// The regressions found, by run digest.
    fn finish(mut self) -> HashMap<String, HashSet<(String, String)>> {
        self.end_machine();
        self.out
    }

    fn end_machine(&mut self) {
        self.check_group();
        // A run of unknown start takes its baseline from every run of the machine: the window
        // now holds each pair's newest of them all.
        for run in std::mem::take(&mut self.undated) {
            self.check(&run);
        }
        self.window.clear();
    }

    fn check_group(&mut self) {
        let group = std::mem::take(&mut self.group);
        for h in &group {
            self.push(h);
        }
        for run in &group {
            self.check(run);
        }
    }

    fn check(&mut self, run: &HistoryRun) {
        let mut candidates: Vec<&HistoryRun> =
            self.window.values().flatten().map(|h| h.as_ref()).collect();
        candidates.sort_by(|a, b| a.digest.cmp(&b.digest));
        candidates.dedup_by(|a, b| a.digest == b.digest);
        let check = regression::check(run, candidates, self.pct);
        let pairs = check.findings.into_iter().map(|f| (f.scenario, f.test)).collect();
        self.out.insert(run.digest.clone(), pairs);
    }

    fn push(&mut self, h: &Rc<HistoryRun>) {
        let pairs: HashSet<(&str, &str)> = h
            .results
            .iter()
            .filter(|r| r.valid)
            .map(|r| (r.scenario.as_str(), r.test.as_str()))
            .collect();
        for (scenario, test) in pairs {
            let newest = self.window.entry((scenario.to_string(), test.to_string())).or_default();
            newest.push(Rc::clone(h));
            newest.sort_by(|a, b| newest_first(a, b));
            newest.truncate(regression::BASELINE_RUNS + 1);
        }
    }
}

/// Newest first: by start (unknown as 0), then digest, as a baseline is chosen.
fn newest_first(a: &HistoryRun, b: &HistoryRun) -> std::cmp::Ordering {
    (b.started_unix.unwrap_or(0), &b.digest).cmp(&(a.started_unix.unwrap_or(0), &a.digest))
}
