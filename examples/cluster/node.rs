//! One node: an algorithm core, one UDP socket, the timers helper, and for the token
//! algorithms a link session. The loop in [`Node::run`] waits for a datagram, the next
//! deadline or a control line, hands it to the core (through the session for the token
//! algorithms), and carries out what the core asks for.
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
//! `quit`.
//!
//! A node started with `--incarnation` above 0 is a restart after a crash: it starts with
//! empty state (no token, no neighbour, no memory of requests), its link sessions' epochs
//! start above every epoch an earlier incarnation can have used, and it reports to the
//! resource under the new incarnation.

use std::collections::{BTreeSet, VecDeque};
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use clap::Args;
use manet_mutex::codec::Wire;
use manet_mutex::session::{self, Datagram, Session, SessionEvent};
use manet_mutex::timers::Timers;
use manet_mutex::token::{Height, Recovery};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala};
use manet_mutex::{
    Action, CsRequest, Event, Fence, NodeId, Protocol, Report as Recovered, Severity,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::io::AsyncBufReadExt;
use tokio::time::Instant;

use crate::report::Report;
use crate::wire::{self, Body};
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
    /// With --recovery, permission algorithms: enter only with the grants of a majority.
    #[arg(long)]
    majority: bool,
    /// With --recovery: the most hops across a connected part of the network (default: the
    /// number of nodes less one, the longest a connected part can be).
    #[arg(long)]
    diameter: Option<u32>,
    /// This process's incarnation: 0 when first started; above 0 it is a restart after a
    /// crash, with empty state and link epochs above every earlier incarnation's.
    #[arg(long, default_value_t = 0)]
    incarnation: u32,
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
    let recovery = args
        .recovery
        .then(|| recovery(args.beacon_ms, args.lease_ms, args.diameter, n));
    // Above every epoch of the earlier incarnations (each used fewer than 2^32).
    let epoch_base = u64::from(args.incarnation) << 32;
    // The session's defaults, in ms (the unit of `now` here): resend after 20, a link silent
    // for 400 fails, keepalives after 100, `Hello`s to an unreachable neighbour backing off
    // up to 1000 apart, 32 frames in flight; room for every node.
    let link_settings = session::Settings::DEFAULT.with_max_peers(n);
    match args.algorithm {
        Algorithm::Krl | Algorithm::Krlf => {
            let mut settings = reverse_link::Settings::new(k);
            if args.algorithm == Algorithm::Krlf {
                settings = settings
                    .with_forwarding(true)
                    .with_idle_pause(IDLE_PAUSE_MS);
            }
            if let Some(recovery) = recovery {
                settings = settings.with_recovery(recovery);
            }
            let c = if restarted {
                // Empty: no token, no neighbour (each learnt from the session's `LinkUp`); it
                // makes no token again before it has heard of each (F4).
                reverse_link::Config::new(me, settings, 0, Height::new(0, 0, me), Vec::new())
                    .restarted()
            } else {
                let holders: Vec<_> = (0..k).map(NodeId).collect();
                let c =
                    reverse_link::network(n, &edges, &holders, settings)?.swap_remove(me.index());
                // The core starts with no links: it learns each from the session's `LinkUp`,
                // so it never sends over a link the session has not formed yet.
                // (Keeping the token ids `network` gave it: each token's fences are its own.)
                let bare = reverse_link::Config::new(me, settings, c.tokens, c.height, Vec::new());
                match c.first_token {
                    Some(first) => bare.with_first_token(first),
                    None => bare,
                }
            };
            let links = Session::new(me, link_settings)?
                .with_epoch_base(epoch_base)
                .with_precious(reverse_link::Message::is_token);
            drive(args, reverse_link::Node::new(c)?, Some(links))
        }
        Algorithm::Prioritized => {
            let mut settings = prioritized::Settings::new(k, prioritized::Policy::Equal);
            if let Some(recovery) = recovery {
                settings = settings.with_recovery(recovery);
            }
            let c = if restarted {
                // Empty: no token, no neighbour (each learnt from the session's `LinkUp`); it
                // makes no token again before it has heard of it (F4).
                prioritized::Config::new(me, settings, false, Height::new(0, 0, me), Vec::new())
                    .restarted()
            } else {
                let c = prioritized::network(n, &edges, &[NodeId(0)], settings)?
                    .swap_remove(me.index());
                prioritized::Config::new(me, settings, c.holder, c.height, Vec::new())
            };
            let links = Session::new(me, link_settings)?
                .with_epoch_base(epoch_base)
                .with_precious(prioritized::Message::carries_resources);
            drive(args, prioritized::Node::new(c)?, Some(links))
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
            let c = look_ahead::network(settings)?
                .swap_remove(me.index())
                .with_incarnation(args.incarnation);
            drive(args, look_ahead::Node::new(c)?, None)
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
            let c = ricart_agrawala::network(settings)?
                .swap_remove(me.index())
                .with_incarnation(args.incarnation);
            drive(args, ricart_agrawala::Node::new(c)?, None)
        }
    }
}

fn drive<P>(args: NodeArgs, core: P, session: Option<Session<P::Message>>) -> Outcome
where
    P: Protocol,
    P::Message: Wire,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(async {
        let me = args.id as usize;
        let bind = args.bind.unwrap_or(args.peers[me].1);
        let socket = UdpSocket::bind(bind).map_err(|e| format!("cannot bind {bind}: {e}"))?;
        socket.set_nonblocking(true)?;
        let receiver = tokio::net::UdpSocket::from_std(socket.try_clone()?)?;
        Node::new(args, core, session, socket).run(receiver).await
    });
    // Standard input is read on a blocking thread that may never return: do not wait for it.
    rt.shutdown_background();
    outcome
}

/// Where the application is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum App {
    /// In the remainder section; requests at `until`.
    Thinking { until: u64 },
    /// Requested, not granted yet.
    Waiting,
    /// In the critical section until `until`, under `fence`.
    Inside { until: u64, fence: Fence },
    /// In the critical section until killed (the launcher's `linger`), under `fence`.
    Lingering { fence: Fence },
    /// Leaving: releases once the resource acknowledged the exit.
    Leaving,
    /// Target reached: requests no more.
    Done,
}

/// What a node counted, printed as its `stats` line.
#[derive(Debug, Default)]
struct Counts {
    entries: u64,
    /// Core messages sent.
    messages: u64,
    sent: u64,
    received: u64,
    /// Dropped on receipt by the loss injection.
    dropped: u64,
    /// Dropped because the link to the peer was cut.
    cut: u64,
    /// No datagram of ours: garbage, truncated, padded, or of the other transport.
    garbage: u64,
    /// Naming a sender that is no peer, or not from that peer's address.
    unknown: u64,
    lost_reports: u64,
    lost_messages: u64,
    lost_precious: u64,
    /// Entries whose lease ended while inside.
    lease_expired: u64,
    /// Tokens this node made again, and older ones it destroyed.
    regenerated: u64,
    destroyed: u64,
    /// Peers this node stopped waiting for, and counted again.
    excluded: u64,
    readmitted: u64,
    noise: u64,
    suspect: u64,
    errors: u64,
}

/// Whether the loop goes on.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

struct Node<P: Protocol> {
    id: NodeId,
    args: NodeArgs,
    core: P,
    /// The link session (token algorithms); `None` sends core messages directly.
    session: Option<Session<P::Message>>,
    timers: Timers,
    /// Non-blocking, for sending; the loop receives on a clone.
    socket: UdpSocket,
    /// Peers whose datagrams are dropped both ways: a link flap.
    cut: BTreeSet<NodeId>,
    rng: ChaCha8Rng,
    start: Instant,
    app: App,
    /// The next critical section lasts until the process is killed.
    linger: bool,
    /// `CLUSTER_TRACE` set: every core event and action on standard error, with the time.
    trace: bool,
    /// Reports for the resource, the first sent and not acknowledged yet.
    reports: VecDeque<Report>,
    next_report: u64,
    resend_report: Option<u64>,
    out: Vec<Action<P::Message>>,
    counts: Counts,
}

impl<P> Node<P>
where
    P: Protocol,
    P::Message: Wire,
{
    fn new(
        args: NodeArgs,
        core: P,
        session: Option<Session<P::Message>>,
        socket: UdpSocket,
    ) -> Self {
        Node {
            id: NodeId(args.id),
            rng: ChaCha8Rng::seed_from_u64(args.seed),
            app: App::Thinking { until: args.warmup },
            linger: false,
            trace: std::env::var_os("CLUSTER_TRACE").is_some(),
            cut: args.cut.iter().copied().map(NodeId).collect(),
            args,
            core,
            session,
            timers: Timers::new(),
            socket,
            start: Instant::now(),
            reports: VecDeque::new(),
            next_report: 1,
            resend_report: None,
            out: Vec::new(),
            counts: Counts::default(),
        }
    }

    /// Milliseconds since the node started: the unit of every timer.
    fn now(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    async fn run(mut self, socket: tokio::net::UdpSocket) -> Outcome {
        let mut control = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        let mut control_open = true;
        let mut buf = [0u8; 2048];
        if let Some(session) = &mut self.session {
            let me = self.id;
            let n = self.args.peers.len() as u32;
            // Mobile: every peer is a link the radio may form (the cut ones are out of range).
            let edges = match self.args.mobile {
                true => crate::full_edges(n),
                false => self.args.topology.edges(n),
            };
            for peer in edges {
                match peer {
                    (a, b) if a == me => session.connect(b, 0)?,
                    (a, b) if b == me => session.connect(a, 0)?,
                    _ => {}
                }
            }
        }
        loop {
            self.pump();
            let wake = self.start + Duration::from_millis(self.next_deadline());
            let flow = tokio::select! {
                got = socket.recv_from(&mut buf) => match got {
                    Ok((len, from)) => self.on_datagram(&buf[..len], from),
                    // An ICMP error surfacing on a UDP socket: nothing to do.
                    Err(_) => Flow::Continue,
                },
                () = tokio::time::sleep_until(wake) => self.on_time(),
                line = control.next_line(), if control_open => match line {
                    Ok(Some(line)) => self.on_control(&line),
                    // The launcher is gone (whatever way it ended): so is its run.
                    _ if self.args.supervised => Flow::Stop,
                    // No launcher: run on until the resource says stop.
                    _ => {
                        control_open = false;
                        Flow::Continue
                    }
                },
            };
            if flow == Flow::Stop {
                break;
            }
        }
        self.print_stats();
        Ok(self.counts.errors == 0 && self.counts.suspect == 0)
    }

    /// The earliest time the node has something to do, in ms.
    fn next_deadline(&self) -> u64 {
        let app = match self.app {
            App::Thinking { until } | App::Inside { until, .. } => Some(until),
            _ => None,
        };
        let session = self.session.as_ref().and_then(Session::poll_timeout);
        [
            self.timers.next_deadline(),
            session,
            app,
            self.resend_report,
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(self.now() + 60_000)
    }

    fn on_datagram(&mut self, bytes: &[u8], from: SocketAddr) -> Flow {
        if from == self.args.resource {
            return self.on_resource(bytes);
        }
        self.counts.received += 1;
        if self.rng.random_bool(self.args.loss) {
            self.counts.dropped += 1;
            return Flow::Continue;
        }
        let Some((sender, body)) = wire::decode(bytes) else {
            self.counts.garbage += 1;
            return Flow::Continue;
        };
        if sender == self.id || self.args.peers.get(sender.index()).map(|p| p.1) != Some(from) {
            self.counts.unknown += 1;
        } else if self.cut.contains(&sender) {
            self.counts.cut += 1;
        } else {
            let now = self.now();
            match (body, &mut self.session) {
                (Body::Core(msg), None) => self.feed(Event::Receive { from: sender, msg }),
                (Body::Session(frame), Some(s)) => s.handle_datagram(
                    Datagram {
                        from: sender,
                        frame,
                    },
                    now,
                ),
                _ => self.counts.garbage += 1,
            }
        }
        Flow::Continue
    }

    fn on_time(&mut self) -> Flow {
        let now = self.now();
        while let Some(timer) = self.timers.pop_expired(now) {
            self.feed(Event::Timeout(timer));
        }
        if let Some(s) = &mut self.session {
            if s.poll_timeout().is_some_and(|at| at <= now) {
                s.handle_timeout(now);
            }
        }
        match self.app {
            App::Thinking { until } if until <= now => self.request(),
            App::Inside { until, .. } if until <= now => {
                self.app = App::Leaving;
                self.report(|node, incarnation, seq| Report::Exit {
                    node,
                    incarnation,
                    seq,
                });
            }
            _ => {}
        }
        if self.resend_report.is_some_and(|at| at <= now) {
            self.send_report();
        }
        Flow::Continue
    }

    fn on_control(&mut self, line: &str) -> Flow {
        let mut words = line.split_whitespace();
        let peer = |w: Option<&str>| w.and_then(|w| w.parse().ok()).map(NodeId);
        let now = self.now();
        match (words.next(), peer(words.next()), &mut self.session) {
            (Some("cut"), Some(p), _) => {
                self.cut.insert(p);
            }
            (Some("heal"), Some(p), _) => {
                self.cut.remove(&p);
            }
            (Some("close"), Some(p), Some(s)) => s.close(p, now),
            (Some("open"), Some(p), Some(s)) => {
                if let Err(e) = s.connect(p, now) {
                    eprintln!("node {}: cannot reconnect to {}: {e}", self.id.0, p.0);
                }
            }
            // Without links, a planned flap is a cut.
            (Some("close"), Some(p), None) => {
                self.cut.insert(p);
            }
            (Some("open"), Some(p), None) => {
                self.cut.remove(&p);
            }
            (Some("linger"), None, _) => self.linger = true,
            (Some("quit"), _, _) => return Flow::Stop,
            _ => eprintln!("node {}: unknown control line {line:?}", self.id.0),
        }
        Flow::Continue
    }

    /// `ack <incarnation> <seq>` or `stop` from the resource.
    fn on_resource(&mut self, bytes: &[u8]) -> Flow {
        let text = std::str::from_utf8(bytes).unwrap_or("");
        if text == "stop" {
            return Flow::Stop;
        }
        let acked = text.strip_prefix("ack ").and_then(|s| {
            let (incarnation, seq) = s.split_once(' ')?;
            Some((incarnation.parse().ok()?, seq.parse().ok()?))
        });
        let front = self.reports.front().map(|r| (r.incarnation(), r.seq()));
        if acked.is_some() && acked == front {
            let report = self.reports.pop_front();
            self.resend_report = None;
            if matches!(report, Some(Report::Exit { .. } | Report::Expired { .. })) {
                self.release();
            }
            self.send_report();
        }
        Flow::Continue
    }

    fn request(&mut self) {
        if self.counts.entries >= self.args.entries {
            self.app = App::Done;
            println!("done");
            self.report(|node, incarnation, seq| Report::Done {
                node,
                incarnation,
                seq,
            });
            return;
        }
        let resources = match self.args.algorithm {
            Algorithm::Prioritized => self.rng.random_range(1..=self.args.k),
            _ => 1,
        };
        // Before the core runs: it may grant at once.
        self.app = App::Waiting;
        println!("requested");
        self.feed(Event::Request(CsRequest::resources(resources)));
    }

    fn release(&mut self) {
        let until = self.now() + self.rng.random_range(0..=2 * self.args.think);
        self.app = App::Thinking { until };
        println!("left");
        self.feed(Event::Release);
    }

    /// Feed `event` to the core and carry out its actions.
    fn feed(&mut self, event: Event<P::Message>) {
        let now = self.now();
        if self.trace {
            eprintln!(
                "{now} n{}.{} <- {event:?}",
                self.id.0, self.args.incarnation
            );
        }
        let mut out = std::mem::take(&mut self.out);
        if let Err(e) = self.core.handle_into(event, &mut out) {
            eprintln!("node {}: {e}", self.id.0);
            self.counts.errors += 1;
        }
        for action in out.drain(..) {
            if self.trace && !matches!(action, Action::SetTimer { .. } | Action::CancelTimer { .. })
            {
                eprintln!(
                    "{now} n{}.{} -> {action:?}",
                    self.id.0, self.args.incarnation
                );
            }
            if self.timers.apply(&action, now) {
                continue;
            }
            match action {
                Action::Send { to, msg } => {
                    self.counts.messages += 1;
                    match &mut self.session {
                        Some(s) => {
                            if let Err(e) = s.send(to, msg, now) {
                                eprintln!("node {}: the session refused a send: {e}", self.id.0);
                                self.counts.errors += 1;
                            }
                        }
                        None => self.transmit(to, &Body::Core(msg)),
                    }
                }
                Action::EnterCritical { resources, fence } => self.enter(resources, fence),
                Action::LeaseExpired { fence } => self.lease_expired(fence),
                Action::Report(report) => self.recovered(report),
                Action::Anomaly { kind, .. } => match P::anomaly_severity(kind) {
                    Severity::Suspect => self.counts.suspect += 1,
                    _ => self.counts.noise += 1,
                },
                _ => {}
            }
        }
        self.out = out;
    }

    /// Hand the session's events to the core (one at a time, as the session asks), then its
    /// frames to the socket.
    fn pump(&mut self) {
        while let Some(event) = self.session.as_mut().and_then(Session::poll_event) {
            match event {
                SessionEvent::Core(event) => self.feed(event),
                SessionEvent::Lost {
                    peer,
                    msgs,
                    precious,
                } => {
                    println!("lost {} {} {precious}", peer.0, msgs.len());
                    self.counts.lost_reports += 1;
                    self.counts.lost_messages += msgs.len() as u64;
                    self.counts.lost_precious += precious as u64;
                }
                _ => {}
            }
        }
        while let Some(t) = self.session.as_mut().and_then(Session::poll_transmit) {
            self.transmit(t.to, &Body::Session(t.frame));
        }
    }

    fn transmit(&mut self, to: NodeId, body: &Body<P::Message>) {
        if self.cut.contains(&to) {
            self.counts.cut += 1;
            return;
        }
        let (Some(bytes), Some(&(_, addr))) =
            (wire::encode(self.id, body), self.args.peers.get(to.index()))
        else {
            return;
        };
        self.counts.sent += 1;
        // Best effort, like the network: a full socket buffer drops the datagram.
        let _ = self.socket.send_to(&bytes, addr);
    }

    /// The core granted `resources` units under `fence`.
    fn enter(&mut self, resources: u32, fence: Fence) {
        self.counts.entries += 1;
        let Fence { lane, value } = fence;
        println!("entered {} {lane} {value}", self.counts.entries);
        self.app = if std::mem::take(&mut self.linger) {
            println!("lingering");
            App::Lingering { fence }
        } else {
            App::Inside {
                until: self.now() + self.args.hold,
                fence,
            }
        };
        self.report(|node, incarnation, seq| Report::Enter {
            node,
            incarnation,
            seq,
            resources,
            lane,
            value,
        });
    }

    /// The lease of the entry under `fence` ended: stop acting on the resource (tell it the
    /// entry ended early) and leave once it has heard.
    fn lease_expired(&mut self, fence: Fence) {
        self.counts.lease_expired += 1;
        println!("expired {} {}", fence.lane, fence.value);
        match self.app {
            App::Inside { fence: f, .. } | App::Lingering { fence: f } if f == fence => {
                self.app = App::Leaving;
                self.report(|node, incarnation, seq| Report::Expired {
                    node,
                    incarnation,
                    seq,
                    lane: fence.lane,
                    value: fence.value,
                });
            }
            // Leaving already: the exit is on its way.
            _ => {}
        }
    }

    /// What recovery did.
    fn recovered(&mut self, report: Recovered) {
        match report {
            Recovered::TokenRegenerated { fence } => {
                self.counts.regenerated += 1;
                println!("regenerated {} {}", fence.lane, fence.value);
            }
            Recovered::TokenDestroyed { fence } => {
                self.counts.destroyed += 1;
                println!("destroyed {} {}", fence.lane, fence.value);
            }
            Recovered::PeerExcluded(peer) => {
                self.counts.excluded += 1;
                println!("excluded {}", peer.0);
            }
            Recovered::PeerReadmitted(peer) => {
                self.counts.readmitted += 1;
                println!("readmitted {}", peer.0);
            }
            _ => {}
        }
    }

    /// Queue a report for the resource.
    fn report(&mut self, report: impl FnOnce(NodeId, u32, u64) -> Report) {
        self.reports
            .push_back(report(self.id, self.args.incarnation, self.next_report));
        self.next_report += 1;
        if self.reports.len() == 1 {
            self.send_report();
        }
    }

    /// (Re)send the first unacknowledged report.
    fn send_report(&mut self) {
        if let Some(report) = self.reports.front() {
            let _ = self
                .socket
                .send_to(report.line().as_bytes(), self.args.resource);
            self.resend_report = Some(self.now() + REPORT_RETRY_MS);
        }
    }

    fn print_stats(&self) {
        let c = &self.counts;
        let session = self
            .session
            .as_ref()
            .map(|s| *s.stats())
            .unwrap_or_default();
        println!(
            "stats node={} status={:?} entries={} messages={} sent={} received={} dropped={} cut={} \
             garbage={} unknown={} lost_reports={} lost_messages={} lost_precious={} \
             lease_expired={} regenerated={} destroyed={} excluded={} readmitted={} noise={} \
             suspect={} errors={} retransmitted={} hellos={} links_up={} links_abandoned={}",
            self.id.0,
            self.core.status(),
            c.entries,
            c.messages,
            c.sent,
            c.received,
            c.dropped,
            c.cut,
            c.garbage,
            c.unknown,
            c.lost_reports,
            c.lost_messages,
            c.lost_precious,
            c.lease_expired,
            c.regenerated,
            c.destroyed,
            c.excluded,
            c.readmitted,
            c.noise,
            c.suspect,
            c.errors,
            session.retransmitted,
            session.hellos,
            session.links_up,
            session.links_abandoned,
        );
    }
}
