//! Prioritized h-out-of-k under its three priority policies on the same workloads.

use clap::ValueEnum;
use manet_mutex::prioritized::{Node, Policy, Settings};
use manet_mutex::NodeId;
use manet_mutex_sim::experiment::{mean_extra, Row};
use manet_mutex_sim::token::{self, Config};
use manet_mutex_sim::{Algorithm, Dist, Params, Workload};

use super::krl::config;
use super::{ci, conn_name, grid, mobility_name, run_all, Args, Point};

const CONNECTIVITY: [f64; 1] = [0.2];
const MOBILITY: [f64; 2] = [0.0, 0.02];
const LOAD: [f64; 2] = [0.01, 0.1];

/// A priority policy on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PolicyArg {
    /// Application priorities (real-time / highest priority first served).
    Explicit,
    /// Equal priorities: first come, first served.
    Fcfs,
    /// Fewest requested resources first (maximum degree of concurrency).
    MaxConcurrency,
}

impl PolicyArg {
    fn policy(self) -> Policy {
        match self {
            PolicyArg::Explicit => Policy::Explicit,
            PolicyArg::Fcfs => Policy::Equal,
            PolicyArg::MaxConcurrency => Policy::MaxConcurrency,
        }
    }

    fn name(self) -> &'static str {
        match self {
            PolicyArg::Explicit => "explicit",
            PolicyArg::Fcfs => "fcfs",
            PolicyArg::MaxConcurrency => "max-concurrency",
        }
    }
}

const POLICIES: [PolicyArg; 3] = [
    PolicyArg::Explicit,
    PolicyArg::Fcfs,
    PolicyArg::MaxConcurrency,
];

pub fn k(args: &Args) -> u32 {
    args.k.unwrap_or(6)
}

fn max_h(args: &Args) -> u32 {
    args.max_h.unwrap_or(k(args)).clamp(1, k(args))
}

/// The run of one job: `policy` at grid point `p`.
fn job(args: &Args, policy: PolicyArg, p: &Point) -> Config<Params<Settings>> {
    let settings = Settings::new(k(args), policy.policy()).with_aging_step(args.aging_step.max(1));
    let mut config = config(args, p, Params::new(settings, vec![NodeId(0)]));
    config.workload = Workload {
        lambda_req: p.load,
        resources: Dist::Uniform {
            lo: 1,
            hi: max_h(args),
        },
        priority: Dist::Uniform {
            lo: 0,
            hi: args.priority_classes.max(1) - 1,
        },
        ..Workload::default()
    };
    config
}

/// The first job of the grid, recorded for the viewer (`--trace`).
pub fn record(args: &Args) -> Result<super::Recorded, String> {
    let p = grid(args, &CONNECTIVITY, &MOBILITY, &LOAD)[0];
    super::record_run::<Node>(job(args, policies(args)[0], &p), args.trace_all)
}

fn run_one(args: &Args, policy: PolicyArg, p: &Point) -> Result<Row, String> {
    let k = k(args);
    let config = job(args, policy, p);
    let outcome = token::run::<Node>(config).map_err(|v| v.to_string())?;
    let m = &outcome.metrics;
    let by_h = m.wait_by(|r| r.resources);
    let by_class = m.wait_by(|r| r.priority);
    let mut extra = vec![("utilization", format!("{:.4}", m.utilization(k)))];
    const H_COLUMNS: [&str; 8] = [
        "wait_h1", "wait_h2", "wait_h3", "wait_h4", "wait_h5", "wait_h6", "wait_h7", "wait_h8",
    ];
    const P_COLUMNS: [&str; 8] = [
        "wait_p0", "wait_p1", "wait_p2", "wait_p3", "wait_p4", "wait_p5", "wait_p6", "wait_p7",
    ];
    for (h, name) in (1..=max_h(args)).zip(H_COLUMNS) {
        extra.push((
            name,
            by_h.get(&h)
                .map_or(String::new(), |w| format!("{:.4}", w.1)),
        ));
    }
    for (c, name) in (0..args.priority_classes).zip(P_COLUMNS) {
        extra.push((
            name,
            by_class
                .get(&c)
                .map_or(String::new(), |w| format!("{:.4}", w.1)),
        ));
    }
    Ok(Row {
        algorithm: Algorithm::Prioritized.name().into(),
        params: vec![
            ("nodes", args.nodes.to_string()),
            ("k", k.to_string()),
            ("connectivity", p.connectivity.to_string()),
            ("mobility", p.mobility.to_string()),
            ("load", p.load.to_string()),
            ("policy", policy.name().into()),
            ("h", format!("1..={}", max_h(args))),
        ],
        seed: p.seed,
        summary: m.summary(),
        extra,
    })
}

fn policies(args: &Args) -> &[PolicyArg] {
    args.policy.as_deref().unwrap_or(&POLICIES)
}

pub fn run(args: &Args) -> (Vec<Row>, f64) {
    let points = grid(args, &CONNECTIVITY, &MOBILITY, &LOAD);
    let jobs: Vec<(PolicyArg, Point)> = policies(args)
        .iter()
        .flat_map(|&pol| points.iter().map(move |p| (pol, *p)))
        .collect();
    run_all(args, &jobs, |(pol, p)| run_one(args, *pol, p))
}

pub fn print_table(args: &Args, rows: &[Row]) {
    println!(
        "Prioritized h-out-of-k: {} nodes, k = {}, h uniform 1..={}, {} priority classes, aging step {}, mean of {}",
        args.nodes,
        k(args),
        max_h(args),
        args.priority_classes,
        args.aging_step,
        super::seeds(args.seeds)
    );
    println!("wait = mean wait per CS entry; util = mean resources in use / k\n");
    let header = format!(
        "{:>16} {:>6} {:>9} {:>7} {:>15} {:>15} {:>15} {:>13} {:>15}",
        "policy", "conn", "mobility", "load", "wait", "p99", "max", "msgs", "util"
    );
    println!("{header}");
    println!("{}", "-".repeat(header.len()));
    for &pol in policies(args) {
        for &c in args.connectivity.as_deref().unwrap_or(&CONNECTIVITY) {
            for &m in args.mobility.as_deref().unwrap_or(&MOBILITY) {
                for &l in args.load.as_deref().unwrap_or(&LOAD) {
                    let at = |r: &Row| {
                        r.at(&[
                            ("policy", pol.name().into()),
                            ("connectivity", c.to_string()),
                            ("mobility", m.to_string()),
                            ("load", l.to_string()),
                        ])
                    };
                    let served = |r: &Row| r.summary.cs_entries > 0;
                    let cell = |f: fn(&manet_mutex_sim::Summary) -> f64, width| {
                        ci(rows, at, |r| served(r).then(|| f(&r.summary)), width, 2)
                    };
                    let util = ci(
                        rows,
                        at,
                        |r| {
                            r.extra
                                .iter()
                                .find(|(n, _)| *n == "utilization")?
                                .1
                                .parse()
                                .ok()
                        },
                        15,
                        3,
                    );
                    println!(
                        "{:>16} {:>6} {:>9} {:>7} {} {} {} {} {util}",
                        pol.name(),
                        conn_name(args, c),
                        mobility_name(args, m),
                        l,
                        cell(|s| s.mean_wait, 15),
                        cell(|s| s.p99_wait, 15),
                        cell(|s| s.max_wait, 15),
                        cell(|s| s.messages_per_cs, 13),
                    );
                }
            }
        }
    }
    for (title, prefix, keys) in [
        (
            "requested resources h",
            "wait_h",
            (1..=max_h(args)).collect::<Vec<_>>(),
        ),
        (
            "priority class",
            "wait_p",
            (0..args.priority_classes).collect(),
        ),
    ] {
        println!("\nmean wait by {title}, per policy and load (pooled over the other coordinates)");
        let mut header = format!("{:>16} {:>7}", "policy", "load");
        for key in &keys {
            header += &format!(" {:>7}", format!("{}={key}", &prefix[5..]));
        }
        println!("{header}");
        for &pol in policies(args) {
            for &l in args.load.as_deref().unwrap_or(&LOAD) {
                let matching: Vec<&Row> = rows
                    .iter()
                    .filter(|r| r.at(&[("policy", pol.name().into()), ("load", l.to_string())]))
                    .collect();
                let mut line = format!("{:>16} {:>7}", pol.name(), l);
                for key in &keys {
                    let v = mean_extra(&matching, &format!("{prefix}{key}")).unwrap_or(f64::NAN);
                    line += &format!(" {v:>7.1}");
                }
                println!("{line}");
            }
        }
    }
}
