//! `simulate --figures`: the papers' evaluation figures, regenerated as SVG (with their numbers
//! as CSV) into `--out` (default `docs/figures`), and recovery against the crash rate
//! (`super::recovery`). `--smoke` runs a tiny grid, for CI.

use std::path::{Path, PathBuf};

use manet_mutex_sim::experiment::Row;
use manet_mutex_sim::Algorithm;

use super::plot::{self, Panel, Series};
use super::{krl, look_ahead, prioritized, Args, Choice};

/// The token algorithms' loads and the connectivity sweep (KRL paper, Figures 6–9).
const LOADS: [f64; 4] = [0.001, 0.01, 0.1, 1.0];
const CONNECTIVITY: [f64; 8] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
/// The KRL paper's mobility levels: zero, low (1/500) and high (1/50) link changes per unit.
const MOBILITY: [(f64, &str); 3] = [(0.0, "zero"), (0.002, "low"), (0.02, "high")];

/// Where the figures go: `--out`, or `docs/figures`.
pub fn dir(args: &Args) -> PathBuf {
    args.out
        .clone()
        .unwrap_or_else(|| PathBuf::from("docs/figures"))
}

/// One experiment of `--figures`: the names of the figures it wrote into the directory.
type Experiment = fn(&Args, &Path) -> Result<Vec<&'static str>, String>;

pub fn run(args: &Args) -> Result<Vec<PathBuf>, String> {
    let dir = dir(args);
    let mut written = Vec::new();
    // A line on stderr as each experiment starts (the runs inside it have their own progress).
    let steps: [(&str, Experiment); 5] = [
        ("KRL against load", krl_load),
        ("KRL against connectivity", krl_connectivity),
        ("look-ahead", look_ahead_figures),
        ("prioritized", prioritized_figures),
        ("recovery", super::recovery::figure),
    ];
    let started = std::time::Instant::now();
    for (i, (name, step)) in steps.iter().enumerate() {
        if !manet_mutex_sim::progress::Progress::off() {
            eprintln!(
                "simulate --figures: experiment {}/{}: {name}, {} s",
                i + 1,
                steps.len(),
                started.elapsed().as_secs()
            );
        }
        written.extend(step(args, &dir)?);
    }
    Ok(written
        .into_iter()
        .map(|name| dir.join(format!("{name}.svg")))
        .collect())
}

/// A copy of the command line for one experiment.
fn with(args: &Args, algorithm: Choice) -> Args {
    let mut a = args.clone();
    a.algorithm = algorithm;
    a.out = None;
    a
}

fn param(r: &Row, name: &str, x: f64) -> bool {
    r.param(name).and_then(|v| v.parse::<f64>().ok()) == Some(x)
}

fn served(r: &Row) -> bool {
    r.summary.cs_entries > 0
}

/// One panel per mobility level, a line per algorithm (and connectivity, when there are
/// several): `metric` against the coordinate `x_param` (scaled by `x_scale` for the axis).
#[allow(clippy::too_many_arguments)]
fn krl_panels(
    rows: &[Row],
    xs: &[f64],
    x_param: &str,
    x_scale: f64,
    lines: &[(&str, Option<f64>)],
    what: &str,
    axes: (&'static str, &'static str, bool, bool),
    metric: fn(&Row) -> f64,
) -> Vec<Panel> {
    let axis: Vec<f64> = xs.iter().map(|x| x * x_scale).collect();
    MOBILITY
        .iter()
        .map(|&(mobility, level)| Panel {
            title: format!("{what}, {level} mobility"),
            x_label: axes.0,
            y_label: axes.1,
            log_x: axes.2,
            log_y: axes.3,
            series: lines
                .iter()
                .map(|&(alg, conn)| {
                    let name = match conn {
                        Some(c) => format!("{alg}, {:.0}% links", c * 100.0),
                        None => alg.to_string(),
                    };
                    Series::collect(
                        &name,
                        rows,
                        &axis,
                        |r, x| {
                            r.algorithm == alg
                                && param(r, "mobility", mobility)
                                && param(r, x_param, x / x_scale)
                                && conn.is_none_or(|c| param(r, "connectivity", c))
                        },
                        |r, _| served(r).then(|| metric(r)),
                    )
                })
                .collect(),
        })
        .collect()
}

/// KRL paper Figures 6 and 7: load against time and messages per entry at 20% and 80%
/// connectivity, one panel per mobility level.
fn krl_load(args: &Args, dir: &Path) -> Result<Vec<&'static str>, String> {
    let mut a = with(args, Choice::All);
    a.connectivity = Some(vec![0.2, 0.8]);
    a.mobility = Some(MOBILITY.iter().map(|m| m.0).collect());
    let loads = if args.smoke {
        vec![0.01, 0.1]
    } else {
        LOADS.to_vec()
    };
    a.load = Some(loads.clone());
    let (rows, _) = krl::run(&a);
    let lines = [
        (Algorithm::Krl.name(), Some(0.2)),
        (Algorithm::Krlf.name(), Some(0.2)),
        (Algorithm::Krl.name(), Some(0.8)),
        (Algorithm::Krlf.name(), Some(0.8)),
    ];
    let x = "load (requests per node per time unit)";
    plot::write(
        dir,
        "krl_fig6_time_vs_load",
        &krl_panels(
            &rows,
            &loads,
            "load",
            1.0,
            &lines,
            "Time per CS entry",
            (x, "mean wait (message delays)", true, false),
            |r| r.summary.mean_wait,
        ),
    )?;
    plot::write(
        dir,
        "krl_fig7_messages_vs_load",
        &krl_panels(
            &rows,
            &loads,
            "load",
            1.0,
            &lines,
            "Messages per CS entry",
            (x, "messages per entry", true, true),
            |r| r.summary.messages_per_cs,
        ),
    )?;
    Ok(vec!["krl_fig6_time_vs_load", "krl_fig7_messages_vs_load"])
}

/// KRL paper Figures 8 and 9: connectivity (10%–80%) against time and messages per entry at
/// load 0.1, one panel per mobility level.
fn krl_connectivity(args: &Args, dir: &Path) -> Result<Vec<&'static str>, String> {
    let mut a = with(args, Choice::All);
    let conns: Vec<f64> = if args.smoke {
        vec![0.2, 0.8]
    } else {
        CONNECTIVITY.to_vec()
    };
    a.connectivity = Some(conns.clone());
    a.mobility = Some(MOBILITY.iter().map(|m| m.0).collect());
    a.load = Some(vec![0.1]);
    let (rows, _) = krl::run(&a);
    let lines = [
        (Algorithm::Krl.name(), None),
        (Algorithm::Krlf.name(), None),
    ];
    let x = "connectivity (% of possible links)";
    plot::write(
        dir,
        "krl_fig8_time_vs_connectivity",
        &krl_panels(
            &rows,
            &conns,
            "connectivity",
            100.0,
            &lines,
            "Time per CS entry, load 0.1",
            (x, "mean wait (message delays)", false, false),
            |r| r.summary.mean_wait,
        ),
    )?;
    plot::write(
        dir,
        "krl_fig9_messages_vs_connectivity",
        &krl_panels(
            &rows,
            &conns,
            "connectivity",
            100.0,
            &lines,
            "Messages per CS entry, load 0.1",
            (x, "messages per entry", false, false),
            |r| r.summary.messages_per_cs,
        ),
    )?;
    Ok(vec![
        "krl_fig8_time_vs_connectivity",
        "krl_fig9_messages_vs_connectivity",
    ])
}

/// Look-ahead paper Figures 4–7, and look-ahead beside Ricart–Agrawala: Fig. 4, hops per
/// routed message against mobility (20 hosts); Fig. 5, HPCS against hosts, uniform load and
/// 20% of hosts making 80% of requests; Fig. 6, MPCS and HPCS against hosts at each mobility
/// level; Fig. 7, MPCS against hosts at each load level, with and without 10% host failures.
/// Unless a figure varies them: λ = 1e-3, uniform load, hosts moving all the time, no
/// failures.
fn look_ahead_figures(args: &Args, dir: &Path) -> Result<Vec<&'static str>, String> {
    let mut a = with(args, Choice::One(Algorithm::LookAhead));
    let hosts: Vec<u32> = if args.smoke {
        vec![4, 8]
    } else {
        vec![4, 8, 12, 16, 20]
    };
    let lambdas = if args.smoke {
        vec![1e-3]
    } else {
        vec![1e-2, 1e-3, 1e-4]
    };
    let mobility = if args.smoke {
        vec![1.0]
    } else {
        vec![1.0, 0.5, 0.1]
    };
    a.hosts = Some(hosts.clone());
    a.load = Some(lambdas.clone());
    a.mobility = Some(mobility.clone());
    if args.smoke {
        a.entries = 20;
    }
    let (rows, _) = look_ahead::run(&a);
    let xs: Vec<f64> = hosts.iter().map(|&h| f64::from(h)).collect();
    let largest = *xs.last().unwrap_or(&4.0);
    // A run at these coordinates (`None`: the default above).
    let at = |r: &Row, alg: &str, hosts: f64, lambda: f64, mob: f64, pattern: &str, fail: &str| {
        r.algorithm == alg
            && param(r, "hosts", hosts)
            && param(r, "lambda", lambda)
            && param(r, "mobility", mob)
            && r.param("load_pattern") == Some(pattern)
            && r.param("failures") == Some(fail)
    };
    let fig4 = Series::collect(
        &format!("look-ahead, {largest} hosts"),
        &rows,
        &mobility.iter().map(|m| m * 100.0).collect::<Vec<_>>(),
        |r, x| {
            at(
                r,
                Algorithm::LookAhead.name(),
                largest,
                1e-3,
                x / 100.0,
                "uniform",
                "false",
            )
        },
        |r, _| plot::extra(r, "hops_per_routed_message"),
    );
    plot::write(
        dir,
        "look_ahead_fig4_hops_per_message",
        &[Panel {
            title: "Hops per routed message (Fig. 4)".into(),
            x_label: "% of time hosts move",
            y_label: "hops per message",
            log_x: false,
            log_y: false,
            series: vec![fig4],
        }],
    )?;
    let by_hosts = |name: String, select: &dyn Fn(&Row, f64) -> bool, metric: fn(&Row) -> f64| {
        Series::collect(&name, &rows, &xs, select, |r, _| Some(metric(r)))
    };
    let mpcs: fn(&Row) -> f64 = |r| r.summary.messages_per_cs;
    let hpcs: fn(&Row) -> f64 = |r| r.summary.hops_per_cs;
    let fig5 = ["uniform", "hot20/80"]
        .iter()
        .map(|p| {
            by_hosts(
                if *p == "uniform" {
                    "uniform load".into()
                } else {
                    "20% of hosts make 80% of requests".into()
                },
                &|r, x| at(r, Algorithm::LookAhead.name(), x, 1e-3, 1.0, p, "false"),
                hpcs,
            )
        })
        .collect();
    let per_mobility = |metric| {
        mobility
            .iter()
            .map(|&m| {
                by_hosts(
                    format!("moving {:.0}% of the time", m * 100.0),
                    &|r, x| {
                        at(
                            r,
                            Algorithm::LookAhead.name(),
                            x,
                            1e-3,
                            m,
                            "uniform",
                            "false",
                        )
                    },
                    metric,
                )
            })
            .collect()
    };
    let fig7 = lambdas
        .iter()
        .flat_map(|&l| {
            [("false", ""), ("true", ", 10% failures")].map(|(fail, label)| {
                by_hosts(
                    format!("λ = {l:.0e}{label}"),
                    &|r, x| at(r, Algorithm::LookAhead.name(), x, l, 1.0, "uniform", fail),
                    mpcs,
                )
            })
        })
        .collect();
    let versus = |metric| {
        [
            (Algorithm::LookAhead.name(), "look-ahead"),
            (Algorithm::RicartAgrawala.name(), "Ricart–Agrawala"),
        ]
        .iter()
        .flat_map(|&(alg, name)| {
            [("uniform", "uniform"), ("hot20/80", "20/80")].map(|(p, label)| {
                by_hosts(
                    format!("{name}, {label}"),
                    &|r, x| at(r, alg, x, 1e-3, 1.0, p, "false"),
                    metric,
                )
            })
        })
        .collect()
    };
    let panel = |title: &str, y_label, series| Panel {
        title: title.into(),
        x_label: "hosts",
        y_label,
        log_x: false,
        log_y: false,
        series,
    };
    plot::write(
        dir,
        "look_ahead_fig5_6_load_pattern_and_mobility",
        &[
            panel("HPCS by load pattern (Fig. 5)", "hops per entry", fig5),
            panel(
                "MPCS by mobility (Fig. 6)",
                "messages per entry",
                per_mobility(mpcs),
            ),
            panel(
                "HPCS by mobility (Fig. 6)",
                "hops per entry",
                per_mobility(hpcs),
            ),
        ],
    )?;
    plot::write(
        dir,
        "look_ahead_fig7_load_and_failures",
        &[panel(
            "MPCS by load level and host failures (Fig. 7)",
            "messages per entry",
            fig7,
        )],
    )?;
    plot::write(
        dir,
        "look_ahead_vs_ricart_agrawala",
        &[
            panel(
                "MPCS, look-ahead vs Ricart–Agrawala",
                "messages per entry",
                versus(mpcs),
            ),
            panel(
                "HPCS, look-ahead vs Ricart–Agrawala",
                "hops per entry",
                versus(hpcs),
            ),
        ],
    )?;
    Ok(vec![
        "look_ahead_fig4_hops_per_message",
        "look_ahead_fig5_6_load_pattern_and_mobility",
        "look_ahead_fig7_load_and_failures",
        "look_ahead_vs_ricart_agrawala",
    ])
}

/// Prioritized h-out-of-k: wait by priority class under each policy, utilization against
/// load, and wait by requested `h` (maximum concurrency against FCFS).
fn prioritized_figures(args: &Args, dir: &Path) -> Result<Vec<&'static str>, String> {
    let mut a = with(args, Choice::One(Algorithm::Prioritized));
    a.connectivity = Some(vec![0.2]);
    a.mobility = Some(vec![0.0]);
    let loads = if args.smoke {
        vec![0.1]
    } else {
        vec![0.01, 0.03, 0.1, 0.3]
    };
    a.load = Some(loads.clone());
    let (rows, _) = prioritized::run(&a);
    let policies = [
        ("explicit", "explicit priorities"),
        ("fcfs", "FCFS"),
        ("max-concurrency", "max. concurrency"),
    ];
    let at_load = 0.1;
    let classes: Vec<f64> = (0..a.priority_classes).map(f64::from).collect();
    let by_class: Vec<Series> = policies
        .iter()
        .map(|(p, label)| {
            Series::columns(
                label,
                &rows,
                &classes,
                |r| r.param("policy") == Some(p) && param(r, "load", at_load),
                |c| format!("wait_p{c}"),
            )
        })
        .collect();
    let utilization = policies
        .iter()
        .map(|(p, label)| {
            Series::collect(
                label,
                &rows,
                &loads,
                |r, x| r.param("policy") == Some(p) && param(r, "load", x),
                |r, _| plot::extra(r, "utilization"),
            )
        })
        .collect();
    plot::write(
        dir,
        "prioritized_policies",
        &[
            Panel {
                title: format!("Wait by priority class, load {at_load}"),
                x_label: "priority class (higher is more urgent)",
                y_label: "mean wait",
                log_x: false,
                log_y: false,
                series: by_class,
            },
            Panel {
                title: "Utilization (mean resources in use / k)".into(),
                x_label: "load",
                y_label: "utilization",
                log_x: true,
                log_y: false,
                series: utilization,
            },
        ],
    )?;
    let hs: Vec<f64> = (1..=prioritized::k(&a)).map(f64::from).collect();
    let by_h = |p: &str, label: &str| {
        Series::columns(
            label,
            &rows,
            &hs,
            |r| r.param("policy") == Some(p) && param(r, "load", at_load),
            |h| format!("wait_h{h}"),
        )
    };
    plot::write(
        dir,
        "prioritized_wait_by_h",
        &[Panel {
            title: format!("Wait by requested resources h, load {at_load}"),
            x_label: "h (resources requested, of k = 6)",
            y_label: "mean wait",
            log_x: false,
            log_y: false,
            series: vec![
                by_h("max-concurrency", "max. concurrency"),
                by_h("fcfs", "FCFS"),
            ],
        }],
    )?;
    Ok(vec!["prioritized_policies", "prioritized_wait_by_h"])
}
