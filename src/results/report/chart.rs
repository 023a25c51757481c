//! Latency histograms as inline SVG (plotters, SVG backend only), drawn the way OSADL plots
//! them: latency on a linear x axis, sample count on a logarithmic y axis (so single rare
//! spikes stay visible), one stepped curve per thread/CPU, and the threshold as a red line.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::judge::fmt;
use crate::formats::report_json::ThreadReport;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
];

/// The widest x axis drawn, in µs (about 31 years). plotters never returns from an axis whose
/// end is infinite, and `(top * 1.05).ceil()` of a finite 1.72e308 is; values beyond the limit
/// are clipped at the edge instead, so the chart ends on any input.
const AXIS_LIMIT_US: f64 = 1e15;

/// The chart for one scenario's threads, or `None` when no thread has a histogram. The x axis
/// ends just past the highest latency with samples (or the threshold, or the histogram limit
/// when samples overflowed it, marked as a dashed line); when that is far beyond where most
/// samples lie, the x axis is logarithmic so the bulk and the tail both stay readable.
pub(crate) fn latency_svg(threads: &[ThreadReport], threshold_us: f64) -> Option<String> {
    let series: Vec<(String, &ThreadReport)> =
        series_labels(threads).into_iter().zip(threads).collect();
    chart_svg(&series, threshold_us)
}

/// One curve of an overlay chart: a scenario's thread on one CPU.
pub(crate) struct Series<'a> {
    pub name: String,
    pub thread: &'a ThreadReport,
}

/// The chart of one CPU across scenarios (one curve per scenario, named after it).
pub(crate) fn overlay_svg(series: &[Series<'_>], threshold_us: f64) -> Option<String> {
    let labelled: Vec<(String, &ThreadReport)> = series
        .iter()
        .map(|s| {
            let max = s.thread.max_us.map_or_else(|| "?".to_string(), fmt);
            (format!("{}: max {max} µs", s.name), s.thread)
        })
        .collect();
    chart_svg(&labelled, threshold_us)
}

fn chart_svg(series: &[(String, &ThreadReport)], threshold_us: f64) -> Option<String> {
    let drawn: Vec<(String, &ThreadReport)> =
        series.iter().filter(|(_, t)| !t.buckets.is_empty()).cloned().collect();
    if drawn.is_empty() {
        return None;
    }
    let on_axis = |v: f64| if v.is_nan() { 0.0 } else { v.clamp(0.0, AXIS_LIMIT_US) };
    let threads: Vec<&ThreadReport> = drawn.iter().map(|(_, t)| *t).collect();
    let filled = || threads.iter().flat_map(|t| t.buckets.iter().filter(|b| b.1 > 0));
    let top = filled().map(|b| on_axis(b.0)).fold(0.0, f64::max);
    let threshold_us = on_axis(threshold_us);
    let overflow = overflow_mark(&threads).map(|(limit, n)| (on_axis(limit), n));
    let right = top.max(threshold_us).max(overflow.map_or(0.0, |o| o.0));
    let x_max = (right * 1.05 + 1.0).ceil();
    let median = weighted_median(filled().map(|b| (on_axis(b.0), b.1)));
    let log_x = x_max > 100.0 * median.max(1.0);
    let y_max = filled().map(|b| b.1).max().unwrap_or(1) as f64 * 2.0;
    let mut svg = String::new();
    let plot = Plot { threshold_us, x_max, y_max: y_max.max(10.0), log_x, overflow };
    let result = draw(&mut svg, &drawn, &plot);
    Some(match result {
        Ok(()) => svg,
        Err(message) => format!(
            "<p class=\"warn\">chart could not be drawn: {}</p>",
            quick_xml::escape::escape(message.as_str())
        ),
    })
}

struct Plot {
    threshold_us: f64,
    x_max: f64,
    y_max: f64,
    log_x: bool,
    /// The lowest histogram limit that samples overflowed, and how many did.
    overflow: Option<(f64, u64)>,
}

/// Where the histogram stopped counting, when samples overflowed it.
fn overflow_mark(threads: &[&ThreadReport]) -> Option<(f64, u64)> {
    let over: Vec<&&ThreadReport> = threads.iter().filter(|t| t.overflows > 0).collect();
    let total = over.iter().fold(0u64, |a, t| a.saturating_add(t.overflows));
    let limit = over.iter().filter_map(|t| t.percentiles_at_least_us).fold(f64::INFINITY, f64::min);
    (total > 0 && limit.is_finite()).then_some((limit, total))
}

fn weighted_median(buckets: impl Iterator<Item = (f64, u64)> + Clone) -> f64 {
    let total: u64 = buckets.clone().fold(0u64, |a, b| a.saturating_add(b.1));
    let mut sorted: Vec<(f64, u64)> = buckets.collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut seen = 0u64;
    for (value, count) in sorted {
        seen = seen.saturating_add(count);
        if seen.saturating_mul(2) >= total {
            return value;
        }
    }
    0.0
}

/// The lowest x a logarithmic axis shows; steps below it are drawn at it.
const LOG_X_FLOOR: f64 = 0.5;

fn draw(svg: &mut String, threads: &[(String, &ThreadReport)], plot: &Plot) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let root = SVGBackend::with_string(svg, (860, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder.margin(12).x_label_area_size(40).y_label_area_size(64);
    let y_range = (0.8f64..plot.y_max).log_scale();
    // The same drawing on a linear or a logarithmic x axis (two coordinate types).
    macro_rules! chart_on {
        ($chart:ident, $x_floor:expr, $x_desc:expr) => {{
            let x_floor: f64 = $x_floor;
            let fit = |points: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
                points.into_iter().map(|(x, y)| (x.max(x_floor), y)).collect()
            };
            $chart
                .configure_mesh()
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| format!("{v:.0}"))
                .x_desc($x_desc)
                .y_desc("Number of samples")
                .draw()
                .map_err(|e| err(&e))?;
            for (i, (label, thread)) in threads.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                // One outline per run of filled bins: empty bins draw nothing (no line along
                // the floor that would read as data).
                let mut segments = steps(&thread.buckets).into_iter();
                let first = segments.next().unwrap_or_default();
                $chart
                    .draw_series(LineSeries::new(fit(first), color.stroke_width(1)))
                    .map_err(|e| err(&e))?
                    .label(label.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                    });
                for segment in segments {
                    $chart
                        .draw_series(LineSeries::new(fit(segment), color.stroke_width(1)))
                        .map_err(|e| err(&e))?;
                }
            }
            let threshold = plot.threshold_us.max(x_floor);
            $chart
                .draw_series(LineSeries::new(
                    vec![(threshold, 0.8), (threshold, plot.y_max)],
                    RED.stroke_width(2),
                ))
                .map_err(|e| err(&e))?
                .label(format!("threshold {} µs", fmt(plot.threshold_us)))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED.stroke_width(2)));
            if let Some((limit, count)) = plot.overflow {
                let limit_x = limit.max(x_floor);
                let dashes: Vec<(f64, f64)> = dash_points(plot.y_max);
                for pair in dashes.chunks(2) {
                    $chart
                        .draw_series(LineSeries::new(
                            pair.iter().map(|(_, y)| (limit_x, *y)).collect::<Vec<_>>(),
                            BLACK.stroke_width(2),
                        ))
                        .map_err(|e| err(&e))?;
                }
                // Below the legend (upper right), beside the line on the side with room: to
                // its right when the line is in the left part of the chart, else to its left.
                let along = if plot.log_x {
                    (limit_x / x_floor).ln() / (plot.x_max / x_floor).ln()
                } else {
                    limit_x / plot.x_max
                };
                let label = format!(
                    "{} ≥ {} µs (overflow)",
                    crate::text::counted(count, "sample"),
                    fmt(limit)
                );
                let (text, anchor) = if along < 0.6 {
                    (format!("  {label}"), HPos::Left)
                } else {
                    (format!("{label}  "), HPos::Right)
                };
                let font = ("sans-serif", 13)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(anchor, VPos::Center));
                $chart
                    .draw_series(std::iter::once(Text::new(
                        text,
                        (limit_x, (plot.y_max / 0.8).powf(0.45) * 0.8),
                        font,
                    )))
                    .map_err(|e| err(&e))?;
            }
            $chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| err(&e))?;
        }};
    }
    if plot.log_x {
        let mut chart = builder
            .build_cartesian_2d((LOG_X_FLOOR..plot.x_max.max(1.0)).log_scale(), y_range)
            .map_err(|e| err(&e))?;
        chart_on!(chart, LOG_X_FLOOR, "Latency (µs, logarithmic)");
    } else {
        let mut chart =
            builder.build_cartesian_2d(0f64..plot.x_max, y_range).map_err(|e| err(&e))?;
        chart_on!(chart, f64::NEG_INFINITY, "Latency (µs)");
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Short vertical dash segments (pairs of points) from the floor to `y_max`, evenly on a log
/// y axis.
fn dash_points(y_max: f64) -> Vec<(f64, f64)> {
    let (lo, hi) = (0.8f64.ln(), y_max.ln());
    let n = 12;
    (0..n)
        .flat_map(|i| {
            let a = lo + (hi - lo) * (2 * i) as f64 / (2 * n) as f64;
            let b = lo + (hi - lo) * (2 * i + 1) as f64 / (2 * n) as f64;
            [(0.0, a.exp()), (0.0, b.exp())]
        })
        .collect()
}

/// Each thread's legend entry: its CPU, or, when two threads share a CPU (unpinned threads,
/// `-t 8` on one CPU), its thread number (and file, when the threads come from several) too,
/// so no two entries read alike.
fn series_labels(threads: &[ThreadReport]) -> Vec<String> {
    let plain: Vec<String> = threads
        .iter()
        .map(|t| match (t.cpu, t.thread) {
            (Some(cpu), _) => format!("CPU{cpu}"),
            (None, Some(t)) => format!("thread {t}"),
            _ => "all".to_string(),
        })
        .collect();
    let repeated =
        |labels: &[String]| labels.iter().enumerate().any(|(i, l)| labels[..i].contains(l));
    if !repeated(&plain) {
        return plain.into_iter().zip(threads).map(|(l, t)| with_max(l, t)).collect();
    }
    let files: std::collections::BTreeSet<&str> =
        threads.iter().filter_map(|t| t.file.as_deref()).collect();
    let mut labels: Vec<String> = threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let file = match &t.file {
                Some(f) if files.len() > 1 => format!("{f}:"),
                _ => String::new(),
            };
            let who =
                t.thread.map_or_else(|| format!("#{}", i + 1), |n| format!("thread {file}{n}"));
            match t.cpu {
                Some(cpu) => format!("{who} on CPU{cpu}"),
                None => who,
            }
        })
        .collect();
    if repeated(&labels) {
        // Thread numbers repeat too: number the entries in order.
        labels = labels.into_iter().enumerate().map(|(i, l)| format!("#{} {l}", i + 1)).collect();
    }
    labels.into_iter().zip(threads).map(|(l, t)| with_max(l, t)).collect()
}

/// `label` with the thread's maximum (and its overflows, when the histogram lost samples).
fn with_max(label: String, thread: &ThreadReport) -> String {
    let max = thread.max_us.map_or_else(|| "?".to_string(), fmt);
    if thread.overflows > 0 {
        let floor = thread.percentiles_at_least_us.map_or_else(String::new, fmt);
        let overflows = crate::text::counted(thread.overflows, "sample");
        format!("{label}: max {max} µs, {overflows} ≥ {floor} µs")
    } else {
        format!("{label}: max {max} µs")
    }
}

/// Stepped outlines of 1 µs bins (gnuplot `histeps`), one per run of adjacent non-empty
/// bins, each rising from and falling back to the floor; empty bins and gaps draw nothing.
fn steps(buckets: &[(f64, u64)]) -> Vec<Vec<(f64, f64)>> {
    const FLOOR: f64 = 0.8;
    let mut segments: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut previous: Option<f64> = None;
    for (value, count) in buckets.iter().filter(|b| b.1 > 0) {
        let value = if value.is_nan() { 0.0 } else { value.clamp(0.0, AXIS_LIMIT_US) };
        let (left, right, y) = (value - 0.5, value + 0.5, *count as f64);
        let adjacent = previous.is_some_and(|p| (p - left).abs() <= 1e-9);
        if !adjacent {
            if let Some(segment) = segments.last_mut() {
                segment.push((previous.unwrap_or(left), FLOOR));
            }
            segments.push(vec![(left, FLOOR)]);
        }
        if let Some(segment) = segments.last_mut() {
            segment.push((left, y));
            segment.push((right, y));
        }
        previous = Some(right);
    }
    if let (Some(segment), Some(p)) = (segments.last_mut(), previous) {
        segment.push((p, FLOOR));
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `latency_svg` on another thread and fails if it has not returned within 20 s.
    fn svg_within_bound(buckets: Vec<(f64, u64)>, threshold_us: f64) -> String {
        let thread = ThreadReport { buckets, ..ThreadReport::default() };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(latency_svg(&[thread], threshold_us));
        });
        let svg = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("chart hung on threshold {threshold_us}"));
        svg.expect("a thread with buckets is drawn")
    }

    /// Issue 14: a `-h 200000` histogram has empty buckets up to its limit; the x axis ends
    /// at the data (here the 100 µs threshold), not at 200000.
    #[test]
    fn the_x_axis_fits_the_data_not_the_empty_histogram_range() {
        let mut buckets: Vec<(f64, u64)> = (0..200_000).map(|v| (f64::from(v), 0)).collect();
        buckets[5].1 = 900;
        buckets[12].1 = 40;
        let svg = svg_within_bound(buckets, 100.0);
        let labels: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(labels.contains(&"100"), "an x label at the threshold");
        assert!(!labels.contains(&"200000") && !labels.contains(&"150000"), "axis not stretched");
        assert!(labels.contains(&"Latency (µs)") && !svg.contains("logarithmic"));
    }

    /// A wide range (bulk at 5-30 µs, one sample at 3992 µs) gets a logarithmic x axis, and
    /// samples above the histogram are marked.
    #[test]
    fn a_wide_range_uses_a_log_x_axis_and_marks_the_overflow() {
        let mut buckets: Vec<(f64, u64)> = (5..30).map(|v| (f64::from(v), 100)).collect();
        buckets.push((3992.0, 1));
        let thread = ThreadReport {
            buckets,
            overflows: 7,
            percentiles_at_least_us: Some(4000.0),
            max_us: Some(5210.0),
            ..ThreadReport::default()
        };
        let svg = latency_svg(&[thread], 100.0).unwrap();
        assert!(svg.contains("Latency (µs, logarithmic)"), "{svg}");
        // The line is at the right edge: the label ends at it, inside the chart, and sits
        // below the legend (which is drawn in the upper right).
        let label = svg.lines().position(|l| l.contains("7 samples ≥ 4000 µs (overflow)"));
        let tag = &svg.lines().nth(label.expect("overflow label") - 1).unwrap_or_default();
        assert!(tag.contains("text-anchor=\"end\""), "{tag}");
    }

    /// Empty bins are not data: they draw no line, and runs of filled bins are separate
    /// outlines rising from the floor.
    #[test]
    fn empty_bins_draw_nothing() {
        let segments = steps(&[(1.0, 5), (2.0, 0), (3.0, 0), (10.0, 2), (11.0, 3)]);
        assert_eq!(
            segments,
            [
                vec![(0.5, 0.8), (0.5, 5.0), (1.5, 5.0), (1.5, 0.8)],
                vec![(9.5, 0.8), (9.5, 2.0), (10.5, 2.0), (10.5, 3.0), (11.5, 3.0), (11.5, 0.8)],
            ]
        );
        assert!(steps(&[(4.0, 0)]).is_empty());
    }

    /// Issue 13 item 4: `report h2-idle.txt --threshold-us 1.72e308 --html x.html` never ended.
    #[test]
    fn extreme_values_still_give_a_chart() {
        for threshold in [1.72e308, f64::MAX, f64::INFINITY, f64::NAN, -5.0, 0.0, 1e20] {
            let svg = svg_within_bound(vec![(3.0, 10), (4.0, 2)], threshold);
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"), "{threshold}: {svg}");
        }
        for value in [1.8e19, f64::INFINITY, f64::NAN, -1.0] {
            let svg = svg_within_bound(vec![(2.0, 1), (value, u64::MAX)], 100.0);
            assert!(svg.starts_with("<svg"), "{value}: {svg}");
        }
    }

    #[test]
    fn the_axis_covers_the_threshold_and_the_slowest_sample() {
        let svg = svg_within_bound(vec![(3.0, 10), (40.0, 1)], 100.0);
        assert!(svg.contains("threshold 100 µs"), "{svg}");
        let labels: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(labels.contains(&"100"), "an x label at the threshold: {svg}");
    }
}
