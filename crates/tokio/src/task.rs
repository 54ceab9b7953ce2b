//! The node's task: the driver, the socket, the clock and the commands.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use manet_mutex::codec::Wire;
use manet_mutex::driver::{Algorithm, Destination, Driver, DriverEvent, Transmit};
use manet_mutex::{CsRequest, Fence, NodeId, Report};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tracing::{debug, error, info, warn};

use crate::filter::{Direction, Filter, Verdict};
use crate::store::{Store, StoreError};
use crate::{
    Command, Error, Failure, Grant, Lost, PeerState, Shared, Stats, LEAVE_LINGER, LEAVE_WAIT,
};

/// The largest datagram read (UDP's limit).
const MAX_DATAGRAM: usize = 65_536;

/// The first report of a waiting request's silent peers comes this long after the request;
/// each next one after twice the interval before, up to [`REPORT_MAX`].
const REPORT_FIRST: Duration = Duration::from_secs(1);
/// The most peer addresses a node learns from hellos (beyond its map): the memory a stream of
/// hellos from ever new addresses can take is bounded.
const MAX_LEARNED: usize = 1024;

/// The longest interval between two reports of a waiting request.
const REPORT_MAX: Duration = Duration::from_secs(60);

/// What the task keeps of a peer (an entry per peer of the map, made at start: updating it
/// never allocates).
#[derive(Debug, Clone, Copy, Default)]
struct Heard {
    last: Option<Instant>,
    datagrams: u64,
}

/// Where this node's request stands.
enum State {
    Idle,
    Waiting {
        id: u64,
        reply: oneshot::Sender<Result<Grant, Error>>,
        since: Instant,
        /// When to report the peers it waits on next, and the interval after that.
        report: (Instant, Duration),
    },
    Holding {
        id: u64,
        fence: Fence,
        lost: watch::Sender<Option<Lost>>,
        since: Instant,
    },
}

pub(crate) struct Task<P: Algorithm>
where
    P::Message: Wire,
{
    driver: Driver<P>,
    socket: UdpSocket,
    start: Instant,
    peers: HashMap<NodeId, SocketAddr>,
    by_addr: HashMap<SocketAddr, NodeId>,
    broadcast: Option<SocketAddr>,
    filter: Option<Filter>,
    /// The durable state, if the node has a state directory.
    store: Option<Store>,
    rx: mpsc::UnboundedReceiver<Command>,
    shared: Arc<Shared>,
    state: State,
    stats: Stats,
    /// Informational events for the subscribers, sent once the counters are published.
    published: Vec<DriverEvent>,
    /// Per peer of the map: when it was last heard.
    heard: HashMap<NodeId, Heard>,
    /// The filter panicked or storing failed ([`Task::fail`]): the task ends as a crash
    /// would, and nothing more is sent.
    failed: bool,
    /// The node is leaving ([`Command::Leave`], or every handle dropped).
    leaving: Option<Leaving>,
    /// Commands may still come (some handle or guard lives).
    commanded: bool,
    /// Peer addresses learnt from hellos so far (at most [`MAX_LEARNED`]).
    learned: usize,
}

/// A leave under way: whom to tell, whether the core said it left, and when the task ends.
struct Leaving {
    reply: Option<oneshot::Sender<Result<(), Error>>>,
    left: bool,
    until: Instant,
}

impl<P> Task<P>
where
    P: Algorithm + Send + 'static,
    P::Message: Wire + Send,
{
    #[allow(clippy::too_many_arguments)] // One call, in the builder: each is the task's own.
    pub(crate) fn new(
        driver: Driver<P>,
        socket: UdpSocket,
        start: Instant,
        peers: HashMap<NodeId, SocketAddr>,
        broadcast: Option<SocketAddr>,
        filter: Option<Filter>,
        store: Option<Store>,
        rx: mpsc::UnboundedReceiver<Command>,
        shared: Arc<Shared>,
    ) -> Self {
        let by_addr = peers.iter().map(|(&id, &addr)| (addr, id)).collect();
        let heard = peers.keys().map(|&id| (id, Heard::default())).collect();
        Task {
            driver,
            socket,
            start,
            peers,
            by_addr,
            broadcast,
            filter,
            store,
            rx,
            shared,
            state: State::Idle,
            stats: Stats::default(),
            published: Vec::new(),
            heard,
            failed: false,
            leaving: None,
            commanded: true,
            learned: 0,
        }
    }

    /// The driver's time: milliseconds since the node started.
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) async fn run(mut self) {
        info!(peers = self.peers.len(), "node started");
        let mut buf = vec![0u8; MAX_DATAGRAM];
        loop {
            self.flush().await;
            if self.failed {
                break;
            }
            // A deadline past what an `Instant` holds is never.
            let deadline = self
                .driver
                .poll_timeout()
                .and_then(|ms| self.start.checked_add(Duration::from_millis(ms)));
            let timer = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let report = match &self.state {
                State::Waiting { report, .. } => Some(report.0),
                _ => None,
            };
            let report = async {
                match report {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let until = self.leaving.as_ref().map(|l| l.until);
            let leave_ends = async {
                match until {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                command = self.rx.recv(), if self.commanded => match command {
                    Some(Command::Shutdown) => break,
                    Some(command) => self.on_command(command),
                    None => {
                        // Every handle and guard is gone: leave, in the background.
                        self.commanded = false;
                        if self.leaving.is_none() {
                            self.leave(None);
                        }
                    }
                },
                () = leave_ends => break,
                received = self.socket.recv_from(&mut buf) => match received {
                    Ok((len, from)) => {
                        self.stats.datagrams_received += 1;
                        if self.keeps(Direction::In, from, &buf[..len]) {
                            self.on_datagram(from, &buf[..len]);
                        }
                    }
                    Err(e) => {
                        self.stats.recv_errors += 1;
                        debug!(error = %e, "receive failed");
                    }
                },
                () = timer => {
                    let now = self.now();
                    self.driver.handle_timeout(now);
                }
                () = report => self.report_waiting(),
            }
        }
        self.stop();
        self.flush().await;
        match self.failed {
            true => error!("node stopped after a failure"),
            false => info!("node stopped"),
        }
        if let Some(Leaving { reply, left, .. }) = self.leaving.take() {
            let outcome = if self.failed {
                Err(self.shared.ended())
            } else if left {
                Ok(())
            } else {
                warn!("stopped before the leave completed");
                Err(Error::LeaveIncomplete)
            };
            if let Some(reply) = reply {
                let _ = reply.send(outcome);
            }
        }
    }

    /// Withdraw or release what the node has, then leave: the core's `Leave`; the task ends
    /// [`LEAVE_LINGER`] after the core's `Left`, or at [`LEAVE_WAIT`] without it.
    fn leave(&mut self, reply: Option<oneshot::Sender<Result<(), Error>>>) {
        if self.leaving.is_some() {
            if let Some(reply) = reply {
                let _ = reply.send(Err(Error::Left));
            }
            return;
        }
        self.stop_request(Error::Left);
        let now = self.now();
        match self.driver.core_event(now, manet_mutex::Event::Leave) {
            Ok(()) => {
                info!("leaving");
                self.leaving = Some(Leaving {
                    reply,
                    left: false,
                    until: Instant::now() + LEAVE_WAIT,
                });
            }
            Err(e) => {
                warn!(error = %e, "the core refused to leave");
                match reply {
                    Some(reply) => {
                        let _ = reply.send(Err(Error::Core(e)));
                    }
                    // Nobody to tell and nobody to serve: stop now.
                    None => {
                        self.leaving = Some(Leaving {
                            reply: None,
                            left: false,
                            until: Instant::now(),
                        })
                    }
                }
            }
        }
    }

    /// A waiting request's peers: each it waits on, and how long it has been silent
    /// (`warn`); then the next report, at twice the interval (at most [`REPORT_MAX`]).
    fn report_waiting(&mut self) {
        let State::Waiting {
            id, since, report, ..
        } = &mut self.state
        else {
            return;
        };
        let interval = report.1;
        *report = (Instant::now() + interval, (interval * 2).min(REPORT_MAX));
        let (id, waited_ms) = (*id, millis(since.elapsed()));
        let mut any = false;
        for (&peer, heard) in &self.heard {
            if self.driver.core().waits_on(peer) {
                any = true;
                let silent_ms = millis(heard.last.unwrap_or(self.start).elapsed());
                warn!(
                    request = id,
                    peer = peer.0,
                    silent_ms,
                    waited_ms,
                    heard = heard.last.is_some(),
                    "waiting for peer {}, silent {} s",
                    peer.0,
                    silent_ms / 1000
                );
            }
        }
        if !any {
            warn!(
                request = id,
                waited_ms, "waiting, on no peer of the map (no neighbour asked yet)"
            );
        }
    }

    /// Every peer of the map as the node sees it now, in id order ([`Node::peers`]).
    ///
    /// [`Node::peers`]: crate::Node::peers
    fn peer_states(&self) -> Vec<PeerState> {
        let waiting = matches!(self.state, State::Waiting { .. });
        let mut states: Vec<PeerState> = self
            .peers
            .iter()
            .map(|(&id, &addr)| {
                let heard = self.heard.get(&id).copied().unwrap_or_default();
                PeerState {
                    id,
                    addr,
                    silent: heard.last.unwrap_or(self.start).elapsed(),
                    heard: heard.last.is_some(),
                    datagrams: heard.datagrams,
                    awaited: waiting && self.driver.core().waits_on(id),
                }
            })
            .collect();
        states.sort_by_key(|p| p.id);
        states
    }

    /// The filter's verdict on a datagram (kept without a filter); a drop is counted.
    ///
    /// A panicking filter is caught: the node is [failed](Task::fail), and nothing passes
    /// from then on.
    fn keeps(&mut self, direction: Direction, addr: SocketAddr, bytes: &[u8]) -> bool {
        if self.failed {
            return false;
        }
        let Some(filter) = &mut self.filter else {
            return true;
        };
        let verdict = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            filter(direction, addr, bytes)
        }));
        let verdict = match verdict {
            Ok(verdict) => verdict,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                self.fail(Failure::Filter(message));
                return false;
            }
        };
        match verdict {
            Verdict::Keep => true,
            Verdict::Drop => {
                match direction {
                    Direction::In => self.stats.filtered_in += 1,
                    Direction::Out => self.stats.filtered_out += 1,
                }
                debug!(?direction, %addr, len = bytes.len(), "datagram filtered out");
                false
            }
        }
    }

    /// The filter panicked, or storing failed: the task ends as a crash would (the filter,
    /// which may be in any state, is never called again, and nothing more is sent); every
    /// later call of the handles returns the failure ([`Error::FilterPanicked`],
    /// [`Error::StoreFailed`]).
    fn fail(&mut self, failure: Failure) {
        match &failure {
            Failure::Filter(message) => {
                error!(panic = %message, "the datagram filter panicked: the node stops");
            }
            Failure::Store(reason) => {
                error!(error = %reason, "cannot store the node's state: the node stops");
            }
        }
        let _ = self.shared.failure.set(failure);
        self.failed = true;
    }

    fn on_datagram(&mut self, from: SocketAddr, bytes: &[u8]) {
        match self.by_addr.get(&from) {
            Some(&peer) => {
                if let Some(heard) = self.heard.get_mut(&peer) {
                    heard.last = Some(Instant::now());
                    heard.datagrams += 1;
                }
                let now = self.now();
                self.driver.handle_datagram(now, peer, bytes);
            }
            None => match self.driver.hello_sender(bytes) {
                // A node that was not in the map (it joined later, or nobody configured it)
                // says hello: its address is learnt, as a broadcast network's neighbours are.
                Some(peer) if !self.peers.contains_key(&peer) && self.learned < MAX_LEARNED => {
                    self.learned += 1;
                    info!(peer = peer.0, %from, "address learnt from a hello");
                    self.peers.insert(peer, from);
                    self.by_addr.insert(from, peer);
                    self.heard.insert(peer, Heard::default());
                    self.on_datagram(from, bytes);
                }
                _ => {
                    self.stats.unknown_sender += 1;
                    debug!(%from, len = bytes.len(), "datagram from an unknown address dropped");
                }
            },
        }
    }

    fn on_command(&mut self, command: Command) {
        let now = self.now();
        match command {
            Command::Acquire { id, request, reply } => self.on_acquire(now, id, request, reply),
            Command::Cancel { id } => match std::mem::replace(&mut self.state, State::Idle) {
                State::Waiting { id: w, .. } if w == id => {
                    self.stats.cancelled += 1;
                    match self.driver.cancel(now) {
                        Ok(()) => debug!(request = id, "request withdrawn"),
                        Err(e) => warn!(request = id, error = %e, "the core refused a cancel"),
                    }
                }
                // The grant went out but its future was dropped before taking it.
                State::Holding {
                    id: h,
                    fence,
                    since,
                    ..
                } if h == id => self.release(now, fence, since),
                state => self.state = state,
            },
            Command::Release { id } => match std::mem::replace(&mut self.state, State::Idle) {
                State::Holding {
                    id: h,
                    fence,
                    since,
                    ..
                } if h == id => self.release(now, fence, since),
                state => self.state = state,
            },
            Command::Refused { id, newest, reply } => {
                let outcome = match &self.state {
                    State::Holding { id: h, fence, .. } if *h == id => self
                        .driver
                        .refused(now, *fence, newest)
                        .map_err(Error::Core),
                    // A guard lives only while its entry is held.
                    _ => Err(Error::Shutdown),
                };
                let _ = reply.send(outcome);
            }
            Command::Connect { peer, reply } => {
                let _ = reply.send(self.driver.connect(now, peer).map_err(Error::Link));
            }
            Command::Close { peer } => self.driver.close(now, peer),
            Command::Peers { reply } => {
                let _ = reply.send(self.peer_states());
            }
            Command::Leave { reply } => self.leave(Some(reply)),
            Command::Shutdown => {}
        }
    }

    fn on_acquire(
        &mut self,
        now: u64,
        id: u64,
        request: CsRequest,
        reply: oneshot::Sender<Result<Grant, Error>>,
    ) {
        if self.leaving.is_some() {
            let _ = reply.send(Err(Error::Left));
            return;
        }
        if !matches!(self.state, State::Idle) {
            let _ = reply.send(Err(Error::Busy));
            return;
        }
        match self.driver.request(now, request) {
            Ok(()) => {
                self.stats.requested += 1;
                debug!(request = id, "requested");
                let since = Instant::now();
                self.state = State::Waiting {
                    id,
                    reply,
                    since,
                    report: (since + REPORT_FIRST, REPORT_FIRST * 2),
                };
            }
            Err(e) => {
                let _ = reply.send(Err(Error::Core(e)));
            }
        }
    }

    fn release(&mut self, now: u64, fence: Fence, since: Instant) {
        self.stats.released += 1;
        self.stats.hold_ms += millis(since.elapsed());
        match self.driver.release(now) {
            Ok(()) => debug!(lane = fence.lane, fence = fence.value, "released"),
            Err(e) => warn!(error = %e, "the core refused a release"),
        }
    }

    fn on_event(&mut self, event: DriverEvent) {
        if !event.is_vital() {
            self.published.push(event.clone());
        }
        match event {
            DriverEvent::Entered { resources, fence } => self.on_entered(resources, fence),
            DriverEvent::LeaseExpired { fence } => match &self.state {
                State::Holding { fence: f, lost, .. } if *f == fence => {
                    self.stats.lost += 1;
                    warn!(
                        lane = fence.lane,
                        fence = fence.value,
                        "lease expired: lock lost"
                    );
                    let _ = lost.send(Some(Lost::LeaseExpired));
                }
                _ => debug!(lane = fence.lane, fence = fence.value, "lease expired"),
            },
            DriverEvent::Persist { promised } => match &mut self.store {
                Some(store) => {
                    let stored = store.promise(promised);
                    self.halt_on(stored);
                }
                None => warn!(
                    ?promised,
                    "majority mode promise not stored (no state directory)"
                ),
            },
            DriverEvent::Lost {
                peer,
                messages,
                precious,
            } => {
                self.stats.lost_links += 1;
                self.stats.lost_messages += messages as u64;
                self.stats.lost_precious += precious as u64;
                warn!(
                    peer = peer.0,
                    messages, precious, "link failed with messages unacknowledged"
                );
            }
            DriverEvent::Report(report) => {
                if let (
                    Report::TokenRegenerated { fence } | Report::TokenRenumbered { fence },
                    Some(store),
                ) = (report, &mut self.store)
                {
                    // The round is the generation's high half (F4): made before its beacons go.
                    let stored = store.made((fence.generation() >> 16) as u16);
                    self.halt_on(stored);
                }
                if let (Report::Left, Some(leaving)) = (report, &mut self.leaving) {
                    leaving.left = true;
                    leaving.until = Instant::now() + LEAVE_LINGER;
                }
                match report {
                    Report::TokenRegenerated { .. } => self.stats.regenerated += 1,
                    Report::PeerExcluded(_) => self.stats.excluded += 1,
                    Report::TokenDestroyed { .. } => self.stats.destroyed += 1,
                    Report::PeerReadmitted(_) => self.stats.readmitted += 1,
                    _ => {}
                }
                info!(?report, "recovery");
            }
            DriverEvent::Anomaly {
                from,
                kind,
                severity,
            } => warn!(peer = from.0, ?kind, ?severity, "anomaly"),
            DriverEvent::LinkUp(peer) => debug!(peer = peer.0, "link up"),
            DriverEvent::LinkDown(peer) => debug!(peer = peer.0, "link down"),
            DriverEvent::NeighbourUp(peer) => debug!(peer = peer.0, "neighbour up"),
            DriverEvent::NeighbourDown(peer) => debug!(peer = peer.0, "neighbour down"),
            other => debug!(event = ?other, "driver event"),
        }
    }

    fn on_entered(&mut self, resources: u32, fence: Fence) {
        let now = self.now();
        if let Some(store) = &mut self.store {
            // Before the application acts under the fence: a restart numbers above it.
            let stored = store.entered(fence.generation());
            self.halt_on(stored);
            if self.failed {
                return;
            }
        }
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Waiting {
                id, reply, since, ..
            } => {
                self.stats.entered += 1;
                self.stats.wait_ms += millis(since.elapsed());
                let (lost, lost_rx) = watch::channel(None);
                let grant = Grant {
                    fence,
                    resources,
                    lost: lost_rx,
                };
                let entered = Instant::now();
                // The guard's holder may read the counters at once: they count the entry.
                self.publish();
                if reply.send(Ok(grant)).is_err() {
                    // The future is gone; its cancel is on its way: leave at once.
                    debug!(request = id, "entered for a dropped request");
                    self.release(now, fence, entered);
                } else {
                    info!(
                        request = id,
                        lane = fence.lane,
                        fence = fence.value,
                        resources,
                        "entered"
                    );
                    self.state = State::Holding {
                        id,
                        fence,
                        lost,
                        since: entered,
                    };
                }
            }
            state => {
                self.state = state;
                warn!(
                    lane = fence.lane,
                    fence = fence.value,
                    "entered with no request waiting"
                );
                if let Err(e) = self.driver.release(now) {
                    warn!(error = %e, "the core refused a release");
                }
            }
        }
    }

    /// The node stops: withdraw or release what it has.
    fn stop(&mut self) {
        let ended = self.shared.ended();
        self.stop_request(ended);
    }

    /// Withdraw the waiting request (its `acquire` ends with `error`) or release the lock.
    fn stop_request(&mut self, error: Error) {
        let now = self.now();
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => {}
            State::Waiting { reply, .. } => {
                self.stats.cancelled += 1;
                let _ = self.driver.cancel(now);
                let _ = reply.send(Err(error));
            }
            State::Holding {
                fence, lost, since, ..
            } => {
                let _ = lost.send(Some(Lost::Shutdown));
                self.release(now, fence, since);
            }
        }
    }

    /// A failure to store ends the node before it sends what the stored state had to precede.
    fn halt_on(&mut self, stored: Result<(), StoreError>) {
        if let Err(e) = stored {
            self.stats.store_failed = true;
            self.fail(Failure::Store(e.to_string()));
        }
    }

    /// Drains the driver's events, then its transmits, until neither has any; publishes the
    /// counters. Nothing is sent once the node failed ([`Task::fail`]).
    async fn flush(&mut self) {
        loop {
            let mut moved = false;
            while let Some(event) = self.driver.poll_event() {
                moved = true;
                self.on_event(event);
            }
            if self.failed {
                break;
            }
            while let Some(transmit) = self.driver.poll_transmit() {
                moved = true;
                self.send(transmit).await;
            }
            if !moved {
                break;
            }
        }
        self.publish();
        // After the counters: a subscriber that reads them on an event sees it counted.
        for event in self.published.drain(..) {
            // Nobody subscribed is no error: the counters keep what matters.
            let _ = self.shared.events.send(event);
        }
    }

    /// Makes the counters, with the driver's and the core's status, what [`Node::stats`]
    /// reads.
    ///
    /// [`Node::stats`]: crate::Node::stats
    fn publish(&mut self) {
        self.stats.driver = self.driver.stats();
        self.stats.session = self.driver.session_stats();
        self.stats.status = Some(self.driver.core().status());
        *self.shared.stats.lock().unwrap_or_else(|e| e.into_inner()) = self.stats;
    }

    async fn send(&mut self, transmit: Transmit) {
        match transmit.to {
            Destination::Peer(peer) => match self.peers.get(&peer) {
                Some(&addr) => self.send_to(&transmit.bytes, addr).await,
                None => {
                    self.stats.no_address += 1;
                    debug!(peer = peer.0, "no address for a peer: datagram dropped");
                }
            },
            Destination::Broadcast => match self.broadcast {
                Some(addr) => self.send_to(&transmit.bytes, addr).await,
                None => {
                    let addrs: Vec<SocketAddr> = self.peers.values().copied().collect();
                    for addr in addrs {
                        self.send_to(&transmit.bytes, addr).await;
                    }
                }
            },
        }
    }

    async fn send_to(&mut self, bytes: &[u8], addr: SocketAddr) {
        if !self.keeps(Direction::Out, addr, bytes) {
            return;
        }
        match self.socket.send_to(bytes, addr).await {
            Ok(_) => self.stats.datagrams_sent += 1,
            Err(e) => {
                self.stats.send_errors += 1;
                debug!(%addr, error = %e, "send failed");
            }
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
