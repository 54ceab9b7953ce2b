//! SVG figures of the committed ns-3 results (`ns3/results/*.csv`, written by
//! `ns3/experiments.sh`) beside the idealised simulator's runs of the same workloads, drawn
//! with `simulate`'s own chart code (`simulate/plot.rs`); each SVG gets its numbers as CSV.
//!
//! ```text
//! cargo run --release -p manet-mutex-sim --example ns3_figures -- [RESULTS_DIR [OUT_DIR]]
//! ```
//!
//! Defaults: `ns3/results` and `docs/figures`. No simulation runs here: the figures are
//! drawn from the CSVs alone. Statistics: where a point has two or more seeds, the mean of
//! the per-seed values and the half-width of its 95% interval (as `simulate`), except the
//! ns-3 look-ahead grid, whose points are datagrams (or hops) over entries *pooled* over both
//! seeds, as in `ns3/summarize.py` and the tables of `ns3/README.md`, without error bars: a
//! seed there can serve 0 to 2 entries, so its own ratio is undefined or rests on one entry.

#[allow(dead_code)]
#[path = "simulate/plot.rs"]
mod plot;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use manet_mutex_sim::mean_ci95;
use plot::{Panel, Series};

/// The rows of a CSV without quoted fields (as every file in `ns3/results`), by column name.
/// A missing file gives no rows: the figures draw what is there.
fn read(path: &Path) -> Result<Vec<HashMap<String, String>>, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!(
            "ns3_figures: no {} (its series are left out)",
            path.display()
        );
        return Ok(Vec::new());
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            if cells.len() != header.len() {
                return Err(format!(
                    "{}: {} cells in a row of {} columns",
                    path.display(),
                    cells.len(),
                    header.len()
                ));
            }
            Ok(header
                .iter()
                .zip(cells)
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect())
        })
        .collect()
}

type Csv = Vec<HashMap<String, String>>;

fn num(r: &HashMap<String, String>, column: &str) -> f64 {
    r.get(column)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// A point from per-seed values: their mean and 95% half-width (0 for one seed); none
/// without values.
fn point(x: f64, values: &[f64]) -> Option<(f64, f64, f64)> {
    (!values.is_empty()).then(|| {
        let (m, h) = mean_ci95(values);
        (x, m, h)
    })
}

fn series(name: impl Into<String>, points: Vec<(f64, f64, f64)>) -> Option<Series> {
    (!points.is_empty()).then(|| Series {
        name: name.into(),
        points,
    })
}

/// A logarithmic y axis only where the points span two powers of ten or more: the chart
/// code labels only the decades of a logarithmic axis, so a narrower one has one label or
/// none. Applied to every panel before it is written (the panels are built with `false`).
fn log_where_useful(panels: &mut [Panel]) {
    for p in panels {
        let (lo, hi) = p
            .series
            .iter()
            .flat_map(|s| &s.points)
            .filter(|q| q.1 > 0.0)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), q| {
                (lo.min(q.1), hi.max(q.1))
            });
        p.log_y = lo.is_finite() && hi.log10().floor() - lo.log10().ceil() >= 1.0;
    }
}

const LOADS: [f64; 3] = [0.01, 0.1, 1.0];
/// The two connectivity targets of the KRL grids and the square (m) each is placed in on ns-3.
const CONNECTIVITY: [(&str, f64, f64); 2] = [("~20%", 0.2, 180.0), ("~80%", 0.8, 68.0)];

/// One idealised KRL/KRLF series over the loads: `metric` per seed, mean ± 95%.
/// `panels` (log axes where useful) as `out/name.svg` and its CSV; the SVG's path.
fn write_figure(out: &Path, name: &str, mut panels: Vec<Panel>) -> Result<PathBuf, String> {
    log_where_useful(&mut panels);
    plot::write(out, name, &panels)?;
    Ok(out.join(format!("{name}.svg")))
}

fn ideal_krl(rows: &Csv, alg: &str, conn: f64, metric: &str, name: &str) -> Option<Series> {
    let points = LOADS
        .iter()
        .filter_map(|&load| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| {
                    r["algorithm"] == alg
                        && (num(r, "connectivity") - conn).abs() < 1e-9
                        && num(r, "mobility") == 0.0
                        && (num(r, "load") - load).abs() < 1e-12
                })
                .map(|r| num(r, metric))
                .collect();
            point(load, &v)
        })
        .collect();
    series(name, points)
}

/// One ns-3 KRL/KRLF series over the loads (load = λ × cs): `metric` × `scale` per seed,
/// mean ± 95%; runs without an entry have no wait or messages per entry and are left out.
fn ns3_krl(
    rows: &Csv,
    alg: &str,
    area: f64,
    metric: &str,
    scale: f64,
    name: &str,
) -> Option<Series> {
    let points = LOADS
        .iter()
        .filter_map(|&load| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| {
                    r["node"] == "all"
                        && r["algorithm"] == alg
                        && (num(r, "area") - area).abs() < 1e-9
                        && (num(r, "load") * num(r, "cs_time") - load).abs() < 1e-9
                        && num(r, "cs_entries") > 0.0
                })
                .map(|r| num(r, metric) * scale)
                .collect();
            point(load, &v)
        })
        .collect();
    series(name, points)
}

/// The seeds of the rows, as "1 seed" / "3 seeds" for a legend.
fn seeds(rows: &Csv) -> String {
    let mut s: Vec<&str> = rows.iter().map(|r| r["seed"].as_str()).collect();
    s.sort_unstable();
    s.dedup();
    match s.len() {
        1 => "1 seed".into(),
        n => format!("{n} seeds"),
    }
}

/// KRL section 6 against load: the idealised simulator (12 and 30 nodes) and ns-3 (12 nodes
/// with the driver's default and with quieter session timers, 30 nodes with quieter timers).
fn krl_load(dir: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let ideal12 = read(&dir.join("krl-ideal.csv"))?;
    let ideal30 = read(&dir.join("krl30-ideal.csv"))?;
    let default12 = read(&dir.join("krl-ns3.csv"))?;
    let relaxed12 = read(&dir.join("krl-relaxed-ns3.csv"))?;
    let relaxed30 = read(&dir.join("krl30-ns3.csv"))?;
    let mut written = Vec::new();
    // (file, idealised metric and label, ns-3 metric, scale and label, title word)
    let figures: [(&str, &str, &'static str, &str, f64, &'static str, &str); 2] = [
        (
            "ns3_krl_wait_vs_load",
            "mean_wait",
            "mean wait per entry (time units)",
            "mean_wait",
            1000.0,
            "mean wait per entry (ms)",
            "wait",
        ),
        (
            "ns3_krl_messages_vs_load",
            "messages_per_cs",
            "messages per entry",
            "messages_per_cs",
            1.0,
            "unicast datagrams per entry",
            "messages",
        ),
    ];
    for (file, im, ilabel, nm, scale, nlabel, word) in figures {
        let mut panels = Vec::new();
        for (title, conn, _) in CONNECTIVITY {
            let mut s = Vec::new();
            for (alg, short) in [("KRL", "KRL"), ("KRLF", "KRLF")] {
                s.push(ideal_krl(
                    &ideal12,
                    alg,
                    conn,
                    im,
                    &format!("{short}, 12 nodes, {}", seeds(&ideal12)),
                ));
            }
            for (alg, short) in [("KRL", "KRL"), ("KRLF", "KRLF")] {
                s.push(ideal_krl(
                    &ideal30,
                    alg,
                    conn,
                    im,
                    &format!("{short}, 30 nodes, {}", seeds(&ideal30)),
                ));
            }
            panels.push(Panel {
                title: format!("Idealised {word}, {title} connectivity"),
                x_label: "load (requests per node per critical section)",
                y_label: ilabel,
                log_x: true,
                log_y: false,
                series: s.into_iter().flatten().collect(),
            });
        }
        for (title, _, area) in CONNECTIVITY {
            let mut s = Vec::new();
            for (rows, what) in [
                (&default12, "12 nodes, default timers"),
                (&relaxed12, "12 nodes, quiet timers"),
                (&relaxed30, "30 nodes, quiet timers"),
            ] {
                for alg in ["KRL", "KRLF"] {
                    s.push(ns3_krl(
                        rows,
                        alg,
                        area,
                        nm,
                        scale,
                        &format!("{alg}, {what}, {}", seeds(rows)),
                    ));
                }
            }
            panels.push(Panel {
                title: format!("ns-3 802.11b {word}, {title} ({area} m square)"),
                x_label: "load (requests per node per critical section of 10 ms)",
                y_label: nlabel,
                log_x: true,
                log_y: false,
                series: s.into_iter().flatten().collect(),
            });
        }
        // The 30-node runs also count the algorithm's own messages (C interface ABI 2),
        // apart from the link sessions' acknowledgements and keepalives: the measure the
        // idealised simulator's messages per entry is.
        if word == "messages" {
            for (title, _, area) in CONNECTIVITY {
                let s = ["KRL", "KRLF"].map(|alg| {
                    ns3_krl(
                        &relaxed30,
                        alg,
                        area,
                        "core_messages_per_cs",
                        1.0,
                        &format!("{alg}, 30 nodes, quiet timers, {}", seeds(&relaxed30)),
                    )
                });
                panels.push(Panel {
                    title: format!("ns-3 core messages, {title} ({area} m square)"),
                    x_label: "load (requests per node per critical section of 10 ms)",
                    y_label: "algorithm messages per entry",
                    log_x: true,
                    log_y: false,
                    series: s.into_iter().flatten().collect(),
                });
            }
        }
        written.push(write_figure(out, file, panels)?);
    }
    Ok(written)
}

/// The fraction of time a look-ahead host moves, from the ns-3 `mobility` column
/// (`rwp:min-max/pause`: pause 0 is always moving; the grid's other level is 10%).
fn moving(r: &HashMap<String, String>) -> f64 {
    if r["mobility"].ends_with("/0") {
        1.0
    } else {
        0.1
    }
}

const HOSTS: [f64; 5] = [4.0, 8.0, 12.0, 16.0, 20.0];

/// Idealised look-ahead grid: `metric` per seed at (algorithm, hosts, moving), uniform load,
/// no failures.
fn ideal_la(rows: &Csv, alg: &str, hosts: f64, mov: f64, metric: &str) -> Vec<f64> {
    rows.iter()
        .filter(|r| {
            r["algorithm"] == alg
                && num(r, "hosts") == hosts
                && (num(r, "mobility") - mov).abs() < 1e-9
                && r["load_pattern"] == "uniform"
                && r["failures"] == "false"
        })
        .map(|r| num(r, metric))
        .collect()
}

/// ns-3 look-ahead grid, pooled over seeds: (datagrams sent, hops received) over entries.
fn ns3_la(rows: &Csv, alg: &str, hosts: f64, mov: f64) -> Option<(f64, f64)> {
    let rs: Vec<_> = rows
        .iter()
        .filter(|r| {
            r["node"] == "all"
                && r["algorithm"] == alg
                && num(r, "nodes") == hosts
                && moving(r) == mov
        })
        .collect();
    let entries: f64 = rs.iter().map(|r| num(r, "cs_entries")).sum();
    let sent: f64 = rs.iter().map(|r| num(r, "unicast_sent")).sum();
    let hops: f64 = rs
        .iter()
        .map(|r| num(r, "hops_per_cs") * num(r, "cs_entries"))
        .sum();
    (entries > 0.0).then(|| (sent / entries, hops / entries))
}

fn la_name(alg: &str) -> &'static str {
    if alg == "look_ahead" {
        "look-ahead"
    } else {
        "Ricart–Agrawala"
    }
}

/// Look-ahead section V: MPCS and HPCS against hosts (both mobility levels) and against
/// mobility (look-ahead, each host count), ns-3 beside the idealised simulator.
fn look_ahead(dir: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let ideal = read(&dir.join("la-ideal.csv"))?;
    let ns3 = read(&dir.join("la-ns3.csv"))?;
    let mut written = Vec::new();
    let metrics: [(&str, &'static str, usize, &str); 2] = [
        (
            "messages_per_cs",
            "messages (ns-3: datagrams) per entry",
            0,
            "MPCS",
        ),
        ("hops_per_cs", "hops per entry", 1, "HPCS"),
    ];
    let mut panels = Vec::new();
    for (im, label, which, short) in metrics {
        for (mov, how) in [
            (1.0, "moving all the time"),
            (0.1, "moving 10% of the time"),
        ] {
            let mut s = Vec::new();
            for alg in ["look_ahead", "ricart_agrawala"] {
                let pts = HOSTS
                    .iter()
                    .filter_map(|&h| point(h, &ideal_la(&ideal, alg, h, mov, im)))
                    .collect();
                s.push(series(
                    format!("{}, idealised, {}", la_name(alg), seeds(&ideal)),
                    pts,
                ));
                let pts = HOSTS
                    .iter()
                    .filter_map(|&h| {
                        let (m, hp) = ns3_la(&ns3, alg, h, mov)?;
                        Some((h, if which == 0 { m } else { hp }, 0.0))
                    })
                    .collect();
                s.push(series(
                    format!("{}, ns-3, {} pooled", la_name(alg), seeds(&ns3)),
                    pts,
                ));
            }
            panels.push(Panel {
                title: format!("{short} against hosts, {how}"),
                x_label: "hosts",
                y_label: label,
                log_x: false,
                log_y: false,
                series: s.into_iter().flatten().collect(),
            });
        }
    }
    written.push(write_figure(out, "ns3_look_ahead_vs_hosts", panels)?);

    let mut panels = Vec::new();
    for (im, label, which, short) in metrics {
        for ns in [false, true] {
            let s = HOSTS
                .iter()
                .filter_map(|&h| {
                    let pts = [0.1, 1.0]
                        .iter()
                        .filter_map(|&mov| {
                            if ns {
                                let (m, hp) = ns3_la(&ns3, "look_ahead", h, mov)?;
                                Some((mov, if which == 0 { m } else { hp }, 0.0))
                            } else {
                                point(mov, &ideal_la(&ideal, "look_ahead", h, mov, im))
                            }
                        })
                        .collect();
                    series(format!("{h} hosts"), pts)
                })
                .collect();
            panels.push(Panel {
                title: if ns {
                    format!("Look-ahead {short}, ns-3 ({} pooled)", seeds(&ns3))
                } else {
                    format!("Look-ahead {short}, idealised ({})", seeds(&ideal))
                },
                x_label: "fraction of time moving",
                y_label: label,
                log_x: false,
                log_y: false,
                series: s,
            });
        }
    }
    written.push(write_figure(out, "ns3_look_ahead_vs_mobility", panels)?);
    Ok(written)
}

/// KRLF's idle pause on ns-3 (`krlf-pause` grid, plus the 5 ms runs of `krl-relaxed`), with
/// KRL at the same load and timers as a flat reference line.
fn krlf_pause(dir: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let pauses = read(&dir.join("krlf-pause-ns3.csv"))?;
    let relaxed = read(&dir.join("krl-relaxed-ns3.csv"))?;
    if pauses.is_empty() {
        return Ok(Vec::new());
    }
    let at_load = |r: &&HashMap<String, String>, alg: &str, area: f64| {
        r["node"] == "all"
            && r["algorithm"] == alg
            && (num(r, "area") - area).abs() < 1e-9
            && num(r, "load") == 10.0
    };
    let mut panels = Vec::new();
    for (metric, scale, label, what) in [
        ("mean_wait", 1000.0, "mean wait per entry (ms)", "Mean wait"),
        (
            "cs_entries",
            1.0,
            "entries served in the 20 s run",
            "Entries",
        ),
    ] {
        let mut s = Vec::new();
        for (title, _, area) in CONNECTIVITY {
            let mut pts: Vec<(f64, f64, f64)> = relaxed
                .iter()
                .filter(|r| at_load(r, "KRLF", area))
                .map(|r| (5.0, num(r, metric) * scale, 0.0))
                .collect();
            pts.extend(
                pauses
                    .iter()
                    .filter(|r| at_load(r, "KRLF", area))
                    .map(|r| (num(r, "idle_pause") * 1000.0, num(r, metric) * scale, 0.0)),
            );
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            s.push(series(format!("KRLF, {title}"), pts));
            let krl: Vec<_> = relaxed
                .iter()
                .filter(|r| at_load(r, "KRL", area))
                .flat_map(|r| [0.0, 200.0].map(|x| (x, num(r, metric) * scale, 0.0)))
                .collect();
            s.push(series(
                format!("KRL, {title} (no idle pause; reference)"),
                krl,
            ));
        }
        panels.push(Panel {
            title: format!("{what} at load 0.1, ns-3, 12 nodes, 1 seed"),
            x_label: "idle token held before forwarding (ms)",
            y_label: label,
            log_x: false,
            log_y: false,
            series: s.into_iter().flatten().collect(),
        });
    }
    Ok(vec![write_figure(out, "ns3_krlf_idle_pause", panels)?])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a.starts_with('-')) || args.len() > 2 {
        eprintln!("usage: ns3_figures [RESULTS_DIR (ns3/results) [OUT_DIR (docs/figures)]]");
        std::process::exit(2);
    }
    let dir = PathBuf::from(args.first().map_or("ns3/results", String::as_str));
    let out = PathBuf::from(args.get(1).map_or("docs/figures", String::as_str));
    let run = || -> Result<Vec<PathBuf>, String> {
        let mut w = krl_load(&dir, &out)?;
        w.extend(look_ahead(&dir, &out)?);
        w.extend(krlf_pause(&dir, &out)?);
        Ok(w)
    };
    match run() {
        Ok(written) => {
            for p in written {
                println!("{}", p.display());
            }
        }
        Err(e) => {
            eprintln!("ns3_figures: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[(&str, &str)]) -> HashMap<String, String> {
        cells
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The ns-3 look-ahead points are totals over totals (as `ns3/summarize.py`): a seed
    /// with few entries weighs by its entries, not as a ratio of its own.
    #[test]
    fn look_ahead_points_pool_the_seeds() {
        let run = |entries: &str, sent: &str, hops: &str| {
            row(&[
                ("node", "all"),
                ("algorithm", "look_ahead"),
                ("nodes", "20"),
                ("mobility", "rwp:5.1-5.1/0"),
                ("cs_entries", entries),
                ("unicast_sent", sent),
                ("hops_per_cs", hops),
            ])
        };
        let rows = vec![run("3", "21529", "2954.0"), run("1", "21314", "8846")];
        let (mpcs, hpcs) = ns3_la(&rows, "look_ahead", 20.0, 1.0).unwrap();
        assert!((mpcs - 42843.0 / 4.0).abs() < 1e-9);
        assert!((hpcs - (3.0 * 2954.0 + 8846.0) / 4.0).abs() < 1e-9);
        assert!(ns3_la(&rows, "look_ahead", 20.0, 0.1).is_none(), "no run");
        let none = vec![run("0", "500", "0")];
        assert!(ns3_la(&none, "look_ahead", 20.0, 1.0).is_none(), "no entry");
    }

    /// A KRL point is the mean over the seeds that served an entry (a run without one has
    /// no wait), with an interval only from two seeds on.
    #[test]
    fn krl_points_leave_out_runs_without_entries() {
        let run = |seed: &str, entries: &str, wait: &str| {
            row(&[
                ("node", "all"),
                ("algorithm", "KRL"),
                ("area", "68"),
                ("load", "10"),
                ("cs_time", "0.01"),
                ("seed", seed),
                ("cs_entries", entries),
                ("mean_wait", wait),
            ])
        };
        let one = ns3_krl(
            &vec![run("1", "5", "0.002")],
            "KRL",
            68.0,
            "mean_wait",
            1000.0,
            "x",
        );
        assert_eq!(one.unwrap().points, vec![(0.1, 2.0, 0.0)]);
        let rows = vec![
            run("1", "5", "0.002"),
            run("2", "0", "0"),
            run("3", "7", "0.004"),
        ];
        let s = ns3_krl(&rows, "KRL", 68.0, "mean_wait", 1000.0, "x").unwrap();
        let (x, m, h) = s.points[0];
        assert_eq!((x, m), (0.1, 3.0));
        // Standard deviation √2 over √2 seeds, times t(1) = 12.706.
        assert!((h - 12.706).abs() < 1e-3, "{h}");
        assert!(ns3_krl(&rows, "KRLF", 68.0, "mean_wait", 1.0, "x").is_none());
    }

    /// Logarithmic only across two powers of ten (the chart labels only decades).
    #[test]
    fn log_axis_only_where_it_gets_labels() {
        let panel = |values: &[f64]| Panel {
            title: String::new(),
            x_label: "",
            y_label: "",
            log_x: false,
            log_y: true,
            series: vec![Series {
                name: String::new(),
                points: values.iter().map(|&v| (0.0, v, 0.0)).collect(),
            }],
        };
        let mut panels = [
            panel(&[2.8, 7.5]),
            panel(&[4.0, 63.0]),
            panel(&[9.0, 1500.0]),
        ];
        log_where_useful(&mut panels);
        let logs: Vec<bool> = panels.iter().map(|p| p.log_y).collect();
        assert_eq!(logs, [false, false, true]);
    }

    #[test]
    fn mobility_level_from_the_pause() {
        assert_eq!(moving(&row(&[("mobility", "rwp:5.1-5.1/0")])), 1.0);
        assert_eq!(moving(&row(&[("mobility", "rwp:5.1-5.1/73.44")])), 0.1);
    }
}
