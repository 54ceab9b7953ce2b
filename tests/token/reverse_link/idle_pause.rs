//! KRLF's idle pause (`Settings::idle_pause`, `docs/ALGORITHMS.md`, "KRLF pacing"): an idle
//! token is held like a KRL holder's until the pause expires, then forwarded as in the paper;
//! a request arriving meanwhile is served at once.

use std::collections::BTreeSet;

use manet_mutex::reverse_link::{network, Config, Message, Node, Settings, IDLE_PAUSE};
use manet_mutex::{Action, CsRequest, Error, Event, NodeId, Protocol, Status, TimerId};
use manet_mutex_sim::Graph;
use manet_mutex_testkit::strategy::cases;
use manet_mutex_testkit::TokenNet;
use proptest::prelude::*;

use super::unit::h;

const PAUSE: u64 = 5;

fn paced() -> Settings {
    Settings::new(1)
        .with_forwarding(true)
        .with_idle_pause(PAUSE)
}

/// A hand-driven line 0-1-2 with the token at 0.
fn line(settings: Settings) -> TokenNet<Node> {
    let line = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
    TokenNet::with_edges(3, &line, &[NodeId(0)], settings).unwrap()
}

fn tokens_sent(actions: &[Action<Message>]) -> usize {
    actions
        .iter()
        .filter(|a| matches!(a, Action::Send { msg, .. } if msg.is_token()))
        .count()
}

#[test]
fn an_idle_pause_needs_forwarding_and_at_least_one_unit() {
    let config = |settings| {
        Config::new(NodeId(0), settings, 1, h(0, 0, 0), vec![h(1, 0, 1)]).with_first_token(0)
    };
    let refused = |settings| {
        matches!(
            Node::new(config(settings)),
            Err(Error::InvalidConfig { .. })
        )
    };
    assert!(refused(Settings::new(1).with_idle_pause(PAUSE)));
    assert!(refused(
        Settings::new(1).with_forwarding(true).with_idle_pause(0)
    ));
    assert!(Node::new(config(paced())).is_ok());
}

#[test]
fn an_idle_token_waits_for_the_pause_then_moves_on() {
    let mut net = line(paced());
    net.request(NodeId(0), CsRequest::ONE);
    net.release(NodeId(0));
    assert_eq!(
        net.last,
        vec![Action::SetTimer {
            timer: IDLE_PAUSE,
            after: PAUSE
        }],
        "the idle token stays"
    );
    assert!(net.node(NodeId(0)).holds_token());
    assert_eq!(net.node(NodeId(0)).next(), Some(NodeId(0)));
    net.apply(NodeId(0), Event::Timeout(IDLE_PAUSE)).unwrap();
    assert_eq!(
        tokens_sent(&net.last),
        1,
        "forwarded once the pause expired"
    );
    assert!(!net.node(NodeId(0)).holds_token());
    // A second expiry, or a timer the node never set, does nothing.
    for timer in [IDLE_PAUSE, TimerId(7)] {
        let before = net.node(NodeId(0)).clone();
        net.apply(NodeId(0), Event::Timeout(timer)).unwrap();
        assert!(net.last.is_empty());
        assert!(*net.node(NodeId(0)) == before);
    }
}

#[test]
fn a_request_during_the_pause_is_served_at_once() {
    let mut net = line(paced());
    net.request(NodeId(0), CsRequest::ONE);
    net.release(NodeId(0));
    net.request(NodeId(2), CsRequest::ONE);
    net.run(1_000).unwrap();
    assert_eq!(
        net.status(NodeId(2)),
        Status::Critical,
        "no wait for the pause"
    );
    // The pause expiring at 0, which no longer holds the token, changes nothing.
    net.apply(NodeId(0), Event::Timeout(IDLE_PAUSE)).unwrap();
    assert_eq!(tokens_sent(&net.last), 0);
}

#[test]
fn without_an_idle_pause_a_timeout_is_unsupported_and_tokens_move_at_once() {
    let mut net = line(Settings::new(1).with_forwarding(true));
    net.request(NodeId(0), CsRequest::ONE);
    net.release(NodeId(0));
    assert_eq!(
        tokens_sent(&net.last),
        1,
        "the paper's KRLF forwards at once"
    );
    let mut node = network(
        2,
        &[(NodeId(0), NodeId(1))],
        &[NodeId(0)],
        Settings::new(1).with_forwarding(true),
    )
    .unwrap()
    .into_iter()
    .map(|c| Node::new(c).unwrap())
    .next()
    .unwrap();
    assert!(matches!(
        node.handle(Event::Timeout(IDLE_PAUSE)),
        Err(Error::Unsupported(_))
    ));
}

#[derive(Debug, Clone)]
enum Op {
    Request(u32),
    Release(u32),
    Deliver(usize),
    /// The idle pause of the i-th node with one armed expires.
    Expire(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => any::<u32>().prop_map(Op::Request),
        2 => any::<u32>().prop_map(Op::Release),
        6 => any::<usize>().prop_map(Op::Deliver),
        2 => any::<usize>().prop_map(Op::Expire),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]

    /// Paced KRLF on rings with chords: safety after every event (hand-driven mode), at most
    /// one pause armed per node, and every request served by the fair drain even if no pause
    /// ever expires (a paused holder answers requests like a KRL holder).
    #[test]
    fn paced_krlf_keeps_safety_and_serves_every_request(
        n in 3u32..7,
        k in 1u32..3,
        chords in proptest::collection::vec((0u32..7, 0u32..7), 0..3),
        ops in proptest::collection::vec(op(), 0..200),
    ) {
        let mut edges: Vec<(NodeId, NodeId)> =
            (0..n).map(|i| (NodeId(i), NodeId((i + 1) % n))).collect();
        for (a, b) in chords {
            let (a, b) = (NodeId(a % n), NodeId(b % n));
            if a != b && !edges.contains(&(a, b)) && !edges.contains(&(b, a)) {
                edges.push((a, b));
            }
        }
        let settings = Settings::new(k).with_forwarding(true).with_idle_pause(PAUSE);
        let holders: Vec<NodeId> = (0..k).map(NodeId).collect();
        let nodes = network(n, &edges, &holders, settings)
            .unwrap()
            .into_iter()
            .map(|c| Node::new(c).unwrap())
            .collect();
        let mut net = TokenNet::with_nodes(nodes, Graph::from_edges(n as usize, &edges)).checked();
        let mut armed = BTreeSet::new();
        for op in ops {
            let at = match op {
                Op::Request(i) if net.status(NodeId(i % n)) == Status::Remainder => {
                    net.request(NodeId(i % n), CsRequest::ONE);
                    NodeId(i % n)
                }
                Op::Release(i) if net.status(NodeId(i % n)) == Status::Critical => {
                    net.release(NodeId(i % n));
                    NodeId(i % n)
                }
                Op::Deliver(i) if !net.busy_links().is_empty() => {
                    let busy = net.busy_links();
                    let (from, to) = busy[i % busy.len()];
                    net.deliver(from, to);
                    to
                }
                Op::Expire(i) if !armed.is_empty() => {
                    let at = *armed.iter().nth(i % armed.len()).unwrap();
                    armed.remove(&at);
                    net.apply(at, Event::Timeout(IDLE_PAUSE)).unwrap();
                    at
                }
                _ => continue,
            };
            if net.last.iter().any(|a| matches!(a, Action::SetTimer { .. })) {
                prop_assert!(net.node(at).holds_token(), "{at:?} paused without a token");
                prop_assert!(armed.insert(at), "{at:?} armed a second pause");
            }
        }
        net.settle(2_000).unwrap();
        prop_assert!((0..n).all(|i| net.status(NodeId(i)) == Status::Remainder));
    }
}
