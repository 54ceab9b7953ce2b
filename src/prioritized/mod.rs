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
//! Driving contract: reliable FIFO links between neighbours; a link goes down only with
//! nothing in flight on it, and both ends learn of link changes in the same instant.
//!
//! Interpretations of the paper and deviations from it are listed in `docs/prioritized.md`,
//! each with the test that pins it.

mod handlers;
mod invariants;
mod message;
mod network;
mod node;
mod policy;
mod procedures;
#[cfg(feature = "std")]
mod simulate;

pub use invariants::{check_invariants, check_quiescent};
pub use message::Message;
pub use network::build_network;
pub use node::Node;
pub use policy::{Config, Policy, Settings};
#[cfg(feature = "std")]
pub use simulate::Params;
