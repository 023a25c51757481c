//! `history report --html`: the long-term trend page. Per machine, scenario and test, the
//! worst max and p99.9 over the run's CPUs against time (log y axis), the threshold as a line,
//! each point a link to its run's build identity in the table below it, regressions
//! ([`super::regression`]) ringed, invalid runs drawn apart and never joined to the line.
//!
//! Figures and positions are computed here; `templates/history.html.j2` lays them out, with
//! HTML auto-escaping.

use std::collections::{BTreeMap, HashMap, HashSet};

mod flags;
mod plot;

use super::HistoryError;
use super::compare::short;
use super::regression;
use super::store::{Filter, RUNS_A_QUERY, SeriesRow, Store};
use crate::formats::history_json::HistoryRun;
use flags::{Figure, Flags, Valid};
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
/// board's years of per-CPU rows: each run's rows are read once, [`RUNS_A_QUERY`] runs a query
/// in the order the regression flags need them ([`flags::order`], then the runs no check
/// reads), and only each run's worst figures per series and, while the flags need them, its
/// valid CPUs' max and p99.9 are kept.
pub(crate) fn read(store: &mut Store, filter: &Filter, pct: f64) -> Result<Trend, HistoryError> {
    let runs = store.run_headers(filter)?;
    let checked = flags::order(&runs);
    let mut fed = vec![false; runs.len()];
    for &at in &checked {
        fed[at] = true;
    }
    let sequence: Vec<usize> =
        checked.iter().copied().chain((0..runs.len()).filter(|&at| !fed[at])).collect();
    let mut cells: Vec<Vec<Cell>> = vec![Vec::new(); runs.len()];
    let mut names = Names::default();
    let mut flags = Flags::new(&runs, pct);
    for chunk in sequence.chunks(RUNS_A_QUERY) {
        let digests: Vec<&str> = chunk.iter().map(|&at| runs[at].digest.as_str()).collect();
        let rows = store.series_rows(&digests)?;
        let mut of_run: HashMap<&str, Vec<&SeriesRow>> = HashMap::new();
        for row in &rows {
            of_run.entry(row.run_digest.as_str()).or_default().push(row);
        }
        for &at in chunk {
            let run = &runs[at];
            let rows = of_run.remove(run.digest.as_str()).unwrap_or_default();
            let (run_cells, valid) = summary(run, &rows, &mut names);
            cells[at] = run_cells;
            if fed[at] {
                flags.feed(at, valid);
            }
        }
    }
    mark(&mut cells, &flags.finish(), &names);
    Ok(Trend { runs, cells })
}

/// The trend of `runs` at hand, each with its results (what [`read`] asks the database for).
#[cfg(test)]
pub(crate) fn from_runs(runs: &[HistoryRun], pct: f64) -> Trend {
    let mut names = Names::default();
    let mut summaries: Vec<(Vec<Cell>, Valid)> = runs
        .iter()
        .map(|run| {
            let rows: Vec<SeriesRow> = run
                .results
                .iter()
                .map(|r| SeriesRow {
                    run_digest: run.digest.clone(),
                    scenario: r.scenario.clone(),
                    test: r.test.clone(),
                    cpu: r.cpu,
                    max_us: r.max_us,
                    p999_us: r.p999_us,
                    valid: r.valid,
                })
                .collect();
            summary(run, &rows.iter().collect::<Vec<_>>(), &mut names)
        })
        .collect();
    let mut flags = Flags::new(runs, pct);
    for at in flags::order(runs) {
        flags.feed(at, std::mem::take(&mut summaries[at].1));
    }
    let mut cells: Vec<Vec<Cell>> = summaries.into_iter().map(|(cells, _)| cells).collect();
    mark(&mut cells, &flags.finish(), &names);
    let runs = runs.iter().map(|run| HistoryRun { results: Vec::new(), ..run.clone() }).collect();
    Trend { runs, cells }
}

/// The page for `runs` (all runs of the machines shown), each with its results.
#[cfg(test)]
pub(crate) fn render(runs: &[HistoryRun], pct: f64) -> Result<String, minijinja::Error> {
    page(&from_runs(runs, pct))
}

/// The series (scenario and test) seen so far, each numbered once.
#[derive(Default)]
struct Names {
    names: Vec<(String, String)>,
}

impl Names {
    fn number(&mut self, scenario: &str, test: &str) -> usize {
        match self.names.iter().position(|(s, t)| s == scenario && t == test) {
            Some(at) => at,
            None => {
                self.names.push((scenario.to_string(), test.to_string()));
                self.names.len() - 1
            }
        }
    }
}

/// A run's worst figure in a series so far.
#[derive(Default, Clone, Copy)]
struct Worst {
    worst: Option<f64>,
    /// A counted row's figure is unknown: so is the run's.
    unknown: bool,
}

impl Worst {
    fn add(&mut self, figure: Option<f64>) {
        match figure {
            Some(value) => self.worst = Some(self.worst.map_or(value, |w| w.max(value))),
            None => self.unknown = true,
        }
    }

    fn get(self) -> Option<f64> {
        self.worst.filter(|_| !self.unknown)
    }
}

/// `run`'s cells (one per series it has a row of: its worst max and p99.9 over its valid rows
/// of the series, or all of them for an invalid run; unknown when one of those rows' figure is
/// or there is none) and, for a valid run, its valid rows by series.
fn summary(run: &HistoryRun, rows: &[&SeriesRow], names: &mut Names) -> (Vec<Cell>, Valid) {
    let mut series: Vec<(usize, Worst, Worst, Vec<Figure>)> = Vec::new();
    for row in rows {
        let number = names.number(&row.scenario, &row.test);
        let at = match series.iter().position(|s| s.0 == number) {
            Some(at) => at,
            None => {
                series.push((number, Worst::default(), Worst::default(), Vec::new()));
                series.len() - 1
            }
        };
        let (_, max, p999, figures) = &mut series[at];
        if row.valid || !run.valid {
            max.add(row.max_us);
            p999.add(row.p999_us);
        }
        if row.valid && run.valid {
            figures.push(Figure { cpu: row.cpu, max_us: row.max_us, p999_us: row.p999_us });
        }
    }
    let cells = series
        .iter()
        .map(|(number, max, p999, _)| Cell {
            scenario: names.names[*number].0.clone(),
            test: names.names[*number].1.clone(),
            max_us: max.get(),
            p999_us: p999.get(),
            regression: false,
        })
        .collect();
    let valid = series
        .into_iter()
        .filter(|s| !s.3.is_empty())
        .map(|(number, _, _, figures)| (number, figures))
        .collect();
    (cells, valid)
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

/// Sets each cell's regression from `flagged` (run and series number, [`Names`]).
fn mark(cells: &mut [Vec<Cell>], flagged: &HashSet<(usize, usize)>, names: &Names) {
    for &(at, number) in flagged {
        let (scenario, test) = &names.names[number];
        for cell in &mut cells[at] {
            if &cell.scenario == scenario && &cell.test == test {
                cell.regression = true;
            }
        }
    }
}

fn when(run: &HistoryRun) -> i64 {
    run.started_unix.unwrap_or(run.added_unix)
}

#[cfg(test)]
mod tests;
