//! The main job: reproduce the KRL paper's section 6 experiment (30 nodes, k = 3,
//! connectivity 20% and 80%, zero/low/high mobility, load 1e-3..1, KRL vs KRLF, 5 seeds per
//! point) and print the time and messages per critical-section entry.
//!
//! ```text
//! cargo run --release --example simulate                 # the paper's grid, as a table
//! cargo run --release --example simulate -- --csv        # one CSV row per run
//! cargo run --release --example simulate -- --algorithm krlf --connectivity 0.2 \
//!     --mobility 0.02 --load 0.1 --seeds 1               # a single configuration
//! ```

use clap::{Parser, ValueEnum};
use manet_mutex::reverse_link::{Node, Params};
use manet_mutex::sim::experiment::{mean_of, parallel_map, to_csv, Row};
use manet_mutex::sim::token::{self, Config};
use manet_mutex::sim::{Graph, Workload};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Algorithm {
    /// KRL and KRLF side by side.
    All,
    /// KRL (k = 1 is RL).
    Krl,
    /// KRL with token forwarding.
    Krlf,
}

/// Simulate the reverse-link k-mutual-exclusion algorithms (KRL paper, section 6).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Which algorithm(s) to run.
    #[arg(long, value_enum, default_value_t = Algorithm::All)]
    algorithm: Algorithm,
    /// Number of nodes.
    #[arg(long, default_value_t = 30)]
    nodes: usize,
    /// Number of tokens.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Fractions of the possible links present (comma separated).
    #[arg(long, value_delimiter = ',', default_values_t = [0.2, 0.8])]
    connectivity: Vec<f64>,
    /// Link changes per time unit (0 = static; the paper's low is 1/500, high 1/50).
    #[arg(long, value_delimiter = ',', default_values_t = [0.0, 0.002, 0.02])]
    mobility: Vec<f64>,
    /// Requests per node per time unit (λ_req).
    #[arg(long, value_delimiter = ',', default_values_t = [0.001, 0.01, 0.1, 1.0])]
    load: Vec<f64>,
    /// Seeds (runs) per point.
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// Requests per run to aim for: the load phase lasts max(500, requests / (nodes · load)).
    #[arg(long, default_value_t = 1000.0)]
    requests: f64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print one CSV row per run instead of the table.
    #[arg(long)]
    csv: bool,
    /// Skip the per-step invariant checks (they are on by default).
    #[arg(long)]
    no_checks: bool,
}

#[derive(Debug, Clone, Copy)]
struct Point {
    forwarding: bool,
    connectivity: f64,
    mobility: f64,
    load: f64,
    seed: u64,
}

fn run_point(args: &Args, p: &Point) -> Result<Row, String> {
    let possible = args.nodes * args.nodes.saturating_sub(1) / 2;
    let edges = (p.connectivity * possible as f64).round() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let graph = Graph::random_connected(args.nodes, edges, &mut rng);
    let params = Params {
        k: args.k,
        forwarding: p.forwarding,
    };
    let mut config = Config::new(graph, params, p.seed);
    config.workload = Workload {
        lambda_req: p.load,
        ..Workload::default()
    };
    config.lambda_mob = p.mobility;
    config.duration = (args.requests / (args.nodes as f64 * p.load)).max(500.0);
    config.check_every_step = !args.no_checks;
    config.trace_len = 0;
    let outcome = token::run::<Node>(config).map_err(|v| v.to_string())?;
    Ok(Row {
        algorithm: if p.forwarding { "KRLF" } else { "KRL" }.into(),
        params: vec![
            ("nodes", args.nodes.to_string()),
            ("k", args.k.to_string()),
            ("connectivity", p.connectivity.to_string()),
            ("mobility", p.mobility.to_string()),
            ("load", p.load.to_string()),
        ],
        seed: p.seed,
        summary: outcome.metrics.summary(),
    })
}

fn main() {
    let args = Args::parse();
    let forwarding: &[bool] = match args.algorithm {
        Algorithm::All => &[false, true],
        Algorithm::Krl => &[false],
        Algorithm::Krlf => &[true],
    };
    let mut points = Vec::new();
    for &connectivity in &args.connectivity {
        for &mobility in &args.mobility {
            for &load in &args.load {
                for &fw in forwarding {
                    for seed in 0..args.seeds {
                        points.push(Point {
                            forwarding: fw,
                            connectivity,
                            mobility,
                            load,
                            seed: seed + 1,
                        });
                    }
                }
            }
        }
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let started = std::time::Instant::now();
    let results = parallel_map(&points, threads, |p| run_point(&args, p));
    let wall = started.elapsed().as_secs_f64();
    let mut rows = Vec::new();
    for r in results {
        match r {
            Ok(row) => rows.push(row),
            Err(violation) => {
                eprintln!("{violation}");
                std::process::exit(1);
            }
        }
    }
    if args.csv {
        print!("{}", to_csv(&rows));
        return;
    }
    print_table(&args, &rows, forwarding);
    let entries: u64 = rows.iter().map(|r| r.summary.cs_entries).sum();
    let rate = mean_of(&rows, |_| true, |s| s.events_per_second).unwrap_or(0.0);
    println!(
        "\n{} runs, {entries} critical-section entries, {wall:.1} s wall on {threads} threads; \
         simulator throughput {rate:.0} events/s per thread (invariants {})",
        rows.len(),
        if args.no_checks {
            "off"
        } else {
            "checked after every event"
        }
    );
}

fn print_table(args: &Args, rows: &[Row], forwarding: &[bool]) {
    let names: Vec<&str> = forwarding
        .iter()
        .map(|&f| if f { "KRLF" } else { "KRL" })
        .collect();
    println!(
        "KRL paper, section 6: {} nodes, k = {}, mean of {} seeds per point",
        args.nodes, args.k, args.seeds
    );
    println!("time = mean wait per CS entry; msgs = messages per CS entry\n");
    let mut header = format!("{:>6} {:>9} {:>7}", "conn", "mobility", "load");
    for n in &names {
        header += &format!(" {:>10} {:>10}", format!("{n} time"), format!("{n} msgs"));
    }
    println!("{header}");
    println!("{}", "-".repeat(header.len()));
    for &c in &args.connectivity {
        for &m in &args.mobility {
            for &l in &args.load {
                let mut line = format!("{:>5.0}% {:>9} {:>7}", c * 100.0, mobility_name(m), l);
                for name in &names {
                    let at = |r: &Row| {
                        r.algorithm == *name
                            && r.param("connectivity") == Some(&c.to_string())
                            && r.param("mobility") == Some(&m.to_string())
                            && r.param("load") == Some(&l.to_string())
                    };
                    let time = mean_of(rows, at, |s| s.mean_wait).unwrap_or(f64::NAN);
                    let msgs = mean_of(rows, at, |s| s.messages_per_cs).unwrap_or(f64::NAN);
                    line += &format!(" {time:>10.2} {msgs:>10.2}");
                }
                println!("{line}");
            }
        }
    }
}

fn mobility_name(rate: f64) -> String {
    if rate == 0.0 {
        "zero".into()
    } else {
        format!("1/{:.0}", 1.0 / rate)
    }
}
