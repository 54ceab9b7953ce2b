//! Line charts as SVG (plotters), with 95% confidence intervals as error bars, and the same
//! numbers as CSV beside each chart.

use std::fmt::Write as _;
use std::path::Path;

use manet_mutex_sim::experiment::Row;
use manet_mutex_sim::mean_ci95;
use plotters::prelude::*;

/// One line of a chart: `(x, mean, half-width of the 95% interval)` per point.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64, f64)>,
}

impl Series {
    /// The series over `xs`: at each `x`, the mean and interval of `metric(row, x)` over the
    /// rows `at(row, x)` selects (points with no value are left out).
    pub fn collect(
        name: &str,
        rows: &[Row],
        xs: &[f64],
        at: impl Fn(&Row, f64) -> bool,
        metric: impl Fn(&Row, f64) -> Option<f64>,
    ) -> Series {
        let points = xs
            .iter()
            .filter_map(|&x| {
                let v: Vec<f64> = rows
                    .iter()
                    .filter(|r| at(r, x))
                    .filter_map(|r| metric(r, x))
                    .collect();
                (!v.is_empty()).then(|| {
                    let (m, h) = mean_ci95(&v);
                    (x, m, h)
                })
            })
            .collect();
        Series {
            name: name.into(),
            points,
        }
    }

    /// The series over `xs` where each `x` names an extra column of the rows `filter`
    /// selects (`column(x)`, e.g. the wait of priority class `x`).
    pub fn columns(
        name: &str,
        rows: &[Row],
        xs: &[f64],
        filter: impl Fn(&Row) -> bool,
        column: impl Fn(f64) -> String,
    ) -> Series {
        Series::collect(
            name,
            rows,
            xs,
            |r, _| filter(r),
            |r, x| extra(r, &column(x)),
        )
    }
}

/// The extra column `name` of a row, as a number.
pub fn extra(r: &Row, name: &str) -> Option<f64> {
    r.extra.iter().find(|(n, _)| *n == name)?.1.parse().ok()
}

/// One panel: a title, axis labels, whether each axis is logarithmic, and its lines.
pub struct Panel {
    pub title: String,
    pub x_label: &'static str,
    pub y_label: &'static str,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// Write `panels` side by side as `dir/name.svg`, and their points as `dir/name.csv`.
pub fn write(dir: &Path, name: &str, panels: &[Panel]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let svg = dir.join(format!("{name}.svg"));
    draw(&svg, panels).map_err(|e| format!("{}: {e}", svg.display()))?;
    let mut csv = String::from("panel,series,x,mean,ci95_half_width\n");
    for p in panels {
        for s in &p.series {
            for (x, m, h) in &s.points {
                // Titles and names contain commas: quoted, as CSV readers expect.
                let _ = writeln!(csv, "\"{}\",\"{}\",{x},{m:.6},{h:.6}", p.title, s.name);
            }
        }
    }
    let path = dir.join(format!("{name}.csv"));
    std::fs::write(&path, csv).map_err(|e| format!("{}: {e}", path.display()))
}

fn draw(path: &Path, panels: &[Panel]) -> Result<(), Box<dyn std::error::Error>> {
    let width = 520 * panels.len().max(1) as u32;
    let root = SVGBackend::new(path, (width, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (panel, area) in panels.iter().zip(areas) {
        draw_panel(panel, &area)?;
    }
    root.present()?;
    Ok(())
}

/// Logarithmic axes are drawn as linear axes over `log10` of the values, labelled back.
fn scale(v: f64, log: bool) -> f64 {
    if log {
        v.max(1e-12).log10()
    } else {
        v
    }
}

fn draw_panel(
    panel: &Panel,
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
) -> Result<(), Box<dyn std::error::Error>> {
    let points = panel.series.iter().flat_map(|s| &s.points);
    let xs: Vec<f64> = points.clone().map(|p| scale(p.0, panel.log_x)).collect();
    let lows: Vec<f64> = points
        .clone()
        .map(|p| scale((p.1 - p.2).max(p.1 / 10.0), panel.log_y))
        .collect();
    let highs: Vec<f64> = points.map(|p| scale(p.1 + p.2, panel.log_y)).collect();
    let (x0, x1) = bounds(&xs);
    let (mut y0, y1) = bounds(
        lows.iter()
            .chain(&highs)
            .copied()
            .collect::<Vec<_>>()
            .as_slice(),
    );
    if !panel.log_y {
        y0 = y0.min(0.0);
    }
    let pad_x = ((x1 - x0) * 0.05).max(1e-9);
    let pad_y = ((y1 - y0) * 0.08).max(1e-9);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(x0 - pad_x..x1 + pad_x, y0 - pad_y..y1 + pad_y)?;
    let (log_x, log_y) = (panel.log_x, panel.log_y);
    // Label only decades on a logarithmic axis, and only whole numbers when every x is one
    // (hosts, classes): ticks in between stay as grid lines.
    let whole_x = panel
        .series
        .iter()
        .flat_map(|s| &s.points)
        .all(|p| p.0.fract() == 0.0);
    let fmt_x = move |v: &f64| label(*v, log_x, log_x || whole_x);
    let fmt_y = move |v: &f64| label(*v, log_y, log_y);
    chart
        .configure_mesh()
        .x_desc(panel.x_label)
        .y_desc(panel.y_label)
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, s) in panel.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| (scale(p.0, log_x), scale(p.1, log_y)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(&s.name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        chart.draw_series(s.points.iter().map(|&(x, m, h)| {
            let x = scale(x, log_x);
            let lo = scale((m - h).max(m / 10.0), log_y);
            PathElement::new(vec![(x, lo), (x, scale(m + h, log_y))], color)
        }))?;
    }
    // The legend goes in the upper corner the lines leave free: the right one when they fall;
    // if points lie where it would be drawn, in the corner with the fewest.
    let mid = (x0 + x1) / 2.0;
    let (mut left, mut right) = ((0.0, 0), (0.0, 0));
    // Points near each corner (upper left, upper right, lower left, lower right): within the
    // outer 40% of the width and 35% of the height, about what a legend covers.
    let mut corners_hit = [0; 4];
    let (wide, high) = ((x1 - x0) * 0.4, (y1 - y0) * 0.35);
    for p in panel.series.iter().flat_map(|s| &s.points) {
        let (x, y) = (scale(p.0, log_x), scale(p.1, log_y));
        let side = if x < mid { &mut left } else { &mut right };
        side.0 += y;
        side.1 += 1;
        for (i, hit) in corners_hit.iter_mut().enumerate() {
            let near_x = if i % 2 == 0 {
                x <= x0 + wide
            } else {
                x >= x1 - wide
            };
            let near_y = if i < 2 {
                y >= y1 - high
            } else {
                y <= y0 + high
            };
            *hit += usize::from(near_x && near_y);
        }
    }
    let falling = left.0 / f64::from(left.1.max(1)) > right.0 / f64::from(right.1.max(1));
    let corners = [
        SeriesLabelPosition::UpperLeft,
        SeriesLabelPosition::UpperRight,
        SeriesLabelPosition::LowerLeft,
        SeriesLabelPosition::LowerRight,
    ];
    let mut corner = usize::from(falling);
    if corners_hit[corner] > 0 {
        corner = (0..4).min_by_key(|&q| corners_hit[q]).unwrap_or(corner);
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(corners[corner].clone())
        .draw()?;
    Ok(())
}

fn bounds(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    }
}

fn label(v: f64, log: bool, whole_only: bool) -> String {
    if whole_only && (v - v.round()).abs() > 1e-6 {
        return String::new();
    }
    let v = if log { 10f64.powf(v.round()) } else { v };
    if v != 0.0 && (v.abs() < 0.01 || v.abs() >= 10_000.0) {
        format!("{v:.0e}")
    } else if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}
