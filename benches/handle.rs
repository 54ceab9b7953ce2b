//! Cost of one `handle` call on the hot paths of KRL.

use std::collections::VecDeque;

use divan::Bencher;
use manet_mutex::reverse_link::{network, Message, Node, Settings};
use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol};

fn main() {
    divan::main();
}

fn line(n: usize) -> Vec<Node> {
    let edges: Vec<_> = (1..n as u32).map(|i| (NodeId(i - 1), NodeId(i))).collect();
    network(n as u32, &edges, &[NodeId(0)], Settings::new(1))
        .unwrap()
        .into_iter()
        .map(|c| Node::new(c).unwrap())
        .collect()
}

/// Deliver everything in flight, releasing whoever enters; returns the number of `handle`
/// calls made.
fn settle(nodes: &mut [Node], wire: &mut VecDeque<(NodeId, NodeId, Message)>) -> usize {
    let mut calls = 0;
    let mut releases = Vec::new();
    while let Some((from, to, msg)) = wire.pop_front() {
        calls += 1;
        for a in nodes[to.index()]
            .handle(Event::Receive { from, msg })
            .unwrap()
        {
            match a {
                Action::Send { to: t, msg } => wire.push_back((to, t, msg)),
                Action::EnterCritical { .. } => releases.push(to),
                _ => {}
            }
        }
        for r in releases.drain(..) {
            calls += 1;
            for a in nodes[r.index()].handle(Event::Release).unwrap() {
                if let Action::Send { to: t, msg } = a {
                    wire.push_back((r, t, msg));
                }
            }
        }
    }
    calls
}

/// A token holder requesting and releasing: the local fast path.
#[divan::bench]
fn holder_request_release(bencher: Bencher) {
    let mut nodes = line(2);
    bencher.bench_local(|| {
        nodes[0]
            .handle(Event::Request(CsRequest::ONE))
            .unwrap()
            .for_each(drop);
        nodes[0].handle(Event::Release).unwrap().for_each(drop);
    });
}

/// The token crossing a line of `n` nodes and back (requests alternate between the ends);
/// divan reports the time per round trip, which is about `4n` handle calls.
#[divan::bench(args = [4, 16])]
fn token_round_trip(bencher: Bencher, n: usize) {
    let mut nodes = line(n);
    let mut wire = VecDeque::new();
    let ends = [NodeId(n as u32 - 1), NodeId(0)];
    bencher.bench_local(|| {
        for &end in &ends {
            for a in nodes[end.index()]
                .handle(Event::Request(CsRequest::ONE))
                .unwrap()
            {
                if let Action::Send { to, msg } = a {
                    wire.push_back((end, to, msg));
                }
                if matches!(a, Action::EnterCritical { .. }) {
                    unreachable!("the token is at the other end");
                }
            }
            divan::black_box(settle(&mut nodes, &mut wire));
        }
    });
}

enum Step<M> {
    Request(NodeId),
    Deliver(NodeId, NodeId, M),
    Release(NodeId),
}

/// One round: every node requests, every message is delivered, every entrant releases.
/// Returns the number of `handle` calls (divan reports the time per round).
fn round_of<P: Protocol>(
    nodes: &mut [P],
    request: CsRequest,
    steps: &mut VecDeque<Step<P::Message>>,
) -> usize {
    let mut calls = 0;
    steps.extend((0..nodes.len() as u32).map(|i| Step::Request(NodeId(i))));
    while let Some(step) = steps.pop_front() {
        let (at, event) = match step {
            Step::Request(at) => (at, Event::Request(request)),
            Step::Deliver(from, to, msg) => (to, Event::Receive { from, msg }),
            Step::Release(at) => (at, Event::Release),
        };
        calls += 1;
        for a in nodes[at.index()].handle(event).unwrap() {
            match a {
                Action::Send { to, msg } => steps.push_back(Step::Deliver(at, to, msg)),
                Action::EnterCritical { .. } => steps.push_back(Step::Release(at)),
                _ => {}
            }
        }
    }
    calls
}

fn ring(n: u32) -> Vec<(NodeId, NodeId)> {
    (0..n).map(|i| (NodeId(i), NodeId((i + 1) % n))).collect()
}

/// Prioritized h-out-of-k, 5 nodes on a ring, k = 3, every node asking for 2 resources.
#[divan::bench]
fn prioritized_round_5_nodes(bencher: Bencher) {
    use manet_mutex::prioritized;
    let settings = prioritized::Settings::new(3, prioritized::Policy::MaxConcurrency);
    let mut nodes: Vec<_> = prioritized::network(5, &ring(5), &[NodeId(0)], settings)
        .unwrap()
        .into_iter()
        .map(|c| prioritized::Node::new(c).unwrap())
        .collect();
    let mut steps = VecDeque::new();
    let request = CsRequest {
        resources: 2,
        priority: 0,
    };
    bencher.bench_local(|| round_of(&mut nodes, request, &mut steps));
}

/// Look-ahead, 5 hosts, every host requesting once.
#[divan::bench]
fn look_ahead_round_5_hosts(bencher: Bencher) {
    use manet_mutex::look_ahead;
    let mut nodes: Vec<_> = (0..5)
        .map(|i| {
            look_ahead::Node::new(look_ahead::Config::new(
                NodeId(i),
                look_ahead::Settings::new(5, 100).with_seed(7),
            ))
            .unwrap()
        })
        .collect();
    let mut steps = VecDeque::new();
    bencher.bench_local(|| round_of(&mut nodes, CsRequest::ONE, &mut steps));
}

/// Ricart–Agrawala, 5 hosts, every host requesting once.
#[divan::bench]
fn ricart_agrawala_round_5_hosts(bencher: Bencher) {
    use manet_mutex::ricart_agrawala;
    let mut nodes: Vec<_> = (0..5)
        .map(|i| {
            ricart_agrawala::Node::new(ricart_agrawala::Config::new(
                NodeId(i),
                ricart_agrawala::Settings::new(5, 100),
            ))
            .unwrap()
        })
        .collect();
    let mut steps = VecDeque::new();
    bencher.bench_local(|| round_of(&mut nodes, CsRequest::ONE, &mut steps));
}
