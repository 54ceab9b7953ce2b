//! The Ricart–Agrawala algorithm: the textbook permission-based baseline.
//!
//! A requester asks every other host and enters when all have replied: 2(n − 1) messages per
//! critical-section entry without loss. Requests are ordered by Lamport timestamps (ties by id);
//! a host defers its REPLY while it is in the critical section or has an older request. Like
//! `look_ahead` (whose ordering, deferral and timers it shares through [`crate::permission`]),
//! it retransmits a REQUEST whose REPLY is late, so it survives transient message loss and
//! any delivery order. REQUESTs carry a check word (a corrupted copy counts as lost) and every
//! request has its host's own number, so a corrupted or late REPLY never grants the wrong one.
//!
//! # API
//! [`Settings::new`]`(hosts, retransmit_after)` (no other settings),
//! [`Config::new`]`(id, settings)`, [`network`]`(settings)` for hosts `0..hosts`,
//! [`Node::new`], [`Message`] and [`invariants`]. Besides `id()`, `status()` and
//! [`Node::settings`], a node reports [`Node::timestamp`], [`Node::clock`],
//! [`Node::outstanding`] and [`Node::deferred`].
//!
//! # Driving contract
//! - Any delivery order; messages may be lost, duplicated or delayed, as long as a REQUEST
//!   retransmitted often enough gets through (see the crate's threat model for corruption).
//! - Events: `Request` (one resource; `priority` is ignored), `Release`, `Cancel` (a waiting
//!   host withdraws: its timers are cancelled and every deferred request answered, as on
//!   release; REPLYs to the withdrawn request grant nothing), `Receive` and `Timeout`; link
//!   and mode events are [`Error::Unsupported`](crate::Error::Unsupported).
//! - Each REQUEST awaiting its REPLY has a timer: `SetTimer` with `after` =
//!   [`Settings::retransmit_after`], in [the embedder's time unit](crate#timers), and a fresh
//!   [`TimerId`](crate::TimerId); a REPLY cancels it (`CancelTimer`). On a current `Timeout`
//!   the node resends the REQUEST and sets a new timer; any other `Timeout` does nothing.
//! - It emits `Send` (to any host), `EnterCritical { resources: 1, fence }` (lane 0,
//!   above the fence of every section that ended before; see [`crate::fence`]), `SetTimer`,
//!   `CancelTimer` and `Anomaly`.
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
