//! Token recovery under crashes and partitions (issue 23): the flags (`--recovery`,
//! `--crash-rate`, `--restart-after`, `--partition-rate`, `--partition-for`), the recovery
//! settings derived from the network, the measurements as table and CSV columns, and
//! `--recovery-figure`.

use std::io::Write;
use std::path::Path;
use std::str::FromStr;

use manet_mutex::token::Recovery;
use manet_mutex_sim::experiment::{parallel_map, to_csv, Row};
use manet_mutex_sim::token::Faults;
use manet_mutex_sim::{Algorithm, Metrics};

use super::plot::{self, Panel, Series};
use super::{ci, conn_name, krl, mobility_name, threads, Args, Choice, Point};

/// `--restart-after`: a delay in time units, or `never`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RestartAfter(Option<f64>);

impl FromStr for RestartAfter {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "never" {
            return Ok(RestartAfter(None));
        }
        s.parse()
            .map(|t| RestartAfter(Some(t)))
            .map_err(|_| format!("`{s}`: a number of time units, or `never`"))
    }
}

/// How long a partition stands without `--partition-for`.
const PARTITION_FOR: f64 = 500.0;

/// Entry leases, in critical-section lengths (the workload's is 1 time unit): long enough that
/// no entry of the workload outlives its lease, short beside the silence.
const LEASE: u64 = 10;

/// Whether the command line asks for faults.
fn faulty(args: &Args) -> bool {
    args.crash_rate.is_some()
        || args.restart_after.is_some()
        || args.partition_rate.is_some()
        || args.partition_for.is_some()
}

/// The fault and recovery flags: in range, with what they need, and only for the algorithms
/// that recover lost tokens.
pub fn validate(args: &Args) -> Result<(), String> {
    let first = if args.recovery {
        Some("--recovery")
    } else if args.crash_rate.is_some() {
        Some("--crash-rate")
    } else if args.partition_rate.is_some() {
        Some("--partition-rate")
    } else if args.restart_after.is_some() {
        Some("--restart-after")
    } else {
        args.partition_for.is_some().then_some("--partition-for")
    };
    let Some(flag) = first else {
        return Ok(());
    };
    match args.algorithm {
        Choice::All | Choice::One(Algorithm::Krl | Algorithm::Krlf) => {}
        Choice::One(a) => {
            return Err(format!(
                "{flag}: token recovery under crashes and partitions is not built yet for {} \
                 (issue 23: KRL and KRLF only)",
                a.arg()
            ))
        }
    }
    if args.figures || args.recovery_figure {
        return Err(format!(
            "{flag}: the figures set their own faults and recovery (docs/RESULTS.md)"
        ));
    }
    if faulty(args) && !args.recovery {
        return Err(format!(
            "{flag}: needs --recovery (without it a token lost with a crashed host or a cut \
             link is gone for good, and the run starves)"
        ));
    }
    if args.nodes > 1 << 16 {
        return Err(format!(
            "--recovery: node ids must be below 65,536 (--nodes {})",
            args.nodes
        ));
    }
    if let Some(rates) = &args.crash_rate {
        if rates.is_empty() {
            return Err("--crash-rate: give at least one value".into());
        }
        if let Some(r) = rates.iter().find(|r| !(r.is_finite() && **r >= 0.0)) {
            return Err(format!("--crash-rate {r}: must be a rate ≥ 0"));
        }
    }
    if let Some(RestartAfter(after)) = args.restart_after {
        if args.crash_rate.is_none() {
            return Err("--restart-after: only with --crash-rate".into());
        }
        if let Some(t) = after.filter(|t| !(t.is_finite() && *t >= 0.0)) {
            return Err(format!(
                "--restart-after {t}: must be a time ≥ 0, or `never`"
            ));
        }
    }
    if let Some(r) = args
        .partition_rate
        .filter(|r| !(r.is_finite() && *r >= 0.0))
    {
        return Err(format!("--partition-rate {r}: must be a rate ≥ 0"));
    }
    if let Some(t) = args.partition_for {
        if args.partition_rate.is_none() {
            return Err("--partition-for: only with --partition-rate".into());
        }
        if !(t.is_finite() && t > 0.0) {
            return Err(format!("--partition-for {t}: must be a time > 0"));
        }
    }
    Ok(())
}

/// The recovery settings a network of `nodes` nodes agrees on: messages take one time unit
/// (the simulator's links), and a connected part is at most `nodes - 1` hops across (the only
/// bound that holds for any part crashes, partitions and link changes can make); a holder
/// beacons once per flood's time; entries are leased for [`LEASE`].
pub fn settings(nodes: usize) -> Recovery {
    let diameter = (nodes.max(2) - 1) as u32;
    let hop_bound = 1;
    Recovery::new(u64::from(diameter) * hop_bound, LEASE, hop_bound, diameter)
}

/// The recovery settings of the command line's runs, if recovery is on.
pub fn of(args: &Args) -> Option<Recovery> {
    args.recovery.then(|| settings(args.nodes))
}

/// The faults of a run at grid point `p`.
pub fn faults(args: &Args, p: &Point) -> Faults {
    Faults {
        crash_rate: p.crash_rate,
        restart_after: args.restart_after.and_then(|r| r.0),
        partition_rate: args.partition_rate.unwrap_or(0.0),
        partition_for: args.partition_for.unwrap_or(PARTITION_FOR),
    }
}

/// Print the recovery settings and the faults to `out`, if recovery is on.
pub fn describe(args: &Args, out: &mut impl Write) {
    let Some(r) = of(args) else { return };
    let restart = match args.restart_after.and_then(|r| r.0) {
        Some(t) => format!("restart after {t}"),
        None => "crash-stop".into(),
    };
    let partitions = match args.partition_rate {
        Some(rate) if rate > 0.0 => format!(
            "{rate} partitions per time unit, each for {}",
            args.partition_for.unwrap_or(PARTITION_FOR)
        ),
        _ => "no partitions".into(),
    };
    let crashes = match args.crash_rate.as_deref() {
        Some(rates) if rates.iter().any(|&r| r > 0.0) => {
            let rates: Vec<String> = rates.iter().map(f64::to_string).collect();
            format!(
                "crash rate {} per node per time unit, {restart}",
                rates.join(", ")
            )
        }
        _ => "no crashes".into(),
    };
    let _ = writeln!(
        out,
        "Recovery: beacon every {}, lease {}, hop bound {}, diameter {} (nodes - 1: any \
         connected part), drift {} ppm; so silence {}, claim wait {}. Faults: {crashes}; \
         {partitions}.\n",
        r.beacon_every,
        r.lease,
        r.hop_bound,
        r.diameter,
        r.drift_ppm,
        r.silence(),
        r.claim_wait()
    );
}

/// The recovery columns of a run at `p`, appended after the others when recovery is on.
pub fn extra(args: &Args, p: &Point, m: &Metrics) -> Vec<(&'static str, String)> {
    if !args.recovery {
        return Vec::new();
    }
    let f = faults(args, p);
    let r = &m.recovery;
    // Empty cells when there is nothing to average.
    let cells = |x: Option<(f64, f64)>| {
        x.map_or((String::new(), String::new()), |(a, b)| {
            (format!("{a:.4}"), format!("{b:.4}"))
        })
    };
    let (mean, max) = cells(r.recover());
    let (regen_mean, regen_max) = cells(r.regen());
    vec![
        ("crash_rate", f.crash_rate.to_string()),
        (
            "restart_after",
            f.restart_after.map_or("never".into(), |t| t.to_string()),
        ),
        ("partition_rate", f.partition_rate.to_string()),
        ("partition_for", f.partition_for.to_string()),
        ("crashes", r.crashes.to_string()),
        ("restarts", r.restarts.to_string()),
        ("partitions", r.partitions.to_string()),
        ("tokens_lost", r.tokens_lost.to_string()),
        ("regenerated", r.regenerated.to_string()),
        ("destroyed", r.destroyed.to_string()),
        ("lease_expired", r.lease_expired.to_string()),
        ("refused_stale", r.refused_stale.to_string()),
        ("renumbered", r.renumbered.to_string()),
        ("admitted", r.admitted.to_string()),
        ("overlaps", r.overlaps.to_string()),
        ("recoveries", r.recover_times.len().to_string()),
        ("recover_mean", mean),
        ("recover_max", max),
        ("regen_mean", regen_mean),
        ("regen_max", regen_max),
        ("window", format!("{:.4}", m.sim_time)),
        ("availability", format!("{:.6}", m.availability())),
    ]
}

/// The recovery measurements of `rows` (with recovery on), into `out`: per grid point and
/// algorithm, the mean over seeds of availability and time to recover, and the counts per run.
pub fn print_table(args: &Args, rows: &[Row], out: &mut impl Write) {
    if !args.recovery {
        return;
    }
    let _ = writeln!(
        out,
        "\nRecovery: avail = entries per time unit; regen = time from a token's loss to its \
         regeneration, recover = to the next entry with its id (means, and the largest of any \
         run); the rest per run"
    );
    let header = format!(
        "{:>6} {:>9} {:>7} {:>10} {:>10} {:>15} {:>15} {:>7} {:>15} {:>7} {:>7} {:>7} {:>7} {:>9} {:>8} {:>6}",
        "conn",
        "mobility",
        "load",
        "crash rate",
        "algorithm",
        "avail",
        "regen",
        "max",
        "recover",
        "max",
        "crashes",
        "lost",
        "regen",
        "destroyed",
        "refused",
        "leases"
    );
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{}", "-".repeat(header.len()));
    let mut points: Vec<(String, String, f64, String)> = Vec::new();
    for r in rows {
        let key = (
            r.param("connectivity").unwrap_or_default().to_string(),
            r.param("mobility").unwrap_or_default().to_string(),
            plot::extra(r, "crash_rate").unwrap_or(0.0),
            r.param("load").unwrap_or_default().to_string(),
        );
        if !points.contains(&key) {
            points.push(key);
        }
    }
    for (c, m, rate, l) in &points {
        for name in [Algorithm::Krl.name(), Algorithm::Krlf.name()] {
            let at = |r: &Row| {
                r.algorithm == name
                    && r.param("connectivity") == Some(c)
                    && r.param("mobility") == Some(m)
                    && r.param("load") == Some(l)
                    && plot::extra(r, "crash_rate") == Some(*rate)
            };
            let matching: Vec<&Row> = rows.iter().filter(|r| at(r)).collect();
            if matching.is_empty() {
                continue;
            }
            let per_run = |column: &str| {
                let total: f64 = matching.iter().filter_map(|r| plot::extra(r, column)).sum();
                format!("{:.1}", total / matching.len() as f64)
            };
            let largest = |column: &str| {
                matching
                    .iter()
                    .filter_map(|r| plot::extra(r, column))
                    .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
                    .map_or("-".into(), |m| format!("{m:.1}"))
            };
            let _ = writeln!(
                out,
                "{:>6} {:>9} {:>7} {:>10} {:>10} {} {} {:>7} {} {:>7} {:>7} {:>7} {:>7} {:>9} {:>8} {:>6}",
                conn_name(args, c.parse().unwrap_or(0.0)),
                mobility_name(args, m.parse().unwrap_or(0.0)),
                l,
                rate,
                name,
                ci(rows, at, |r| plot::extra(r, "availability"), 15, 3),
                ci(rows, at, |r| plot::extra(r, "regen_mean"), 15, 1),
                largest("regen_max"),
                ci(rows, at, |r| plot::extra(r, "recover_mean"), 15, 1),
                largest("recover_max"),
                per_run("crashes"),
                per_run("tokens_lost"),
                per_run("regenerated"),
                per_run("destroyed"),
                per_run("refused_stale"),
                per_run("lease_expired"),
            );
        }
    }
}

/// The crash rates of the figure, per node per time unit.
const CRASH_RATES: [f64; 5] = [0.0, 1e-5, 3e-5, 1e-4, 3e-4];
/// The figure's restart delay: a crashed host comes back this long after its crash.
const RESTART_AFTER: f64 = 100.0;
/// The figure's link changes per time unit: none, and the KRL paper's high mobility.
const MOBILITY: [(f64, &str); 2] = [(0.0, "static"), (0.02, "high mobility (1/50)")];
/// Requests per run: about 20,000 time units of load at 30 nodes and load 0.1.
const REQUESTS: f64 = 60_000.0;

/// The figure's name: `NAME.svg` and `NAME.csv` (its points), `NAME_runs.csv` (every run)
/// and `NAME.txt` (the numbers as a table, and the runs that failed).
pub const FIGURE: &str = "recovery_vs_crash_rate";

/// `--recovery-figure` (and part of `--figures`): availability and time to recover against the
/// crash rate, for KRL and KRLF with recovery, k = 1 and 2, static and highly mobile, on the
/// KRL paper's section 6 network (30 nodes, 20% of the links, load 0.1), crashed hosts
/// restarting after [`RESTART_AFTER`], into `dir`. A run that fails is reported (stderr and
/// the table) and left out of the means: the failures are the protocol's, so the figure shows
/// what the runs that survive them measure, and how many did not.
pub fn figure(args: &Args, dir: &Path) -> Result<Vec<&'static str>, String> {
    let rates: Vec<f64> = if args.smoke {
        vec![0.0, 3e-4]
    } else {
        CRASH_RATES.to_vec()
    };
    let mut a = args.clone();
    a.algorithm = Choice::All;
    a.recovery = true;
    a.nodes = 30;
    a.connectivity = Some(vec![0.2]);
    a.load = Some(vec![0.1]);
    a.restart_after = Some(RestartAfter(Some(RESTART_AFTER)));
    a.partition_rate = None;
    a.partition_for = None;
    a.requests = if args.smoke {
        REQUESTS / 10.0
    } else {
        REQUESTS
    };
    a.out = None;
    let mut jobs = Vec::new();
    for k in [1, 2] {
        for algorithm in [Algorithm::Krl, Algorithm::Krlf] {
            for &(mobility, _) in &MOBILITY {
                for &crash_rate in &rates {
                    for seed in 1..=args.seeds {
                        let p = Point {
                            connectivity: 0.2,
                            mobility,
                            load: 0.1,
                            crash_rate,
                            seed,
                        };
                        jobs.push((k, algorithm, p));
                    }
                }
            }
        }
    }
    let bar = super::progress(jobs.len());
    let results = parallel_map(&jobs, threads(args), |(k, algorithm, p)| {
        let mut a = a.clone();
        a.k = Some(*k);
        let row = krl::run_one(&a, *algorithm, p);
        bar.inc(1);
        row
    });
    bar.finish();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (result, (k, algorithm, p)) in results.into_iter().zip(&jobs) {
        match result {
            Ok(row) => rows.push(row),
            Err(e) => failures.push(format!(
                "{} k = {k}, mobility {}, crash rate {}, seed {}: {}",
                algorithm.name(),
                p.mobility,
                p.crash_rate,
                p.seed,
                e.lines().next().unwrap_or_default()
            )),
        }
    }
    for f in &failures {
        eprintln!("failed: {f}");
    }
    write_figure(dir, &rates, &rows)?;
    let runs = dir.join(format!("{FIGURE}_runs.csv"));
    std::fs::write(&runs, to_csv(&rows)).map_err(|e| format!("{}: {e}", runs.display()))?;
    a.crash_rate = Some(rates);
    let mut text = Vec::new();
    describe(&a, &mut text);
    for k in [1, 2] {
        let of_k: Vec<Row> = rows
            .iter()
            .filter(|r| r.param("k") == Some(&k.to_string()))
            .cloned()
            .collect();
        let _ = write!(text, "k = {k}, {} per point:", super::seeds(args.seeds));
        print_table(&a, &of_k, &mut text);
        let _ = writeln!(text);
    }
    let _ = writeln!(text, "{} of {} runs failed", failures.len(), jobs.len());
    for f in &failures {
        let _ = writeln!(text, "  {f}");
    }
    let table = dir.join(format!("{FIGURE}.txt"));
    std::fs::write(&table, &text).map_err(|e| format!("{}: {e}", table.display()))?;
    Ok(vec![FIGURE])
}
/// The figure's four panels: availability and time to recover, static and mobile.
fn write_figure(dir: &Path, rates: &[f64], rows: &[Row]) -> Result<(), String> {
    // The axis shows the rate per 10,000 time units, so its labels stay short.
    let scale = 1e4;
    let xs: Vec<f64> = rates.iter().map(|r| r * scale).collect();
    let lines = [
        (Algorithm::Krl, 1),
        (Algorithm::Krlf, 1),
        (Algorithm::Krl, 2),
        (Algorithm::Krlf, 2),
    ];
    let series = |mobility: f64, column: &'static str| -> Vec<Series> {
        lines
            .iter()
            .map(|&(algorithm, k)| {
                Series::collect(
                    &format!("{}, k = {k}", algorithm.name()),
                    rows,
                    &xs,
                    |r, x| {
                        r.algorithm == algorithm.name()
                            && r.param("k") == Some(&k.to_string())
                            && r.param("mobility").and_then(|m| m.parse().ok()) == Some(mobility)
                            && plot::extra(r, "crash_rate") == Some(x / scale)
                    },
                    |r, _| plot::extra(r, column),
                )
            })
            .collect()
    };
    let bound = settings(30);
    let floor = (bound.silence() + bound.claim_wait()) as f64;
    let x_label = "crashes per node per 10,000 time units";
    let mut panels = Vec::new();
    for &(mobility, level) in &MOBILITY {
        panels.push(Panel {
            title: format!("Availability, {level}"),
            x_label,
            y_label: "entries per time unit",
            log_x: false,
            log_y: false,
            series: series(mobility, "availability"),
        });
    }
    for &(mobility, level) in &MOBILITY {
        let mut s = series(mobility, "recover_mean");
        s.push(Series {
            name: "silence + claim wait".into(),
            points: xs
                .iter()
                .filter(|&&x| x > 0.0)
                .map(|&x| (x, floor, 0.0))
                .collect(),
        });
        panels.push(Panel {
            title: format!("Time to recover, {level}"),
            x_label,
            y_label: "loss to next entry with the id",
            log_x: false,
            log_y: false,
            series: s,
        });
    }
    plot::write(dir, FIGURE, &panels)
}
