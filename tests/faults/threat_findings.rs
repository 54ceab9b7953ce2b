//! The three findings of the threat-model review, replayed on small networks with the public
//! API only (`docs/ALGORITHMS.md`, A1–A3 and T1–T5):
//! 1. one REQUEST with a huge clock made every later request of a host share its timestamp, and
//!    a late REPLY to an earlier request then let two hosts into the critical section; one
//!    with a huge epoch made every later message of its sender stale for good;
//! 2. a LinkInfo arriving before the receiver's own `LinkUp` was dropped, and the link it
//!    announced stayed half open for good;
//! 3. heights and priorities were taken from peers without bounds.

use manet_mutex::look_ahead;
use manet_mutex::permission::{Timestamp, SKEW_LIMIT};
use manet_mutex::prioritized::{self, Policy, Settings};
use manet_mutex::queue::Priority;
use manet_mutex::reverse_link;
use manet_mutex::token::Height;
use manet_mutex::{ricart_agrawala, Action, Anomaly, CsRequest, Event, NodeId, Protocol, Status};
use manet_mutex_sim::Graph;
use manet_mutex_sim::Params;
use manet_mutex_testkit::{Flight, PermNet, PermissionHarness};

fn from<M: std::fmt::Debug>(host: u32, kind: &'static str) -> impl Fn(&Flight<M>) -> bool {
    move |f| f.from == NodeId(host) && format!("{:?}", f.msg).starts_with(kind)
}

/// Finding 1 on two hosts. REQUESTs carrying `clock` reach both hosts first (corrupted or
/// forged fields). Host 0 requests; its retransmission timer fires early, so host 1 answers
/// both copies; host 0 enters on the first REPLY and leaves. Host 1 requests and enters; host 0
/// requests again; then the second REPLY to host 0's first request arrives. It must not grant
/// host 0's second request while host 1 is inside.
fn late_reply_after_a_huge_clock<N: PermissionHarness>(nodes: Vec<N>, forged: [N::Message; 2]) {
    let mut net = PermNet::with_nodes(nodes).checked();
    for (to, msg) in [1, 0].into_iter().zip(forged) {
        net.apply(
            NodeId(1 - to),
            Event::Receive {
                from: NodeId(to),
                msg,
            },
        )
        .unwrap();
    }
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    let timer = net.timers[0][0];
    net.fire(NodeId(0), timer); // the retransmission to host 1
    net.deliver_where(from(0, "Request"));
    net.deliver_where(from(0, "Request"));
    // Host 1's REPLYs, one at a time until host 0 enters (the first may answer a forged
    // request): the last copy stays in flight.
    while net.node(NodeId(0)).status() != Status::Critical
        && net.in_flight.iter().any(from(1, "Reply"))
    {
        net.deliver_where(from(1, "Reply"));
    }
    assert!(net.in_flight.iter().any(from(1, "Reply")));
    assert_eq!(
        net.node(NodeId(0)).status(),
        Status::Critical,
        "{}",
        net.trace_text()
    );
    net.apply(NodeId(0), Event::Release).unwrap();
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_where(from(1, "Request"));
    // Host 0's REPLYs (to the forged request, if it took it for a real one, and to host 1's).
    while net.in_flight.iter().any(from(0, "Reply")) {
        net.deliver_where(from(0, "Reply"));
    }
    assert_eq!(net.node(NodeId(1)).status(), Status::Critical);
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    // The late second REPLY to host 0's first request.
    net.deliver_where(from(1, "Reply"));
    assert_ne!(
        net.node(NodeId(0)).status(),
        Status::Critical,
        "two hosts inside\n{}",
        net.trace_text()
    );
    net.settle(500).unwrap();
}

/// Found by `ricart_agrawala_network` (seed 12861 of `tests/faults/fuzz_ricart_agrawala.rs`,
/// `docs/ALGORITHMS.md` A6): host 1 waits with the older request when host 0's REQUEST
/// arrives, its clock corrupted downwards so that it looks older still. Host 1 granted it, and
/// its REPLY named the corrupted stamp; one more corrupted field (the REPLY's clock, back up)
/// made it a grant of host 0's real request, and both hosts entered. A REQUEST now carries a
/// check word, and a copy with one field corrupted is dropped like a lost one.
fn corrupted_priority_then_corrupted_reply<N>(nodes: Vec<N>)
where
    N: PermissionHarness,
{
    use manet_mutex_testkit::corrupt::Value;
    let mut net = PermNet::with_nodes(nodes).checked();
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_where(from(1, "Request"));
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    let k = net.in_flight.iter().position(from(0, "Request")).unwrap();
    assert!(net.corrupt(k, 0, Value::Down), "its clock");
    net.deliver(k);
    if let Some(k) = net.in_flight.iter().position(from(1, "Reply")) {
        net.corrupt(k, 0, Value::Up);
        net.deliver(k);
    }
    net.deliver_where(from(0, "Reply"));
    net.check_safety().unwrap();
    assert!(net
        .anomalies
        .contains(&(NodeId(1), NodeId(0), Anomaly::OutOfRange)));
    net.settle(500).unwrap();
    assert_eq!(net.entries.len(), 2);
}

#[test]
fn a_request_with_a_corrupted_priority_is_dropped_so_no_second_corruption_can_grant_it() {
    corrupted_priority_then_corrupted_reply(vec![
        la_host(0, vec![NodeId(1)]),
        la_host(1, vec![NodeId(0)]),
    ]);
    corrupted_priority_then_corrupted_reply(vec![ra_host(0), ra_host(1)]);
}

fn la_host(id: u32, info: Vec<NodeId>) -> look_ahead::Node {
    let settings = look_ahead::Settings::new(2, 10);
    look_ahead::Node::new(look_ahead::Config::new(NodeId(id), settings).with_info_set(info))
        .unwrap()
}

fn ra_host(id: u32) -> ricart_agrawala::Node {
    let settings = ricart_agrawala::Settings::new(2, 10);
    ricart_agrawala::Node::new(ricart_agrawala::Config::new(NodeId(id), settings)).unwrap()
}

fn ts(clock: u64, id: u32) -> Timestamp {
    Timestamp {
        clock,
        id: NodeId(id),
    }
}

#[test]
fn finding_1_a_huge_clock_cannot_make_a_late_reply_grant_a_later_request() {
    for clock in [u64::MAX, SKEW_LIMIT, SKEW_LIMIT - 1] {
        let la = || vec![la_host(0, vec![NodeId(1)]), la_host(1, vec![NodeId(0)])];
        let forged = |id| look_ahead::Message::request(ts(clock, id), 1, 0, 0);
        late_reply_after_a_huge_clock(la(), [forged(1), forged(0)]);
        let forged = |id| ricart_agrawala::Message::request(ts(clock, id), 1, 0);
        late_reply_after_a_huge_clock(vec![ra_host(0), ra_host(1)], [forged(1), forged(0)]);
    }
}

#[test]
fn finding_1_a_huge_epoch_mutes_nobody() {
    // An impossible epoch is refused outright; a possible but wrong one is healed by the
    // REPLY that names it (host 1 announces an epoch beyond it). Either way both hosts go on
    // serving each other.
    for epoch in [u64::MAX, SKEW_LIMIT, SKEW_LIMIT / 2, 1000] {
        let mut net =
            PermNet::with_nodes(vec![la_host(0, vec![NodeId(1)]), la_host(1, vec![])]).checked();
        let forged = look_ahead::Message::request(ts(1, 1), 1, epoch, 0);
        net.apply(
            NodeId(0),
            Event::Receive {
                from: NodeId(1),
                msg: forged,
            },
        )
        .unwrap();
        net.settle(500).unwrap();
        for round in 1..=3 {
            net.apply(NodeId(1), Event::Request(CsRequest::ONE))
                .unwrap();
            net.apply(NodeId(0), Event::Request(CsRequest::ONE))
                .unwrap();
            net.settle(500).unwrap();
            assert_eq!(net.entries.len(), 2 * round, "epoch {epoch}");
        }
        let stale = (NodeId(0), NodeId(1), Anomaly::Stale);
        let muted = net.anomalies.iter().filter(|a| **a == stale).count();
        assert!(
            muted <= 1,
            "epoch {epoch}: host 1 muted: {:?}",
            net.anomalies
        );
    }
}

/// Finding 2: line 0–1–2, the token at 0; the link 0–2 forms and node 0 notices first; its
/// LinkInfo reaches node 2 before node 2's own `LinkUp`; the link 1–2 fails; node 2 asks.
fn half_open_link<P: manet_mutex_testkit::TokenHarness>(params: &Params<P::Settings>) {
    let (n0, n1, n2) = (NodeId(0), NodeId(1), NodeId(2));
    let graph = Graph::from_edges(3, &[(n0, n1), (n1, n2)]);
    let mut net = manet_mutex_testkit::TokenNet::<P>::new(graph, params).unwrap();
    net.form_at(n0, n2);
    net.deliver(n0, n2);
    net.notice(n2, n0);
    net.fail(n1, n2);
    net.request(n2, CsRequest::ONE);
    net.check_safety().unwrap();
    net.drain(64).unwrap();
}

#[test]
fn finding_2_a_link_whose_first_word_arrived_before_link_up_is_completed_when_needed() {
    for forwarding in [false, true] {
        let settings = reverse_link::Settings::new(1).with_forwarding(forwarding);
        half_open_link::<reverse_link::Node>(&Params::first_nodes(settings, 1));
    }
    let settings = Settings::new(2, Policy::Equal);
    half_open_link::<prioritized::Node>(&Params::first_nodes(settings, 1));
}

#[test]
fn finding_3_heights_without_headroom_are_refused_and_never_adopted() {
    let config = reverse_link::Config::new(
        NodeId(1),
        reverse_link::Settings::new(1),
        0,
        Height::new(1, 0, NodeId(1)),
        vec![Height::new(0, 0, NodeId(0))],
    );
    for bad in [
        Height::new(0, i64::MIN, NodeId(0)),
        Height::new(i64::MAX, 0, NodeId(0)),
        Height::new(0, -Height::LIMIT - 1, NodeId(0)),
    ] {
        let mut node = reverse_link::Node::new(config.clone()).unwrap();
        let actions: Vec<_> = node
            .handle(Event::Receive {
                from: NodeId(0),
                msg: reverse_link::Message::Token(bad.into(), Default::default()),
            })
            .unwrap()
            .collect();
        assert_eq!(node.tokens(), 1, "the token is kept");
        assert_eq!(node.height(), Height::new(1, 0, NodeId(1)), "{bad:?}");
        assert!(actions.contains(&Action::Anomaly {
            from: NodeId(0),
            kind: Anomaly::OutOfRange
        }));
    }
}

#[test]
fn finding_3_a_peer_priority_cannot_pin_an_entry_above_aging() {
    let neighbors = [0, 2, 3]
        .map(|i| Height::new(0, i, NodeId(i as u32)))
        .to_vec();
    let settings = Settings::new(2, Policy::Explicit);
    let config = prioritized::Config::new(
        NodeId(1),
        settings,
        false,
        Height::new(0, 1, NodeId(1)),
        neighbors,
    );
    let mut node = prioritized::Node::new(config).unwrap();
    let request = |level, id| Event::Receive {
        from: NodeId(id),
        msg: prioritized::Message::Request {
            priority: Priority::new(level, 0),
            height: Height::new(0, u64::from(id) as i64, NodeId(id)).into(),
        },
    };
    let actions: Vec<_> = node.handle(request(u64::MAX, 2)).unwrap().collect();
    assert!(actions.contains(&Action::Anomaly {
        from: NodeId(2),
        kind: Anomaly::OutOfRange
    }));
    let (front, p) = node.queue().next().unwrap();
    assert_eq!((front, p.level), (NodeId(2), Priority::LEVEL_LIMIT));
    // Aging still has room above it: nothing saturates, so order keeps following age.
    assert!(Priority::LEVEL_LIMIT.checked_mul(2).is_some());
    node.handle(request(5, 3)).unwrap().for_each(drop);
    assert_eq!(node.queue().count(), 2);
}
