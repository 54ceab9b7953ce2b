//! Doze, voluntary disconnection and reconnection: the announcements, which of them a
//! receiver applies (causal or concurrent, absent peers) and the stale-announcement rules.

use crate::fixtures::{ann, assert_ignored, enter, node, recv, run, ts};
use manet_mutex::look_ahead::{Announcement, Message, Mode, Node, Relation};
use manet_mutex::{Action, Anomaly, CsRequest, Event, Fence, NodeId, Protocol, Status};
use manet_mutex_testkit::PermNet;

/// Two hosts; host 0 asks host 1 (the paper's consistent starting state).
fn pair() -> PermNet<Node> {
    PermNet::with_nodes(vec![node(0, 2, &[1]), node(1, 2, &[])]).checked()
}

fn is_request(f: &manet_mutex_testkit::Flight<Message>) -> bool {
    matches!(f.msg, Message::Request { .. })
}

#[test]
fn doze_broadcasts_and_moves_every_peer_into_info_set() {
    let mut b = node(1, 3, &[]);
    let acts = run(&mut b, Event::Doze);
    let t = ts(1, 1);
    assert_eq!(
        acts,
        vec![
            Action::Send {
                to: NodeId(0),
                msg: Message::Doze(ann(t))
            },
            Action::Send {
                to: NodeId(2),
                msg: Message::Doze(ann(t))
            },
        ]
    );
    assert_eq!(b.mode(), Mode::Dozing);
    assert_eq!(b.t_rec(), t);
    assert_eq!(b.status_set().count(), 0);
    assert!(run(&mut b, Event::Wake).is_empty(), "waking sends nothing");
    assert_eq!(b.mode(), Mode::Normal);
}

#[test]
fn doze_receiver_stops_waiting_for_the_dozer_and_may_enter() {
    let mut a = node(0, 2, &[1]);
    run(&mut a, Event::Request(CsRequest::ONE));
    let acts = recv(&mut a, 1, Message::Doze(ann(ts(1, 1))));
    assert!(acts.iter().any(|x| matches!(x, Action::CancelTimer { .. })));
    assert!(acts.contains(&enter(1)));
    assert_eq!(a.relation(NodeId(1)), Some(Relation::Status));
}

#[test]
fn dozing_host_answers_a_retransmitted_request() {
    // The DOZE is lost; the requester keeps retransmitting and the dozer grants.
    let mut net = pair();
    net.apply(NodeId(1), Event::Doze).unwrap();
    net.lose(0);
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    net.lose(0); // the first copy is lost too
    let timer = net.timers[0][0];
    net.fire(NodeId(0), timer);
    net.deliver_where(is_request);
    assert_eq!(net.node(NodeId(1)).mode(), Mode::Dozing);
    net.deliver(0);
    assert_eq!(net.node(NodeId(0)).status(), Status::Critical);
    // The REPLY moved the dozer into the requester's Status_set; the dozer asks everyone.
    assert_eq!(
        net.node(NodeId(0)).relation(NodeId(1)),
        Some(Relation::Status)
    );
    assert_eq!(
        net.node(NodeId(1)).relation(NodeId(0)),
        Some(Relation::Info)
    );
}

#[test]
fn disconnect_drops_the_disconnecting_hosts_q_req_entry_and_wait() {
    let mut c = node(2, 3, &[1]);
    run(&mut c, Event::Request(CsRequest::ONE)); // (1, 2), waits for 1
    recv(&mut c, 0, Message::request(ts(5, 0), 1, 0, 0)); // deferred
    assert_eq!(c.deferred().map(|p| p.0).collect::<Vec<_>>(), vec![0]);
    // 0 disconnects: it is in its remainder section, so its deferred request is stale.
    recv(&mut c, 0, Message::Disconnect(ann(ts(6, 0))));
    assert_eq!(c.deferred().count(), 0);
    assert_eq!(c.relation(NodeId(0)), Some(Relation::Status));
    // 1 disconnects: c no longer needs its REPLY.
    let acts = recv(&mut c, 1, Message::Disconnect(ann(ts(3, 1))));
    assert!(acts.contains(&enter(1)));
    // Exit owes nobody a REPLY.
    let acts = run(&mut c, Event::Release);
    assert!(acts.is_empty());
}

#[test]
fn voluntary_disconnection_and_reconnection_round_trip() {
    let mut net = pair();
    net.apply(NodeId(1), Event::Disconnect).unwrap();
    assert_eq!(net.node(NodeId(1)).mode(), Mode::Disconnected);
    assert!(net
        .apply(NodeId(1), Event::Request(CsRequest::ONE))
        .is_err());
    net.deliver_all(100_000).unwrap();
    assert_eq!(
        net.node(NodeId(0)).relation(NodeId(1)),
        Some(Relation::Status)
    );
    net.apply(NodeId(1), Event::Reconnect).unwrap();
    assert_eq!(net.node(NodeId(1)).mode(), Mode::Normal);
    net.deliver_all(100_000).unwrap();
    // Host 1's RECONNECT had seen everything host 0 announced (nothing): 1 goes to Status_set.
    assert_eq!(
        net.node(NodeId(0)).relation(NodeId(1)),
        Some(Relation::Status)
    );
    assert_eq!(
        net.node(NodeId(1)).relation(NodeId(0)),
        Some(Relation::Info)
    );
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.settle(500).unwrap();
    assert_eq!(net.entries, vec![(NodeId(1), Fence::new(0, 1))]);
}

#[test]
fn concurrent_reconnects_leave_both_hosts_asking() {
    // Neither RECONNECT had seen the other: applying both would leave each host in the other's
    // Status_set (the paper's reason for comparing T_rec); applying neither keeps both asking.
    let mut net = pair();
    net.apply(NodeId(0), Event::Reconnect).unwrap();
    net.apply(NodeId(1), Event::Reconnect).unwrap();
    net.deliver_all(100_000).unwrap();
    assert_eq!(
        net.node(NodeId(0)).relation(NodeId(1)),
        Some(Relation::Info)
    );
    assert_eq!(
        net.node(NodeId(1)).relation(NodeId(0)),
        Some(Relation::Info)
    );
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.settle(500).unwrap();
    assert_eq!(net.entries.len(), 2);
}

#[test]
fn a_reconnect_that_had_seen_ours_is_applied() {
    let mut net = pair();
    net.apply(NodeId(0), Event::Reconnect).unwrap();
    net.deliver_all(100_000).unwrap();
    net.apply(NodeId(1), Event::Reconnect).unwrap();
    net.deliver_all(100_000).unwrap();
    // Host 1 announced after seeing host 0's RECONNECT: host 0 stops asking it.
    assert_eq!(
        net.node(NodeId(0)).relation(NodeId(1)),
        Some(Relation::Status)
    );
    assert_eq!(
        net.node(NodeId(1)).relation(NodeId(0)),
        Some(Relation::Info)
    );
}

#[test]
fn concurrent_dozes_leave_both_hosts_asking() {
    // Applying both would let both, once awake, enter without asking.
    let mut net = pair();
    net.apply(NodeId(0), Event::Doze).unwrap();
    net.apply(NodeId(1), Event::Doze).unwrap();
    net.deliver_all(100_000).unwrap();
    net.apply(NodeId(0), Event::Wake).unwrap();
    net.apply(NodeId(1), Event::Wake).unwrap();
    let asks = |net: &PermNet<Node>, a: u32, b: u32| {
        net.node(NodeId(a)).relation(NodeId(b)) == Some(Relation::Info)
    };
    assert!(asks(&net, 0, 1) && asks(&net, 1, 0));
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.settle(500).unwrap();
    assert_eq!(net.entries.len(), 2);
}

/// V4: a DISCONNECT concurrent with our own announcement still ends our wait, and the host
/// that left, back, keeps asking us (it does not apply our concurrent RECONNECT), so it cannot
/// enter while we are inside.
#[test]
fn disconnect_concurrent_with_our_reconnect_ends_the_wait_and_the_leaver_asks_on_return() {
    let mut net = pair();
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    net.apply(NodeId(0), Event::Reconnect).unwrap(); // an accidental outage, reported while waiting
    net.apply(NodeId(1), Event::Disconnect).unwrap(); // concurrently: host 1 leaves
    net.deliver_where(|f| matches!(f.msg, Message::Disconnect(_)));
    assert_eq!(
        net.node(NodeId(0)).status(),
        Status::Critical,
        "no wait for a host that left"
    );
    assert!(net.node(NodeId(0)).is_absent(NodeId(1)));
    net.apply(NodeId(1), Event::Reconnect).unwrap();
    // Host 0's RECONNECT reaches host 1 before anything else from host 0.
    net.deliver_where(|f| f.to == NodeId(1) && matches!(f.msg, Message::Reconnect(_)));
    assert_eq!(
        net.node(NodeId(1)).relation(NodeId(0)),
        Some(Relation::Info)
    );
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_all(100_000).unwrap();
    assert_eq!(
        net.node(NodeId(1)).status(),
        Status::Waiting,
        "host 0 is inside"
    );
    net.settle(500).unwrap();
    assert_eq!(
        net.entries,
        vec![(NodeId(0), Fence::new(0, 1)), (NodeId(1), Fence::new(0, 2))]
    );
}

#[test]
fn an_absent_host_stays_unasked_across_our_own_announcements() {
    let mut net =
        PermNet::with_nodes(vec![node(0, 3, &[1, 2]), node(1, 3, &[2]), node(2, 3, &[])]).checked();
    net.apply(NodeId(2), Event::Disconnect).unwrap();
    net.deliver_all(100_000).unwrap();
    assert!(net.node(NodeId(0)).is_absent(NodeId(2)));
    // Host 0 dozes, wakes and reports an outage: host 2 stays in its Status_set, and the
    // copies host 2 will find on return say it is counted as absent.
    net.apply(NodeId(0), Event::Doze).unwrap();
    net.apply(NodeId(0), Event::Wake).unwrap();
    net.apply(NodeId(0), Event::Reconnect).unwrap();
    assert_eq!(
        net.node(NodeId(0)).relation(NodeId(2)),
        Some(Relation::Status)
    );
    assert!(net
        .to(NodeId(2))
        .iter()
        .filter(|f| f.from == NodeId(0))
        .all(|f| matches!(f.msg, Message::Doze(a) | Message::Reconnect(a) if a.absent)));
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_all_except(NodeId(2));
    assert_eq!(net.node(NodeId(0)).status(), Status::Critical);
    // Back, host 2 does not apply what host 0 sent while counting it absent: it asks host 0.
    net.apply(NodeId(2), Event::Reconnect).unwrap();
    net.deliver_all(100_000).unwrap();
    assert_eq!(
        net.node(NodeId(2)).relation(NodeId(0)),
        Some(Relation::Info)
    );
    assert!(
        !net.node(NodeId(0)).is_absent(NodeId(2)),
        "heard from it again"
    );
    net.apply(NodeId(2), Event::Request(CsRequest::ONE))
        .unwrap();
    net.settle(500).unwrap();
    assert_eq!(
        net.entries,
        vec![(NodeId(0), Fence::new(0, 1)), (NodeId(2), Fence::new(0, 2))]
    );
}

#[test]
fn of_two_concurrent_disconnects_only_the_later_is_applied() {
    let mut net = pair();
    net.apply(NodeId(0), Event::Disconnect).unwrap(); // (1, 0)
    net.apply(NodeId(1), Event::Disconnect).unwrap(); // (1, 1): later
    net.deliver_all(100_000).unwrap();
    assert!(net.node(NodeId(0)).is_absent(NodeId(1)));
    assert_eq!(
        net.node(NodeId(1)).relation(NodeId(0)),
        Some(Relation::Info)
    );
    assert!(!net.node(NodeId(1)).is_absent(NodeId(0)));
    // Host 0, back first, does not wait for host 1; host 1, back, asks host 0.
    net.apply(NodeId(0), Event::Reconnect).unwrap();
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_all_except(NodeId(1));
    assert_eq!(net.node(NodeId(0)).status(), Status::Critical);
    net.apply(NodeId(1), Event::Reconnect).unwrap();
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.settle(500).unwrap();
    assert_eq!(
        net.entries,
        vec![(NodeId(0), Fence::new(0, 1)), (NodeId(1), Fence::new(0, 2))]
    );
}

#[test]
fn announcement_from_a_host_counting_us_absent_is_not_applied() {
    let mut a = node(0, 2, &[]);
    let absent = Announcement::new(ts(4, 1), 0, true, 0);
    recv(&mut a, 1, Message::Doze(absent));
    assert_eq!(a.relation(NodeId(1)), Some(Relation::Info));
}

#[test]
fn reconnect_with_an_old_timestamp_is_stale() {
    let mut a = node(0, 2, &[1]);
    recv(&mut a, 1, Message::Reconnect(ann(ts(5, 1))));
    for msg in [
        Message::Reconnect(ann(ts(5, 1))),
        Message::Reconnect(ann(ts(3, 1))),
        Message::Doze(ann(ts(4, 1))),
    ] {
        assert_ignored(&mut a, 1, msg, Anomaly::Stale);
    }
}

#[test]
fn announcement_overtaken_by_a_later_request_is_stale() {
    // 1 dozes, wakes and requests; its REQUEST overtakes the DOZE. Applying the DOZE after
    // the REQUEST/REPLY exchange would leave both hosts in each other's Status_set.
    let mut net = pair();
    net.apply(NodeId(1), Event::Doze).unwrap();
    net.apply(NodeId(1), Event::Wake).unwrap();
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_where(is_request);
    net.deliver_where(|f| matches!(f.msg, Message::Reply { .. }));
    assert_eq!(
        net.node(NodeId(1)).relation(NodeId(0)),
        Some(Relation::Status)
    );
    net.deliver_where(|f| matches!(f.msg, Message::Doze { .. }));
    assert_eq!(
        net.node(NodeId(0)).relation(NodeId(1)),
        Some(Relation::Info)
    );
    assert!(net
        .anomalies
        .contains(&(NodeId(0), NodeId(1), Anomaly::Stale)));
}

#[test]
fn request_copy_from_before_an_applied_announcement_is_stale() {
    let mut a = node(0, 2, &[]);
    recv(&mut a, 1, Message::Disconnect(ann(ts(4, 1))));
    let copy = Message::request(ts(2, 1), 1, 0, 0);
    let before = a.clone();
    // Ignored, but answered with a REPLY that grants nothing: it names no request (number 0)
    // and the old epoch, and says which epoch of the sender we have seen (the sender re-announces if that is beyond its
    // own: `request_from_a_host_whose_epoch_we_overrate_gets_a_resync_hint`).
    let acts = recv(&mut a, 1, copy);
    assert_eq!(
        acts,
        vec![
            Action::Anomaly {
                from: NodeId(1),
                kind: Anomaly::Stale
            },
            Action::Send {
                to: NodeId(1),
                msg: Message::reply(ts(2, 1), 0, 0, 4, 0)
            }
        ]
    );
    assert_eq!(a, before);
}

#[test]
fn reconnect_while_waiting_restarts_permission_collection() {
    let mut net = pair();
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap(); // (1, 0)
    net.deliver_where(is_request);
    // 1's REPLY (epoch 0) is delayed; 0 reconnects after an accidental outage.
    net.apply(NodeId(0), Event::Reconnect).unwrap();
    assert_eq!(net.node(NodeId(0)).status(), Status::Waiting);
    assert_eq!(net.node(NodeId(0)).outstanding().count(), 1);
    net.deliver_where(|f| {
        matches!(
            f.msg,
            Message::Reply {
                seq: 1,
                epoch: 0,
                seen: 0,
                ..
            }
        )
    });
    assert_eq!(
        net.node(NodeId(0)).status(),
        Status::Waiting,
        "pre-outage REPLY is stale"
    );
    net.settle(500).unwrap();
    assert_eq!(net.entries, vec![(NodeId(0), Fence::new(0, 1))]);
}

#[test]
fn reconnect_inside_the_cs_is_announced_on_release() {
    let mut a = node(0, 2, &[]);
    run(&mut a, Event::Request(CsRequest::ONE));
    assert_eq!(a.status(), Status::Critical);
    let acts = run(&mut a, Event::Reconnect);
    assert!(
        acts.is_empty(),
        "receivers would stop asking a host that is inside"
    );
    assert_eq!(a.relation(NodeId(1)), Some(Relation::Info));
    let acts = run(&mut a, Event::Release);
    assert!(matches!(
        acts.as_slice(),
        [Action::Send {
            msg: Message::Reconnect { .. },
            ..
        }]
    ));
}

#[test]
fn reconnect_does_not_release_a_wait_on_the_reconnecting_host() {
    // The paper drops the timeout for the reconnecting host; we keep it, since the host may
    // be waiting or inside the critical section after an accidental disconnection.
    let mut a = node(0, 2, &[1]);
    run(&mut a, Event::Request(CsRequest::ONE));
    let acts = recv(&mut a, 1, Message::Reconnect(ann(ts(3, 1))));
    assert!(acts.is_empty());
    assert_eq!(a.outstanding().count(), 1);
    assert_eq!(a.status(), Status::Waiting);
}

#[test]
fn request_from_a_host_whose_epoch_we_overrate_gets_a_resync_hint() {
    // A corrupted REQUEST pushed our record of host 1's epoch to 1000; its real requests (epoch
    // 0) now look older than that. We answer them with a REPLY that says what we have seen
    // and names no request (number 0), so that no single corrupted field makes it a grant.
    let mut a = node(0, 2, &[]);
    let poisoned = Message::request(ts(3, 1), 1, 1000, 0);
    recv(&mut a, 1, poisoned);
    assert_eq!(a.peer_epoch(NodeId(1)), 1000);
    let real = Message::request(ts(3, 1), 1, 0, 0);
    let acts = recv(&mut a, 1, real);
    assert!(acts.contains(&Action::Send {
        to: NodeId(1),
        msg: Message::reply(ts(3, 1), 0, 0, 1000, 0)
    }));
}

#[test]
fn reply_that_has_seen_beyond_our_epoch_grants_nothing_and_we_reannounce_beyond_it() {
    let mut a = node(0, 2, &[1]);
    run(&mut a, Event::Request(CsRequest::ONE));
    let reply = Message::reply(ts(1, 0), 1, 0, 1000, 0);
    let acts = recv(&mut a, 1, reply);
    assert_eq!(a.status(), Status::Waiting, "the REPLY granted nothing");
    assert!(
        a.t_rec().clock > 1000,
        "re-announced beyond what host 1 has seen"
    );
    assert!(acts.iter().any(
        |x| matches!(x, Action::Send { msg: Message::Reconnect(r), .. } if r.ts.clock > 1000)
    ));
    // The request goes out again under the new epoch, which host 1 takes as current.
    assert!(acts.iter().any(|x| matches!(
        x,
        Action::Send { msg: Message::Request { epoch, .. }, .. } if *epoch > 1000
    )));
}

#[test]
fn a_request_epoch_corrupted_upwards_heals_within_one_exchange() {
    let mut net = pair();
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    // The REQUEST's epoch is corrupted on the way to host 1.
    let Message::Request { epoch, .. } = &mut net.in_flight[0].msg else {
        panic!("{:?}", net.in_flight)
    };
    *epoch = 1 << 40;
    // Its receiver drops it: only the retransmission can recover it.
    net.lost = true;
    net.settle(500).unwrap();
    assert_eq!(net.entries, vec![(NodeId(0), Fence::new(0, 1))]);
    // Both hosts still serve each other afterwards: nobody is muted.
    for round in 0..3 {
        net.apply(NodeId(1), Event::Request(CsRequest::ONE))
            .unwrap();
        net.apply(NodeId(0), Event::Request(CsRequest::ONE))
            .unwrap();
        net.settle(500).unwrap();
        assert_eq!(net.entries.len(), 3 + 2 * round);
    }
    assert!(net.node(NodeId(1)).peer_epoch(NodeId(0)) <= net.node(NodeId(0)).t_rec().clock);
}

#[test]
fn an_announcement_with_any_field_corrupted_is_dropped_like_a_lost_one() {
    let good = Announcement::new(ts(4, 1), 0, false, 0);
    let mut corrupted = Vec::new();
    for v in [0, 1, 5, u64::MAX] {
        let mut a = good;
        a.ts.clock = v;
        corrupted.push(a);
        let mut a = good;
        a.seen = v;
        corrupted.push(a);
        let mut a = good;
        a.check = v;
        corrupted.push(a);
    }
    let mut a = good;
    a.absent = true;
    corrupted.push(a);
    let mut a = good;
    a.ts.id = NodeId(0);
    corrupted.push(a);
    for bad in corrupted.into_iter().filter(|bad| *bad != good) {
        assert!(!bad.is_intact() || bad.ts.id != NodeId(1), "{bad:?}");
        let mut host = node(0, 2, &[1]);
        assert_ignored(&mut host, 1, Message::Disconnect(bad), Anomaly::OutOfRange);
    }
}

/// Two hosts in majority mode (each needs the other's grant).
fn majority_pair() -> PermNet<Node> {
    let settings = manet_mutex::look_ahead::Settings::new(2, 50).with_majority(true);
    let nodes = (0..2)
        .map(|i| Node::new(manet_mutex::look_ahead::Config::new(NodeId(i), settings)).unwrap())
        .collect();
    PermNet::with_nodes(nodes).checked()
}

fn is_reconnect(f: &manet_mutex_testkit::Flight<Message>) -> bool {
    matches!(f.msg, Message::Reconnect(_))
}

/// C10 (fuzz seed 1780 of `look_ahead_network_in_majority_mode_keeps_every_invariant`,
/// reduced): in majority mode host 1's DISCONNECT excludes it at host 0; its RECONNECT is
/// lost. Host 0 then asks: without host 1's grant there is no majority, and host 1, excluded,
/// was never asked, so host 0 waited for ever. It now probes host 1, whose answer (to a
/// number issued after its DISCONNECT was applied) readmits it and counts.
#[test]
fn in_majority_mode_a_host_whose_reconnect_was_lost_is_probed_and_readmitted() {
    let mut net = majority_pair();
    net.apply(NodeId(1), Event::Disconnect).unwrap();
    net.deliver_all(100).unwrap();
    assert!(net.node(NodeId(0)).is_absent(NodeId(1)));
    assert!(net.node(NodeId(0)).is_excluded(NodeId(1)));
    net.apply(NodeId(1), Event::Reconnect).unwrap();
    let lost = net.in_flight.iter().position(is_reconnect).unwrap();
    net.lose(lost);
    net.request(NodeId(0));
    assert_eq!(
        net.node(NodeId(0)).probed().collect::<Vec<_>>(),
        [NodeId(1)],
        "the host that left is probed"
    );
    assert_eq!(
        net.node(NodeId(0)).outstanding().count(),
        0,
        "not waited for"
    );
    net.deliver_all(100).unwrap();
    assert_eq!(net.status(NodeId(0)), Status::Critical);
    assert!(!net.node(NodeId(0)).is_absent(NodeId(1)));
    assert!(!net.node(NodeId(0)).is_excluded(NodeId(1)));
    assert!(net
        .reports
        .contains(&(NodeId(0), manet_mutex::Report::PeerReadmitted(NodeId(1)))));
    net.release(NodeId(0));
    net.request(NodeId(1));
    net.settle(50).unwrap();
    assert_eq!(net.entries.len(), 2, "{:?}", net.entries);
}

/// C10: a REPLY of the host that left, to the number that was open when its DISCONNECT was
/// applied, may have been sent before it left: it readmits nothing and its grant does not
/// count. The probe that follows, still without a majority, renumbers the request; the
/// answer to the new number readmits host 1.
#[test]
fn in_majority_mode_a_reply_to_a_number_open_when_its_sender_left_readmits_nothing() {
    let mut net = majority_pair();
    net.request(NodeId(0));
    net.deliver_where(is_request); // host 1 grants; the REPLY stays in flight
    net.apply(NodeId(1), Event::Disconnect).unwrap();
    net.deliver_where(|f| matches!(f.msg, Message::Disconnect(_)));
    assert!(net.node(NodeId(0)).is_absent(NodeId(1)));
    // The late REPLY: a grant of host 1's given before it left.
    net.deliver_where(|f| matches!(f.msg, Message::Reply { .. }));
    assert_eq!(net.status(NodeId(0)), Status::Waiting);
    assert!(net.node(NodeId(0)).is_absent(NodeId(1)));
    assert!(net.node(NodeId(0)).is_excluded(NodeId(1)));
    assert!(!net.node(NodeId(0)).has_quorum());
    assert_eq!(
        net.node(NodeId(0)).probed().collect::<Vec<_>>(),
        [NodeId(1)],
        "still probed"
    );
    // Host 1 comes back; its RECONNECT is lost.
    net.apply(NodeId(1), Event::Reconnect).unwrap();
    let lost = net.in_flight.iter().position(is_reconnect).unwrap();
    net.lose(lost);
    assert!(net.in_flight.is_empty());
    let before = net.node(NodeId(0)).timestamp();
    let timer = net.timers[0][0];
    net.fire(NodeId(0), timer);
    assert_eq!(net.node(NodeId(0)).timestamp(), before, "same priority");
    net.deliver_all(100).unwrap();
    assert_eq!(net.status(NodeId(0)), Status::Critical);
    assert!(!net.node(NodeId(0)).is_absent(NodeId(1)));
}
