//! The simulator for token algorithms on neighbour-only links (the KRL paper's section 6
//! model): FIFO links with a fixed delay, Poisson requests, a fixed critical-section length, and
//! Poisson link changes that delete a random idle non-bridge link and form a random new one.
//!
//! Every step can be followed by the algorithm's safety check; after the load phase the run
//! drains (no new requests, no link changes) and must bring every waiting node into the
//! critical section. A failure returns a [`Failure`](crate::Failure) with the seed and the last
//! events.
//!
//! - [`TokenAlgorithm`] and [`Params`]: what an algorithm plugs in, and the network to build;
//! - [`Channels`]: the messages in flight, per directed link;
//! - [`Config`] and [`Outcome`]: a run's settings and its result;
//! - [`Faults`]: crashes and partitions, for algorithms that recover lost tokens;
//! - [`run`]: the simulation loop (how a message travels: [`crate::link`]).

mod algorithm;
mod channels;
mod config;
mod faults;
mod outcome;
mod sim;
#[cfg(test)]
mod tests;

pub use algorithm::{Params, TokenAlgorithm};
pub use channels::Channels;
pub use config::Config;
pub use faults::Faults;
pub use outcome::Outcome;
pub use sim::run;
