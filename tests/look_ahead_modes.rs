//! Doze, voluntary disconnection and reconnection: the announcements, the `T_rec` comparison
//! and the stale-announcement rules.

mod la_net;

use la_net::{node, recv, run, ts, Net};
use manet_mutex::look_ahead::{Mode, Msg, Node, Relation};
use manet_mutex::{Action, Anomaly, CsRequest, Event, NodeId, Protocol, Status};

/// Two hosts; host 0 asks host 1 (the paper's consistent starting state).
fn pair() -> Net<Node> {
    Net::new(vec![node(0, 2, &[1]), node(1, 2, &[])])
}

fn is_request(f: &la_net::Flight<Msg>) -> bool {
    matches!(f.msg, Msg::Request { .. })
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
                msg: Msg::Doze { ts: t }
            },
            Action::Send {
                to: NodeId(2),
                msg: Msg::Doze { ts: t }
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
    let acts = recv(&mut a, 1, Msg::Doze { ts: ts(1, 1) });
    assert!(acts.iter().any(|x| matches!(x, Action::CancelTimer { .. })));
    assert!(acts.contains(&Action::EnterCritical { resources: 1 }));
    assert_eq!(a.relation(NodeId(1)), Some(Relation::Status));
}

#[test]
fn dozing_host_answers_a_retransmitted_request() {
    // The DOZE is lost; the requester keeps retransmitting and the dozer grants.
    let mut net = pair();
    net.apply(1, Event::Doze).unwrap();
    net.drop_msg(0);
    net.apply(0, Event::Request(CsRequest::ONE)).unwrap();
    net.drop_msg(0); // the first copy is lost too
    net.fire(0);
    net.deliver_where(is_request);
    assert_eq!(net.node(1).mode(), Mode::Dozing);
    net.deliver(0);
    assert_eq!(net.node(0).status(), Status::Critical);
    // The REPLY moved the dozer into the requester's Status_set; the dozer asks everyone.
    assert_eq!(net.node(0).relation(NodeId(1)), Some(Relation::Status));
    assert_eq!(net.node(1).relation(NodeId(0)), Some(Relation::Info));
}

#[test]
fn disconnect_drops_the_disconnecting_hosts_q_req_entry_and_wait() {
    let mut c = node(2, 3, &[1]);
    run(&mut c, Event::Request(CsRequest::ONE)); // (1, 2), waits for 1
    recv(
        &mut c,
        0,
        Msg::Request {
            ts: ts(5, 0),
            epoch: 0,
        },
    ); // deferred
    assert_eq!(c.q_req().map(|p| p.0).collect::<Vec<_>>(), vec![0]);
    // 0 disconnects: it is in its remainder section, so its deferred request is stale.
    recv(&mut c, 0, Msg::Disconnect { ts: ts(6, 0) });
    assert_eq!(c.q_req().count(), 0);
    assert_eq!(c.relation(NodeId(0)), Some(Relation::Status));
    // 1 disconnects: c no longer needs its REPLY.
    let acts = recv(&mut c, 1, Msg::Disconnect { ts: ts(3, 1) });
    assert!(acts.contains(&Action::EnterCritical { resources: 1 }));
    // Exit owes nobody a REPLY.
    let acts = run(&mut c, Event::Release);
    assert!(acts.is_empty());
}

#[test]
fn voluntary_disconnection_and_reconnection_round_trip() {
    let mut net = pair();
    net.apply(1, Event::Disconnect).unwrap();
    assert_eq!(net.node(1).mode(), Mode::Disconnected);
    assert!(net.apply(1, Event::Request(CsRequest::ONE)).is_err());
    net.deliver_all();
    assert_eq!(net.node(0).relation(NodeId(1)), Some(Relation::Status));
    net.apply(1, Event::Reconnect).unwrap();
    assert_eq!(net.node(1).mode(), Mode::Normal);
    net.deliver_all();
    // 0 reconnected never, so T_rec(0) = 0 < the RECONNECT's timestamp: 1 goes to Status_set.
    assert_eq!(net.node(0).relation(NodeId(1)), Some(Relation::Status));
    assert_eq!(net.node(1).relation(NodeId(0)), Some(Relation::Info));
    net.apply(1, Event::Request(CsRequest::ONE)).unwrap();
    net.drain();
    assert_eq!(net.entries, vec![NodeId(1)]);
}

#[test]
fn concurrent_reconnects_leave_exactly_one_direction_by_t_rec() {
    let mut net = pair();
    net.apply(0, Event::Reconnect).unwrap();
    net.apply(1, Event::Reconnect).unwrap();
    let (t0, t1) = (net.node(0).t_rec(), net.node(1).t_rec());
    assert_eq!((t0, t1), (ts(1, 0), ts(1, 1)));
    net.deliver_all();
    // (1,0) < (1,1): host 1 reconnected "later", so only host 0 moves it into Status_set.
    assert_eq!(net.node(0).relation(NodeId(1)), Some(Relation::Status));
    assert_eq!(net.node(1).relation(NodeId(0)), Some(Relation::Info));
}

#[test]
fn concurrent_dozes_use_the_same_comparison_and_stay_safe() {
    // Without the comparison both would move the other into Status_set and, once awake,
    // both could enter without asking.
    let mut net = pair();
    net.apply(0, Event::Doze).unwrap();
    net.apply(1, Event::Doze).unwrap();
    net.deliver_all();
    net.apply(0, Event::Wake).unwrap();
    net.apply(1, Event::Wake).unwrap();
    let asks =
        |net: &Net<Node>, a: u32, b: u32| net.node(a).relation(NodeId(b)) == Some(Relation::Info);
    assert!(asks(&net, 0, 1) || asks(&net, 1, 0));
    net.apply(0, Event::Request(CsRequest::ONE)).unwrap();
    net.apply(1, Event::Request(CsRequest::ONE)).unwrap();
    net.drain();
    assert_eq!(net.entries.len(), 2);
}

#[test]
fn reconnect_with_an_old_timestamp_is_stale() {
    let mut a = node(0, 2, &[1]);
    recv(&mut a, 1, Msg::Reconnect { ts: ts(5, 1) });
    let snapshot = a.clone();
    for msg in [
        Msg::Reconnect { ts: ts(5, 1) },
        Msg::Reconnect { ts: ts(3, 1) },
        Msg::Doze { ts: ts(4, 1) },
    ] {
        let acts = recv(&mut a, 1, msg);
        assert_eq!(
            acts,
            vec![Action::Anomaly {
                from: NodeId(1),
                kind: Anomaly::Stale
            }]
        );
        assert_eq!(a, snapshot);
    }
}

#[test]
fn announcement_overtaken_by_a_later_request_is_stale() {
    // 1 dozes, wakes and requests; its REQUEST overtakes the DOZE. Applying the DOZE after
    // the REQUEST/REPLY exchange would leave both hosts in each other's Status_set.
    let mut net = pair();
    net.apply(1, Event::Doze).unwrap();
    net.apply(1, Event::Wake).unwrap();
    net.apply(1, Event::Request(CsRequest::ONE)).unwrap();
    net.deliver_where(is_request);
    net.deliver_where(|f| matches!(f.msg, Msg::Reply { .. }));
    assert_eq!(net.node(1).relation(NodeId(0)), Some(Relation::Status));
    net.deliver_where(|f| matches!(f.msg, Msg::Doze { .. }));
    assert_eq!(net.node(0).relation(NodeId(1)), Some(Relation::Info));
    assert!(net
        .anomalies
        .contains(&(NodeId(0), NodeId(1), Anomaly::Stale)));
}

#[test]
fn request_copy_from_before_an_applied_announcement_is_stale() {
    let mut a = node(0, 2, &[]);
    recv(&mut a, 1, Msg::Disconnect { ts: ts(4, 1) });
    let snapshot = a.clone();
    let acts = recv(
        &mut a,
        1,
        Msg::Request {
            ts: ts(2, 1),
            epoch: 0,
        },
    );
    assert_eq!(
        acts,
        vec![Action::Anomaly {
            from: NodeId(1),
            kind: Anomaly::Stale
        }]
    );
    assert_eq!(a, snapshot);
}

#[test]
fn reconnect_while_waiting_restarts_permission_collection() {
    let mut net = pair();
    net.apply(0, Event::Request(CsRequest::ONE)).unwrap(); // (1, 0)
    net.deliver_where(is_request);
    // 1's REPLY (epoch 0) is delayed; 0 reconnects after an accidental outage.
    net.apply(0, Event::Reconnect).unwrap();
    assert_eq!(net.node(0).status(), Status::Waiting);
    assert_eq!(net.node(0).outstanding().count(), 1);
    net.deliver_where(|f| matches!(f.msg, Msg::Reply { epoch: 0, .. }));
    assert_eq!(
        net.node(0).status(),
        Status::Waiting,
        "pre-outage REPLY is stale"
    );
    net.drain();
    assert_eq!(net.entries, vec![NodeId(0)]);
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
            msg: Msg::Reconnect { .. },
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
    let acts = recv(&mut a, 1, Msg::Reconnect { ts: ts(3, 1) });
    assert!(acts.is_empty());
    assert_eq!(a.outstanding().count(), 1);
    assert_eq!(a.status(), Status::Waiting);
}
