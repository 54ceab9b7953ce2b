//! Look-ahead permission-based mutual exclusion for MANETs (Wu, Cao and Yang, the
//! `002_…` paper), with timeouts, doze mode and voluntary or accidental disconnection.
//!
//! Each host keeps `Info_set` (the hosts it must ask before entering) and `Status_set` (the
//! hosts that will ask it), so mutual exclusion is only enforced among hosts that actually
//! compete. Requests are ordered by Lamport timestamps (ties by id); REPLYs for requests of
//! higher priority are given at once, others are deferred in `Q_req` until the critical section
//! is left. Every REQUEST has its own retransmission timer, so lost messages are recovered.
//!
//! # Driving contract
//! Messages may be delayed, duplicated or reordered arbitrarily and may be lost, provided a
//! message retransmitted often enough eventually gets through (transient failures). Any field
//! may be corrupted: REQUESTs and announcements carry a check word and a corrupted copy counts
//! as lost; a REPLY that must not grant differs from a granting one in two fields (see the
//! crate's threat model). Carry out
//! `SetTimer`/`CancelTimer`; a late `Timeout` of a cancelled timer is harmless. Feed
//! [`crate::Event::Doze`], [`crate::Event::Wake`], [`crate::Event::Disconnect`] and
//! [`crate::Event::Reconnect`] when the host changes mode; `Reconnect` is also the way to report
//! that the host regained connectivity after an unannounced (accidental) outage.
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
