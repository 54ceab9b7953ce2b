//! Ricart–Agrawala: 2(n − 1) messages per entry, the deferral rule, stale input, errors, and
//! safety/liveness under adversarial schedules (reporting only noise).

use crate::fixtures::{only_noise, play, resource_accepts_every_entry, schedule_op};
use manet_mutex::permission::Timestamp;
use manet_mutex::ricart_agrawala::{Config, Message, Node, Settings};
use manet_mutex::{Action, Anomaly, CsRequest, Error, Event, NodeId, Protocol, Status};
use manet_mutex_testkit::fuzz::permission_network;
use manet_mutex_testkit::strategy::{cases, permission_input_with, PermissionFaults};
use manet_mutex_testkit::PermNet;
use proptest::prelude::*;

fn node(id: u32, n: u32) -> Node {
    Node::new(Config::new(NodeId(id), Settings::new(n, 10))).unwrap()
}

fn net(n: u32) -> PermNet<Node> {
    PermNet::with_nodes((0..n).map(|i| node(i, n)).collect()).checked()
}

fn ts(clock: u64, id: u32) -> Timestamp {
    Timestamp {
        clock,
        id: NodeId(id),
    }
}

#[test]
fn one_entry_costs_two_n_minus_one_messages() {
    for n in 1..8u32 {
        let mut net = net(n);
        net.apply(NodeId(0), Event::Request(CsRequest::ONE))
            .unwrap();
        let mut sent = net.in_flight.len();
        while !net.in_flight.is_empty() {
            let before = net.in_flight.len();
            net.deliver(0);
            sent += net.in_flight.len() + 1 - before;
        }
        assert_eq!(net.node(NodeId(0)).status(), Status::Critical);
        assert_eq!(sent, 2 * (n as usize - 1));
    }
}

#[test]
fn defers_while_inside_or_older_and_replies_on_exit() {
    let mut a = node(0, 3);
    let _ = a.handle(Event::Request(CsRequest::ONE)).unwrap(); // (1,0)
    let acts: Vec<_> = a
        .handle(Event::Receive {
            from: NodeId(2),
            msg: Message::request(ts(1, 2), 1, 0),
        })
        .unwrap()
        .collect();
    assert!(acts.is_empty(), "(1,0) beats (1,2)");
    assert_eq!(a.deferred().collect::<Vec<_>>(), vec![NodeId(2)]);
    for p in [1, 2] {
        let _ = a
            .handle(Event::Receive {
                from: NodeId(p),
                msg: Message::reply(ts(1, 0), 1, 0),
            })
            .unwrap();
    }
    assert_eq!(a.status(), Status::Critical);
    let acts: Vec<_> = a.handle(Event::Release).unwrap().collect();
    assert_eq!(
        acts,
        vec![Action::Send {
            to: NodeId(2),
            msg: Message::reply(ts(1, 2), 1, 1)
        }]
    );
}

#[test]
fn stale_unexpected_and_unknown_input_is_ignored() {
    let mut a = node(0, 2);
    let snapshot = a.clone();
    for (from, msg, kind) in [
        (1, Message::reply(ts(1, 0), 1, 0), Anomaly::Unexpected),
        (5, Message::request(ts(1, 5), 1, 0), Anomaly::UnknownPeer),
        (1, Message::request(ts(1, 0), 1, 0), Anomaly::OutOfRange),
    ] {
        let acts: Vec<_> = a
            .handle(Event::Receive {
                from: NodeId(from),
                msg,
            })
            .unwrap()
            .collect();
        assert_eq!(
            acts,
            vec![Action::Anomaly {
                from: NodeId(from),
                kind
            }]
        );
        assert_eq!(a, snapshot);
    }
    let _ = a.handle(Event::Request(CsRequest::ONE)).unwrap();
    let acts: Vec<_> = a
        .handle(Event::Receive {
            from: NodeId(1),
            msg: Message::reply(ts(0, 0), 1, 0),
        })
        .unwrap()
        .collect();
    assert_eq!(
        acts,
        vec![Action::Anomaly {
            from: NodeId(1),
            kind: Anomaly::Stale
        }]
    );
    assert_eq!(a.status(), Status::Waiting);
}

#[test]
fn misuse_is_an_error_and_changes_nothing() {
    let mut a = node(0, 2);
    let snapshot = a.clone();
    assert_eq!(
        a.handle(Event::Release).err(),
        Some(Error::NotInCritical(Status::Remainder))
    );
    assert_eq!(
        a.handle(Event::Doze).err(),
        Some(Error::Unsupported("Doze"))
    );
    assert_eq!(a, snapshot);
    let _ = a.handle(Event::Request(CsRequest::ONE)).unwrap();
    let snapshot = a.clone();
    assert_eq!(
        a.handle(Event::Request(CsRequest::ONE)).err(),
        Some(Error::AlreadyRequested(Status::Waiting))
    );
    assert_eq!(a, snapshot);
    assert!(Node::new(Config::new(NodeId(2), Settings::new(2, 1))).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn adversarial_schedules_keep_safety_and_liveness(
        n in 2u32..6,
        ops in prop::collection::vec(schedule_op(), 0..300),
    ) {
        let mut net = net(n);
        play(&mut net, n, &ops, false);
        net.settle(500).unwrap();
        only_noise(&net);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(32), ..ProptestConfig::default() })]

    #[test]
    fn routed_runs_with_loss_and_failures_keep_safety_and_drain(
        hosts in 2u32..9,
        seed in any::<u64>(),
        loss in prop::sample::select(vec![0.0, 0.05, 0.3]),
        failures in any::<bool>(),
    ) {
        use manet_mutex_sim::routed::{self, RoutedConfig};
        let mut cfg = RoutedConfig::paper(hosts, 1e-2, 0.5, seed);
        cfg.target_entries = 30;
        cfg.loss = loss;
        if failures {
            cfg = cfg.with_paper_failures();
        }
        let r = routed::run::<Node>(&cfg).map_err(|v| TestCaseError::fail(v.to_string()))?;
        prop_assert!(r.metrics.cs_entries >= 30);
        prop_assert!(r.metrics.messages >= 2 * u64::from(hosts - 1) * 30);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// A protected resource behind the system, with corruption of any field, loss,
    /// duplicates and early timeouts: every entry's fence is above every earlier one
    /// (`docs/ALGORITHMS.md`, F1).
    #[test]
    fn a_protected_resource_sees_the_fences_go_up(
        input in permission_input_with(PermissionFaults::ALL),
    ) {
        let net = permission_network::play::<Node>(&input);
        resource_accepts_every_entry(&net)?;
    }
}

/// A7: a peer's restart renumbers the open request but keeps its timestamp, so a late REPLY
/// to the old number differs from a grant of the new one only in `seq`. With that one field
/// corrupted it must not grant: its check word no longer matches. Without the word two hosts
/// were inside together (V14, found by `a_protected_resource_sees_the_fences_go_up`).
#[test]
fn a_late_reply_to_a_renumbered_request_with_seq_corrupted_grants_nothing() {
    let mut a = node(0, 3);
    let _ = a.handle(Event::Request(CsRequest::ONE)).unwrap(); // (1,0), number 1
                                                               // Host 1 restarted (incarnation 1): host 0 asks everyone again under number 2.
    let restarted = (1u64 << 32) + 1;
    let acts: Vec<_> = a
        .handle(Event::Receive {
            from: NodeId(1),
            msg: Message::request(ts(1, 1), restarted, 0),
        })
        .unwrap()
        .collect();
    assert!(acts.iter().any(|act| matches!(
        act,
        Action::Send {
            to: NodeId(2),
            msg: Message::Request { seq: 2, .. }
        }
    )));
    // Host 2's REPLY to number 1, its `seq` corrupted to 2.
    let Message::Reply { check, fence, .. } = Message::reply(ts(1, 0), 1, 0) else {
        unreachable!()
    };
    let forged = Message::Reply {
        ts: ts(1, 0),
        seq: 2,
        check,
        fence,
    };
    let snapshot = a.clone();
    let acts: Vec<_> = a
        .handle(Event::Receive {
            from: NodeId(2),
            msg: forged,
        })
        .unwrap()
        .collect();
    assert_eq!(
        acts,
        vec![Action::Anomaly {
            from: NodeId(2),
            kind: Anomaly::OutOfRange
        }]
    );
    assert_eq!(a, snapshot);
    // The real answers to number 2 grant it.
    for p in [1, 2] {
        let _ = a
            .handle(Event::Receive {
                from: NodeId(p),
                msg: Message::reply(ts(1, 0), 2, 0),
            })
            .unwrap();
    }
    assert_eq!(a.status(), Status::Critical);
}

/// V14's shrunk schedule (`docs/ALGORITHMS.md`, A7), replayed as it was found: a crash, a
/// restart, loss, duplicates, early timers, a merge, and the REPLY corruption above.
#[test]
fn v14_schedule_keeps_exclusion() {
    use manet_mutex_testkit::corrupt::{How, Value};
    use manet_mutex_testkit::fuzz::permission_network::Input;
    use manet_mutex_testkit::schedule::{CorruptStep, PermissionOp::*};
    let corrupt = CorruptStep {
        msg: 3,
        field: 2,
        value: Value::Up,
        how: How::Field,
    };
    let ops = vec![
        Request(218),
        Deliver(101),
        Crash(73),
        Deliver(56),
        Request(59),
        Request(60),
        Duplicate(15),
        Deliver(5),
        Fire(15),
        Request(0),
        Deliver(27),
        Restart(84),
        Request(212),
        Deliver(76),
        Request(0),
        Fire(42),
        Deliver(152),
        Deliver(50),
        Lose(153),
        Deliver(17),
        Duplicate(0),
        Duplicate(3),
        Deliver(1),
        Deliver(1),
        Merge,
        Deliver(17),
        Deliver(1),
        Corrupt(corrupt),
        Request(0),
        Request(0),
        Request(0),
        Duplicate(0),
        Request(0),
    ];
    let input = Input {
        hosts: 102,
        seed: 0,
        ops,
        majority: false,
    };
    let net = permission_network::play::<Node>(&input);
    resource_accepts_every_entry(&net).unwrap();
}
