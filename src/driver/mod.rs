//! A sans-IO driver (feature `codec`): one node's core, its link sessions (token algorithms)
//! or direct datagrams (permission algorithms), neighbour discovery and timers, behind one
//! input/output surface, in the style of quinn-proto's `Connection` and str0m's `Rtc`.
//!
//! The glue every embedder used to write (session events into the core, the core's sends into
//! the session, discovery's events into the session, three sets of timers merged, the frames
//! encoded) is here, in the one order that keeps the link contract. An embedder moves bytes
//! and time:
//!
//! | in | out |
//! | --- | --- |
//! | [`Driver::handle_datagram`]`(now, from, bytes)` | [`Driver::poll_transmit`]: a [`Transmit`] (a peer or a broadcast, and the bytes) |
//! | [`Driver::handle_timeout`]`(now)` at [`Driver::poll_timeout`] | [`Driver::poll_event`]: a [`DriverEvent`] (entered with its fence, lease ended, link or token lost, token regenerated, peer excluded, neighbours, suspect anomalies) |
//! | [`Driver::request`], [`Driver::release`], [`Driver::cancel`], [`Driver::refused`], [`Driver::core_event`] (look-ahead's modes, `Suspect`/`Trust`) | [`Driver::stats`] |
//! | [`Driver::connect`], [`Driver::close`]: neighbours the embedder names (token algorithms without discovery) | |
//!
//! After every input, drain [`Driver::poll_event`], then [`Driver::poll_transmit`], then ask
//! [`Driver::poll_timeout`]. `now` is in [the embedder's time unit](crate#timers) and never
//! goes back (an earlier `now` counts as the latest one seen). `from` is the sender as the
//! transport knows it (its address, mapped to a [`NodeId`]); a frame that names another
//! sender is dropped.
//!
//! # Example: the loop
//!
//! Three KRL nodes find each other by hellos and node 2 enters; the "network" is a queue.
//!
//! ```
//! use manet_mutex::driver::{Config, Destination, Driver, DriverEvent};
//! use manet_mutex::reverse_link::{network, Node, Settings};
//! use manet_mutex::{discovery, CsRequest, NodeId};
//!
//! let config = Config::DEFAULT.with_discovery(discovery::Settings::new(100));
//! let mut nodes = Vec::new();
//! for c in network(3, &[], &[NodeId(0)], Settings::new(1))? {
//!     nodes.push(Driver::new(Node::new(c)?, config, 0)?);
//! }
//! let (mut now, mut entered) = (0, None);
//! while entered.is_none() && now < 10_000 {
//!     if now == 2_000 {
//!         nodes[2].request(now, CsRequest::ONE)?;
//!     }
//!     for i in 0..3 {
//!         nodes[i].handle_timeout(now);
//!         while let Some(DriverEvent::Entered { fence, .. }) = nodes[i].poll_event() {
//!             entered = Some((i, fence));
//!         }
//!         while let Some(t) = nodes[i].poll_transmit() {
//!             for j in (0..3).filter(|&j| j != i) {
//!                 if t.to == Destination::Broadcast || t.to == Destination::Peer(NodeId(j as u32)) {
//!                     nodes[j].handle_datagram(now, NodeId(i as u32), &t.bytes);
//!                 }
//!             }
//!         }
//!     }
//!     now += 1;
//! }
//! assert_eq!(entered.map(|(i, _)| i), Some(2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The order of handling
//!
//! Every input runs to completion before it returns, in this order (a wrong one would break
//! the link contract silently: a core told `LinkDown` with its own messages still queued
//! behind it, or a message before its link's `LinkUp`):
//!
//! 1. **The input itself**: a datagram to discovery (a hello), the session (a session frame)
//!    or the core (a permission message); a timeout to discovery, then the session (each
//!    only if due); an application call to the core.
//! 2. **Discovery's events, then the session's, until neither has one**: each
//!    `NeighbourUp`/`NeighbourDown` goes to the session (`connect`/`close`) and out as an
//!    event; each session event goes to the core *one at a time*, and the core's actions
//!    are carried out before the next is polled: its sends go to the session
//!    ([`Session::send`](crate::session::Session::send)), its timers to the timer table, the
//!    rest out as events. The session hands out a `LinkDown` only after the core consumed
//!    every earlier event, so nothing the core sent is stranded.
//! 3. **Then the core's due timers**, on [`Driver::handle_timeout`], earliest first, each
//!    followed by step 2 again: the session's view of the links is settled before a core
//!    timer fires.
//!
//! Events come out in the order they arose. Transmits come out hellos first, then session
//! frames, then direct datagrams; the order of datagrams matters to nobody (the transport
//! may reorder them anyway), except after a [`DriverEvent::Persist`]: store it before
//! sending anything polled after it, which "events first, then transmits" does.
//!
//! # Wire format
//!
//! Three formats share one socket, told apart by their first byte: discovery's hellos
//! (`0x81`, [`Hello::encode_into`](crate::discovery::Hello::encode_into)), broadcast; the
//! driver's frames (`0x83`, [`wire`]): session frames and direct core messages, each naming
//! its sender and receiver, closed by the codec's CRC-32C; with a key (feature `auth`) every
//! datagram also carries a 16-byte tag. `docs/ALGORITHMS.md`, D2 to D5, states the contract,
//! the format, the authentication and the bounds.
//!
//! # Threat model and limits
//!
//! A datagram may hold anything. The driver never panics on one, and every datagram that is
//! not a frame of its formats, fails its check, names a sender other than `from` or a
//! receiver other than this node, comes from a peer the core cannot have, or is of a kind the
//! algorithm does not take, is counted ([`Stats`]) and dropped. What passes is judged by
//! discovery, the session and the core, each by its own rules (replays: the session takes a
//! data frame once per incarnation, by sequence number, and no frame of another incarnation;
//! the cores' check words and request numbers make a replayed permission message stale).
//! The CRC detects corruption, not forgery. With the `auth` feature and a pre-shared key
//! (`Config::key`), every datagram carries the first `TAG_LEN` (16) bytes of its
//! HMAC-SHA-256: after the frame check (so corruption is counted as such), a datagram whose
//! tag fails is counted in [`Stats::dropped_auth`] and dropped. A shared key authenticates
//! membership, not the member: a key holder can speak for any node. A MAC does not stop
//! replays; the layers above do what they can: a replayed session frame is a duplicate (its
//! sequence number) or of another incarnation (its epochs), a replayed hello is not above the
//! sender's last number, a replayed permission message is stale by its request number. What
//! remains: an old hello replayed [`RESTART_GAP`](crate::discovery::RESTART_GAP) numbers back
//! reads as its sender's restart (the link goes down at one end until the next hellos), and
//! replayed `Hello`s of old incarnations are answered (bandwidth, not state). Without a key,
//! any host that can send to the node can speak for any peer.
//!
//! Memory is bounded whatever arrives: per-peer state lives only in the session (at most
//! [`session::Settings::max_peers`](crate::session::Settings::max_peers) peers), discovery (at
//! most its `max_neighbours`) and the core (its hosts, or its neighbours, which only the
//! session's `LinkUp` adds); the queues of informational events and direct datagrams hold at
//! most [`Config::max_queued`]; decoding allocates nothing.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::codec::Wire;
use crate::discovery::{self, Discovery, DiscoveryEvent, Hello, MAX_HELLO_FRAME};
use crate::session::{self, Datagram, Session, SessionEvent};
use crate::timers::Timers;
use crate::{Action, CsRequest, Error, Event, Fence, NodeId, Protocol, Severity};

mod algorithm;
#[cfg(feature = "auth")]
mod auth;
mod config;
mod output;
pub mod wire;

pub use algorithm::Algorithm;
#[cfg(feature = "auth")]
pub use auth::{AuthKey, TAG_LEN};
pub use config::{Config, DriverError, Stats};
pub use output::{Destination, DriverEvent, Transmit};
use wire::{Envelope, Payload};

/// One node: its core, sessions, discovery and timers (see the [module docs](self)).
///
/// Every method is non-blocking and never panics; bad datagrams are counted
/// ([`Driver::stats`]) and dropped.
#[derive(Debug, Clone)]
pub struct Driver<P: Protocol> {
    id: NodeId,
    core: P,
    /// Token algorithms only.
    session: Option<Session<P::Message>>,
    discovery: Option<Discovery>,
    timers: Timers,
    /// The core's direct messages (permission algorithms), oldest first.
    direct: VecDeque<(NodeId, P::Message)>,
    events: VecDeque<DriverEvent>,
    /// The core's actions, reused between calls.
    out: Vec<Action<P::Message>>,
    max_queued: usize,
    now: u64,
    stats: Stats,
    #[cfg(feature = "auth")]
    key: Option<AuthKey>,
}

impl<P: Algorithm> Driver<P>
where
    P::Message: Wire,
{
    /// The driver of `core`, started at `now`.
    pub fn new(core: P, config: Config, now: u64) -> Result<Self, DriverError> {
        let id = core.id();
        let session = match P::LINKED {
            true => Some(
                Session::new(id, config.session)?
                    .with_epoch_base(config.epoch_base)
                    .with_precious(P::precious),
            ),
            false => None,
        };
        let discovery = match config.discovery {
            Some(settings) => Some(Discovery::new(id, settings, now)?),
            None => None,
        };
        Ok(Driver {
            id,
            core,
            session,
            discovery,
            timers: Timers::new(),
            direct: VecDeque::new(),
            events: VecDeque::new(),
            out: Vec::new(),
            max_queued: config.max_queued.max(1),
            now,
            stats: Stats::default(),
            #[cfg(feature = "auth")]
            key: config.key,
        })
    }

    /// This node.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The core, to inspect.
    pub fn core(&self) -> &P {
        &self.core
    }

    /// What the driver counted (with the sessions' retransmissions).
    pub fn stats(&self) -> Stats {
        let mut stats = self.stats;
        stats.retransmitted = self.session_stats().map_or(0, |s| s.retransmitted);
        stats
    }

    /// What the sessions counted (token algorithms).
    pub fn session_stats(&self) -> Option<session::Stats> {
        self.session.as_ref().map(|s| *s.stats())
    }

    /// What discovery counted (if it runs).
    pub fn discovery_stats(&self) -> Option<discovery::Stats> {
        self.discovery.as_ref().map(|d| *d.stats())
    }

    /// The session (token algorithms), to inspect.
    pub fn session(&self) -> Option<&Session<P::Message>> {
        self.session.as_ref()
    }

    /// Discovery (if it runs), to inspect.
    pub fn discovery(&self) -> Option<&Discovery> {
        self.discovery.as_ref()
    }

    /// Events and direct datagrams waiting to be polled.
    pub fn queued(&self) -> (usize, usize) {
        (self.events.len(), self.direct.len())
    }

    fn advance(&mut self, now: u64) -> u64 {
        self.now = self.now.max(now);
        self.now
    }

    /// A datagram from `from` (the sender as the transport knows it). Anything that is not a
    /// frame for this node from `from` is counted and dropped.
    pub fn handle_datagram(&mut self, now: u64, from: NodeId, bytes: &[u8]) {
        let now = self.advance(now);
        self.stats.datagrams_in += 1;
        if from == self.id {
            self.stats.dropped_unknown_peer += 1;
            return;
        }
        #[cfg(feature = "auth")]
        let Some(bytes) = self.authentic(bytes) else {
            return;
        };
        match bytes.first() {
            Some(&discovery::WIRE_VERSION) => self.on_hello(now, from, bytes),
            Some(&wire::VERSION) => self.on_frame(now, from, bytes),
            _ => self.stats.dropped_malformed += 1,
        }
        self.pump(now);
    }

    /// The frame inside `bytes` if its tag is right (or there is no key); else counted.
    /// The frame check comes first, so that corruption is told from forgery.
    #[cfg(feature = "auth")]
    fn authentic<'b>(&mut self, bytes: &'b [u8]) -> Option<&'b [u8]> {
        match self.unwrap_tag(bytes) {
            Ok(frame) => Some(frame),
            Err(Untagged::Malformed) => {
                self.stats.dropped_malformed += 1;
                None
            }
            Err(Untagged::Checksum) => {
                self.stats.dropped_checksum += 1;
                None
            }
            Err(Untagged::Forged) => {
                self.stats.dropped_auth += 1;
                None
            }
        }
    }

    /// The frame inside `bytes` if its tag is right (or there is no key), counting nothing.
    #[cfg(feature = "auth")]
    fn unwrap_tag<'b>(&self, bytes: &'b [u8]) -> Result<&'b [u8], Untagged> {
        let Some(key) = &self.key else {
            return Ok(bytes);
        };
        let split = bytes
            .len()
            .checked_sub(TAG_LEN + crate::codec::CHECK_LEN + 1)
            .ok_or(Untagged::Malformed)?;
        let (frame, tag) = bytes.split_at(split + crate::codec::CHECK_LEN + 1);
        let (checked, check) = frame.split_at(split + 1);
        if crate::codec::frame_check(checked) != check {
            return Err(Untagged::Checksum);
        }
        if !key.verify(frame, tag) {
            return Err(Untagged::Forged);
        }
        Ok(frame)
    }

    /// The sender a datagram from an address the embedder cannot map yet names, if it is a
    /// valid discovery hello (its tag right, with a key) and this node runs discovery: how
    /// an embedder learns a new neighbour's address from its hellos, with no static map.
    /// Changes nothing and counts nothing; hand the datagram to
    /// [`Driver::handle_datagram`] once the address is mapped.
    pub fn hello_sender(&self, bytes: &[u8]) -> Option<NodeId> {
        self.discovery.as_ref()?;
        #[cfg(feature = "auth")]
        let bytes = self.unwrap_tag(bytes).ok()?;
        if bytes.first() != Some(&discovery::WIRE_VERSION) {
            return None;
        }
        let sender = Hello::decode(bytes).ok()?.sender();
        (sender != self.id).then_some(sender)
    }

    /// A datagram that does not decode: corruption (its check fails) or malformed.
    fn count_undecodable(&mut self, e: crate::codec::DecodeError) {
        if e == crate::codec::DecodeError::Checksum {
            self.stats.dropped_checksum += 1;
        } else {
            self.stats.dropped_malformed += 1;
        }
    }

    fn on_hello(&mut self, now: u64, from: NodeId, bytes: &[u8]) {
        let hello = match Hello::decode(bytes) {
            Ok(hello) => hello,
            Err(e) => return self.count_undecodable(e),
        };
        match &mut self.discovery {
            None => self.stats.dropped_unexpected += 1,
            Some(_) if hello.sender() != from => self.stats.dropped_unknown_peer += 1,
            Some(d) => d.handle_hello(now, &hello),
        }
    }

    fn on_frame(&mut self, now: u64, from: NodeId, bytes: &[u8]) {
        let envelope = match wire::decode::<P::Message>(bytes) {
            Ok(envelope) => envelope,
            Err(e) => return self.count_undecodable(e),
        };
        if envelope.from != from || envelope.to != self.id || !self.core.knows(from) {
            self.stats.dropped_unknown_peer += 1;
            return;
        }
        match (envelope.payload, &mut self.session) {
            (Payload::Session(frame), Some(session)) => {
                session.handle_datagram(Datagram { from, frame }, now);
            }
            (Payload::Message(msg), None) => self.feed(now, Event::Receive { from, msg }),
            _ => self.stats.dropped_unexpected += 1,
        }
    }

    /// Time has come to `now`: discovery's hellos and expiries, the sessions'
    /// retransmissions, keepalives and failures, then the core's timers (in that order, see
    /// the [module docs](self#the-order-of-handling)). Calling it early does no harm.
    ///
    /// One call fires at most as many core timers as were due when it began: a timer the
    /// core arms again while it handles one, for a deadline that is already due (deadlines
    /// saturate at `u64::MAX`, so at `now = u64::MAX` every re-armed timer is due), waits
    /// for the next call ([`Driver::poll_timeout`] says it is due). So the call always
    /// returns, whatever `now` is.
    pub fn handle_timeout(&mut self, now: u64) {
        let now = self.advance(now);
        if let Some(d) = &mut self.discovery {
            if d.poll_timeout() <= now {
                d.handle_timeout(now);
            }
        }
        if let Some(s) = &mut self.session {
            if s.poll_timeout().is_some_and(|at| at <= now) {
                s.handle_timeout(now);
            }
        }
        self.pump(now);
        // Bounded by the timers due at the start: at the end of time a re-armed timer is due
        // at once, and an unbounded loop would fire it for ever.
        let due = self.timers.due(now);
        for _ in 0..due {
            let Some(timer) = self.timers.pop_expired(now) else {
                break;
            };
            self.feed(now, Event::Timeout(timer));
            self.pump(now);
        }
    }

    /// When to call [`Driver::handle_timeout`] next: the earliest of discovery's, the
    /// sessions' and the core's timers (a time in the past means now), or `None` if nothing
    /// is armed.
    pub fn poll_timeout(&self) -> Option<u64> {
        [
            self.discovery.as_ref().map(Discovery::poll_timeout),
            self.session.as_ref().and_then(Session::poll_timeout),
            self.timers.next_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The application asks for the critical section: [`DriverEvent::Entered`] says when it
    /// is in. `Err` as the core refuses it (the driving contract's
    /// [events by state](crate#events-by-state)); nothing changes then.
    pub fn request(&mut self, now: u64, request: CsRequest) -> Result<(), Error> {
        self.local(now, Event::Request(request))
    }

    /// The application leaves the critical section.
    pub fn release(&mut self, now: u64) -> Result<(), Error> {
        self.local(now, Event::Release)
    }

    /// The application withdraws its waiting request.
    pub fn cancel(&mut self, now: u64) -> Result<(), Error> {
        self.local(now, Event::Cancel)
    }

    /// The protected resource refused `fence`, having admitted `newest`
    /// ([`Event::Refused`]).
    pub fn refused(&mut self, now: u64, fence: Fence, newest: Fence) -> Result<(), Error> {
        self.local(now, Event::Refused { fence, newest })
    }

    /// Any other application event for the core: look-ahead's `Doze`, `Wake`, `Disconnect`,
    /// `Reconnect`, a failure detector's `Suspect` and `Trust`. The events the driver makes
    /// itself (`Receive`, `LinkUp`, `LinkDown`, `Timeout`) are refused as
    /// [`Error::Unsupported`]: feeding them from outside would break the link contract.
    pub fn core_event(&mut self, now: u64, event: Event<P::Message>) -> Result<(), Error> {
        match event {
            Event::Receive { .. } | Event::LinkUp(_) | Event::LinkDown(_) | Event::Timeout(_) => {
                Err(Error::Unsupported(event.name()))
            }
            event => self.local(now, event),
        }
    }

    fn local(&mut self, now: u64, event: Event<P::Message>) -> Result<(), Error> {
        let now = self.advance(now);
        let mut out = core::mem::take(&mut self.out);
        let outcome = self.core.handle_in(event, &mut out);
        self.carry_out(now, &mut out);
        self.out = out;
        self.pump(now);
        outcome
    }

    /// The embedder names a neighbour (token algorithms without discovery, or beside it):
    /// the session forms a link to it and keeps it. Permission algorithms need none.
    pub fn connect(&mut self, now: u64, peer: NodeId) -> Result<(), session::SessionError> {
        let now = self.advance(now);
        if let Some(s) = &mut self.session {
            s.connect(peer, now)?;
        }
        self.pump(now);
        Ok(())
    }

    /// The embedder no longer wants the link to `peer`: the session closes it (nothing lost).
    pub fn close(&mut self, now: u64, peer: NodeId) {
        let now = self.advance(now);
        if let Some(s) = &mut self.session {
            s.close(peer, now);
        }
        self.pump(now);
    }

    /// The next datagram to send: discovery's hello first, then the sessions' frames, then
    /// the core's direct messages.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        #[allow(unused_mut)]
        let mut transmit = self.next_transmit()?;
        #[cfg(feature = "auth")]
        if let Some(key) = &self.key {
            let tag = key.tag(&transmit.bytes);
            transmit.bytes.extend_from_slice(&tag);
        }
        self.stats.datagrams_out += 1;
        Some(transmit)
    }

    fn next_transmit(&mut self) -> Option<Transmit> {
        if let Some(hello) = self.discovery.as_mut().and_then(Discovery::poll_transmit) {
            let mut buf = [0; MAX_HELLO_FRAME];
            let bytes = hello.encode_into(&mut buf).to_vec();
            return Some(Transmit {
                to: Destination::Broadcast,
                bytes,
            });
        }
        let (to, payload) = match self.session.as_mut().and_then(Session::poll_transmit) {
            Some(t) => (t.to, Payload::Session(t.frame)),
            None => {
                let (to, msg) = self.direct.pop_front()?;
                (to, Payload::Message(msg))
            }
        };
        let envelope = Envelope {
            from: self.id,
            to,
            payload,
        };
        Some(Transmit {
            to: Destination::Peer(to),
            bytes: wire::encode(&envelope),
        })
    }

    /// The next event for the application, in the order they arose.
    pub fn poll_event(&mut self) -> Option<DriverEvent> {
        self.events.pop_front()
    }

    fn emit(&mut self, event: DriverEvent) {
        if !event.is_vital() && self.events.len() >= self.max_queued {
            self.stats.events_dropped += 1;
            return;
        }
        self.events.push_back(event);
    }

    /// Step 2 of the [order](self#the-order-of-handling): discovery's events to the session,
    /// the session's to the core, one at a time, until neither has one.
    fn pump(&mut self, now: u64) {
        loop {
            let mut quiet = true;
            while let Some(event) = self.discovery.as_mut().and_then(Discovery::poll_event) {
                quiet = false;
                if let Some(s) = &mut self.session {
                    if event.apply(s, now).is_err() {
                        self.stats.core_errors += 1;
                    }
                }
                self.emit(match event {
                    DiscoveryEvent::NeighbourUp(p) => DriverEvent::NeighbourUp(p),
                    DiscoveryEvent::NeighbourDown(p) => DriverEvent::NeighbourDown(p),
                });
            }
            while let Some(event) = self.session.as_mut().and_then(Session::poll_event) {
                quiet = false;
                match event {
                    SessionEvent::Core(event) => {
                        match event {
                            Event::LinkUp(p) => self.emit(DriverEvent::LinkUp(p)),
                            Event::LinkDown(p) => self.emit(DriverEvent::LinkDown(p)),
                            _ => {}
                        }
                        self.feed(now, event);
                    }
                    SessionEvent::Lost {
                        peer,
                        msgs,
                        precious,
                    } => self.emit(DriverEvent::Lost {
                        peer,
                        messages: msgs.len(),
                        precious,
                    }),
                }
            }
            if quiet {
                return;
            }
        }
    }

    /// Feed an event the driver made (a message, a link event, a timeout) to the core and
    /// carry out its actions.
    fn feed(&mut self, now: u64, event: Event<P::Message>) {
        let mut out = core::mem::take(&mut self.out);
        if self.core.handle_in(event, &mut out).is_err() {
            self.stats.core_errors += 1;
        }
        self.carry_out(now, &mut out);
        self.out = out;
    }

    /// One core message to `to`: over its link session, or queued as a direct datagram.
    fn send(&mut self, now: u64, to: NodeId, msg: P::Message) {
        match &mut self.session {
            Some(s) => {
                if s.send(to, msg, now).is_err() {
                    self.stats.core_errors += 1;
                }
            }
            None => {
                if self.direct.len() >= self.max_queued {
                    self.direct.pop_front();
                    self.stats.transmits_dropped += 1;
                }
                self.direct.push_back((to, msg));
            }
        }
    }

    fn carry_out(&mut self, now: u64, out: &mut Vec<Action<P::Message>>) {
        for action in out.drain(..) {
            if self.timers.apply(&action, now) {
                continue;
            }
            match action {
                Action::Send { to, msg } => {
                    self.stats.messages_sent += 1;
                    self.send(now, to, msg);
                }
                Action::EnterCritical { resources, fence } => {
                    self.emit(DriverEvent::Entered { resources, fence })
                }
                Action::LeaseExpired { fence } => self.emit(DriverEvent::LeaseExpired { fence }),
                Action::Persist { promised } => self.emit(DriverEvent::Persist { promised }),
                Action::Report(report) => self.emit(DriverEvent::Report(report)),
                Action::Anomaly { from, kind } => match P::anomaly_severity(kind) {
                    Severity::Noise => self.stats.noise += 1,
                    severity => {
                        self.stats.suspect += 1;
                        self.emit(DriverEvent::Anomaly {
                            from,
                            kind,
                            severity,
                        });
                    }
                },
                // Timer actions are taken above; any later kind is informational.
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{reverse_link, ricart_agrawala};

    fn krl(id: u32, config: Config) -> Driver<reverse_link::Node> {
        let configs =
            reverse_link::network(2, &[], &[NodeId(0)], reverse_link::Settings::new(1)).unwrap();
        let node = reverse_link::Node::new(configs[id as usize].clone()).unwrap();
        Driver::new(node, config, 0).unwrap()
    }

    /// Move every datagram between two drivers at `now` until quiet; the events each
    /// handed out, in order.
    fn pump(pair: &mut [Driver<reverse_link::Node>; 2], now: u64) -> [Vec<DriverEvent>; 2] {
        let mut seen = [Vec::new(), Vec::new()];
        loop {
            let mut quiet = true;
            for i in 0..2 {
                while let Some(event) = pair[i].poll_event() {
                    seen[i].push(event);
                }
                while let Some(t) = pair[i].poll_transmit() {
                    quiet = false;
                    let from = pair[i].id();
                    pair[1 - i].handle_datagram(now, from, &t.bytes);
                }
            }
            if quiet {
                return seen;
            }
        }
    }

    #[test]
    fn poll_timeout_is_the_earliest_of_discovery_the_session_and_the_core() {
        let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(2, 20)).unwrap();
        let node = ricart_agrawala::Node::new(configs[0]).unwrap();
        let mut d = Driver::new(node, Config::DEFAULT, 100).unwrap();
        assert_eq!(d.poll_timeout(), None);
        d.request(100, CsRequest::ONE).unwrap();
        assert_eq!(
            d.poll_timeout(),
            Some(120),
            "the core's retransmission timer"
        );

        let mut k = krl(0, Config::DEFAULT);
        assert_eq!(
            k.poll_timeout(),
            None,
            "no link, no discovery, no core timer"
        );
        k.connect(0, NodeId(1)).unwrap();
        let session = k.session().unwrap().poll_timeout();
        assert!(session.is_some());
        assert_eq!(k.poll_timeout(), session);

        let hellos = discovery::Settings::new(1000);
        let with = krl(0, Config::DEFAULT.with_discovery(hellos));
        assert_eq!(
            with.poll_timeout(),
            Some(with.discovery().unwrap().poll_timeout())
        );
    }

    /// The session's `LinkUp` reaches the core (and the application) before anything that
    /// depends on it; a request far from the token is served over the link; a close hands
    /// the core its `LinkDown` with nothing in flight, at both ends, and nothing is lost.
    #[test]
    fn link_events_reach_the_core_in_the_session_order() {
        let mut pair = [krl(0, Config::DEFAULT), krl(1, Config::DEFAULT)];
        pair[1].connect(0, NodeId(0)).unwrap();
        let seen = pump(&mut pair, 0);
        assert_eq!(seen[0], [DriverEvent::LinkUp(NodeId(1))]);
        assert_eq!(seen[1], [DriverEvent::LinkUp(NodeId(0))]);
        pair[1].request(1, CsRequest::ONE).unwrap();
        let seen = pump(&mut pair, 1);
        assert!(matches!(
            seen[1][..],
            [DriverEvent::Entered { resources: 1, .. }]
        ));
        pair[1].release(2).unwrap();
        pair[1].close(3, NodeId(0));
        let seen = pump(&mut pair, 3);
        assert_eq!(seen[0], [DriverEvent::LinkDown(NodeId(1))]);
        assert_eq!(seen[1], [DriverEvent::LinkDown(NodeId(0))]);
        for d in &pair {
            assert_eq!(d.session_stats().unwrap().lost, 0);
            assert_eq!(d.stats().core_errors, 0);
        }
    }

    /// At the end of time every re-armed timer is due at once (deadlines saturate at
    /// `u64::MAX`): `handle_timeout(u64::MAX)` still returns while a request waits, and so
    /// do times that go back and jump (issue 39), for a permission and a token algorithm
    /// (the C interface's tests take all four).
    #[test]
    fn handle_timeout_returns_at_the_end_of_time() {
        let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(3, 20)).unwrap();
        let node = ricart_agrawala::Node::new(configs[0]).unwrap();
        let mut d = Driver::new(node, Config::DEFAULT, 0).unwrap();
        d.request(0, CsRequest::ONE).unwrap();
        for now in [u64::MAX, u64::MAX, 0, 5, u64::MAX - 1, u64::MAX] {
            d.handle_timeout(now);
            while d.poll_event().is_some() {}
            while d.poll_transmit().is_some() {}
        }
        assert_eq!(d.poll_timeout(), Some(u64::MAX), "re-armed, due at once");
        assert!(d.core().waits_on(NodeId(1)) && d.core().waits_on(NodeId(2)));
        assert!(!d.core().waits_on(NodeId(0)));

        let mut k = krl(
            0,
            Config::DEFAULT.with_discovery(discovery::Settings::new(100)),
        );
        for now in [u64::MAX, 0, u64::MAX] {
            k.handle_timeout(now);
            while k.poll_event().is_some() {}
            while k.poll_transmit().is_some() {}
        }
    }
}

/// Why a datagram's authentication tag did not unwrap.
#[cfg(feature = "auth")]
#[derive(Debug, Clone, Copy)]
enum Untagged {
    /// Too short to hold a frame and a tag.
    Malformed,
    /// The frame's own check failed: corruption.
    Checksum,
    /// The tag is wrong: forgery (or another key).
    Forged,
}
