//! The drivers' own rules (the crate docs' table): each finding is a `Violation` with its rule,
//! its node when there is one, and a detail that keeps the trace.

use manet_mutex::fence::Fence;
use manet_mutex::{reverse_link, ricart_agrawala, session, CsRequest, Error, Event, NodeId};
use manet_mutex_sim::{Graph, Params};
use manet_mutex_testkit::{PermNet, SessionNet, TokenNet, Weather};

fn line(n: u32) -> Vec<(NodeId, NodeId)> {
    (1..n).map(|i| (NodeId(i - 1), NodeId(i))).collect()
}

/// KRL on a line of three, the token at node 0, hand-driven.
fn krl_line() -> TokenNet<reverse_link::Node> {
    let settings = reverse_link::Settings::new(1);
    TokenNet::with_edges(3, &line(3), &[NodeId(0)], settings).unwrap()
}

#[test]
fn a_drain_too_short_is_liveness_with_the_trace() {
    let mut net = krl_line();
    net.request(NodeId(2), CsRequest::ONE);
    let v = net.drain(1).unwrap_err();
    assert_eq!((v.rule, v.node), ("liveness", None));
    assert!(v.detail.starts_with("starvation: "), "{v}");
    // Hand-driven mode keeps the trace: the detail ends with it (and the nodes).
    assert!(v.detail.contains("\nnodes: "), "{v}");
    assert!(v.to_string().starts_with("liveness: starvation: "), "{v}");
    net.drain(64).unwrap();
}

#[test]
fn a_run_past_its_limit_is_quiescence() {
    let mut net = krl_line();
    net.request(NodeId(2), CsRequest::ONE);
    let v = net.run(0).unwrap_err();
    assert_eq!((v.rule, v.node), ("quiescence", None));
    assert_eq!(v.detail, "still busy after 0 deliveries");
}

#[test]
fn invalid_configurations_fail_to_build() {
    // Two tokens at both ends of the only link: no holder has a higher neighbour.
    let graph = Graph::from_edges(2, &line(2));
    let params = Params::first_nodes(reverse_link::Settings::new(2), 2);
    let built = TokenNet::<reverse_link::Node>::new(graph.clone(), &params);
    assert!(
        matches!(built, Err(Error::InvalidConfig { .. })),
        "{built:?}"
    );
    let settings = reverse_link::Settings::new(2);
    let built =
        TokenNet::<reverse_link::Node>::with_edges(2, &line(2), &[NodeId(0), NodeId(1)], settings);
    assert!(
        matches!(built, Err(Error::InvalidConfig { .. })),
        "{built:?}"
    );
    let sessions = session::Settings::new(8, 96, 4);
    let built = SessionNet::<reverse_link::Node>::new(graph, &params, sessions, Weather::CALM, 0);
    let v = built.unwrap_err();
    assert_eq!(v.rule, "configuration");
    assert!(v.detail.starts_with("cannot build: "), "{v}");
}

/// Ricart–Agrawala on two hosts, driven by the test (not hand-driven: breaches are recorded).
fn ra_pair() -> PermNet<ricart_agrawala::Node> {
    PermNet::new(2, 0).unwrap()
}

#[test]
fn a_rejected_valid_event_is_a_driver_contract_breach_at_its_node() {
    let mut net = ra_pair();
    net.apply_valid(NodeId(1), Event::Release);
    let v = net.check_safety().unwrap_err();
    assert_eq!((v.rule, v.node), ("driver-contract", Some(NodeId(1))));
    assert!(v.detail.starts_with("rejected a valid event: "), "{v}");
    assert_eq!(net.fault, Some(v));
}

#[test]
fn an_entry_below_the_highest_fence_is_fence_order() {
    let mut first = ra_pair();
    first.request(NodeId(0));
    first.deliver_all(100).unwrap();
    let &[(at, fence)] = first.entries.as_slice() else {
        panic!("one entry: {:?}", first.entries)
    };
    let mut net = ra_pair();
    net.fences
        .admit(Fence {
            value: fence.value + 1,
            ..fence
        })
        .unwrap();
    net.request(NodeId(0));
    net.deliver_all(100).unwrap();
    let v = net.check_safety().unwrap_err();
    assert_eq!((v.rule, v.node), ("fence-order", Some(at)));
    assert!(v.detail.ends_with("a fence went back"), "{v}");
}

#[test]
fn permission_drains_report_liveness_and_lossless_liveness() {
    let mut net = ra_pair();
    net.request(NodeId(0));
    let v = net.settle(0).unwrap_err();
    assert_eq!((v.rule, v.node), ("liveness", None));
    // The REQUEST vanishes without being counted lost: no round can serve host 0.
    let mut net = ra_pair();
    net.request(NodeId(0));
    net.in_flight.clear();
    net.marks.clear();
    let v = net.drain(8).unwrap_err();
    assert_eq!((v.rule, v.node), ("lossless-liveness", None));
    assert!(v.detail.contains("only a retransmission would help"), "{v}");
}
