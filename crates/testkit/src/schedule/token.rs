//! Token-network schedules: steps, faults, and the run that checks them.

use core::fmt::Debug;

use arbitrary::Arbitrary;
use manet_mutex::{CsRequest, NodeId, Status};

use super::{nth, CorruptStep, MAX_OPS};
use crate::{TokenHarness, TokenNet};

/// Fair drain rounds for a network that saw no step: on six nodes a request and its token
/// cross at most five links each, plus a few reversals.
const DRAIN_ROUNDS: usize = 256;
/// Extra drain rounds per node and per step applied. While a formed link's first height
/// announcement is in flight, partial reversal can count two nodes up without bound, one level
/// per delivery; afterwards the nodes cut off below such a peak climb back over it one level
/// per exchange before their requests (or released resources) get through. The highest height
/// grows by at most one level per step, so this bounds that climb generously. (A prioritized
/// run with a peak at 80 needed 261 rounds, more than the flat 256 first used:
/// `fuzz/regressions/prioritized_network/slow-climb-over-a-counted-up-peak`.)
const DRAIN_ROUNDS_PER_NODE_AND_OP: usize = 8;

/// One step of a token-network schedule; `R` is what a request asks for (turned into a
/// [`CsRequest`] by the run). Node and link choices are taken modulo what exists; a step that
/// is not possible in the current state (a request from a node that is not in the remainder
/// section, a release outside the critical section, nothing to deliver) does nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum TokenOp<R> {
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

/// What a real link layer and a noisy channel add to the steps, each applied before the step
/// numbered `before` (modulo one more than their number: the last slot is the end of the
/// schedule, before the drain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub struct TimedFault {
    /// The step it comes before.
    pub before: u8,
    /// The fault.
    pub fault: TokenFault,
}

/// A fault of the link layer or the channel.
///
/// Its fuzz input layout is frozen ([`crate::fuzz`]): the bits of the variant choice that the
/// layout leaves free say how a `Corrupt` corrupts (half field corruptions, a quarter kind
/// changes, a quarter flips).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenFault {
    /// Corrupt a message in flight (the link session retransmits a flipped frame: the
    /// original is delivered).
    Corrupt(CorruptStep),
    /// Form the i-th absent link; only one end (the lower id if `lower`) is told now.
    FormAt(u8, bool),
    /// Fail the i-th link that is idle and not a bridge; only one end is told now.
    FailAt(u8, bool),
    /// Give the i-th pending link notice.
    Notice(u8),
    /// A node crashes for good ([`TokenNet::crash`]). This and the faults below are the
    /// failure model's (issue 23): they need a network with recovery, and do nothing in one
    /// without.
    Crash(u8),
    /// A node restarts with empty state ([`TokenNet::restart`]; a live one crashes first).
    Restart(u8),
    /// The network splits: the nodes whose bit is set in the mask (bit `i % 8` for node `i`)
    /// on one side ([`TokenNet::partition`]; all or none set: it heals).
    Partition(u8),
    /// The partition heals ([`TokenNet::merge`]).
    Merge,
    /// The i-th armed timer fires now, whatever its deadline ([`TokenNet::fire`]): a clock
    /// that breaks the bounds.
    Fire(u8),
    /// The i-th link with a token in flight breaks, the token lost ([`TokenNet::break_link`]).
    Break(u8),
}

impl TokenFault {
    /// Whether this is one of the failure model's faults (crash, restart, partition, merge,
    /// timer fired at will, token lost on a breaking link).
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            TokenFault::Crash(_)
                | TokenFault::Restart(_)
                | TokenFault::Partition(_)
                | TokenFault::Merge
                | TokenFault::Fire(_)
                | TokenFault::Break(_)
        )
    }
}

/// A token-network schedule: the steps, and the faults timed between them
/// ([`token_schedule`](crate::token_schedule) generates them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenSchedule<R> {
    /// The steps, in order.
    pub ops: Vec<TokenOp<R>>,
    /// The faults, each before the step it names.
    pub faults: Vec<TimedFault>,
}

/// Apply `schedule` to `net`, checking safety after every step and fault, then drain (see
/// [`TokenNet::drain`]): every waiting node must be served and the algorithm's drained checks
/// must hold. `request` turns a step's request into what the node asks for. Panics, with
/// `context` and the trace, on a violation. Returns the network as the schedule left it (the
/// drain runs on a copy), for callers that check more, such as the anomalies reported.
pub fn run_token_schedule<P: TokenHarness, R: Copy + Debug>(
    net: TokenNet<P>,
    schedule: &TokenSchedule<R>,
    request: impl Fn(R) -> CsRequest,
    context: &impl Debug,
) -> TokenNet<P> {
    let net = apply_token_schedule(net, schedule, request, context);
    drain_token_steps(&net, schedule.ops.len(), schedule.faults.len(), context);
    net
}

/// [`run_token_schedule`] without the drain: the schedule alone, safety checked after every
/// step. What the coverage tests use to count what a schedule exercised (its corruptions),
/// apart from whether the drain then passes.
pub fn apply_token_schedule<P: TokenHarness, R: Copy + Debug>(
    net: TokenNet<P>,
    schedule: &TokenSchedule<R>,
    request: impl Fn(R) -> CsRequest,
    context: &impl Debug,
) -> TokenNet<P> {
    apply_token_steps(net, &schedule.ops, &schedule.faults, request, context)
}

/// [`apply_token_schedule`] on a schedule held as its two parts (the fuzz inputs hold them as
/// fields of their own).
pub(crate) fn apply_token_steps<P: TokenHarness, R: Copy + Debug>(
    mut net: TokenNet<P>,
    ops: &[TokenOp<R>],
    faults: &[TimedFault],
    request: impl Fn(R) -> CsRequest,
    context: &impl Debug,
) -> TokenNet<P> {
    let n = net.nodes.len() as u32;
    let node = |x: u8| NodeId(u32::from(x) % n);
    let ops = &ops[..ops.len().min(MAX_OPS)];
    let faults = &faults[..faults.len().min(MAX_OPS)];
    let slot = |t: &TimedFault| usize::from(t.before) % (ops.len() + 1);
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
            TokenOp::Request(x, r)
                if net.live(node(x)) && net.status(node(x)) == Status::Remainder =>
            {
                net.request(node(x), request(r));
            }
            TokenOp::Release(x) if net.live(node(x)) && net.status(node(x)) == Status::Critical => {
                net.release(node(x))
            }
            TokenOp::Deliver(x) => {
                if let Some((from, to)) = nth(&net.busy_links(), x) {
                    net.deliver(from, to);
                }
            }
            TokenOp::LinkDown(x) => {
                if let Some((a, b)) = nth(&net.removable_links(), x) {
                    net.fail(a, b);
                }
            }
            TokenOp::LinkUp(x) => {
                if let Some((a, b)) = nth(&net.absent_links(), x) {
                    net.form(a, b);
                }
            }
            TokenOp::Request(..) | TokenOp::Release(_) => {}
        }
        if let Err(e) = net.check_safety() {
            panic!(
                "after op {i} ({op:?}), {context:?}: {e}\n{}",
                net.trace_text()
            );
        }
    }
    apply_faults(&mut net, ops.len());
    net
}

/// The drain after a schedule of `ops` steps and `faults` faults ([`TokenNet::drain`], with
/// rounds enough for what the schedule may have built up); panics with `context` if it fails.
pub(crate) fn drain_token_steps<P: TokenHarness>(
    net: &TokenNet<P>,
    ops: usize,
    faults: usize,
    context: &impl Debug,
) {
    let steps = ops.min(MAX_OPS) + faults.min(MAX_OPS);
    let rounds = DRAIN_ROUNDS + DRAIN_ROUNDS_PER_NODE_AND_OP * net.nodes.len() * steps;
    if let Err(e) = net.drain(rounds) {
        panic!("{context:?}: {e}\n{}", net.trace_text());
    }
}

/// Apply one fault.
fn apply_fault<P: TokenHarness>(net: &mut TokenNet<P>, fault: TokenFault) {
    match fault {
        TokenFault::Corrupt(step) => {
            if let Some((from, to, i)) = nth(&net.corruptible(), step.msg) {
                net.corrupt_as(from, to, i, step.corruption());
            }
        }
        TokenFault::FormAt(x, lower) => {
            if let Some((a, b)) = nth(&net.absent_links(), x) {
                let (a, b) = if lower { (a, b) } else { (b, a) };
                net.form_at(a, b);
            }
        }
        TokenFault::FailAt(x, lower) => {
            if let Some((a, b)) = nth(&net.removable_links(), x) {
                let (a, b) = if lower { (a, b) } else { (b, a) };
                net.fail_at(a, b);
            }
        }
        TokenFault::Notice(x) => {
            if let Some((a, b)) = nth(&net.pending_notices(), x) {
                net.notice(a, b);
            }
        }
        TokenFault::Crash(x) => net.crash(node_of(net, x)),
        TokenFault::Restart(x) => net.restart(node_of(net, x)),
        TokenFault::Partition(mask) => {
            let n = net.nodes.len() as u32;
            let side: Vec<NodeId> = (0..n)
                .filter(|&i| mask >> (i % 8) & 1 == 1)
                .map(NodeId)
                .collect();
            if side.is_empty() || side.len() == n as usize {
                net.merge();
            } else {
                net.partition(&side);
            }
        }
        TokenFault::Merge => net.merge(),
        TokenFault::Fire(x) => {
            if let Some((at, timer)) = nth(&net.armed(), x) {
                net.fire(at, timer);
            }
        }
        TokenFault::Break(x) => {
            if let Some((a, b)) = nth(&net.token_links(), x) {
                net.break_link(a, b);
            }
        }
    }
}

/// Node `x` of `net`, modulo its size.
fn node_of<P: TokenHarness>(net: &TokenNet<P>, x: u8) -> NodeId {
    NodeId(u32::from(x) % net.nodes.len() as u32)
}
