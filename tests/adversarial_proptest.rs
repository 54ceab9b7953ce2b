//! Property tests of the threat model: the fuzz bodies' networks (`tests/harness/*_network.rs`)
//! driven by structured, shrinkable schedules instead of raw bytes. Token networks get
//! corruption of any field of any message in flight and link events that each end notices at
//! its own time; permission systems get corruption, loss, duplication, early timeouts and (for
//! look-ahead) mode changes. Safety is checked after every step and liveness after the drain,
//! except where a corruption destroyed what no protocol can recover (each harness names those
//! cases). The weights favour deliveries and faults over requests, unlike uniform fuzz bytes,
//! so long interleavings of faults with traffic are common; a failure shrinks to a short
//! schedule and is kept in `tests/adversarial_proptest.proptest-regressions`.

#[path = "harness/corrupt.rs"]
mod corrupt;
#[path = "harness/input.rs"]
mod input;
#[path = "harness/network_input.rs"]
mod network_input;
#[path = "harness/perm_net.rs"]
mod perm_net;
#[path = "harness/perm_network.rs"]
mod perm_network;
#[path = "harness/prioritized_network.rs"]
mod prioritized_network;
#[path = "harness/reverse_link_network.rs"]
mod reverse_link_network;
#[path = "harness/token_net.rs"]
mod token_net;

mod cases;

use cases::cases;
use corrupt::Value;
use network_input::{Fault, Op, Timed, Topology};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

/// Node ids a corrupted id field may take: more than the largest network has.
const IDS: u8 = 7;

fn value() -> impl Strategy<Value = Value> {
    select(Value::all(IDS))
}

fn topology() -> impl Strategy<Value = Topology> {
    (any::<u8>(), any::<[u8; 5]>(), any::<u16>()).prop_map(|(nodes, parents, chords)| Topology {
        nodes,
        parents,
        chords,
    })
}

/// Token-network steps: mostly deliveries, some requests and releases, few symmetric link
/// changes (the asymmetric ones are faults).
fn op<R: Copy + std::fmt::Debug>(
    request: impl Strategy<Value = R>,
) -> impl Strategy<Value = Op<R>> {
    prop_oneof![
        3 => (any::<u8>(), request).prop_map(|(x, r)| Op::Request(x, r)),
        2 => any::<u8>().prop_map(Op::Release),
        8 => any::<u8>().prop_map(Op::Deliver),
        1 => any::<u8>().prop_map(Op::LinkDown),
        1 => any::<u8>().prop_map(Op::LinkUp),
    ]
}

/// A corruption or a link event noticed at one end, at any point of the schedule.
fn timed() -> impl Strategy<Value = Timed> {
    let fault = prop_oneof![
        3 => (any::<u8>(), 0u8..8, value())
            .prop_map(|(msg, field, value)| Fault::Corrupt { msg, field, value }),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(x, lower)| Fault::FormAt(x, lower)),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(x, lower)| Fault::FailAt(x, lower)),
        2 => any::<u8>().prop_map(Fault::Notice),
    ];
    (any::<u8>(), fault).prop_map(|(before, fault)| Timed { before, fault })
}

fn reverse_link_input() -> impl Strategy<Value = reverse_link_network::Input> {
    (
        topology(),
        any::<u8>(),
        any::<bool>(),
        vec(op(Just(())), 0..250),
        vec(timed(), 0..40),
    )
        .prop_map(
            |(topology, tokens, forwarding, ops, faults)| reverse_link_network::Input {
                topology,
                tokens,
                forwarding,
                ops,
                faults,
            },
        )
}

fn prioritized_input() -> impl Strategy<Value = prioritized_network::Input> {
    (
        topology(),
        (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()),
        vec(op((any::<u8>(), 0u32..6)), 0..250),
        vec(timed(), 0..40),
    )
        .prop_map(
            |(topology, (resources, policy, aging, holder), ops, faults)| {
                prioritized_network::Input {
                    topology,
                    resources,
                    policy,
                    aging,
                    holder,
                    ops,
                    faults,
                }
            },
        )
}

/// Permission steps: deliveries first, then requests, releases, timeouts, losses, duplicates,
/// corruptions and mode changes (ignored by Ricart–Agrawala).
fn permission_input() -> impl Strategy<Value = perm_network::Input> {
    use perm_network::Op;
    let op = prop_oneof![
        3 => any::<u8>().prop_map(Op::Request),
        2 => any::<u8>().prop_map(Op::Release),
        8 => any::<u8>().prop_map(Op::Deliver),
        1 => any::<u8>().prop_map(Op::Lose),
        1 => any::<u8>().prop_map(Op::Duplicate),
        1 => any::<u8>().prop_map(Op::Fire),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(x, m)| Op::Mode(x, m)),
        2 => (any::<u8>(), 0u8..8, value())
            .prop_map(|(msg, field, value)| Op::Corrupt { msg, field, value }),
    ];
    (any::<u8>(), any::<u64>(), vec(op, 0..250))
        .prop_map(|(hosts, seed, ops)| perm_network::Input { hosts, seed, ops })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn reverse_link_survives_corruption_and_one_sided_link_events(input in reverse_link_input()) {
        reverse_link_network::run(&input);
    }

    #[test]
    fn prioritized_survives_corruption_and_one_sided_link_events(input in prioritized_input()) {
        prioritized_network::run(&input);
    }

    #[test]
    fn look_ahead_survives_corruption_loss_and_mode_changes(input in permission_input()) {
        perm_network::run::<manet_mutex::look_ahead::Node>(&input);
    }

    #[test]
    fn ricart_agrawala_survives_corruption_and_loss(input in permission_input()) {
        perm_network::run::<manet_mutex::ricart_agrawala::Node>(&input);
    }
}
