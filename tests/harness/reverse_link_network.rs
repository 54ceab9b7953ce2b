//! Fuzz body: a small KRL/KRLF network driven by an arbitrary sequence of operations, with
//! every safety invariant checked after each one and, at the end, a fair drain that must serve
//! every waiting node (and, for KRL, go quiet with a token-oriented DAG).
//!
//! Compiled into the `reverse_link_network` fuzz target (`fuzz/`) and run over seeded inputs
//! by `tests/fuzz_reverse_link.rs`. Any panic is a finding.

use arbitrary::Arbitrary;
use manet_mutex::reverse_link::{Node, Params};
use manet_mutex::sim::Graph;
use manet_mutex::{NodeId, Status};

use crate::token_net::Net;

/// Operations beyond this are ignored, so one input is one bounded run.
const MAX_OPS: usize = 256;
/// Fair drain rounds: on six nodes a request and its token cross at most five links each,
/// plus the reversals a few link changes cause.
const DRAIN_ROUNDS: usize = 256;

/// A network of 2 to 6 nodes and what happens to it.
#[derive(Debug, Arbitrary)]
pub struct Input {
    /// `2 + nodes % 5` nodes.
    nodes: u8,
    /// Node `i ≥ 1` is linked to node `parents[i - 1] % i`: a spanning tree, so the network
    /// starts connected.
    parents: [u8; 5],
    /// Extra links, one bit per unordered pair in lexicographic order.
    chords: u16,
    /// `k = 1 + tokens % (n - 1)`: `build` refuses a token at every node.
    tokens: u8,
    forwarding: bool,
    #[arbitrary(with = crate::input::sized_vec)]
    ops: Vec<Op>,
}

/// One step. Node and link choices are taken modulo what exists; a step that is not possible
/// in the current state (a request from a node that is not in the remainder section, a release
/// outside the critical section, nothing to deliver) does nothing.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Op {
    Request(u8),
    Release(u8),
    /// Deliver the head of the i-th directed link that has a message in flight.
    Deliver(u8),
    /// Fail the i-th link that is idle and not a bridge.
    LinkDown(u8),
    /// Form the i-th absent link.
    LinkUp(u8),
}

fn nth<T: Copy>(items: &[T], i: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[usize::from(i) % items.len()])
}

pub fn run(input: &Input) {
    let n = 2 + usize::from(input.nodes) % 5;
    let mut graph = Graph::empty(n);
    for i in 1..n {
        let parent = usize::from(input.parents[i - 1]) % i;
        graph.add(NodeId(i as u32), NodeId(parent as u32));
    }
    let pairs = (0..n as u32).flat_map(|a| (a + 1..n as u32).map(move |b| (a, b)));
    for (bit, (a, b)) in pairs.enumerate() {
        if input.chords >> bit & 1 == 1 {
            graph.add(NodeId(a), NodeId(b));
        }
    }
    let params = Params {
        k: 1 + u32::from(input.tokens) % (n as u32 - 1),
        forwarding: input.forwarding,
    };
    let mut net = Net::<Node>::new(graph, &params)
        .unwrap_or_else(|e| panic!("a connected network with k < n must build: {e}"));
    let node = |x: u8| NodeId(u32::from(x) % n as u32);
    for (i, &op) in input.ops.iter().take(MAX_OPS).enumerate() {
        match op {
            Op::Request(x) if net.status(node(x)) == Status::Remainder => net.request(node(x)),
            Op::Release(x) if net.status(node(x)) == Status::Critical => net.release(node(x)),
            Op::Deliver(x) => {
                if let Some((from, to)) = nth(&net.busy_links(), x) {
                    net.deliver(from, to);
                }
            }
            Op::LinkDown(x) => {
                if let Some((a, b)) = nth(&net.removable_links(), x) {
                    net.fail(a, b);
                }
            }
            Op::LinkUp(x) => {
                if let Some((a, b)) = nth(&net.absent_links(), x) {
                    net.form(a, b);
                }
            }
            Op::Request(_) | Op::Release(_) => {}
        }
        if let Err(e) = net.check_safety() {
            panic!("after op {i} ({op:?}), {params:?}: {e}");
        }
    }
    if let Err(e) = net.drain(DRAIN_ROUNDS) {
        panic!("{params:?}: {e}");
    }
}
