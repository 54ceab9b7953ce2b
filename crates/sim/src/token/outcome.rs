//! What a token-network simulation returns when it keeps every invariant.

use crate::topology::Graph;
use crate::Metrics;

/// The result of a run that kept every invariant.
#[derive(Debug, Clone)]
pub struct Outcome<N> {
    /// What was measured.
    pub metrics: Metrics,
    /// The nodes' final states.
    pub nodes: Vec<N>,
    /// The final topology.
    pub graph: Graph,
    /// The whole run, if [`super::Config::record`] was set.
    pub recording: Option<crate::trace::Recording>,
}
