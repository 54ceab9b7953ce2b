//! `mesh-node`: the pieces of the emulated MANET that `run.sh` starts in network namespaces.
//!
//! * `mesh-node node`: one node of an algorithm on the async crate (`manet-mutex-tokio`),
//!   bound to its namespace's address; it takes the lock `--entries` times, reports each entry
//!   and exit to the resource (and waits for its acknowledgement), prints `DONE` when its
//!   entries are reached, keeps serving the others until SIGTERM, then prints one `SUMMARY`
//!   line of `key=value` counters. `--state-dir` keeps its durable state
//!   (`Node::with_state_dir`): a node killed with `kill -9` and started again with the same
//!   command line rejoins safely. `--broadcast ADDR` sends discovery's hellos to a broadcast
//!   or multicast address, `--key-file` authenticates every datagram (feature `auth`); both
//!   for real ad hoc networks as much as for the emulation.
//! * `mesh-node resource`: the fence-checking resource of `--k` units (`resource` below):
//!   per lane a fence above every one admitted (`--distinct`: each fence new, for prioritized
//!   h-out-of-k), at most `k` units held by acting holders. A grant of an older generation
//!   than one admitted (a token from before a regeneration) is refused and counted (`stale`),
//!   not a violation; a holder still inside when a later generation is admitted is fenced off
//!   (`superseded`). Each node process reports under a life of its own, so a restarted node's
//!   reports start over instead of being taken for duplicates. Prints one `ENTER` line per
//!   entry admitted, one `LEAVE` line per entry ended, and `RESOURCE ...` at SIGTERM.
//! * `mesh-node tell`: one control line to the resource (`crashed N`: the harness killed node
//!   N's process).
//! * `mesh-node links`: the link changes of an ns-2 trace under a radio range, for the
//!   harness to cut and heal pairs with (`--diameter`: the most hops across a connected part
//!   of the network over the trace).
//! * `mesh-node delay`: the user-space delay queue of `run.sh --delay` (`delay.rs`).
//!
//! Reports travel as text datagrams on the resource's port, which the harness never impairs.

mod delay;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Parser, Subcommand, ValueEnum};
use manet_mutex::driver::{AuthKey, Config};
use manet_mutex::fence::Fences;
use manet_mutex::token::{RaisePause, Recovery};
use manet_mutex::{
    discovery, driver, look_ahead, prioritized, reverse_link, ricart_agrawala, session, CsRequest,
    Fence, NodeId,
};
use manet_mutex_tokio::{Broadcast, Builder, Durable, Node};
use tokio::net::UdpSocket;
use tokio::signal::unix::{signal, SignalKind};

type Outcome = Result<(), Box<dyn std::error::Error>>;

#[derive(Parser)]
#[command(about = "A node, the resource or the link changes of the emulated MANET (run.sh)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Node(NodeArgs),
    Resource(ResourceArgs),
    Tell(TellArgs),
    Links(LinksArgs),
    Delay(delay::DelayArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Algorithm {
    Krl,
    Krlf,
    Prioritized,
    LookAhead,
    Ra,
}

/// One node: acquire, report, release, think; `entries` times.
#[derive(clap::Args)]
struct NodeArgs {
    #[arg(long)]
    id: u32,
    #[arg(long, value_enum)]
    algorithm: Algorithm,
    /// Every node, this one included: `0=10.77.0.1:7000,1=10.77.0.2:7000,...`, ids 0..n.
    #[arg(long, value_delimiter = ',', value_parser = parse_peer)]
    peers: Vec<(NodeId, SocketAddr)>,
    /// The resource's address.
    #[arg(long)]
    resource: SocketAddr,
    #[arg(long, default_value_t = 50)]
    entries: u64,
    /// Pause between a release and the next request, ms.
    #[arg(long, default_value_t = 20)]
    think: u64,
    /// Time in the critical section (after the resource acknowledged the entry), ms.
    #[arg(long, default_value_t = 2)]
    hold: u64,
    /// Recovery: token algorithms regenerate lost tokens (beacons, claims, leases), the
    /// permission algorithms lease entries and exclude silent peers.
    #[arg(long)]
    recovery: bool,
    /// With --recovery: a holder floods a beacon for its token at most this often, ms.
    #[arg(long, default_value_t = 100)]
    beacon_ms: u64,
    /// With --recovery: an entry's lease, ms; the node is told when it ends and leaves.
    #[arg(long, default_value_t = 250)]
    lease_ms: u64,
    /// Token algorithms: pace height raises, `MIN-MAX` ms (the first pause MIN, doubling up to
    /// MAX while raises keep coming), or `off` (the paper: raise at once). Where no token can
    /// be reached, unpaced partial reversal exchanges heights as fast as the network carries
    /// them (docs/ALGORITHMS.md R15).
    #[arg(long, default_value = "10-200", value_parser = parse_pause)]
    raise_pause: Pause,
    /// The address to bind (default: this node's address in `--peers`); `0.0.0.0:PORT` to
    /// hear `--broadcast`.
    #[arg(long)]
    bind: Option<SocketAddr>,
    /// Token algorithms: send discovery's hellos to this broadcast or multicast address
    /// (`10.77.0.255:7000`) instead of to every peer address.
    #[arg(long)]
    broadcast: Option<SocketAddr>,
    /// A file holding the network's pre-shared key, 64 hex digits (32 bytes): every
    /// datagram carries its HMAC-SHA-256 tag, one without the right tag is dropped.
    #[arg(long)]
    key_file: Option<PathBuf>,
    /// Keep the node's durable state in this directory (created if missing;
    /// `Node::with_state_dir`): a node killed with `kill -9` and started again with the same
    /// command line comes back as a new incarnation, with no token, above every fence and
    /// token round it made. Without it the node keeps nothing, and a restart is not safe.
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// With --recovery, token algorithms: the most hops a beacon crosses to reach every node
    /// of a connected part. Default: the number of nodes less one, the longest a connected
    /// part can be; `run.sh` passes its topology's (1 on its static mesh, where every pair is
    /// in range). The time before a lost token is made again grows with it (3 hop bounds a
    /// hop in the silence, 2 in the claim wait).
    #[arg(long)]
    diameter: Option<u32>,
    /// KRL/KRLF: tokens (nodes 0..k hold one each at start); prioritized: resources of its
    /// one token. The permission algorithms take 1 only.
    #[arg(long, default_value_t = 1)]
    k: u32,
    /// Prioritized: resources asked for in each request (h of h-out-of-k), 1..=k.
    #[arg(long, default_value_t = 1)]
    want: u32,
}

/// `--raise-pause`: `None` for `off` (a newtype, as clap reads a bare `Option` as optional).
#[derive(Clone, Copy)]
struct Pause(Option<RaisePause>);

fn parse_pause(s: &str) -> Result<Pause, String> {
    match s {
        "off" => Ok(Pause(None)),
        _ => s
            .parse()
            .map(|p| Pause(Some(p)))
            .map_err(|e: &str| format!("{s}: {e}")),
    }
}

fn parse_peer(s: &str) -> Result<(NodeId, SocketAddr), String> {
    let (id, addr) = s.split_once('=').ok_or("expected id=addr")?;
    Ok((
        NodeId(id.parse().map_err(|e| format!("{id}: {e}"))?),
        addr.parse().map_err(|e| format!("{addr}: {e}"))?,
    ))
}

/// Retransmission timeout of the sessions and of the permission algorithms' requests, ms.
const RETRANSMIT_MS: u64 = session::Settings::DEFAULT.retransmit_after;
/// The longest a message over a link session takes, ms (as `examples/cluster`: a message
/// not delivered within the liveness timeout plus a retransmission never is).
const HOP_BOUND_MS: u64 =
    session::Settings::DEFAULT.liveness_after + session::Settings::DEFAULT.retransmit_after;
const DRIFT_PPM: u32 = Recovery::DEFAULT_DRIFT_PPM;

/// The least exclusion count that keeps one acting holder (`exclusion_safe`).
fn exclusion(safe: impl Fn(u32) -> bool) -> Result<u32, String> {
    (1..=100_000)
        .find(|&m| safe(m))
        .ok_or_else(|| "no exclusion count is safe for this lease".into())
}

fn full_edges(n: u32) -> Vec<(NodeId, NodeId)> {
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (NodeId(a), NodeId(b))))
        .collect()
}

/// The node's builder: from its state directory if it has one (its first start's
/// configuration, which a restart turns into the empty state the algorithm asks for), else
/// from the configuration alone.
fn builder<C: Durable>(
    args: &NodeArgs,
    first: C,
    bare: impl FnOnce(C) -> Result<C::Core, manet_mutex::Error>,
) -> Result<Builder<C::Core>, Box<dyn std::error::Error>> {
    Ok(match &args.state_dir {
        Some(dir) => Node::with_state_dir(first, dir)?,
        None => Node::builder(bare(first)?),
    })
}

/// The flags' problems, before anything starts.
fn check(args: &NodeArgs) -> Result<(), String> {
    let n = args.peers.len() as u32;
    if args
        .peers
        .iter()
        .enumerate()
        .any(|(i, (id, _))| id.index() != i)
        || args.id >= n
    {
        return Err("--peers must list ids 0..n in order, --id among them".into());
    }
    if n < 2 {
        return Err("--peers needs at least two nodes".into());
    }
    let token = matches!(
        args.algorithm,
        Algorithm::Krl | Algorithm::Krlf | Algorithm::Prioritized
    );
    if args.k == 0 || (!token && args.k > 1) {
        return Err(format!(
            "--k {}: 1 for the permission algorithms, at least 1 for the token ones",
            args.k
        ));
    }
    if matches!(args.algorithm, Algorithm::Krl | Algorithm::Krlf) && args.k > n {
        return Err(format!(
            "--k {}: KRL needs a first holder per token ({n} nodes)",
            args.k
        ));
    }
    if args.want == 0
        || args.want > args.k
        || (args.want > 1 && args.algorithm != Algorithm::Prioritized)
    {
        return Err(format!(
            "--want {}: 1..=k, above 1 for prioritized only",
            args.want
        ));
    }
    if args.diameter == Some(0) {
        return Err("--diameter must be at least 1".into());
    }
    Ok(())
}

fn node(args: NodeArgs) -> Outcome {
    check(&args)?;
    let n = args.peers.len() as u32;
    let me = NodeId(args.id);
    let diameter = args.diameter.unwrap_or(n - 1).max(1);
    let recovery = args
        .recovery
        .then(|| Recovery::new(args.beacon_ms, args.lease_ms, HOP_BOUND_MS, diameter));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Token cores start with no links: they learn each from discovery over the emulated
    // broadcast (hellos to every peer address), so a cut pair goes down.
    match args.algorithm {
        Algorithm::Krl | Algorithm::Krlf => {
            let mut settings = reverse_link::Settings::new(args.k);
            if args.algorithm == Algorithm::Krlf {
                settings = settings.with_forwarding(true).with_idle_pause(5);
            }
            if let Some(r) = recovery {
                settings = settings.with_recovery(r);
            }
            if let Pause(Some(p)) = args.raise_pause {
                settings = settings.with_raise_pause(p);
            }
            let holders: Vec<_> = (0..args.k).map(NodeId).collect();
            let c = reverse_link::network(n, &full_edges(n), &holders, settings)?
                .swap_remove(me.index());
            let bare = reverse_link::Config::new(me, settings, c.tokens, c.height, Vec::new());
            let c = match c.first_token {
                Some(first) => bare.with_first_token(first),
                None => bare,
            };
            let b = builder(&args, c, reverse_link::Node::new)?;
            rt.block_on(run(&args, b))
        }
        Algorithm::Prioritized => {
            let mut settings = prioritized::Settings::new(args.k, prioritized::Policy::Equal);
            if let Some(r) = recovery {
                settings = settings.with_recovery(r);
            }
            if let Pause(Some(p)) = args.raise_pause {
                settings = settings.with_raise_pause(p);
            }
            let c = prioritized::network(n, &full_edges(n), &[NodeId(0)], settings)?
                .swap_remove(me.index());
            let c = prioritized::Config::new(me, settings, c.holder, c.height, Vec::new());
            let b = builder(&args, c, prioritized::Node::new)?;
            rt.block_on(run(&args, b))
        }
        Algorithm::LookAhead => {
            let mut settings = look_ahead::Settings::new(n, RETRANSMIT_MS);
            if args.recovery {
                settings = settings.with_lease(args.lease_ms);
                let m = exclusion(|m| {
                    settings
                        .with_exclusion(m)
                        .exclusion_safe(HOP_BOUND_MS, DRIFT_PPM)
                })?;
                settings = settings.with_exclusion(m);
            }
            let c = look_ahead::network(settings)?.swap_remove(me.index());
            let b = builder(&args, c, look_ahead::Node::new)?;
            rt.block_on(run(&args, b))
        }
        Algorithm::Ra => {
            let mut settings = ricart_agrawala::Settings::new(n, RETRANSMIT_MS);
            if args.recovery {
                settings = settings.with_lease(args.lease_ms);
                let m = exclusion(|m| {
                    settings
                        .with_exclusion(m)
                        .exclusion_safe(HOP_BOUND_MS, DRIFT_PPM)
                })?;
                settings = settings.with_exclusion(m);
            }
            let c = ricart_agrawala::network(settings)?.swap_remove(me.index());
            let b = builder(&args, c, ricart_agrawala::Node::new)?;
            rt.block_on(run(&args, b))
        }
    }
}

/// The key in `path`: 64 hex digits, surrounding white space ignored.
fn read_key(path: &std::path::Path) -> Result<AuthKey, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let hex = text.trim();
    let mut key = [0u8; 32];
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(format!("{}: expected 64 hex digits", path.display()));
    }
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(AuthKey(key))
}

/// Resolves once the process that started this one is gone: a `run.sh` killed with SIGKILL
/// cannot stop its nodes and resource, so they stop themselves.
/// `parent`: the parent's id, read at the start.
async fn orphaned(parent: u32) {
    while std::os::unix::process::parent_id() == parent {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Sends `line` to the resource until it answers `ack <life> <seq>`.
async fn report(
    socket: &UdpSocket,
    to: SocketAddr,
    life: u64,
    seq: u64,
    line: &str,
) -> std::io::Result<()> {
    let want = format!("ack {life} {seq}");
    let mut buf = [0u8; 256];
    loop {
        socket.send_to(line.as_bytes(), to).await?;
        let deadline = tokio::time::sleep(Duration::from_millis(100));
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                _ = &mut deadline => break,
                r = socket.recv_from(&mut buf) => {
                    let (len, _) = r?;
                    if buf[..len] == *want.as_bytes() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// This process's life: the milliseconds since the Unix epoch at its start, so that a node
/// started again reports under a later life than the one killed (the resource starts its
/// reports over instead of taking them for duplicates).
fn life() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

async fn run<P>(args: &NodeArgs, builder: Builder<P>) -> Outcome
where
    P: driver::Algorithm + Send + 'static,
    P::Message: manet_mutex::codec::Wire + Send,
{
    let parent = std::os::unix::process::parent_id();
    let me = args.id as usize;
    let own = args.peers[me].1;
    let life = life();
    let mut builder = builder
        .bind(args.bind.unwrap_or(own))
        .peers(args.peers.iter().copied());
    let mut config = match P::LINKED {
        true => Config::DEFAULT.with_discovery(discovery::Settings::new(100)),
        false => Config::DEFAULT,
    };
    if let Some(path) = &args.key_file {
        config = config.with_key(read_key(path)?);
    }
    builder = builder.config(config);
    if let Some(addr) = args.broadcast {
        builder = builder.broadcast(Broadcast::Address(addr));
    }
    let node = builder.spawn()?;
    let reports = UdpSocket::bind(SocketAddr::new(own.ip(), 0)).await?;
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let start = Instant::now();
    let (mut entries, mut lost, mut seq) = (0u64, 0u64, 0u64);
    let work = async {
        while entries < args.entries {
            let guard = node.acquire_with(CsRequest::resources(args.want)).await?;
            let f = guard.fence();
            seq += 1;
            let enter = format!(
                "enter {me} {life} {seq} {} {} {}",
                f.lane,
                f.value,
                guard.resources()
            );
            report(&reports, args.resource, life, seq, &enter).await?;
            let expired = tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(args.hold)) => false,
                _ = guard.lost() => true,
            };
            lost += u64::from(expired);
            seq += 1;
            let kind = if expired { "expired" } else { "leave" };
            let line = format!("{kind} {me} {life} {seq}");
            report(&reports, args.resource, life, seq, &line).await?;
            drop(guard);
            entries += 1;
            tokio::time::sleep(Duration::from_millis(args.think)).await;
        }
        println!(
            "DONE node={me} entries={entries} secs={:.2}",
            start.elapsed().as_secs_f64()
        );
        // Keep answering the others until told to stop.
        std::future::pending::<()>().await;
        Ok::<(), Box<dyn std::error::Error>>(())
    };
    let result = tokio::select! {
        r = work => r,
        _ = term.recv() => Ok(()),
        _ = int.recv() => Ok(()),
        _ = orphaned(parent) => Ok(()),
    };
    let s = node.stats();
    println!(
        "SUMMARY node={me} life={life} entries={entries} target={} secs={:.2} lost={lost} \
         regenerated={} excluded={} messages={} datagrams_out={} datagrams_in={} retransmitted={} \
         suspect={} dropped_auth={} error={}",
        args.entries,
        start.elapsed().as_secs_f64(),
        s.regenerated,
        s.excluded,
        s.driver.messages_sent,
        s.driver.datagrams_out,
        s.driver.datagrams_in,
        s.driver.retransmitted,
        s.driver.suspect,
        s.driver.dropped_auth,
        result
            .as_ref()
            .err()
            .map_or("none".into(), |e| e.to_string().replace(' ', "_")),
    );
    node.shutdown().await;
    Ok(())
}

/// The resource: `k` units, the nodes' reports in arrival order (a node leaves only once its
/// exit is acknowledged, so an entry that follows a release follows it here too).
#[derive(clap::Args)]
struct ResourceArgs {
    #[arg(long)]
    listen: SocketAddr,
    /// Units: 1 (every algorithm with k = 1), k for KRL (one lane per token) and prioritized
    /// (one lane, h of its k units per holder).
    #[arg(long, default_value_t = 1)]
    k: u32,
    /// Each fence new in its lane rather than above every one admitted (`Fences::distinct`):
    /// for prioritized h-out-of-k, whose concurrent holders report out of grant order.
    #[arg(long)]
    distinct: bool,
    /// The nodes run a permission algorithm: a fence refused because a node killed since was
    /// admitted one at or above it is the documented cost of a crash (`docs/ALGORITHMS.md`,
    /// C6), counted as refused after a crash, not a violation.
    #[arg(long)]
    permission: bool,
}

/// One node's entry, as the resource holds it.
#[derive(Debug, Clone, Copy)]
struct Holding {
    units: u32,
    fence: Fence,
    /// Admitted and not fenced off by a later generation of its token: only acting holders
    /// count against `k`.
    acting: bool,
}

/// What the resource saw.
struct Checker {
    k: u32,
    permission: bool,
    fences: Fences,
    /// The node each lane's highest fence was admitted for, and its life.
    admitted_by: BTreeMap<u32, (usize, u64)>,
    inside: BTreeMap<usize, Holding>,
    held: u64,
    max_held: u64,
    /// Per node: its current life and last report taken.
    lives: BTreeMap<usize, (u64, u64)>,
    /// Per node: the life the harness said it killed (its reports still on the way dropped).
    dead: BTreeMap<usize, u64>,
    entries: u64,
    violations: u64,
    stale: u64,
    after_crash: u64,
    superseded: u64,
    expired: u64,
    crashed_inside: u64,
    restarts: u64,
    from_dead: u64,
    /// Kills not yet followed by an entry of another node: (node, when).
    stalls: VecDeque<(usize, Instant)>,
    /// The longest time from a kill to the next entry admitted for another node.
    stall: Option<Duration>,
}

impl Checker {
    fn new(args: &ResourceArgs) -> Checker {
        Checker {
            k: args.k,
            permission: args.permission,
            fences: if args.distinct {
                Fences::distinct()
            } else {
                Fences::new()
            },
            admitted_by: BTreeMap::new(),
            inside: BTreeMap::new(),
            held: 0,
            max_held: 0,
            lives: BTreeMap::new(),
            dead: BTreeMap::new(),
            entries: 0,
            violations: 0,
            stale: 0,
            after_crash: 0,
            superseded: 0,
            expired: 0,
            crashed_inside: 0,
            restarts: 0,
            from_dead: 0,
            stalls: VecDeque::new(),
            stall: None,
        }
    }

    fn violation(&mut self, what: String) {
        self.violations += 1;
        eprintln!("VIOLATION: {what}");
    }

    /// `node` is no longer inside: its units are free.
    fn leave(&mut self, node: usize) -> Option<Holding> {
        let h = self.inside.remove(&node)?;
        println!("LEAVE node={node}");
        if h.acting {
            self.held -= u64::from(h.units);
        }
        Some(h)
    }

    /// The harness killed `node`'s process: an entry of it ends here, its reports still on
    /// the way are dropped.
    fn crashed(&mut self, node: usize) {
        if let Some(&(life, _)) = self.lives.get(&node) {
            self.dead.insert(node, life);
        }
        if self.leave(node).is_some() {
            self.crashed_inside += 1;
        }
        self.stalls.push_back((node, Instant::now()));
    }

    /// Whether to take the report `seq` of `node`'s `life` (and whether to acknowledge it):
    /// a later life than the current one starts the node's reports over (a restart), an
    /// earlier one, a killed one or a report taken already is not taken.
    fn fresh(&mut self, node: usize, life: u64, seq: u64) -> (bool, bool) {
        if self.dead.get(&node).is_some_and(|&d| life <= d) {
            self.from_dead += 1;
            return (false, false);
        }
        match self.lives.get(&node).copied() {
            Some((current, _)) if life < current => (false, true),
            Some((current, last)) if life == current => {
                if seq <= last {
                    return (false, true);
                }
                self.lives.insert(node, (life, seq));
                (true, true)
            }
            before => {
                if before.is_some() {
                    self.restarts += 1;
                    // Its earlier life is over, killed or not (a harness that did not say).
                    if self.leave(node).is_some() {
                        self.crashed_inside += 1;
                    }
                }
                self.lives.insert(node, (life, seq));
                (true, true)
            }
        }
    }

    /// The fence rule of the protected resource; whether the entry acts. A refusal of an
    /// older generation than the lane's newest is a stale grant; one below a fence admitted
    /// for a permission host killed since is the cost of its crash (C6); any other, a
    /// violation.
    fn admit(&mut self, node: usize, life: u64, fence: Fence) -> bool {
        match self.fences.admit(fence) {
            Ok(()) => {
                self.admitted_by.insert(fence.lane, (node, life));
                // The lane's other acting holders: one of an older generation is fenced off;
                // one of the same generation holds the same token at once, which only
                // prioritized h-out-of-k allows (then `k` bounds them).
                let others: Vec<usize> = self
                    .inside
                    .iter()
                    .filter(|(_, h)| h.acting && h.fence.lane == fence.lane)
                    .map(|(&n, _)| n)
                    .collect();
                for other in others {
                    let h = self.inside.get_mut(&other).expect("listed");
                    if h.fence.generation() < fence.generation() {
                        h.acting = false;
                        self.held -= u64::from(h.units);
                        self.superseded += 1;
                    } else if self.fences.mode() == manet_mutex::fence::Mode::Highest {
                        let f = h.fence;
                        self.violation(format!(
                            "node {node} entered ({fence:?}) while node {other} holds {f:?}"
                        ));
                    }
                }
                true
            }
            Err(highest) if fence.generation() < (highest >> 32) as u32 => {
                self.stale += 1;
                eprintln!("stale grant {fence:?} from {node}: refused");
                false
            }
            Err(highest) => {
                let (by, by_life) = self
                    .admitted_by
                    .get(&fence.lane)
                    .copied()
                    .unwrap_or((node, 0));
                let dead = self.dead.get(&by).is_some_and(|&d| by_life <= d);
                if dead && self.permission {
                    self.after_crash += 1;
                    eprintln!("{fence:?} from {node} refused: {highest:#x} admitted for node {by}, killed since");
                } else {
                    self.violation(format!(
                        "node {node} fence {fence:?} refused, not above {highest:#x} (admitted for node {by})"
                    ));
                }
                false
            }
        }
    }

    fn enter(&mut self, node: usize, life: u64, fence: Fence, units: u32) {
        if self.inside.contains_key(&node) {
            self.violation(format!("node {node} entered while inside already"));
            self.leave(node);
        }
        let acting = self.admit(node, life, fence);
        self.inside.insert(
            node,
            Holding {
                units,
                fence,
                acting,
            },
        );
        if !acting {
            return;
        }
        self.held += u64::from(units);
        self.max_held = self.max_held.max(self.held);
        if self.held > u64::from(self.k) {
            let inside = format!("{:?}", self.inside);
            self.violation(format!(
                "{} units held at once, only {} exist: {inside}",
                self.held, self.k
            ));
        }
        self.entries += 1;
        println!(
            "ENTER node={node} lane={} value={}",
            fence.lane, fence.value
        );
        // The first entry of another node after a kill ends its stall.
        let now = Instant::now();
        while let Some(&(killed, at)) = self.stalls.front() {
            if killed == node {
                break;
            }
            self.stalls.pop_front();
            let took = now - at;
            self.stall = Some(self.stall.map_or(took, |s| s.max(took)));
        }
    }
}

fn resource(args: ResourceArgs) -> Outcome {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let parent = std::os::unix::process::parent_id();
    rt.block_on(async {
        let socket = UdpSocket::bind(args.listen).await?;
        let orphan = orphaned(parent);
        tokio::pin!(orphan);
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut c = Checker::new(&args);
        let mut buf = [0u8; 256];
        loop {
            let (len, from) = tokio::select! {
                r = socket.recv_from(&mut buf) => r?,
                _ = term.recv() => break,
                _ = int.recv() => break,
                _ = &mut orphan => break,
            };
            let Ok(line) = std::str::from_utf8(&buf[..len]) else {
                continue;
            };
            let w: Vec<&str> = line.split_whitespace().collect();
            let node = w.get(1).and_then(|s| s.parse::<usize>().ok());
            if let ("crashed", Some(node)) = (w[..].first().copied().unwrap_or(""), node) {
                c.crashed(node);
                socket.send_to(b"ack crashed", from).await?;
                continue;
            }
            let (Some(node), Some(life), Some(seq)) = (
                node,
                w.get(2).and_then(|s| s.parse::<u64>().ok()),
                w.get(3).and_then(|s| s.parse::<u64>().ok()),
            ) else {
                continue;
            };
            let (take, ack) = c.fresh(node, life, seq);
            if take {
                match (w[0], w.get(4), w.get(5), w.get(6)) {
                    ("enter", Some(lane), Some(value), Some(units)) => {
                        let fence = Fence::new(lane.parse()?, value.parse()?);
                        c.enter(node, life, fence, units.parse()?);
                    }
                    ("leave", ..) => {
                        c.leave(node);
                    }
                    ("expired", ..) => {
                        c.expired += 1;
                        c.leave(node);
                    }
                    _ => {}
                }
            }
            if ack {
                socket
                    .send_to(format!("ack {life} {seq}").as_bytes(), from)
                    .await?;
            }
        }
        // A kill no other node entered after: stalled to the end.
        let stall = match (c.stall, c.stalls.front()) {
            (_, Some(&(_, at))) => format!("{:.2}+", at.elapsed().as_secs_f64()),
            (Some(s), None) => format!("{:.2}", s.as_secs_f64()),
            (None, None) => "-".into(),
        };
        println!(
            "RESOURCE entries={} violations={} stale={} after_crash={} superseded={} \
             expired={} crashed_inside={} restarts={} from_dead={} max_held={} stall_s={stall}",
            c.entries,
            c.violations,
            c.stale,
            c.after_crash,
            c.superseded,
            c.expired,
            c.crashed_inside,
            c.restarts,
            c.from_dead,
            c.max_held
        );
        Ok(())
    })
}

/// `mesh-node tell`: one control line to the resource, sent until it is acknowledged.
#[derive(clap::Args)]
struct TellArgs {
    /// The resource's address.
    #[arg(long)]
    to: SocketAddr,
    /// `crashed N`: node N's process was killed.
    line: String,
}

fn tell(args: TellArgs) -> Outcome {
    let socket = std::net::UdpSocket::bind(SocketAddr::new(args.to.ip(), 0))?;
    socket.set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut buf = [0u8; 64];
    for _ in 0..50 {
        socket.send_to(args.line.as_bytes(), args.to)?;
        if let Ok(len) = socket.recv(&mut buf) {
            if buf[..len].starts_with(b"ack") {
                return Ok(());
            }
        }
    }
    Err(format!("{}: no acknowledgement", args.to).into())
}

/// The link changes of an ns-2 trace for the first `nodes` nodes: `t a b up|down` lines, t in
/// wall seconds from the start of the run (trace time from `--from`, divided by `--speedup`);
/// the first lines, at t = 0, cut every pair out of range at `--from`.
#[derive(clap::Args)]
struct LinksArgs {
    #[arg(long)]
    trace: std::path::PathBuf,
    #[arg(long)]
    nodes: usize,
    /// Radio range, m.
    #[arg(long, default_value_t = 250.0)]
    radius: f64,
    /// Trace time to start from, s.
    #[arg(long, default_value_t = 0.0)]
    from: f64,
    /// Trace seconds to replay.
    #[arg(long)]
    duration: f64,
    /// Trace seconds per wall second.
    #[arg(long, default_value_t = 1.0)]
    speedup: f64,
    /// Print only the most hops across a connected part of the network at any time of the
    /// replayed stretch (at least 1): the honest `--diameter` of token recovery on it.
    #[arg(long)]
    diameter: bool,
}

/// The most hops across a connected part of the graph on nodes `0..n` (0 without an edge).
fn graph_diameter(n: usize, up: &BTreeSet<(u32, u32)>) -> u32 {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in up {
        adj[a as usize].push(b as usize);
        adj[b as usize].push(a as usize);
    }
    let mut most = 0;
    for s in 0..n {
        let mut dist = vec![u32::MAX; n];
        dist[s] = 0;
        let mut queue = VecDeque::from([s]);
        while let Some(v) = queue.pop_front() {
            for &w in &adj[v] {
                if dist[w] == u32::MAX {
                    dist[w] = dist[v] + 1;
                    most = most.max(dist[w]);
                    queue.push_back(w);
                }
            }
        }
    }
    most
}

/// The delay queue on a thread of its own (its loop sleeps a millisecond at a time), stopped
/// at SIGTERM, SIGINT or when the harness is gone; a queue that fails ends the process.
fn delay_queue(args: delay::DelayArgs) -> Outcome {
    delay::check(&args)?;
    let parent = std::os::unix::process::parent_id();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let worker = {
        let stop = stop.clone();
        std::thread::spawn(move || delay::run(&args, stop).map_err(|e| e.to_string()))
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut finished = tokio::time::interval(Duration::from_millis(100));
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            _ = orphaned(parent) => {}
            // A worker that failed (no queue to bind, say) ends the process with its error.
            _ = async { loop { finished.tick().await; if worker.is_finished() { break; } } } => {}
        }
        Ok::<(), std::io::Error>(())
    })?;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    worker.join().map_err(|_| "the delay queue panicked")??;
    Ok(())
}

fn links(args: LinksArgs) -> Outcome {
    let trace = manet_mutex_sim::ns2::Trace::parse(&std::fs::read_to_string(&args.trace)?)?;
    if trace.nodes() < args.nodes {
        return Err(format!("the trace has {} nodes", trace.nodes()).into());
    }
    let n = args.nodes as u32;
    let up: Vec<_> = trace.links_at(args.from, args.radius);
    if args.diameter {
        let mut links: BTreeSet<(u32, u32)> = up
            .iter()
            .filter(|(a, b)| a.0 < n && b.0 < n)
            .map(|(a, b)| (a.0, b.0))
            .collect();
        let mut most = graph_diameter(args.nodes, &links);
        for c in trace.link_changes(args.radius, args.from + args.duration) {
            if c.time > args.from && c.a.0 < n && c.b.0 < n {
                match c.up {
                    true => links.insert((c.a.0, c.b.0)),
                    false => links.remove(&(c.a.0, c.b.0)),
                };
                most = most.max(graph_diameter(args.nodes, &links));
            }
        }
        println!("{}", most.max(1));
        return Ok(());
    }
    for a in 0..n {
        for b in a + 1..n {
            if !up.contains(&(NodeId(a), NodeId(b))) {
                println!("0.000 {a} {b} down");
            }
        }
    }
    for c in trace.link_changes(args.radius, args.from + args.duration) {
        if c.time > args.from && c.a.0 < n && c.b.0 < n {
            let what = if c.up { "up" } else { "down" };
            let t = (c.time - args.from) / args.speedup;
            println!("{t:.3} {} {} {what}", c.a.0, c.b.0);
        }
    }
    Ok(())
}

fn main() -> Outcome {
    match Cli::parse().command {
        Command::Node(a) => node(a),
        Command::Resource(a) => resource(a),
        Command::Tell(a) => tell(a),
        Command::Links(a) => links(a),
        Command::Delay(a) => delay_queue(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker(k: u32, distinct: bool, permission: bool) -> Checker {
        Checker::new(&ResourceArgs {
            listen: "127.0.0.1:0".parse().unwrap(),
            k,
            distinct,
            permission,
        })
    }

    /// A restarted node's reports start over under its new life: taken, not dropped as
    /// duplicates; the killed life's late reports are dropped.
    #[test]
    fn a_restarted_node_starts_its_reports_over() {
        let mut c = checker(1, false, false);
        assert_eq!(c.fresh(2, 100, 1), (true, true));
        c.enter(2, 100, Fence::new(0, 5), 1);
        assert_eq!(c.fresh(2, 100, 1), (false, true), "a duplicate");
        c.crashed(2);
        assert_eq!(c.crashed_inside, 1);
        assert_eq!(c.fresh(2, 100, 2), (false, false), "the killed life's");
        assert_eq!(c.fresh(2, 200, 1), (true, true), "the new life's first");
        c.enter(2, 200, Fence::new(0, 6), 1);
        assert_eq!((c.entries, c.restarts, c.violations), (2, 1, 0));
        // A restart the harness did not announce: the old life's entry ends all the same.
        assert_eq!(c.fresh(2, 300, 1), (true, true));
        assert_eq!((c.restarts, c.crashed_inside), (2, 2));
        assert!(c.inside.is_empty());
    }

    /// An older generation is refused as stale and a holder of it superseded; a second
    /// holder of the same generation is a violation.
    #[test]
    fn stale_grants_are_refused_and_counted() {
        let mut c = checker(1, false, false);
        c.enter(0, 1, Fence::new(0, 3), 1);
        c.enter(1, 1, Fence::new(0, Fence::first_of(0, 1).value + 1), 1);
        assert_eq!((c.superseded, c.held), (1, 1));
        c.leave(0);
        c.enter(0, 1, Fence::new(0, 4), 1);
        assert_eq!((c.stale, c.violations, c.entries), (1, 0, 2));
        c.leave(0);
        c.enter(2, 1, Fence::new(0, Fence::first_of(0, 1).value + 2), 1);
        // Two holders of one generation, and two units held of one.
        assert_eq!(c.violations, 2);
    }

    /// Prioritized h-out-of-k: fences out of grant order are admitted, more than k units held
    /// is a violation, a repeated fence too.
    #[test]
    fn h_out_of_k_counts_units() {
        let mut c = checker(3, true, false);
        c.enter(0, 1, Fence::new(0, 8), 2);
        c.enter(1, 1, Fence::new(0, 6), 1);
        assert_eq!((c.violations, c.max_held), (0, 3));
        c.leave(1);
        c.enter(2, 1, Fence::new(0, 10), 2);
        assert_eq!(c.violations, 1, "4 units of 3");
        c.leave(2);
        c.enter(3, 1, Fence::new(0, 8), 1);
        assert_eq!(c.violations, 2, "fence 8 twice");
    }

    /// KRL with k tokens: one lane per token, one holder each.
    #[test]
    fn one_holder_per_token() {
        let mut c = checker(2, false, false);
        c.enter(0, 1, Fence::new(0, 1), 1);
        c.enter(1, 1, Fence::new(1, 1), 1);
        assert_eq!((c.violations, c.max_held), (0, 2));
        c.enter(2, 1, Fence::new(1, 2), 1);
        // Two holders of token 1, and three units held of two.
        assert_eq!(c.violations, 2);
    }

    /// A fence refused below one admitted for a permission host killed since: the cost of
    /// its crash (C6), not a violation.
    #[test]
    fn permission_refusals_after_a_crash() {
        let mut c = checker(1, false, true);
        assert_eq!(c.fresh(1, 10, 1), (true, true));
        c.enter(1, 10, Fence::new(0, 9), 1);
        c.crashed(1);
        c.enter(0, 1, Fence::new(0, 7), 1);
        assert_eq!((c.after_crash, c.violations), (1, 0));
    }

    #[test]
    fn diameter_of_the_connected_parts() {
        let up: BTreeSet<(u32, u32)> = [(0, 1), (1, 2), (3, 4)].into();
        assert_eq!(graph_diameter(5, &up), 2);
        assert_eq!(graph_diameter(5, &BTreeSet::new()), 0);
    }
}
