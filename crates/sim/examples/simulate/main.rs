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
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use manet_mutex::token::RaisePause;
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
    #[arg(long, value_enum, ignore_case = true, default_value_t = Choice::All)]
    algorithm: Choice,
    /// Number of nodes (token algorithms; look-ahead has --hosts).
    #[arg(long, default_value_t = 30, allow_negative_numbers = true, value_parser = at_least(2usize))]
    nodes: usize,
    /// Tokens (KRL) or resources (prioritized); default 3 for KRL, 6 for prioritized.
    #[arg(long, allow_negative_numbers = true, value_parser = at_least(1u32))]
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
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = at_least(1u64))]
    seeds: u64,
    /// Requests per run to aim for: the load phase lasts max(500, requests / (nodes · load))
    /// time units (500 at load 0).
    #[arg(long, default_value_t = 1000.0, allow_negative_numbers = true)]
    requests: f64,
    /// KRLF: hold an idle token this many time units before forwarding it (the paper: 0,
    /// forward at once).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = at_least(0u64))]
    idle_pause: u64,
    /// KRL, KRLF: pace height raises, `MIN-MAX` time units: the first pause MIN, doubling up
    /// to MAX while raises keep coming (`docs/ALGORITHMS.md` R15; the paper: not paced).
    #[arg(long, allow_negative_numbers = true, value_parser = |s: &str| s.parse::<RaisePause>())]
    raise_pause: Option<RaisePause>,
    /// Prioritized: policies to compare (comma separated).
    #[arg(long, value_enum, ignore_case = true, value_delimiter = ',')]
    policy: Option<Vec<prioritized::PolicyArg>>,
    /// Prioritized: largest `h` drawn (uniform over 1..=max-h; default k).
    #[arg(long, allow_negative_numbers = true, value_parser = at_least(1u32))]
    max_h: Option<u32>,
    /// Prioritized: number of priority classes (explicit priorities uniform over 0..classes).
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_parser = at_least(1u32))]
    priority_classes: u32,
    /// Prioritized: how much a waiting request's priority grows each time it is passed over.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = at_least(1u64))]
    aging_step: u64,
    /// Look-ahead: numbers of hosts.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_parser = at_least(2u32))]
    hosts: Option<Vec<u32>>,
    /// Look-ahead: critical-section entries per run.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, value_parser = at_least(1u64))]
    entries: u64,
    /// Worker threads (default: all cores).
    #[arg(long, allow_negative_numbers = true, value_parser = at_least(1usize))]
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
    /// With --trace (token algorithms): go on recording after the measured window ends (every
    /// request served), through the unmeasured settling of what is in flight. Without it the
    /// page ends at the end of the window.
    #[arg(long = "trace-all")]
    trace_all: bool,
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
    /// The ids of the flags the command line gave (not those left at their defaults).
    #[arg(skip)]
    given: Vec<String>,
}

/// A whole-number flag's parser, for values of at least `min`: clap's message names the flag
/// and this says the range (with `allow_negative_numbers`, `-5` reaches it as a value instead
/// of being taken for an unknown flag).
fn at_least<T>(min: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s| match s.trim().parse::<T>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(format!("must be a whole number ≥ {min}")),
    }
}

/// "1 seed", "5 seeds".
pub fn seeds(n: u64) -> String {
    format!("{n} seed{}", if n == 1 { "" } else { "s" })
}

/// The metrics' definitions, printed under every table (`docs/RESULTS.md` has them in full).
const WINDOW: &str = "Every metric covers one window: from the start of a run until the last \
request issued has been served and released (the load phase plus the drain); a run's \
settling after that is not measured. Tables: mean over seeds ± half-width of its 95% \
confidence interval (Student's t).";

impl Args {
    /// Parse a command line, noting which flags it gave.
    fn parse_from_args<I, T>(argv: I) -> Result<Args, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = Args::command().try_get_matches_from(argv)?;
        let mut args = Args::from_arg_matches(&matches)?;
        args.given = matches
            .ids()
            .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
            .map(|id| id.to_string())
            .collect();
        Ok(args)
    }

    /// Whether the command line gave the flag with field name `id`.
    fn given(&self, id: &str) -> bool {
        self.given.iter().any(|g| g == id)
    }

    /// A flag of another algorithm is refused rather than ignored: the run would not be the
    /// one asked for.
    fn applies(&self) -> Result<(), String> {
        let (token, krlf, prio) = match self.algorithm {
            Choice::All => (true, true, false),
            Choice::One(Algorithm::Krlf) => (true, true, false),
            Choice::One(Algorithm::Prioritized) => (true, false, true),
            Choice::One(Algorithm::LookAhead) => (false, false, false),
            Choice::One(_) => (true, false, false),
        };
        let token_only = "all, krl, krlf and prioritized (look-ahead has --hosts, --entries)";
        let rules = [
            ("nodes", token, token_only),
            ("k", token, "all, krl, krlf and prioritized"),
            ("connectivity", token, token_only),
            ("requests", token, token_only),
            ("idle_pause", krlf, "all and krlf"),
            ("raise_pause", token && !prio, "all, krl and krlf"),
            ("policy", prio, "prioritized"),
            ("max_h", prio, "prioritized"),
            ("priority_classes", prio, "prioritized"),
            ("aging_step", prio, "prioritized"),
            ("hosts", !token, "look-ahead"),
            ("entries", !token, "look-ahead"),
        ];
        for (id, applies, to) in rules {
            if !applies && self.given(id) {
                let chosen = self
                    .algorithm
                    .to_possible_value()
                    .expect("every choice is named");
                return Err(format!(
                    "--{}: applies to --algorithm {to}, not {}",
                    id.replace('_', "-"),
                    chosen.get_name()
                ));
            }
        }
        if self.given("radius") && self.ns2.is_none() {
            return Err("--radius: the transmission radius of an --ns2 trace; give --ns2".into());
        }
        Ok(())
    }

    /// The load phase's length for `load`: long enough for about `requests` requests.
    fn duration(&self, load: f64) -> f64 {
        if load > 0.0 {
            (self.requests / (self.nodes as f64 * load)).max(500.0)
        } else {
            500.0
        }
    }

    /// Every flag in its range and for the chosen algorithm, with a message naming the flag.
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
        self.applies()?;
        let token = self.algorithm.simulator() == Simulator::Token;
        if self.trace_all && self.trace_html.is_none() {
            return Err("--trace-all: records past the measured window of a --trace page; give --trace FILE.html".into());
        }
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
        if token {
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
            if self.hosts.as_deref() == Some(&[]) {
                return Err("--hosts: give at least one value".into());
            }
        }
        match self.algorithm {
            Choice::All | Choice::One(Algorithm::Krl | Algorithm::Krlf) => {
                let k = krl::k(self);
                if k as usize >= self.nodes {
                    // Name the flag the user gave: the default k = 3 meets --nodes 2 too.
                    let flag = if self.given("k") {
                        format!("--k {k}")
                    } else {
                        format!("--nodes {} (with the default k = {k})", self.nodes)
                    };
                    return Err(format!(
                        "{flag}: KRL needs k < nodes: a network where every node holds a token \
                         has no node to pass one to"
                    ));
                }
            }
            Choice::One(Algorithm::Prioritized) => {
                let k = prioritized::k(self);
                if let Some(h) = self.max_h.filter(|&h| h > k || h > 8) {
                    return Err(format!("--max-h {h}: must be in 1..={}", k.min(8)));
                }
                if self.max_h.is_none() && k > 8 {
                    return Err(format!(
                        "--k {k}: h is drawn up to k unless --max-h is given, and the tables show \
                         waits for h up to 8: give --max-h ≤ 8"
                    ));
                }
                if self.priority_classes > 8 {
                    return Err(format!(
                        "--priority-classes {}: must be in 1..=8",
                        self.priority_classes
                    ));
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

/// Progress of `runs` runs on stderr: a bar when stderr is a terminal, plain lines
/// (`simulate: 12/40 runs, 8 s`, one every 2 s at most) when it is not.
pub enum Bar {
    Terminal(indicatif::ProgressBar),
    Lines(manet_mutex_sim::progress::Progress),
}

impl Bar {
    pub fn inc(&self, n: u64) {
        match self {
            Bar::Terminal(bar) => bar.inc(n),
            Bar::Lines(p) => p.inc(n),
        }
    }

    pub fn finish(&self) {
        match self {
            Bar::Terminal(bar) => bar.finish_and_clear(),
            Bar::Lines(p) => p.finish(),
        }
    }
}

/// A progress display on stderr for `runs` runs.
fn progress(runs: usize) -> Bar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() || manet_mutex_sim::progress::Progress::forced() {
        return Bar::Lines(manet_mutex_sim::progress::Progress::new(
            "simulate",
            runs as u64,
            "runs",
        ));
    }
    let bar = indicatif::ProgressBar::new(runs as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} runs, {elapsed} elapsed, about {eta} left",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    // Redrawn twice a second, so the elapsed time moves during a single long run too.
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    Bar::Terminal(bar)
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
    bar.finish();
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
    all: bool,
) -> Result<Recorded, String> {
    config.record = true;
    config.record_all = all;
    match manet_mutex_sim::token::run::<N>(config) {
        Ok(outcome) => Ok((outcome.recording.ok_or("the run did not record")?, None)),
        Err(mut failure) => match failure.recording.take() {
            Some(r) => Ok((*r, Some(failure.to_string()))),
            None => Err(failure.to_string()),
        },
    }
}

/// How a table names a connectivity coordinate: the connectivity the graphs have, which
/// `warn_connectivity` explained if it is not the one asked for.
fn conn_name(args: &Args, c: f64) -> String {
    if args.trace.is_some() {
        "trace".into()
    } else {
        format!("{:.0}%", krl::reached(args.nodes, c) * 100.0)
    }
}

/// On stderr, each --connectivity the graphs cannot have: a connected graph of n nodes has
/// at least n − 1 links, and links come whole.
fn warn_connectivity(args: &Args) {
    if args.trace.is_some() || args.algorithm.simulator() != Simulator::Token {
        return;
    }
    let percent = |c: f64| (c * 100.0).round();
    for &c in args.connectivity.as_deref().unwrap_or_default() {
        let reached = krl::reached(args.nodes, c);
        if percent(reached) != percent(c) {
            let (links, possible) = krl::links(args.nodes, c);
            eprintln!(
                "warning: --connectivity {c}: a connected graph of {} nodes has {links} of its \
                 {possible} possible links (at least nodes − 1, and whole links): the runs have \
                 connectivity {:.1}%",
                args.nodes,
                reached * 100.0
            );
        }
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
    let unplaced = trace.unplaced();
    if !unplaced.is_empty() {
        let list: Vec<String> = unplaced.iter().map(usize::to_string).collect();
        eprintln!(
            "warning: --ns2 {}: node(s) {} have no initial position (no `set X_` or `set Y_`) \
             and start at (0, 0); the network has {} nodes, 0 to the largest index named",
            file.display(),
            list.join(", "),
            trace.nodes()
        );
    }
    if !trace.ever_linked(args.radius) {
        eprintln!(
            "warning: --radius {}: no two nodes of the trace ever come that close: the nodes \
             have no links (token algorithms: joined at time 0, then cut off)",
            args.radius
        );
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
    let mut args = Args::parse_from_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    if let Err(e) = args.validate().and_then(|()| load_trace(&mut args)) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    warn_connectivity(&args);
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
        let args = Args::parse_from_args(std::iter::once("simulate").chain(flags.iter().copied()))
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
    fn raise_pause_takes_min_max_for_the_krl_family_only() {
        let args = check(&["--algorithm", "krl", "--raise-pause", "2-20"]).unwrap();
        assert_eq!(args.raise_pause, Some(RaisePause::new(2, 20)));
        for bad in ["0-5", "6-5", "5", "a-b", "-5"] {
            refused(
                &["--algorithm", "krl", "--raise-pause", bad],
                "--raise-pause",
                "MIN-MAX",
            );
        }
        refused(
            &["--algorithm", "prioritized", "--raise-pause", "2-20"],
            "--raise-pause",
            "applies to --algorithm all, krl and krlf",
        );
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

    /// Each bad input of issue 26: refused before anything runs, naming the flag and the
    /// range or the algorithms it applies to (the binary exits 2 with the message).
    #[test]
    fn bad_input_is_refused_naming_the_flag() {
        for (flag, min) in [
            ("--nodes", "≥ 2"),
            ("--k", "≥ 1"),
            ("--seeds", "≥ 1"),
            ("--idle-pause", "≥ 0"),
            ("--entries", "≥ 1"),
            ("--threads", "≥ 1"),
        ] {
            refused(&[flag, "-5"], &format!("'{flag} <"), min);
        }
        refused(
            &["--algorithm", "look-ahead", "--hosts", "1,-4"],
            "'--hosts <",
            "≥ 2",
        );
        refused(&["--seeds", "0"], "'--seeds <", "≥ 1");
        refused(
            &["--algorithm", "krl", "--hosts", "5"],
            "--hosts",
            "applies to --algorithm look-ahead, not krl",
        );
        refused(
            &["--algorithm", "look-ahead", "--k", "3"],
            "--k",
            "applies to --algorithm all, krl, krlf and prioritized, not look-ahead",
        );
        refused(
            &["--algorithm", "krl", "--idle-pause", "5"],
            "--idle-pause",
            "all and krlf",
        );
        refused(
            &["--algorithm", "krlf", "--policy", "fcfs"],
            "--policy",
            "prioritized",
        );
        refused(&["--radius", "5"], "--radius", "give --ns2");
        // The flag the user gave is blamed, not a default one.
        refused(
            &["--algorithm", "prioritized", "--k", "40"],
            "--k 40",
            "give --max-h ≤ 8",
        );
        refused(
            &["--nodes", "3"],
            "--nodes 3 (with the default k = 3)",
            "k < nodes",
        );
        refused(&["--nodes", "5", "--k", "5"], "--k 5", "k < nodes");
    }

    #[test]
    fn algorithm_and_policy_names_are_case_insensitive() {
        let args = check(&["--algorithm", "KRL"]).unwrap();
        assert_eq!(args.algorithm, Choice::One(Algorithm::Krl));
        let args = check(&["--algorithm", "Prioritized", "--policy", "FCFS"]).unwrap();
        assert_eq!(args.policy, Some(vec![prioritized::PolicyArg::Fcfs]));
    }

    /// The graphs have at least nodes − 1 links: the connectivity the tables show and warn
    /// about is the one reached.
    #[test]
    fn the_connectivity_reached_is_shown() {
        assert_eq!(krl::links(3, 0.2), (2, 3));
        assert_eq!(krl::links(30, 1e-9), (29, 435));
        assert_eq!(krl::links(30, 0.2), (87, 435));
        let args = check(&["--nodes", "3", "--k", "1", "--connectivity", "0.2"]).unwrap();
        assert_eq!(conn_name(&args, 0.2), "67%");
        let args = check(&[]).unwrap();
        assert_eq!(conn_name(&args, 0.2), "20%");
    }

    #[test]
    fn the_title_says_what_was_run() {
        let title = |flags: &[&str]| krl::title(&check(flags).unwrap());
        assert!(title(&[]).starts_with("KRL and KRLF (the KRL paper, section 6): 30 nodes"));
        assert!(title(&[]).ends_with("mean of 5 seeds per point"));
        let one = title(&["--algorithm", "krl", "--k", "1", "--seeds", "1"]);
        assert!(one.starts_with("RL (KRL with k = 1): "), "{one}");
        assert!(one.ends_with("mean of 1 seed per point"), "{one}");
        assert!(!title(&["--nodes", "10"]).contains("paper"));
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
