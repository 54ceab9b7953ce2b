//! How the token simulator scales with the number of nodes: KRL on sparse random graphs (a
//! random spanning tree plus random links, about `--degree` neighbours per node; with
//! `--graph geometric` a random geometric graph, nodes numbered along a Hilbert curve), a fixed
//! number of critical-section entries, one thread. Prints nodes, events, events/s, wall time, peak
//! resident memory (`VmHWM` from `/proc/self/status`, Linux only) and bytes per node.
//!
//! ```text
//! cargo run --release --example scale                                   # 30 → 10,000 nodes
//! cargo run --release --example scale -- --nodes 30,1000,10000,30000,100000 --entries 100000
//! cargo run --release --example scale -- --nodes 30 --checks            # every step checked
//! cargo run --release --example scale -- --nodes 100000 --mobility 0.01 --link-pick sampled
//! cargo run --release --example scale -- --algorithm ricart-agrawala --nodes 10,100,1000 \
//!     --entries 100                                         # the routed simulator's hosts
//! ```
//!
//! `--algorithm look-ahead` and `--algorithm ricart-agrawala` run the routed simulator instead
//! (the look-ahead paper's setting, `RoutedConfig::paper`: hosts always moving, `--load`
//! requests per host per second, default `min(0.05, 1 / hosts)`, at most one request per
//! second in all), to show how the permission algorithms' cost grows with the number of hosts
//! (they send `O(n)` messages per entry by design).
//!
//! With several `--nodes` values each size runs in its own child process, so each row's peak
//! memory is its own. "run s" and "ns/event" cover the whole `token::run`, building the nodes
//! and the final checks included; "build s" is the building part and "loop ns" the rest per
//! event (the event loop and the final checks). `k` defaults to `ceil(n / 1000)` tokens at the
//! first `k` nodes; the request rate per node is `--load` (default: `0.001 k / n`, a
//! network-wide rate of `k / 1000` requests per time unit, well below what `k` tokens can
//! serve), and the load phase lasts `entries / (n · load)` time units, so about `--entries`
//! critical sections are entered whatever `n` is.

use std::process::Command;
use std::time::Instant;

use clap::builder::PossibleValue;
use clap::{Parser, ValueEnum};
use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex_sim::routed::{run_algorithm, RoutedConfig};
use manet_mutex_sim::token::{self, Config};
use manet_mutex_sim::{Algorithm, Graph, LinkPick, Metrics, Params, Simulator, Workload};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The algorithms this program scales: KRL on the token simulator, and the routed
/// simulator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Scaled(Algorithm);

impl ValueEnum for Scaled {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Scaled(Algorithm::Krl),
            Scaled(Algorithm::LookAhead),
            Scaled(Algorithm::RicartAgrawala),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            Algorithm::Krl => "KRL on the token simulator",
            Algorithm::LookAhead => "Look-ahead on the routed simulator",
            Algorithm::RicartAgrawala => "Ricart–Agrawala on the routed simulator",
            _ => return None,
        };
        Some(PossibleValue::new(self.0.arg()).help(help))
    }
}

/// [`LinkPick`] on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Pick {
    /// `LinkPick::Shuffled`.
    Shuffled,
    /// `LinkPick::Sampled`.
    Sampled,
}

/// Which graph KRL runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Topology {
    /// A random spanning tree plus random links (`Graph::random_connected`): neighbours are
    /// spread over the whole network, and so is their state in memory.
    Random,
    /// A random geometric (unit-disk) graph in the unit square, numbered along a Hilbert curve
    /// (`Graph::random_geometric`): a MANET's topology, neighbours close in memory.
    Geometric,
}

/// Run KRL on growing sparse random graphs and report throughput and memory.
#[derive(Debug, Parser)]
#[command(about)]
struct Args {
    /// Which algorithm.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Scaled(Algorithm::Krl))]
    algorithm: Scaled,
    /// Numbers of nodes (comma separated; each runs in its own process).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "30,1000,10000",
        allow_negative_numbers = true
    )]
    nodes: Vec<usize>,
    /// Tokens (default: ceil(nodes / 1000)).
    #[arg(long, allow_negative_numbers = true)]
    k: Option<u32>,
    /// Mean neighbours per node.
    #[arg(long, default_value_t = 10, allow_negative_numbers = true)]
    degree: usize,
    /// The graph KRL runs on.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Topology::Random)]
    graph: Topology,
    /// Critical-section entries to aim for.
    #[arg(long, default_value_t = 20_000, allow_negative_numbers = true)]
    entries: u64,
    /// Requests per node per time unit (default: 0.001 k / nodes).
    #[arg(long, allow_negative_numbers = true)]
    load: Option<f64>,
    /// Link changes per time unit (0: a static network).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    mobility: f64,
    /// How a link change picks the link that fails: the paper's shuffle of every link
    /// (`shuffled`, linear in the links) or random links until one may go (`sampled`).
    #[arg(long, value_enum, ignore_case = true, default_value_t = Pick::Shuffled)]
    link_pick: Pick,
    /// Check the safety invariants after every event.
    #[arg(long)]
    checks: bool,
    /// Look ahead for the cache from this many nodes on (`Config::prefetch_from`; 0: always).
    #[arg(long, default_value_t = Config::<()>::PREFETCH_FROM, allow_negative_numbers = true)]
    prefetch_from: usize,
    /// Events kept for a failure report (0: none).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    trace: usize,
    /// The seed of the graph and of the run.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
    /// Do not print the header line (used by the child processes).
    #[arg(long, hide = true)]
    no_header: bool,
}

/// A `kB` field of `/proc/self/status` in bytes (0 where there is none).
fn status_bytes(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn header() {
    println!(
        "{:>8} {:>5} {:>7} {:>9} {:>11} {:>9} {:>10} {:>8} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "nodes",
        "k",
        "checks",
        "entries",
        "events",
        "graph s",
        "run s",
        "ns/event",
        "Mevents/s",
        "max RSS MB",
        "bytes/node",
        "mean wait",
        "build s",
        "loop ns"
    );
}

/// Print a failed run (its first 2,000 characters) and exit 1.
fn fail(failure: &manet_mutex_sim::Failure) -> ! {
    let report = failure.to_string();
    let cut = report
        .char_indices()
        .nth(2000)
        .map_or(report.len(), |(i, _)| i);
    eprintln!("{}", &report[..cut]);
    std::process::exit(1);
}

/// The anomalies of a run, on stderr (the table on stdout keeps its columns).
fn print_anomalies(n: usize, m: &Metrics) {
    let a = m.anomalies;
    eprintln!(
        "{n} nodes: anomalies reported: {} noise, {} suspect",
        a.noise, a.suspect
    );
}

/// One routed-simulator run of `algorithm` with `n` hosts.
fn run_routed(args: &Args, algorithm: Algorithm, n: usize) {
    let base_rss = status_bytes("VmRSS:");
    // The paper's 0.05 requests per host per second overloads the single critical section
    // (100 ms) from about 200 hosts on: by default at most one request per second in all.
    let load = args.load.unwrap_or(0.05_f64.min(1.0 / n as f64));
    let mut cfg = RoutedConfig::paper(n as u32, load, 1.0, args.seed);
    cfg.target_entries = args.entries;
    cfg.max_time = 4.0 * args.entries as f64 / (n as f64 * load);
    cfg.check_invariants = args.checks;
    cfg.trace_len = args.trace;
    let started = Instant::now();
    let report = run_algorithm(algorithm, &cfg).unwrap_or_else(|f| fail(&f));
    let wall = started.elapsed().as_secs_f64();
    let m = &report.metrics;
    let hwm = status_bytes("VmHWM:");
    println!(
        "{:>8} {:>5} {:>7} {:>9} {:>11} {:>9} {:>10.2} {:>8.0} {:>9.2} {:>10.1} {:>10.0} {:>9.1}  {} msgs/entry {:.1}",
        n,
        "-",
        if args.checks { "on" } else { "off" },
        m.cs_entries,
        m.events,
        "-",
        wall,
        wall * 1e9 / m.events.max(1) as f64,
        m.events as f64 / wall / 1e6,
        hwm as f64 / (1 << 20) as f64,
        hwm.saturating_sub(base_rss) as f64 / n as f64,
        m.summary().mean_wait,
        algorithm.name(),
        m.summary().messages_per_cs,
    );
    print_anomalies(n, m);
}

fn run(args: &Args, n: usize) {
    // A line on stderr every 2 s while the run lasts (`scale (100000 nodes): 0/1 runs, 6 s`).
    let _progress =
        manet_mutex_sim::progress::Progress::new(format!("scale ({n} nodes)"), 1, "runs");
    let Scaled(algorithm) = args.algorithm;
    if algorithm.simulator() == Simulator::Routed {
        return run_routed(args, algorithm, n);
    }
    // Here, not in `validate`: each count is run by its own process, which warns once (the
    // routed simulator draws no graph).
    if args.degree >= n {
        eprintln!(
            "warning: --degree {} with {n} nodes: the graph is complete (degree {})",
            args.degree,
            n - 1
        );
    }
    let base_rss = status_bytes("VmRSS:");
    let k = args.k.unwrap_or_else(|| n.div_ceil(1000) as u32);
    let load = args.load.unwrap_or(0.001 * f64::from(k) / n as f64);
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let graph = match args.graph {
        Topology::Random => Graph::random_connected(n, n * args.degree / 2, &mut rng),
        Topology::Geometric => Graph::random_geometric(n, args.degree as f64, &mut rng),
    };
    let mut config = Config::new(graph, Params::first_nodes(Settings::new(k), k), args.seed);
    config.workload = Workload {
        lambda_req: load,
        ..Workload::default()
    };
    config.lambda_mob = args.mobility;
    config.link_pick = match args.link_pick {
        Pick::Shuffled => LinkPick::Shuffled,
        Pick::Sampled => LinkPick::Sampled,
    };
    config.duration = args.entries as f64 / (n as f64 * load);
    config.check_every_step = args.checks;
    config.prefetch_from = args.prefetch_from;
    config.trace_len = args.trace;
    let built = started.elapsed().as_secs_f64();
    let outcome = token::run::<Node>(config).unwrap_or_else(|f| fail(&f));
    let m = &outcome.metrics;
    let hwm = status_bytes("VmHWM:");
    // With mobility, how many links failed or formed (each random change is one of each).
    let changes = if args.mobility > 0.0 {
        format!("  {} link changes", m.link_changes)
    } else {
        String::new()
    };
    println!(
        "{:>8} {:>5} {:>7} {:>9} {:>11} {:>9.2} {:>10.2} {:>8.0} {:>9.2} {:>10.1} {:>10.0} {:>9.1} {:>9.2} {:>9.0}{changes}",
        n,
        k,
        if args.checks { "on" } else { "off" },
        m.cs_entries,
        m.events,
        built,
        m.wall_seconds,
        m.wall_seconds * 1e9 / m.events.max(1) as f64,
        m.events as f64 / m.wall_seconds / 1e6,
        hwm as f64 / (1 << 20) as f64,
        hwm.saturating_sub(base_rss) as f64 / n as f64,
        m.summary().mean_wait,
        m.build_seconds,
        (m.wall_seconds - m.build_seconds) * 1e9 / m.events.max(1) as f64,
    );
    print_anomalies(n, m);
}

/// Every flag in its range, checked before any run (or child process) starts.
fn validate(args: &Args) -> Result<(), String> {
    if let Some(n) = args.nodes.iter().find(|&&n| n < 2) {
        return Err(format!("--nodes {n}: must be at least 2 (each count)"));
    }
    // Every count of `--nodes` must take the tokens and the degree.
    let fewest = args.nodes.iter().copied().min().unwrap_or(2);
    if let Some(k) = args.k.filter(|&k| k == 0 || k as usize > fewest) {
        return Err(format!(
            "--k {k}: must be between 1 and the fewest --nodes ({fewest}): one token per holder"
        ));
    }
    if args.degree == 0 {
        return Err("--degree 0: must be at least 1 (mean neighbours per node)".into());
    }
    if args.entries == 0 {
        return Err("--entries 0: must be at least 1".into());
    }
    if let Some(load) = args.load.filter(|l| !(l.is_finite() && *l > 0.0)) {
        return Err(format!("--load {load}: must be a rate > 0"));
    }
    if !(args.mobility.is_finite() && args.mobility >= 0.0) {
        return Err(format!("--mobility {}: must be a rate ≥ 0", args.mobility));
    }
    Ok(())
}

fn main() {
    let args = Args::parse();
    if let Err(e) = validate(&args) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    if !args.no_header {
        header();
    }
    if let [n] = args.nodes[..] {
        run(&args, n);
        return;
    }
    let exe = std::env::current_exe().expect("the example's own path");
    let passed: Vec<String> = std::env::args().skip(1).collect();
    for &n in &args.nodes {
        // Drop our `--nodes` (either form) and pass everything else on.
        let mut rest = Vec::new();
        let mut skip = false;
        for a in &passed {
            if skip {
                skip = false;
            } else if a == "--nodes" {
                skip = true;
            } else if !a.starts_with("--nodes=") {
                rest.push(a.clone());
            }
        }
        let status = Command::new(&exe)
            .args(rest)
            .args(["--no-header", "--nodes", &n.to_string()])
            .status()
            .expect("run a child process");
        if !status.success() {
            std::process::exit(status.code().unwrap_or(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{validate, Args};
    use clap::Parser;

    /// The flags as the binary parses them, then checked.
    fn check(flags: &[&str]) -> Result<(), String> {
        let args = Args::try_parse_from(std::iter::once("scale").chain(flags.iter().copied()))
            .map_err(|e| e.to_string())?;
        validate(&args)
    }

    /// Each bad input is refused before anything runs, naming the flag and its range.
    #[test]
    fn bad_input_is_refused_naming_the_flag_and_range() {
        for (flags, says) in [
            (&["--nodes", "1"][..], "--nodes 1: must be at least 2"),
            (&["--nodes", "30,1"], "--nodes 1: must be at least 2"),
            (
                &["--k", "0"],
                "--k 0: must be between 1 and the fewest --nodes (30)",
            ),
            (
                &["--nodes", "5,100", "--k", "6"],
                "--k 6: must be between 1 and the fewest --nodes (5)",
            ),
            (&["--degree", "0"], "--degree 0: must be at least 1"),
            (&["--entries", "0"], "--entries 0: must be at least 1"),
            (&["--load", "0"], "--load 0: must be a rate > 0"),
            (&["--mobility", "-1"], "--mobility -1: must be a rate ≥ 0"),
        ] {
            let err = check(flags).expect_err(&format!("{flags:?} must be refused"));
            assert!(err.contains(says), "{flags:?}: {err}");
        }
        check(&["--nodes", "3,30", "--k", "3"]).unwrap();
    }
}
