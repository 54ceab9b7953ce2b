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
//!
//! Shared building blocks: [`height`] (height triples, partial reversal), [`neighbors`] (the
//! token algorithms' neighbour table and LinkInfo handshake), [`queue`] (request queues), and,
//! with the default `std` feature, [`sim`], the deterministic simulator.
//!
//! ## Driving contract
//!
//! - Call [`Protocol::handle`] with one event at a time and carry out the returned actions in
//!   order before the next event. `handle` never blocks and never panics.
//! - **Token algorithms** ([`reverse_link`]) need reliable FIFO links between neighbours. The
//!   link layer reports [`Event::LinkUp`] and [`Event::LinkDown`] at both ends, and reports a
//!   failure only when nothing is in flight on the link (the papers' assumption: incipient
//!   failures are detected and in-flight messages delivered first).
//! - Local misuse (releasing outside the critical section, requesting twice, a bad
//!   configuration) returns an [`Error`] and leaves the node unchanged. Bad input from a peer
//!   is ignored and reported as [`Action::Anomaly`]; it never corrupts the node.
//! - Steady-state `handle` does not allocate: actions are drained from a buffer the node
//!   keeps.
//!
//! ## Example
//!
//! Three KRL nodes on a line with one token at node 0; node 2 asks for the critical section.
//!
//! ```
//! use std::collections::VecDeque;
//! use manet_mutex::reverse_link::{build, Node};
//! use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol, Status};
//!
//! let edges = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
//! let mut nodes: Vec<Node> = build(3, &edges, &[NodeId(0)], false)?
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
pub mod height;
pub mod look_ahead;
pub mod neighbors;
mod node;
pub mod permission;
pub mod prioritized;
pub mod queue;
pub mod reverse_link;
pub mod ricart_agrawala;
pub mod seal;
#[cfg(feature = "std")]
pub mod sim;

pub use error::Error;
pub use event::{Action, Anomaly, CsRequest, Event, TimerId};
pub use node::{Actions, NodeId, Protocol, Status};
