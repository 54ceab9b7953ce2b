//! Permission-system schedules: steps, faults among them, and the run that checks them.

use manet_mutex::{Event, NodeId, Status};

use super::{nth, CorruptStep, MAX_OPS};
use crate::{PermNet, PermissionHarness};

/// Drain rounds: every host's request, its REPLYs and a few retransmissions fit many times.
const DRAIN_ROUNDS: usize = 256;

/// One step of a permission-system schedule; choices are taken modulo what exists, and a step
/// that is not possible now does nothing.
///
/// Its fuzz input layout is frozen ([`crate::fuzz`]): the bits of the variant choice that the
/// layout leaves free say how a `Corrupt` corrupts (half field corruptions, a quarter kind
/// changes, a quarter flips).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionOp {
    /// A host asks for the critical section, if it can now.
    Request(u8),
    /// A host in the critical section leaves it.
    Release(u8),
    /// Deliver the i-th deliverable message.
    Deliver(u8),
    /// Lose the i-th message in flight.
    Lose(u8),
    /// Put a second copy of the i-th message in flight.
    Duplicate(u8),
    /// The i-th armed timer expires.
    Fire(u8),
    /// Doze, wake, disconnect or reconnect (look-ahead only), if the host accepts it now.
    Mode(u8, u8),
    /// Corrupt a message in flight (a flipped frame is dropped by the receiver's codec: a
    /// loss).
    Corrupt(CorruptStep),
    /// A live host crashes for good ([`PermNet::crash`]).
    Crash(u8),
    /// A host restarts with empty state under its next incarnation ([`PermNet::restart`]; a
    /// live one crashes first).
    Restart(u8),
    /// The network splits: the hosts whose bit is set in the mask on one side
    /// ([`PermNet::partition`]; all or none set: it heals).
    Partition(u8),
    /// The partition heals ([`PermNet::merge`]).
    Merge,
    /// A host's perfect failure detector catches up ([`PermNet::detect`]), if the system has
    /// one.
    Detect(u8),
}

/// Apply `ops` to `net`, checking safety after each, then drain ([`PermNet::drain`]): every
/// waiting host must be served. Panics on a violation, with the trace if one is kept. Returns
/// the system as the steps left it (the drain runs on copies), for callers that check more,
/// such as the anomalies reported.
pub fn run_permission_schedule<H: PermissionHarness>(
    net: PermNet<H>,
    ops: &[PermissionOp],
) -> PermNet<H> {
    let net = apply_permission_schedule(net, ops);
    if let Err(e) = net.drain(DRAIN_ROUNDS) {
        panic!("{} hosts: {e}", net.nodes.len());
    }
    net
}

/// [`run_permission_schedule`] without the drain: the steps alone, safety checked after each.
/// What the coverage tests use to count what a schedule exercised (its corruptions), apart
/// from whether the drain then passes.
pub fn apply_permission_schedule<H: PermissionHarness>(
    mut net: PermNet<H>,
    ops: &[PermissionOp],
) -> PermNet<H> {
    let hosts = net.nodes.len() as u32;
    let node = |x: u8| NodeId(u32::from(x) % hosts);
    for (i, &op) in ops.iter().take(MAX_OPS).enumerate() {
        match op {
            PermissionOp::Request(x) => {
                let accepts = net.live(node(x))
                    && net.nodes[node(x).index()]
                        .clone()
                        .handle(Event::Request(manet_mutex::CsRequest::ONE))
                        .is_ok();
                if accepts {
                    net.request(node(x));
                }
            }
            PermissionOp::Release(x)
                if net.live(node(x)) && net.status(node(x)) == Status::Critical =>
            {
                net.release(node(x))
            }
            PermissionOp::Release(_) => {}
            PermissionOp::Deliver(x) => {
                if let Some(m) = nth(&net.deliverable(), x) {
                    net.deliver(m);
                }
            }
            PermissionOp::Lose(x) | PermissionOp::Duplicate(x) => {
                let all: Vec<usize> = (0..net.in_flight.len()).collect();
                match nth(&all, x) {
                    Some(m) if matches!(op, PermissionOp::Lose(_)) => net.lose(m),
                    Some(m) => net.duplicate(m),
                    None => {}
                }
            }
            PermissionOp::Fire(x) => {
                if let Some((at, timer)) = nth(&net.armed(), x) {
                    net.fire(at, timer);
                }
            }
            PermissionOp::Mode(x, which) if H::MODES && net.live(node(x)) => {
                let event = [
                    Event::Doze,
                    Event::Wake,
                    Event::Disconnect,
                    Event::Reconnect,
                ][usize::from(which % 4)]
                .clone();
                if net.nodes[node(x).index()]
                    .clone()
                    .handle(event.clone())
                    .is_ok()
                {
                    // Accepted by a copy, so accepted by the host: `handle` is deterministic.
                    let _ = net.apply(node(x), event);
                }
            }
            PermissionOp::Mode(..) => {}
            PermissionOp::Corrupt(step) => {
                if let Some(i) = nth(&net.corruptible(), step.msg) {
                    net.corrupt_as(i, step.corruption());
                }
            }
            PermissionOp::Crash(x) => net.crash(node(x)),
            PermissionOp::Restart(x) => net.restart_next(node(x)),
            PermissionOp::Partition(mask) => {
                let side: Vec<NodeId> = (0..hosts)
                    .filter(|&i| mask >> (i % 8) & 1 == 1)
                    .map(NodeId)
                    .collect();
                if side.is_empty() || side.len() == hosts as usize {
                    net.merge();
                } else {
                    net.partition(&side);
                }
            }
            PermissionOp::Merge => net.merge(),
            PermissionOp::Detect(x) if net.detector => net.detect(node(x)),
            PermissionOp::Detect(_) => {}
        }
        if let Err(e) = net.check_safety() {
            panic!(
                "after op {i} ({op:?}), {hosts} hosts: {e}\n{}",
                net.trace_text()
            );
        }
    }
    net
}
