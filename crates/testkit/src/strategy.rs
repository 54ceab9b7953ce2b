//! Proptest strategies for schedules of operations and faults, shrinkable: a failure shrinks
//! to a short schedule. The weights favour deliveries and faults over requests, unlike uniform
//! fuzz bytes, so long interleavings of faults with traffic are common. Each fault kind has a
//! weight in a profile ([`TokenFaults`], [`PermissionFaults`]); weight 0 turns it off. The
//! corruptions are the test kit's one corrupt operation ([`super::corrupt`]): a field, the kind
//! (into another kind the message's encoding decodes as), or 1 to 4 bits of the frame.

use alloc::vec::Vec;
use core::fmt::Debug;
use core::ops::Range;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use super::corrupt::{Flip, How, Value};
use super::datagram::{SessionOp, SessionSchedule, Weather};
use super::fuzz::{
    permission_network, prioritized_network, reverse_link_network, Recovering, Topology,
};
use super::schedule::{CorruptStep, PermissionOp, TimedFault, TokenFault, TokenOp, TokenSchedule};

/// Node ids a corrupted id field may take: more than the largest generated network has.
const IDS: u8 = 7;

/// What a corrupted field becomes: extremes, neighbours of the value, limits and node ids.
pub fn value() -> impl Strategy<Value = Value> {
    select(Value::all(IDS))
}

/// 1 to 4 bits of a frame, anywhere in it ([`Flip`]).
pub fn flip() -> impl Strategy<Value = Flip> {
    (1u8..=4, any::<[u16; 4]>()).prop_map(|(n, at)| Flip { n, at })
}

/// A corruption of the `msg`-th message in flight not corrupted yet ([`CorruptStep`]): a
/// field with weight `field`, a kind change (to the `field`-th other kind) with weight `kind`,
/// a flip with weight `flip`.
fn corruption(field: u32, kind: u32, flip_weight: u32) -> impl Strategy<Value = CorruptStep> {
    let step = |msg, field, value, how| CorruptStep {
        msg,
        field,
        value,
        how,
    };
    prop_oneof![
        field => (any::<u8>(), 0u8..8, value())
            .prop_map(move |(msg, field, value)| step(msg, field, value, How::Field)),
        kind => (any::<u8>(), any::<u8>())
            .prop_map(move |(msg, kind)| step(msg, kind, Value::Zero, How::Kind)),
        flip_weight => (any::<u8>(), flip())
            .prop_map(move |(msg, flip)| step(msg, 0, Value::Zero, How::Flip(flip))),
    ]
}

/// A connected topology of 2 to 6 nodes ([`Topology::graph`] builds it).
pub fn topology() -> impl Strategy<Value = Topology> {
    (any::<u8>(), any::<[u8; 5]>(), any::<u16>()).prop_map(|(nodes, parents, chords)| Topology {
        nodes,
        parents,
        chords,
    })
}

/// Token-network steps: mostly deliveries, some requests (drawn from `request`) and
/// releases, few symmetric link changes (`link_changes` is their weight, 0 for a static
/// network; the one-sided ones are faults).
pub fn token_op<R: Copy + Debug>(
    request: impl Strategy<Value = R>,
    link_changes: u32,
) -> impl Strategy<Value = TokenOp<R>> {
    prop_oneof![
        3 => (any::<u8>(), request).prop_map(|(x, r)| TokenOp::Request(x, r)),
        2 => any::<u8>().prop_map(TokenOp::Release),
        8 => any::<u8>().prop_map(TokenOp::Deliver),
        link_changes => any::<u8>().prop_map(TokenOp::LinkDown),
        link_changes => any::<u8>().prop_map(TokenOp::LinkUp),
    ]
}

/// The weights of the token networks' faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenFaults {
    /// Rewrite a field of a message in flight.
    pub corrupt: u32,
    /// Change the kind of a message in flight into another kind its encoding decodes as.
    pub kind: u32,
    /// Flip 1 to 4 bits of the frame of a message in flight (the frame check fails and the link
    /// session retransmits it: the original is delivered).
    pub flip: u32,
    /// A link forms or fails and only one end is told now.
    pub one_sided_link: u32,
    /// The other end is told.
    pub notice: u32,
    /// A node crashes for good. This and the weights below are the failure model's faults
    /// (issue 23), for networks with recovery ([`TokenFaults::recovering`]).
    pub crash: u32,
    /// A node restarts with empty state (after a crash, or crashing now).
    pub restart: u32,
    /// The network splits in two, or heals (each with this weight).
    pub partition: u32,
    /// A link with a token in flight breaks, the token lost.
    pub break_link: u32,
    /// An armed timer fires now, whatever its deadline (a clock that breaks the bounds).
    pub fire: u32,
}

impl TokenFaults {
    /// The profile of the crate's own adversarial tests (no failure faults).
    pub const ALL: TokenFaults = TokenFaults {
        corrupt: 3,
        kind: 2,
        flip: 1,
        one_sided_link: 1,
        notice: 2,
        crash: 0,
        restart: 0,
        partition: 0,
        break_link: 0,
        fire: 0,
    };
    /// No faults: a reliable network within the papers' contract.
    pub const NONE: TokenFaults = TokenFaults {
        corrupt: 0,
        kind: 0,
        flip: 0,
        one_sided_link: 0,
        notice: 0,
        crash: 0,
        restart: 0,
        partition: 0,
        break_link: 0,
        fire: 0,
    };
    /// The failure model's faults with every clock on time: crashes, restarts, partitions
    /// and merges, tokens lost on breaking links, and one-sided link events; no corruption,
    /// no timer fired at will. The strictest checks apply (rule (b) per part, no suspect
    /// anomaly, one token of each id per part once quiet).
    pub const CRASHES: TokenFaults = TokenFaults {
        corrupt: 0,
        kind: 0,
        flip: 0,
        one_sided_link: 1,
        notice: 2,
        crash: 1,
        restart: 1,
        partition: 1,
        break_link: 1,
        fire: 0,
    };
    /// Every fault: [`TokenFaults::ALL`], the failure model's, and timers fired at will.
    pub const RECOVERY: TokenFaults = TokenFaults {
        crash: 1,
        restart: 1,
        partition: 1,
        break_link: 1,
        fire: 4,
        ..TokenFaults::ALL
    };

    /// Whether the profile has failure faults.
    pub fn fails(&self) -> bool {
        self.crash + self.restart + self.partition + self.break_link + self.fire > 0
    }

    /// The recovery mode a network needs for the profile: none without failure faults,
    /// timers fired at will if `fire` has weight.
    pub fn recovering(&self) -> Recovering {
        match (self.fails(), self.fire > 0) {
            (false, _) => Recovering::Off,
            (true, false) => Recovering::Timely,
            (true, true) => Recovering::AtWill,
        }
    }
}

/// A fault from `profile` at any point of the schedule; with [`TokenFaults::NONE`], a harmless
/// notice (give one that is pending: none is, without one-sided link events).
pub fn timed_fault(profile: TokenFaults) -> impl Strategy<Value = TimedFault> {
    let notice = profile.notice.max(u32::from(profile == TokenFaults::NONE));
    let fault = prop_oneof![
        profile.corrupt + profile.kind + profile.flip =>
            corruption(profile.corrupt, profile.kind, profile.flip).prop_map(TokenFault::Corrupt),
        profile.one_sided_link => (any::<u8>(), any::<bool>())
            .prop_map(|(x, lower)| TokenFault::FormAt(x, lower)),
        profile.one_sided_link => (any::<u8>(), any::<bool>())
            .prop_map(|(x, lower)| TokenFault::FailAt(x, lower)),
        notice => any::<u8>().prop_map(TokenFault::Notice),
        profile.crash => any::<u8>().prop_map(TokenFault::Crash),
        profile.restart => any::<u8>().prop_map(TokenFault::Restart),
        profile.partition => any::<u8>().prop_map(TokenFault::Partition),
        profile.partition => Just(TokenFault::Merge),
        profile.fire => any::<u8>().prop_map(TokenFault::Fire),
        profile.break_link => any::<u8>().prop_map(TokenFault::Break),
    ];
    (any::<u8>(), fault).prop_map(|(before, fault)| TimedFault { before, fault })
}

/// A token-network schedule: `ops` steps (requests drawn from `request`, link changes of
/// weight `link_changes`) and faults from `profile`, for
/// [`run_token_schedule`](crate::run_token_schedule).
pub fn token_schedule<R: Copy + Debug>(
    request: impl Strategy<Value = R>,
    link_changes: u32,
    ops: Range<usize>,
    profile: TokenFaults,
) -> impl Strategy<Value = TokenSchedule<R>> {
    let faults = if profile == TokenFaults::NONE {
        0..1
    } else {
        0..ops.end / 6 + 1
    };
    (
        vec(token_op(request, link_changes), ops),
        vec(timed_fault(profile), faults),
    )
        .prop_map(|(ops, faults)| TokenSchedule { ops, faults })
}

/// A KRL/KRLF fuzz input with every fault kind.
pub fn reverse_link_input() -> impl Strategy<Value = reverse_link_network::Input> {
    reverse_link_input_with(TokenFaults::ALL)
}

/// A KRL/KRLF fuzz input with the faults of `profile` (with recovery if it has failure
/// faults: [`TokenFaults::recovering`]).
pub fn reverse_link_input_with(
    profile: TokenFaults,
) -> impl Strategy<Value = reverse_link_network::Input> {
    let recovering = profile.recovering();
    (
        topology(),
        any::<u8>(),
        any::<bool>(),
        token_schedule(Just(()), 1, 0..250, profile),
    )
        .prop_map(
            move |(topology, tokens, forwarding, TokenSchedule { ops, faults })| {
                reverse_link_network::Input {
                    topology,
                    tokens,
                    forwarding,
                    ops,
                    faults,
                    selectors: Vec::new(),
                    recovering,
                    majority: false,
                }
            },
        )
}

/// A prioritized fuzz input with every fault kind.
pub fn prioritized_input() -> impl Strategy<Value = prioritized_network::Input> {
    prioritized_input_with(TokenFaults::ALL)
}

/// A prioritized fuzz input with the faults of `profile` (with recovery if it has failure
/// faults: [`TokenFaults::recovering`]).
pub fn prioritized_input_with(
    profile: TokenFaults,
) -> impl Strategy<Value = prioritized_network::Input> {
    let recovering = profile.recovering();
    (
        topology(),
        (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()),
        token_schedule((any::<u8>(), 0u32..6), 1, 0..250, profile),
    )
        .prop_map(
            move |(topology, (resources, policy, aging, holder), TokenSchedule { ops, faults })| {
                prioritized_network::Input {
                    topology,
                    resources,
                    policy,
                    aging,
                    holder,
                    ops,
                    faults,
                    selectors: Vec::new(),
                    recovering,
                    majority: false,
                }
            },
        )
}

/// Datagram weather for [`SessionNet`](super::SessionNet): loss up to `max_loss` per mille,
/// duplication up to 200 per mille, delays of 1 to 1–6 time units (reordering above 1).
pub fn weather(max_loss: u32) -> impl Strategy<Value = Weather> {
    (0..=max_loss, 0u32..=200, 1u64..=6).prop_map(|(loss, duplicate, max_delay)| Weather {
        loss,
        duplicate,
        max_delay,
    })
}

/// A session-network step: requests (drawn from `request`) and waits, and, with weight
/// `faults` each, a link falling silent (both ways or one way) or a node falling silent for
/// up to `max_silence` time units, and an application closing a link.
pub fn session_op<R: Copy + Debug>(
    request: impl Strategy<Value = R>,
    faults: u32,
    max_silence: u16,
) -> impl Strategy<Value = SessionOp<R>> {
    prop_oneof![
        4 => (any::<u8>(), request).prop_map(|(x, r)| SessionOp::Request(x, r)),
        4 => any::<u8>().prop_map(SessionOp::Wait),
        faults => (any::<u8>(), 1..=max_silence, any::<u8>())
            .prop_map(|(link, ticks, direction)| SessionOp::Flap { link, ticks, direction }),
        faults => (any::<u8>(), 1..=max_silence)
            .prop_map(|(node, ticks)| SessionOp::Silence { node, ticks }),
        faults => (any::<u8>(), any::<bool>())
            .prop_map(|(link, lower)| SessionOp::Close { link, lower }),
    ]
}

/// A session-network run without silences or closes: weather (no loss, duplication and
/// reordering as [`weather`]), a seed, and `ops` steps: requests and waits, and with weight
/// `strays` (against 8) a stray frame naming a newer epoch of a neighbour
/// ([`SessionOp::Stray`]). Every neighbour stays live, so no incarnation may end.
pub fn stray_session_schedule<R: Copy + Debug>(
    request: impl Strategy<Value = R>,
    ops: Range<usize>,
    strays: u32,
) -> impl Strategy<Value = SessionSchedule<R>> {
    let op = prop_oneof![
        8 => session_op(request, 0, 1),
        strays => (any::<u8>(), any::<bool>(), any::<u8>(), any::<u64>(), any::<u64>())
            .prop_map(|(link, lower, kind, sender, receiver)| SessionOp::Stray {
                link,
                lower,
                kind,
                sender,
                receiver,
            }),
    ];
    (weather(0), any::<u64>(), vec(op, ops)).prop_map(|(weather, seed, ops)| SessionSchedule {
        weather,
        seed,
        ops,
    })
}

/// A session-network run: weather (loss up to `max_loss` per mille), a seed, and `ops` steps
/// of [`session_op`].
pub fn session_schedule<R: Copy + Debug>(
    request: impl Strategy<Value = R>,
    ops: Range<usize>,
    max_loss: u32,
    faults: u32,
    max_silence: u16,
) -> impl Strategy<Value = SessionSchedule<R>> {
    (
        weather(max_loss),
        any::<u64>(),
        vec(session_op(request, faults, max_silence), ops),
    )
        .prop_map(|(weather, seed, ops)| SessionSchedule { weather, seed, ops })
}

/// The weights of the permission systems' faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermissionFaults {
    /// Lose a message in flight.
    pub lose: u32,
    /// Put a second copy of a message in flight.
    pub duplicate: u32,
    /// A retransmission timer expires (early or not).
    pub fire: u32,
    /// Doze, wake, disconnect or reconnect (ignored by Ricart–Agrawala).
    pub modes: u32,
    /// Rewrite a field of a message in flight.
    pub corrupt: u32,
    /// Change the kind of a message in flight into another kind its encoding decodes as.
    pub kind: u32,
    /// Flip 1 to 4 bits of the frame of a message in flight (the frame check fails and the
    /// receiver's codec drops it: a loss).
    pub flip: u32,
    /// A host crashes for good.
    pub crash: u32,
    /// A host restarts with empty state (after a crash, or crashing now).
    pub restart: u32,
    /// The network splits in two, or heals (each with this weight).
    pub partition: u32,
    /// A host's perfect failure detector catches up (only where the system has one).
    pub detect: u32,
}

impl PermissionFaults {
    /// The profile of the crate's own adversarial tests.
    pub const ALL: PermissionFaults = PermissionFaults {
        lose: 1,
        duplicate: 1,
        fire: 1,
        modes: 1,
        corrupt: 2,
        kind: 1,
        flip: 1,
        crash: 1,
        restart: 1,
        partition: 1,
        detect: 0,
    };
    /// Hosts failing, and nothing else but loss, duplicates and timers: crash-stop,
    /// crash-restart, partitions and merges, and a perfect detector's suspicions.
    pub const CRASHES: PermissionFaults = PermissionFaults {
        lose: 1,
        duplicate: 1,
        fire: 2,
        modes: 0,
        corrupt: 0,
        kind: 0,
        flip: 0,
        crash: 1,
        restart: 1,
        partition: 1,
        detect: 2,
    };
    /// No faults: reliable delivery in any order.
    pub const NONE: PermissionFaults = PermissionFaults {
        lose: 0,
        duplicate: 0,
        fire: 0,
        modes: 0,
        corrupt: 0,
        kind: 0,
        flip: 0,
        crash: 0,
        restart: 0,
        partition: 0,
        detect: 0,
    };
}

/// A permission-system step: deliveries first, then requests, releases and the faults of
/// `profile` (a fault of weight 0 never comes).
pub fn permission_op(profile: PermissionFaults) -> impl Strategy<Value = PermissionOp> {
    let host = || any::<u8>();
    let mut options: Vec<(u32, BoxedStrategy<PermissionOp>)> = vec![
        (3, host().prop_map(PermissionOp::Request).boxed()),
        (2, host().prop_map(PermissionOp::Release).boxed()),
        (8, host().prop_map(PermissionOp::Deliver).boxed()),
        (profile.lose, host().prop_map(PermissionOp::Lose).boxed()),
        (
            profile.duplicate,
            host().prop_map(PermissionOp::Duplicate).boxed(),
        ),
        (profile.fire, host().prop_map(PermissionOp::Fire).boxed()),
        (
            profile.modes,
            (host(), host())
                .prop_map(|(x, m)| PermissionOp::Mode(x, m))
                .boxed(),
        ),
        (profile.crash, host().prop_map(PermissionOp::Crash).boxed()),
        (
            profile.restart,
            host().prop_map(PermissionOp::Restart).boxed(),
        ),
        (
            profile.partition,
            host().prop_map(PermissionOp::Partition).boxed(),
        ),
        (profile.partition, Just(PermissionOp::Merge).boxed()),
        (
            profile.detect,
            host().prop_map(PermissionOp::Detect).boxed(),
        ),
    ];
    let corrupt = profile.corrupt + profile.kind + profile.flip;
    if corrupt > 0 {
        let step = corruption(profile.corrupt, profile.kind, profile.flip);
        options.push((corrupt, step.prop_map(PermissionOp::Corrupt).boxed()));
    }
    proptest::strategy::Union::new_weighted(
        options
            .into_iter()
            .filter(|(weight, _)| *weight > 0)
            .collect(),
    )
}

/// A permission-system schedule: `ops` steps of [`permission_op`] with the faults of
/// `profile`, for [`run_permission_schedule`](crate::run_permission_schedule).
pub fn permission_schedule(
    ops: Range<usize>,
    profile: PermissionFaults,
) -> impl Strategy<Value = Vec<PermissionOp>> {
    vec(permission_op(profile), ops)
}

/// A permission fuzz input (2 to 5 hosts) with every fault kind.
pub fn permission_input() -> impl Strategy<Value = permission_network::Input> {
    permission_input_with(PermissionFaults::ALL)
}

/// A permission fuzz input (2 to 5 hosts) with the faults of `profile`.
pub fn permission_input_with(
    profile: PermissionFaults,
) -> impl Strategy<Value = permission_network::Input> {
    (
        any::<u8>(),
        any::<u64>(),
        permission_schedule(0..250, profile),
    )
        .prop_map(|(hosts, seed, ops)| permission_network::Input {
            hosts,
            seed,
            ops,
            majority: false,
        })
}

/// The property tests' case count, one convention for every test: `PROPTEST_CASES` if set
/// (an explicit count in a proptest config would otherwise override it), 20 times `default`
/// with `MANET_MUTEX_SOAK=1`, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if std::env::var_os("MANET_MUTEX_SOAK").is_some() {
            default.saturating_mul(20)
        } else {
            default
        })
}
