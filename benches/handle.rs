//! Cost of one `handle` call on the hot paths of KRL.

use std::collections::VecDeque;

use divan::Bencher;
use manet_mutex::reverse_link::{build, Message, Node};
use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol};

fn main() {
    divan::main();
}

fn line(n: usize) -> Vec<Node> {
    let edges: Vec<_> = (1..n as u32).map(|i| (NodeId(i - 1), NodeId(i))).collect();
    build(n, &edges, &[NodeId(0)], false)
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
