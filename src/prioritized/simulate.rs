//! Plugging the prioritized algorithm into the token simulator.

use super::{build_network, check_invariants, check_quiescent, Message, Node, Settings};
use crate::sim::token::{Channels, TokenAlgorithm};
use crate::sim::Graph;
use crate::{Error, NodeId};

/// Simulation parameters. The workload's `resources` must stay within `1..=k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// `k`, the policy and the aging step.
    pub settings: Settings,
    /// The initial token holder.
    pub holder: NodeId,
}

impl TokenAlgorithm for Node {
    type Params = Params;

    fn build(graph: &Graph, params: &Params) -> Result<Vec<Self>, Error> {
        build_network(
            graph.n() as u32,
            graph.edges(),
            params.holder,
            params.settings,
        )?
        .into_iter()
        .map(Node::new)
        .collect()
    }

    fn check_safety(nodes: &[Self], in_flight: &Channels<Message>) -> Result<(), String> {
        let k = nodes.first().map_or(0, |n| n.settings().k);
        check_invariants(nodes, in_flight.iter().map(|(_, _, m)| m), k)
    }

    fn check_drained(
        nodes: &[Self],
        _in_flight: &Channels<Message>,
        quiescent: bool,
    ) -> Result<(), String> {
        if quiescent {
            check_quiescent(nodes)
        } else {
            Err("the prioritized algorithm did not go quiet after the last request".into())
        }
    }

    fn raises(&self) -> u64 {
        Node::raises(self)
    }
}
