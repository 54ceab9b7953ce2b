//! What the token-network fuzz bodies share: an arbitrary small connected topology and an
//! arbitrary sequence of operations on it, applied with every safety invariant checked after
//! each one and a fair drain at the end.

use std::fmt::Debug;

use arbitrary::Arbitrary;
use manet_mutex::sim::{Graph, TokenAlgorithm};
use manet_mutex::{CsRequest, NodeId, Status};

use crate::token_net::Net;

/// Operations beyond this are ignored, so one input is one bounded run.
const MAX_OPS: usize = 256;
/// Fair drain rounds for a network that saw no operation: on six nodes a request and its token
/// cross at most five links each, plus a few reversals.
const DRAIN_ROUNDS: usize = 256;
/// Extra drain rounds per node and per operation applied. While a formed link's first height
/// announcement is in flight, partial reversal can count two nodes up without bound, one level
/// per delivery; afterwards the nodes cut off below such a peak climb back over it one level
/// per exchange before their requests (or released resources) get through. The highest height
/// grows by at most one level per operation, so this bounds that climb generously. (A
/// prioritized run with a peak at 80 needed 261 rounds, more than the flat 256 first used:
/// `fuzz/regressions/prioritized_network/slow-climb-over-a-counted-up-peak`.)
const DRAIN_ROUNDS_PER_NODE_AND_OP: usize = 8;

/// 2 to 6 nodes, connected.
#[derive(Debug, Arbitrary)]
pub struct Topology {
    /// `2 + nodes % 5` nodes.
    nodes: u8,
    /// Node `i ≥ 1` is linked to node `parents[i - 1] % i`: a spanning tree, so the network
    /// starts connected.
    parents: [u8; 5],
    /// Extra links, one bit per unordered pair in lexicographic order.
    chords: u16,
}

impl Topology {
    pub fn graph(&self) -> Graph {
        let n = 2 + usize::from(self.nodes) % 5;
        let mut graph = Graph::empty(n);
        for i in 1..n {
            let parent = usize::from(self.parents[i - 1]) % i;
            graph.add(NodeId(i as u32), NodeId(parent as u32));
        }
        let pairs = (0..n as u32).flat_map(|a| (a + 1..n as u32).map(move |b| (a, b)));
        for (bit, (a, b)) in pairs.enumerate() {
            if self.chords >> bit & 1 == 1 {
                graph.add(NodeId(a), NodeId(b));
            }
        }
        graph
    }
}

/// One step; `R` is what a request asks for. Node and link choices are taken modulo what
/// exists; a step that is not possible in the current state (a request from a node that is
/// not in the remainder section, a release outside the critical section, nothing to deliver)
/// does nothing.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Op<R> {
    Request(u8, R),
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

/// Apply `ops` to `net`, checking safety after each, then drain: every waiting node must be
/// served and the algorithm's drained checks must hold. Panics with `context` on a violation.
pub fn run_ops<P: TokenAlgorithm, R: Copy + Debug>(
    mut net: Net<P>,
    ops: &[Op<R>],
    request: impl Fn(R) -> CsRequest,
    context: &impl Debug,
) {
    let n = net.nodes.len() as u32;
    let node = |x: u8| NodeId(u32::from(x) % n);
    let ops = &ops[..ops.len().min(MAX_OPS)];
    for (i, &op) in ops.iter().enumerate() {
        match op {
            Op::Request(x, r) if net.status(node(x)) == Status::Remainder => {
                net.request(node(x), request(r));
            }
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
            Op::Request(..) | Op::Release(_) => {}
        }
        if let Err(e) = net.check_safety() {
            panic!(
                "after op {i} ({op:?}), {context:?}: {e}\n{}",
                net.trace_text()
            );
        }
    }
    let rounds = DRAIN_ROUNDS + DRAIN_ROUNDS_PER_NODE_AND_OP * n as usize * ops.len();
    if let Err(e) = net.drain(rounds) {
        panic!("{context:?}: {e}\n{}", net.trace_text());
    }
}
