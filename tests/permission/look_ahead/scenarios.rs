//! Staged look-ahead scenarios: the paper's non-FIFO case, crossing requests, a stale REPLY
//! overtaking, loss recovery, and when the paper's exact pairwise consistency holds.

use manet_mutex::look_ahead::{Config, Message, Node, Relation, Settings};
use manet_mutex::{CsRequest, Event, Fence, NodeId, Protocol, Status};
use manet_mutex_testkit::strategy::cases;
use manet_mutex_testkit::{Flight, PermNet};
use proptest::prelude::*;

fn node(id: u32, n: u32, info: &[u32]) -> Node {
    let info = info.iter().map(|&i| NodeId(i)).collect();
    Node::new(Config::new(NodeId(id), Settings::new(n, 50)).with_info_set(info)).unwrap()
}

fn msg_from(from: u32, to: u32, pred: fn(&Message) -> bool) -> impl Fn(&Flight<Message>) -> bool {
    move |f| f.from == NodeId(from) && f.to == NodeId(to) && pred(&f.msg)
}

fn is_request(m: &Message) -> bool {
    matches!(m, Message::Request { .. })
}

fn is_reply(m: &Message) -> bool {
    matches!(m, Message::Reply { .. })
}

#[test]
fn request_overtaking_reply_is_remembered_in_q_req() {
    // Section III-C-2: 1 replies to 0 and asks 0; 1's REQUEST reaches 0 before its REPLY.
    // Without Q_req, 0 would move 1 into Status_set on the REPLY and never answer it.
    let mut net =
        PermNet::with_nodes(vec![node(0, 3, &[1]), node(1, 3, &[2]), node(2, 3, &[0])]).checked();
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap(); // (1,0)
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap(); // (1,1)
    net.deliver_where(msg_from(0, 1, is_request));
    net.deliver_where(msg_from(1, 0, is_request));
    assert_eq!(
        net.node(NodeId(0)).deferred().collect::<Vec<_>>(),
        vec![NodeId(1)]
    );
    net.deliver_where(msg_from(1, 0, is_reply));
    assert_eq!(net.node(NodeId(0)).status(), Status::Critical);
    assert_eq!(
        net.node(NodeId(0)).relation(NodeId(1)),
        Some(Relation::Info)
    );
    net.settle(500).unwrap();
    assert_eq!(
        net.entries,
        vec![(NodeId(0), Fence::new(0, 1)), (NodeId(1), Fence::new(0, 2))]
    );
}

#[test]
fn crossing_requests_enter_in_timestamp_order() {
    let mut net = PermNet::with_nodes(vec![node(0, 2, &[1]), node(1, 2, &[0])]).checked();
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap(); // (1,1)
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap(); // (1,0) wins the tie by id
    net.deliver_all(100_000).unwrap();
    assert_eq!(net.node(NodeId(0)).status(), Status::Critical);
    assert_eq!(net.node(NodeId(1)).status(), Status::Waiting);
    net.settle(500).unwrap();
    assert_eq!(
        net.entries,
        vec![(NodeId(0), Fence::new(0, 1)), (NodeId(1), Fence::new(0, 2))]
    );
}

#[test]
fn late_reply_to_a_retransmitted_old_request_grants_nothing() {
    // Why REPLYs carry the request's timestamp: without it, R' (answering a retransmitted
    // copy of 1's first request) would let 1 enter while 0 is inside.
    let mut net = PermNet::with_nodes(vec![node(0, 2, &[]), node(1, 2, &[0])]).checked();
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    let timer = net.timers[1][0];
    net.fire(NodeId(1), timer); // retransmission: two copies in flight
    net.deliver_where(msg_from(1, 0, is_request));
    net.deliver_where(msg_from(1, 0, is_request)); // 0 answers both: R and R'
    net.deliver_where(msg_from(0, 1, is_reply)); // R
    assert_eq!(net.node(NodeId(1)).status(), Status::Critical);
    net.apply(NodeId(1), Event::Release).unwrap();
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_where(msg_from(0, 1, is_request));
    net.deliver_where(|f| f.from == NodeId(1) && is_reply(&f.msg));
    assert_eq!(net.node(NodeId(0)).status(), Status::Critical);
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_where(msg_from(0, 1, is_reply)); // R', stale
    assert_eq!(net.node(NodeId(1)).status(), Status::Waiting);
    net.settle(500).unwrap();
    assert_eq!(net.entries.len(), 3);
}

#[test]
fn lost_requests_and_replies_are_recovered_by_timeouts() {
    let n = 4;
    let mut net = PermNet::with_nodes(
        (0..n)
            .map(|i| Node::new(Config::new(NodeId(i), Settings::new(n, 10).with_seed(3))).unwrap())
            .collect(),
    )
    .checked();
    for h in 0..n {
        net.apply(NodeId(h), Event::Request(CsRequest::ONE))
            .unwrap();
    }
    // Lose every first copy, then every first REPLY.
    while !net.in_flight.is_empty() {
        net.lose(0);
    }
    for (h, t) in net.armed() {
        net.fire(h, t);
    }
    while let Some(k) = net.in_flight.iter().position(|f| is_request(&f.msg)) {
        net.deliver(k);
    }
    net.in_flight.retain(|f| !is_reply(&f.msg));
    net.settle(500).unwrap();
    assert_eq!(net.entries.len(), n as usize);
}

#[test]
fn a_repeat_requester_needs_no_messages() {
    // The look-ahead effect: after a request, everyone it asked is in its Status_set, so a
    // second request with no competitor in between enters at once.
    let mut net = PermNet::with_nodes(
        (0..5)
            .map(|i| Node::new(Config::new(NodeId(i), Settings::new(5, 10).with_seed(11))).unwrap())
            .collect(),
    )
    .checked();
    net.apply(NodeId(2), Event::Request(CsRequest::ONE))
        .unwrap();
    net.settle(500).unwrap();
    assert_eq!(net.node(NodeId(2)).info_set().count(), 0);
    net.apply(NodeId(2), Event::Request(CsRequest::ONE))
        .unwrap();
    assert_eq!(net.node(NodeId(2)).status(), Status::Critical);
    assert!(net.in_flight.is_empty());
}

fn exact_form_holds(net: &PermNet<Node>) -> Result<(), String> {
    let n = net.nodes.len() as u32;
    for i in 0..n {
        for j in 0..n {
            let i_asks = net.node(NodeId(i)).relation(NodeId(j)) == Some(Relation::Info);
            let j_asks = net.node(NodeId(j)).relation(NodeId(i)) == Some(Relation::Info);
            if i < j && i_asks == j_asks {
                return Err(format!("pair {i},{j}: both ask = {i_asks}"));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    /// Without loss, duplicates, timeouts or mode changes, messages in any order: once quiet,
    /// the paper's exact form (S_i ∈ Info_j ⇔ S_j ∈ Status_i) holds again, and nobody needed
    /// a retransmission.
    #[test]
    fn exact_pairwise_consistency_holds_in_quiescence_without_faults(
        n in 2u32..7,
        seed in any::<u64>(),
        ops in prop::collection::vec((any::<bool>(), any::<u32>(), any::<usize>()), 0..200),
    ) {
        let mut net = PermNet::with_nodes(
            (0..n).map(|i| Node::new(Config::new(NodeId(i), Settings::new(n, 10).with_seed(seed))).unwrap()).collect(),
        ).checked();
        prop_assert!(exact_form_holds(&net).is_ok());
        for (request, h, k) in ops {
            if request {
                let _ = net.apply(NodeId(h % n), Event::Request(CsRequest::ONE));
            } else if net.nodes[(h % n) as usize].status() == Status::Critical {
                net.apply(NodeId(h % n), Event::Release).unwrap();
            } else {
                net.deliver(k);
            }
        }
        for _ in 0..(4 * n) {
            for h in 0..n {
                if net.node(NodeId(h)).status() == Status::Critical {
                    net.apply(NodeId(h), Event::Release).unwrap();
                }
            }
            net.deliver_all(100_000).unwrap();
        }
        prop_assert!(net.nodes.iter().all(|x| x.status() == Status::Remainder));
        prop_assert_eq!(exact_form_holds(&net), Ok(()));
    }
}
