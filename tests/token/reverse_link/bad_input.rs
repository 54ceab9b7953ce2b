//! Local misuse is an `Err` that leaves the node unchanged; peer garbage never panics, never
//! returns `Err`, and never creates or destroys a token.

use manet_mutex_testkit::strategy::cases;

use manet_mutex::reverse_link::{Config, Message, Node, Settings};
use manet_mutex::token::{Height, Sealed};
use manet_mutex::{
    Action, Anomaly, CsRequest, Error, Event, Fence, NodeId, Protocol, Status, TimerId,
};

use super::unit::{enter, T0};
use proptest::prelude::*;

fn h(h1: i64, h2: i64, id: u32) -> Height {
    Height::new(h1, h2, NodeId(id))
}

fn config(id: u32, k: u32, tokens: u32, height: Height, nbrs: &[Height]) -> Config {
    Config::new(NodeId(id), Settings::new(k), tokens, height, nbrs.to_vec()).with_first_token(0)
}

/// Node 0 at (0,0,0) holding one of k = 2 tokens; neighbours 2 and 3 above it.
fn holder() -> Node {
    Node::new(config(0, 2, 1, h(0, 0, 0), &[h(1, 0, 2), h(1, 0, 3)])).unwrap()
}

/// Node 5 at (1,0,5) without a token; neighbour 1 below, 2 and 3 above.
fn waiter() -> Node {
    Node::new(config(
        5,
        2,
        0,
        h(1, 0, 5),
        &[h(0, 0, 1), h(2, 0, 2), h(3, 0, 3)],
    ))
    .unwrap()
}

fn run(node: &mut Node, event: Event<Message>) -> Vec<Action<Message>> {
    node.handle(event).expect("a valid event").collect()
}

fn recv(from: u32, msg: Message) -> Event<Message> {
    Event::Receive {
        from: NodeId(from),
        msg,
    }
}

fn anomaly(from: u32, kind: Anomaly) -> Action<Message> {
    Action::Anomaly {
        from: NodeId(from),
        kind,
    }
}

fn send(to: u32, msg: Message) -> Action<Message> {
    Action::Send {
        to: NodeId(to),
        msg,
    }
}

/// Feed `event`, expect exactly `err`, and check the node did not change.
fn rejects(node: &mut Node, event: Event<Message>, err: Error) {
    let before = node.clone();
    let got = node.handle(event.clone()).map(|a| a.collect::<Vec<_>>());
    assert_eq!(got, Err(err), "{event:?}");
    assert_eq!(
        *node, before,
        "{event:?} changed the node although it failed"
    );
}

/// Feed peer input, expect exactly `actions`, and check the node did not change.
fn ignores(node: &mut Node, event: Event<Message>, actions: Vec<Action<Message>>) {
    let before = node.clone();
    assert_eq!(run(node, event.clone()), actions, "{event:?}");
    assert_eq!(*node, before, "{event:?} changed the node");
}

// ---------------------------------------------------------------- local misuse

#[test]
fn release_outside_the_critical_section_is_rejected() {
    let mut n = holder();
    rejects(
        &mut n,
        Event::Release,
        Error::NotInCritical(Status::Remainder),
    );
    let mut w = waiter();
    run(&mut w, Event::Request(CsRequest::ONE));
    rejects(
        &mut w,
        Event::Release,
        Error::NotInCritical(Status::Waiting),
    );
}

#[test]
fn request_while_waiting_or_critical_is_rejected() {
    let mut w = waiter();
    run(&mut w, Event::Request(CsRequest::ONE));
    rejects(
        &mut w,
        Event::Request(CsRequest::ONE),
        Error::AlreadyRequested(Status::Waiting),
    );
    let mut n = holder();
    run(&mut n, Event::Request(CsRequest::ONE));
    rejects(
        &mut n,
        Event::Request(CsRequest::ONE),
        Error::AlreadyRequested(Status::Critical),
    );
}

#[test]
fn request_for_other_than_one_resource_is_rejected() {
    for resources in [0, 2, u32::MAX] {
        let mut n = holder();
        rejects(
            &mut n,
            Event::Request(CsRequest::resources(resources)),
            Error::OneResourceOnly {
                requested: resources,
            },
        );
    }
}

#[test]
fn priority_is_ignored_by_krl() {
    let mut n = holder();
    let actions = run(
        &mut n,
        Event::Request(CsRequest {
            resources: 1,
            priority: 7,
        }),
    );
    assert_eq!(actions, vec![enter()]);
}

#[test]
fn host_mode_and_timer_events_are_unsupported() {
    let cases: [(Event<Message>, &str); 5] = [
        (Event::Timeout(TimerId(3)), "Timeout"),
        (Event::Doze, "Doze"),
        (Event::Wake, "Wake"),
        (Event::Disconnect, "Disconnect"),
        (Event::Reconnect, "Reconnect"),
    ];
    for (event, name) in cases {
        let mut n = waiter();
        run(&mut n, Event::Request(CsRequest::ONE));
        rejects(&mut n, event, Error::Unsupported(name));
    }
}

#[test]
fn a_failed_call_leaves_no_actions_behind_for_the_next_call() {
    let mut n = holder();
    rejects(
        &mut n,
        Event::Release,
        Error::NotInCritical(Status::Remainder),
    );
    assert_eq!(run(&mut n, Event::Request(CsRequest::ONE)), vec![enter()]);
}

fn invalid(c: Config) -> (NodeId, &'static str) {
    match Node::new(c) {
        Err(Error::InvalidConfig { node, reason }) => (node, reason),
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

#[test]
fn invalid_configs_are_rejected_with_the_node_and_reason() {
    let ok = config(4, 2, 1, h(0, 0, 4), &[h(1, 0, 1), h(1, 0, 2)]);
    assert!(Node::new(ok.clone()).is_ok());

    // One field changed from a valid configuration.
    let with = |change: fn(&mut Config)| {
        let mut c = ok.clone();
        change(&mut c);
        c
    };
    let cases: [(Config, &str); 7] = [
        (
            with(|c| {
                c.settings.k = 0;
                c.tokens = 0;
            }),
            "k must be at least 1",
        ),
        (
            with(|c| c.tokens = 3),
            "a node cannot hold more than k tokens",
        ),
        (
            with(|c| c.height = h(0, 0, 1)),
            "the height's id must be the node's id",
        ),
        (
            with(|c| c.neighbors = vec![h(1, 0, 1), h(2, 0, 2), h(3, 0, 1)]),
            "neighbours must be distinct and exclude the node itself",
        ),
        (
            with(|c| c.neighbors = vec![h(1, 0, 1), h(5, 0, 4)]),
            "neighbours must be distinct and exclude the node itself",
        ),
        (
            with(|c| c.tokens = 0),
            "a node without a token needs a lower neighbour (token-oriented DAG)",
        ),
        (
            with(|c| c.height = h(Height::LIMIT + 1, 0, 4)),
            "heights must be within ±Height::LIMIT",
        ),
    ];
    for (c, reason) in cases {
        assert_eq!(invalid(c.clone()), (NodeId(4), reason), "{c:?}");
    }
}

// ---------------------------------------------------------------- peer garbage

#[test]
fn messages_from_non_neighbours_are_reported_and_ignored() {
    for msg in [
        Message::Request(h(9, 0, 9).into()),
        Message::LinkInfo(h(9, 0, 9).into()),
        Message::Probe(h(9, 0, 9).into()),
        Message::token_ack(h(9, 0, 9), 1),
    ] {
        let mut n = waiter();
        ignores(&mut n, recv(9, msg), vec![anomaly(9, Anomaly::UnknownPeer)]);
        let mut n = holder();
        ignores(&mut n, recv(9, msg), vec![anomaly(9, Anomaly::UnknownPeer)]);
    }
}

#[test]
fn a_message_from_the_node_itself_is_from_a_non_neighbour() {
    let mut n = waiter();
    ignores(
        &mut n,
        recv(5, Message::Request(h(1, 0, 5).into())),
        vec![anomaly(5, Anomaly::UnknownPeer)],
    );
}

#[test]
fn request_from_a_forming_link_completes_the_handshake_its_lost_hello_would_have() {
    // Node 7's LinkInfo reached node 5 before node 5's own LinkUp and was dropped; node 7 has
    // node 5 in N and asks it. The REQUEST carries 7's height: it joins N and is served.
    let mut n = waiter();
    run(&mut n, Event::LinkUp(NodeId(7)));
    let actions = run(&mut n, recv(7, Message::Request(h(4, 0, 7).into())));
    assert_eq!(actions, vec![send(1, Message::Request(h(1, 0, 5).into()))]);
    assert!(n.neighbors().is_member(NodeId(7)));
    assert_eq!(n.queue().collect::<Vec<_>>(), vec![NodeId(7)]);
    // With an impossible height it cannot join: node 5 asks for node 7's height instead.
    let mut n = waiter();
    run(&mut n, Event::LinkUp(NodeId(7)));
    let actions = run(&mut n, recv(7, Message::Request(h(4, 0, 3).into())));
    assert_eq!(
        actions,
        vec![
            anomaly(7, Anomaly::OutOfRange),
            send(7, Message::Probe(h(1, 0, 5).into()))
        ]
    );
    assert!(!n.neighbors().is_member(NodeId(7)));
}

#[test]
fn height_triples_naming_another_node_or_out_of_range_are_not_recorded() {
    let corrupted = Sealed {
        height: h(9, 0, 2),
        check: Sealed::new(h(1, 0, 2)).check,
    };
    let bad_heights = [h(4, 0, 3), h(i64::MAX, 0, 2), h(0, -Height::LIMIT - 1, 2)];
    for bad in bad_heights.map(Sealed::new).into_iter().chain([corrupted]) {
        for msg in [
            Message::LinkInfo(bad),
            Message::Probe(bad),
            Message::TokenAck(bad, 0),
        ] {
            let mut n = waiter();
            let tell = matches!(msg, Message::Probe(_));
            let mut expected = vec![anomaly(2, Anomaly::OutOfRange)];
            if tell {
                // A Probe is a question, answered whatever its height.
                expected.push(send(2, Message::LinkInfo(h(1, 0, 5).into())));
            }
            // It may have been a REQUEST whose kind changed: node 2 is asked, and asks again
            // if we are its way to a token (V12).
            expected.push(send(2, Message::Probe(h(1, 0, 5).into())));
            ignores(&mut n, recv(2, msg), expected);
        }
        // A REQUEST is kept, on the view we had of its sender (dropping it would lose it).
        let mut n = waiter();
        let actions = run(&mut n, recv(2, Message::Request(bad)));
        assert_eq!(
            actions,
            vec![
                anomaly(2, Anomaly::OutOfRange),
                send(1, Message::Request(h(1, 0, 5).into()))
            ]
        );
        assert_eq!(n.neighbors().get(NodeId(2)).unwrap().height(), h(2, 0, 2));
    }
}

#[test]
fn duplicate_link_info_changes_nothing_the_second_time() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, recv(2, Message::LinkInfo(h(2, 5, 2).into()))),
        vec![]
    );
    ignores(
        &mut n,
        recv(2, Message::LinkInfo(h(2, 5, 2).into())),
        vec![],
    );
}

#[test]
fn stale_link_info_overtaken_by_a_token_is_not_recorded() {
    let mut n = holder();
    run(&mut n, recv(2, Message::Request(h(1, 0, 2).into())));
    assert_eq!(n.tokens(), 0);
    ignores(
        &mut n,
        recv(2, Message::LinkInfo(h(7, 7, 2).into())),
        vec![],
    );
}

#[test]
fn request_from_a_lower_neighbour_is_not_queued_and_is_answered_with_our_height() {
    // The requester took us for lower than we are; it learns our height and routes its
    // request elsewhere (T2).
    let mut n = waiter();
    assert_eq!(
        run(&mut n, recv(1, Message::Request(h(0, 0, 1).into()))),
        vec![
            anomaly(1, Anomaly::Stale),
            send(1, Message::LinkInfo(h(1, 0, 5).into()))
        ]
    );
    assert_eq!(n.queue().len(), 0);
    let mut n = holder();
    // 2 claims a height below the holder: not queued, no token.
    assert_eq!(
        run(&mut n, recv(2, Message::Request(h(-1, 0, 2).into()))),
        vec![
            anomaly(2, Anomaly::Stale),
            send(2, Message::LinkInfo(h(0, 0, 0).into()))
        ]
    );
    assert_eq!(n.queue().len(), 0);
    assert_eq!(n.tokens(), 1);
}

#[test]
fn token_ack_nobody_expected_is_recorded_like_a_link_info() {
    let mut n = waiter();
    // Counting no token: what a token's receiver answers a Probe with after a new link.
    assert_eq!(
        run(&mut n, recv(2, Message::token_ack(h(2, 1, 2), 0))),
        vec![]
    );
    // The ack still tells the peer's real height, which the node now uses.
    assert_eq!(n.neighbors().get(NodeId(2)).unwrap().height(), h(2, 1, 2));
    assert_eq!(n.tokens(), 0);
    // Acknowledging a token never sent (its check word holds: a forgery) is reported, and
    // settles nothing.
    assert_eq!(
        run(&mut n, recv(2, Message::token_ack(h(3, 1, 2), 1))),
        vec![anomaly(2, Anomaly::OutOfRange)]
    );
    assert_eq!(n.neighbors().get(NodeId(2)).unwrap().unacked(), 0);
}

#[test]
fn token_from_a_stranger_is_kept_without_its_height_and_reported() {
    let mut n = waiter();
    run(&mut n, Event::Request(CsRequest::ONE));
    let actions = run(&mut n, recv(9, Message::Token(h(-5, 0, 9).into(), T0)));
    assert_eq!(actions, vec![anomaly(9, Anomaly::UnknownPeer), enter()]);
    assert_eq!(n.tokens(), 1);
    assert_eq!(
        n.height(),
        h(1, 0, 5),
        "the stranger's height is not trusted"
    );
    assert!(n.neighbors().get(NodeId(9)).is_none());
}

#[test]
fn token_with_a_height_naming_another_node_is_kept_without_its_height() {
    let mut n = waiter();
    let actions = run(&mut n, recv(1, Message::Token(h(-5, 0, 3).into(), T0)));
    // Still acknowledged: until it is, node 1 ignores what node 5 says of its height.
    assert_eq!(
        actions,
        vec![
            anomaly(1, Anomaly::OutOfRange),
            send(1, Message::token_ack(h(1, 0, 5), 1))
        ]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.height(), h(1, 0, 5));
    assert_eq!(n.neighbors().get(NodeId(1)).unwrap().height(), h(0, 0, 1));
    assert_eq!(n.next(), Some(NodeId(5)));
}

#[test]
fn token_beyond_k_is_refused_and_reported() {
    let mut n = Node::new(config(0, 2, 2, h(0, 0, 0), &[h(1, 0, 2)])).unwrap();
    // A second copy of a token held: a suspect second token (R14).
    ignores(
        &mut n,
        recv(2, Message::Token(h(1, 0, 2).into(), T0)),
        vec![anomaly(2, Anomaly::Unexpected)],
    );
    assert_eq!(n.tokens(), 2);
}

#[test]
fn link_down_for_a_stranger_and_link_up_to_itself_are_redundant() {
    let mut n = waiter();
    ignores(
        &mut n,
        Event::LinkDown(NodeId(8)),
        vec![anomaly(8, Anomaly::RedundantLinkEvent)],
    );
    ignores(
        &mut n,
        Event::LinkUp(NodeId(5)),
        vec![anomaly(5, Anomaly::RedundantLinkEvent)],
    );
}

#[test]
fn link_up_for_a_neighbour_is_a_keepalive_that_announces_the_height_again() {
    // A height of ours corrupted on the way to a neighbour leaves a wrong view of us there
    // until we speak again; the link layer's keepalive makes us speak (T6).
    let mut n = waiter();
    ignores(
        &mut n,
        Event::LinkUp(NodeId(1)),
        vec![send(1, Message::LinkInfo(h(1, 0, 5).into()))],
    );
}

#[test]
fn extreme_heights_are_refused_and_never_adopted() {
    let mut n = waiter();
    run(&mut n, Event::Request(CsRequest::ONE));
    // 1 claims to be at the very top: impossible, so the view of it stays as it was.
    let before = n.clone();
    // It may have been a REQUEST whose kind changed: node 1 is asked; or a Probe from node
    // 5's `next` whose kind changed: node 5 asks again (V12).
    let actions = run(&mut n, recv(1, Message::LinkInfo(h(i64::MAX, 0, 1).into())));
    assert_eq!(
        actions,
        vec![
            anomaly(1, Anomaly::OutOfRange),
            send(1, Message::Probe(h(1, 0, 5).into())),
            send(1, Message::Request(h(1, 0, 5).into()))
        ]
    );
    assert_eq!(n, before);
    // A Probe with an impossible height from node 5's `next` is still answered, and may have
    // been its refusal of node 5's REQUEST: node 5 asks again (T2), and asks node 1 (V12).
    let actions = run(&mut n, recv(1, Message::Probe(h(i64::MAX, 0, 1).into())));
    assert_eq!(
        actions,
        vec![
            anomaly(1, Anomaly::OutOfRange),
            send(1, Message::LinkInfo(h(1, 0, 5).into())),
            send(1, Message::Request(h(1, 0, 5).into())),
            send(1, Message::Probe(h(1, 0, 5).into()))
        ]
    );
    assert_eq!(n, before);
    // A token from the very bottom is kept; its height is not adopted.
    let mut n = waiter();
    run(
        &mut n,
        recv(1, Message::Token(h(i64::MIN, i64::MIN, 1).into(), T0)),
    );
    assert_eq!(n.height(), h(1, 0, 5));
    assert_eq!(n.tokens(), 1);
    // A possible height at the bottom of h2: just below it would leave the range, so the
    // recipient goes one level lower in h1 instead (never a saturated height that is not
    // below); at the bottom of both it keeps its own.
    let l = Height::LIMIT;
    let mut n = waiter();
    let actions = run(&mut n, recv(1, Message::Token(h(0, -l, 1).into(), T0)));
    assert_eq!(n.height(), h(-1, -l, 5));
    assert!(actions.contains(&send(1, Message::token_ack(h(-1, -l, 5), 1))));
    let mut n = waiter();
    let actions = run(&mut n, recv(1, Message::Token(h(-l, -l, 1).into(), T0)));
    assert_eq!(n.height(), h(1, 0, 5));
    assert_eq!(actions, vec![send(1, Message::token_ack(h(1, 0, 5), 1))]);
}

// ---------------------------------------------------------------- random sequences

const PEERS: u32 = 9;

fn height() -> impl Strategy<Value = Height> {
    (-4i64..=4, -4i64..=4, 0..PEERS).prop_map(|(a, b, id)| h(a, b, id))
}

fn peer() -> impl Strategy<Value = NodeId> {
    (0..PEERS).prop_map(NodeId)
}

/// Mostly intact, sometimes with a check word that does not match.
fn sealed() -> impl Strategy<Value = Sealed> {
    prop_oneof![
        4 => height().prop_map(Sealed::new),
        1 => (height(), any::<u64>()).prop_map(|(height, check)| Sealed { height, check }),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        sealed().prop_map(Message::Request),
        (sealed(), 0..3u32, any::<u64>())
            .prop_map(|(s, id, value)| Message::Token(s, Fence::new(id, value).into())),
        sealed().prop_map(Message::LinkInfo),
        (sealed(), 0..3u16).prop_map(|(s, n)| Message::TokenAck(s, n)),
        sealed().prop_map(Message::Probe),
    ]
}

fn event() -> impl Strategy<Value = Event<Message>> {
    prop_oneof![
        3 => (0u32..3).prop_map(|r| Event::Request(CsRequest::resources(r))),
        3 => Just(Event::Release),
        10 => (peer(), message()).prop_map(|(from, msg)| Event::Receive { from, msg }),
        2 => peer().prop_map(Event::LinkUp),
        2 => peer().prop_map(Event::LinkDown),
        1 => any::<u64>().prop_map(|t| Event::Timeout(TimerId(t))),
        1 => prop_oneof![
            Just(Event::Doze),
            Just(Event::Wake),
            Just(Event::Disconnect),
            Just(Event::Reconnect)
        ],
    ]
}

fn start() -> impl Strategy<Value = Node> {
    (
        0..PEERS,
        1u32..=3,
        any::<bool>(),
        proptest::sample::subsequence((0..PEERS).collect::<Vec<_>>(), 0..5),
        -4i64..=4,
    )
        .prop_flat_map(|(id, k, fwd, nbrs, h1)| {
            let nbrs: Vec<u32> = nbrs.into_iter().filter(|&p| p != id).collect();
            let heights = proptest::collection::vec((-4i64..=4, -4i64..=4), nbrs.len());
            (Just((id, k, fwd, nbrs, h1)), 0..=k, heights)
        })
        .prop_map(|((id, k, fwd, nbrs, h1), tokens, heights)| {
            let neighbors: Vec<Height> = nbrs
                .iter()
                .zip(heights)
                .map(|(&p, (a, b))| h(a, b, p))
                .collect();
            // Without a token the node must have a lower neighbour (token-oriented DAG).
            let lowest = neighbors.iter().map(|n| n.h1).min();
            let h1 = match lowest {
                Some(low) if tokens == 0 => h1.max(low + 1),
                _ => h1,
            };
            Node::new(
                Config::new(
                    NodeId(id),
                    Settings::new(k).with_forwarding(fwd),
                    tokens,
                    h(h1, 0, id),
                    neighbors,
                )
                .with_first_token(0),
            )
            .expect("generated configs are valid")
        })
}

/// Local facts that must hold after every call, whatever the input.
fn local_invariants(n: &Node) -> Result<(), TestCaseError> {
    let own_queued = n.queue().any(|q| q == n.id());
    prop_assert!(
        n.tokens() <= n.settings().k,
        "{} tokens > k = {}",
        n.tokens(),
        n.settings().k
    );
    prop_assert_eq!(own_queued, n.status() == Status::Waiting, "{:?}", n);
    if n.status() == Status::Critical {
        prop_assert!(n.tokens() >= 1, "critical without a token: {:?}", n);
    }
    // The queue holds each id once, and only itself or neighbours in N.
    let ids: Vec<NodeId> = n.queue().collect();
    for (i, q) in ids.iter().enumerate() {
        prop_assert!(!ids[..i].contains(q), "{q:?} queued twice: {:?}", n);
        prop_assert!(
            *q == n.id() || n.neighbors().is_member(*q),
            "queued {q:?} is not a neighbour: {:?}",
            n
        );
    }
    prop_assert_eq!(n.height().id, n.id());
    for e in n.neighbors().entries() {
        prop_assert!(e.id() != n.id(), "the node is its own neighbour: {:?}", n);
        prop_assert!(
            e.in_n() != e.forming(),
            "{:?} is neither in N nor forming (or both)",
            e
        );
        if e.in_n() {
            prop_assert_eq!(
                e.height().id,
                e.id(),
                "view of {:?} names another node",
                e.id()
            );
        }
    }
    if n.holds_token() {
        prop_assert_eq!(n.next(), Some(n.id()), "a holder's next points home");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2048), ..ProptestConfig::default() })]

    #[test]
    fn random_event_sequences_never_panic_corrupt_or_change_the_token_count(
        mut node in start(),
        events in proptest::collection::vec(event(), 1..300),
    ) {
        local_invariants(&node)?;
        for event in events {
            let before = node.clone();
            let result = node.handle(event.clone()).map(|a| a.collect::<Vec<_>>());
            match result {
                Err(e) => {
                    prop_assert!(
                        !matches!(event, Event::Receive { .. } | Event::LinkUp(_) | Event::LinkDown(_)),
                        "peer/link input returned Err({e:?}): {event:?}"
                    );
                    prop_assert_eq!(&node, &before, "Err({:?}) but the node changed", e);
                }
                Ok(actions) => {
                    let sent = actions
                        .iter()
                        .filter(|a| matches!(a, Action::Send { msg: Message::Token(..), .. }))
                        .count() as u32;
                    let token_from = match &event {
                        Event::Receive { from, msg: Message::Token(..) } => Some(*from),
                        _ => None,
                    };
                    // A token is kept, whatever its height or sender, unless it is a copy of one
                    // held or its id is impossible (then it is refused and reported).
                    let fresh = |id: u32| {
                        id < before.settings().k && before.held_tokens().all(|t| t.lane != id)
                    };
                    let received = u32::from(match &event {
                        Event::Receive { msg: Message::Token(_, f), .. } => {
                            f.read().is_some_and(|t| fresh(t.lane))
                        }
                        _ => false,
                    });
                    if let (Some(from), 0) = (token_from, received) {
                        // A copy of a token held is a second token; an impossible id or
                        // copies that disagree are out of range (R14).
                        let held = match &event {
                            Event::Receive { msg: Message::Token(_, f), .. } => f
                                .read()
                                .is_some_and(|t| before.held_tokens().any(|h| h.lane == t.lane)),
                            _ => false,
                        };
                        let kind = if held { Anomaly::Unexpected } else { Anomaly::OutOfRange };
                        let refused = Action::Anomaly { from, kind };
                        prop_assert!(actions.contains(&refused), "{:?}", actions);
                    }
                    prop_assert_eq!(
                        node.tokens() + sent,
                        before.tokens() + received,
                        "tokens not conserved by {:?}: {:?}", event, actions
                    );
                    for a in &actions {
                        match a {
                            Action::Send { to, .. } => prop_assert!(
                                node.neighbors().get(*to).is_some(),
                                "sent to {to:?}, not a neighbour: {:?} after {:?}", actions, event
                            ),
                            Action::EnterCritical { resources, .. } => {
                                prop_assert_eq!(*resources, 1);
                                prop_assert_eq!(node.status(), Status::Critical);
                            }
                            _ => {}
                        }
                    }
                    let entered = actions.iter().filter(|a| matches!(a, Action::EnterCritical { .. })).count();
                    prop_assert_eq!(
                        entered,
                        usize::from(before.status() != Status::Critical && node.status() == Status::Critical)
                    );
                }
            }
            local_invariants(&node)?;
        }
    }
}

#[test]
fn a_token_whose_height_fails_its_check_word_is_kept_without_adopting_the_height() {
    // A corrupted height far below the rest would have made this node sink there, and the
    // nodes that the token later left behind would climb out one level per reversal (T8).
    let mut n = waiter();
    let corrupted = Sealed {
        height: h(-1000, 0, 1),
        check: Sealed::new(h(0, 0, 1)).check,
    };
    let actions = run(&mut n, recv(1, Message::Token(corrupted, T0)));
    assert_eq!(n.tokens(), 1, "the token is kept");
    assert_eq!(n.height(), h(1, 0, 5), "its height is not adopted");
    let view = n.neighbors().get(NodeId(1)).map(|e| e.height());
    assert_eq!(view, Some(h(0, 0, 1)), "nor recorded");
    assert_eq!(
        actions,
        vec![
            anomaly(1, Anomaly::OutOfRange),
            send(1, Message::token_ack(h(1, 0, 5), 1))
        ]
    );
}

#[test]
fn a_non_holder_far_above_every_neighbour_comes_down_to_one_level_above_them() {
    // Left far above by a failure (or by a view that was wrong when it raised): every link
    // keeps its direction, but nobody behind it has to climb over it any more (T7).
    let mut n = Node::new(config(5, 1, 0, h(40, 3, 5), &[h(0, 0, 1), h(2, 0, 2)])).unwrap();
    let actions = run(&mut n, recv(2, Message::LinkInfo(h(2, 1, 2).into())));
    assert_eq!(n.height(), h(3, 3, 5));
    assert_eq!(
        actions,
        vec![
            send(1, Message::LinkInfo(h(3, 3, 5).into())),
            send(2, Message::LinkInfo(h(3, 3, 5).into()))
        ]
    );
    // One level above: nothing to trim.
    assert_eq!(
        run(&mut n, recv(1, Message::LinkInfo(h(0, 1, 1).into()))),
        vec![]
    );
}

#[test]
fn a_keepalive_from_next_repeats_the_request() {
    // Our REQUEST to `next` may have been lost to corruption: the link layer's keepalive
    // makes us ask again (T6); from another neighbour it only announces our height.
    let mut n = waiter();
    assert_eq!(
        run(&mut n, Event::Request(CsRequest::ONE)),
        vec![send(1, Message::Request(h(1, 0, 5).into()))]
    );
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(1))),
        vec![
            send(1, Message::LinkInfo(h(1, 0, 5).into())),
            send(1, Message::Request(h(1, 0, 5).into()))
        ]
    );
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(2))),
        vec![send(2, Message::LinkInfo(h(1, 0, 5).into()))]
    );
}

/// One corrupted field of a token's fence (any copy, lane or value) is outvoted by the other
/// two copies: the token arrives with its id and counter, and the next entry continues them.
#[test]
fn a_corrupted_fence_field_of_a_token_in_flight_is_recovered() {
    use manet_mutex_testkit::corrupt::Value;
    use manet_mutex_testkit::TokenNet;
    let (n0, n1) = (NodeId(0), NodeId(1));
    // A token's slots: the sealed height (4), then the three copies' lanes and values.
    for field in 4..10 {
        for value in [
            Value::Zero,
            Value::Max,
            Value::Up,
            Value::Down,
            Value::Node(1),
        ] {
            let mut net =
                TokenNet::<Node>::with_edges(2, &[(n0, n1)], &[n0], Settings::new(1)).unwrap();
            net.request(n0, CsRequest::ONE);
            net.release(n0);
            net.request(n1, CsRequest::ONE);
            assert!(net.deliver(n1, n0), "the request");
            if !net.corrupt(n0, n1, 0, field, value) {
                continue; // the field had that value already
            }
            assert!(net.deliver(n0, n1), "the token");
            assert_eq!(
                net.status(n1),
                Status::Critical,
                "field {field} = {value:?}"
            );
            assert_eq!(net.entries.last().map(|e| e.2), Some(Fence::new(0, 2)));
            assert!(
                net.anomalies.iter().all(|a| a.2 != Anomaly::OutOfRange),
                "field {field} = {value:?}: {:?}",
                net.anomalies
            );
        }
    }
}
