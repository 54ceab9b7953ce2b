//! Plugging KRL/KRLF into the token simulator.

use super::{build, invariants, Node};
use crate::sim::token::{Channels, TokenAlgorithm};
use crate::sim::Graph;
use crate::{Error, NodeId};

/// Simulation parameters for KRL/KRLF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Tokens; the initial holders are nodes `0..k` as in the paper.
    pub k: u32,
    /// KRLF token forwarding.
    pub forwarding: bool,
}

impl TokenAlgorithm for Node {
    type Params = Params;

    fn build(graph: &Graph, params: &Params) -> Result<Vec<Self>, Error> {
        let holders: Vec<NodeId> = (0..params.k).map(NodeId).collect();
        build(graph.n(), graph.edges(), &holders, params.forwarding)?
            .into_iter()
            .map(Node::new)
            .collect()
    }

    fn check_safety(nodes: &[Self], in_flight: &Channels<super::Message>) -> Result<(), String> {
        invariants::check_safety(nodes, in_flight.iter())
    }

    fn check_drained(
        nodes: &[Self],
        _in_flight: &Channels<super::Message>,
        quiescent: bool,
    ) -> Result<(), String> {
        let forwarding = nodes.first().is_some_and(Node::forwarding);
        match (quiescent, forwarding) {
            (true, _) => invariants::check_quiescent(nodes),
            // KRLF circulates idle tokens forever, so it never goes quiet.
            (false, true) => Ok(()),
            (false, false) => Err("KRL did not go quiet after the last request".into()),
        }
    }

    fn raises(&self) -> u64 {
        Node::raises(self)
    }
}
