//! One node: an algorithm core on the async crate (`manet_mutex_tokio::Node`: the driver's
//! link sessions, timers and versioned wire format behind one UDP socket), and the
//! application that uses it: it asks for the critical section at random intervals, tells the
//! resource process when it enters and leaves, and prints what the node's events say.
//!
//! Standard output gets one line per step of the application (`requested`,
//! `entered <n> <lane> <value>`, `left`, `done`), per loss report
//! (`lost <peer> <messages> <precious>`), per recovery event (`expired <lane> <value>`: the
//! entry's lease ended; `regenerated <lane> <value>`, `destroyed <lane> <value>`: a token made
//! again or an older one destroyed; `excluded <peer>`, `readmitted <peer>`), and a `stats` line
//! at the end; standard input takes `close <peer>`, `open <peer>` (the application closes the
//! link, then wants it again: a planned flap, nothing lost), `cut <peer>`, `heal <peer>` (every
//! datagram to and from the peer dropped, then let through again: a failure, which may take a
//! token with it), `linger` (stay in the next critical section until killed, printing
//! `lingering` once inside: how the launcher kills a holder in its critical section) and
//! `quit`. Loss (`--loss`) and cuts go through the node's datagram filter.
//!
//! With `--state-dir` the node keeps its durable state there (`Node::with_state_dir`): started
//! again with the same command line after a crash, it rejoins as the failure model asks (a new
//! incarnation, no token, its rounds and majority promises kept), and `--incarnation` is only
//! the label its reports carry. Without it, a node started with `--incarnation` above 0 is a
//! restart after a crash: it starts with empty state (no token, no neighbour, no memory of
//! requests), its link sessions' epochs start above every epoch an earlier incarnation can
//! have used, and it reports to the resource under the new incarnation.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use manet_mutex::codec::Wire;
use manet_mutex::driver::{self, Config, DriverEvent};
use manet_mutex::token::{Height, RaisePause, Recovery};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, session};
use manet_mutex::{CsRequest, NodeId, Report as Recovered};
use manet_mutex_tokio::{Builder, Direction, Durable, Lost, Node, Verdict};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::io::AsyncBufReadExt;
use tokio::net::UdpSocket;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use crate::report::Report;
use crate::{parse_peer, Algorithm, Outcome, Topology};

#[derive(Debug, Clone, Args)]
pub struct NodeArgs {
    /// This node's id: its entry in `--peers`.
    #[arg(long)]
    id: u32,
    #[arg(long, value_enum)]
    algorithm: Algorithm,
    /// Every node of the cluster, this one included, as `id=address` (ids 0..n).
    #[arg(long, value_delimiter = ',', value_parser = parse_peer, required = true)]
    peers: Vec<(NodeId, SocketAddr)>,
    /// The address to bind, if not this node's own in `--peers` (e.g. 0.0.0.0:7001).
    #[arg(long)]
    bind: Option<SocketAddr>,
    #[command(flatten)]
    topology: Topology,
    /// Tokens (KRL, KRLF) or resources (prioritized).
    #[arg(long, default_value_t = 1)]
    k: u32,
    /// The resource process's address.
    #[arg(long)]
    resource: SocketAddr,
    /// Entries into the critical section to make; then the node only serves its peers.
    #[arg(long, default_value_t = 40)]
    entries: u64,
    /// Mean pause, in ms, between leaving the critical section and the next request.
    #[arg(long, default_value_t = 20)]
    think: u64,
    /// Time in the critical section, in ms.
    #[arg(long, default_value_t = 2)]
    hold: u64,
    /// Probability that a datagram from a peer is dropped on receipt (fault injection).
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// Seed of the node's randomness (loss, pauses, requests).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Wait this long, in ms, before the first request, for the peers to start.
    #[arg(long, default_value_t = 300)]
    warmup: u64,
    /// Recovery from crashes. Token algorithms: beacons, claims, regeneration of lost
    /// tokens, entry leases (`Settings::with_recovery`). Permission algorithms: entry leases
    /// and exclusion of silent peers (`Settings::with_lease`, `with_exclusion`). Every node of
    /// a cluster must agree.
    #[arg(long)]
    recovery: bool,
    /// With --recovery: a holder floods a beacon for its token at most this often, in ms.
    #[arg(long, default_value_t = 100)]
    beacon_ms: u64,
    /// With --recovery: an entry's lease, in ms; the node is told when it ends and leaves.
    #[arg(long, default_value_t = 250)]
    lease_ms: u64,
    /// With --recovery, permission algorithms: exclude a peer silent through this many
    /// retransmission timeouts (default: the least that keeps one acting holder,
    /// `Settings::exclusion_safe`; a smaller one is refused).
    #[arg(long)]
    exclusion: Option<u32>,
    /// With --recovery, majority mode over the cluster's nodes: the permission algorithms
    /// enter only with the grants of a majority, the token algorithms make a lost token again
    /// only with a majority's promises (stored in --state-dir, if given).
    #[arg(long)]
    majority: bool,
    /// With --recovery: the most hops across a connected part of the network (default: the
    /// number of nodes less one, the longest a connected part can be).
    #[arg(long)]
    diameter: Option<u32>,
    /// This process's incarnation: 0 when first started; above 0 it is a restart after a
    /// crash, with empty state and link epochs above every earlier incarnation's (with
    /// --state-dir only the label of the node's reports: the store keeps the incarnation).
    #[arg(long, default_value_t = 0)]
    incarnation: u32,
    /// Keep the node's durable state in this directory (created if missing): a restart with
    /// the same command line is then safe.
    #[arg(long)]
    state_dir: Option<std::path::PathBuf>,
    /// Link sessions to every peer, not only the topology's neighbours (the topology gives
    /// the initial layout of the token algorithms): with `--cut` and `cut`/`heal` lines the
    /// links follow the nodes' positions (the launcher's `--mobility`).
    #[arg(long)]
    mobile: bool,
    /// Peers whose datagrams are dropped from the start, both ways (out of range).
    #[arg(long, value_delimiter = ',')]
    cut: Vec<u32>,
    /// Started by a launcher: exit when standard input closes (the launcher ended, however
    /// it ended), so that no node outlives its run.
    #[arg(long)]
    supervised: bool,
}

/// Resend timeout of the permission algorithms' REQUESTs, in ms: the session's default one
/// (`session::Settings::DEFAULT`).
const RETRANSMIT_MS: u64 = session::Settings::DEFAULT.retransmit_after;
/// KRLF: an idle token rests this long, in ms, before it moves on.
const IDLE_PAUSE_MS: u64 = 5;
/// Token algorithms: height raises paced from 10 ms doubling up to 200 ms, so that a part
/// left without a token does not exchange heights as fast as the network carries them
/// (`docs/ALGORITHMS.md`, R15).
const RAISE_PAUSE: RaisePause = RaisePause::new(10, 200);
/// Resend an unacknowledged report to the resource after this long, in ms.
const REPORT_RETRY_MS: u64 = 100;

/// The longest a message over a link session takes to arrive, in ms: a message the session
/// did not deliver within its liveness timeout (with a retransmission timeout of slack) it
/// never delivers, since the link has failed by then (`token::Recovery::hop_bound`).
pub const HOP_BOUND_MS: u64 =
    session::Settings::DEFAULT.liveness_after + session::Settings::DEFAULT.retransmit_after;

/// The longest a permission algorithm's REQUEST takes to reach a live host, retransmissions
/// included, in ms (`exclusion_safe`'s delivery bound): the session's liveness timeout and a
/// retransmission timeout, as for the token algorithms; twenty retransmissions over loopback,
/// all lost at a loss of 0.1 with a chance of 10^-20.
const DELIVERY_MS: u64 = HOP_BOUND_MS;
/// The clock drift the bounds allow for, in parts per million.
const DRIFT_PPM: u32 = Recovery::DEFAULT_DRIFT_PPM;

/// The permission algorithms' exclusion count: `given`, if it keeps at most one acting
/// holder (`safe`), or else the least that does.
fn exclusion(given: Option<u32>, safe: impl Fn(u32) -> bool) -> Result<u32, String> {
    match given {
        Some(m) if safe(m) => Ok(m),
        Some(m) => Err(format!(
            "--exclusion {m}: too few retransmission timeouts for the lease and delivery \
             bounds (Settings::exclusion_safe)"
        )),
        None => (1..=100_000)
            .find(|&m| safe(m))
            .ok_or_else(|| "no exclusion count is safe for this lease".into()),
    }
}

/// Whether excluding a permission host after `m` silent retransmission timeouts keeps at most
/// one acting holder with leases of `lease_ms` (the same bound for both permission algorithms,
/// `permission::Recovery::exclusion_safe`), for a cluster of `n` hosts.
pub fn exclusion_safe(n: u32, lease_ms: u64, m: u32) -> bool {
    ricart_agrawala::Settings::new(n, RETRANSMIT_MS)
        .with_lease(lease_ms)
        .with_exclusion(m)
        .exclusion_safe(DELIVERY_MS, DRIFT_PPM)
}

/// The recovery settings of a cluster of `n` nodes (every node computes the same).
pub fn recovery(beacon_ms: u64, lease_ms: u64, diameter: Option<u32>, n: u32) -> Recovery {
    let diameter = diameter.unwrap_or(n - 1).max(1);
    Recovery::new(beacon_ms, lease_ms, HOP_BOUND_MS, diameter)
}

/// The node's builder: from its first start's configuration and its state directory if it
/// has one, else from `restarted`, the empty-state configuration of `--incarnation`.
fn builder<C: Durable>(
    args: &NodeArgs,
    first: C,
    restarted: impl FnOnce() -> Result<C::Core, manet_mutex::Error>,
) -> Result<Builder<C::Core>, Box<dyn std::error::Error>> {
    Ok(match &args.state_dir {
        Some(dir) => Node::with_state_dir(first, dir)?,
        None => Node::builder(restarted()?),
    })
}

pub fn run(args: NodeArgs) -> Outcome {
    let n = args.peers.len() as u32;
    if args
        .peers
        .iter()
        .enumerate()
        .any(|(i, (id, _))| id.index() != i)
    {
        return Err("--peers must list ids 0, 1, 2, ... in order".into());
    }
    if args.id >= n {
        return Err(format!("--id {} is not in --peers (ids 0..{n})", args.id).into());
    }
    if !(0.0..=1.0).contains(&args.loss) {
        return Err("--loss is a probability, 0 to 1".into());
    }
    if let Some(bad) = args.cut.iter().find(|&&c| c >= n || c == args.id) {
        return Err(format!("--cut {bad}: not a peer of node {}", args.id).into());
    }
    let me = NodeId(args.id);
    let edges = args.topology.edges(n);
    let k = args.k;
    let restarted = args.incarnation > 0;
    let recovery = args.recovery.then(|| {
        let r = recovery(args.beacon_ms, args.lease_ms, args.diameter, n);
        if args.majority {
            r.with_majority(n)
        } else {
            r
        }
    });
    match args.algorithm {
        Algorithm::Krl | Algorithm::Krlf => {
            let mut settings = reverse_link::Settings::new(k).with_raise_pause(RAISE_PAUSE);
            if args.algorithm == Algorithm::Krlf {
                settings = settings
                    .with_forwarding(true)
                    .with_idle_pause(IDLE_PAUSE_MS);
            }
            if let Some(recovery) = recovery {
                settings = settings.with_recovery(recovery);
            }
            let holders: Vec<_> = (0..k).map(NodeId).collect();
            let c = reverse_link::network(n, &edges, &holders, settings)?.swap_remove(me.index());
            // The core starts with no links: it learns each from the session's `LinkUp`,
            // so it never sends over a link the session has not formed yet.
            // (Keeping the token ids `network` gave it: each token's fences are its own.)
            let bare = reverse_link::Config::new(me, settings, c.tokens, c.height, Vec::new());
            let first = match c.first_token {
                Some(first) => bare.with_first_token(first),
                None => bare,
            };
            let b = builder(&args, first.clone(), || {
                reverse_link::Node::new(if restarted {
                    // Empty: no token, no neighbour (each learnt from the session's
                    // `LinkUp`); it makes no token again before it has heard of each (F4).
                    reverse_link::Config::new(me, settings, 0, Height::new(0, 0, me), Vec::new())
                        .restarted()
                } else {
                    first
                })
            })?;
            drive(args, b)
        }
        Algorithm::Prioritized => {
            let mut settings = prioritized::Settings::new(k, prioritized::Policy::Equal)
                .with_raise_pause(RAISE_PAUSE);
            if let Some(recovery) = recovery {
                settings = settings.with_recovery(recovery);
            }
            let c =
                prioritized::network(n, &edges, &[NodeId(0)], settings)?.swap_remove(me.index());
            let first = prioritized::Config::new(me, settings, c.holder, c.height, Vec::new());
            let b = builder(&args, first.clone(), || {
                prioritized::Node::new(if restarted {
                    // Empty: no token, no neighbour (each learnt from the session's
                    // `LinkUp`); it makes no token again before it has heard of it (F4).
                    prioritized::Config::new(me, settings, false, Height::new(0, 0, me), Vec::new())
                        .restarted()
                } else {
                    first
                })
            })?;
            drive(args, b)
        }
        // With recovery: entries leased, a peer silent through the least number of
        // retransmission timeouts that keeps one acting holder excluded (C3, C4), and the
        // majority rule if asked; a restart under its incarnation (C5).
        Algorithm::LookAhead => {
            let mut settings = look_ahead::Settings::new(n, RETRANSMIT_MS);
            if args.recovery {
                settings = settings
                    .with_lease(args.lease_ms)
                    .with_majority(args.majority);
                let m = exclusion(args.exclusion, |m| {
                    settings
                        .with_exclusion(m)
                        .exclusion_safe(DELIVERY_MS, DRIFT_PPM)
                })?;
                settings = settings.with_exclusion(m);
            }
            let first = look_ahead::network(settings)?.swap_remove(me.index());
            let b = builder(&args, first.clone(), || {
                look_ahead::Node::new(first.with_incarnation(args.incarnation))
            })?;
            drive(args, b)
        }
        Algorithm::Ra => {
            let mut settings = ricart_agrawala::Settings::new(n, RETRANSMIT_MS);
            if args.recovery {
                settings = settings
                    .with_lease(args.lease_ms)
                    .with_majority(args.majority);
                let m = exclusion(args.exclusion, |m| {
                    settings
                        .with_exclusion(m)
                        .exclusion_safe(DELIVERY_MS, DRIFT_PPM)
                })?;
                settings = settings.with_exclusion(m);
            }
            let first = ricart_agrawala::network(settings)?.swap_remove(me.index());
            let b = builder(&args, first, || {
                ricart_agrawala::Node::new(first.with_incarnation(args.incarnation))
            })?;
            drive(args, b)
        }
    }
}

fn drive<P>(args: NodeArgs, builder: Builder<P>) -> Outcome
where
    P: driver::Algorithm + Send + 'static,
    P::Message: Wire + Send,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(serve(args, builder));
    // Standard input is read on a blocking thread that may never return: do not wait for it.
    rt.shutdown_background();
    outcome
}

/// The faults injected through the node's datagram filter: loss on receipt and cut peers.
struct Faults {
    rng: ChaCha8Rng,
    loss: f64,
    /// Peers whose datagrams are dropped both ways: a link flap.
    cut: BTreeSet<NodeId>,
    /// Dropped on receipt by the loss injection.
    dropped: u64,
    /// Dropped because the link to the peer was cut.
    cut_dropped: u64,
}

impl Faults {
    /// The verdict on a datagram to or from `peer` (`None`: an address of no peer).
    fn judge(&mut self, direction: Direction, peer: Option<NodeId>) -> Verdict {
        if direction == Direction::In && self.rng.random_bool(self.loss) {
            self.dropped += 1;
            Verdict::Drop
        } else if peer.is_some_and(|p| self.cut.contains(&p)) {
            self.cut_dropped += 1;
            Verdict::Drop
        } else {
            Verdict::Keep
        }
    }
}

/// The reports for the resource, the first sent and not acknowledged yet.
struct Reports {
    /// A socket of its own, non-blocking (the resource answers the address a report came
    /// from; the main loop receives on a clone).
    socket: std::net::UdpSocket,
    resource: SocketAddr,
    id: NodeId,
    incarnation: u32,
    queue: VecDeque<Report>,
    next: u64,
    resend_at: Option<Instant>,
    /// The last report acknowledged.
    acked: watch::Sender<u64>,
}

impl Reports {
    /// Queue a report; its number.
    fn push(&mut self, report: impl FnOnce(NodeId, u32, u64) -> Report) -> u64 {
        let seq = self.next;
        self.queue.push_back(report(self.id, self.incarnation, seq));
        self.next += 1;
        if self.queue.len() == 1 {
            self.send();
        }
        seq
    }

    /// (Re)send the first unacknowledged report.
    fn send(&mut self) {
        if let Some(report) = self.queue.front() {
            // Best effort, like the network: the resend covers a full buffer.
            let _ = self.socket.send_to(report.line().as_bytes(), self.resource);
            self.resend_at = Some(Instant::now() + Duration::from_millis(REPORT_RETRY_MS));
        }
    }

    /// `ack <incarnation> <seq>` from the resource.
    fn ack(&mut self, text: &str) {
        let acked = text.strip_prefix("ack ").and_then(|s| {
            let (incarnation, seq) = s.split_once(' ')?;
            Some((incarnation.parse().ok()?, seq.parse().ok()?))
        });
        let front = self.queue.front().map(|r| (r.incarnation(), r.seq()));
        if let Some((_, seq)) = acked.filter(|&a| Some(a) == front) {
            self.queue.pop_front();
            self.resend_at = None;
            self.acked.send_replace(seq);
            self.send();
        }
    }
}

/// What the application and the main loop share (one thread: cells).
struct Shared {
    reports: RefCell<Reports>,
    /// The next critical section lasts until the process is killed.
    linger: Cell<bool>,
    /// Requests the node refused (a bug if ever above 0).
    errors: Cell<u64>,
}

impl Shared {
    fn report(&self, report: impl FnOnce(NodeId, u32, u64) -> Report) -> u64 {
        self.reports.borrow_mut().push(report)
    }

    /// Until the resource has acknowledged report `seq`.
    async fn acked(&self, seq: u64) {
        let mut acked = self.reports.borrow().acked.subscribe();
        // The sender lives in `self`, as long as this future.
        let _ = acked.wait_for(|&a| a >= seq).await;
    }
}

/// The application: think, request, enter, tell the resource, leave once it has heard;
/// `--entries` times, then serve the others until stopped.
async fn application(node: &Node, args: &NodeArgs, shared: &Shared) {
    let start = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut think_until = start + Duration::from_millis(args.warmup);
    let mut entries = 0;
    loop {
        tokio::time::sleep_until(think_until).await;
        if entries >= args.entries {
            println!("done");
            shared.report(|node, incarnation, seq| Report::Done {
                node,
                incarnation,
                seq,
            });
            return std::future::pending().await;
        }
        let resources = match args.algorithm {
            Algorithm::Prioritized => rng.random_range(1..=args.k),
            _ => 1,
        };
        println!("requested");
        let guard = match node.acquire_with(CsRequest::resources(resources)).await {
            Ok(guard) => guard,
            Err(e) => {
                eprintln!("node {}: {e}", args.id);
                shared.errors.set(shared.errors.get() + 1);
                return std::future::pending().await;
            }
        };
        entries += 1;
        let fence = guard.fence();
        let (lane, value) = (fence.lane, fence.value);
        println!("entered {entries} {lane} {value}");
        shared.report(|node, incarnation, seq| Report::Enter {
            node,
            incarnation,
            seq,
            resources,
            lane,
            value,
        });
        let linger = shared.linger.take();
        if linger {
            println!("lingering");
        }
        let hold = async {
            match linger {
                true => std::future::pending().await,
                false => tokio::time::sleep(Duration::from_millis(args.hold)).await,
            }
        };
        // A lease that ends inside: stop acting on the resource (tell it the entry ended
        // early), and leave once it has heard.
        let expired = tokio::select! {
            () = hold => false,
            lost = guard.lost() => match lost {
                Lost::LeaseExpired => true,
                // The node shut down: so did the run.
                _ => return,
            },
        };
        let acked = if expired {
            println!("expired {lane} {value}");
            shared.acked(shared.report(|node, incarnation, seq| Report::Expired {
                node,
                incarnation,
                seq,
                lane,
                value,
            }))
        } else {
            shared.acked(shared.report(|node, incarnation, seq| Report::Exit {
                node,
                incarnation,
                seq,
            }))
        };
        tokio::pin!(acked);
        if !expired {
            // Leaving already: a lease that ends now is only told; the exit is on its way.
            tokio::select! {
                () = &mut acked => {}
                Lost::LeaseExpired = guard.lost() => {
                    println!("expired {lane} {value}");
                    acked.await;
                }
            }
        } else {
            acked.await;
        }
        drop(guard);
        println!("left");
        think_until = Instant::now() + Duration::from_millis(rng.random_range(0..=2 * args.think));
    }
}

async fn serve<P>(args: NodeArgs, builder: Builder<P>) -> Outcome
where
    P: driver::Algorithm + Send + 'static,
    P::Message: Wire + Send,
{
    let me = NodeId(args.id);
    let n = args.peers.len() as u32;
    let bind = args.bind.unwrap_or(args.peers[me.index()].1);
    // The token algorithms' links: the topology's edges, or every peer when mobile (the cut
    // ones are out of range).
    let edges = match args.mobile {
        true => crate::full_edges(n),
        false => args.topology.edges(n),
    };
    let neighbours = edges.into_iter().filter_map(|(a, b)| {
        if a == me {
            Some(b)
        } else if b == me {
            Some(a)
        } else {
            None
        }
    });
    // The session's defaults, in ms (the driver's unit): resend after 20, a link silent for
    // 400 fails, keepalives after 100, `Hello`s to an unreachable neighbour backing off up to
    // 1000 apart, 32 frames in flight; room for every node. Epochs above every epoch of the
    // earlier incarnations (each used fewer than 2^32).
    let config = Config::DEFAULT
        .with_session(session::Settings::DEFAULT.with_max_peers(n))
        .with_epoch_base(u64::from(args.incarnation) << 32);
    // A stream of its own (the application's pauses and requests draw from another): the
    // filter runs on the node's task, the application on this one.
    let faults = Arc::new(Mutex::new(Faults {
        rng: ChaCha8Rng::seed_from_u64(args.seed.wrapping_add(1)),
        loss: args.loss,
        cut: args.cut.iter().copied().map(NodeId).collect(),
        dropped: 0,
        cut_dropped: 0,
    }));
    let by_addr: HashMap<SocketAddr, NodeId> =
        args.peers.iter().map(|&(id, addr)| (addr, id)).collect();
    let filter = {
        let faults = faults.clone();
        move |direction, addr, _: &[u8]| {
            let mut faults = faults.lock().unwrap_or_else(|e| e.into_inner());
            faults.judge(direction, by_addr.get(&addr).copied())
        }
    };
    let socket = std::net::UdpSocket::bind(bind).map_err(|e| format!("cannot bind {bind}: {e}"))?;
    let node = builder
        .socket(socket)
        .peers(args.peers.iter().copied())
        .neighbours(neighbours)
        .config(config)
        .filter(filter)
        .spawn()?;
    // Before the first `.await` (one thread: the node's task has not run yet), so the links
    // formed at start are seen.
    let mut events = node.events();
    let reports = std::net::UdpSocket::bind(SocketAddr::new(bind.ip(), 0))?;
    reports.set_nonblocking(true)?;
    let answers = UdpSocket::from_std(reports.try_clone()?)?;
    let shared = Shared {
        reports: RefCell::new(Reports {
            socket: reports,
            resource: args.resource,
            id: me,
            incarnation: args.incarnation,
            queue: VecDeque::new(),
            next: 1,
            resend_at: None,
            acked: watch::Sender::new(0),
        }),
        linger: Cell::new(false),
        errors: Cell::new(0),
    };
    let trace = std::env::var_os("CLUSTER_TRACE").is_some();
    let start = Instant::now();
    let application = application(&node, &args, &shared);
    tokio::pin!(application);
    let mut control = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut control_open = true;
    let mut buf = [0u8; 512];
    loop {
        let resend_at = shared.reports.borrow().resend_at;
        let resend = async {
            match resend_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            // It never ends but with the node.
            () = &mut application => break,
            () = resend => shared.reports.borrow_mut().send(),
            // An error is an ICMP error surfacing on a UDP socket: nothing to do.
            got = answers.recv_from(&mut buf) => if let Ok((len, _)) = got {
                let text = std::str::from_utf8(&buf[..len]).unwrap_or("");
                if text == "stop" {
                    break;
                }
                shared.reports.borrow_mut().ack(text);
            },
            event = events.recv() => match event {
                Ok(event) => {
                    if trace {
                        eprintln!(
                            "{} n{}.{} {event:?}",
                            start.elapsed().as_millis(),
                            me.0,
                            args.incarnation
                        );
                    }
                    print_event(&event);
                }
                // The counters in the stats line are whole; only lines are missing.
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    eprintln!("node {}: {missed} event lines missed", me.0);
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            line = control.next_line(), if control_open => match line {
                Ok(Some(line)) => {
                    if !control_line(&node, &args, &faults, &shared, &line).await {
                        break;
                    }
                }
                // The launcher is gone (whatever way it ended): so is its run.
                _ if args.supervised => break,
                // No launcher: run on until the resource says stop.
                _ => control_open = false,
            },
        }
    }
    let faults = faults.lock().unwrap_or_else(|e| e.into_inner());
    let s = node.stats();
    let d = s.driver;
    let session = s.session.unwrap_or_default();
    let errors = d.core_errors + shared.errors.get();
    println!(
        "stats node={} status={} entries={} messages={} sent={} received={} dropped={} cut={} \
         garbage={} unknown={} lost_reports={} lost_messages={} lost_precious={} \
         lease_expired={} regenerated={} destroyed={} excluded={} readmitted={} noise={} \
         suspect={} errors={} retransmitted={} hellos={} links_up={} links_abandoned={}",
        me.0,
        s.status
            .map_or("Unknown".into(), |status| format!("{status:?}")),
        s.entered,
        d.messages_sent,
        s.datagrams_sent,
        s.datagrams_received,
        faults.dropped,
        faults.cut_dropped,
        d.dropped_checksum + d.dropped_malformed + d.dropped_unexpected + d.dropped_auth,
        s.unknown_sender + d.dropped_unknown_peer,
        s.lost_links,
        s.lost_messages,
        s.lost_precious,
        s.lost,
        s.regenerated,
        s.destroyed,
        s.excluded,
        s.readmitted,
        d.noise,
        d.suspect,
        errors,
        d.retransmitted,
        session.hellos,
        session.links_up,
        session.links_abandoned,
    );
    Ok(errors == 0 && d.suspect == 0)
}

/// The line an informational event of the node prints, if any.
fn print_event(event: &DriverEvent) {
    match event {
        DriverEvent::Lost {
            peer,
            messages,
            precious,
        } => println!("lost {} {messages} {precious}", peer.0),
        DriverEvent::Report(report) => match report {
            Recovered::TokenRegenerated { fence } => {
                println!("regenerated {} {}", fence.lane, fence.value)
            }
            Recovered::TokenDestroyed { fence } => {
                println!("destroyed {} {}", fence.lane, fence.value)
            }
            Recovered::PeerExcluded(peer) => println!("excluded {}", peer.0),
            Recovered::PeerReadmitted(peer) => println!("readmitted {}", peer.0),
            _ => {}
        },
        _ => {}
    }
}

/// A line of standard input; whether the node goes on.
async fn control_line(
    node: &Node,
    args: &NodeArgs,
    faults: &Mutex<Faults>,
    shared: &Shared,
    line: &str,
) -> bool {
    let mut words = line.split_whitespace();
    let peer = |w: Option<&str>| w.and_then(|w| w.parse().ok()).map(NodeId);
    let cut = |p, on: bool| {
        let mut faults = faults.lock().unwrap_or_else(|e| e.into_inner());
        match on {
            true => faults.cut.insert(p),
            false => faults.cut.remove(&p),
        };
    };
    let linked = args.algorithm.uses_links();
    match (words.next(), peer(words.next())) {
        (Some("cut"), Some(p)) => cut(p, true),
        (Some("heal"), Some(p)) => cut(p, false),
        (Some("close"), Some(p)) if linked => {
            if let Err(e) = node.close(p) {
                eprintln!("node {}: cannot close the link to {}: {e}", args.id, p.0);
            }
        }
        (Some("open"), Some(p)) if linked => {
            if let Err(e) = node.connect(p).await {
                eprintln!("node {}: cannot reconnect to {}: {e}", args.id, p.0);
            }
        }
        // Without links, a planned flap is a cut.
        (Some("close"), Some(p)) => cut(p, true),
        (Some("open"), Some(p)) => cut(p, false),
        (Some("linger"), None) => shared.linger.set(true),
        (Some("quit"), _) => return false,
        _ => eprintln!("node {}: unknown control line {line:?}", args.id),
    }
    true
}
