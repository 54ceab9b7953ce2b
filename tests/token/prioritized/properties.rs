//! Property tests: random connected graphs, `k`, `h`, priorities, policies and churn, with the
//! invariants checked after every step and every request served once churn stops. Without
//! corruption, every anomaly a node reports is noise, even when each end of a link learns of
//! its changes at its own time.

use super::fixtures::{ask, drain, edge, in_cs, n, net};
use manet_mutex::fence::Fences;
use manet_mutex::prioritized::{network, Message, Node, Policy, Resources, Settings};
use manet_mutex::queue::Priority;
use manet_mutex::token::{Height, Sealed};
use manet_mutex::{Anomaly, CsRequest, Event, FenceCopies, Protocol, Severity, Status};
use manet_mutex_testkit::fuzz::prioritized_network;
use manet_mutex_testkit::strategy::{cases, prioritized_input_with, TokenFaults};
use proptest::collection::vec;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Request {
        node: u32,
        h: u32,
        priority: u32,
    },
    Release(u32),
    Deliver(u32),
    /// Fail the `drop`-th link (if that keeps the graph connected and it is idle), then form
    /// a link between `a` and `b`.
    Churn {
        drop: u32,
        a: u32,
        b: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<u32>(), any::<u32>(), 0u32..10)
            .prop_map(|(node, h, priority)| Op::Request { node, h, priority }),
        2 => any::<u32>().prop_map(Op::Release),
        8 => any::<u32>().prop_map(Op::Deliver),
        1 => (any::<u32>(), any::<u32>(), any::<u32>())
            .prop_map(|(drop, a, b)| Op::Churn { drop, a, b }),
    ]
}

/// A resource count whose copies agree unless `level` is odd (then one copy, picked by the
/// level, is the level's low bits, as a corrupted copy would be).
fn resources(count: u32, level: u64) -> Resources {
    let mut copies = [count; 3];
    if level % 2 == 1 {
        copies[(level % 3) as usize] = (level >> 1) as u32;
    }
    Resources(copies)
}

fn policy(i: u8) -> Policy {
    [Policy::Explicit, Policy::Equal, Policy::MaxConcurrency][i as usize % 3]
}

/// A random connected graph: a random spanning tree plus extra edges.
fn graph(count: u32, parents: &[u32], extra: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut edges: Vec<(u32, u32)> = (1..count).map(|i| (parents[i as usize] % i, i)).collect();
    for &(a, b) in extra {
        let (a, b) = (a % count, b % count);
        if a != b && !edges.contains(&edge(a, b)) && !edges.contains(&(b, a)) {
            edges.push(edge(a, b));
        }
    }
    edges
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn invariants_hold_and_every_request_is_served_after_churn_stops(
        count in 2u32..10,
        parents in vec(any::<u32>(), 10),
        extra in vec((any::<u32>(), any::<u32>()), 0..8),
        k in 1u32..6,
        pol in 0u8..3,
        aging_step in 1u64..4,
        holder in any::<u32>(),
        ops in vec(op(), 0..300),
    ) {
        let edges = graph(count, &parents, &extra);
        let settings = Settings::new(k, policy(pol)).with_aging_step(aging_step);
        let mut net = net(count, &edges, holder % count, settings);
        let mut requested = 0usize;
        for op in ops {
            match op {
                Op::Request { node, h, priority } => {
                    let node = node % count;
                    if net.status(n(node)) == Status::Remainder {
                        ask(&mut net, node, 1 + h % k, priority);
                        requested += 1;
                    }
                }
                Op::Release(node) => {
                    if in_cs(&net, node % count) {
                        net.release(n(node % count));
                    }
                }
                Op::Deliver(c) => {
                    let busy = net.busy_links();
                    if !busy.is_empty() {
                        let (a, b) = busy[c as usize % busy.len()];
                        net.deliver(a, b);
                    }
                }
                Op::Churn { drop, a, b } => {
                    // A link fails only when idle and not a bridge (the papers' contract).
                    let links = net.graph.edges().to_vec();
                    let (x, y) = links[drop as usize % links.len()];
                    if net.channels.idle(x, y) && net.graph.is_connected_without(Some((x, y))) {
                        net.fail(x, y);
                    }
                    let (a, b) = (n(a % count), n(b % count));
                    if a != b && !net.graph.has(a, b) {
                        net.form(a, b);
                    }
                }
            }
        }
        drain(&mut net);
        prop_assert_eq!(net.entries.len(), requested, "every request entered exactly once");
        // Correct peers only ever produce the benign crossings.
        for (at, from, kind) in &net.anomalies {
            prop_assert!(
                matches!(kind, Anomaly::Stale | Anomaly::RedundantLinkEvent),
                "{at:?} reported {kind:?} from {from:?}"
            );
            prop_assert_eq!(Node::anomaly_severity(*kind), Severity::Noise);
        }
    }

    /// One-sided `LinkUp`s and `LinkDown`s add messages from peers that are not neighbours yet
    /// or any more (`UnknownPeer`): noise too.
    #[test]
    fn with_one_sided_link_events_and_no_corruption_every_anomaly_is_noise(
        input in prioritized_input_with(TokenFaults { corrupt: 0, kind: 0, ..TokenFaults::ALL }),
    ) {
        let net = prioritized_network::play(&input);
        for (at, from, kind) in &net.anomalies {
            prop_assert_eq!(
                Node::anomaly_severity(*kind),
                Severity::Noise,
                "{:?} reported {:?} from {:?}", at, kind, from
            );
        }
    }

    /// A protected resource behind the network, with any field of any message corrupted and
    /// one-sided link events: it accepts every grant's fence (each above the last), and the
    /// token's counter counts exactly the grants (`docs/ALGORITHMS.md`, F1).
    #[test]
    fn a_protected_resource_sees_the_grants_fences_go_up(
        input in prioritized_input_with(TokenFaults::ALL),
    ) {
        let net = prioritized_network::play(&input);
        let mut resource = Fences::new();
        for (at, _, fence) in &net.entries {
            let accepted = resource.admit(*fence);
            prop_assert!(accepted.is_ok(), "{:?} entered with {:?}: {:?}", at, fence, accepted);
            prop_assert_eq!(fence.lane, 0);
        }
        prop_assert_eq!(resource.highest(0).unwrap_or(0), net.entries.len() as u64);
    }

    #[test]
    fn arbitrary_input_never_panics_and_an_err_changes_nothing(
        events in vec(
            (0u32..6, 0u8..9, prop_oneof![0u32..12, Just(u32::MAX)], any::<u64>(), -3i64..3, 0u32..6),
            0..60,
        ),
        k in prop_oneof![1u32..6, Just(u32::MAX - 1), Just(u32::MAX)],
    ) {
        let configs = network(
            4,
            &[(n(0), n(1)), (n(1), n(2)), (n(2), n(3)), (n(3), n(0))],
            &[n(0)],
            Settings::new(k, Policy::Explicit),
        )
        .unwrap();
        for c in configs {
            let mut node = Node::new(c).unwrap();
            for &(peer, kind, x, level, h, hid) in &events {
                // Now and then a check word that does not match.
                let height = match Sealed::new(Height::new(h, h, n(hid))) {
                    s if level % 7 == 3 => Sealed { check: !s.check, ..s },
                    s => s,
                };
                let priority = Priority::new(level, x);
                let receive = |msg| Event::Receive { from: n(peer), msg };
                let event = match kind {
                    0 => receive(Message::Token { lost: Resources::new(0), available: resources(x, level), priority, height, fence: FenceCopies::default() }),
                    1 => receive(Message::Request { priority, height }),
                    2 => receive(Message::Update { priority }),
                    3 => receive(Message::Release { lost: Resources::new(0), resources: resources(x, level), height, generation: [0; 3] }),
                    4 => receive(Message::Link { height }),
                    5 => Event::Request(CsRequest { resources: x, priority: 0 }),
                    6 => Event::Release,
                    7 => Event::LinkUp(n(peer)),
                    _ => Event::LinkDown(n(peer)),
                };
                let before = node.clone();
                if node.handle(event).map(|actions| actions.count()).is_err() {
                    prop_assert_eq!(&node, &before);
                }
                prop_assert!(node.available().is_none_or(|t| t <= k));
                prop_assert!(node.release_backlog() <= k);
                prop_assert!(node.held() <= k);
            }
        }
    }
}
