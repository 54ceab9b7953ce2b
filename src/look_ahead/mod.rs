//! Look-ahead permission-based mutual exclusion for MANETs (Wu, Cao and Yang, the
//! `002_…` paper), with timeouts, doze mode and voluntary or accidental disconnection.
//!
//! Each host keeps `Info_set` (the hosts it must ask before entering) and `Status_set` (the
//! hosts that will ask it), so mutual exclusion is only enforced among hosts that actually
//! compete. Requests are ordered by Lamport timestamps (ties by id); REPLYs for requests of
//! higher priority are given at once, others are deferred in `Q_req` until the critical section
//! is left. Every REQUEST has its own retransmission timer, so lost messages are recovered.
//!
//! The module follows the crate's common shape: [`Settings::new`]`(hosts, retransmit_after)`
//! (with [`Settings::with_seed`] for the initial sets, and [`Settings::with_lease`],
//! [`Settings::with_exclusion`], [`Settings::with_majority`] and
//! [`Settings::exclusion_safe`] for failures), [`Config::new`] (with
//! [`Config::with_info_set`] for explicit sets and [`Config::with_incarnation`] for a restarted
//! host), [`network`]`(settings)`, [`Node::new`], [`Message`] and [`invariants`]. Beyond
//! `id()`, `status()` and [`Node::settings`], a node reports its [`Mode`] ([`Node::mode`]), its
//! sets ([`Node::info_set`], [`Node::status_set`], [`Node::relation`]), its open request
//! ([`Node::timestamp`]), the REPLYs it awaits ([`Node::outstanding`]) and those it defers
//! ([`Node::deferred`]), and for failures [`Node::excluded`], [`Node::is_excluded`],
//! [`Node::probed`], [`Node::incarnation`], [`Node::peer_incarnation`] and
//! [`Node::has_quorum`].
//!
//! # Driving contract
//! The crate's [driving contract](crate#driving-contract) applies; in short:
//! - Messages may be delayed, duplicated or reordered arbitrarily and may be lost, provided a
//!   message retransmitted often enough eventually gets through (transient failures). Any
//!   field may be corrupted: REQUESTs, REPLYs and announcements carry a check word and a
//!   corrupted copy counts as lost (see the crate's threat model).
//! - Carry out `SetTimer` / `CancelTimer`: every `SetTimer` is one REQUEST's retransmission
//!   timer, with `after` = [`Settings::retransmit_after`] in
//!   [the embedder's time unit](crate#timers). On a current
//!   [`Event::Timeout`](crate::Event::Timeout) the node resends that REQUEST and arms a fresh
//!   timer; a timeout of a timer cancelled or re-armed since does nothing.
//! - Feed [`Event::Doze`](crate::Event::Doze), [`Wake`](crate::Event::Wake),
//!   [`Disconnect`](crate::Event::Disconnect) and [`Reconnect`](crate::Event::Reconnect) when
//!   the host changes [`Mode`]:
//!
//!   | event | in `Normal` | in `Dozing` | in `Disconnected` |
//!   | --- | --- | --- | --- |
//!   | `Request` | yes | no | no |
//!   | `Doze` | in the remainder section; → `Dozing` | no | no |
//!   | `Wake` | no | → `Normal` | no |
//!   | `Disconnect` | in the remainder section; → `Disconnected` | no | no |
//!   | `Reconnect` | in any section: an unannounced outage ended | no | → `Normal` |
//!
//!   "No" is [`Error::WrongMode`](crate::Error::WrongMode), and so is `Doze` or `Disconnect`
//!   while waiting for or inside the critical section. `Receive` and `Timeout` are accepted
//!   in every mode (a dozing host answers the REQUESTs that reach it); `LinkUp` and `LinkDown`
//!   are [`Error::Unsupported`](crate::Error::Unsupported).
//! - `Reconnect` while waiting asks again under a new epoch (REPLYs to older copies no longer
//!   count); inside the critical section it is announced on `Release`.
//! - `Cancel` while waiting withdraws the request: its timers are cancelled and every deferred
//!   request is answered, as on `Release` (a reconnection announced on `Release` is announced
//!   then too); the sets move only as those REPLYs move them, and REPLYs to the withdrawn
//!   request grant nothing.
//! - Failures (`docs/ALGORITHMS.md`, C1–C10; the guarantees: the crate's
//!   [failure model](crate#failure-model)), in every mode and section. `Suspect(peer)`
//!   excludes `peer` as if it had sent a DISCONNECT the host applied: into `Status_set`, its
//!   wait ended, not asked (its copy of this host's announcements says `absent`), its deferred
//!   request dropped; the host enters if it waits for nothing else. `Trust(peer)`, or any
//!   valid message from it, readmits it as a RECONNECT that is not applied would: into
//!   `Info_set`, and a waiting host without its REPLY for the current request asks it at once.
//!   Both are reported (`Report::PeerExcluded`, `Report::PeerReadmitted`); naming the host
//!   itself or no host is [`Error::NotAPeer`](crate::Error::NotAPeer). With
//!   [`Settings::with_exclusion`]`(m)` a peer waited for that stayed silent through `m`
//!   retransmission timeouts, and was sent no REPLY for as long, is excluded as if suspected,
//!   and excluded peers are probed while waiting. With [`Settings::with_lease`] every entry
//!   ends with `LeaseExpired { fence }` unless released first, and a grant a lease old is
//!   asked for again under a new number. [`Settings::with_majority`] asks every peer not
//!   excluded and enters only with the grants of a strict majority; a DISCONNECT then excludes
//!   its sender, and a DOZE no longer ends the wait for the dozer; with exclusion by timeout
//!   too, a deferred REQUEST is answered with a deferral notice (a REPLY numbered 0, which
//!   grants nothing) unless the host is inside past its lease, and a peer heard again after a
//!   silence makes the host count every peer's silence afresh and readmit every excluded peer
//!   not away (C9); a host whose DISCONNECT it applied is probed while it waits, and its
//!   grant of a number issued after that DISCONNECT readmits it (C10: its RECONNECT may have
//!   been lost, and without its grant there may be no majority). A host restarted with empty
//!   state must be built with a larger [`Config::with_incarnation`]: it asks everyone, numbers
//!   its requests above its old ones, seals its announcements with its incarnation (a peer
//!   that has not yet seen one of its REQUESTs drops them, like corrupted ones), and applies
//!   no DOZE or RECONNECT of a peer that has not yet answered one of its requests.
//!
//! # Liveness with hosts away
//! No host waits for one that disconnected voluntarily: receivers of its DISCONNECT count it as
//! absent and stop asking it until they hear from it again. Two exceptions, which no protocol
//! can avoid (`docs/ALGORITHMS.md`, V4): a DISCONNECT that is lost (announcements are not
//! retransmitted, so deliver them reliably if hosts may stay away for long), and two absences
//! that overlap (a host leaves while it counts another as away, or concurrently with the
//! other's DISCONNECT), after which one of the two asks the other when it is back and waits
//! for its return. Every request is served once the hosts that left are back.
//!
//! # Example: an embedder with a clock
//! Three hosts. Host 0 dozes, so hosts 1 and 2 compete without asking it; the first REQUEST
//! on the wire is lost, and its retransmission timer recovers it. Then host 0 wakes and takes
//! its turn. Delivery takes no time here; the clock moves only to fire timers, which each
//! host's [`Timers`](crate::timers::Timers) table keeps.
//!
//! ```
//! use std::collections::VecDeque;
//! use manet_mutex::look_ahead::{network, Message, Mode, Node, Relation, Settings};
//! use manet_mutex::timers::Timers;
//! use manet_mutex::{Action, CsRequest, Error, Event, NodeId, Protocol, Status, TimerId};
//!
//! const RETRANSMIT: u64 = 10; // in the embedder's time unit: ticks of `World::now`
//!
//! struct World {
//!     nodes: Vec<Node>,
//!     now: u64,
//!     timers: Vec<Timers>, // each host's armed timers
//!     events: VecDeque<(NodeId, Event<Message>)>, // deliveries and application events
//!     entered: Vec<u32>,
//!     lose_next_request: bool,
//! }
//!
//! impl World {
//!     /// Feed one event to host `at` and carry out its actions in order.
//!     fn feed(&mut self, at: NodeId, event: Event<Message>) -> Result<(), Error> {
//!         for action in self.nodes[at.index()].handle(event)? {
//!             if self.timers[at.index()].apply(&action, self.now) {
//!                 continue; // SetTimer or CancelTimer, recorded
//!             }
//!             match action {
//!                 Action::Send { msg: Message::Request { .. }, .. } if self.lose_next_request => {
//!                     self.lose_next_request = false; // lost on the way
//!                 }
//!                 Action::Send { to, msg } => {
//!                     self.events.push_back((to, Event::Receive { from: at, msg }));
//!                 }
//!                 Action::EnterCritical { .. } => {
//!                     self.entered[at.index()] += 1;
//!                     self.events.push_back((at, Event::Release)); // a short critical section
//!                 }
//!                 _ => {} // Action::Anomaly: log or count it
//!             }
//!         }
//!         Ok(())
//!     }
//!
//!     /// Deliver everything pending, then fire the earliest timer (of the earliest host on a
//!     /// tie); until nothing is left.
//!     fn run(&mut self) -> Result<(), Error> {
//!         loop {
//!             while let Some((at, event)) = self.events.pop_front() {
//!                 self.feed(at, event)?;
//!             }
//!             let next = self.timers.iter().zip(0..).filter_map(|(timers, host)| {
//!                 Some((timers.next_deadline()?, NodeId(host)))
//!             });
//!             let Some((deadline, at)) = next.min() else {
//!                 return Ok(());
//!             };
//!             self.now = deadline;
//!             if let Some(timer) = self.timers[at.index()].pop_expired(self.now) {
//!                 self.feed(at, Event::Timeout(timer))?;
//!             }
//!         }
//!     }
//! }
//!
//! let nodes = network(Settings::new(3, RETRANSMIT))?
//!     .into_iter()
//!     .map(Node::new)
//!     .collect::<Result<Vec<_>, _>>()?;
//! let mut w = World {
//!     nodes,
//!     now: 0,
//!     timers: vec![Timers::new(); 3],
//!     events: VecDeque::new(),
//!     entered: vec![0; 3],
//!     lose_next_request: true,
//! };
//!
//! // Host 0 dozes: its DOZE tells the others not to ask it, and it may not request.
//! w.feed(NodeId(0), Event::Doze)?;
//! w.run()?;
//! assert_eq!(w.nodes[0].mode(), Mode::Dozing);
//! assert_eq!(w.nodes[1].relation(NodeId(0)), Some(Relation::Status));
//! let refused = w.nodes[0].handle(Event::Request(CsRequest::ONE)).err();
//! assert!(matches!(refused, Some(Error::WrongMode { .. })));
//!
//! // Hosts 1 and 2 compete; the REQUEST between them is lost and resent on its timeout.
//! w.feed(NodeId(1), Event::Request(CsRequest::ONE))?;
//! w.feed(NodeId(2), Event::Request(CsRequest::ONE))?;
//! w.run()?;
//! assert!(!w.lose_next_request);
//! assert_eq!(w.now, RETRANSMIT);
//! assert_eq!(w.entered, [0, 1, 1]);
//!
//! // Host 0 wakes; since its DOZE it asks everyone before entering.
//! w.feed(NodeId(0), Event::Wake)?;
//! w.feed(NodeId(0), Event::Request(CsRequest::ONE))?;
//! w.run()?;
//! assert_eq!(w.entered, [1, 1, 1]);
//! assert!(w.nodes.iter().all(|n| n.status() == Status::Remainder));
//! assert!(w.timers.iter().all(Timers::is_empty));
//!
//! // A timeout that is no longer current (host 0's first timer, cancelled by a REPLY) does
//! // nothing.
//! assert_eq!(w.nodes[0].handle(Event::Timeout(TimerId(1)))?.len(), 0);
//! # Ok::<(), Error>(())
//! ```
//!
//! See `docs/ALGORITHMS.md` for every interpretation of the paper this module makes.

mod config;
pub mod invariants;
mod message;
mod modes;
mod node;
mod sets;

pub use config::{network, Config, Settings};
pub use message::{Announcement, Message};
pub use node::{Mode, Node};
pub use sets::{initial_info_set, initial_sets, Relation, Sets};
