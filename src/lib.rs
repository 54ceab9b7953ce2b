//! # manet-mutex
//!
//! Sans-IO distributed mutual exclusion for mobile ad hoc networks (MANETs) and message-passing
//! systems. Each algorithm is a pure [`Protocol`] node: feed it [`Event`]s, carry out the
//! [`Action`]s it returns. Nodes do no I/O, read no clock, start no thread and use no global
//! randomness, so any runtime or transport can embed them.
//!
//! | module | algorithm |
//! | --- | --- |
//! | [`reverse_link`] | RL (k = 1), KRL (k tokens) and KRLF (token forwarding): Walter, Cao, Mohanty (2001) |
//! | [`prioritized`] | prioritized h-out-of-k resource allocation, with the maximum-concurrency mode: Jiang |
//! | [`look_ahead`] | look-ahead permission-based mutual exclusion with doze and disconnection: Wu, Cao, Yang (2005) |
//! | [`ricart_agrawala`] | the Ricart–Agrawala baseline (1981) |
//!
//! Shared building blocks: [`token`] (height triples, partial reversal, the token algorithms'
//! neighbour table and link handshake), [`queue`] (request queues),
//! [`permission`] (timestamps, deferral and retransmission for the permission algorithms),
//! [`seal`] (check words), and, with the default `std` feature, [`sim`], the deterministic
//! simulator.
//!
//! ## Driving contract
//!
//! - Call [`Protocol::handle`] with one event at a time and carry out the returned actions in
//!   order before the next event. `handle` never blocks and never panics.
//! - **Token algorithms** ([`reverse_link`], [`prioritized`]) need reliable FIFO links between
//!   neighbours. Each end of a link may learn of its formation and failure at its own time
//!   ([`Event::LinkUp`], [`Event::LinkDown`]); the first message over a new link may arrive
//!   before the receiver's own `LinkUp`, and a message sent before the sender learned of a
//!   failure may arrive after the receiver's `LinkDown` (it is then reported and dropped, or,
//!   for a token, kept). Two things remain the papers' assumptions: a link fails only when
//!   nothing is in flight on it (incipient failures are detected and in-flight messages
//!   delivered first), and messages of one incarnation of a link never arrive in the next.
//!   A `LinkUp` for a link that is already up is a keepalive; link layers that confirm live
//!   links periodically should report it (it repairs what a corrupted message left wrong).
//! - **Permission algorithms** ([`look_ahead`], [`ricart_agrawala`]) need nothing from the
//!   network but eventual delivery of a message retransmitted often enough: messages may be
//!   lost, duplicated, delayed and reordered. Carry out `SetTimer` / `CancelTimer`.
//! - Local misuse (releasing outside the critical section, requesting twice, a bad
//!   configuration) returns an [`Error`] and leaves the node unchanged. Bad input from a peer
//!   is ignored and reported as [`Action::Anomaly`]; it never corrupts the node.
//! - Steady-state `handle` does not allocate: actions are drained from a buffer the node
//!   keeps.
//!
//! ## Threat model
//!
//! Any field of a peer's message may hold any value (corrupted on the way, replayed,
//! duplicated, delayed within the contract above). Safety of correct nodes never depends on a
//! field being well formed, and a node never panics on one:
//! - impossible values (out of range, naming the wrong node, more than `k`) are reported as
//!   [`Anomaly::OutOfRange`] and not acted on; what cannot be dropped without loss (a token,
//!   released resources) is kept with the impossible part ignored;
//! - where a wrong but possible value would cost safety or liveness, the message carries a
//!   check word ([`seal`]: permission REQUESTs and announcements, every height of the token
//!   algorithms) or a second copy (the prioritized resource counts), or a message that must
//!   not grant differs from one that does in two fields (permission REPLYs): a corrupted
//!   field then reads as a lost message or an impossible value;
//! - peer counters are bounded with headroom: clocks and epochs merge at most
//!   [`permission::SKEW_LIMIT`] ahead, heights stay within `±`[`token::Height::LIMIT`],
//!   priorities below [`queue::Priority::LEVEL_LIMIT`], and requests are numbered by their
//!   host, so no single message can make two requests alike, mute a peer, pin a queue or move
//!   a node's height far from its neighbours'.
//!
//! What no protocol can recover is reported, never papered over: a corrupted resource count
//! of the prioritized algorithm loses the difference (the smaller copy is kept: capacity
//! drops below `k`, with an `OutOfRange` report; the token is never duplicated), and a lost or
//! corrupted look-ahead DISCONNECT leaves its receivers waiting for the host that left until it
//! returns. After a corruption, a node may need its neighbour's next keepalive to progress. A
//! consistent rewrite of several fields (check word included) is a forgery, which only
//! authentication can tell. Every rule, per field, with the tests that pin it:
//! `docs/ALGORITHMS.md`, "Threat model".
//!
//! ## Example
//!
//! Three KRL nodes on a line with one token at node 0; node 2 asks for the critical section.
//!
//! ```
//! use std::collections::VecDeque;
//! use manet_mutex::reverse_link::{network, Node, Settings};
//! use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol, Status};
//!
//! let edges = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
//! let mut nodes: Vec<Node> = network(3, &edges, &[NodeId(0)], Settings::new(1))?
//!     .into_iter()
//!     .map(Node::new)
//!     .collect::<Result<_, _>>()?;
//! let mut wire = VecDeque::new();
//! let mut next = Some((NodeId(2), Event::Request(CsRequest::ONE)));
//! while let Some((at, event)) = next.take().or_else(|| {
//!     wire.pop_front().map(|(from, to, msg)| (to, Event::Receive { from, msg }))
//! }) {
//!     for action in nodes[at.index()].handle(event)? {
//!         if let Action::Send { to, msg } = action {
//!             wire.push_back((at, to, msg));
//!         }
//!     }
//! }
//! assert_eq!(nodes[2].status(), Status::Critical);
//! # Ok::<(), manet_mutex::Error>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

mod error;
mod event;
pub mod look_ahead;
mod node;
mod peer_map;
pub mod permission;
pub mod prioritized;
pub mod queue;
pub mod reverse_link;
pub mod ricart_agrawala;
pub mod seal;
#[cfg(feature = "std")]
pub mod sim;
pub mod token;

pub use error::Error;
pub use event::{Action, Anomaly, CsRequest, Event, TimerId};
pub use node::{Actions, NodeId, Protocol, Status};
