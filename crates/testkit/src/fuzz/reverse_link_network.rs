//! Fuzz body: a small KRL/KRLF network driven by an arbitrary sequence of operations and
//! faults (corruption of a field, the kind or the frame bits of a message in flight, and link
//! events noticed at one end at a time; [`super::token_ops`]), with every safety invariant
//! checked after each one and, at the end, a fair drain that must serve every waiting node
//! (and, for KRL, go quiet with a token-oriented DAG).
//!
//! Compiled into the `reverse_link_network` fuzz target (`fuzz/`) and run over seeded inputs
//! by `tests/faults/fuzz_reverse_link.rs`. Any panic is a finding. The input layout is frozen: the
//! reproducers in `fuzz/regressions/reverse_link_network/` decode through it; [`run_as_recorded`]
//! replays them as they were recorded (before kind changes and flips).

use arbitrary::Arbitrary;
use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex::CsRequest;
use manet_mutex_sim::Params;

use super::token_ops::{apply_ops, run_ops, Op, Timed, Topology};
use crate::token_net::TokenNet;

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
    pub ops: Vec<Op<()>>,
    /// Corruption (a field, the kind, or bits of the frame, which the link session
    /// retransmits) and link events noticed at one end at a time.
    #[arbitrary(with = crate::fuzz::sized_vec)]
    pub faults: Vec<Timed>,
}

/// The run of `input` without its faults: how the reproducers recorded before faults existed
/// (`fuzz/regressions/reverse_link_network/before-faults/`) decode as they did then.
pub fn run_without_faults(input: &Input) {
    run(&Input {
        faults: Vec::new(),
        ..input.clone()
    });
}

/// [`run`] with every corruption a field corruption ([`as_recorded`](super::token_ops::Fault::as_recorded)): how the
/// reproducers recorded before kind changes and flips existed replay as they did then.
pub fn run_as_recorded(input: &Input) {
    run(&Input {
        faults: super::token_ops::as_recorded(&input.faults),
        ..input.clone()
    });
}

/// Build the network `input` describes and play its schedule ([`run_ops`]).
pub fn run(input: &Input) {
    play(input);
}

/// [`run`], returning the network as the schedule left it (before the drain, which runs on a
/// copy), for tests that check more, such as the anomalies reported.
pub fn play(input: &Input) -> TokenNet<Node> {
    play_with(input, true)
}

/// The schedule of `input` alone, safety checked after every step, without the drain
/// ([`apply_ops`]): what the coverage tests count.
pub fn play_schedule(input: &Input) -> TokenNet<Node> {
    play_with(input, false)
}

fn play_with(input: &Input, drain: bool) -> TokenNet<Node> {
    let graph = input.topology.graph();
    let k = 1 + input.tokens as u32 % (graph.n() as u32 - 1);
    let params = Params::first_nodes(Settings::new(k).with_forwarding(input.forwarding), k);
    let net = TokenNet::<Node>::new(graph, &params)
        .unwrap_or_else(|e| panic!("a connected network with k < n must build: {e}"));
    let run = if drain { run_ops } else { apply_ops };
    run(net, &input.ops, &input.faults, |()| CsRequest::ONE, &params)
}
