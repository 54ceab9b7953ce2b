//! Errors for local misuse of a node.
//!
//! Only the local application or embedder can cause an [`Error`]: a peer's message never does
//! (bad peer input is ignored and reported as [`crate::Action::Anomaly`]). A handler that returns
//! `Err` has changed nothing.

use crate::{NodeId, Status};

/// Local misuse of a node, or an invalid configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `Request` while the node is already waiting for or inside the critical section.
    #[error("cannot request the critical section while {0:?}: the previous request is still open")]
    AlreadyRequested(Status),
    /// `Release` while the node is not in the critical section.
    #[error("cannot release the critical section while {0:?}: the node is not in it")]
    NotInCritical(Status),
    /// `Cancel` while the node is not waiting for the critical section.
    #[error("cannot cancel while {0:?}: no request is waiting")]
    NotWaiting(Status),
    /// A prioritized request for a number of resources outside `1..=k`.
    #[error("requested {requested} resources, but this system has k = {k} (must be 1..=k)")]
    InvalidResources {
        /// Resources asked for.
        requested: u32,
        /// Resources in the system (the configured `k`).
        k: u32,
    },
    /// A request for other than one resource to an algorithm whose requests are for exactly
    /// one: a KRL/KRLF request takes one of the `k` tokens, a look-ahead or Ricart–Agrawala
    /// request the one critical section. Only prioritized requests ask for `h` of `k`.
    #[error(
        "requested {requested} resources, but a request of this algorithm is for exactly one \
         (one token of KRL/KRLF, whatever k; only prioritized requests ask for h of k)"
    )]
    OneResourceOnly {
        /// Resources asked for.
        requested: u32,
    },
    /// The event is not meaningful for this algorithm (e.g. `Doze` for a token algorithm).
    #[error("event {0} is not supported by this algorithm")]
    Unsupported(&'static str),
    /// The event is not allowed in the node's current mode (e.g. `Request` while disconnected).
    #[error("event {event} is not allowed while the node is {mode}")]
    WrongMode {
        /// The offending event.
        event: &'static str,
        /// The node's mode.
        mode: &'static str,
    },
    /// `Suspect` or `Trust` naming the node itself or an id outside the system (permission
    /// algorithms): only another host can be excluded or readmitted.
    #[error("event {event} names {peer}, which is not another host of this system")]
    NotAPeer {
        /// The offending event.
        event: &'static str,
        /// The id it named.
        peer: NodeId,
    },
    /// `Refused` whose fences cannot be a refusal: of different units, a unit outside the
    /// system, or `newest` not later than `fence`.
    #[error("invalid Refused event: {0}")]
    InvalidRefusal(&'static str),
    /// A node's configuration that violates the algorithm's preconditions.
    #[error("invalid configuration for node {node}: {reason}")]
    InvalidConfig {
        /// The node whose configuration is invalid.
        node: NodeId,
        /// What is wrong, in words.
        reason: &'static str,
    },
    /// A whole network's configuration (a `network(..)` call) that is wrong as a whole, not
    /// for one node: the number of token holders, an empty network.
    #[error("invalid network: {reason}")]
    InvalidNetwork {
        /// What is wrong, in words.
        reason: &'static str,
    },
}
