//! The Ricart–Agrawala algorithm: the textbook permission-based baseline.
//!
//! A requester asks every other host and enters when all have replied: 2(n − 1) messages per
//! critical-section entry without loss. Requests are ordered by Lamport timestamps (ties by id);
//! a host defers its REPLY while it is in the critical section or has an older request. Like
//! `look_ahead` (whose ordering, deferral and timers it shares through [`crate::permission`]),
//! it retransmits a REQUEST whose REPLY is late, so it survives transient message loss and
//! any delivery order. REQUESTs and REPLYs carry a check word (a corrupted copy counts as lost)
//! and every request has its host's own number, so a corrupted or late REPLY never grants the
//! wrong one.
//!
//! # API
//! [`Settings::new`]`(hosts, retransmit_after)`, with [`Settings::with_lease`],
//! [`Settings::with_exclusion`] and [`Settings::with_majority`] for failures (all off by
//! default, as in the paper; [`Settings::exclusion_safe`] checks the timing bound),
//! [`Config::new`]`(id, settings)` with [`Config::with_incarnation`] for a restarted host,
//! [`network`]`(settings)` for hosts `0..hosts`, [`Node::new`], [`Message`] and [`invariants`].
//! Besides `id()`, `status()` and [`Node::settings`], a node reports [`Node::timestamp`],
//! [`Node::clock`], [`Node::outstanding`], [`Node::deferred`], and for failures
//! [`Node::excluded`], [`Node::is_excluded`], [`Node::probed`], [`Node::incarnation`],
//! [`Node::peer_incarnation`] and [`Node::has_quorum`].
//!
//! # Example: a lost REQUEST and its timer
//! Three hosts; hosts 0 and 1 ask at once, and host 0's first REQUEST to host 2 is lost. Host
//! 1's request is younger, so host 0 enters first once its retransmission timer has recovered
//! the lost one; host 1 follows when host 0 leaves. Delivery takes no time here; the clock
//! moves only to fire timers, which each host's [`Timers`](crate::timers::Timers) table keeps.
//!
//! ```
//! use std::collections::VecDeque;
//! use manet_mutex::ricart_agrawala::{network, Message, Node, Settings};
//! use manet_mutex::timers::Timers;
//! use manet_mutex::{Action, CsRequest, Error, Event, Fence, NodeId, Protocol};
//!
//! let mut nodes: Vec<Node> = network(Settings::new(3, 10))? // retransmit after 10 ticks
//!     .into_iter()
//!     .map(Node::new)
//!     .collect::<Result<_, _>>()?;
//! let mut timers = vec![Timers::default(); 3];
//! let mut now = 0;
//! let mut events = VecDeque::from([
//!     (NodeId(0), Event::Request(CsRequest::ONE)),
//!     (NodeId(1), Event::Request(CsRequest::ONE)),
//! ]);
//! let mut lose = Some((NodeId(0), NodeId(2))); // the first REQUEST from 0 to 2
//! let mut entered: Vec<(NodeId, Fence, u64)> = Vec::new();
//! loop {
//!     while let Some((at, event)) = events.pop_front() {
//!         for action in nodes[at.index()].handle(event)? {
//!             if timers[at.index()].apply(&action, now) {
//!                 continue; // SetTimer or CancelTimer, recorded
//!             }
//!             match action {
//!                 Action::Send { to, .. } if lose == Some((at, to)) => lose = None,
//!                 Action::Send { to, msg } => {
//!                     events.push_back((to, Event::Receive { from: at, msg }))
//!                 }
//!                 Action::EnterCritical { fence, .. } => {
//!                     entered.push((at, fence, now));
//!                     events.push_back((at, Event::Release)); // a short critical section
//!                 }
//!                 _ => {} // Action::Anomaly (a late or duplicate REPLY): log or count it
//!             }
//!         }
//!     }
//!     // Nothing in flight: fire the earliest timer, if any is armed.
//!     let next = (0..3).filter_map(|h| Some((timers[h].next_deadline()?, h))).min();
//!     let Some((deadline, host)) = next else { break };
//!     now = deadline;
//!     if let Some(timer) = timers[host].pop_expired(now) {
//!         events.push_back((NodeId(host as u32), Event::Timeout(timer)));
//!     }
//! }
//! let order: Vec<_> = entered.iter().map(|(host, _, _)| host.0).collect();
//! assert_eq!(order, [0, 1]);
//! assert_eq!(entered[0].2, 10, "host 0 entered when its timer had resent the lost REQUEST");
//! assert!(entered[0].1 < entered[1].1, "fences go up");
//! # Ok::<(), Error>(())
//! ```
//!
//! # Driving contract
//! - Any delivery order; messages may be lost, duplicated or delayed, as long as a REQUEST
//!   retransmitted often enough gets through (see the crate's threat model for corruption).
//! - Events: `Request` (one resource; `priority` is ignored), `Release`, `Cancel` (a waiting
//!   host withdraws: its timers are cancelled and every deferred request answered, as on
//!   release; REPLYs to the withdrawn request grant nothing), `Receive`, `Timeout`, and a
//!   failure detector's `Suspect(peer)` and `Trust(peer)` (below); link and mode events are
//!   [`Error::Unsupported`](crate::Error::Unsupported).
//! - Failures (`docs/ALGORITHMS.md`, C1–C9; the guarantees: the crate's
//!   [failure model](crate#failure-model)). `Suspect(peer)` excludes `peer`: the node stops
//!   waiting for it (its timer is cancelled), does not count it, asks it nothing and may enter
//!   without it; it still answers its REQUESTs. `Trust(peer)`, or any valid message from it,
//!   readmits it, and a waiting node without its REPLY for the current request asks it at once
//!   and waits for it. Each is reported (`Report::PeerExcluded`, `Report::PeerReadmitted`).
//!   `Suspect` or `Trust` naming the node itself or no host is
//!   [`Error::NotAPeer`](crate::Error::NotAPeer); suspecting an excluded peer, or trusting a
//!   counted one, does nothing. With [`Settings::with_exclusion`]`(m)` a peer waited for that
//!   stayed silent through `m` consecutive retransmission timeouts, and was sent no REPLY for
//!   as long, is excluded as if suspected, and a waiting node probes the peers it excludes
//!   (a REQUEST every `retransmit_after`, whose answer readmits them). With
//!   [`Settings::with_lease`]`(after)` every entry sets a lease timer and emits
//!   `LeaseExpired { fence }` if it fires inside; a node still waiting a lease after
//!   (re)numbering its request asks everyone again under a new number. With
//!   [`Settings::with_majority`] it enters only with the grants of a strict majority of the
//!   hosts, itself included; with exclusion by timeout too, a host that defers a REQUEST
//!   answers it with a deferral notice (a REPLY numbered 0, which grants nothing) unless it is
//!   inside past its lease, and a peer heard again after a silence (excluded, or a timeout
//!   missed) makes the node count every peer's silence afresh and readmit every excluded
//!   peer (C9). A host restarted with empty state must be built with a larger
//!   [`Config::with_incarnation`]: its request numbers start above its old ones, its peers
//!   refuse its old incarnation's REQUESTs once they see the new one, and ask it again.
//! - Each REQUEST awaiting its REPLY has a timer: `SetTimer` with `after` =
//!   [`Settings::retransmit_after`], in [the embedder's time unit](crate#timers), and a fresh
//!   [`TimerId`](crate::TimerId); a REPLY cancels it (`CancelTimer`). On a current `Timeout`
//!   the node resends the REQUEST and sets a new timer; any other `Timeout` does nothing.
//! - It emits `Send` (to any host), `EnterCritical { resources: 1, fence }` (lane 0,
//!   above the fence of every section that ended before; see [`crate::fence`]), `SetTimer`,
//!   `CancelTimer`, `LeaseExpired`, `Report` and `Anomaly`.
//!
//! The crate's [driving contract](crate#driving-contract) has the errors per state; the
//! [look-ahead example](crate::look_ahead#example-an-embedder-with-a-clock) shows an embedder
//! that carries out timers (the same loop drives this module's nodes).

mod config;
pub mod invariants;
mod message;
mod node;

pub use config::{network, Config, Settings};
pub use message::Message;
pub use node::Node;
