//! RL, KRL and KRLF: k-mutual exclusion by token passing on a token-oriented DAG
//! (Walter, Cao, Mohanty, POMC 2001; with `k = 1` it is the RL algorithm of Walter, Welch and
//! Vaidya).
//!
//! `k` tokens move over the physical links. Every node keeps a [height](crate::token::height) and
//! links point downhill; requests travel downhill to a token holder, tokens travel back along
//! the request chain. When a link failure leaves a non-holder with no way down, it raises
//! itself by partial reversal; a holder with no way up lowers itself. With
//! [`Settings::forwarding`] (KRLF) an idle token is passed on to the lowest unvisited neighbour
//! instead of waiting where it is; [`Settings::idle_pause`] paces that (below).
//!
//! # API
//! [`Settings::new`]`(k)`, with [`Settings::with_forwarding`] for KRLF and
//! [`Settings::with_idle_pause`] to pace it;
//! [`network`]`(n, edges, holders, settings)` lays out heights for one token at each of
//! `holders` (`k` must be `holders.len()`), or build each [`Config::new`] by hand; then
//! [`Node::new`]. Nodes exchange [`Message`]s; [`invariants`] checks a whole system (tokens
//! in flight included). Besides `id()`, `status()` and [`Node::settings`], a node reports
//! [`Node::tokens`], [`Node::height`], [`Node::neighbors`], [`Node::next`], [`Node::queue`]
//! and [`Node::raises`].
//!
//! # Events and actions
//! `Request` (one resource; `priority` is ignored), `Release`, `Cancel` (a waiting node
//! withdraws; the REQUEST already sent still fetches a token, kept or passed on as any idle
//! one), `Receive`, `LinkUp`,
//! `LinkDown` and `Leave` (in the remainder section: the node hands every token it holds to a
//! neighbour, relays what still reaches it and reports `Report::Left` once it holds nothing;
//! `docs/ALGORITHMS.md`, L4; a second `Leave`, or a `Request` after it, is
//! [`Error::WrongMode`](crate::Error::WrongMode)); any other event is [`Error::Unsupported`](crate::Error::Unsupported), except
//! `Timeout` with an idle pause, a raise pause ([`Settings::with_raise_pause`]) or recovery.
//! Without them the node sets no timers: it moves on messages and
//! the link layer's reports alone. It emits `Send` (to a linked neighbour),
//! `EnterCritical { resources: 1, fence }` (the fence's lane is the id of the token used, its
//! value that token's count of entries; see [`crate::fence`]) and `Anomaly`.
//!
//! # Example: a link fails and the DAG reverses
//! Three nodes on a triangle, the token at node 0. The link 0–1 fails (both ends are told
//! here; each may learn at its own time). Node 1 pointed only to node 0, so with no way down
//! left it raises itself by partial reversal, and its request reaches the token through node
//! 2. Then node 0, whose only link is now to node 2, asks and gets the token back the same
//! way. The queue stands for the transport: reliable FIFO per link, as the contract below asks.
//!
//! ```
//! use std::collections::VecDeque;
//! use manet_mutex::reverse_link::{network, Message, Node, Settings};
//! use manet_mutex::{Action, CsRequest, Error, Event, Fence, NodeId, Protocol, Status};
//!
//! /// Feed `event` to `at`, then deliver until nothing is in flight; the entries' fences.
//! fn run(nodes: &mut [Node], at: NodeId, event: Event<Message>) -> Result<Vec<Fence>, Error> {
//!     let mut entered = Vec::new();
//!     let mut queue = VecDeque::from([(at, event)]);
//!     while let Some((at, event)) = queue.pop_front() {
//!         for action in nodes[at.index()].handle(event)? {
//!             match action {
//!                 Action::Send { to, msg } => {
//!                     queue.push_back((to, Event::Receive { from: at, msg }))
//!                 }
//!                 Action::EnterCritical { fence, .. } => entered.push(fence),
//!                 _ => {} // no timers without a pause or recovery; anomalies: log them
//!             }
//!         }
//!     }
//!     Ok(entered)
//! }
//!
//! let (n0, n1, n2) = (NodeId(0), NodeId(1), NodeId(2));
//! let triangle = [(n0, n1), (n1, n2), (n0, n2)];
//! let mut nodes: Vec<Node> = network(3, &triangle, &[n0], Settings::new(1))?
//!     .into_iter()
//!     .map(Node::new)
//!     .collect::<Result<_, _>>()?;
//! run(&mut nodes, n0, Event::LinkDown(n1))?;
//! run(&mut nodes, n1, Event::LinkDown(n0))?;
//! let first = run(&mut nodes, n1, Event::Request(CsRequest::ONE))?;
//! assert_eq!(nodes[1].status(), Status::Critical);
//! assert!(nodes[1].raises() > 0, "node 1 reversed its links");
//! run(&mut nodes, n1, Event::Release)?;
//! let second = run(&mut nodes, n0, Event::Request(CsRequest::ONE))?;
//! assert_eq!(nodes[0].status(), Status::Critical);
//! assert!(first[0] < second[0], "fences go up");
//! # Ok::<(), Error>(())
//! ```
//!
//! # Pacing KRLF
//! The paper's KRLF forwards an idle token the moment it arrives, so over a fast transport idle
//! tokens circulate as fast as it carries them (an in-process transport passed well over 100 000
//! messages per 100 ms with nobody asking). With [`Settings::with_idle_pause`]`(after)` a node
//! holds an idle token as a KRL holder would, serving any request at once, and emits
//! `SetTimer {` [`IDLE_PAUSE`]`, after }` (one at a time); when `Timeout(IDLE_PAUSE)` comes
//! back it forwards the token if it is still idle. Other timer ids and expiries after the token
//! left are ignored. The default (`None`) is the paper's KRLF. The crate's
//! [driving contract](crate#driving-contract) has the errors per state.
//!
//! # Link contract (the weakest this module needs)
//! - Each directed link delivers every message once, in order (FIFO), while it is up.
//! - Each end learns of a link's formation and failure at its own time. The first message
//!   over a new link may arrive before the receiver's own `LinkUp` (it is reported and
//!   dropped; the link is completed when one end needs it, by a `Probe`), and a message sent
//!   before the sender learned of a failure may arrive after the receiver's `LinkDown` (reported
//!   and dropped; a token is kept).
//! - A link fails only when nothing is in flight on it, and no message of one incarnation of a
//!   link arrives in the next (the papers' assumption: incipient failures are detected first).
//! - Liveness needs the network to stay connected, and, after a corrupted message, a keepalive
//!   (`LinkUp` for a link that is up) on the links that carried it.
//!
//! Any field of a message may be corrupted: heights carry a check word and a bound; see the
//! crate's threat model.

mod config;
pub mod invariants;
mod message;
mod node;
mod recovery;

pub use config::{network, Config, Settings};
pub use message::Message;
pub use node::{Node, IDLE_PAUSE};
