//! # manet-mutex-sim
//!
//! The deterministic discrete-event simulators of [`manet_mutex`], the trace viewer, and the
//! programs that reproduce the papers' experiments (`simulate`, `scale`, `trace`, in this
//! crate's `examples/`).
//!
//! Everything is driven by a seeded RNG and virtual time, so a run is a pure function of its
//! configuration and seed; a failed run ([`Failure`]) reports both, plus the event trace.
//!
//! - [`token`]: neighbour-only FIFO links, the KRL paper's model, for the token algorithms;
//! - [`routed`]: any host to any host over shortest paths of a random-waypoint topology, with
//!   loss, host failures, doze and disconnection, for the permission algorithms;
//! - [`Plugin`]: what an algorithm provides to either (each extends it: [`TokenAlgorithm`],
//!   [`routed::Host`]), and [`Algorithm`], the registry of the algorithms the programs run;
//! - [`link`]: how a message gets from its sender to its receiver.

#![deny(missing_docs)]
#![deny(unreachable_pub)]
// One `unsafe` block in the workspace, a cache hint that reads no memory (`prefetch`).
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

extern crate alloc;

mod adapters;
pub mod clock;
pub mod experiment;
mod failure;
pub mod link;
pub mod metrics;
pub mod ns2;
mod plugin;
mod prefetch;
pub mod progress;
mod registry;
pub mod routed;
pub mod token;
pub mod topology;
pub mod trace;
pub mod waypoint;
pub mod workload;

pub use clock::{EventQueue, Time};
pub use failure::Failure;
pub use metrics::{mean_ci95, Anomalies, Metrics, RecoveryCounts, Summary};
pub use plugin::Plugin;
pub use registry::{Algorithm, Simulator, UnknownAlgorithm};
pub use token::{Channels, Params, TokenAlgorithm};
pub use topology::{Graph, LinkPick};
pub use workload::{Dist, Workload};

use manet_mutex::{Protocol, Status};

/// The nodes waiting for or inside the critical section: what a drain must bring back to the
/// remainder section.
pub fn busy<P: Protocol>(nodes: &[P]) -> impl Iterator<Item = &P> {
    nodes.iter().filter(|n| n.status() != Status::Remainder)
}
