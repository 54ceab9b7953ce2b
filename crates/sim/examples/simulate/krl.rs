//! KRL vs KRLF: the KRL paper's section 6.

use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex_sim::experiment::Row;
use manet_mutex_sim::token::{self, Config};
use manet_mutex_sim::{Algorithm, Graph, Params, Plugin, Workload};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{ci, conn_name, grid, mobility_name, recovery, run_all, Args, Choice, Point};

const CONNECTIVITY: [f64; 2] = [0.2, 0.8];
const MOBILITY: [f64; 3] = [0.0, 0.002, 0.02];
const LOAD: [f64; 4] = [0.001, 0.01, 0.1, 1.0];

pub fn k(args: &Args) -> u32 {
    args.k.unwrap_or(3)
}

/// KRL, KRLF, or both side by side.
fn variants(args: &Args) -> &'static [Algorithm] {
    match args.algorithm {
        Choice::One(Algorithm::Krl) => &[Algorithm::Krl],
        Choice::One(Algorithm::Krlf) => &[Algorithm::Krlf],
        _ => &[Algorithm::Krl, Algorithm::Krlf],
    }
}

/// The links of `graph`'s graphs for `connectivity`, and the possible ones: the nearest whole
/// number to the fraction, but at least the `nodes − 1` of a connected graph.
pub fn links(nodes: usize, connectivity: f64) -> (usize, usize) {
    let possible = nodes * nodes.saturating_sub(1) / 2;
    let edges = (connectivity * possible as f64).round() as usize;
    (edges.clamp(nodes.saturating_sub(1), possible), possible)
}

/// The connectivity `graph` reaches for `connectivity`.
pub fn reached(nodes: usize, connectivity: f64) -> f64 {
    let (links, possible) = links(nodes, connectivity);
    links as f64 / possible as f64
}

/// A random connected graph with the given fraction of the possible links.
pub fn graph(nodes: usize, connectivity: f64, seed: u64) -> Graph {
    let (edges, _) = links(nodes, connectivity);
    Graph::random_connected(nodes, edges, &mut ChaCha8Rng::seed_from_u64(seed))
}

/// A run's configuration at grid point `p`, all but its workload: a random graph with
/// random link changes, or the `--ns2` trace's links and their changes.
pub fn config<S>(args: &Args, p: &Point, params: Params<S>) -> Config<Params<S>> {
    let mut config = match &args.trace {
        Some(trace) => {
            let replay = trace.replay(args.radius, args.duration(p.load));
            let graph = Graph::from_edges(trace.nodes(), &replay.initial);
            let mut config = Config::new(graph, params, p.seed);
            config.replay = replay.changes;
            config
        }
        None => {
            let mut config = Config::new(graph(args.nodes, p.connectivity, p.seed), params, p.seed);
            config.lambda_mob = p.mobility;
            config
        }
    };
    config.duration = args.duration(p.load);
    config.check_every_step = !args.no_checks;
    config.trace_len = 0;
    config
}

/// The run of one job: KRL, or KRLF, at grid point `p`.
fn job(args: &Args, algorithm: Algorithm, p: &Point) -> Config<Params<Settings>> {
    let forwarding = algorithm == Algorithm::Krlf;
    let mut settings = Settings::new(k(args)).with_forwarding(forwarding);
    if forwarding && args.idle_pause > 0 {
        settings = settings.with_idle_pause(args.idle_pause);
    }
    if let Some(pause) = args.raise_pause {
        settings = settings.with_raise_pause(pause);
    }
    if let Some(r) = recovery::of(args) {
        settings = settings.with_recovery(r);
    }
    let mut config = config(args, p, Params::first_nodes(settings, k(args)));
    config.workload = Workload {
        lambda_req: p.load,
        ..Workload::default()
    };
    if args.recovery {
        config.faults = recovery::faults(args, p);
    }
    config
}

/// The first job of the grid, recorded for the viewer (`--trace`).
pub fn record(args: &Args) -> Result<super::Recorded, String> {
    let p = grid(args, &CONNECTIVITY, &MOBILITY, &LOAD)[0];
    super::record_run::<Node>(job(args, variants(args)[0], &p), args.trace_all)
}

/// One run: `algorithm` at grid point `p`, as a row (with the recovery columns when recovery
/// is on), or the failure.
pub fn run_one(args: &Args, algorithm: Algorithm, p: &Point) -> Result<Row, String> {
    let config = job(args, algorithm, p);
    let name = Node::name(&config.params);
    let outcome = token::run::<Node>(config).map_err(|f| f.to_string())?;
    let extra = recovery::extra(args, p, &outcome.metrics);
    let mut params = vec![
        ("nodes", args.nodes.to_string()),
        ("k", k(args).to_string()),
        ("connectivity", p.connectivity.to_string()),
        ("mobility", p.mobility.to_string()),
        ("load", p.load.to_string()),
        ("idle_pause", args.idle_pause.to_string()),
    ];
    // A column only when given: the paper's tables and CSVs stay as they were.
    if let Some(pause) = args.raise_pause {
        params.push(("raise_pause", format!("{}-{}", pause.min, pause.max)));
    }
    Ok(Row {
        algorithm: name.into(),
        params,
        seed: p.seed,
        summary: outcome.metrics.summary(),
        extra,
    })
}

pub fn run(args: &Args) -> (Vec<Row>, f64) {
    let points = grid(args, &CONNECTIVITY, &MOBILITY, &LOAD);
    let jobs: Vec<(Algorithm, Point)> = variants(args)
        .iter()
        .flat_map(|&a| points.iter().map(move |p| (a, *p)))
        .collect();
    run_all(args, &jobs, |(a, p)| run_one(args, *a, p))
}

/// What was run: the KRL paper's section 6 only when nothing of its setup was changed.
pub fn title(args: &Args) -> String {
    let what = match args.algorithm {
        Choice::One(Algorithm::Krl) if k(args) == 1 => "RL (KRL with k = 1)",
        Choice::One(Algorithm::Krl) => "KRL",
        Choice::One(_) => "KRLF",
        Choice::All => "KRL and KRLF",
    };
    let changed = [
        "nodes",
        "k",
        "connectivity",
        "mobility",
        "load",
        "requests",
        "idle_pause",
        "raise_pause",
        "recovery",
    ];
    let setup = match &args.ns2 {
        Some(file) => format!(", ns-2 trace {} (radius {} m)", file.display(), args.radius),
        None if args.algorithm == Choice::All && !changed.iter().any(|f| args.given(f)) => {
            " (the KRL paper, section 6)".into()
        }
        None => String::new(),
    };
    format!(
        "{what}{setup}: {} nodes, k = {}, mean of {} per point",
        args.nodes,
        k(args),
        super::seeds(args.seeds)
    )
}

pub fn print_table(args: &Args, rows: &[Row]) {
    let names: Vec<&str> = variants(args).iter().map(|a| a.name()).collect();
    println!("{}", title(args));
    println!("time = mean wait per CS entry; msgs = messages per CS entry\n");
    let mut header = format!("{:>6} {:>9} {:>7}", "conn", "mobility", "load");
    // A column for the crash rate only when it varies: the table is otherwise as it was.
    let crash_rates = args.crash_rate.as_deref();
    if crash_rates.is_some() {
        header += &format!(" {:>10}", "crash rate");
    }
    for n in &names {
        header += &format!(" {:>15} {:>13}", format!("{n} time"), format!("{n} msgs"));
    }
    println!("{header}");
    println!("{}", "-".repeat(header.len()));
    for &c in args.connectivity.as_deref().unwrap_or(&CONNECTIVITY) {
        for &m in args.mobility.as_deref().unwrap_or(&MOBILITY) {
            for &l in args.load.as_deref().unwrap_or(&LOAD) {
                for &rate in crash_rates.unwrap_or(&[0.0]) {
                    let mut line = format!(
                        "{:>6} {:>9} {:>7}",
                        conn_name(args, c),
                        mobility_name(args, m),
                        l
                    );
                    if crash_rates.is_some() {
                        line += &format!(" {rate:>10}");
                    }
                    for name in &names {
                        let at = |r: &Row| {
                            r.algorithm == *name
                                && r.at(&[
                                    ("connectivity", c.to_string()),
                                    ("mobility", m.to_string()),
                                    ("load", l.to_string()),
                                ])
                                && (crash_rates.is_none()
                                    || super::plot::extra(r, "crash_rate") == Some(rate))
                        };
                        let served = |r: &Row| r.summary.cs_entries > 0;
                        let time = ci(
                            rows,
                            at,
                            |r| served(r).then_some(r.summary.mean_wait),
                            15,
                            2,
                        );
                        let msgs = ci(
                            rows,
                            at,
                            |r| served(r).then_some(r.summary.messages_per_cs),
                            13,
                            2,
                        );
                        line += &format!(" {time} {msgs}");
                    }
                    println!("{line}");
                }
            }
        }
    }
}
