//! `Event::Cancel` in the token algorithms: a waiting node withdraws its request. Safety holds
//! after every event (the kit's hand-driven mode), every request is either served or
//! withdrawn and never both, and the drain still serves everyone who waits.

use manet_mutex::{prioritized, reverse_link, CsRequest, Error, Event, NodeId, Status};
use manet_mutex_sim::{Graph, Params};
use manet_mutex_testkit::strategy::cases;
use manet_mutex_testkit::{TokenHarness, TokenNet};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Request(u32, u32, u32),
    Release(u32),
    Cancel(u32),
    Deliver(usize),
    LinkDown(usize),
    LinkUp(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<u32>(), 1u32..4, 0u32..4).prop_map(|(n, h, p)| Op::Request(n, h, p)),
        2 => any::<u32>().prop_map(Op::Release),
        2 => any::<u32>().prop_map(Op::Cancel),
        8 => any::<usize>().prop_map(Op::Deliver),
        1 => any::<usize>().prop_map(Op::LinkDown),
        1 => any::<usize>().prop_map(Op::LinkUp),
    ]
}

/// A ring of `n` with a chord, checked mode.
fn ring<P: TokenHarness>(n: u32, params: &Params<P::Settings>) -> TokenNet<P> {
    let mut edges: Vec<(NodeId, NodeId)> =
        (0..n).map(|i| (NodeId(i), NodeId((i + 1) % n))).collect();
    edges.push((NodeId(0), NodeId(n / 2)));
    TokenNet::new(Graph::from_edges(n as usize, &edges), params)
        .unwrap()
        .checked()
}

/// Play `ops`; `resources` bounds a request. Every request ends served or withdrawn, once.
fn play<P: TokenHarness>(mut net: TokenNet<P>, ops: &[Op], resources: u32) -> Result<(), String> {
    let n = net.nodes.len() as u32;
    let (mut requests, mut cancels) = (0, 0);
    for op in ops {
        match *op {
            Op::Request(i, h, p) if net.status(NodeId(i % n)) == Status::Remainder => {
                net.request(
                    NodeId(i % n),
                    CsRequest {
                        resources: 1 + (h - 1) % resources,
                        priority: p,
                    },
                );
                requests += 1;
            }
            Op::Release(i) if net.status(NodeId(i % n)) == Status::Critical => {
                net.release(NodeId(i % n))
            }
            Op::Cancel(i) => {
                let node = NodeId(i % n);
                let waiting = net.status(node) == Status::Waiting;
                let before = net.node(node).clone();
                match net.apply(node, Event::Cancel) {
                    Ok(()) if waiting => cancels += 1,
                    Err(Error::NotWaiting(_)) if !waiting => {
                        if *net.node(node) != before {
                            return Err(format!("a refused cancel changed {node:?}"));
                        }
                    }
                    other => {
                        return Err(format!(
                            "cancel at {node:?} (waiting: {waiting}): {other:?}"
                        ))
                    }
                }
            }
            Op::Deliver(i) => {
                let busy = net.busy_links();
                if !busy.is_empty() {
                    let (from, to) = busy[i % busy.len()];
                    net.deliver(from, to);
                }
            }
            Op::LinkDown(i) => {
                let links = net.removable_links();
                if !links.is_empty() {
                    let (a, b) = links[i % links.len()];
                    net.fail(a, b);
                }
            }
            Op::LinkUp(i) => {
                let links = net.absent_links();
                if !links.is_empty() {
                    let (a, b) = links[i % links.len()];
                    net.form(a, b);
                }
            }
            _ => {}
        }
    }
    net.settle(4_000).map_err(|v| v.to_string())?;
    if net.entries.len() != requests - cancels {
        return Err(format!(
            "{requests} requests, {cancels} withdrawn, {} entries",
            net.entries.len()
        ));
    }
    Ok(())
}

#[test]
fn only_a_waiting_node_can_cancel() {
    let params = Params::first_nodes(reverse_link::Settings::new(1), 1);
    let mut net = ring::<reverse_link::Node>(4, &params);
    assert_eq!(
        net.apply(NodeId(2), Event::Cancel),
        Err(Error::NotWaiting(Status::Remainder))
    );
    net.request(NodeId(0), CsRequest::ONE);
    assert_eq!(
        net.apply(NodeId(0), Event::Cancel),
        Err(Error::NotWaiting(Status::Critical))
    );
}

#[test]
fn a_withdrawn_krl_request_brings_the_token_but_no_entry() {
    let params = Params::first_nodes(reverse_link::Settings::new(1), 1);
    let mut net = ring::<reverse_link::Node>(4, &params);
    net.request(NodeId(0), CsRequest::ONE);
    net.request(NodeId(2), CsRequest::ONE);
    net.run(1_000).unwrap();
    assert_eq!(net.status(NodeId(2)), Status::Waiting, "0 is inside");
    net.apply(NodeId(2), Event::Cancel).unwrap();
    assert_eq!(net.status(NodeId(2)), Status::Remainder);
    assert_eq!(net.node(NodeId(2)).queue().count(), 0);
    net.release(NodeId(0));
    net.run(1_000).unwrap();
    assert_eq!(net.entries.len(), 1, "only 0 entered");
    assert!(
        net.node(NodeId(2)).holds_token(),
        "the request still fetched the token"
    );
    // The token serves the next request from where it is.
    net.request(NodeId(1), CsRequest::ONE);
    net.run(1_000).unwrap();
    assert_eq!(net.status(NodeId(1)), Status::Critical);
}

#[test]
fn a_waiting_prioritized_holder_that_cancels_serves_the_rest() {
    // k = 3: 0 holds two resources; 1 (the token holder after its REQUEST) waits for three,
    // 2 queues behind it for one. 1 withdraws: 2 is served at once from what is free.
    let settings = prioritized::Settings::new(3, prioritized::Policy::Equal);
    let line = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
    let mut net =
        TokenNet::<prioritized::Node>::with_edges(3, &line, &[NodeId(0)], settings).unwrap();
    net.request(NodeId(0), CsRequest::resources(2));
    net.request(NodeId(1), CsRequest::resources(3));
    net.run(1_000).unwrap();
    assert!(net.node(NodeId(1)).holds_token());
    assert_eq!(net.status(NodeId(1)), Status::Waiting);
    net.request(NodeId(2), CsRequest::resources(1));
    net.run(1_000).unwrap();
    assert_eq!(net.status(NodeId(2)), Status::Waiting, "queued behind 1");
    net.apply(NodeId(1), Event::Cancel).unwrap();
    net.run(1_000).unwrap();
    assert_eq!(net.status(NodeId(2)), Status::Critical);
    assert_eq!(net.status(NodeId(1)), Status::Remainder);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]

    #[test]
    fn krl_and_krlf_serve_or_withdraw_every_request(
        n in 3u32..7,
        k in 1u32..3,
        forwarding: bool,
        ops in proptest::collection::vec(op(), 0..200),
    ) {
        let settings = reverse_link::Settings::new(k).with_forwarding(forwarding);
        let net = ring::<reverse_link::Node>(n, &Params::first_nodes(settings, k));
        if let Err(e) = play(net, &ops, 1) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn prioritized_serves_or_withdraws_every_request(
        n in 3u32..7,
        k in 1u32..4,
        policy in 0usize..3,
        ops in proptest::collection::vec(op(), 0..200),
    ) {
        let policy = [
            prioritized::Policy::Explicit,
            prioritized::Policy::Equal,
            prioritized::Policy::MaxConcurrency,
        ][policy];
        let settings = prioritized::Settings::new(k, policy);
        let net = ring::<prioritized::Node>(n, &Params::first_nodes(settings, 1));
        if let Err(e) = play(net, &ops, k) {
            return Err(TestCaseError::fail(e));
        }
    }
}
