//! One lock node per process: run one per host (or several on one host, each with its own
//! port), kill one, start it again with the same command line.
//!
//! ```text
//! cargo run -p manet-mutex-tokio --example node -- --id 0 \
//!     --peers 0=127.0.0.1:7000,1=127.0.0.1:7001,2=127.0.0.1:7002
//! ```
//!
//! and the same with `--id 1` and `--id 2` in two more terminals. Each node takes the lock
//! `--entries` times (holding it `--hold-ms`, pausing `--think-ms` between), printing the fence
//! of each entry, then keeps answering its peers until Ctrl-C or a kill.
//!
//! - **Leaving**: Ctrl-C, or `--leave` once the entries are made, leaves the network
//!   (`Node::leave`: a permission host tells every host it is gone, a token node hands its
//!   token to a neighbour), so the others keep entering without it and without recovery.
//! - **Joining**: start the hosts that run first with `--joining 3,4` naming the ids kept
//!   for hosts that start later (permission algorithms); start the joiners without it. A
//!   token node joins by its hellos and needs nothing.
//!
//! - **Restarts are safe with the same command line**: the node keeps its durable state in
//!   `--state-dir` (default `manet-mutex-state/node-<id>`; `Node::with_state_dir`).
//! - **Recovery is on** unless `--no-recovery`: entries are leased for `--lease-ms` (default
//!   2000) and a silent peer is excluded after the least number of retransmission timeouts
//!   that keeps one acting holder for a delivery bound of 420 ms and 100 ppm of clock drift
//!   (permission algorithms); a lost token is made again (token algorithms).
//! - `--algorithm`: `ra` (Ricart–Agrawala, the default), `look-ahead`, `krl` (one token, node 0
//!   holds it first; neighbours found by discovery's hellos, sent to every peer address) or
//!   `prioritized`.
//!
//! Every flag is checked before anything starts; a bad one exits with status 2.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use manet_mutex::token::Recovery;
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, NodeId};
use manet_mutex_tokio::{Builder, Node};

/// The time a datagram may take across the network, retransmissions included, in ms.
const DELIVERY_MS: u64 = 420;
/// The most a host's clock drifts, in parts per million.
const DRIFT_PPM: u32 = 100;
/// The permission algorithms' retransmission timeout, in ms.
const RETRANSMIT_MS: u64 = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Algorithm {
    Ra,
    LookAhead,
    Krl,
    Prioritized,
}

/// One lock node of a network of processes.
#[derive(Debug, Parser)]
struct Args {
    /// This node's id: its entry in --peers.
    #[arg(long)]
    id: u32,
    /// Every node of the network, this one included, as `id=address` with ids 0, 1, 2, ...
    #[arg(long, value_delimiter = ',', value_parser = parse_peer, required = true)]
    peers: Vec<(NodeId, SocketAddr)>,
    #[arg(long, value_enum, default_value_t = Algorithm::Ra)]
    algorithm: Algorithm,
    /// Entries to make (0: none, only serve the peers).
    #[arg(long, default_value_t = 10)]
    entries: u32,
    /// Time in the critical section, in ms.
    #[arg(long, default_value_t = 200)]
    hold_ms: u64,
    /// Pause between entries, in ms.
    #[arg(long, default_value_t = 500)]
    think_ms: u64,
    /// An entry's lease, in ms (with recovery).
    #[arg(long, default_value_t = 2_000)]
    lease_ms: u64,
    /// No recovery: a crashed node stops the others until it is back.
    #[arg(long)]
    no_recovery: bool,
    /// Where the node keeps its durable state (default: manet-mutex-state/node-<id>).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// Leave the network once the entries are made, instead of serving until Ctrl-C.
    #[arg(long)]
    leave: bool,
    /// Permission algorithms: ids of hosts that start later; this node does not wait for
    /// them until they ask. Never give it to a joiner itself.
    #[arg(long, value_delimiter = ',')]
    joining: Vec<u32>,
}

fn parse_peer(s: &str) -> Result<(NodeId, SocketAddr), String> {
    let (id, addr) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected id=address"))?;
    let id = id.parse().map_err(|e| format!("{id:?}: {e}"))?;
    let addr = addr.parse().map_err(|e| format!("{addr:?}: {e}"))?;
    Ok((NodeId(id), addr))
}

/// The flags' problems, before anything starts.
fn check(args: &Args) -> Result<(), String> {
    for (i, (id, _)) in args.peers.iter().enumerate() {
        if id.index() != i {
            return Err("--peers must list ids 0, 1, 2, ... in order".into());
        }
    }
    if args.id as usize >= args.peers.len() {
        return Err(format!("--id {} is not in --peers", args.id));
    }
    let mut addrs: Vec<_> = args.peers.iter().map(|(_, a)| a).collect();
    addrs.sort();
    if addrs.windows(2).any(|w| w[0] == w[1]) {
        return Err("--peers names one address twice".into());
    }
    if args.peers.len() < 2 {
        return Err("--peers needs at least two nodes".into());
    }
    if args.lease_ms == 0 {
        return Err("--lease-ms must be at least 1".into());
    }
    if !args.joining.is_empty() && matches!(args.algorithm, Algorithm::Krl | Algorithm::Prioritized)
    {
        return Err("--joining is for ra and look-ahead: a token node joins by its hellos".into());
    }
    if let Some(bad) = args
        .joining
        .iter()
        .find(|&&j| j == args.id || j as usize >= args.peers.len())
    {
        return Err(format!("--joining {bad}: not another node of --peers"));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(e) = check(&args) {
        eprintln!("node: {e}");
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("node: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("node: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let me = NodeId(args.id);
    let n = args.peers.len() as u32;
    let dir = args
        .state_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("manet-mutex-state/node-{}", args.id)));
    let recovery = !args.no_recovery;
    match args.algorithm {
        Algorithm::Ra => {
            let mut settings = ricart_agrawala::Settings::new(n, RETRANSMIT_MS);
            if recovery {
                // A lease, the least safe exclusion, and the bounds stated (checked).
                settings = settings.with_recovery_for(args.lease_ms, DELIVERY_MS, DRIFT_PPM);
            }
            let config = ricart_agrawala::network(settings)?.swap_remove(me.index());
            serve(&args, Node::with_state_dir(config, &dir)?).await
        }
        Algorithm::LookAhead => {
            let mut settings = look_ahead::Settings::new(n, RETRANSMIT_MS);
            if recovery {
                // A lease, the least safe exclusion, and the bounds stated (checked).
                settings = settings.with_recovery_for(args.lease_ms, DELIVERY_MS, DRIFT_PPM);
            }
            let config = look_ahead::network(settings)?.swap_remove(me.index());
            serve(&args, Node::with_state_dir(config, &dir)?).await
        }
        Algorithm::Krl => {
            let mut settings = reverse_link::Settings::new(1);
            if recovery {
                settings = settings.with_recovery(token_recovery(&args));
            }
            let c = reverse_link::network(n, &[], &[NodeId(0)], settings)?.swap_remove(me.index());
            // No neighbour at start: discovery finds them, and the core learns each link
            // from the session.
            let bare = reverse_link::Config::new(me, settings, c.tokens, c.height, Vec::new());
            let config = match c.first_token {
                Some(first) => bare.with_first_token(first),
                None => bare,
            };
            serve(&args, Node::with_state_dir(config, &dir)?).await
        }
        Algorithm::Prioritized => {
            let mut settings = prioritized::Settings::new(1, prioritized::Policy::Equal);
            if recovery {
                settings = settings.with_recovery(token_recovery(&args));
            }
            let c = prioritized::network(n, &[], &[NodeId(0)], settings)?.swap_remove(me.index());
            let config = prioritized::Config::new(me, settings, c.holder, c.height, Vec::new());
            serve(&args, Node::with_state_dir(config, &dir)?).await
        }
    }
}

/// Beacons every 100 ms, entries leased, a hop within the delivery bound, every node within
/// one hop of every other (the peers' addresses reach each other directly).
fn token_recovery(args: &Args) -> Recovery {
    Recovery::new(100, args.lease_ms, DELIVERY_MS, 1)
}

async fn serve<P>(args: &Args, builder: Builder<P>) -> Result<(), Box<dyn std::error::Error>>
where
    P: manet_mutex::driver::Algorithm + Send + 'static,
    P::Message: manet_mutex::codec::Wire + Send,
{
    let me = args.peers[args.id as usize].1;
    let node = builder
        .bind(me)
        .peers(args.peers.iter().copied())
        .joining(args.joining.iter().map(|&j| NodeId(j)))
        .spawn()?;
    println!("node {} listening on {}", args.id, node.local_addr());
    let work = async {
        for i in 0..args.entries {
            let guard = node.acquire().await?;
            let fence = guard.fence();
            println!(
                "node {} entry {}: fence {} (generation {}, count {})",
                args.id,
                i + 1,
                fence.value,
                fence.generation(),
                fence.value & 0xffff_ffff
            );
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(args.hold_ms)) => {}
                lost = guard.lost() => println!("node {}: lock lost ({lost:?})", args.id),
            }
            drop(guard);
            tokio::time::sleep(Duration::from_millis(args.think_ms)).await;
        }
        if args.leave {
            return Ok(());
        }
        println!(
            "node {}: {} entries made; serving the peers until Ctrl-C",
            args.id, args.entries
        );
        std::future::pending::<Result<(), manet_mutex_tokio::Error>>().await
    };
    let outcome = tokio::select! {
        outcome = work => outcome,
        _ = tokio::signal::ctrl_c() => Ok(()),
    };
    // Leave, so that nobody waits for this node; if the core cannot (a token node with no
    // neighbour to take its token), stop anyway: recovery, where on, takes over.
    match node.leave().await {
        Ok(()) => println!("node {}: left the network", args.id),
        Err(e) => {
            println!("node {}: stopping without a complete leave: {e}", args.id);
            node.shutdown().await;
        }
    }
    let stats = node.stats();
    println!(
        "node {}: stopped; entered {}, datagrams {} in, {} out",
        args.id, stats.entered, stats.driver.datagrams_in, stats.driver.datagrams_out
    );
    Ok(outcome?)
}
