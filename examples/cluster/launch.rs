//! The launcher: for each algorithm, a resource process and N node processes on loopback
//! ports. It cuts and restores random links (the nodes drop every datagram of a cut link, so
//! the token algorithms' sessions see it fail and come back), or follows node positions from
//! an ns-2 mobility trace; sends each node a burst of garbage; kills nodes with `kill -9` in
//! their critical section or while they wait, and restarts them with empty state; follows the
//! nodes' progress on their standard output, and passes the run if the resource saw no
//! violation, no node misbehaved, every requested kill happened, and every live node reached
//! its target (or, without recovery, a token loss was reported).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use manet_mutex::driver::wire::{self, Envelope, Payload};
use manet_mutex::session::{Epochs, Frame};
use manet_mutex::{reverse_link, NodeId};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::{full_edges, Algorithm, Outcome, Topology};

#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// The algorithms to run, one after the other: `all`, or a comma separated list.
    #[arg(long, default_value = "all", value_parser = parse_selection)]
    algorithm: Selection,
    /// Node processes per algorithm.
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = crate::at_least(2u32))]
    nodes: u32,
    /// Critical-section entries per algorithm, shared evenly among the nodes.
    #[arg(long, default_value_t = 200, allow_negative_numbers = true, value_parser = crate::at_least(1u64))]
    entries: u64,
    /// Probability that a node drops a datagram it receives.
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    loss: f64,
    /// Planned link flaps per algorithm: both ends of a random link (token algorithms: of the
    /// topology; permission algorithms: a pair of hosts) close it, and open it again after
    /// `--down-ms`. Nothing is lost. Default 10, and 0 with `--mobility`.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::at_least(0u32))]
    flaps: Option<u32>,
    /// Link failures per algorithm: both ends of a random link drop every datagram of the
    /// other for `--down-ms`. Beyond the session's liveness timeout (400 ms) the link fails
    /// and forms again; a token sent over it meanwhile is lost (and reported).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::at_least(0u32))]
    cuts: u32,
    /// How long a link stays down, in ms.
    #[arg(long, default_value_t = 500, allow_negative_numbers = true, value_parser = crate::at_least(0u64))]
    down_ms: u64,
    /// A new flap starts this often, in ms.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, value_parser = crate::at_least(1u64))]
    flap_every_ms: u64,
    /// Garbage datagrams sent to each node in one burst during the run.
    #[arg(long, default_value_t = 500, allow_negative_numbers = true, value_parser = crate::at_least(0u32))]
    garbage: u32,
    /// Tokens (KRL, KRLF) or resources (prioritized); default 2.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::at_least(1u32))]
    k: Option<u32>,
    #[command(flatten)]
    topology: Topology,
    /// Mean pause between a node's critical sections, in ms.
    #[arg(long, default_value_t = 20, allow_negative_numbers = true, value_parser = crate::at_least(0u64))]
    think: u64,
    /// Time in the critical section, in ms.
    #[arg(long, default_value_t = 2, allow_negative_numbers = true, value_parser = crate::at_least(0u64))]
    hold: u64,
    /// Give up on an algorithm's run after this many seconds.
    #[arg(long, default_value_t = 60, allow_negative_numbers = true, value_parser = crate::at_least(1u64))]
    timeout: u64,
    /// Run each algorithm this many seconds, then stop it (no entry target: the run counts
    /// what it made). Off by default: a run lasts until every node reached its target.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::at_least(1u64))]
    duration: Option<u64>,
    /// Seed of the launcher's and the nodes' randomness.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::at_least(0u64))]
    seed: u64,
    /// Have the resource check every grant's fence (always on with `--recovery`).
    #[arg(long)]
    check_fences: bool,
    /// Recovery from crashes: the token algorithms make lost tokens again (beacons, claims,
    /// regeneration, entry leases; prioritized also frees a crashed holder's units), the
    /// permission algorithms exclude silent hosts (leases, exclusion after `--exclusion`
    /// retransmission timeouts) and take restarted ones back. Off by default: the papers'
    /// algorithms. Kills need it.
    #[arg(long)]
    recovery: bool,
    /// With --recovery: a holder floods a beacon for its token at most this often, in ms.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, value_parser = crate::at_least(1u64))]
    beacon_ms: u64,
    /// With --recovery: an entry's lease, in ms.
    #[arg(long, default_value_t = 250, allow_negative_numbers = true, value_parser = crate::at_least(1u64))]
    lease_ms: u64,
    /// With --recovery: the most hops across a connected part (default: nodes less one).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::at_least(1u32))]
    diameter: Option<u32>,
    /// With --recovery, permission algorithms: exclude a host silent through this many
    /// retransmission timeouts (default: the least that keeps one acting holder for the
    /// lease, `Settings::exclusion_safe`; a smaller one is refused by the nodes).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::at_least(0u32))]
    exclusion: Option<u32>,
    /// With --recovery, majority mode: the permission algorithms enter only with the grants
    /// of a majority, the token algorithms make a lost token again only with a majority's
    /// promises (each node stores them in its state directory).
    #[arg(long)]
    majority: bool,
    /// Kill this many nodes (`kill -9`) in their critical section, holding their grant, one
    /// after the other (each once the previous kill has been recovered from).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::at_least(0u32))]
    kill: u32,
    /// Kill this many nodes while they wait for the critical section too (alternating with
    /// the holders).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::at_least(0u32))]
    kill_waiting: u32,
    /// Restart each killed node this long after its kill, in ms, with the same command line
    /// and state directory (it makes the entries it still owed). Without it a kill is a
    /// crash-stop.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::at_least(0u64))]
    restart_after: Option<u64>,
    /// The least time between two kills, in ms (the first comes this long after the warm-up).
    #[arg(long, default_value_t = 1000, allow_negative_numbers = true, value_parser = crate::at_least(1u64))]
    kill_every_ms: u64,
    /// Follow the node positions of an ns-2 mobility trace (nodes 0..N of the file): a link
    /// exists while its two nodes are within `--range` of each other, and both ends drop each
    /// other's datagrams otherwise. Token algorithms only; the trace gives the topology.
    #[arg(long)]
    mobility: Option<PathBuf>,
    /// With --mobility: the radio range, in the trace's unit (metres).
    #[arg(long, default_value_t = 250.0, allow_negative_numbers = true)]
    range: f64,
    /// Print the run's events as they happen (kills, restarts, tokens lost, made again and
    /// destroyed, lease expiries, link changes), each with its time since the start.
    #[arg(long)]
    verbose: bool,
}

#[derive(Debug, Clone)]
struct Selection(Vec<Algorithm>);

fn parse_selection(s: &str) -> Result<Selection, String> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(Selection(Algorithm::ALL.to_vec()));
    }
    s.split(',')
        .map(|a| {
            Algorithm::from_str(a.trim(), true).map_err(|_| {
                let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
                format!(
                    "{:?}: not an algorithm; all, or any of {}",
                    a.trim(),
                    names.join(", ")
                )
            })
        })
        .collect::<Result<_, _>>()
        .map(Selection)
}

/// The warm-up the nodes are given, in ms, before their first request.
const WARMUP_MS: u64 = 300;
/// A run with a token reported lost and no entry for this long is over (without recovery).
const STALL: Duration = Duration::from_secs(5);

/// The link changes of a mobility trace, prepared before any process starts.
#[derive(Debug, Clone, Default)]
struct Mobility {
    /// The links at time 0 (joined into one connected network): the token algorithms' layout.
    initial: Vec<(NodeId, NodeId)>,
    /// The pairs out of range once the changes at time 0 are made.
    cut: BTreeSet<(u32, u32)>,
    /// (ms, a, b, whether the link forms), in time order, after time 0.
    changes: Vec<(u64, u32, u32, bool)>,
}

impl LaunchArgs {
    fn k(&self) -> u32 {
        self.k.unwrap_or(2)
    }

    /// Flags that apply to none of the chosen algorithms are refused rather than ignored.
    fn applies(&self) -> Result<(), String> {
        let links = self.algorithm.0.iter().any(|a| a.uses_links());
        let permission = self.algorithm.0.iter().any(|a| !a.uses_links());
        let given = [
            ("--k", self.k.is_some(), links, "krl, krlf and prioritized"),
            (
                "--topology",
                self.topology.is_given(),
                links,
                "krl, krlf and prioritized (look-ahead and ra send to every host directly)",
            ),
            (
                "--exclusion",
                self.exclusion.is_some(),
                permission,
                "look-ahead and ra",
            ),
        ];
        for (flag, given, applies, to) in given {
            if given && !applies {
                let chosen: Vec<&str> = self.algorithm.0.iter().map(|a| a.name()).collect();
                let flag = if flag == "--topology" {
                    "--topology/--edges"
                } else {
                    flag
                };
                return Err(format!(
                    "{flag}: applies to --algorithm {to}, not {}",
                    chosen.join(",")
                ));
            }
        }
        Ok(())
    }

    /// Each chosen token algorithm's layout over `edges`, built as the nodes will build it
    /// (`network`), so that what a node would refuse is refused here, before any process
    /// starts; and, on links that never change, no node without one (it would wait for ever).
    fn check_layout(&self, edges: &[(NodeId, NodeId)], mobile: bool) -> Result<(), String> {
        use manet_mutex::prioritized;
        let flags = if mobile {
            "the trace's links at time 0".to_string()
        } else if self.topology.is_given() {
            "--topology/--edges".to_string()
        } else {
            "the default ring".to_string()
        };
        if !mobile {
            if let Some(lonely) =
                (0..self.nodes).find(|&i| !edges.iter().any(|(a, b)| a.0 == i || b.0 == i))
            {
                return Err(format!(
                    "{flags}: node {lonely} of --nodes {} has no link, and links do not form \
                     without --mobility: it would wait for ever",
                    self.nodes
                ));
            }
        }
        for &algorithm in &self.algorithm.0 {
            let built = match algorithm {
                Algorithm::Krl | Algorithm::Krlf => {
                    if self.k() >= self.nodes {
                        return Err(format!(
                            "--k {} with --nodes {}: {} needs k < nodes (tokens at nodes 0 to \
                             k − 1, and a node without one to pass them to)",
                            self.k(),
                            self.nodes,
                            algorithm.name()
                        ));
                    }
                    let holders: Vec<NodeId> = (0..self.k()).map(NodeId).collect();
                    let settings = reverse_link::Settings::new(self.k());
                    reverse_link::network(self.nodes, edges, &holders, settings).map(drop)
                }
                Algorithm::Prioritized => {
                    let settings = prioritized::Settings::new(self.k(), prioritized::Policy::Equal);
                    prioritized::network(self.nodes, edges, &[NodeId(0)], settings).map(drop)
                }
                Algorithm::LookAhead | Algorithm::Ra => Ok(()),
            };
            built.map_err(|e| {
                format!(
                    "{flags} with --k {} and --nodes {}: {} refuses it: {e}",
                    self.k(),
                    self.nodes,
                    algorithm.name()
                )
            })?;
        }
        Ok(())
    }

    fn flaps(&self) -> u32 {
        self.flaps
            .unwrap_or(if self.mobility.is_some() { 0 } else { 10 })
    }

    /// Everything the children would refuse, and every link the launcher would pick, checked
    /// before any process starts: a child that refuses its flags would leave the others
    /// waiting for it. The mobility trace, read and turned into link changes.
    fn validate(&self) -> Result<Option<Mobility>, String> {
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(format!(
                "--loss is a probability, 0 to 1, not {}",
                self.loss
            ));
        }
        self.applies()?;
        if !self.recovery && (self.exclusion.is_some() || self.majority) {
            return Err("--exclusion and --majority are recovery settings: give --recovery".into());
        }
        if let Some(m) = self.exclusion {
            if !crate::node::exclusion_safe(self.nodes, self.lease_ms, m) {
                return Err(format!(
                    "--exclusion {m}: too few retransmission timeouts for leases of {} ms \
                     (Settings::exclusion_safe; the nodes would refuse it)",
                    self.lease_ms
                ));
            }
        }
        if self.recovery && self.nodes > 1 << 16 {
            return Err("--recovery: node ids must be below 65,536".into());
        }
        let kills = self.kill + self.kill_waiting;
        if kills > 0 {
            if !self.recovery {
                return Err(
                    "--kill and --kill-waiting need --recovery: without it a killed \
                     holder's token is gone for good, and a killed host is waited for for ever"
                        .into(),
                );
            }
        } else if self.restart_after.is_some() {
            return Err("--restart-after restarts killed nodes: give --kill too".into());
        }
        if self.restart_after.is_none() && kills >= self.nodes {
            return Err(format!(
                "--kill {} --kill-waiting {} without --restart-after leaves none of the {} \
                 nodes alive",
                self.kill, self.kill_waiting, self.nodes
            ));
        }
        let mobility = match &self.mobility {
            Some(file) => Some(self.mobility(file)?),
            None => None,
        };
        let edges = match &mobility {
            Some(m) => m.initial.clone(),
            None => self.topology.edges(self.nodes),
        };
        if let Some((a, b)) = edges
            .iter()
            .find(|(a, b)| a == b || a.0 >= self.nodes || b.0 >= self.nodes)
        {
            return Err(format!(
                "--edges: {}-{} is not a link between two of the {} nodes (ids 0 to {})",
                a.0,
                b.0,
                self.nodes,
                self.nodes - 1
            ));
        }
        if edges.is_empty() && self.flaps() + self.cuts > 0 {
            return Err("--flaps and --cuts need at least one link".into());
        }
        self.check_layout(&edges, mobility.is_some())?;
        Ok(mobility)
    }

    /// The link changes of `--mobility` over the run, for nodes `0..nodes` of the trace.
    fn mobility(&self, file: &PathBuf) -> Result<Mobility, String> {
        use manet_mutex_sim::ns2::Trace;
        if let Some(a) = self.algorithm.0.iter().find(|a| !a.uses_links()) {
            return Err(format!(
                "--mobility: {} sends every message straight to its host, with no routing over \
                 the links a trace gives; choose among krl, krlf, prioritized",
                a.name()
            ));
        }
        if self.flaps.is_some_and(|f| f > 0) || self.cuts > 0 || self.topology.is_given() {
            return Err(
                "--mobility: the trace gives the links and their changes; drop --flaps, \
                        --cuts, --topology and --edges"
                    .into(),
            );
        }
        if !(self.range.is_finite() && self.range > 0.0) {
            return Err(format!(
                "--range {}: must be a positive distance",
                self.range
            ));
        }
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("--mobility {}: {e}", file.display()))?;
        // Only nodes 0..n: the statements about the others are left out.
        let n = self.nodes as usize;
        let ours = |line: &str| {
            let Some(rest) = line.split_once("$node_(").map(|(_, r)| r) else {
                return true;
            };
            rest.split_once(')')
                .and_then(|(i, _)| i.trim().parse::<usize>().ok())
                .is_none_or(|i| i < n)
        };
        let kept: Vec<&str> = text.lines().filter(|l| ours(l)).collect();
        let trace = Trace::parse(&kept.join("\n"))
            .map_err(|e| format!("--mobility {}: {e}", file.display()))?;
        let unplaced: Vec<String> = trace.unplaced().iter().map(usize::to_string).collect();
        if !unplaced.is_empty() {
            eprintln!(
                "warning: --mobility {}: node(s) {} have no initial position (no `set X_` or \
                 `set Y_`) and start at (0, 0)",
                file.display(),
                unplaced.join(", ")
            );
        }
        if trace.nodes() < n {
            return Err(format!(
                "--mobility {}: the trace has {} nodes, fewer than --nodes {n}",
                file.display(),
                trace.nodes()
            ));
        }
        let seconds = self.duration.unwrap_or(self.timeout) as f64;
        let replay = trace.replay(self.range, seconds);
        let key = |a: NodeId, b: NodeId| (a.0.min(b.0), a.0.max(b.0));
        let mut linked: BTreeSet<(u32, u32)> =
            replay.initial.iter().map(|&(a, b)| key(a, b)).collect();
        let mut changes = vec![];
        for c in &replay.changes {
            let ms = (c.time * 1000.0).round() as u64;
            if ms == 0 {
                if c.up {
                    linked.insert(key(c.a, c.b));
                } else {
                    linked.remove(&key(c.a, c.b));
                }
            } else {
                changes.push((ms, c.a.0, c.b.0, c.up));
            }
        }
        let cut = full_edges(self.nodes)
            .into_iter()
            .map(|(a, b)| key(a, b))
            .filter(|p| !linked.contains(p))
            .collect();
        Ok(Mobility {
            initial: replay.initial,
            cut,
            changes,
        })
    }
}

pub fn run(args: LaunchArgs) -> Outcome {
    let mobility = args.validate()?;
    let mut all_ok = true;
    for &algorithm in &args.algorithm.0 {
        let outcome = run_one(&args, algorithm, mobility.as_ref())?;
        println!("{}", outcome.summary(algorithm, &args));
        for problem in &outcome.problems {
            println!("  FAILED: {problem}");
        }
        all_ok &= outcome.problems.is_empty();
    }
    Ok(all_ok)
}

/// One process the launcher started.
struct Proc {
    child: Child,
    stdin: ChildStdin,
}

/// The children of one run, every process started (killed and restarted ones included).
/// Whatever way the run ends (an error while starting them included), none outlives it:
/// dropping this kills those still running and reaps them.
struct Children(Vec<Proc>);

impl Drop for Children {
    fn drop(&mut self) {
        for p in &mut self.0 {
            if p.child.try_wait().ok().flatten().is_none() {
                let _ = p.child.kill();
            }
            let _ = p.child.wait();
        }
    }
}

/// The nodes' state directories of one run (`--state-dir`), removed when the run is over
/// (after its children: declared after them in [`Run`]).
struct StateDirs(std::path::PathBuf);

impl StateDirs {
    fn new(algorithm: Algorithm) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "manet-mutex-cluster-{}-{}",
            std::process::id(),
            algorithm.name()
        ));
        // A leftover of an earlier process with this id is no state of this run.
        let _ = std::fs::remove_dir_all(&dir);
        StateDirs(dir)
    }

    fn of(&self, node: u32) -> String {
        self.0.join(format!("node-{node}")).display().to_string()
    }
}

impl Drop for StateDirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A line from a child's standard output (`None` when it closed): by node (`0..n`, the
/// resource `n`) and incarnation.
type Line = (usize, u32, Option<String>);

fn spawn(
    args: Vec<String>,
    who: usize,
    incarnation: u32,
    lines: &Sender<Line>,
) -> std::io::Result<Proc> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let lines = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send((who, incarnation, Some(line)));
        }
        let _ = lines.send((who, incarnation, None));
    });
    Ok(Proc { child, stdin })
}

/// Free loopback addresses: bound by the system, released for the children.
fn free_addrs(count: u32) -> std::io::Result<Vec<SocketAddr>> {
    let sockets = (0..count)
        .map(|_| UdpSocket::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?;
    sockets.iter().map(UdpSocket::local_addr).collect()
}

/// Where a node's application is, as its output shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Thinking,
    Waiting,
    Inside,
    Done,
}

/// What the launcher knows of one node.
#[derive(Debug)]
struct NodeState {
    /// The incarnation of its current (or last) process.
    incarnation: u32,
    /// Its process's index in `Children`, while it runs (`None` once killed).
    proc: Option<usize>,
    seen: Seen,
    /// Entries over all its incarnations.
    entries: u64,
    /// Asked to linger in its next critical section (to be killed there).
    lingering: bool,
}

/// What a kill asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Victim {
    /// A node in its critical section (it lingers there until killed).
    Holder,
    /// A node waiting for the critical section.
    Waiting,
}

/// One kill and what followed it.
#[derive(Debug, Clone)]
struct Kill {
    node: usize,
    incarnation: u32,
    /// Since the run's start.
    at: Duration,
    /// Whether the node was in its critical section when it died (known once its output
    /// ended).
    inside: Option<bool>,
    /// The first entry anywhere after the kill, and the first sign of recovery after it: a
    /// token made again (token algorithms), or the killed host excluded by a peer
    /// (permission algorithms).
    next_entry: Option<Duration>,
    recovered: Option<Duration>,
    restarted: Option<Duration>,
}

/// What a run showed.
#[derive(Debug, Default)]
struct RunOutcome {
    /// Summed over the nodes' `stats` lines.
    totals: std::collections::BTreeMap<String, u64>,
    resource: String,
    /// Flaps and cuts carried out (a run may end before all are).
    flaps: u32,
    /// Link changes of the mobility trace carried out.
    moves: u32,
    /// Whether every node was sent garbage (and must have counted some).
    garbage_sent: bool,
    kills: Vec<Kill>,
    /// Kills the run asked for (0 for an algorithm without recovery).
    kills_wanted: (u32, u32),
    entries_seen: u64,
    first_entry: Option<Duration>,
    last_entry: Option<Duration>,
    regenerated: u64,
    destroyed: u64,
    excluded: u64,
    readmitted: u64,
    wall: Duration,
    problems: Vec<String>,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Mean and maximum, in seconds, of `values` (`-` for none).
fn mean_max(values: impl Iterator<Item = Duration>) -> String {
    let v: Vec<f64> = values.map(secs).collect();
    if v.is_empty() {
        return "-".into();
    }
    let max = v.iter().copied().fold(0.0, f64::max);
    format!(
        "mean {:.2} s max {:.2} s (n={})",
        v.iter().sum::<f64>() / v.len() as f64,
        max,
        v.len()
    )
}

impl RunOutcome {
    fn summary(&self, algorithm: Algorithm, args: &LaunchArgs) -> String {
        let t = |k: &str| self.totals.get(k).copied().unwrap_or(0);
        let mut out = format!(
            "{:<12} {} entries={} messages={} datagrams={} lost_to_injection={} flaps={}/{} \
             links_up={} links_abandoned={} loss_reports={} tokens_reported_lost={} garbage_dropped={} wall={:.1}s\n  resource: {}",
            algorithm.name(),
            if self.problems.is_empty() { "ok" } else { "FAILED" },
            self.entries_seen,
            t("messages"),
            t("sent"),
            t("dropped"),
            self.flaps,
            args.flaps() + args.cuts,
            t("links_up"),
            t("links_abandoned"),
            t("lost_reports"),
            t("lost_precious"),
            t("garbage") + t("unknown"),
            self.wall.as_secs_f64(),
            self.resource,
        );
        let recovering = args.recovery;
        let (made_again, lost_with) = if algorithm.uses_links() {
            ("token regenerated", "a token lost with it made again")
        } else {
            ("the killed host excluded", "the killed host excluded")
        };
        if args.recovery || args.mobility.is_some() || args.duration.is_some() {
            let span = self
                .last_entry
                .map_or(0.0, |l| secs(l) - (WARMUP_MS as f64 / 1000.0));
            out += &format!(
                "\n  recovery={} entries_seen={} last_entry={} entries_per_s={:.1} \
                 regenerated={} destroyed={} excluded={} readmitted={} lease_expired={} \
                 link_changes={}",
                if recovering { "on" } else { "off" },
                self.entries_seen,
                self.last_entry
                    .map_or("-".into(), |l| format!("{:.2}s", secs(l))),
                if span > 0.0 {
                    self.entries_seen as f64 / span
                } else {
                    0.0
                },
                self.regenerated,
                self.destroyed,
                self.excluded,
                self.readmitted,
                t("lease_expired"),
                self.moves,
            );
        }
        if !self.kills.is_empty() || self.kills_wanted != (0, 0) {
            let holders = || self.kills.iter().filter(|k| k.inside == Some(true));
            let waiting = || self.kills.iter().filter(|k| k.inside == Some(false));
            out += &format!(
                "\n  kills: {} holders, {} waiting (asked {} + {}), restarted {}\n  \
                 holder killed -> next entry anywhere: {}\n  \
                 holder killed -> {made_again}: {}\n  \
                 waiting host killed -> next entry anywhere: {}\n  \
                 waiting host killed -> {lost_with}: {}",
                holders().count(),
                waiting().count(),
                self.kills_wanted.0,
                self.kills_wanted.1,
                self.kills.iter().filter(|k| k.restarted.is_some()).count(),
                mean_max(holders().filter_map(|k| Some(k.next_entry? - k.at))),
                mean_max(holders().filter_map(|k| Some(k.recovered? - k.at))),
                mean_max(waiting().filter_map(|k| Some(k.next_entry? - k.at))),
                mean_max(waiting().filter_map(|k| Some(k.recovered? - k.at))),
            );
        }
        out
    }
}

/// One algorithm's run: the children, what the launcher knows of each node, and the plans.
struct Run<'a> {
    args: &'a LaunchArgs,
    algorithm: Algorithm,
    n: usize,
    per_node: u64,
    start: Instant,
    children: Children,
    /// Each node's durable state: a restart is the same command line (but `--incarnation`,
    /// the label of its reports, and `--entries`, what it still owes).
    _state: StateDirs,
    /// The resource's index in `children`.
    resource: usize,
    /// Each node's command line but `--entries`, `--incarnation` and `--cut`.
    node_args: Vec<Vec<String>>,
    nodes: Vec<NodeState>,
    /// Kept for restarts; dropped once the run is over, so the lines end.
    tx: Option<Sender<Line>>,
    /// Readers still open.
    open: usize,
    /// The pairs cut now (random cuts, mobility), both ways.
    cut: BTreeSet<(u32, u32)>,
    /// The kills still to make, in order.
    victims: Vec<Victim>,
    /// A holder asked to linger, to be killed once inside.
    lingerer: Option<usize>,
    restarts: Vec<(Duration, usize)>,
    /// Tokens lost and not made again yet (each reported possibly lost on a breaking link, or
    /// killed with a holder, less each made again), and when the last was lost: a kill waits
    /// until none is owed, or the longest recovery (`recovery_bound`) passed since (a token
    /// reported possibly lost may have arrived after all).
    owed: u64,
    last_loss: Option<Duration>,
    recovery_bound: Duration,
    rng: ChaCha8Rng,
    outcome: RunOutcome,
    /// `quit` was sent to every process: from then on, outputs are expected to end.
    quitting: bool,
    /// A process the launcher did not kill ended before `quit` (an error, a panic, a signal
    /// from outside): the run cannot finish, so it ends at once instead of at `--timeout`.
    died: Option<String>,
}

fn run_one(
    args: &LaunchArgs,
    algorithm: Algorithm,
    mobility: Option<&Mobility>,
) -> Result<RunOutcome, Box<dyn std::error::Error>> {
    let n = args.nodes;
    let addrs = free_addrs(n + 1)?;
    let (resource, peers) = (addrs[n as usize], &addrs[..n as usize]);
    let peer_list: Vec<String> = peers
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{i}={a}"))
        .collect();
    let k = if algorithm.uses_links() { args.k() } else { 1 };
    let per_node = args.entries.div_ceil(u64::from(n));
    let recovering = args.recovery;
    let (tx, lines) = mpsc::channel();
    let start = Instant::now();

    let mut resource_args = vec![
        "resource".into(),
        "--supervised".into(),
        "--listen".into(),
        resource.to_string(),
    ];
    resource_args.extend(["--k".into(), k.to_string(), "--nodes".into(), n.to_string()]);
    if args.check_fences || recovering {
        resource_args.push("--check-fences".into());
        if algorithm == Algorithm::Prioritized {
            resource_args.push("--concurrent-grants".into());
        }
        if !algorithm.uses_links() {
            resource_args.push("--permission".into());
        }
    }
    let topology = match mobility {
        Some(m) => Topology::explicit(m.initial.clone()),
        None => args.topology.clone(),
    };
    let state = StateDirs::new(algorithm);
    let node_args: Vec<Vec<String>> = (0..n)
        .map(|i| {
            let mut a: Vec<String> = [
                "node",
                "--supervised",
                "--id",
                &i.to_string(),
                "--algorithm",
                algorithm.name(),
            ]
            .map(String::from)
            .into();
            a.extend(["--peers".into(), peer_list.join(",")]);
            a.extend(["--state-dir".into(), state.of(i)]);
            a.extend(topology.to_args());
            for (flag, value) in [
                ("--k", k.to_string()),
                ("--resource", resource.to_string()),
                ("--think", args.think.to_string()),
                ("--hold", args.hold.to_string()),
                ("--loss", args.loss.to_string()),
                ("--seed", (args.seed * 1000 + u64::from(i)).to_string()),
                ("--warmup", WARMUP_MS.to_string()),
            ] {
                a.extend([flag.into(), value]);
            }
            if recovering {
                a.push("--recovery".into());
                a.extend(["--beacon-ms".into(), args.beacon_ms.to_string()]);
                a.extend(["--lease-ms".into(), args.lease_ms.to_string()]);
                if let Some(d) = args.diameter {
                    a.extend(["--diameter".into(), d.to_string()]);
                }
                if !algorithm.uses_links() {
                    if let Some(m) = args.exclusion {
                        a.extend(["--exclusion".into(), m.to_string()]);
                    }
                }
                if args.majority {
                    a.push("--majority".into());
                }
            }
            if mobility.is_some() {
                a.push("--mobile".into());
            }
            a
        })
        .collect();
    let mut victims = vec![];
    if recovering {
        let (mut h, mut w) = (args.kill, args.kill_waiting);
        while h + w > 0 {
            if h > 0 {
                victims.push(Victim::Holder);
                h -= 1;
            }
            if w > 0 {
                victims.push(Victim::Waiting);
                w -= 1;
            }
        }
    }
    let mut run = Run {
        args,
        algorithm,
        n: n as usize,
        per_node,
        start,
        children: Children(vec![]),
        _state: state,
        resource: n as usize,
        node_args,
        nodes: (0..n)
            .map(|_| NodeState {
                incarnation: 0,
                proc: None,
                seen: Seen::Thinking,
                entries: 0,
                lingering: false,
            })
            .collect(),
        tx: Some(tx),
        open: 0,
        cut: mobility.map(|m| m.cut.clone()).unwrap_or_default(),
        victims,
        lingerer: None,
        restarts: vec![],
        owed: 0,
        last_loss: None,
        recovery_bound: {
            let r = crate::node::recovery(args.beacon_ms, args.lease_ms, args.diameter, n);
            Duration::from_millis(r.silence() + r.claim_wait() + 1000)
        },
        rng: ChaCha8Rng::seed_from_u64(args.seed ^ 0x6b69_6c6c),
        quitting: false,
        died: None,
        outcome: RunOutcome {
            kills_wanted: if recovering {
                (args.kill, args.kill_waiting)
            } else {
                (0, 0)
            },
            ..RunOutcome::default()
        },
    };
    for i in 0..n as usize {
        run.start_node(i, 0, per_node)?;
    }
    // Last, so that each node's first process is at its id.
    let proc = spawn(resource_args, n as usize, 0, run.tx.as_ref().expect("kept"))?;
    run.children.0.push(proc);
    run.open += 1;

    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let links: Vec<(NodeId, NodeId)> = if algorithm.uses_links() {
        topology.edges(n)
    } else {
        full_edges(n)
    };
    let result = run.follow(&lines, &links, peers, &mut rng, mobility);
    run.tx = None;
    // The children's exits, given time to finish their output (`Children` kills and reaps
    // whatever is left on any other way out).
    let mut exits = vec![];
    for who in 0..=n as usize {
        let proc = if who == n as usize {
            Some(run.resource)
        } else {
            run.nodes[who].proc
        };
        let Some(proc) = proc else {
            exits.push((who, None));
            continue;
        };
        let child = &mut run.children.0[proc].child;
        let deadline = Instant::now() + Duration::from_secs(5);
        let status = loop {
            match child.try_wait().ok().flatten() {
                Some(status) => break Some(status),
                None if Instant::now() > deadline => {
                    let _ = child.kill();
                    break None;
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        exits.push((who, Some(status)));
    }
    result?;
    // The rest of the output (the `stats` and `verdict` lines come last).
    for (who, incarnation, line) in lines.iter() {
        match line {
            Some(line) => run.take_line(who, incarnation, &line),
            None => run.closed(who, incarnation),
        }
    }
    run.outcome.wall = start.elapsed();
    run.judge(&exits);
    Ok(std::mem::take(&mut run.outcome))
}

impl Run<'_> {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// With --verbose, `what` happened now.
    fn event(&self, what: std::fmt::Arguments) {
        if self.args.verbose {
            println!(
                "  {:>7.3}s {} {what}",
                secs(self.elapsed()),
                self.algorithm.name()
            );
        }
    }

    /// Start node `i`'s next process (its first, or a restart), owing `entries` entries.
    fn start_node(&mut self, i: usize, incarnation: u32, entries: u64) -> std::io::Result<()> {
        let mut a = self.node_args[i].clone();
        a.extend(["--entries".into(), entries.to_string()]);
        a.extend(["--incarnation".into(), incarnation.to_string()]);
        let cut: Vec<String> = self
            .cut
            .iter()
            .filter_map(|&(x, y)| match i as u32 {
                me if me == x => Some(y),
                me if me == y => Some(x),
                _ => None,
            })
            .map(|p| p.to_string())
            .collect();
        if !cut.is_empty() {
            a.extend(["--cut".into(), cut.join(",")]);
        }
        let proc = spawn(
            a,
            i,
            incarnation,
            self.tx.as_ref().expect("kept during the run"),
        )?;
        self.children.0.push(proc);
        self.open += 1;
        let node = &mut self.nodes[i];
        node.incarnation = incarnation;
        node.proc = Some(self.children.0.len() - 1);
        node.seen = Seen::Thinking;
        node.lingering = false;
        Ok(())
    }

    /// Write `line` to node `i`'s process, if it runs (one that exited no longer listens).
    fn tell(&mut self, i: usize, line: &str) {
        if let Some(p) = self.nodes[i].proc {
            let _ = writeln!(self.children.0[p].stdin, "{line}");
        }
    }

    fn tell_resource(&mut self, line: &str) {
        let _ = writeln!(self.children.0[self.resource].stdin, "{line}");
    }

    /// Cut or heal the link `a`-`b` at both ends.
    fn cut_link(&mut self, a: u32, b: u32, cut: bool) {
        let word = if cut { "cut" } else { "heal" };
        self.tell(a as usize, &format!("{word} {b}"));
        self.tell(b as usize, &format!("{word} {a}"));
        let key = (a.min(b), a.max(b));
        if cut {
            self.cut.insert(key);
        } else {
            self.cut.remove(&key);
        }
    }

    /// `kill -9` node `i` now, tell the resource, and plan its restart.
    fn kill(&mut self, i: usize) {
        let Some(p) = self.nodes[i].proc.take() else {
            return;
        };
        let child = &mut self.children.0[p].child;
        // SIGKILL, then reaped: the process is gone before anyone is told.
        let _ = child.kill();
        let _ = child.wait();
        let incarnation = self.nodes[i].incarnation;
        self.event(format_args!(
            "kill -9 node {i} (incarnation {incarnation}, {:?})",
            self.nodes[i].seen
        ));
        let restart = self.args.restart_after;
        let word = if restart.is_some() { "crashed" } else { "gone" };
        self.tell_resource(&format!("{word} {i} {incarnation}"));
        let at = self.elapsed();
        if let Some(after) = restart {
            self.restarts.push((at + Duration::from_millis(after), i));
        }
        self.nodes[i].lingering = false;
        if self.lingerer == Some(i) {
            self.lingerer = None;
        }
        self.outcome.kills.push(Kill {
            node: i,
            incarnation,
            at,
            inside: None,
            next_entry: None,
            recovered: None,
            restarted: None,
        });
    }

    /// Whether the last kill has been recovered from: an entry after it, the token of a
    /// killed holder made again, every token reported lost made again (or given up on), and
    /// an entry after the node's restart if it restarts. Then the next may come,
    /// `--kill-every-ms` after it. (So each kill's numbers are its own.)
    fn ready_to_kill(&self) -> bool {
        let now = self.elapsed();
        if self.owed > 0
            && self
                .last_loss
                .is_some_and(|l| now < l + self.recovery_bound)
        {
            return false;
        }
        let first = Duration::from_millis(WARMUP_MS + self.args.kill_every_ms);
        match self.outcome.kills.last() {
            None => now >= first,
            Some(k) => {
                // A permission host may come back (and be answered) before its peers
                // excluded it: its restart and an entry after it are recovery enough.
                let token = match k.inside {
                    None => false,
                    Some(inside) => {
                        !inside || k.recovered.is_some() || !self.algorithm.uses_links()
                    }
                };
                let settled = match (self.args.restart_after, k.restarted) {
                    (None, _) => k.next_entry.is_some(),
                    (Some(_), None) => false,
                    (Some(_), Some(r)) => self.outcome.last_entry.is_some_and(|l| l > r),
                };
                token && settled && now >= k.at + Duration::from_millis(self.args.kill_every_ms)
            }
        }
    }

    /// The live nodes that will still request the critical section.
    fn candidates(&self, seen: Option<Seen>) -> Vec<usize> {
        (0..self.n)
            .filter(|&i| {
                let node = &self.nodes[i];
                node.proc.is_some()
                    && node.seen != Seen::Done
                    && node.entries + 1 < self.per_node
                    && seen.is_none_or(|s| node.seen == s)
            })
            .collect()
    }

    /// The next kill, when its time has come: a holder is asked to linger in its next
    /// critical section (and killed there); a waiting node is killed at once.
    fn plan_kill(&mut self) {
        if self.lingerer.is_some() || self.victims.is_empty() || !self.ready_to_kill() {
            return;
        }
        match self.victims[0] {
            Victim::Holder => {
                let c = self.candidates(None);
                if let Some(&i) = c.get(self.rng.random_range(0..c.len().max(1))) {
                    self.victims.remove(0);
                    self.lingerer = Some(i);
                    self.nodes[i].lingering = true;
                    self.tell(i, "linger");
                }
            }
            Victim::Waiting => {
                let c = self.candidates(Some(Seen::Waiting));
                if let Some(&i) = c.get(self.rng.random_range(0..c.len().max(1))) {
                    self.victims.remove(0);
                    self.kill(i);
                }
            }
        }
    }

    /// Drive the run: flaps, link changes, garbage, kills and restarts on schedule, the
    /// children's output as it comes, until the children are done, or stalled after a token
    /// loss (without recovery), or out of time.
    fn follow(
        &mut self,
        lines: &Receiver<Line>,
        links: &[(NodeId, NodeId)],
        peers: &[SocketAddr],
        rng: &mut ChaCha8Rng,
        mobility: Option<&Mobility>,
    ) -> std::io::Result<()> {
        let args = self.args;
        let recovering = args.recovery;
        let mut last_entry = Instant::now();
        // A line on stderr every 2 s while the run lasts: `cluster launch (KRL): 120/200
        // entries, 4 s`.
        let progress = manet_mutex_sim::progress::Progress::new(
            format!("cluster launch ({})", self.algorithm.name()),
            args.entries,
            "entries",
        );
        // The failures among the flaps, at random places.
        let mut kinds = vec![("cut", "heal"); args.cuts as usize];
        kinds.extend(vec![("close", "open"); args.flaps() as usize]);
        kinds.shuffle(rng);
        // (time in ms, link, control word), in time order.
        let mut plan: Vec<(u64, (NodeId, NodeId), &str)> = (1..)
            .zip(kinds)
            .flat_map(|(i, (down, up))| {
                let at = WARMUP_MS + i * args.flap_every_ms;
                let link = links[rng.random_range(0..links.len())];
                [(at, link, down), (at + args.down_ms, link, up)]
            })
            .collect();
        plan.sort_by_key(|&(at, _, _)| at);
        let mut plan = plan.into_iter().peekable();
        let mut moves = mobility
            .map(|m| m.changes.clone())
            .unwrap_or_default()
            .into_iter()
            .peekable();
        while self.open > 0 || !self.restarts.is_empty() {
            let ms = self.elapsed().as_millis() as u64;
            while let Some((_, (a, b), word)) = plan.next_if(|&(at, _, _)| at <= ms) {
                self.outcome.flaps += u32::from(word == "close" || word == "cut");
                match word {
                    "cut" | "heal" => self.cut_link(a.0, b.0, word == "cut"),
                    _ => {
                        self.tell(a.index(), &format!("{word} {}", b.0));
                        self.tell(b.index(), &format!("{word} {}", a.0));
                    }
                }
            }
            while let Some((_, a, b, up)) = moves.next_if(|&(at, ..)| at <= ms) {
                self.outcome.moves += 1;
                self.event(format_args!(
                    "link {a}-{b} {}",
                    if up { "up" } else { "down" }
                ));
                self.cut_link(a, b, !up);
            }
            if !self.outcome.garbage_sent
                && args.garbage > 0
                && ms >= WARMUP_MS + args.flap_every_ms / 2
            {
                self.outcome.garbage_sent = true;
                send_garbage(peers, args.garbage, rng)?;
            }
            if !self.quitting {
                let now = self.elapsed();
                let due: Vec<usize> = self
                    .restarts
                    .iter()
                    .filter(|&&(at, _)| at <= now)
                    .map(|&(_, i)| i)
                    .collect();
                self.restarts.retain(|&(at, _)| at > now);
                for i in due {
                    self.restart(i)?;
                }
                self.plan_kill();
            }
            match lines.recv_timeout(Duration::from_millis(10)) {
                Ok((who, incarnation, Some(line))) => {
                    if line.starts_with("entered") {
                        last_entry = Instant::now();
                        progress.inc(1);
                    }
                    self.take_line(who, incarnation, &line);
                }
                Ok((who, incarnation, None)) => self.closed(who, incarnation),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            let lost = self
                .outcome
                .totals
                .get("lost_precious_live")
                .is_some_and(|&l| l > 0);
            let stalled =
                !recovering && args.duration.is_none() && lost && last_entry.elapsed() > STALL;
            let over = args
                .duration
                .is_some_and(|d| self.elapsed() > Duration::from_secs(d));
            let late = self.elapsed() > Duration::from_secs(args.timeout);
            let died = self.died.take();
            if (stalled || late || over || died.is_some()) && !self.quitting {
                self.quitting = true;
                self.restarts.clear();
                if let Some(died) = died {
                    self.event(format_args!("{died}: stopping the run"));
                    self.outcome.problems.push(died);
                } else if late && !over {
                    self.outcome
                        .problems
                        .push(format!("not finished after {} s", args.timeout));
                }
                for i in 0..self.n {
                    self.tell(i, "quit");
                }
                self.tell_resource("quit");
            }
            if self.quitting
                && self.elapsed()
                    > Duration::from_secs(args.timeout.max(args.duration.unwrap_or(0)) + 5)
            {
                break;
            }
        }
        Ok(())
    }

    /// Restart killed node `i` with empty state under its next incarnation, owing the
    /// entries it had not made.
    fn restart(&mut self, i: usize) -> std::io::Result<()> {
        // Its last lines, read by now or never: what it was doing when it died.
        self.classify(i, self.nodes[i].incarnation);
        let owed = self.per_node.saturating_sub(self.nodes[i].entries);
        self.event(format_args!("restart node {i}, owing {owed} entries"));
        self.start_node(i, self.nodes[i].incarnation + 1, owed)?;
        let at = self.elapsed();
        if let Some(k) = self.outcome.kills.iter_mut().rev().find(|k| k.node == i) {
            k.restarted = Some(at);
        }
        Ok(())
    }

    /// How many tokens the algorithm has: at most that many can be lost at once.
    fn tokens(&self) -> u64 {
        match self.algorithm {
            Algorithm::Krl | Algorithm::Krlf => u64::from(self.args.k()),
            _ => 1,
        }
    }

    /// The first sign of recovery after the last kill (`what`) came `now`.
    fn recovered(&mut self, now: Duration, what: &str) {
        if let Some(k) = self.outcome.kills.last().filter(|k| k.recovered.is_none()) {
            let (node, at) = (k.node, k.at);
            self.event(format_args!(
                "{what} {:.3} s after the kill of node {node}",
                secs(now - at)
            ));
        }
        if let Some(k) = self.outcome.kills.last_mut() {
            k.recovered.get_or_insert(now);
        }
    }

    /// The kill of `node`'s `incarnation`, if any: whether it died inside, from what it last
    /// printed (once, at the first of its output's end and its restart).
    fn classify(&mut self, node: usize, incarnation: u32) {
        let inside = self.nodes[node].seen == Seen::Inside;
        if let Some(k) = self
            .outcome
            .kills
            .iter_mut()
            .find(|k| k.node == node && k.incarnation == incarnation && k.inside.is_none())
        {
            k.inside = Some(inside);
            // A token algorithm's holder takes its token (prioritized: the units) with it.
            if inside && self.algorithm.uses_links() {
                self.owed = (self.owed + 1).min(self.tokens());
                self.last_loss = Some(self.elapsed());
            }
        }
    }

    /// A child's output ended.
    fn closed(&mut self, who: usize, incarnation: u32) {
        self.open -= 1;
        let current = who < self.n && incarnation == self.nodes[who].incarnation;
        if current {
            self.classify(who, incarnation);
        }
        // Not one the launcher killed (a killed node's `proc` is taken first).
        let proc = if who == self.n {
            Some(self.resource)
        } else {
            self.nodes[who].proc.filter(|_| current)
        };
        let Some(proc) = proc else { return };
        if self.quitting || self.died.is_some() {
            return;
        }
        // Its output ended: it is exiting. A process stopped by the resource (the run is
        // complete) exits 0; one that failed, panicked or was killed from outside does not.
        let child = &mut self.children.0[proc].child;
        let deadline = Instant::now() + Duration::from_millis(500);
        let status = loop {
            match child.try_wait() {
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(status) => break status,
                Err(_) => break None,
            }
        };
        if let Some(status) = status.filter(|s| !s.success()) {
            let name = if who == self.n {
                "the resource".to_string()
            } else {
                format!("node {who}")
            };
            self.died = Some(format!(
                "{name} ended before the run did ({status}; its error, if any, is above)"
            ));
        }
    }

    fn take_line(&mut self, who: usize, incarnation: u32, line: &str) {
        let mut words = line.split_whitespace();
        let first = words.next();
        let now = self.elapsed();
        // A node's application steps, from its current (or last) process only; a killed
        // process's last lines tell what it did before it died.
        let current = who < self.n && incarnation == self.nodes[who].incarnation;
        let alive = current && self.nodes[who].proc.is_some();
        match first {
            Some("requested") if current => self.nodes[who].seen = Seen::Waiting,
            Some("left") if current => self.nodes[who].seen = Seen::Thinking,
            Some("done") if current => {
                self.nodes[who].seen = Seen::Done;
                if self.lingerer == Some(who) {
                    // It made its last entry before it could linger: choose another.
                    self.lingerer = None;
                    self.nodes[who].lingering = false;
                    self.victims.insert(0, Victim::Holder);
                }
            }
            Some("expired") if current => self.nodes[who].seen = Seen::Thinking,
            Some("lingering") if current && self.lingerer == Some(who) => {
                self.kill(who);
            }
            _ => {}
        }
        match first {
            Some("entered") if who < self.n => {
                self.nodes[who].entries += 1;
                if current {
                    self.nodes[who].seen = Seen::Inside;
                }
                self.outcome.entries_seen += 1;
                self.outcome.first_entry.get_or_insert(now);
                if !alive {
                    return;
                }
                self.outcome.last_entry = Some(now);
                if let Some(k) = self.outcome.kills.last().filter(|k| k.next_entry.is_none()) {
                    let (node, at) = (k.node, k.at);
                    self.event(format_args!(
                        "node {who} entered, {:.3} s after the kill of node {node}",
                        secs(now - at)
                    ));
                }
                // Kills are paced: only the last one can still wait for its first entry.
                if let Some(k) = self.outcome.kills.last_mut() {
                    k.next_entry.get_or_insert(now);
                }
            }
            Some("regenerated") => {
                self.outcome.regenerated += 1;
                self.owed = self.owed.saturating_sub(1);
                self.recovered(now, "a token made again");
            }
            Some("destroyed") => self.outcome.destroyed += 1,
            Some("excluded") => {
                self.outcome.excluded += 1;
                // The first peer to stop waiting for the killed host.
                let peer = line.split_whitespace().nth(1).and_then(|p| p.parse().ok());
                if self
                    .outcome
                    .kills
                    .last()
                    .is_some_and(|k| Some(k.node) == peer)
                {
                    self.recovered(now, "the killed host excluded");
                }
            }
            Some("readmitted") => self.outcome.readmitted += 1,
            _ => {}
        }
        if matches!(
            first,
            Some("regenerated" | "destroyed" | "lost" | "expired" | "excluded" | "readmitted")
        ) {
            self.event(format_args!("node {who}: {line}"));
        }
        match first {
            Some("stats") => {
                let o = &mut self.outcome;
                for (key, value) in words.filter_map(|w| w.split_once('=')) {
                    if let Ok(v) = value.parse::<u64>() {
                        *o.totals.entry(key.into()).or_default() += v;
                    } else if key == "status" && value != "Remainder" {
                        *o.totals.entry("unserved".into()).or_default() += 1;
                    }
                }
                *o.totals.entry("stats_lines".into()).or_default() += 1;
                let none = |key| line.contains(&format!(" {key}=0 "));
                // A restarted process may have started after the garbage.
                if o.garbage_sent && incarnation == 0 && none("garbage") && none("unknown") {
                    o.problems
                        .push(format!("node {who} counted no garbage datagram"));
                }
            }
            Some("lost") => {
                let peer: Option<usize> =
                    line.split_whitespace().nth(1).and_then(|w| w.parse().ok());
                let precious: u64 = words.nth(2).and_then(|w| w.parse().ok()).unwrap_or(0);
                // Lost on the way to the node just killed, with a token made again since: the
                // same loss (prioritized's turnover answers before the session reports it).
                let answered = self.outcome.kills.last().is_some_and(|k| {
                    Some(k.node) == peer
                        && k.recovered.is_some()
                        && now < k.at + Duration::from_millis(2 * crate::node::HOP_BOUND_MS)
                });
                if precious > 0 && !answered {
                    // There are only so many tokens to lose ("possibly lost" ones may have
                    // arrived, at a holder that died with them).
                    self.owed = (self.owed + precious).min(self.tokens());
                    self.last_loss = Some(now);
                }
                *self
                    .outcome
                    .totals
                    .entry("lost_precious_live".into())
                    .or_default() += precious;
            }
            Some("verdict") if who == self.n => self.outcome.resource = line.into(),
            _ => {}
        }
    }

    /// The run's problems, from the children's exits and reports.
    fn judge(&mut self, exits: &[(usize, Option<Option<ExitStatus>>)]) {
        let o = &mut self.outcome;
        let t = |o: &RunOutcome, k: &str| o.totals.get(k).copied().unwrap_or(0);
        let mut live = 0;
        for &(who, exit) in exits {
            let name = if who == self.n {
                "the resource".to_string()
            } else {
                format!("node {who}")
            };
            match exit {
                // Killed for good.
                None => {}
                Some(Some(status)) if status.success() => live += u64::from(who < self.n),
                Some(Some(status)) => o.problems.push(format!("{name} exited with {status}")),
                Some(None) => o.problems.push(format!("{name} did not exit; killed")),
            }
        }
        if t(o, "stats_lines") != live {
            o.problems.push(format!(
                "{} of {live} live nodes reported their stats",
                t(o, "stats_lines")
            ));
        }
        if !o.resource.starts_with("verdict ok") {
            o.problems
                .push("the resource saw a violation (see above), or gave no verdict".into());
        }
        let short: Vec<String> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.proc.is_some() && n.entries < self.per_node)
            .map(|(i, n)| format!("node {i}: {}/{}", n.entries, self.per_node))
            .collect();
        let served = short.is_empty() && t(o, "unserved") == 0;
        let recovering = self.args.recovery;
        if self.args.duration.is_none() && !served && (recovering || t(o, "lost_precious") == 0) {
            o.problems.push(format!(
                "{} of {} entries, {} nodes not served at the end ({}){}",
                o.entries_seen,
                self.per_node * self.n as u64,
                t(o, "unserved"),
                short.join(", "),
                if recovering {
                    ""
                } else {
                    ", and no token loss reported"
                },
            ));
        }
        let holders = o.kills.iter().filter(|k| k.inside == Some(true)).count() as u32;
        let (want_h, want_w) = o.kills_wanted;
        if holders < want_h || (o.kills.len() as u32) < want_h + want_w {
            o.problems.push(format!(
                "{} kills ({holders} of holders in their critical section), {} + {} asked",
                o.kills.len(),
                want_h,
                want_w
            ));
        }
        if self.args.restart_after.is_some() {
            let missing = o.kills.iter().filter(|k| k.restarted.is_none()).count();
            if missing > 0 {
                o.problems
                    .push(format!("{missing} killed nodes were not restarted"));
            }
        }
    }
}

/// A burst of datagrams to every node that are not its peers' frames: random bytes, frames
/// cut short, frames with one bit flipped (which the datagram check refuses), and well-formed
/// frames that name no peer or come from the wrong address.
fn send_garbage(peers: &[SocketAddr], count: u32, rng: &mut ChaCha8Rng) -> std::io::Result<()> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    let hello = |sender: u32| {
        let frame = Frame::Hello {
            epochs: Epochs {
                sender: 1,
                receiver: 0,
            },
        };
        // To node 0, from `sender`: the driver's frame format (a receiver other than the
        // node is as foreign as a sender that is no peer).
        wire::encode::<reverse_link::Message>(&Envelope {
            from: NodeId(sender),
            to: NodeId(0),
            payload: Payload::Session(frame),
        })
    };
    for addr in peers {
        for i in 0..count {
            let bytes: Vec<u8> = match i % 5 {
                0 => (0..rng.random_range(0..120))
                    .map(|_| rng.random())
                    .collect(),
                1 => {
                    let frame = hello(0);
                    frame[..rng.random_range(0..frame.len())].to_vec()
                }
                2 => {
                    let mut frame = hello(rng.random_range(0..peers.len() as u32));
                    let bit = rng.random_range(0..frame.len() * 8);
                    frame[bit / 8] ^= 1 << (bit % 8);
                    frame
                }
                3 => hello(peers.len() as u32 + rng.random_range(0..1000)),
                _ => hello(rng.random_range(0..peers.len() as u32)),
            };
            // A full buffer at the node drops some: that is what a flood does.
            let _ = socket.send_to(&bytes, addr);
        }
    }
    Ok(())
}
