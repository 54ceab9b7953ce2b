//! The main job: reproduce the papers' simulation experiments and print them as tables (or
//! CSV). With no arguments it runs the KRL paper's section 6 setup: 30 nodes, k = 3,
//! connectivity 20% and 80%, zero/low/high mobility, load 1e-3..1, KRL vs KRLF, 5 seeds per
//! point, every invariant checked after every event.
//!
//! ```text
//! cargo run --release --example simulate                          # KRL vs KRLF, the paper's grid
//! cargo run --release --example simulate -- --csv                 # one CSV row per run
//! cargo run --release --example simulate -- --algorithm krlf --connectivity 0.2 \
//!     --mobility 0.02 --load 0.1 --seeds 1                        # a single configuration
//! cargo run --release --example simulate -- --algorithm prioritized   # h-out-of-k policies
//! cargo run --release --example simulate -- --algorithm look-ahead    # vs Ricart–Agrawala
//! ```

mod krl;
mod look_ahead;
mod prioritized;

use clap::{Parser, ValueEnum};
use manet_mutex::sim::experiment::{parallel_map, to_csv, Row};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Algorithm {
    /// KRL and KRLF side by side (the KRL paper, section 6).
    All,
    /// KRL alone (k = 1 is RL).
    Krl,
    /// KRL with token forwarding alone.
    Krlf,
    /// Prioritized h-out-of-k under its three priority policies.
    Prioritized,
    /// Look-ahead beside Ricart–Agrawala (the look-ahead paper, section V).
    LookAhead,
}

/// Simulate distributed mutual exclusion algorithms on mobile ad hoc networks.
#[derive(Debug, Parser)]
#[command(version, about)]
pub struct Args {
    /// Which algorithm(s) to run.
    #[arg(long, value_enum, default_value_t = Algorithm::All)]
    algorithm: Algorithm,
    /// Number of nodes.
    #[arg(long, default_value_t = 30)]
    nodes: usize,
    /// Tokens (KRL) or resources (prioritized); default 3 for KRL, 6 for prioritized.
    #[arg(long)]
    k: Option<u32>,
    /// Fractions of the possible links present (comma separated).
    #[arg(long, value_delimiter = ',')]
    connectivity: Option<Vec<f64>>,
    /// Token algorithms: link changes per time unit (0 = static; the KRL paper's low is
    /// 1/500, high 1/50). Look-ahead: fraction of time hosts move (1, 0.5, 0.1).
    #[arg(long, value_delimiter = ',')]
    mobility: Option<Vec<f64>>,
    /// Requests per node per time unit (λ_req; per second for look-ahead).
    #[arg(long, value_delimiter = ',')]
    load: Option<Vec<f64>>,
    /// Seeds (runs) per point.
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// Requests per run to aim for: the load phase lasts max(500, requests / (nodes · load)).
    #[arg(long, default_value_t = 1000.0)]
    requests: f64,
    /// KRLF: hold an idle token this many time units before forwarding it (the paper: 0,
    /// forward at once).
    #[arg(long, default_value_t = 0)]
    idle_pause: u64,
    /// Prioritized: policies to compare (comma separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    policy: Option<Vec<prioritized::PolicyArg>>,
    /// Prioritized: largest `h` drawn (uniform over 1..=max-h; default k).
    #[arg(long)]
    max_h: Option<u32>,
    /// Prioritized: number of priority classes (explicit priorities uniform over 0..classes).
    #[arg(long, default_value_t = 4)]
    priority_classes: u32,
    /// Prioritized: how much a waiting request's priority grows each time it is passed over.
    #[arg(long, default_value_t = 1)]
    aging_step: u64,
    /// Look-ahead: numbers of hosts.
    #[arg(long, value_delimiter = ',')]
    hosts: Option<Vec<u32>>,
    /// Look-ahead: critical-section entries per run.
    #[arg(long, default_value_t = 100)]
    entries: u64,
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

impl Args {
    /// The load phase's length for `load`: long enough for about `requests` requests.
    fn duration(&self, load: f64) -> f64 {
        (self.requests / (self.nodes as f64 * load)).max(500.0)
    }
}

/// A grid point's coordinates shared by every experiment.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    connectivity: f64,
    mobility: f64,
    load: f64,
    seed: u64,
}

/// Every (connectivity, mobility, load, seed) combination, in table order.
fn grid(args: &Args, connectivity: &[f64], mobility: &[f64], load: &[f64]) -> Vec<Point> {
    let mut points = Vec::new();
    for &connectivity in connectivity {
        for &mobility in mobility {
            for &load in load {
                for seed in 1..=args.seeds {
                    points.push(Point {
                        connectivity,
                        mobility,
                        load,
                        seed,
                    });
                }
            }
        }
    }
    points
}

/// Worker threads: `--threads`, or every core.
fn threads(args: &Args) -> usize {
    args.threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Run every job on all cores; print the first invariant violation and exit 1 if any.
fn run_all<J: Sync>(
    args: &Args,
    jobs: &[J],
    run: impl Fn(&J) -> Result<Row, String> + Sync,
) -> (Vec<Row>, f64) {
    let started = std::time::Instant::now();
    let results = parallel_map(jobs, threads(args), run);
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
    (rows, wall)
}

fn footer(args: &Args, rows: &[Row], wall: f64) {
    let entries: u64 = rows.iter().map(|r| r.summary.cs_entries).sum();
    let events: u64 = rows.iter().map(|r| r.summary.events).sum();
    let rate = manet_mutex::sim::experiment::mean_of(rows, |_| true, |s| s.events_per_second)
        .unwrap_or(0.0);
    println!(
        "\n{} runs, {entries} critical-section entries, {events} simulator events, {wall:.1} s \
         wall; simulator throughput {rate:.0} events/s per thread (invariants {})",
        rows.len(),
        if args.no_checks {
            "off"
        } else {
            "checked after every event"
        }
    );
}

fn mobility_name(rate: f64) -> String {
    if rate == 0.0 {
        "zero".into()
    } else {
        format!("1/{:.0}", 1.0 / rate)
    }
}

fn main() {
    let args = Args::parse();
    let (rows, wall) = match args.algorithm {
        Algorithm::All | Algorithm::Krl | Algorithm::Krlf => krl::run(&args),
        Algorithm::Prioritized => prioritized::run(&args),
        Algorithm::LookAhead => look_ahead::run(&args),
    };
    if args.csv {
        print!("{}", to_csv(&rows));
        return;
    }
    match args.algorithm {
        Algorithm::Prioritized => prioritized::print_table(&args, &rows),
        Algorithm::LookAhead => look_ahead::print_table(&args, &rows),
        _ => krl::print_table(&args, &rows),
    }
    footer(&args, &rows, wall);
}
