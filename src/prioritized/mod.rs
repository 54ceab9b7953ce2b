//! Prioritized h-out-of-k resource allocation for MANETs (Jiang), with the maximum-concurrency
//! priority mode.
//!
//! One token circulates, carrying `t`, the number of free resources out of `k`. A node that
//! wants `h` resources queues a request with a priority; requests travel along a
//! token-oriented DAG of heights (partial reversal, as in KRL) and are forwarded with the
//! priority of the front of each queue, UPDATE messages carrying priority increases ahead.
//! The token holder serves the highest priority first: itself when `t ≥ h`, otherwise by
//! passing the token on. A holder whose own request is first but cannot be met keeps the token
//! while released resources (RELEASE messages, chasing the token along lowest neighbours)
//! flow back, unless a higher-priority request overtakes it. Aging raises every waiting
//! priority each time a queue is served or a node releases, so no request starves.
//!
//! # Link contract
//! The same as [`crate::reverse_link`]'s (FIFO while up; each end learns of link changes at
//! its own time; a link fails only with nothing in flight on it; no message crosses from one
//! incarnation of a link to the next; keepalives after a corruption). Resource counts travel
//! twice, so a corrupted count can lose resources (reported) but never create them.
//!
//! # API
//! [`Settings::new`]`(k, policy)` (see [`Policy`]), with [`Settings::with_aging_step`];
//! [`network`]`(n, edges, holders, settings)` lays out heights for the token at the one node of
//! `holders`, or build each [`Config::new`] by hand; then [`Node::new`]. Nodes exchange
//! [`Message`]s; [`invariants`] checks a whole system (tokens and RELEASEs in flight included).
//! Besides `id()`, `status()` and [`Node::settings`], a node reports [`Node::available`] (`t`,
//! while it holds the token), [`Node::held`], [`Node::requested`], [`Node::height`],
//! [`Node::neighbors`], [`Node::next`] and [`Node::queue`].
//!
//! # Events and actions
//! `Request` (`resources` in `1..=k`; `priority` used as the [`Policy`] says), `Release`,
//! `Cancel` (a waiting node withdraws; a waiting holder serves the rest of its queue),
//! `Receive`, `LinkUp` and `LinkDown`, `Leave` (in the remainder section: the node hands the
//! token to a neighbour, forwards what still reaches it and reports `Report::Left` once it holds
//! nothing; `docs/ALGORITHMS.md`, L4), and with recovery ([`Settings::with_recovery`]: lost
//! tokens made again, entries leased, a crashed holder's units freed by a new generation;
//! `docs/ALGORITHMS.md`, F7) `Timeout`; any other event is
//! [`Error::Unsupported`](crate::Error::Unsupported). Without recovery the node sets no
//! timers; with it, it also emits `SetTimer`, `CancelTimer`, `LeaseExpired` and `Report`. It emits `Send`
//! (to a linked neighbour), `EnterCritical { resources: h, fence }` with the `h` requested
//! (the fence: lane 0, the token's count of grants; see [`crate::fence`]), and `Anomaly`. The crate's [driving contract](crate#driving-contract) has the errors per state.
//!
//! Interpretations of the paper and deviations from it are listed in `docs/ALGORITHMS.md`,
//! each with the test that pins it.
//!
//! # Example
//!
//! ```
//! use std::collections::VecDeque;
//! use manet_mutex::prioritized::{network, Node, Policy, Settings};
//! use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol, Status};
//!
//! // A line 0-1-2 with k = 3 resources, the token at node 0, maximum-concurrency priorities.
//! let edges = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
//! let settings = Settings::new(3, Policy::MaxConcurrency);
//! let mut nodes: Vec<Node> = network(3, &edges, &[NodeId(0)], settings)?
//!     .into_iter().map(Node::new).collect::<Result<_, _>>()?;
//! let mut wire = VecDeque::new(); // one FIFO for the whole network is FIFO per link too
//! let mut feed = |nodes: &mut Vec<Node>, wire: &mut VecDeque<_>, at: NodeId, event| {
//!     for action in nodes[at.index()].handle(event).expect("valid event") {
//!         if let Action::Send { to, msg } = action {
//!             wire.push_back((at, to, msg));
//!         }
//!     }
//! };
//! feed(&mut nodes, &mut wire, NodeId(2), Event::Request(CsRequest { resources: 2, priority: 0 }));
//! while let Some((from, to, msg)) = wire.pop_front() {
//!     feed(&mut nodes, &mut wire, to, Event::Receive { from, msg });
//! }
//! assert_eq!(nodes[2].status(), Status::Critical);
//! assert_eq!(nodes[2].available(), Some(1)); // the token stayed with node 2: t = 3 - 2
//! # Ok::<(), manet_mutex::Error>(())
//! ```

mod config;
mod handlers;
pub mod invariants;
mod message;
mod node;
mod policy;
mod procedures;
mod recovery;

pub use config::{network, Config, Settings};
pub use message::{Message, Resources};
pub use node::Node;
pub use policy::Policy;
