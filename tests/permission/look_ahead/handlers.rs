//! One test per look-ahead handler rule: initialisation, REQUEST, REPLY, exit, timeouts and
//! ignored peer input.

use manet_mutex::look_ahead::{
    initial_info_set, initial_sets, Config, Message, Node, Relation, Settings,
};

use crate::fixtures::{ann, assert_ignored, enter, node, recv, run, ts};
use manet_mutex::{Action, Anomaly, CsRequest, Event, NodeId, Protocol, Status, TimerId};

fn sends(actions: &[Action<Message>]) -> Vec<(u32, Message)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, msg } => Some((to.0, msg.clone())),
            _ => None,
        })
        .collect()
}

fn timers(actions: &[Action<Message>]) -> Vec<TimerId> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::SetTimer { timer, .. } => Some(*timer),
            _ => None,
        })
        .collect()
}

fn ids(it: impl Iterator<Item = NodeId>) -> Vec<u32> {
    it.map(|p| p.0).collect()
}

#[test]
fn fig1_initial_sets_give_exactly_one_direction_per_pair() {
    for n in 1..=20 {
        for seed in [0, 1, 42, u64::MAX] {
            let sets = initial_sets(n, seed);
            for i in 0..n {
                assert_eq!(sets[i as usize], initial_info_set(n, seed, NodeId(i)));
                for j in 0..n {
                    if i != j {
                        let i_asks_j = sets[i as usize].contains(&NodeId(j));
                        let j_asks_i = sets[j as usize].contains(&NodeId(i));
                        assert!(i_asks_j != j_asks_i, "n={n} seed={seed} pair {i},{j}");
                    }
                }
            }
        }
    }
    // The seed matters and the draw is balanced-ish.
    assert_ne!(initial_sets(20, 1), initial_sets(20, 2));
    let total: usize = initial_sets(20, 7).iter().map(Vec::len).sum();
    assert_eq!(total, 190);
}

#[test]
fn seeded_config_uses_the_row_of_the_matrix() {
    let n = Node::new(Config::new(NodeId(3), Settings::new(8, 10).with_seed(9))).unwrap();
    assert_eq!(
        n.info_set().collect::<Vec<_>>(),
        initial_info_set(8, 9, NodeId(3))
    );
    let mut all: Vec<u32> = ids(n.info_set().chain(n.status_set()));
    all.sort();
    assert_eq!(all, vec![0, 1, 2, 4, 5, 6, 7]);
}

#[test]
fn request_goes_to_info_set_only_with_one_timer_each() {
    let mut a = node(0, 4, &[1, 3]);
    let acts = run(&mut a, Event::Request(CsRequest::ONE));
    let t = ts(1, 0);
    assert_eq!(
        sends(&acts),
        vec![
            (1, Message::request(t, 1, 0, 0)),
            (3, Message::request(t, 1, 0, 0))
        ]
    );
    assert_eq!(timers(&acts).len(), 2);
    assert_eq!(a.status(), Status::Waiting);
    assert_eq!(a.timestamp(), Some(t));
    assert_eq!(ids(a.outstanding()), vec![1, 3]);
}

#[test]
fn request_with_empty_info_set_enters_at_once() {
    let mut a = node(0, 3, &[]);
    let acts = run(&mut a, Event::Request(CsRequest::ONE));
    assert_eq!(acts, vec![enter(1)]);
    assert_eq!(a.status(), Status::Critical);
}

#[test]
fn idle_host_replies_and_moves_requester_from_status_to_info() {
    let mut b = node(1, 3, &[]);
    assert_eq!(b.relation(NodeId(0)), Some(Relation::Status));
    let acts = recv(&mut b, 0, Message::request(ts(5, 0), 1, 0, 0));
    assert_eq!(
        sends(&acts),
        vec![(0, Message::reply(ts(5, 0), 1, 0, 0, 0))]
    );
    assert_eq!(b.relation(NodeId(0)), Some(Relation::Info));
    assert_eq!(b.clock(), 5, "Lamport clock merges the request's");
    assert_eq!(b.deferred().count(), 0);
}

#[test]
fn waiting_host_with_lower_priority_replies_and_asks_the_requester() {
    let mut b = node(1, 3, &[2]);
    run(&mut b, Event::Request(CsRequest::ONE)); // ts (1, 1)
    let acts = recv(&mut b, 0, Message::request(ts(1, 0), 1, 0, 0));
    assert_eq!(
        sends(&acts),
        vec![
            (0, Message::reply(ts(1, 0), 1, 0, 0, 0)),
            (0, Message::request(ts(1, 1), 1, 0, 0))
        ]
    );
    assert_eq!(ids(b.outstanding()), vec![0, 2]);
    assert_eq!(b.relation(NodeId(0)), Some(Relation::Info));
}

#[test]
fn waiting_host_with_higher_priority_defers_into_q_req() {
    let mut b = node(1, 3, &[2]);
    run(&mut b, Event::Request(CsRequest::ONE)); // ts (1, 1)
    let acts = recv(&mut b, 0, Message::request(ts(1, 0), 1, 0, 0));
    assert!(!sends(&acts).is_empty(), "(1,0) beats (1,1): reply");
    let mut c = node(2, 3, &[]);
    run(&mut c, Event::Request(CsRequest::ONE)); // enters: ts (1, 2)
    assert_eq!(c.status(), Status::Critical);
    let acts = recv(&mut c, 0, Message::request(ts(1, 0), 1, 0, 0));
    assert!(sends(&acts).is_empty(), "in the CS: defer");
    assert_eq!(ids(c.deferred()), vec![0]);
    assert_eq!(c.relation(NodeId(0)), Some(Relation::Info));
    let mut d = node(2, 3, &[1]);
    run(&mut d, Event::Request(CsRequest::ONE)); // ts (1, 2), waiting for 1
    let acts = recv(&mut d, 0, Message::request(ts(3, 0), 1, 0, 0));
    assert!(sends(&acts).is_empty(), "(1,2) beats (3,0): defer");
    assert_eq!(ids(d.deferred()), vec![0]);
}

#[test]
fn reply_moves_replier_to_status_set_unless_its_request_is_deferred() {
    let mut a = node(0, 3, &[1, 2]);
    run(&mut a, Event::Request(CsRequest::ONE)); // ts (1, 0)
    recv(&mut a, 2, Message::request(ts(4, 2), 1, 0, 0)); // deferred
    let acts = recv(&mut a, 1, Message::reply(ts(1, 0), 1, 0, 0, 0));
    assert!(acts.iter().any(|x| matches!(x, Action::CancelTimer { .. })));
    assert_eq!(a.relation(NodeId(1)), Some(Relation::Status));
    let acts = recv(&mut a, 2, Message::reply(ts(1, 0), 1, 0, 0, 0));
    assert!(acts.contains(&enter(1)));
    assert_eq!(a.relation(NodeId(2)), Some(Relation::Info), "2 is in Q_req");
}

#[test]
fn exit_replies_to_q_req_only_not_to_the_whole_info_set() {
    // 1 and 3 are in Info_set without having asked: they get nothing on exit.
    let mut a = node(0, 4, &[1, 3]);
    run(&mut a, Event::Request(CsRequest::ONE));
    recv(&mut a, 1, Message::reply(ts(1, 0), 1, 0, 0, 0));
    recv(&mut a, 3, Message::reply(ts(1, 0), 1, 0, 0, 0));
    assert_eq!(a.status(), Status::Critical);
    recv(&mut a, 2, Message::request(ts(9, 2), 1, 0, 0));
    recv(&mut a, 3, Message::request(ts(9, 3), 1, 0, 0));
    a.handle(Event::Doze).unwrap_err();
    let acts = run(&mut a, Event::Release);
    assert_eq!(
        sends(&acts),
        vec![
            (2, Message::reply(ts(9, 2), 1, 0, 0, 1)),
            (3, Message::reply(ts(9, 3), 1, 0, 0, 1))
        ]
    );
    assert_eq!(a.relation(NodeId(1)), Some(Relation::Status));
    assert_eq!(a.status(), Status::Remainder);
    assert_eq!(a.timestamp(), None);
    assert_eq!(a.deferred().count(), 0);
    assert_eq!(a.relation(NodeId(2)), Some(Relation::Info));
}

#[test]
fn reply_to_a_host_that_is_not_requesting_is_ignored() {
    let mut a = node(0, 3, &[1]);
    let reply = Message::reply(ts(1, 0), 1, 0, 0, 0);
    // In particular no set moves.
    assert_ignored(&mut a, 2, reply, Anomaly::Unexpected);
}

#[test]
fn stale_and_duplicate_replies_grant_nothing() {
    let mut a = node(0, 3, &[1, 2]);
    run(&mut a, Event::Request(CsRequest::ONE)); // (1, 0)
    recv(&mut a, 1, Message::reply(ts(1, 0), 1, 0, 0, 0));
    // Duplicate from 1, a REPLY to an older request, a REPLY to an older epoch's copy.
    for (from, msg) in [
        (1, Message::reply(ts(1, 0), 1, 0, 0, 0)),
        (2, Message::reply(ts(0, 0), 1, 0, 0, 0)),
        (2, Message::reply(ts(1, 0), 1, 7, 0, 0)),
    ] {
        assert_ignored(&mut a, from, msg, Anomaly::Stale);
    }
    assert_eq!(a.status(), Status::Waiting);
}

#[test]
fn timeout_retransmits_with_a_fresh_timer_and_stale_timeouts_are_noops() {
    let mut a = node(0, 2, &[1]);
    let acts = run(&mut a, Event::Request(CsRequest::ONE));
    let first = timers(&acts)[0];
    let acts = run(&mut a, Event::Timeout(first));
    assert_eq!(sends(&acts), vec![(1, Message::request(ts(1, 0), 1, 0, 0))]);
    let second = timers(&acts)[0];
    assert_ne!(first, second);
    let snapshot = a.clone();
    assert!(
        run(&mut a, Event::Timeout(first)).is_empty(),
        "re-armed since"
    );
    assert!(
        run(&mut a, Event::Timeout(TimerId(999))).is_empty(),
        "unknown"
    );
    assert_eq!(a, snapshot);
    let acts = recv(&mut a, 1, Message::reply(ts(1, 0), 1, 0, 0, 0));
    assert!(acts.contains(&Action::CancelTimer { timer: second }));
    assert!(run(&mut a, Event::Timeout(second)).is_empty(), "cancelled");
    assert_eq!(a.status(), Status::Critical);
}

#[test]
fn input_from_unknown_or_lying_peers_is_ignored() {
    let mut a = node(0, 3, &[1]);
    let snapshot = a.clone();
    for (from, msg, kind) in [
        (7, Message::request(ts(1, 7), 1, 0, 0), Anomaly::UnknownPeer),
        (0, Message::request(ts(1, 0), 1, 0, 0), Anomaly::UnknownPeer),
        (1, Message::request(ts(1, 2), 1, 0, 0), Anomaly::OutOfRange),
        (1, Message::reply(ts(1, 2), 1, 0, 0, 0), Anomaly::OutOfRange),
        (1, Message::Doze(ann(ts(1, 2))), Anomaly::OutOfRange),
    ] {
        let acts = recv(&mut a, from, msg);
        assert_eq!(
            acts,
            vec![Action::Anomaly {
                from: NodeId(from),
                kind
            }]
        );
        assert_eq!(a, snapshot);
    }
}

#[test]
fn peer_clocks_out_of_reach_are_refused_and_move_the_clock_by_the_limit_at_most() {
    use manet_mutex::permission::SKEW_LIMIT;
    let mut a = node(0, 2, &[1]);
    let request = |clock| Message::request(ts(clock, 1), 1, 0, 0);
    assert_ignored(&mut a, 1, request(0), Anomaly::OutOfRange);
    // Refused, but the clock moves the limit towards it: a peer that took in a forged value
    // loses one message to each host, not all of them for ever.
    let acts = recv(&mut a, 1, request(u64::MAX));
    assert_eq!(
        acts,
        vec![Action::Anomaly {
            from: NodeId(1),
            kind: Anomaly::OutOfRange
        }]
    );
    assert_eq!(a.clock(), SKEW_LIMIT);
    assert_eq!(
        a.relation(NodeId(1)),
        Some(Relation::Info),
        "nothing else changed"
    );
    // Within reach: merged as Lamport says.
    recv(&mut a, 1, request(2 * SKEW_LIMIT));
    assert_eq!(a.clock(), 2 * SKEW_LIMIT);
    let acts = run(&mut a, Event::Request(CsRequest::ONE));
    assert_eq!(a.timestamp(), Some(ts(2 * SKEW_LIMIT + 1, 0)));
    assert_eq!(sends(&acts).len(), 1);
}

/// A7: as for Ricart–Agrawala, a peer's restart renumbers the open request and keeps its
/// timestamp and epoch, so a late REPLY to the old number with only `seq` corrupted would
/// otherwise grant the new one; its check word no longer matches, and it grants nothing.
#[test]
fn a_late_reply_to_a_renumbered_request_with_seq_corrupted_grants_nothing() {
    let mut a = node(0, 3, &[1, 2]);
    let _ = run(&mut a, Event::Request(CsRequest::ONE)); // (1,0), number 1
                                                         // Host 1 restarted (incarnation 1): host 0 asks everyone again under number 2.
    let restarted = (1u64 << 32) + 1;
    let acts = recv(&mut a, 1, Message::request(ts(1, 1), restarted, 0, 0));
    assert!(sends(&acts)
        .iter()
        .any(|(to, m)| *to == 2 && matches!(m, Message::Request { seq: 2, .. })));
    // Host 2's REPLY to number 1, its `seq` corrupted to 2.
    let mut forged = Message::reply(ts(1, 0), 1, 0, 0, 0);
    if let Message::Reply { seq, .. } = &mut forged {
        *seq = 2;
    }
    let snapshot = a.clone();
    assert_eq!(
        recv(&mut a, 2, forged),
        vec![Action::Anomaly {
            from: NodeId(2),
            kind: Anomaly::OutOfRange
        }]
    );
    assert_eq!(a, snapshot);
    assert_eq!(a.status(), Status::Waiting);
}
