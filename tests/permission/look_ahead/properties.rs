//! Property tests: adversarial schedules (any delivery order, duplicates, loss, timeouts,
//! doze/disconnect/reconnect at any time) never break the invariants, and once delivery is
//! reliable every waiting host enters, and every anomaly reported on the way is noise. Plus
//! random routed-simulator runs.

use crate::fixtures::{only_noise, play, resource_accepts_every_entry, schedule_op as op};
use manet_mutex::look_ahead::{self, Config, Node, Settings};
use manet_mutex::permission::Timestamp;
use manet_mutex::{CsRequest, Event, NodeId, Protocol, TimerId};
use manet_mutex_sim::routed::{self, Failures, LoadPattern, ModeChanges, RoutedConfig};
use manet_mutex_testkit::fuzz::permission_network;
use manet_mutex_testkit::strategy::{cases, permission_input_with, PermissionFaults};
use manet_mutex_testkit::PermNet;
use proptest::prelude::*;

fn net(n: u32, seed: u64) -> PermNet<Node> {
    PermNet::with_nodes(
        (0..n)
            .map(|i| {
                Node::new(Config::new(
                    NodeId(i),
                    Settings::new(n, 100).with_seed(seed),
                ))
                .unwrap()
            })
            .collect(),
    )
    .checked()
}

fn all_back(net: &mut PermNet<Node>, n: u32) {
    for h in 0..n {
        let _ = net.apply(NodeId(h), Event::Wake);
        let _ = net.apply(NodeId(h), Event::Reconnect);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn adversarial_schedules_keep_safety_and_liveness(
        n in 2u32..6,
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 0..300),
    ) {
        let mut net = net(n, seed);
        play(&mut net, n, &ops, false);
        net.settle(500).unwrap();
        only_noise(&net);
    }

    #[test]
    fn adversarial_schedules_with_doze_and_disconnection_keep_safety_and_liveness(
        n in 2u32..6,
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 0..300),
    ) {
        let mut net = net(n, seed);
        play(&mut net, n, &ops, true);
        all_back(&mut net, n);
        net.settle(500).unwrap();
        only_noise(&net);
    }

    #[test]
    fn every_request_made_after_the_trouble_is_served(
        n in 2u32..6,
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 0..200),
    ) {
        let mut net = net(n, seed);
        play(&mut net, n, &ops, true);
        all_back(&mut net, n);
        net.settle(500).unwrap();
        let before = net.entries.len();
        for h in 0..n {
            net.apply(NodeId(h), Event::Request(CsRequest::ONE)).unwrap();
        }
        net.settle(500).unwrap();
        prop_assert_eq!(net.entries.len(), before + n as usize);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    #[test]
    fn routed_runs_with_loss_failures_and_modes_keep_the_invariants_and_drain(
        hosts in 2u32..9,
        seed in any::<u64>(),
        lambda in prop::sample::select(vec![0.05, 0.01, 0.001]),
        hot in any::<bool>(),
        loss in prop::sample::select(vec![0.0, 0.05, 0.3]),
        moving in prop::sample::select(vec![1.0, 0.5, 0.1]),
        failures in any::<bool>(),
        reconnect in any::<bool>(),
        modes in any::<bool>(),
    ) {
        let mut cfg = RoutedConfig::paper(hosts, lambda, moving, seed);
        cfg.target_entries = 30;
        cfg.max_time = 30.0 * 4.0 / (f64::from(hosts) * lambda);
        cfg.loss = loss;
        cfg.load = if hot { LoadPattern::HotSpot } else { LoadPattern::Uniform };
        if failures {
            cfg.failures = Some(Failures { fraction: 0.1, mean_down: 5.0, reconnect });
        }
        if modes {
            cfg.modes = Some(ModeChanges { rate: lambda * 2.0, mean_duration: 10.0 });
        }
        let report = routed::run::<Node>(&cfg).map_err(|v| TestCaseError::fail(v.to_string()))?;
        prop_assert!(report.metrics.cs_entries > 0);
        // A routed message travels at least one hop; the rest were sent but found no route.
        prop_assert!(report.routed <= report.metrics.messages);
        prop_assert!(report.metrics.hops >= report.routed);
    }
}

/// A forged announcement: `seen` from the epoch, `absent` from its lowest bit, sealed unless
/// bit 1 is set (then it carries a wrong check word, as a corrupted copy would).
fn announcement(ts: Timestamp, epoch: u64) -> look_ahead::Announcement {
    let mut a = look_ahead::Announcement::new(ts, epoch >> 2, epoch & 1 == 1, 0);
    if epoch & 2 == 2 {
        a.check ^= 1;
    }
    a
}

fn forged(kind: u8, clock: u64, id: u32, epoch: u64) -> look_ahead::Message {
    let ts = Timestamp {
        clock,
        id: NodeId(id),
    };
    match kind % 5 {
        0 => look_ahead::Message::request(ts, epoch % 3, epoch, 0),
        1 => look_ahead::Message::reply(ts, epoch % 3, epoch, epoch >> 1, 0),
        2 => look_ahead::Message::Doze(announcement(ts, epoch)),
        3 => look_ahead::Message::Disconnect(announcement(ts, epoch)),
        _ => look_ahead::Message::Reconnect(announcement(ts, epoch)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// Arbitrary (even forged) peer input and local events never panic and never break a
    /// node's own invariants; misuse is rejected without changing anything.
    #[test]
    fn arbitrary_input_never_panics_or_corrupts_a_node(
        n in 1u32..5,
        seed in any::<u64>(),
        inputs in prop::collection::vec(
            (0u8..12, 0u32..7, prop_oneof![0u64..6, Just(u64::MAX)], 0u32..7, prop_oneof![0u64..12, Just(u64::MAX)], any::<u64>()),
            0..200,
        ),
    ) {
        let mut node = Node::new(Config::new(NodeId(0), Settings::new(n, 7).with_seed(seed))).unwrap();
        for (kind, from, clock, id, epoch, timer) in inputs {
            let event = match kind {
                0..=4 => Event::Receive { from: NodeId(from), msg: forged(kind, clock, id, epoch) },
                5 => Event::Request(CsRequest::ONE),
                6 => Event::Release,
                7 => Event::Timeout(TimerId(timer % 8)),
                8 => Event::Doze,
                9 => Event::Wake,
                10 => Event::Disconnect,
                _ => Event::Reconnect,
            };
            let before = node.clone();
            let rejected = node.handle(event).map(|a| a.for_each(drop)).is_err();
            if rejected {
                prop_assert!(node == before);
            }
            prop_assert_eq!(look_ahead::invariants::check_node(&node), Ok(()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// A protected resource behind the system, with corruption of any field, loss,
    /// duplicates, early timeouts and mode changes: every entry's fence is above every earlier
    /// one (`docs/ALGORITHMS.md`, F1).
    #[test]
    fn a_protected_resource_sees_the_fences_go_up(
        input in permission_input_with(PermissionFaults::ALL),
    ) {
        let net = permission_network::play::<Node>(&input);
        resource_accepts_every_entry(&net)?;
    }
}
