//! Counterexample found by `models::look_ahead` with `MANET_MUTEX_DEEP=1` (two hosts, two
//! requests each, in the `one duplicate`, `early timeouts` and `mode changes` profiles; P1 in
//! `docs/ALGORITHMS.md`), replayed here for both permission algorithms, which share the
//! REQUEST handling of `permission::Core`.
//!
//! A copy of host 0's first REQUEST arrives late, after host 1 has deferred host 0's second
//! REQUEST. Taken for a live request, the stale copy made host 1 answer it (a REPLY host 0
//! rightly ignores) and forget the deferred newer one, so host 0 was never answered: only its
//! retransmission timer could rescue it, although no message had been lost.

use manet_mutex::look_ahead;
use manet_mutex::{ricart_agrawala, CsRequest, Event, NodeId, Status};
use manet_mutex_testkit::{Flight, PermNet, PermissionHarness};

fn is_request<M: std::fmt::Debug>(from: u32) -> impl Fn(&Flight<M>) -> bool {
    move |f| f.from == NodeId(from) && format!("{:?}", f.msg).starts_with("Request")
}

fn is_reply<M: std::fmt::Debug>(from: u32) -> impl Fn(&Flight<M>) -> bool {
    move |f| f.from == NodeId(from) && format!("{:?}", f.msg).starts_with("Reply")
}

/// Host 0 requests twice; the first REQUEST to host 1 is replayed late, after host 1 deferred
/// the second one. Without losing any message or firing any timer, host 0 must enter again.
fn stale_copy_does_not_cancel_a_deferred_request<N: PermissionHarness>(nodes: Vec<N>) {
    let mut net = PermNet::with_nodes(nodes).checked();
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    // history[0] is that first REQUEST, kept for the late copy.
    net.deliver_where(is_request(0));
    net.deliver_where(is_reply(1));
    assert_eq!(net.node(NodeId(0)).status(), Status::Critical);
    net.apply(NodeId(0), Event::Release).unwrap();
    // Host 1 asks, and host 0, idle, grants at once; its REPLY stays in flight.
    net.apply(NodeId(1), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_where(is_request(1));
    // Host 0 asks again, with a later timestamp: host 1, whose request is older, defers it.
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    net.deliver_where(is_request(0));
    // The late copy of host 0's first REQUEST.
    net.replay(0);
    net.deliver_where(is_reply(0));
    assert_eq!(net.node(NodeId(1)).status(), Status::Critical);
    net.apply(NodeId(1), Event::Release).unwrap();
    net.deliver_all(100_000).unwrap();
    assert_eq!(
        net.node(NodeId(0)).status(),
        Status::Critical,
        "host 0 was not answered\ntrace:\n{}",
        net.trace_text()
    );
}

#[test]
fn regression_look_ahead_stale_request_copy_does_not_cancel_a_deferred_request() {
    let host = |id: u32, info: Vec<NodeId>| {
        look_ahead::Node::new(
            look_ahead::Config::new(NodeId(id), look_ahead::Settings::new(2, 10))
                .with_info_set(info),
        )
        .unwrap()
    };
    stale_copy_does_not_cancel_a_deferred_request(vec![host(0, vec![NodeId(1)]), host(1, vec![])]);
}

#[test]
fn regression_ricart_agrawala_stale_request_copy_does_not_cancel_a_deferred_request() {
    let host = |id: u32| {
        ricart_agrawala::Node::new(ricart_agrawala::Config::new(
            NodeId(id),
            ricart_agrawala::Settings::new(2, 10),
        ))
        .unwrap()
    };
    stale_copy_does_not_cancel_a_deferred_request(vec![host(0), host(1)]);
}
