//! The Ricart–Agrawala algorithm: the textbook permission-based baseline.
//!
//! A requester asks every other host and enters when all have replied: 2(n − 1) messages per
//! critical-section entry without loss. Requests are ordered by Lamport timestamps (ties by id);
//! a host defers its REPLY while it is in the critical section or has an older request. Like
//! `look_ahead` (whose ordering, deferral and timers it shares through [`crate::permission`]),
//! it retransmits a REQUEST whose REPLY is late, so it survives transient message loss and
//! any delivery order. REQUESTs carry a check word (a corrupted copy counts as lost) and every
//! request has its host's own number, so a corrupted or late REPLY never grants the wrong one.

mod config;
pub mod invariants;
mod message;
mod node;

pub use config::{network, Config, Settings};
pub use message::Message;
pub use node::Node;
