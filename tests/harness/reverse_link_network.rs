//! Fuzz body: a small KRL/KRLF network driven by an arbitrary sequence of operations, with
//! every safety invariant checked after each one and, at the end, a fair drain that must serve
//! every waiting node (and, for KRL, go quiet with a token-oriented DAG).
//!
//! Compiled into the `reverse_link_network` fuzz target (`fuzz/`) and run over seeded inputs
//! by `tests/fuzz_reverse_link.rs`. Any panic is a finding. The input layout is frozen: the
//! reproducers in `fuzz/regressions/reverse_link_network/` decode through it.

use arbitrary::Arbitrary;
use manet_mutex::reverse_link::{Node, Params};
use manet_mutex::CsRequest;

use crate::network_input::{run_ops, Op, Topology};
use crate::token_net::Net;

/// A network of 2 to 6 nodes and what happens to it.
#[derive(Debug, Arbitrary)]
pub struct Input {
    topology: Topology,
    /// `k = 1 + tokens % (n - 1)`: `build` refuses a token at every node.
    tokens: u8,
    forwarding: bool,
    /// Requests are always for one resource.
    #[arbitrary(with = crate::input::sized_vec)]
    ops: Vec<Op<()>>,
}

pub fn run(input: &Input) {
    let graph = input.topology.graph();
    let params = Params {
        k: 1 + input.tokens as u32 % (graph.n() as u32 - 1),
        forwarding: input.forwarding,
    };
    let net = Net::<Node>::new(graph, &params)
        .unwrap_or_else(|e| panic!("a connected network with k < n must build: {e}"));
    run_ops(net, &input.ops, |()| CsRequest::ONE, &params);
}
