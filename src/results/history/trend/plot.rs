//! Drawing the trend page: each series' points, axes and table rows, thinned to what the plot
//! can show while every regression and invalid run stays visible.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::{Cell, when};
use crate::formats::history_json::HistoryRun;
use crate::results::history::compare::short;
use crate::results::history::regression::number;
use crate::text::iso_from_epoch;

/// The plot area inside the SVG, px.
pub(super) const WIDTH: f64 = 1100.0;
pub(super) const HEIGHT: f64 = 300.0;
pub(super) const LEFT: f64 = 60.0;
pub(super) const TOP: f64 = 16.0;

/// A series with more runs than this is thinned to this many time slices (one slice is about
/// 4 px of the plot): each slice draws its worst valid run, its worst regression and its first
/// invalid run, so a slice that holds a regression or an invalid run always shows one, however
/// many runs it holds (a noisy lab can flag most runs).
pub(super) const MAX_POINTS: usize = 250;
/// A thinned series' table lists the newest runs ([`NEWEST_LISTED`]) and at most this many of
/// the newest drawn regressions and invalid runs; the rest are points without a row.
pub(super) const FLAGGED_LISTED: usize = 40;
/// A thinned series' table lists this many newest runs.
pub(super) const NEWEST_LISTED: usize = 10;

#[derive(Debug, Serialize)]
pub(super) struct Page {
    pub(super) runs: usize,
    pub(super) series: Vec<Series>,
    pub(super) version: &'static str,
    pub(super) width: f64,
    pub(super) height: f64,
    pub(super) left: f64,
    pub(super) top: f64,
    pub(super) svg_width: f64,
    pub(super) svg_height: f64,
}

#[derive(Debug, Serialize)]
pub(super) struct Series {
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
pub(super) struct Point {
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
pub(super) struct Tick {
    at: f64,
    label: String,
    /// SVG `text-anchor`: the first and last date stay inside the chart.
    anchor: &'static str,
}

pub(super) type Key = (String, String, String);

/// Which of a series' runs (oldest first) are drawn, and for each drawn run how many more
/// regressions and invalid runs of its time slice it stands for: all runs when there are at
/// most [`MAX_POINTS`]; else, in each of [`MAX_POINTS`] time slices, the worst valid run, the
/// worst regression and the first invalid run, and the newest [`NEWEST_LISTED`] runs.
pub(super) fn drawn(
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

pub(super) fn series(
    at: usize,
    key: &Key,
    mut members: Vec<(&HistoryRun, &Cell)>,
) -> Option<Series> {
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
                verdict: run.verdict.to_string(),
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

pub(super) fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}
