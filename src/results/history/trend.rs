//! `history report --html`: the long-term trend page. Per machine, scenario and test, the
//! worst max and p99.9 over the run's CPUs against time (log y axis), the threshold as a line,
//! each point a link to its run's build identity in the table below it, regressions
//! ([`super::regression`]) ringed, invalid runs drawn apart and never joined to the line.
//!
//! Figures and positions are computed here; `templates/history.html.j2` lays them out, with
//! HTML auto-escaping.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use serde::Serialize;

use super::HistoryError;
use super::compare::short;
use super::regression::{self, number};
use super::store::{Filter, RUNS_A_QUERY, Store};
use crate::formats::history_json::{HistoryResult, HistoryRun};
use crate::text::iso_from_epoch;

/// The plot area inside the SVG, px.
const WIDTH: f64 = 1100.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 60.0;
const TOP: f64 = 16.0;

/// A series with more runs than this is thinned to this many time slices (one slice is about
/// 4 px of the plot): each slice draws its worst valid run, its worst regression and its first
/// invalid run, so a slice that holds a regression or an invalid run always shows one, however
/// many runs it holds (a noisy lab can flag most runs).
const MAX_POINTS: usize = 250;
/// A thinned series' table lists the newest runs ([`NEWEST_LISTED`]) and at most this many of
/// the newest drawn regressions and invalid runs; the rest are points without a row.
const FLAGGED_LISTED: usize = 40;
/// A thinned series' table lists this many newest runs.
const NEWEST_LISTED: usize = 10;

#[derive(Debug, Serialize)]
struct Page {
    runs: usize,
    series: Vec<Series>,
    version: &'static str,
    width: f64,
    height: f64,
    left: f64,
    top: f64,
    svg_width: f64,
    svg_height: f64,
}

#[derive(Debug, Serialize)]
struct Series {
    id: String,
    machine: String,
    scenario: String,
    test: String,
    threshold_us: String,
    threshold_y: Option<f64>,
    max_line: String,
    p999_line: String,
    points: Vec<Point>,
    y_ticks: Vec<Tick>,
    x_ticks: Vec<Tick>,
    regressions: usize,
    invalid: usize,
    /// The series' runs, and how many of them are drawn (fewer when thinned).
    total: usize,
    drawn: usize,
    listed: usize,
}

#[derive(Debug, Serialize)]
struct Point {
    anchor: String,
    digest: String,
    date: String,
    x: f64,
    max_y: Option<f64>,
    p999_y: Option<f64>,
    max_us: String,
    p999_us: String,
    valid: bool,
    regression: bool,
    /// Has a row in the table (the point links to it).
    listed: bool,
    /// Regressions and invalid runs of the same time slice that this point stands for (not
    /// drawn on their own when the series is thinned).
    more_regressions: usize,
    more_invalid: usize,
    kernel_release: String,
    lock: String,
    bundle: String,
    config: String,
    verdict: String,
}

#[derive(Debug, Serialize)]
struct Tick {
    at: f64,
    label: String,
    /// SVG `text-anchor`: the first and last date stay inside the chart.
    anchor: &'static str,
}

type Key = (String, String, String);

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
                verdict: run.verdict.clone(),
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

/// Which of a series' runs (oldest first) are drawn, and for each drawn run how many more
/// regressions and invalid runs of its time slice it stands for: all runs when there are at
/// most [`MAX_POINTS`]; else, in each of [`MAX_POINTS`] time slices, the worst valid run, the
/// worst regression and the first invalid run, and the newest [`NEWEST_LISTED`] runs.
fn drawn(
    list: &[&HistoryRun],
    figures: &[(Option<f64>, Option<f64>)],
    regression: &[bool],
) -> Vec<Option<(usize, usize)>> {
    if list.len() <= MAX_POINTS {
        return vec![Some((0, 0)); list.len()];
    }
    let (first, last) = (when(list[0]), when(list[list.len() - 1]));
    let span = (last - first).max(1) as f64;
    let slice_of = |run: &HistoryRun| {
        (((when(run) - first) as f64 / span * MAX_POINTS as f64) as usize).min(MAX_POINTS - 1)
    };
    // An unknown figure is the worst: it must not hide behind a known one.
    let figure = |at: usize| figures[at].0.or(figures[at].1).unwrap_or(f64::INFINITY);
    let worse = |a: usize, b: usize| figure(a) > figure(b);
    #[derive(Default)]
    struct Slice {
        worst: Option<usize>,
        worst_regression: Option<usize>,
        first_invalid: Option<usize>,
        regressions: Vec<usize>,
        invalid: Vec<usize>,
    }
    let mut slices: BTreeMap<usize, Slice> = BTreeMap::new();
    for (at, run) in list.iter().enumerate() {
        let slice = slices.entry(slice_of(run)).or_default();
        if !run.valid {
            slice.invalid.push(at);
            slice.first_invalid.get_or_insert(at);
            continue;
        }
        if slice.worst.is_none_or(|w| worse(at, w)) {
            slice.worst = Some(at);
        }
        if regression[at] {
            slice.regressions.push(at);
            if slice.worst_regression.is_none_or(|w| worse(at, w)) {
                slice.worst_regression = Some(at);
            }
        }
    }
    let mut keep: Vec<Option<(usize, usize)>> = vec![None; list.len()];
    for slice in slices.values() {
        for at in [slice.worst, slice.worst_regression, slice.first_invalid].into_iter().flatten() {
            keep[at] = Some((0, 0));
        }
    }
    for entry in &mut keep[list.len() - NEWEST_LISTED..] {
        entry.get_or_insert((0, 0));
    }
    // The slice's regressions and invalid runs not drawn are counted on the ones that stand for
    // them.
    for slice in slices.values() {
        let hidden = |of: &[usize]| of.iter().filter(|at| keep[**at].is_none()).count();
        let (regressions, invalid) = (hidden(&slice.regressions), hidden(&slice.invalid));
        if let Some(entry) = slice.worst_regression.and_then(|at| keep[at].as_mut()) {
            entry.0 = regressions;
        }
        if let Some(entry) = slice.first_invalid.and_then(|at| keep[at].as_mut()) {
            entry.1 = invalid;
        }
    }
    keep
}

fn series(at: usize, key: &Key, mut members: Vec<(&HistoryRun, &Cell)>) -> Option<Series> {
    members.sort_by(|(a, _), (b, _)| (when(a), &a.digest).cmp(&(when(b), &b.digest)));
    let list: Vec<&HistoryRun> = members.iter().map(|(run, _)| *run).collect();
    let figures: Vec<(Option<f64>, Option<f64>)> =
        members.iter().map(|(_, cell)| (cell.max_us, cell.p999_us)).collect();
    let threshold = list.last().map(|r| r.threshold_us).filter(|t| *t > 0.0);
    let values: Vec<f64> = figures
        .iter()
        .flat_map(|(a, b)| [*a, *b])
        .flatten()
        .chain(threshold)
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    if values.is_empty() {
        return None;
    }
    // Log y from the decade below the lowest figure to the decade above the highest, within
    // 1 ns to 10^4 s (a stored figure may be anything, even `inf`: it is drawn at the edge,
    // and the axis never has more than a few dozen ticks).
    let low = values.iter().copied().fold(f64::INFINITY, f64::min).log10().floor().clamp(-3.0, 9.0);
    let high = values
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max)
        .log10()
        .ceil()
        .clamp(low + 1.0, 10.0);
    let y = |v: f64| -> Option<f64> {
        (v > 0.0).then(|| {
            (TOP + HEIGHT - (v.log10() - low) / (high - low) * HEIGHT).clamp(TOP, TOP + HEIGHT)
        })
    };
    let (first, last) = (when(list[0]), when(list[list.len() - 1]));
    let span = last.saturating_sub(first).max(1) as f64;
    let x = |t: i64| -> f64 {
        if list.len() == 1 {
            LEFT + WIDTH / 2.0
        } else {
            LEFT + t.saturating_sub(first) as f64 / span * WIDTH
        }
    };
    let regressions: Vec<bool> = members.iter().map(|(_, cell)| cell.regression).collect();
    let keep = drawn(&list, &figures, &regressions);
    let thinned = keep.iter().any(Option::is_none);
    let newest_listed = list.len().saturating_sub(NEWEST_LISTED);
    // A thinned series lists its newest runs and the newest drawn regressions and invalid runs.
    let mut flagged_listed: HashSet<usize> = HashSet::new();
    for at in (0..list.len()).rev() {
        if flagged_listed.len() == FLAGGED_LISTED {
            break;
        }
        if keep[at].is_some() && (regressions[at] || !list[at].valid) {
            flagged_listed.insert(at);
        }
    }
    let points: Vec<Point> = list
        .iter()
        .zip(&figures)
        .zip(&regressions)
        .enumerate()
        .filter_map(|(at, item)| keep[at].map(|more| (at, item, more)))
        .map(|(index, ((run, (max, p999)), regression), (more_regressions, more_invalid))| {
            let regression = *regression;
            let listed = !thinned || flagged_listed.contains(&index) || index >= newest_listed;
            Point {
                anchor: format!("s{at}-{}", short(&run.digest)),
                digest: run.digest.clone(),
                date: iso_from_epoch(when(run)),
                x: round(x(when(run))),
                max_y: max.and_then(y).map(round),
                p999_y: p999.and_then(y).map(round),
                max_us: max.map_or_else(|| "-".to_string(), number),
                p999_us: p999.map_or_else(|| "-".to_string(), number),
                valid: run.valid,
                regression,
                listed,
                more_regressions,
                more_invalid,
                kernel_release: run.kernel_release.clone().unwrap_or_else(|| "-".to_string()),
                lock: run.lock_digest.as_deref().map_or("-", short).to_string(),
                bundle: run.bundle_digest.as_deref().map_or("-", short).to_string(),
                config: run.kernel_config_digest.as_deref().map_or("-", short).to_string(),
                verdict: run.verdict.clone(),
            }
        })
        .collect();
    let line = |pick: fn(&Point) -> Option<f64>| -> String {
        points
            .iter()
            .filter(|p| p.valid)
            .filter_map(|p| pick(p).map(|y| format!("{},{}", p.x, y)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let y_ticks = (low as i32..=high as i32)
        .flat_map(|decade| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(decade)))
        .filter(|v| v.log10() <= high + 1e-9)
        .filter_map(|v| y(v).map(|at| Tick { at: round(at), label: number(v), anchor: "end" }))
        .collect();
    // Dates, with the hour when the runs lie within a few days.
    let label = |t: i64| {
        let iso = iso_from_epoch(t);
        if span < 4.0 * 86_400.0 { iso[..16].replace('T', " ") } else { iso[..10].to_string() }
    };
    let x_ticks = if list.len() == 1 {
        vec![Tick { at: round(x(first)), label: label(first), anchor: "middle" }]
    } else {
        let mut ticks: Vec<Tick> = Vec::new();
        for i in 0..=4 {
            let t = first.saturating_add((span / 4.0 * f64::from(i)) as i64);
            let anchor = match i {
                0 => "start",
                4 => "end",
                _ => "middle",
            };
            if ticks.last().is_none_or(|last| last.label != label(t)) {
                ticks.push(Tick { at: round(x(t)), label: label(t), anchor });
            }
        }
        ticks
    };
    Some(Series {
        id: format!("s{at}"),
        machine: key.0.clone(),
        scenario: key.1.clone(),
        test: key.2.clone(),
        threshold_us: threshold.map_or_else(|| "-".to_string(), number),
        threshold_y: threshold.and_then(y).map(round),
        max_line: line(|p| p.max_y),
        p999_line: line(|p| p.p999_y),
        regressions: regressions.iter().filter(|r| **r).count(),
        invalid: list.iter().filter(|r| !r.valid).count(),
        total: list.len(),
        drawn: points.len(),
        listed: points.iter().filter(|p| p.listed).count(),
        points,
        y_ticks,
        x_ticks,
    })
}

fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}
