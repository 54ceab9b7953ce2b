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
//! cargo run --release --example simulate -- --ns2 examples/data/waypoint-20.ns2  # a mobility trace
//! cargo run --release --example simulate -- --algorithm krl --recovery --crash-rate 1e-4 \
//!     --restart-after 100                                         # crashes, recovered
//! cargo run --release --example simulate -- --recovery-figure     # recovery against crash rate
//! ```

mod figures;
mod krl;
mod look_ahead;
mod plot;
mod prioritized;
mod recovery;

use clap::builder::PossibleValue;
use clap::{Parser, ValueEnum};
use manet_mutex_sim::experiment::{parallel_map, to_csv, Row};
use manet_mutex_sim::{Algorithm, Simulator};

/// What `--algorithm` runs: an algorithm of the registry, or KRL and KRLF side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    All,
    One(Algorithm),
}

impl Choice {
    /// The simulator that runs the choice.
    fn simulator(self) -> Simulator {
        match self {
            Choice::All => Simulator::Token,
            Choice::One(a) => a.simulator(),
        }
    }
}

impl ValueEnum for Choice {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Choice::All,
            Choice::One(Algorithm::Krl),
            Choice::One(Algorithm::Krlf),
            Choice::One(Algorithm::Prioritized),
            Choice::One(Algorithm::LookAhead),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            Choice::All => (
                "all",
                "KRL and KRLF side by side (the KRL paper, section 6)",
            ),
            Choice::One(a @ Algorithm::Krl) => (a.arg(), "KRL alone (k = 1 is RL)"),
            Choice::One(a @ Algorithm::Krlf) => (a.arg(), "KRL with token forwarding alone"),
            Choice::One(a @ Algorithm::Prioritized) => (
                a.arg(),
                "Prioritized h-out-of-k under its three priority policies",
            ),
            Choice::One(a @ Algorithm::LookAhead) => (
                a.arg(),
                "Look-ahead beside Ricart–Agrawala (the look-ahead paper, section V)",
            ),
            // Ricart–Agrawala runs beside look-ahead.
            Choice::One(_) => return None,
        };
        Some(PossibleValue::new(name).help(help))
    }
}

/// Simulate distributed mutual exclusion algorithms on mobile ad hoc networks.
#[derive(Debug, Clone, Parser)]
#[command(version, about)]
pub struct Args {
    /// Which algorithm(s) to run.
    #[arg(long, value_enum, default_value_t = Choice::All)]
    algorithm: Choice,
    /// Number of nodes.
    #[arg(long, default_value_t = 30)]
    nodes: usize,
    /// Tokens (KRL) or resources (prioritized); default 3 for KRL, 6 for prioritized.
    #[arg(long)]
    k: Option<u32>,
    /// Fractions of the possible links present (comma separated), each in (0, 1].
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    connectivity: Option<Vec<f64>>,
    /// Token algorithms: link changes per time unit (0 = static; the KRL paper's low is
    /// 1/500, high 1/50). Look-ahead: fraction of time hosts move (1, 0.5, 0.1).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    mobility: Option<Vec<f64>>,
    /// Requests per node per time unit (λ_req; per second for look-ahead), each ≥ 0 (0: no
    /// requests; look-ahead needs > 0, as it runs until its entries are made).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    load: Option<Vec<f64>>,
    /// Seeds (runs) per point (tables show the mean and its 95% confidence interval).
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// Requests per run to aim for: the load phase lasts max(500, requests / (nodes · load))
    /// time units (500 at load 0).
    #[arg(long, default_value_t = 1000.0, allow_negative_numbers = true)]
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
    /// Print one CSV row per run instead of the table (deterministic for given flags: the
    /// timing goes to stderr).
    #[arg(long)]
    csv: bool,
    /// Also write every run as `runs.csv` into this directory (created if missing); with
    /// --figures, where the figures go (default docs/figures).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Regenerate the papers' figures as SVG, each with its points as CSV (KRL Figs. 6–9,
    /// look-ahead Figs. 4–7, prioritized policies), and --recovery-figure's; the other flags
    /// set seeds, checks and threads.
    #[arg(long)]
    figures: bool,
    /// With --figures or --recovery-figure: a tiny grid (for CI), not the papers' experiments.
    #[arg(long)]
    smoke: bool,
    /// Skip the per-step invariant checks (they are on by default).
    #[arg(long)]
    no_checks: bool,
    /// Replay node movement from an ns-2 mobility file (the `setdest` format of ns-2, ns-3's
    /// `Ns2MobilityHelper` and BonnMotion; times in seconds = time units) instead of random
    /// link changes (token algorithms: the nodes and links come from the trace) or random
    /// waypoints (look-ahead: the hosts move as the trace says).
    #[arg(long)]
    ns2: Option<std::path::PathBuf>,
    /// With --ns2: transmission radius in metres (two nodes closer than this share a link).
    #[arg(long, default_value_t = 200.0, allow_negative_numbers = true)]
    radius: f64,
    /// Record the first run of the grid and write it as a self-contained HTML page, also when
    /// an invariant fails (look-ahead: the first host count, load and mobility, uniform load).
    #[arg(long = "trace", value_name = "FILE.html")]
    trace_html: Option<std::path::PathBuf>,
    /// KRL/KRLF: recover lost tokens (beacons, claims, regeneration, entry leases;
    /// docs/ALGORITHMS.md F2–F6), with bounds derived from the network and the unit message
    /// delay (printed).
    #[arg(long)]
    recovery: bool,
    /// With --recovery: crashes per node per time unit (comma separated: one grid point each).
    /// A crashed node loses its state and what is in flight on its links.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    crash_rate: Option<Vec<f64>>,
    /// With --crash-rate: time units a crashed node stays down before it restarts with empty
    /// state, or `never` (crash-stop, the default).
    #[arg(long, allow_negative_numbers = true)]
    restart_after: Option<recovery::RestartAfter>,
    /// With --recovery: partitions per time unit (the nodes split into two random halves; the
    /// links between them go down, losing what is in flight on them).
    #[arg(long, allow_negative_numbers = true)]
    partition_rate: Option<f64>,
    /// With --partition-rate: time units each partition stands before the halves merge
    /// (default 500).
    #[arg(long, allow_negative_numbers = true)]
    partition_for: Option<f64>,
    /// Availability and time to recover against the crash rate (KRL and KRLF with recovery,
    /// k = 1 and 2, with and without mobility), as SVG and CSV into --out (default
    /// docs/figures); the other flags set seeds, checks and threads.
    #[arg(long)]
    recovery_figure: bool,
    /// The parsed --ns2 file.
    #[arg(skip)]
    trace: Option<std::sync::Arc<manet_mutex_sim::ns2::Trace>>,
}

/// The metrics' definitions, printed under every table (`docs/RESULTS.md` has them in full).
const WINDOW: &str = "Every metric covers one window: from the start of a run until the last \
request issued has been served and released (the load phase plus the drain); a run's \
settling after that is not measured. Tables: mean over seeds ± half-width of its 95% \
confidence interval (Student's t).";

impl Args {
    /// The load phase's length for `load`: long enough for about `requests` requests.
    fn duration(&self, load: f64) -> f64 {
        if load > 0.0 {
            (self.requests / (self.nodes as f64 * load)).max(500.0)
        } else {
            500.0
        }
    }

    /// Every flag in its range, with a message naming the flag.
    fn validate(&self) -> Result<(), String> {
        fn each(
            name: &str,
            xs: &Option<Vec<f64>>,
            ok: impl Fn(f64) -> bool,
            range: &str,
        ) -> Result<(), String> {
            match xs.as_deref() {
                Some([]) => Err(format!("--{name}: give at least one value")),
                Some(xs) => match xs.iter().find(|&&x| !ok(x)) {
                    Some(x) => Err(format!("--{name} {x}: must be {range}")),
                    None => Ok(()),
                },
                None => Ok(()),
            }
        }
        let token = self.algorithm.simulator() == Simulator::Token;
        if let Some(file) = &self.ns2 {
            if self.connectivity.is_some() || self.mobility.is_some() || self.hosts.is_some() {
                return Err(format!(
                    "--ns2 {}: the trace gives the topology and the movement; drop --connectivity, \
                     --mobility and --hosts",
                    file.display()
                ));
            }
            if !(self.radius.is_finite() && self.radius > 0.0) {
                return Err(format!(
                    "--radius {}: must be a positive distance",
                    self.radius
                ));
            }
        }
        if self.seeds == 0 {
            return Err("--seeds 0: need at least one run per point".into());
        }
        if self.smoke && !(self.figures || self.recovery_figure) {
            return Err("--smoke: only with --figures or --recovery-figure".into());
        }
        if self.figures && (self.ns2.is_some() || self.csv) {
            return Err("--figures: the papers' setups; drop --ns2 and --csv".into());
        }
        if self.recovery_figure && (self.figures || self.ns2.is_some() || self.csv) {
            return Err(
                "--recovery-figure: its own setup (--figures includes it); drop --figures, --ns2 \
                 and --csv"
                    .into(),
            );
        }
        recovery::validate(self)?;
        if !(self.requests.is_finite() && self.requests > 0.0) {
            return Err(format!(
                "--requests {}: must be a positive number",
                self.requests
            ));
        }
        if self.threads == Some(0) {
            return Err("--threads 0: need at least one thread".into());
        }
        if token {
            if self.nodes < 2 {
                return Err(format!("--nodes {}: need at least 2 nodes", self.nodes));
            }
            each(
                "connectivity",
                &self.connectivity,
                |c| c > 0.0 && c <= 1.0,
                "in (0, 1]",
            )?;
            each(
                "mobility",
                &self.mobility,
                |m| m.is_finite() && m >= 0.0,
                "a rate ≥ 0",
            )?;
            each(
                "load",
                &self.load,
                |l| l.is_finite() && l >= 0.0,
                "a rate ≥ 0",
            )?;
        } else {
            each(
                "mobility",
                &self.mobility,
                |m| (0.0..=1.0).contains(&m),
                "a fraction of time in [0, 1]",
            )?;
            each(
                "load",
                &self.load,
                |l| l.is_finite() && l > 0.0,
                "a rate > 0 (look-ahead runs until its entries are made)",
            )?;
            match self.hosts.as_deref() {
                Some([]) => return Err("--hosts: give at least one value".into()),
                Some(hosts) => {
                    if let Some(h) = hosts.iter().find(|&&h| h < 2) {
                        return Err(format!("--hosts {h}: need at least 2 hosts"));
                    }
                }
                None => {}
            }
            if self.entries == 0 {
                return Err("--entries 0: need at least one entry per run".into());
            }
        }
        match self.algorithm {
            Choice::All | Choice::One(Algorithm::Krl | Algorithm::Krlf) => {
                let k = krl::k(self);
                if k == 0 || k as usize >= self.nodes {
                    return Err(format!(
                        "--k {k}: KRL needs 1 ≤ k < nodes ({}): a network where every node holds \
                         a token has no node to pass one to",
                        self.nodes
                    ));
                }
            }
            Choice::One(Algorithm::Prioritized) => {
                let k = prioritized::k(self);
                if k == 0 {
                    return Err("--k 0: need at least one resource".into());
                }
                if let Some(h) = self.max_h.filter(|&h| h == 0 || h > k || h > 8) {
                    return Err(format!("--max-h {h}: must be in 1..={}", k.min(8)));
                }
                if self.max_h.is_none() && k > 8 {
                    return Err(format!(
                        "--k {k}: give --max-h ≤ 8 (the tables show waits for h up to 8)"
                    ));
                }
                if !(1..=8).contains(&self.priority_classes) {
                    return Err(format!(
                        "--priority-classes {}: must be in 1..=8",
                        self.priority_classes
                    ));
                }
                if self.aging_step == 0 {
                    return Err("--aging-step 0: must be at least 1".into());
                }
            }
            Choice::One(_) => {}
        }
        Ok(())
    }
}

/// A grid point's coordinates shared by every experiment.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    connectivity: f64,
    mobility: f64,
    load: f64,
    /// Crashes per node per time unit (`--crash-rate`; 0 without).
    crash_rate: f64,
    seed: u64,
}

/// Every (connectivity, mobility, load, crash rate, seed) combination, in table order: the
/// command line's values, or an experiment's defaults (no crashes).
fn grid(args: &Args, connectivity: &[f64], mobility: &[f64], load: &[f64]) -> Vec<Point> {
    let connectivity = args.connectivity.as_deref().unwrap_or(connectivity);
    let mobility = args.mobility.as_deref().unwrap_or(mobility);
    let load = args.load.as_deref().unwrap_or(load);
    let crash_rates = args.crash_rate.as_deref().unwrap_or(&[0.0]);
    let mut points = Vec::new();
    for &connectivity in connectivity {
        for &mobility in mobility {
            for &load in load {
                for &crash_rate in crash_rates {
                    for seed in 1..=args.seeds {
                        points.push(Point {
                            connectivity,
                            mobility,
                            load,
                            crash_rate,
                            seed,
                        });
                    }
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

/// A progress bar on stderr for `runs` runs (drawn only when stderr is a terminal).
fn progress(runs: usize) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(runs as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} runs, {elapsed} elapsed, about {eta} left",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// Run every job on all cores; print the first failed run and exit 1 if any.
fn run_all<J: Sync>(
    args: &Args,
    jobs: &[J],
    run: impl Fn(&J) -> Result<Row, String> + Sync,
) -> (Vec<Row>, f64) {
    let started = std::time::Instant::now();
    let bar = progress(jobs.len());
    let results = parallel_map(jobs, threads(args), |job| {
        let row = run(job);
        bar.inc(1);
        row
    });
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let mut rows = Vec::new();
    for r in results {
        match r {
            Ok(row) => rows.push(row),
            Err(failure) => {
                eprintln!("{failure}");
                std::process::exit(1);
            }
        }
    }
    (rows, wall)
}

/// The anomalies the nodes of `rows` reported, by severity.
fn anomalies(rows: &[Row]) -> String {
    let mut all = manet_mutex_sim::Anomalies::default();
    for r in rows {
        all += r.summary.anomalies;
    }
    format!(
        "anomalies reported: {} noise, {} suspect",
        all.noise, all.suspect
    )
}

fn footer(args: &Args, rows: &[Row], wall: f64) {
    let entries: u64 = rows.iter().map(|r| r.summary.cs_entries).sum();
    let events: u64 = rows.iter().map(|r| r.summary.events).sum();
    let rate = manet_mutex_sim::experiment::mean_of(rows, |_| true, |s| s.events_per_second)
        .unwrap_or(0.0);
    println!("\n{WINDOW}");
    println!(
        "{} runs, {entries} critical-section entries, {events} simulator events (invariants {})",
        rows.len(),
        if args.no_checks {
            "off"
        } else {
            "checked after every event"
        }
    );
    // Timing differs between identical runs: stderr, so stdout is reproducible (and the
    // anomalies too, so the tables stay as they were).
    eprintln!("{wall:.1} s wall; simulator throughput {rate:.0} events/s per thread");
    eprintln!("{}", anomalies(rows));
}

/// `mean ±half-width` of the 95% confidence interval of `metric` over the rows matching
/// `filter` that have a value (`-` when none has; no interval from a single run).
fn ci(
    rows: &[Row],
    filter: impl Fn(&Row) -> bool,
    metric: impl Fn(&Row) -> Option<f64>,
    width: usize,
    precision: usize,
) -> String {
    let xs: Vec<f64> = rows
        .iter()
        .filter(|r| filter(r))
        .filter_map(metric)
        .collect();
    let (m, h) = manet_mutex_sim::mean_ci95(&xs);
    let cell = match xs.len() {
        0 => "-".to_string(),
        1 => format!("{m:.precision$}"),
        _ => format!("{m:.precision$} ±{h:.precision$}"),
    };
    format!("{cell:>width$}")
}

/// A recorded run: its recording, and the failure as text if the run failed (the recording
/// then ends there).
pub type Recorded = (manet_mutex_sim::trace::Recording, Option<String>);

/// Run `config` recording it, and return the recording whether the run failed or not.
fn record_run<N: manet_mutex_sim::TokenAlgorithm>(
    mut config: manet_mutex_sim::token::Config<manet_mutex_sim::Params<N::Settings>>,
) -> Result<Recorded, String> {
    config.record = true;
    match manet_mutex_sim::token::run::<N>(config) {
        Ok(outcome) => Ok((outcome.recording.ok_or("the run did not record")?, None)),
        Err(mut failure) => match failure.recording.take() {
            Some(r) => Ok((*r, Some(failure.to_string()))),
            None => Err(failure.to_string()),
        },
    }
}

/// How a table names a connectivity coordinate.
fn conn_name(args: &Args, c: f64) -> String {
    if args.trace.is_some() {
        "trace".into()
    } else {
        format!("{:.0}%", c * 100.0)
    }
}

/// How a table names a mobility coordinate (token algorithms: a rate of link changes).
fn mobility_name(args: &Args, rate: f64) -> String {
    if args.trace.is_some() {
        "trace".into()
    } else if rate == 0.0 {
        "zero".into()
    } else {
        format!("1/{:.0}", 1.0 / rate)
    }
}

/// Read and parse `--ns2`, and make the trace the run's only topology and mobility point.
fn load_trace(args: &mut Args) -> Result<(), String> {
    let Some(file) = &args.ns2 else {
        return Ok(());
    };
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("--ns2 {}: {e}", file.display()))?;
    let trace = manet_mutex_sim::ns2::Trace::parse(&text)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    if trace.nodes() < 2 {
        return Err(format!(
            "{}: the trace has fewer than 2 nodes",
            file.display()
        ));
    }
    args.nodes = trace.nodes();
    args.hosts = Some(vec![trace.nodes() as u32]);
    // Placeholders for the one grid point; tables name it "trace".
    args.connectivity = Some(vec![1.0]);
    args.mobility = Some(vec![1.0]);
    args.trace = Some(std::sync::Arc::new(trace));
    Ok(())
}

fn main() {
    let mut args = Args::parse();
    if let Err(e) = args.validate().and_then(|()| load_trace(&mut args)) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    if let Some(path) = &args.trace_html {
        let recording = match args.algorithm {
            Choice::One(Algorithm::Prioritized) => prioritized::record(&args),
            Choice::One(Algorithm::LookAhead) => look_ahead::record(&args),
            _ => krl::record(&args),
        };
        let (recording, failure) = recording.unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(2);
        });
        if let Some(f) = &failure {
            eprintln!("{f}");
        }
        if let Err(e) = std::fs::write(path, manet_mutex_sim::trace::html::page(&recording)) {
            eprintln!("error: {}: {e}", path.display());
            std::process::exit(1);
        }
        println!("{} ({} steps)", path.display(), recording.steps());
        std::process::exit(i32::from(failure.is_some()));
    }
    if args.recovery_figure {
        let started = std::time::Instant::now();
        let dir = figures::dir(&args);
        match recovery::figure(&args, &dir) {
            Ok(written) => {
                for name in written {
                    println!("{}", dir.join(format!("{name}.svg")).display());
                }
                eprintln!("{:.1} s wall", started.elapsed().as_secs_f64());
                return;
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    if args.figures {
        let started = std::time::Instant::now();
        match figures::run(&args) {
            Ok(written) => {
                for path in written {
                    println!("{}", path.display());
                }
                eprintln!("{:.1} s wall", started.elapsed().as_secs_f64());
                return;
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
    }
    let (rows, wall) = match args.algorithm {
        Choice::One(Algorithm::Prioritized) => prioritized::run(&args),
        Choice::One(Algorithm::LookAhead) => look_ahead::run(&args),
        _ => krl::run(&args),
    };
    if let Some(dir) = &args.out {
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(dir.join("runs.csv"), to_csv(&rows)));
        if let Err(e) = written {
            eprintln!(
                "error: cannot write {}: {e}",
                dir.join("runs.csv").display()
            );
            std::process::exit(1);
        }
        eprintln!("wrote {}", dir.join("runs.csv").display());
    }
    if args.csv {
        recovery::describe(&args, &mut std::io::stderr());
        print!("{}", to_csv(&rows));
        eprintln!("{wall:.1} s wall");
        eprintln!("{}", anomalies(&rows));
        return;
    }
    match args.algorithm {
        Choice::One(Algorithm::Prioritized) => prioritized::print_table(&args, &rows),
        Choice::One(Algorithm::LookAhead) => look_ahead::print_table(&args, &rows),
        _ => {
            recovery::describe(&args, &mut std::io::stdout());
            krl::print_table(&args, &rows);
            recovery::print_table(&args, &rows, &mut std::io::stdout());
        }
    }
    footer(&args, &rows, wall);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line `flags` parsed and validated: the error message if refused.
    fn check(flags: &[&str]) -> Result<Args, String> {
        let args = Args::try_parse_from(std::iter::once("simulate").chain(flags.iter().copied()))
            .map_err(|e| e.to_string())?;
        args.validate().map(|()| args)
    }

    /// Refused, with a message that names `flag` and says `why`.
    fn refused(flags: &[&str], flag: &str, why: &str) {
        match check(flags) {
            Ok(_) => panic!("{flags:?} accepted"),
            Err(e) => assert!(e.contains(flag) && e.contains(why), "{flags:?}: {e}"),
        }
    }

    #[test]
    fn fault_flags_are_checked_before_anything_runs() {
        refused(
            &["--crash-rate", "1e-4"],
            "--crash-rate",
            "needs --recovery",
        );
        refused(
            &["--partition-rate", "1e-3"],
            "--partition-rate",
            "needs --recovery",
        );
        for rate in ["-1", "nan", "inf"] {
            refused(&["--recovery", "--crash-rate", rate], "--crash-rate", "≥ 0");
        }
        refused(
            &["--recovery", "--crash-rate", "0,-1e-4"],
            "--crash-rate -0.0001",
            "≥ 0",
        );
        refused(
            &["--recovery", "--restart-after", "5"],
            "--restart-after",
            "--crash-rate",
        );
        refused(
            &[
                "--recovery",
                "--crash-rate",
                "1e-4",
                "--restart-after",
                "-3",
            ],
            "--restart-after -3",
            "never",
        );
        refused(
            &[
                "--recovery",
                "--crash-rate",
                "1e-4",
                "--restart-after",
                "soon",
            ],
            "soon",
            "never",
        );
        refused(
            &["--recovery", "--partition-for", "10"],
            "--partition-for",
            "--partition-rate",
        );
        refused(
            &[
                "--recovery",
                "--partition-rate",
                "1e-3",
                "--partition-for",
                "0",
            ],
            "--partition-for 0",
            "> 0",
        );
        refused(
            &["--recovery", "--partition-rate", "-2"],
            "--partition-rate -2",
            "≥ 0",
        );
        refused(&["--recovery", "--nodes", "70000"], "--recovery", "65,536");
        refused(
            &["--recovery", "--figures"],
            "--recovery",
            "figures set their own",
        );
        refused(
            &["--recovery-figure", "--csv"],
            "--recovery-figure",
            "--csv",
        );
        refused(&["--smoke"], "--smoke", "--recovery-figure");
    }

    #[test]
    fn recovery_is_refused_where_it_is_not_built_yet() {
        for algorithm in ["prioritized", "look-ahead"] {
            refused(
                &["--algorithm", algorithm, "--recovery"],
                "--recovery",
                "not built yet",
            );
            refused(
                &["--algorithm", algorithm, "--crash-rate", "1e-4"],
                "--crash-rate",
                "not built yet",
            );
        }
    }

    #[test]
    fn good_fault_flags_are_taken_and_set_the_runs() {
        let args = check(&[
            "--algorithm",
            "krlf",
            "--recovery",
            "--crash-rate",
            "0,1e-4",
            "--restart-after",
            "never",
            "--partition-rate",
            "1e-3",
            "--partition-for",
            "50",
        ])
        .unwrap();
        let p = grid(&args, &[0.2], &[0.0], &[0.1]);
        let rates: Vec<f64> = p.iter().map(|p| p.crash_rate).collect();
        assert_eq!(
            rates,
            [0.0; 5]
                .iter()
                .chain(&[1e-4; 5])
                .copied()
                .collect::<Vec<_>>()
        );
        let f = recovery::faults(&args, &p[5]);
        assert_eq!(
            (
                f.crash_rate,
                f.restart_after,
                f.partition_rate,
                f.partition_for
            ),
            (1e-4, None, 1e-3, 50.0)
        );
        let restart = check(&[
            "--recovery",
            "--crash-rate",
            "1e-4",
            "--restart-after",
            "100",
        ]);
        assert_eq!(
            recovery::faults(&restart.unwrap(), &p[5]).restart_after,
            Some(100.0)
        );
        assert!(check(&["--recovery-figure", "--smoke", "--seeds", "2"]).is_ok());
    }

    /// 30 nodes: any connected part is at most 29 hops across, a message takes 1 unit.
    #[test]
    fn recovery_bounds_come_from_the_network() {
        let r = recovery::settings(30);
        assert_eq!(
            (r.beacon_every, r.lease, r.hop_bound, r.diameter),
            (29, 10, 1, 29)
        );
        // ⌈(⌈29 / (1 − 10⁻⁴)⌉ + 88 + ⌈10 / (1 − 10⁻⁴)⌉) · (1 + 10⁻⁴)⌉ and ⌈58 · (1 + 10⁻⁴)⌉.
        assert_eq!((r.silence(), r.claim_wait()), (130, 59));
        let plain = check(&[]).unwrap();
        assert!(recovery::of(&plain).is_none());
        let p = grid(&plain, &[0.2], &[0.0], &[0.1])[0];
        let m = manet_mutex_sim::Metrics::default();
        assert!(
            recovery::extra(&plain, &p, &m).is_empty(),
            "no new columns without --recovery"
        );
    }
}
