//! What the token-network fuzz bodies share: an arbitrary small connected topology and an
//! arbitrary sequence of operations on it, with faults (corruption of a message in flight: a
//! field, its kind, or 1 to 4 bits of its frame, which the link session retransmits; and link
//! events noticed at one end at a time), applied with every safety invariant checked after
//! each one and a fair drain at the end.

use std::fmt::Debug;

use arbitrary::{Arbitrary, Unstructured};
use manet_mutex::{CsRequest, NodeId, Status};
use manet_mutex_sim::Graph;

use crate::corrupt::{How, Value};
use crate::{TokenHarness, TokenNet};

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
#[derive(Debug, Clone, Arbitrary)]
pub struct Topology {
    /// `2 + nodes % 5` nodes.
    pub nodes: u8,
    /// Node `i ≥ 1` is linked to node `parents[i - 1] % i`: a spanning tree, so the network
    /// starts connected.
    pub parents: [u8; 5],
    /// Extra links, one bit per unordered pair in lexicographic order.
    pub chords: u16,
}

impl Topology {
    /// The graph: a spanning tree plus the chords.
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
    /// A node asks for the critical section, if it is in its remainder section.
    Request(u8, R),
    /// A node in the critical section leaves it.
    Release(u8),
    /// Deliver the head of the i-th directed link that has a message in flight.
    Deliver(u8),
    /// Fail the i-th link that is idle and not a bridge.
    LinkDown(u8),
    /// Form the i-th absent link.
    LinkUp(u8),
}

/// What a real link layer and a noisy channel add to the operations: appended to the input
/// after them (inputs recorded before these existed decode with none), each applied before
/// the operation numbered `before` (modulo one more than their count: the last slot is the
/// end of the run, before the drain).
#[derive(Debug, Clone, Copy, Arbitrary)]
pub struct Timed {
    /// The operation it comes before.
    pub before: u8,
    /// The fault.
    pub fault: Fault,
}

/// A fault of the link layer or the channel.
///
/// Its fuzz input layout is frozen: it decodes from exactly the bytes, and into exactly the
/// variants, of the derived layout it had before kind changes and flips existed
/// (`FaultLayout`); how a `Corrupt` corrupts comes from the bits of the variant choice that
/// the layout leaves free (half field corruptions, a quarter kind changes, a quarter flips).
/// [`Fault::as_recorded`] reads a fault as inputs recorded before then meant it.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// Corrupt the `msg`-th message in flight not corrupted yet, as `how` says: rewrite field
    /// `field` to `value`, change its kind into its `field`-th other kind, or flip bits of its
    /// frame ([`How::corruption`]).
    #[allow(missing_docs)]
    Corrupt {
        msg: u8,
        field: u8,
        value: Value,
        how: How,
    },
    /// Form the i-th absent link; only one end (the lower id if `lower`) is told now.
    FormAt(u8, bool),
    /// Fail the i-th link that is idle and not a bridge; only one end is told now.
    FailAt(u8, bool),
    /// Give the i-th pending link notice.
    Notice(u8),
}

impl Fault {
    /// The fault as inputs recorded before kind changes and flips existed meant it: every
    /// `Corrupt` rewrites a field.
    pub fn as_recorded(self) -> Fault {
        match self {
            Fault::Corrupt {
                msg, field, value, ..
            } => Fault::Corrupt {
                msg,
                field,
                value,
                how: How::Field,
            },
            other => other,
        }
    }
}

/// `faults` as inputs recorded before kind changes and flips existed meant them
/// ([`Fault::as_recorded`]): what the network bodies' `run_as_recorded` replay.
pub fn as_recorded(faults: &[Timed]) -> Vec<Timed> {
    faults
        .iter()
        .map(|t| Timed {
            fault: t.fault.as_recorded(),
            ..*t
        })
        .collect()
}

/// The frozen fuzz input layout of [`Fault`]: the derive it had before kind changes and
/// flips existed. Never change it: committed reproducers and corpora decode through it.
#[derive(Arbitrary)]
#[allow(dead_code)]
enum FaultLayout {
    Corrupt { msg: u8, field: u8, value: Value },
    FormAt(u8, bool),
    FailAt(u8, bool),
    Notice(u8),
}

impl<'a> Arbitrary<'a> for Fault {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let how = super::how_from_free_bits(u, 4);
        Ok(match FaultLayout::arbitrary(u)? {
            FaultLayout::Corrupt { msg, field, value } => Fault::Corrupt {
                msg,
                field,
                value,
                how,
            },
            FaultLayout::FormAt(x, lower) => Fault::FormAt(x, lower),
            FaultLayout::FailAt(x, lower) => Fault::FailAt(x, lower),
            FaultLayout::Notice(x) => Fault::Notice(x),
        })
    }

    fn size_hint(depth: usize) -> (usize, Option<usize>) {
        FaultLayout::size_hint(depth)
    }

    fn try_size_hint(
        depth: usize,
    ) -> Result<(usize, Option<usize>), arbitrary::MaxRecursionReached> {
        FaultLayout::try_size_hint(depth)
    }
}

/// Apply one fault.
pub fn apply_fault<P: TokenHarness>(net: &mut TokenNet<P>, fault: Fault) {
    match fault {
        Fault::Corrupt {
            msg,
            field,
            value,
            how,
        } => {
            if let Some((from, to, i)) = nth(&net.corruptible(), msg) {
                net.corrupt_as(from, to, i, how.corruption(usize::from(field), value));
            }
        }
        Fault::FormAt(x, lower) => {
            if let Some((a, b)) = nth(&net.absent_links(), x) {
                let (a, b) = if lower { (a, b) } else { (b, a) };
                net.form_at(a, b);
            }
        }
        Fault::FailAt(x, lower) => {
            if let Some((a, b)) = nth(&net.removable_links(), x) {
                let (a, b) = if lower { (a, b) } else { (b, a) };
                net.fail_at(a, b);
            }
        }
        Fault::Notice(x) => {
            if let Some((a, b)) = nth(&net.pending_notices(), x) {
                net.notice(a, b);
            }
        }
    }
}

fn nth<T: Copy>(items: &[T], i: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[usize::from(i) % items.len()])
}

/// Apply `ops` and `faults` to `net`, checking safety after each, then drain: every waiting
/// node must be served and the algorithm's drained checks must hold. Panics with `context` on
/// a violation. Returns the network as the schedule left it (the drain runs on a copy), for
/// callers that check more, such as the anomalies reported.
pub fn run_ops<P: TokenHarness, R: Copy + Debug>(
    net: TokenNet<P>,
    ops: &[Op<R>],
    faults: &[Timed],
    request: impl Fn(R) -> CsRequest,
    context: &impl Debug,
) -> TokenNet<P> {
    play_ops(net, ops, faults, request, context, true)
}

/// [`run_ops`] without the drain: the schedule alone, safety checked after every step. What
/// the coverage tests use to count what a schedule exercised (its corruptions), apart from
/// whether the drain then passes.
pub fn apply_ops<P: TokenHarness, R: Copy + Debug>(
    net: TokenNet<P>,
    ops: &[Op<R>],
    faults: &[Timed],
    request: impl Fn(R) -> CsRequest,
    context: &impl Debug,
) -> TokenNet<P> {
    play_ops(net, ops, faults, request, context, false)
}

fn play_ops<P: TokenHarness, R: Copy + Debug>(
    mut net: TokenNet<P>,
    ops: &[Op<R>],
    faults: &[Timed],
    request: impl Fn(R) -> CsRequest,
    context: &impl Debug,
    drain: bool,
) -> TokenNet<P> {
    let n = net.nodes.len() as u32;
    let node = |x: u8| NodeId(u32::from(x) % n);
    let ops = &ops[..ops.len().min(MAX_OPS)];
    let faults = &faults[..faults.len().min(MAX_OPS)];
    let slot = |t: &Timed| usize::from(t.before) % (ops.len() + 1);
    let apply_faults = |net: &mut TokenNet<P>, at: usize| {
        for t in faults.iter().filter(|t| slot(t) == at) {
            apply_fault(net, t.fault);
            if let Err(e) = net.check_safety() {
                panic!("after {t:?}, {context:?}: {e}\n{}", net.trace_text());
            }
        }
    };
    for (i, &op) in ops.iter().enumerate() {
        apply_faults(&mut net, i);
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
    apply_faults(&mut net, ops.len());
    let steps = ops.len() + faults.len();
    let rounds = DRAIN_ROUNDS + DRAIN_ROUNDS_PER_NODE_AND_OP * n as usize * steps;
    if drain {
        if let Err(e) = net.drain(rounds) {
            panic!("{context:?}: {e}\n{}", net.trace_text());
        }
    }
    net
}
