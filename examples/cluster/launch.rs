//! The launcher: for each algorithm, a resource process and N node processes on loopback
//! ports. It cuts and restores random links (the nodes drop every datagram of a cut link, so
//! the token algorithms' sessions see it fail and come back), sends each node a burst of
//! garbage, follows the nodes' progress on their standard output, and passes the run if the
//! resource saw no violation, no node misbehaved, and every node reached its target or a
//! token loss was reported.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use manet_mutex::session::{Epochs, Frame};
use manet_mutex::{reverse_link, NodeId};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::wire::{self, Body};
use crate::{full_edges, Algorithm, Outcome, Topology};

#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// The algorithms to run, one after the other: `all`, or a comma separated list.
    #[arg(long, default_value = "all", value_parser = parse_selection)]
    algorithm: Selection,
    /// Node processes per algorithm.
    #[arg(long, default_value_t = 5)]
    nodes: u32,
    /// Critical-section entries per algorithm, shared evenly among the nodes.
    #[arg(long, default_value_t = 200)]
    entries: u64,
    /// Probability that a node drops a datagram it receives.
    #[arg(long, default_value_t = 0.1)]
    loss: f64,
    /// Planned link flaps per algorithm: both ends of a random link (token algorithms: of the
    /// topology; permission algorithms: a pair of hosts) close it, and open it again after
    /// `--down-ms`. Nothing is lost.
    #[arg(long, default_value_t = 10)]
    flaps: u32,
    /// Link failures per algorithm: both ends of a random link drop every datagram of the
    /// other for `--down-ms`. Beyond the session's liveness timeout (400 ms) the link fails
    /// and forms again; a token sent over it meanwhile is lost (and reported).
    #[arg(long, default_value_t = 0)]
    cuts: u32,
    /// How long a link stays down, in ms.
    #[arg(long, default_value_t = 500)]
    down_ms: u64,
    /// A new flap starts this often, in ms.
    #[arg(long, default_value_t = 100)]
    flap_every_ms: u64,
    /// Garbage datagrams sent to each node in one burst during the run.
    #[arg(long, default_value_t = 500)]
    garbage: u32,
    /// Tokens (KRL, KRLF) or resources (prioritized).
    #[arg(long, default_value_t = 2)]
    k: u32,
    #[command(flatten)]
    topology: Topology,
    /// Mean pause between a node's critical sections, in ms.
    #[arg(long, default_value_t = 20)]
    think: u64,
    /// Time in the critical section, in ms.
    #[arg(long, default_value_t = 2)]
    hold: u64,
    /// Give up on an algorithm's run after this many seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Seed of the launcher's and the nodes' randomness.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Have the resource check every grant's fence.
    #[arg(long)]
    check_fences: bool,
}

#[derive(Debug, Clone)]
struct Selection(Vec<Algorithm>);

fn parse_selection(s: &str) -> Result<Selection, String> {
    if s == "all" {
        return Ok(Selection(Algorithm::ALL.to_vec()));
    }
    s.split(',')
        .map(|a| Algorithm::from_str(a.trim(), true))
        .collect::<Result<_, _>>()
        .map(Selection)
}

/// The warm-up the nodes are given, in ms, before their first request.
const WARMUP_MS: u64 = 300;
/// A run with a token reported lost and no entry for this long is over.
const STALL: Duration = Duration::from_secs(5);

impl LaunchArgs {
    /// Everything the children would refuse, and every link the launcher would pick, checked
    /// before any process starts: a child that refuses its flags would leave the others
    /// waiting for it.
    fn validate(&self) -> Result<(), String> {
        if self.nodes < 2 {
            return Err("a cluster needs at least 2 nodes".into());
        }
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(format!(
                "--loss is a probability, 0 to 1, not {}",
                self.loss
            ));
        }
        if self.k == 0 {
            return Err("--k must be at least 1".into());
        }
        if self.entries == 0 || self.timeout == 0 {
            return Err("--entries and --timeout must be at least 1".into());
        }
        let edges = self.topology.edges(self.nodes);
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
        if edges.is_empty() && self.flaps + self.cuts > 0 {
            return Err("--flaps and --cuts need at least one link".into());
        }
        Ok(())
    }
}

pub fn run(args: LaunchArgs) -> Outcome {
    args.validate()?;
    let mut all_ok = true;
    for &algorithm in &args.algorithm.0 {
        let outcome = run_one(&args, algorithm)?;
        println!("{}", outcome.summary(algorithm, &args));
        for problem in &outcome.problems {
            println!("  FAILED: {problem}");
        }
        all_ok &= outcome.problems.is_empty();
    }
    Ok(all_ok)
}

/// The children of one run. Whatever way the run ends (an error while starting them
/// included), none outlives it: dropping this kills those still running and reaps them.
struct Children(Vec<(Child, ChildStdin)>);

impl Drop for Children {
    fn drop(&mut self) {
        for (child, _) in &mut self.0 {
            if child.try_wait().ok().flatten().is_none() {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// A line from a child's standard output (`None` when it closed), by child: nodes `0..n`,
/// the resource `n`.
type Line = (usize, Option<String>);

fn spawn(
    args: Vec<String>,
    who: usize,
    lines: &Sender<Line>,
) -> std::io::Result<(Child, ChildStdin)> {
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
            let _ = lines.send((who, Some(line)));
        }
        let _ = lines.send((who, None));
    });
    Ok((child, stdin))
}

/// Free loopback addresses: bound by the system, released for the children.
fn free_addrs(count: u32) -> std::io::Result<Vec<SocketAddr>> {
    let sockets = (0..count)
        .map(|_| UdpSocket::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()?;
    sockets.iter().map(UdpSocket::local_addr).collect()
}

/// What a run showed.
#[derive(Debug, Default)]
struct RunOutcome {
    /// Summed over the nodes' `stats` lines.
    totals: BTreeMap<String, u64>,
    resource: String,
    /// Flaps and cuts carried out (a run may end before all are).
    flaps: u32,
    /// Whether every node was sent garbage (and must have counted some).
    garbage_sent: bool,
    wall: Duration,
    problems: Vec<String>,
}

impl RunOutcome {
    fn summary(&self, algorithm: Algorithm, args: &LaunchArgs) -> String {
        let t = |k: &str| self.totals.get(k).copied().unwrap_or(0);
        format!(
            "{:<12} {} entries={} messages={} datagrams={} lost_to_injection={} flaps={}/{} \
             links_up={} links_abandoned={} loss_reports={} tokens_reported_lost={} garbage_dropped={} wall={:.1}s\n  resource: {}",
            algorithm.name(),
            if self.problems.is_empty() { "ok" } else { "FAILED" },
            t("entries"),
            t("messages"),
            t("sent"),
            t("dropped"),
            self.flaps,
            args.flaps + args.cuts,
            t("links_up"),
            t("links_abandoned"),
            t("lost_reports"),
            t("lost_precious"),
            t("garbage") + t("unknown"),
            self.wall.as_secs_f64(),
            self.resource,
        )
    }
}

fn run_one(
    args: &LaunchArgs,
    algorithm: Algorithm,
) -> Result<RunOutcome, Box<dyn std::error::Error>> {
    let n = args.nodes;
    let addrs = free_addrs(n + 1)?;
    let (resource, peers) = (addrs[n as usize], &addrs[..n as usize]);
    let peer_list: Vec<String> = peers
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{i}={a}"))
        .collect();
    let k = if algorithm.uses_links() { args.k } else { 1 };
    let per_node = args.entries.div_ceil(u64::from(n));
    let (tx, lines) = mpsc::channel();
    let start = Instant::now();

    let mut resource_args = vec!["resource".into(), "--listen".into(), resource.to_string()];
    resource_args.extend(["--k".into(), k.to_string(), "--nodes".into(), n.to_string()]);
    if args.check_fences {
        resource_args.push("--check-fences".into());
        if algorithm == Algorithm::Prioritized {
            resource_args.push("--concurrent-grants".into());
        }
    }
    let mut children = Children(vec![]);
    for i in 0..n {
        let mut a: Vec<String> = [
            "node",
            "--id",
            &i.to_string(),
            "--algorithm",
            algorithm.name(),
        ]
        .map(String::from)
        .into();
        a.extend(["--peers".into(), peer_list.join(",")]);
        a.extend(args.topology.to_args());
        for (flag, value) in [
            ("--k", k.to_string()),
            ("--resource", resource.to_string()),
            ("--entries", per_node.to_string()),
            ("--think", args.think.to_string()),
            ("--hold", args.hold.to_string()),
            ("--loss", args.loss.to_string()),
            ("--seed", (args.seed * 1000 + u64::from(i)).to_string()),
            ("--warmup", WARMUP_MS.to_string()),
        ] {
            a.extend([flag.into(), value]);
        }
        children.0.push(spawn(a, i as usize, &tx)?);
    }
    // Last, so that each node's child is at its id.
    children.0.push(spawn(resource_args, n as usize, &tx)?);
    drop(tx);

    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let links: Vec<(NodeId, NodeId)> = if algorithm.uses_links() {
        args.topology.edges(n)
    } else {
        full_edges(n)
    };
    let mut outcome = RunOutcome::default();
    let result = follow(
        args,
        &mut children.0,
        &lines,
        &links,
        peers,
        &mut rng,
        &mut outcome,
    );
    // The children's exits, given time to finish their output (`Children` kills and reaps
    // whatever is left on any other way out).
    let mut exits = vec![];
    for (child, _) in &mut children.0 {
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
        exits.push(status);
    }
    result?;
    // The rest of the output (the `stats` and `verdict` lines come last).
    for (who, line) in lines.iter() {
        if let Some(line) = line {
            outcome.take_line(who, n as usize, &line);
        }
    }
    outcome.wall = start.elapsed();
    outcome.judge(&exits, n, per_node);
    Ok(outcome)
}

/// Drive the run: flaps and garbage on schedule, the children's output as it comes, until the
/// children are done, or stalled after a token loss, or out of time.
fn follow(
    args: &LaunchArgs,
    children: &mut [(Child, ChildStdin)],
    lines: &Receiver<Line>,
    links: &[(NodeId, NodeId)],
    peers: &[SocketAddr],
    rng: &mut ChaCha8Rng,
    outcome: &mut RunOutcome,
) -> std::io::Result<()> {
    let n = peers.len();
    let start = Instant::now();
    let mut open = children.len();
    let mut last_entry = Instant::now();
    let mut quit_sent = false;
    // The failures among the flaps, at random places.
    let mut kinds = vec![("cut", "heal"); args.cuts as usize];
    kinds.extend(vec![("close", "open"); args.flaps as usize]);
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
    while open > 0 {
        let ms = start.elapsed().as_millis() as u64;
        while let Some((_, (a, b), word)) = plan.next_if(|&(at, _, _)| at <= ms) {
            outcome.flaps += u32::from(word == "close" || word == "cut");
            // A node that has exited no longer listens: nothing to do for it.
            let _ = writeln!(children[a.index()].1, "{word} {}", b.0);
            let _ = writeln!(children[b.index()].1, "{word} {}", a.0);
        }
        if !outcome.garbage_sent && args.garbage > 0 && ms >= WARMUP_MS + args.flap_every_ms / 2 {
            outcome.garbage_sent = true;
            send_garbage(peers, args.garbage, rng)?;
        }
        match lines.recv_timeout(Duration::from_millis(20)) {
            Ok((who, Some(line))) => {
                if line.starts_with("entered") {
                    last_entry = Instant::now();
                }
                outcome.take_line(who, n, &line);
            }
            Ok((_, None)) => open -= 1,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let lost = outcome
            .totals
            .get("lost_precious_live")
            .is_some_and(|&l| l > 0);
        let stalled = lost && last_entry.elapsed() > STALL;
        let late = start.elapsed() > Duration::from_secs(args.timeout);
        if (stalled || late) && !quit_sent {
            quit_sent = true;
            if late {
                outcome
                    .problems
                    .push(format!("not finished after {} s", args.timeout));
            }
            for (_, stdin) in children.iter_mut() {
                let _ = writeln!(stdin, "quit");
            }
        }
        if quit_sent && late && start.elapsed() > Duration::from_secs(args.timeout + 5) {
            break;
        }
    }
    Ok(())
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
        wire::encode::<reverse_link::Message>(NodeId(sender), &Body::Session(frame))
            .expect("a Hello encodes")
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

impl RunOutcome {
    fn take_line(&mut self, who: usize, n: usize, line: &str) {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("stats") => {
                for (key, value) in words.filter_map(|w| w.split_once('=')) {
                    if let Ok(v) = value.parse::<u64>() {
                        *self.totals.entry(key.into()).or_default() += v;
                    } else if key == "status" && value != "Remainder" {
                        *self.totals.entry("unserved".into()).or_default() += 1;
                    }
                }
                *self.totals.entry("stats_lines".into()).or_default() += 1;
                let none = |key| line.contains(&format!(" {key}=0 "));
                if self.garbage_sent && none("garbage") && none("unknown") {
                    self.problems
                        .push(format!("node {who} counted no garbage datagram"));
                }
            }
            Some("lost") => {
                let precious: u64 = words.nth(2).and_then(|w| w.parse().ok()).unwrap_or(0);
                *self.totals.entry("lost_precious_live".into()).or_default() += precious;
            }
            Some("verdict") if who == n => self.resource = line.into(),
            _ => {}
        }
    }

    /// The run's problems, from the children's exits and reports.
    fn judge(&mut self, exits: &[Option<std::process::ExitStatus>], n: u32, per_node: u64) {
        let t = |k: &str| self.totals.get(k).copied().unwrap_or(0);
        for (who, exit) in exits.iter().enumerate() {
            let name = if who == n as usize {
                "the resource".to_string()
            } else {
                format!("node {who}")
            };
            match exit {
                Some(status) if status.success() => {}
                Some(status) => self.problems.push(format!("{name} exited with {status}")),
                None => self.problems.push(format!("{name} did not exit; killed")),
            }
        }
        if t("stats_lines") != u64::from(n) {
            self.problems.push(format!(
                "{} of {n} nodes reported their stats",
                t("stats_lines")
            ));
        }
        if !self.resource.starts_with("verdict ok") {
            self.problems
                .push("the resource saw a violation (see above), or gave no verdict".into());
        }
        let served = t("entries") >= per_node * u64::from(n) && t("unserved") == 0;
        if !served && t("lost_precious") == 0 {
            self.problems.push(format!(
                "{} of {} entries, {} nodes not served at the end, and no token loss reported",
                t("entries"),
                per_node * u64::from(n),
                t("unserved"),
            ));
        }
    }
}
