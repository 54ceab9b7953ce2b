//! The deterministic discrete-event simulator (needs the `std` feature).
//!
//! Everything is driven by a seeded RNG and virtual time, so a run is a pure function of its
//! configuration and seed; an invariant violation reports both, plus the event trace.

pub mod clock;
pub mod experiment;
pub mod metrics;
pub mod routed;
pub mod waypoint;

pub use clock::{EventQueue, Time};
pub use metrics::{Metrics, Summary};
pub mod token;
pub mod topology;
pub mod workload;

pub use token::{Channels, TokenAlgorithm, Violation};
pub use topology::Graph;
pub use workload::{Dist, Workload};
