//! Fuzz body: a small KRL/KRLF network driven by an arbitrary schedule of steps and faults
//! (corruption of a field, the kind or the frame bits of a message in flight, and link events
//! noticed at one end at a time; [`crate::schedule`]), with every safety invariant checked
//! after each one and, at the end, a fair drain that must serve every waiting node (and, for
//! KRL, go quiet with a token-oriented DAG).
//!
//! Compiled into the `reverse_link_network` fuzz target (`fuzz/`) and run over seeded inputs
//! by `tests/faults/fuzz_reverse_link.rs`. Any panic is a finding. The input layout is frozen: the
//! reproducers in `fuzz/regressions/reverse_link_network/` decode through it; [`run_as_recorded`]
//! replays them as they were recorded (before kind changes and flips).

use arbitrary::Arbitrary;
use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex::CsRequest;
use manet_mutex_sim::Params;

use super::token_network::{token_network_entry_points, NetworkInput};
use super::Topology;
use crate::schedule::{TimedFault, TokenOp};
use crate::TokenNet;

/// A network of 2 to 6 nodes and what happens to it.
#[derive(Debug, Clone, Arbitrary)]
pub struct Input {
    /// The initial topology.
    pub topology: Topology,
    /// `k = 1 + tokens % (n - 1)`: `build` refuses a token at every node.
    pub tokens: u8,
    /// KRLF rather than KRL.
    pub forwarding: bool,
    /// Requests are always for one resource.
    #[arbitrary(with = crate::fuzz::sized_vec)]
    pub ops: Vec<TokenOp<()>>,
    /// Corruption (a field, the kind, or bits of the frame, which the link session
    /// retransmits) and link events noticed at one end at a time.
    #[arbitrary(with = crate::fuzz::sized_vec)]
    pub faults: Vec<TimedFault>,
}

impl NetworkInput for Input {
    type Node = Node;
    type Request = ();

    fn build(&self) -> (TokenNet<Node>, Params<Settings>) {
        let graph = self.topology.graph();
        let k = 1 + self.tokens as u32 % (graph.n() as u32 - 1);
        let params = Params::first_nodes(Settings::new(k).with_forwarding(self.forwarding), k);
        let net = TokenNet::new(graph, &params)
            .unwrap_or_else(|e| panic!("a connected network with k < n must build: {e}"));
        (net, params)
    }

    fn request(&self, (): ()) -> CsRequest {
        CsRequest::ONE
    }

    fn schedule(&self) -> (&[TokenOp<()>], &[TimedFault]) {
        (&self.ops, &self.faults)
    }

    fn faults_mut(&mut self) -> &mut Vec<TimedFault> {
        &mut self.faults
    }
}

token_network_entry_points!(Node, "reverse_link_network");
