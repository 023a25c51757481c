//! Latency histograms as inline SVG (plotters, SVG backend only), drawn the way OSADL plots
//! them: latency on a linear x axis, sample count on a logarithmic y axis (so single rare
//! spikes stay visible), one stepped curve per thread/CPU, and the threshold as a red line.

use plotters::prelude::*;

use super::judge::fmt;
use super::model::ThreadReport;

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

/// The chart for one scenario's threads, or `None` when no thread has a histogram.
pub fn latency_svg(threads: &[ThreadReport], threshold_us: f64) -> Option<String> {
    let drawn: Vec<&ThreadReport> = threads.iter().filter(|t| !t.buckets.is_empty()).collect();
    if drawn.is_empty() {
        return None;
    }
    let on_axis = |v: f64| if v.is_nan() { 0.0 } else { v.clamp(0.0, AXIS_LIMIT_US) };
    let top = drawn.iter().flat_map(|t| t.buckets.iter().map(|b| on_axis(b.0))).fold(0.0, f64::max);
    let threshold_us = on_axis(threshold_us);
    let x_max = (top.max(threshold_us) * 1.05 + 1.0).ceil();
    let y_max =
        drawn.iter().flat_map(|t| t.buckets.iter().map(|b| b.1)).max().unwrap_or(1) as f64 * 2.0;
    let mut svg = String::new();
    let result = draw(&mut svg, &drawn, threshold_us, x_max, y_max.max(10.0));
    Some(match result {
        Ok(()) => svg,
        Err(message) => format!(
            "<p class=\"warn\">chart could not be drawn: {}</p>",
            super::junit::escape(&message)
        ),
    })
}

fn draw(
    svg: &mut String,
    threads: &[&ThreadReport],
    threshold_us: f64,
    x_max: f64,
    y_max: f64,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let root = SVGBackend::with_string(svg, (860, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..x_max, (0.8f64..y_max).log_scale())
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_desc("Latency (µs)")
        .y_desc("Number of samples")
        .draw()
        .map_err(|e| err(&e))?;
    for (i, thread) in threads.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let label = match (thread.cpu, thread.thread) {
            (Some(cpu), _) => format!("CPU{cpu}"),
            (None, Some(t)) => format!("thread {t}"),
            _ => "all".to_string(),
        };
        let max = thread.max_us.map_or_else(|| "?".to_string(), fmt);
        let label = if thread.overflows > 0 {
            let floor = thread.percentiles_at_least_us.map_or_else(String::new, fmt);
            format!("{label}: max {max} µs, {} samples ≥ {floor} µs", thread.overflows)
        } else {
            format!("{label}: max {max} µs")
        };
        chart
            .draw_series(LineSeries::new(steps(&thread.buckets), color.stroke_width(1)))
            .map_err(|e| err(&e))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .draw_series(LineSeries::new(
            vec![(threshold_us, 0.8), (threshold_us, y_max)],
            RED.stroke_width(2),
        ))
        .map_err(|e| err(&e))?
        .label(format!("threshold {} µs", fmt(threshold_us)))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// A stepped outline of 1 µs bins (gnuplot `histeps`), dropping to the floor across gaps.
fn steps(buckets: &[(f64, u64)]) -> Vec<(f64, f64)> {
    const FLOOR: f64 = 0.8;
    let mut points = Vec::with_capacity(buckets.len() * 4);
    let mut previous: Option<f64> = None;
    for (value, count) in buckets {
        let value = if value.is_nan() { 0.0 } else { value.clamp(0.0, AXIS_LIMIT_US) };
        let (left, right, y) = (value - 0.5, value + 0.5, *count as f64);
        if previous.is_none_or(|p| (p - left).abs() > 1e-9) {
            if let Some(p) = previous {
                points.push((p, FLOOR));
            }
            points.push((left, FLOOR));
        }
        points.push((left, y));
        points.push((right, y));
        previous = Some(right);
    }
    if let Some(p) = previous {
        points.push((p, FLOOR));
    }
    points
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
