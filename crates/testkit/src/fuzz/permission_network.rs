//! Fuzz body, generic over the permission algorithms: 2 to 5 hosts driven by an arbitrary
//! sequence of operations — requests, releases, delivery of any message in flight (any order),
//! loss or duplication of any message, expiry of any armed timer, (look-ahead) any valid
//! doze, wake, disconnect or reconnect, and corruption of any message in flight (a field, its
//! kind, or 1 to 4 bits of its frame, which the receiver's codec drops: a loss;
//! [`corrupt`](crate::corrupt)) — with `invariants::check_safety` after each one and,
//! at the end, a fair drain (`PermNet::drain`, retransmitting only after a loss) that must
//! serve every waiting host.
//!
//! Compiled into the `ricart_agrawala_network` and `look_ahead_network` fuzz targets (`fuzz/`)
//! and run over seeded inputs by `tests/faults/fuzz_ricart_agrawala.rs` and `tests/faults/fuzz_look_ahead.rs`.
//! The input layout is frozen: the reproducers in `fuzz/regressions/*_network/` decode through
//! it ([`Op`]); [`run_as_recorded`] replays them as they were recorded.

use arbitrary::{Arbitrary, Unstructured};
use manet_mutex::{Event, NodeId, Status};

use crate::corrupt::{How, Value};
use crate::{PermNet, PermissionHarness};

/// Operations beyond this are ignored, so one input is one bounded run.
const MAX_OPS: usize = 256;
/// Drain rounds: every host's request, its REPLYs and a few retransmissions fit many times.
const DRAIN_ROUNDS: usize = 256;

/// A system of 2 to 5 hosts and what happens to it.
#[derive(Debug, Clone, Arbitrary)]
pub struct Input {
    /// `2 + hosts % 4` hosts.
    pub hosts: u8,
    /// Seeds look-ahead's initial `Info_set`s.
    pub seed: u64,
    /// The operations, in order.
    #[arbitrary(with = crate::fuzz::sized_vec)]
    pub ops: Vec<Op>,
}

/// One step; choices are taken modulo what exists, and a step that is not possible now does
/// nothing.
///
/// Its fuzz input layout is frozen: it decodes from exactly the bytes, and into exactly the
/// variants, of the derived layout it had before kind changes and flips existed
/// (`OpLayout`); how a `Corrupt` corrupts comes from the bits of the variant choice that the
/// layout leaves free (half field corruptions, a quarter kind changes, a quarter flips).
/// [`Op::as_recorded`] reads an operation as inputs recorded before then meant it.
#[derive(Debug, Clone, Copy)]
pub enum Op {
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
    /// Corrupt the `msg`-th message in flight not corrupted yet, as `how` says: rewrite field
    /// `field` to `value`, change its kind into its `field`-th other kind, or flip bits of its
    /// frame ([`How::corruption`]; a flipped frame is dropped, a loss).
    Corrupt {
        /// Which message.
        msg: u8,
        /// Which field (modulo the message's fields), or which other kind.
        field: u8,
        /// What the field becomes.
        value: Value,
        /// A field, the kind, or bits of the frame.
        how: How,
    },
}

impl Op {
    /// The operation as inputs recorded before kind changes and flips existed meant it: every
    /// `Corrupt` rewrites a field.
    pub fn as_recorded(self) -> Op {
        match self {
            Op::Corrupt {
                msg, field, value, ..
            } => Op::Corrupt {
                msg,
                field,
                value,
                how: How::Field,
            },
            other => other,
        }
    }
}

/// The frozen fuzz input layout of [`Op`]: the derive it had before kind changes and flips
/// existed. Never change it: committed reproducers and corpora decode through it.
#[derive(Arbitrary)]
#[allow(dead_code)]
enum OpLayout {
    Request(u8),
    Release(u8),
    Deliver(u8),
    Lose(u8),
    Duplicate(u8),
    Fire(u8),
    Mode(u8, u8),
    Corrupt { msg: u8, field: u8, value: Value },
}

impl<'a> Arbitrary<'a> for Op {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let how = super::how_from_free_bits(u, 8);
        Ok(match OpLayout::arbitrary(u)? {
            OpLayout::Request(x) => Op::Request(x),
            OpLayout::Release(x) => Op::Release(x),
            OpLayout::Deliver(x) => Op::Deliver(x),
            OpLayout::Lose(x) => Op::Lose(x),
            OpLayout::Duplicate(x) => Op::Duplicate(x),
            OpLayout::Fire(x) => Op::Fire(x),
            OpLayout::Mode(x, m) => Op::Mode(x, m),
            OpLayout::Corrupt { msg, field, value } => Op::Corrupt {
                msg,
                field,
                value,
                how,
            },
        })
    }

    fn size_hint(depth: usize) -> (usize, Option<usize>) {
        OpLayout::size_hint(depth)
    }

    fn try_size_hint(
        depth: usize,
    ) -> Result<(usize, Option<usize>), arbitrary::MaxRecursionReached> {
        OpLayout::try_size_hint(depth)
    }
}

fn nth<T: Copy>(items: &[T], i: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[usize::from(i) % items.len()])
}

/// Build the system `input` describes and play its operations ([`run_ops`]).
pub fn run<H: PermissionHarness>(input: &Input) {
    play::<H>(input);
}

/// [`run`] with every corruption a field corruption ([`Op::as_recorded`]): how the reproducers
/// recorded before kind changes and flips existed replay as they did then.
pub fn run_as_recorded<H: PermissionHarness>(input: &Input) {
    run::<H>(&Input {
        ops: input.ops.iter().map(|op| op.as_recorded()).collect(),
        ..input.clone()
    });
}

/// [`run`], returning the system as the operations left it (before the drain, which runs on
/// copies), for tests that check more, such as the anomalies reported.
pub fn play<H: PermissionHarness>(input: &Input) -> PermNet<H> {
    run_ops(build(input), &input.ops)
}

/// The operations of `input` alone, safety checked after each, without the drain
/// ([`apply_ops`]): what the coverage tests count.
pub fn play_schedule<H: PermissionHarness>(input: &Input) -> PermNet<H> {
    apply_ops(build(input), &input.ops)
}

fn build<H: PermissionHarness>(input: &Input) -> PermNet<H> {
    let hosts = 2 + u32::from(input.hosts % 4);
    PermNet::<H>::new(hosts, input.seed).unwrap_or_else(|e| panic!("{hosts} hosts must build: {e}"))
}

/// Apply `ops` to `net`, checking safety after each, then drain ([`PermNet::drain`]): every
/// waiting host must be served. Panics on a violation, with the trace if one is kept. Returns
/// the system as the operations left it (the drain runs on copies), for callers that check
/// more, such as the anomalies reported.
pub fn run_ops<H: PermissionHarness>(net: PermNet<H>, ops: &[Op]) -> PermNet<H> {
    let net = apply_ops(net, ops);
    if let Err(e) = net.drain(DRAIN_ROUNDS) {
        panic!("{} hosts: {e}", net.nodes.len());
    }
    net
}

/// [`run_ops`] without the drain: the operations alone, safety checked after each. What the
/// coverage tests use to count what a schedule exercised (its corruptions), apart from whether
/// the drain then passes.
pub fn apply_ops<H: PermissionHarness>(mut net: PermNet<H>, ops: &[Op]) -> PermNet<H> {
    let hosts = net.nodes.len() as u32;
    let node = |x: u8| NodeId(u32::from(x) % hosts);
    for (i, &op) in ops.iter().take(MAX_OPS).enumerate() {
        match op {
            Op::Request(x) => {
                let accepts = net.nodes[node(x).index()]
                    .clone()
                    .handle(Event::Request(manet_mutex::CsRequest::ONE))
                    .is_ok();
                if accepts {
                    net.request(node(x));
                }
            }
            Op::Release(x) if net.status(node(x)) == Status::Critical => net.release(node(x)),
            Op::Release(_) => {}
            Op::Deliver(x) => {
                if let Some(m) = nth(&net.deliverable(), x) {
                    net.deliver(m);
                }
            }
            Op::Lose(x) | Op::Duplicate(x) => {
                let all: Vec<usize> = (0..net.in_flight.len()).collect();
                match nth(&all, x) {
                    Some(m) if matches!(op, Op::Lose(_)) => net.lose(m),
                    Some(m) => net.duplicate(m),
                    None => {}
                }
            }
            Op::Fire(x) => {
                if let Some((at, timer)) = nth(&net.armed(), x) {
                    net.fire(at, timer);
                }
            }
            Op::Mode(x, which) if H::MODES => {
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
            Op::Mode(..) => {}
            Op::Corrupt {
                msg,
                field,
                value,
                how,
            } => {
                if let Some(i) = nth(&net.corruptible(), msg) {
                    net.corrupt_as(i, how.corruption(usize::from(field), value));
                }
            }
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
