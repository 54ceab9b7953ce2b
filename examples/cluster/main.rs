//! The crate's algorithms as a cluster of OS processes talking UDP: the README's embedding
//! example grown up.
//!
//! - `node`: one process, one algorithm core on the async crate (`manet_mutex_tokio::Node`,
//!   one UDP socket, the driver's wire format). Look-ahead and Ricart–Agrawala send their
//!   messages straight to any host; KRL, KRLF and prioritized run over a link session per
//!   neighbour of the topology. The node asks for the critical section at random intervals
//!   and tells the resource process when it enters and leaves.
//! - `resource`: the protected resource's checker: never more than `k` units held by acting
//!   holders, fences (a stale generation's grant refused and counted, any other refusal a
//!   violation).
//! - `launch`: starts a resource and N nodes on loopback, injects loss, link flaps, link
//!   cuts (random, or following an ns-2 mobility trace), garbage, and `kill -9` of nodes in
//!   their critical section or waiting (restarted with empty state), waits for every live node
//!   to reach its target, and fails on any violation.
//!
//! ```text
//! cargo run --release --bin cluster -- launch --algorithm all \
//!     --nodes 5 --entries 200 --loss 0.1 --flaps 10
//! # crashes: 3 holders killed in their critical section and a waiting host, each restarted
//! cargo run --release --bin cluster -- launch --algorithm krl,krlf,prioritized --k 1 \
//!     --think 100 --recovery --kill 3 --kill-waiting 1 --restart-after 1000 --timeout 90
//! ```
//!
//! On several machines, start the processes by hand with the same `--peers` list (see the
//! README's "Embedding" section):
//!
//! ```text
//! cluster resource --listen 10.0.0.1:7000 --k 1 --nodes 3
//! cluster node --id 0 --algorithm krl --peers 0=10.0.0.1:7001,1=10.0.0.2:7001,2=10.0.0.3:7001 \
//!     --topology line --resource 10.0.0.1:7000 --entries 100
//! ```

mod launch;
mod node;
mod report;
mod resource;

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use manet_mutex::NodeId;

/// Whether a subcommand's checks passed, or why it could not run.
pub type Outcome = Result<bool, Box<dyn std::error::Error>>;

/// Run the crate's mutual exclusion algorithms as a cluster of processes over UDP.
#[derive(Debug, Parser)]
#[command(about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One node: an algorithm core behind a UDP socket.
    Node(node::NodeArgs),
    /// The protected resource: checks that at most `k` units are held at once.
    Resource(resource::ResourceArgs),
    /// Start a resource and N nodes on loopback, drive them, inject faults, check the outcome.
    Launch(launch::LaunchArgs),
}

/// The algorithms a node can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Algorithm {
    /// KRL: k tokens on a reverse-link DAG.
    Krl,
    /// KRL with idle tokens forwarded (paced).
    Krlf,
    /// Prioritized h-out-of-k: one token carrying k resources.
    Prioritized,
    /// Look-ahead permission-based mutual exclusion.
    LookAhead,
    /// Ricart–Agrawala.
    Ra,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Krl,
        Algorithm::Krlf,
        Algorithm::Prioritized,
        Algorithm::LookAhead,
        Algorithm::Ra,
    ];

    /// Token algorithms run over link sessions along the topology's edges.
    pub fn uses_links(self) -> bool {
        matches!(
            self,
            Algorithm::Krl | Algorithm::Krlf | Algorithm::Prioritized
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Krl => "krl",
            Algorithm::Krlf => "krlf",
            Algorithm::Prioritized => "prioritized",
            Algorithm::LookAhead => "look-ahead",
            Algorithm::Ra => "ra",
        }
    }
}

/// Named topologies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shape {
    Ring,
    Line,
    Star,
    Full,
}

/// The links of the token algorithms: a named shape, or explicit edges.
#[derive(Debug, Clone, Args)]
pub struct Topology {
    /// A named topology over all nodes (token algorithms; default ring).
    #[arg(long, value_enum)]
    topology: Option<Shape>,
    /// Explicit links instead, e.g. `0-1,1-2,2-0` (token algorithms).
    #[arg(long, value_delimiter = ',', value_parser = parse_edge)]
    edges: Option<Vec<(NodeId, NodeId)>>,
}

impl Topology {
    /// Exactly `edges`.
    pub fn explicit(edges: Vec<(NodeId, NodeId)>) -> Self {
        Topology {
            topology: None,
            edges: Some(edges),
        }
    }

    /// Whether the command line named a topology.
    pub fn is_given(&self) -> bool {
        self.topology.is_some() || self.edges.is_some()
    }

    /// The undirected edges over nodes `0..n`.
    pub fn edges(&self, n: u32) -> Vec<(NodeId, NodeId)> {
        if let Some(edges) = &self.edges {
            return edges.clone();
        }
        let e = |a: u32, b: u32| (NodeId(a), NodeId(b));
        match self.topology.unwrap_or(Shape::Ring) {
            Shape::Line => (1..n).map(|i| e(i - 1, i)).collect(),
            Shape::Ring if n > 2 => (0..n).map(|i| e(i, (i + 1) % n)).collect(),
            Shape::Ring => (1..n).map(|i| e(i - 1, i)).collect(),
            Shape::Star => (1..n).map(|i| e(0, i)).collect(),
            Shape::Full => full_edges(n),
        }
    }

    /// As command line arguments, to hand on to a node.
    pub fn to_args(&self) -> Vec<String> {
        match &self.edges {
            Some(edges) => {
                let list: Vec<_> = edges
                    .iter()
                    .map(|(a, b)| format!("{}-{}", a.0, b.0))
                    .collect();
                vec!["--edges".into(), list.join(",")]
            }
            None => match self.topology {
                Some(shape) => {
                    let shape = shape.to_possible_value().expect("no skipped shapes");
                    vec!["--topology".into(), shape.get_name().into()]
                }
                None => vec![],
            },
        }
    }
}

/// Every pair of nodes `0..n`.
pub fn full_edges(n: u32) -> Vec<(NodeId, NodeId)> {
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (NodeId(a), NodeId(b))))
        .collect()
}

fn parse_edge(s: &str) -> Result<(NodeId, NodeId), String> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| format!("an edge is two node ids joined by '-', not {s:?}"))?;
    let id = |x: &str| {
        x.trim()
            .parse()
            .map(NodeId)
            .map_err(|e| format!("{x:?}: {e}"))
    };
    Ok((id(a)?, id(b)?))
}

/// `id=address`, one peer of `--peers`.
pub fn parse_peer(s: &str) -> Result<(NodeId, SocketAddr), String> {
    let (id, addr) = s
        .split_once('=')
        .ok_or_else(|| format!("a peer is id=address, not {s:?}"))?;
    let id = id.trim().parse().map_err(|e| format!("{id:?}: {e}"))?;
    let addr = addr.trim().parse().map_err(|e| format!("{addr:?}: {e}"))?;
    Ok((NodeId(id), addr))
}

/// A whole-number flag's parser, for values of at least `min`: clap's message names the flag
/// and this says the range (with `allow_negative_numbers`, `-5` reaches it as a value instead
/// of being taken for an unknown flag).
pub fn at_least<T>(min: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s| match s.trim().parse::<T>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(format!("must be a whole number ≥ {min}")),
    }
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Node(args) => node::run(args),
        Command::Resource(args) => resource::run(args),
        Command::Launch(args) => launch::run(args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
