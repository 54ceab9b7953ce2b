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

/// Text sizes (pixels at the committed size): large enough to read when a figure of two
/// panels is scaled to a page's width.
const CAPTION: u32 = 22;
const AXIS: u32 = 18;
const TICKS: u32 = 16;
const LEGEND: u32 = 16;
/// One panel's size, and at most this many panels side by side (more wrap to a new row).
const PANEL: (u32, u32) = (620, 470);
const COLUMNS: usize = 2;

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
    let n = panels.len().max(1);
    let (columns, rows) = (n.min(COLUMNS), n.div_ceil(COLUMNS));
    let size = (PANEL.0 * columns as u32, PANEL.1 * rows as u32);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((rows, columns));
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

/// The lower end of a point's error bar: never below zero (every quantity drawn is
/// non-negative), and on a logarithmic axis not below a tenth of the mean.
fn low(mean: f64, half: f64, log: bool) -> f64 {
    if log {
        (mean - half).max(mean / 10.0)
    } else {
        (mean - half).max(0.0)
    }
}

fn draw_panel(
    panel: &Panel,
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
) -> Result<(), Box<dyn std::error::Error>> {
    let (log_x, log_y) = (panel.log_x, panel.log_y);
    let points = || panel.series.iter().flat_map(|s| &s.points);
    let xs: Vec<f64> = points().map(|p| scale(p.0, log_x)).collect();
    let lows: Vec<f64> = points()
        .map(|p| scale(low(p.1, p.2, log_y), log_y))
        .collect();
    let highs: Vec<f64> = points().map(|p| scale(p.1 + p.2, log_y)).collect();
    let (x0, x1) = bounds(&xs);
    let (mut y0, mut y1) = bounds(&[lows.as_slice(), highs.as_slice()].concat());
    if !log_y {
        // From zero: the quantities are non-negative.
        y0 = 0.0;
        y1 = y1.max(1e-9);
    }
    // The legend gets a band of its own above the data, so it covers no line, marker or
    // error bar: its rows' height as a share of the plot's.
    let legend_rows = panel.series.len() as f64;
    let plot_height = f64::from(PANEL.1) - 140.0;
    let band = ((legend_rows * f64::from(LEGEND) * 1.45 + 16.0) / plot_height).min(0.6);
    let data_range = (y1 - y0).max(1e-9);
    y1 += data_range * band / (1.0 - band);
    let pad_x = ((x1 - x0) * 0.06).max(1e-9);
    let pad_y = if log_y { (y1 - y0) * 0.04 } else { 0.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", CAPTION))
        .margin(14)
        .x_label_area_size(56)
        .y_label_area_size(74)
        .build_cartesian_2d(x0 - pad_x..x1 + pad_x, y0 - pad_y..y1 + pad_y)?;
    // Label only decades on a logarithmic axis, and only whole numbers when every x is one
    // (hosts, classes): ticks in between stay as grid lines. A linear axis's labels share
    // one number of decimals.
    let whole_x = points().all(|p| p.0.fract() == 0.0);
    let (dx, dy) = (decimals(x1 - x0), decimals(y1 - y0));
    let fmt_x = move |v: &f64| label(*v, log_x, log_x || whole_x, dx);
    let fmt_y = move |v: &f64| label(*v, log_y, log_y, dy);
    chart
        .configure_mesh()
        .x_desc(panel.x_label)
        .y_desc(panel.y_label)
        .axis_desc_style(("sans-serif", AXIS))
        .label_style(("sans-serif", TICKS))
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let count = panel.series.len();
    for (i, s) in panel.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        // Sideways by up to ±1.5% of the x range, centred on the true x.
        let dodge = (i as f64 - (count as f64 - 1.0) / 2.0) * 0.012 * (x1 - x0);
        let at = |x: f64| scale(x, log_x) + dodge;
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| (at(p.0), scale(p.1, log_y)))
            .collect();
        let style = color.stroke_width(2);
        // Every other series dashed; its legend sample too.
        let dashed = i % 2 == 1;
        if dashed {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 9, 5, style))?
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), style))?
        }
        .label(&s.name)
        .legend(move |at| {
            // Relative to `at`: a solid sample, or two dashes, with the marker on it.
            let (first, second) = if dashed {
                (vec![(0, 0), (8, 0)], vec![(14, 0), (22, 0)])
            } else {
                (vec![(0, 0), (11, 0)], vec![(11, 0), (22, 0)])
            };
            EmptyElement::at(at)
                + PathElement::new(first, style)
                + PathElement::new(second, style)
                + shape(i, (11, 0), color)
        });
        chart.draw_series(
            pts.iter()
                .map(|&p| EmptyElement::at(p) + shape(i, (0, 0), color)),
        )?;
        chart.draw_series(s.points.iter().map(|&(x, m, h)| {
            let x = at(x);
            let lo = scale(low(m, h, log_y), log_y);
            PathElement::new(
                vec![(x, lo), (x, scale(m + h, log_y))],
                color.stroke_width(1),
            )
        }))?;
    }
    // The band above the data is free: the legend goes in its upper left corner.
    chart
        .configure_series_labels()
        .label_font(("sans-serif", LEGEND))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

/// Series `i`'s marker, centred `offset` pixels from a point: a circle, a triangle, a
/// square, a cross, a diamond, a ring, in turn.
fn shape<DB: DrawingBackend>(
    i: usize,
    offset: (i32, i32),
    color: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    let (ox, oy) = offset;
    let fill = color.filled();
    match i % 6 {
        0 => Circle::new((ox, oy), 4, fill).into_dyn(),
        1 => TriangleMarker::new((ox, oy), 6, fill).into_dyn(),
        2 => Rectangle::new([(ox - 4, oy - 4), (ox + 4, oy + 4)], fill).into_dyn(),
        3 => Cross::new((ox, oy), 5, color.stroke_width(2)).into_dyn(),
        4 => Polygon::new(
            vec![(ox, oy - 5), (ox + 5, oy), (ox, oy + 5), (ox - 5, oy)],
            fill,
        )
        .into_dyn(),
        _ => Circle::new((ox, oy), 4, color.stroke_width(2)).into_dyn(),
    }
}

/// Decimals that tell a linear axis's ticks over `range` apart (about ten ticks).
fn decimals(range: f64) -> usize {
    let step = (range / 10.0).max(1e-12);
    (-step.log10().floor()).clamp(0.0, 4.0) as usize
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

/// A tick's label: on a logarithmic axis the decade in plain decimals (0.001, 0.01, 0.1, 1,
/// 10, .., 10000; beyond that 1e5), on a linear one with the axis's `decimals`.
fn label(v: f64, log: bool, whole_only: bool, decimals: usize) -> String {
    if whole_only && (v - v.round()).abs() > 1e-6 {
        return String::new();
    }
    if log {
        let decade = v.round() as i32;
        return if (-4..=4).contains(&decade) {
            let v = 10f64.powi(decade);
            format!("{v:.*}", decade.min(0).unsigned_abs() as usize)
        } else {
            format!("1e{decade}")
        };
    }
    if whole_only {
        format!("{v:.0}")
    } else {
        format!("{v:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    use super::{decimals, label, low};

    /// A logarithmic axis labels its decades one way (plain decimals, far ones as powers),
    /// not "1e-3, 0.01, 0.10, 1" as before.
    #[test]
    fn log_labels_are_plain_decades() {
        let decades: Vec<String> = (-3..=5)
            .map(|d| label(f64::from(d), true, true, 0))
            .collect();
        assert_eq!(
            decades,
            ["0.001", "0.01", "0.1", "1", "10", "100", "1000", "10000", "1e5"]
        );
        assert_eq!(
            label(-1.5, true, true, 0),
            "",
            "between decades: a grid line only"
        );
    }

    /// The ticks of a linear axis share one number of decimals, enough to tell them apart.
    #[test]
    fn linear_labels_share_their_decimals() {
        assert_eq!(decimals(45.0), 0);
        assert_eq!(decimals(0.2), 2);
        assert_eq!(decimals(1.0), 1);
        let ticks: Vec<String> = [0.0, 0.5, 1.0]
            .iter()
            .map(|&v| label(v, false, false, 1))
            .collect();
        assert_eq!(ticks, ["0.0", "0.5", "1.0"]);
    }

    /// Error bars stop at zero on a linear axis and at a tenth of the mean on a log one.
    #[test]
    fn error_bars_never_go_below_zero() {
        assert_eq!(low(3.0, 5.0, false), 0.0);
        assert_eq!(low(3.0, 1.0, false), 2.0);
        assert!((low(3.0, 5.0, true) - 0.3).abs() < 1e-12);
    }
}
