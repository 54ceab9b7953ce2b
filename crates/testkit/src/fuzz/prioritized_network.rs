//! Fuzz body: a small network running the prioritized h-out-of-k algorithm, driven by an
//! arbitrary sequence of operations (requests for any valid number of resources at any
//! priority, releases, deliveries, link failures and formations) and faults (corruption of a
//! field, the kind or the frame bits of a message in flight, and link events noticed at one
//! end at a time; [`super::token_ops`]), with `prioritized::invariants::check_safety` (at the
//! capacity corruption left, `TokenHarness::lost`) checked after each one and, at the end, a
//! fair drain that must serve every waiting node whose request fits in what is left and go
//! quiet with `check_quiescent` holding.
//!
//! Compiled into the `prioritized_network` fuzz target (`fuzz/`) and run over seeded inputs by
//! `tests/faults/fuzz_prioritized.rs`. Any panic is a finding. The input layout is frozen: the
//! reproducers in `fuzz/regressions/prioritized_network/` decode through it;
//! [`run_as_recorded`] replays them as they were recorded (before kind changes and flips).

use arbitrary::Arbitrary;
use manet_mutex::prioritized::{Node, Policy, Settings};
use manet_mutex::{CsRequest, NodeId};
use manet_mutex_sim::Params;

use super::token_ops::{apply_ops, run_ops, Op, Timed, Topology};
use crate::token_net::TokenNet;

/// A network of 2 to 6 nodes and what happens to it.
#[derive(Debug, Clone, Arbitrary)]
pub struct Input {
    /// The initial topology.
    pub topology: Topology,
    /// `k = 1 + resources % 4`.
    pub resources: u8,
    /// The priority policy, modulo the three.
    pub policy: u8,
    /// `1 + aging % 3`.
    pub aging: u8,
    /// The initial token holder, modulo `n`.
    pub holder: u8,
    /// Requests ask for `1 + resources % k` at the given priority.
    #[arbitrary(with = crate::fuzz::sized_vec)]
    pub ops: Vec<Op<(u8, u32)>>,
    /// Corruption (a field, the kind, or bits of the frame, which the link session
    /// retransmits) and link events noticed at one end at a time.
    #[arbitrary(with = crate::fuzz::sized_vec)]
    pub faults: Vec<Timed>,
}

/// The run of `input` without its faults: how the reproducers recorded before faults existed
/// (`fuzz/regressions/prioritized_network/before-faults/`) decode as they did then.
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
    let policy =
        [Policy::Explicit, Policy::Equal, Policy::MaxConcurrency][usize::from(input.policy) % 3];
    let settings = Settings::new(1 + u32::from(input.resources % 4), policy)
        .with_aging_step(1 + u64::from(input.aging % 3));
    let holder = NodeId(u32::from(input.holder) % graph.n() as u32);
    let params = Params::new(settings, vec![holder]);
    let net = TokenNet::<Node>::new(graph, &params)
        .unwrap_or_else(|e| panic!("a connected network must build: {e}"));
    let request = |(resources, priority): (u8, u32)| CsRequest {
        resources: 1 + u32::from(resources) % settings.k,
        priority,
    };
    if drain {
        run_ops(net, &input.ops, &input.faults, request, &params)
    } else {
        apply_ops(net, &input.ops, &input.faults, request, &params)
    }
}
