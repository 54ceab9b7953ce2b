//! Shorthands for driving the test kit's [`TokenNet`] by hand on prioritized networks.

use manet_mutex::prioritized::invariants::check_quiescent;
use manet_mutex::prioritized::{Message, Node, Settings};
use manet_mutex::{CsRequest, NodeId, Status};
use manet_mutex_testkit::TokenNet;

/// Deliveries before [`TokenNet::run`] reports a livelock.
pub const LIMIT: usize = 200_000;

pub fn n(i: u32) -> NodeId {
    NodeId(i)
}

/// Undirected edge key, smaller id first.
pub fn edge(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// A hand-driven network: `count` nodes, `edges`, the token at `holder`.
pub fn net(count: u32, edges: &[(u32, u32)], holder: u32, settings: Settings) -> TokenNet<Node> {
    let edges: Vec<_> = edges.iter().map(|&(a, b)| (n(a), n(b))).collect();
    TokenNet::with_edges(count, &edges, &[n(holder)], settings).unwrap()
}

pub fn ask(net: &mut TokenNet<Node>, i: u32, resources: u32, priority: u32) {
    net.request(
        n(i),
        CsRequest {
            resources,
            priority,
        },
    );
}

pub fn in_cs(net: &TokenNet<Node>, i: u32) -> bool {
    net.status(n(i)) == Status::Critical
}

/// Deliver everything, then release every node in the critical section, until nobody waits;
/// then the network must be quiescent. Panics if some request is never served.
pub fn drain(net: &mut TokenNet<Node>) {
    for _ in 0..10_000 {
        net.run(LIMIT).unwrap();
        let inside: Vec<u32> = (0..net.nodes.len() as u32)
            .filter(|&i| in_cs(net, i))
            .collect();
        let waiting = (0..net.nodes.len() as u32).any(|i| net.status(n(i)) == Status::Waiting);
        if inside.is_empty() && !waiting {
            if let Err(e) = check_quiescent(&net.nodes) {
                panic!("not quiescent after the drain: {e}\n{:#?}", net.nodes);
            }
            return;
        }
        assert!(
            !inside.is_empty(),
            "deadlock: nodes wait, nobody is in the CS, nothing in flight\n{:#?}",
            net.nodes
        );
        for i in inside {
            net.release(n(i));
        }
    }
    panic!("requests not served after 10000 release rounds");
}

/// The nodes in their order of entry into the critical section.
pub fn entry_order(net: &TokenNet<Node>) -> Vec<u32> {
    net.entries.iter().map(|(i, ..)| i.0).collect()
}

/// The last message sent from `a` to `b` still in flight.
pub fn last_sent(net: &TokenNet<Node>, a: u32, b: u32) -> Option<&Message> {
    net.channels
        .iter()
        .filter(|&(from, to, _)| (from, to) == (n(a), n(b)))
        .map(|(.., msg)| msg)
        .last()
}
