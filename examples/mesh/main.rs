//! `mesh-node`: the pieces of the emulated MANET that `run.sh` starts in network namespaces.
//!
//! * `mesh-node node`: one node of an algorithm on the async crate (`manet-mutex-tokio`),
//!   bound to its namespace's address; it takes the lock `--entries` times, reports each entry
//!   and exit to the resource (and waits for its acknowledgement), prints `DONE` when its
//!   entries are reached, keeps serving the others until SIGTERM, then prints one `SUMMARY`
//!   line of `key=value` counters. `--broadcast ADDR` sends discovery's hellos to a
//!   broadcast or multicast address, `--key-file` authenticates every datagram (feature
//!   `auth`); both for real ad hoc networks as much as for the emulation.
//! * `mesh-node resource`: the fence-checking resource (one unit: every algorithm runs with
//!   k = 1 here): per lane a fence above every one admitted, at most one acting holder. A
//!   grant of an older generation than one admitted (a token from before a regeneration) is
//!   refused and counted (`stale`), not a violation; a holder still inside when a later
//!   generation is admitted is fenced off (`superseded`). Prints one `ENTER` line per entry
//!   admitted, and `RESOURCE ...` at SIGTERM.
//! * `mesh-node links`: the link changes of an ns-2 trace under a radio range, for the
//!   harness to cut and heal pairs with.
//! * `mesh-node delay`: the user-space delay queue of `run.sh --delay` (`delay.rs`).
//!
//! Reports travel as text datagrams on the resource's port, which the harness never impairs.

mod delay;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use manet_mutex::driver::{AuthKey, Config};
use manet_mutex::fence::Fences;
use manet_mutex::token::{RaisePause, Recovery};
use manet_mutex::{
    discovery, driver, look_ahead, prioritized, reverse_link, ricart_agrawala, session, Fence,
    NodeId,
};
use manet_mutex_tokio::{Broadcast, Node};
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
    key_file: Option<std::path::PathBuf>,
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

fn node(args: NodeArgs) -> Outcome {
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
    let me = NodeId(args.id);
    let recovery = args
        .recovery
        .then(|| Recovery::new(args.beacon_ms, args.lease_ms, HOP_BOUND_MS, (n - 1).max(1)));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Token cores start with no links: they learn each from discovery over the emulated
    // broadcast (hellos to every peer address), so a cut pair goes down.
    match args.algorithm {
        Algorithm::Krl | Algorithm::Krlf => {
            let mut settings = reverse_link::Settings::new(1);
            if args.algorithm == Algorithm::Krlf {
                settings = settings.with_forwarding(true).with_idle_pause(5);
            }
            if let Some(r) = recovery {
                settings = settings.with_recovery(r);
            }
            if let Pause(Some(p)) = args.raise_pause {
                settings = settings.with_raise_pause(p);
            }
            let c = reverse_link::network(n, &full_edges(n), &[NodeId(0)], settings)?
                .swap_remove(me.index());
            let bare = reverse_link::Config::new(me, settings, c.tokens, c.height, Vec::new());
            let c = match c.first_token {
                Some(first) => bare.with_first_token(first),
                None => bare,
            };
            rt.block_on(run(&args, reverse_link::Node::new(c)?))
        }
        Algorithm::Prioritized => {
            let mut settings = prioritized::Settings::new(1, prioritized::Policy::Equal);
            if let Some(r) = recovery {
                settings = settings.with_recovery(r);
            }
            if let Pause(Some(p)) = args.raise_pause {
                settings = settings.with_raise_pause(p);
            }
            let c = prioritized::network(n, &full_edges(n), &[NodeId(0)], settings)?
                .swap_remove(me.index());
            let c = prioritized::Config::new(me, settings, c.holder, c.height, Vec::new());
            rt.block_on(run(&args, prioritized::Node::new(c)?))
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
            rt.block_on(run(&args, look_ahead::Node::new(c)?))
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
            rt.block_on(run(&args, ricart_agrawala::Node::new(c)?))
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

/// Sends `line` to the resource until it answers `ack <seq>`.
async fn report(socket: &UdpSocket, to: SocketAddr, seq: u64, line: &str) -> std::io::Result<()> {
    let want = format!("ack {seq}");
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

async fn run<P>(args: &NodeArgs, core: P) -> Outcome
where
    P: driver::Algorithm + Send + 'static,
    P::Message: manet_mutex::codec::Wire + Send,
{
    let parent = std::os::unix::process::parent_id();
    let me = args.id as usize;
    let own = args.peers[me].1;
    let mut builder = Node::builder(core)
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
            let guard = node.acquire().await?;
            let f = guard.fence();
            seq += 1;
            let enter = format!("enter {me} {seq} {} {}", f.lane, f.value);
            report(&reports, args.resource, seq, &enter).await?;
            let expired = tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(args.hold)) => false,
                _ = guard.lost() => true,
            };
            lost += u64::from(expired);
            seq += 1;
            let kind = if expired { "expired" } else { "leave" };
            report(&reports, args.resource, seq, &format!("{kind} {me} {seq}")).await?;
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
        "SUMMARY node={me} entries={entries} target={} secs={:.2} lost={lost} \
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

/// The resource: the nodes' reports in arrival order (a node leaves only once its exit is
/// acknowledged, so an entry that follows a release follows it here too).
#[derive(clap::Args)]
struct ResourceArgs {
    #[arg(long)]
    listen: SocketAddr,
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
        let mut fences = Fences::new();
        let mut newest_generation: BTreeMap<u32, u32> = BTreeMap::new();
        // Acting holders: node -> fence.
        let mut inside: BTreeMap<usize, Fence> = BTreeMap::new();
        let mut last_seq: HashMap<usize, u64> = HashMap::new();
        let (mut entries, mut violations, mut stale, mut superseded, mut expired) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
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
            let (Some(node), Some(seq)) = (
                w.get(1).and_then(|s| s.parse::<usize>().ok()),
                w.get(2).and_then(|s| s.parse::<u64>().ok()),
            ) else {
                continue;
            };
            let ack = format!("ack {seq}");
            if last_seq.get(&node).is_some_and(|&s| s >= seq) {
                socket.send_to(ack.as_bytes(), from).await?;
                continue;
            }
            last_seq.insert(node, seq);
            match (w[0], w.get(3), w.get(4)) {
                ("enter", Some(lane), Some(value)) => {
                    let fence = Fence::new(lane.parse()?, value.parse()?);
                    let newest = newest_generation.get(&fence.lane).copied().unwrap_or(0);
                    if fence.generation() < newest {
                        stale += 1;
                        eprintln!("stale grant {fence:?} from {node}: refused");
                    } else if let Err(highest) = fences.admit(fence) {
                        violations += 1;
                        eprintln!("VIOLATION: node {node} fence {fence:?} <= {highest}");
                    } else {
                        newest_generation.insert(fence.lane, fence.generation());
                        // Holders of an older generation are fenced off; any other is a
                        // second acting holder.
                        let others: Vec<_> = inside.keys().copied().collect();
                        for other in others {
                            let f = inside[&other];
                            if f.lane == fence.lane && f.generation() < fence.generation() {
                                superseded += 1;
                                inside.remove(&other);
                            } else {
                                violations += 1;
                                eprintln!(
                                    "VIOLATION: node {node} entered ({fence:?}) while node \
                                     {other} holds {f:?}"
                                );
                            }
                        }
                        inside.insert(node, fence);
                        entries += 1;
                        println!(
                            "ENTER node={node} lane={} value={}",
                            fence.lane, fence.value
                        );
                    }
                }
                ("leave", ..) => {
                    inside.remove(&node);
                }
                ("expired", ..) => {
                    expired += 1;
                    inside.remove(&node);
                }
                _ => {}
            }
            socket.send_to(ack.as_bytes(), from).await?;
        }
        println!(
            "RESOURCE entries={entries} violations={violations} stale={stale} \
             superseded={superseded} expired={expired}"
        );
        Ok(())
    })
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
        Command::Links(a) => links(a),
        Command::Delay(a) => delay_queue(a),
    }
}
