//! Fuzz body, generic over the permission algorithms: 2 to 5 hosts driven by an arbitrary
//! schedule ([`PermissionOp`]) — requests, releases, delivery of any message in flight (any
//! order), loss or duplication of any message, expiry of any armed timer, (look-ahead) any
//! valid doze, wake, disconnect or reconnect, and corruption of any message in flight (a field,
//! its kind, or 1 to 4 bits of its frame, which the receiver's codec drops: a loss;
//! [`corrupt`](crate::corrupt)) — with `invariants::check_safety` after each one and, at the
//! end, a fair drain (`PermNet::drain`, retransmitting only after a loss) that must serve every
//! waiting host ([`run_permission_schedule`]).
//!
//! Compiled into the `ricart_agrawala_network` and `look_ahead_network` fuzz targets (`fuzz/`)
//! and run over seeded inputs by `tests/faults/fuzz_ricart_agrawala.rs` and `tests/faults/fuzz_look_ahead.rs`.
//! The input layout is frozen: the reproducers in `fuzz/regressions/*_network/` decode through
//! it (`src/fuzz/frozen.rs` in this crate); [`run_as_recorded`] replays them as they were recorded.

use arbitrary::Arbitrary;

use super::frozen::Frozen;
use crate::schedule::{apply_permission_schedule, run_permission_schedule, PermissionOp};
use crate::{PermNet, PermissionHarness};

/// A system of 2 to 5 hosts and what happens to it.
#[derive(Debug, Clone, Arbitrary)]
pub struct Input {
    /// `2 + hosts % 4` hosts.
    pub hosts: u8,
    /// Seeds look-ahead's initial `Info_set`s.
    pub seed: u64,
    /// The steps, in order.
    #[arbitrary(with = crate::fuzz::sized_vec)]
    pub ops: Vec<PermissionOp>,
    /// Majority mode (`with_majority(true)`, C7; issue 34): decoded after the steps (false
    /// past the end of the input, so a reproducer recorded before decodes with it only if it
    /// had bytes to spare; [`run_as_recorded`] turns it off).
    pub majority: bool,
}

/// Build the system `input` describes and play its steps
/// ([`run_permission_schedule`]).
pub fn run<H: PermissionHarness>(input: &Input) {
    play::<H>(input);
}

/// [`run`] with every corruption a field corruption: how the reproducers recorded before kind
/// changes and flips existed replay as they did then.
pub fn run_as_recorded<H: PermissionHarness>(input: &Input) {
    run::<H>(&Input {
        ops: input.ops.iter().map(|op| op.recorded()).collect(),
        majority: false,
        ..input.clone()
    });
}

/// [`run`], returning the system as the steps left it (before the drain, which runs on
/// copies), for tests that check more, such as the anomalies reported.
pub fn play<H: PermissionHarness>(input: &Input) -> PermNet<H> {
    run_permission_schedule(build(input), &input.ops)
}

/// The steps of `input` alone, safety checked after each, without the drain
/// ([`apply_permission_schedule`]): what the coverage tests
/// count.
pub fn play_schedule<H: PermissionHarness>(input: &Input) -> PermNet<H> {
    apply_permission_schedule(build(input), &input.ops)
}

fn build<H: PermissionHarness>(input: &Input) -> PermNet<H> {
    let hosts = 2 + u32::from(input.hosts % 4);
    let net = PermNet::<H>::new(hosts, input.seed)
        .unwrap_or_else(|e| panic!("{hosts} hosts must build: {e}"));
    if input.majority {
        PermNet::with_nodes(net.nodes.iter().map(H::in_majority_mode).collect())
    } else {
        net
    }
}
