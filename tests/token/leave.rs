//! `Event::Leave` in the token algorithms (`docs/ALGORITHMS.md`, L4): a node that leaves hands
//! every token it holds to a neighbour, relays what still reaches it, and reports
//! `Report::Left` once, holding nothing. Safety (each core's invariants, the fences) is checked
//! after every event (the kit's hand-driven mode, and its recovery harness); after `Left` the
//! node's links fail (the embedder stopped it), and every other node's requests are served.

use manet_mutex::token::Recovery;
use manet_mutex::{
    prioritized, reverse_link, Action, CsRequest, Error, Event, NodeId, Report, Status,
};
use manet_mutex_sim::{Graph, Params};
use manet_mutex_testkit::strategy::cases;
use manet_mutex_testkit::{harness_recovery, TokenHarness, TokenNet};
use proptest::prelude::*;

fn n(i: u32) -> NodeId {
    NodeId(i)
}

/// A ring of `size` with a chord from 0 to `size / 2`.
fn ring_edges(size: u32) -> Vec<(NodeId, NodeId)> {
    let mut edges: Vec<_> = (0..size).map(|i| (n(i), n((i + 1) % size))).collect();
    edges.push((n(0), n(size / 2)));
    edges
}

/// KRL (or KRLF) with `k` tokens, all held by node 0, on `edges`, in hand-driven mode.
fn krl_all_at_0(
    size: u32,
    edges: &[(NodeId, NodeId)],
    k: u32,
    forwarding: bool,
    recovery: Option<Recovery>,
) -> TokenNet<reverse_link::Node> {
    let mut settings = reverse_link::Settings::new(k).with_forwarding(forwarding);
    if let Some(r) = recovery {
        settings = settings.with_recovery(r);
    }
    let one = reverse_link::Settings::new(1);
    let nodes = reverse_link::network(size, edges, &[n(0)], one)
        .unwrap()
        .into_iter()
        .map(|mut c| {
            c.settings = settings;
            if c.tokens > 0 {
                c.tokens = k;
                c.first_token = Some(0);
            }
            reverse_link::Node::new(c).unwrap()
        })
        .collect();
    TokenNet::with_nodes(nodes, Graph::from_edges(size as usize, edges)).checked()
}

/// `x`'s neighbours in the physical graph.
fn linked<P: TokenHarness>(net: &TokenNet<P>, x: NodeId) -> Vec<NodeId> {
    let size = net.nodes.len() as u32;
    (0..size)
        .map(n)
        .filter(|&y| y != x && net.graph.has(x, y))
        .collect()
}

fn lefts<P: TokenHarness>(net: &TokenNet<P>, x: NodeId) -> usize {
    net.reports
        .iter()
        .filter(|&&(at, r)| at == x && r == Report::Left)
        .count()
}

/// Deliver (round-robin over busy links) until `x` reported `Left` and nothing is in flight to
/// or from it, within `limit` deliveries; then its links fail (the embedder stops it).
fn leave_and_stop<P: TokenHarness>(net: &mut TokenNet<P>, x: NodeId, limit: usize) {
    net.apply(x, Event::Leave)
        .expect("Leave in the remainder section");
    let mut delivered = 0;
    loop {
        let idle = (0..net.nodes.len() as u32).all(|y| net.channels.idle(x, n(y)));
        if lefts(net, x) == 1 && idle && !net.node(x).holds_token() {
            break;
        }
        let busy = net.busy_links();
        assert!(
            !busy.is_empty() && delivered < limit,
            "{x:?} never left: {}",
            net.trace_text()
        );
        for (from, to) in busy {
            net.deliver(from, to);
            delivered += 1;
        }
    }
    for y in linked(net, x) {
        net.fail(x, y);
    }
    assert!(!net.node(x).holds_token());
}

/// Every node but `gone` asks once; the drain serves them all.
fn everyone_else_is_served<P: TokenHarness>(net: &mut TokenNet<P>, gone: &[NodeId]) {
    let before = net.entries.len();
    let size = net.nodes.len() as u32;
    let mut asked = 0;
    for i in (0..size).map(n).filter(|i| !gone.contains(i)) {
        if net.status(i) == Status::Remainder {
            net.request(i, CsRequest::ONE);
            asked += 1;
        }
    }
    net.settle(4_000).unwrap();
    let served: Vec<_> = net.entries[before..].iter().map(|e| e.0).collect();
    assert!(served.len() >= asked, "{asked} asked, served {served:?}");
    assert!(gone.iter().all(|g| !served.contains(g)));
}

#[test]
fn a_krl_holder_that_leaves_hands_its_tokens_to_a_neighbour() {
    for (k, forwarding) in [(1, false), (2, false), (1, true), (2, true)] {
        let edges = ring_edges(6);
        let mut net = krl_all_at_0(6, &edges, k, forwarding, None);
        assert_eq!(net.node(n(0)).tokens(), k);
        leave_and_stop(&mut net, n(0), 10_000);
        assert_eq!(lefts(&net, n(0)), 1, "k {k} forwarding {forwarding}");
        assert!(net.node(n(0)).has_left());
        let held: u32 = net.nodes.iter().map(|v| v.tokens()).sum();
        let flying = net.channels.iter().filter(|m| m.2.is_token()).count() as u32;
        assert_eq!(held + flying, k, "no token lost or duplicated");
        everyone_else_is_served(&mut net, &[n(0)]);
        assert_eq!(lefts(&net, n(0)), 1, "Left is reported once");
    }
}

#[test]
fn the_krl_leave_step_sends_the_token_first_then_the_risen_height() {
    let edges = ring_edges(5);
    let mut net = krl_all_at_0(5, &edges, 1, false, None);
    net.apply(n(0), Event::Leave).unwrap();
    let sent: Vec<_> = net
        .last
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, msg } => Some((*to, *msg)),
            _ => None,
        })
        .collect();
    assert!(sent[0].1.is_token(), "{sent:?}");
    // Not Left yet: the token is unacknowledged.
    assert_eq!(lefts(&net, n(0)), 0);
    let old = net.node(n(0)).neighbors().heights().max().unwrap();
    assert!(net.node(n(0)).height() > old, "above every neighbour");
    net.run(1_000).unwrap();
    assert_eq!(lefts(&net, n(0)), 1);
    assert_eq!(net.node(sent[0].0).tokens(), 1);
}

#[test]
fn a_node_without_a_token_leaves_at_once_and_requests_still_route_around_it() {
    let edges = ring_edges(6);
    let mut net = krl_all_at_0(6, &edges, 1, false, None);
    net.apply(n(2), Event::Leave).unwrap();
    assert!(net.last.contains(&Action::Report(Report::Left)));
    net.run(1_000).unwrap();
    for y in linked(&net, n(2)) {
        net.fail(n(2), y);
    }
    everyone_else_is_served(&mut net, &[n(2)]);
}

#[test]
fn a_leaving_relay_passes_on_the_token_that_comes_for_its_queue() {
    // A line 0 - 1 - 2, the token at 0. 2 asks; its REQUEST reaches 1, which forwards it and
    // then leaves: 1 is not done until the token came through and 2 acknowledged it.
    let line = [(n(0), n(1)), (n(1), n(2))];
    let settings = reverse_link::Settings::new(1);
    let mut net = TokenNet::<reverse_link::Node>::with_edges(3, &line, &[n(0)], settings).unwrap();
    net.request(n(2), CsRequest::ONE);
    assert!(net.deliver(n(2), n(1)));
    assert_eq!(net.node(n(1)).queue().collect::<Vec<_>>(), [n(2)]);
    net.apply(n(1), Event::Leave).unwrap();
    assert_eq!(lefts(&net, n(1)), 0, "a request waits on it");
    net.run(1_000).unwrap();
    assert_eq!(net.status(n(2)), Status::Critical);
    assert_eq!(lefts(&net, n(1)), 1);
    assert!(!net.node(n(1)).holds_token());
}

#[test]
fn a_krlf_token_that_reaches_a_leaving_node_is_passed_on() {
    // KRLF: idle tokens circulate, and reach the leaving node too; it never keeps one.
    let edges = ring_edges(5);
    let mut net = krl_all_at_0(5, &edges, 2, true, None);
    net.apply(n(3), Event::Leave).unwrap();
    let mut arrived = 0;
    for round in 0..400 {
        // Others come and go, so tokens turn idle and move on (KRLF forwards a token when
        // it arrives or is released with nobody waiting).
        let v = n([1, 2, 4][round % 3]);
        match net.status(v) {
            Status::Remainder => net.request(v, CsRequest::ONE),
            Status::Critical => net.release(v),
            _ => {}
        }
        for (from, to) in net.busy_links() {
            let token = net.pending(from, to)[0].is_token();
            net.deliver(from, to);
            if to == n(3) && token {
                arrived += 1;
                assert_eq!(net.node(n(3)).tokens(), 0, "passed on in the same step");
            }
        }
    }
    assert!(arrived > 0, "some idle token reached the leaving node");
    assert_eq!(lefts(&net, n(3)), 1);
}

#[test]
fn a_holder_without_neighbours_keeps_its_token_until_a_link_joins() {
    let line = [(n(0), n(1))];
    let settings = reverse_link::Settings::new(1);
    let mut net = TokenNet::<reverse_link::Node>::with_edges(2, &line, &[n(0)], settings).unwrap();
    net.fail(n(0), n(1));
    net.apply(n(0), Event::Leave).unwrap();
    assert_eq!(net.node(n(0)).tokens(), 1, "nobody to hand it to");
    assert_eq!(lefts(&net, n(0)), 0, "not Left while holding a token");
    net.form(n(0), n(1));
    net.run(1_000).unwrap();
    assert_eq!(net.node(n(1)).tokens(), 1);
    assert_eq!(lefts(&net, n(0)), 1);
}

#[test]
fn leave_is_refused_outside_the_remainder_section_and_a_second_time() {
    let edges = ring_edges(4);
    let mut net = krl_all_at_0(4, &edges, 1, false, None);
    net.request(n(0), CsRequest::ONE);
    let inside = net.node(n(0)).clone();
    assert!(matches!(
        net.apply(n(0), Event::Leave),
        Err(Error::WrongMode { event: "Leave", .. })
    ));
    assert_eq!(*net.node(n(0)), inside, "Err changes nothing");
    net.request(n(2), CsRequest::ONE);
    let waiting = net.node(n(2)).clone();
    assert!(matches!(
        net.apply(n(2), Event::Leave),
        Err(Error::WrongMode { event: "Leave", .. })
    ));
    assert_eq!(*net.node(n(2)), waiting);
    net.apply(n(2), Event::Cancel).unwrap();
    net.apply(n(2), Event::Leave).unwrap();
    let gone = net.node(n(2)).clone();
    for event in [Event::Leave, Event::Request(CsRequest::ONE)] {
        assert!(matches!(
            net.apply(n(2), event),
            Err(Error::WrongMode { .. })
        ));
        assert_eq!(*net.node(n(2)), gone);
    }
    assert_eq!(
        net.apply(n(2), Event::Release),
        Err(Error::NotInCritical(Status::Remainder))
    );
    assert_eq!(
        net.apply(n(2), Event::Cancel),
        Err(Error::NotWaiting(Status::Remainder))
    );
}

#[test]
fn a_prioritized_holder_leaves_while_others_hold_resources() {
    // k = 3: 2 holds two units, 4 holds one; the token (t = 0) comes back to 0, which leaves.
    let settings = prioritized::Settings::new(3, prioritized::Policy::Equal);
    let edges = ring_edges(6);
    let mut net = TokenNet::<prioritized::Node>::with_edges(6, &edges, &[n(0)], settings).unwrap();
    net.request(n(2), CsRequest::resources(2));
    net.run(1_000).unwrap();
    net.request(n(4), CsRequest::resources(1));
    net.run(1_000).unwrap();
    assert_eq!(net.status(n(2)), Status::Critical);
    assert_eq!(net.status(n(4)), Status::Critical);
    // 0 takes the token back (and nothing else: everything is held).
    net.request(n(0), CsRequest::resources(3));
    net.run(1_000).unwrap();
    net.apply(n(0), Event::Cancel).unwrap();
    net.run(1_000).unwrap();
    let holder = (0..6).map(n).find(|&i| net.node(i).holds_token()).unwrap();
    if holder != n(0) {
        // The token is elsewhere: 0 leaves without it, and the test below still holds.
        eprintln!("token at {holder:?}");
    }
    leave_and_stop(&mut net, n(0), 10_000);
    assert_eq!(lefts(&net, n(0)), 1);
    net.release(n(2));
    net.release(n(4));
    everyone_else_is_served(&mut net, &[n(0)]);
    net.settle(4_000).unwrap();
}

#[test]
fn a_prioritized_holder_with_every_unit_free_hands_the_token_over() {
    let settings = prioritized::Settings::new(2, prioritized::Policy::MaxConcurrency);
    let edges = ring_edges(5);
    let mut net = TokenNet::<prioritized::Node>::with_edges(5, &edges, &[n(0)], settings).unwrap();
    assert!(net.node(n(0)).holds_token());
    net.apply(n(0), Event::Leave).unwrap();
    assert!(!net.node(n(0)).holds_token());
    assert_eq!(lefts(&net, n(0)), 0, "not before the acknowledgement");
    net.run(1_000).unwrap();
    assert_eq!(lefts(&net, n(0)), 1);
    let holder = (0..5).map(n).find(|&i| net.node(i).holds_token()).unwrap();
    assert_eq!(
        net.node(holder).available(),
        Some(2),
        "the count travels unchanged"
    );
    for y in linked(&net, n(0)) {
        net.fail(n(0), y);
    }
    everyone_else_is_served(&mut net, &[n(0)]);
}

#[test]
fn a_handed_over_token_keeps_its_fence_and_generation_under_recovery() {
    let edges = ring_edges(5);
    let mut net = krl_all_at_0(5, &edges, 1, false, Some(harness_recovery(5)));
    net.request(n(0), CsRequest::ONE);
    net.release(n(0));
    let fence = net.node(n(0)).held_tokens().next().unwrap();
    net.apply(n(0), Event::Leave).unwrap();
    let handed = net.last.iter().find_map(|a| match a {
        Action::Send { msg, .. } if msg.is_token() => Some(*msg),
        _ => None,
    });
    net.run(1_000).ok();
    let holder = (0..5).map(n).find(|&i| net.node(i).holds_token()).unwrap();
    let now = net.node(holder).held_tokens().next().unwrap();
    assert_eq!(now.generation(), fence.generation(), "{handed:?}");
    assert!(now.value >= fence.value);
}

#[derive(Debug, Clone)]
enum Op {
    Request(u32),
    Release(u32),
    Leave(u32),
    Deliver(usize),
    LinkDown(usize),
    LinkUp(usize),
    /// With recovery: a link breaks with whatever is on it (a token may be lost).
    Break(usize),
    /// With recovery: an armed timer fires early.
    Fire(u32, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u32>().prop_map(Op::Request),
        2 => any::<u32>().prop_map(Op::Release),
        1 => any::<u32>().prop_map(Op::Leave),
        10 => any::<usize>().prop_map(Op::Deliver),
        1 => any::<usize>().prop_map(Op::LinkDown),
        1 => any::<usize>().prop_map(Op::LinkUp),
        1 => any::<usize>().prop_map(Op::Break),
        1 => (any::<u32>(), any::<usize>()).prop_map(|(v, t)| Op::Fire(v, t)),
    ]
}

/// Play `ops` (at most `max_leavers` nodes leave; `resources` bounds a request), then drain:
/// every node that did not leave is served, and every leaver reports `Left` exactly once
/// (KRL; KRLF's idle tokens may still be passing through a leaver when the drain ends).
fn play<P: TokenHarness>(
    mut net: TokenNet<P>,
    ops: &[Op],
    resources: u32,
    max_leavers: usize,
) -> Result<(), String> {
    let size = net.nodes.len() as u32;
    let mut leavers = Vec::new();
    for op in ops {
        match *op {
            Op::Request(i) => {
                let v = n(i % size);
                if net.status(v) == Status::Remainder && !leavers.contains(&v) {
                    let h = 1 + i / size % resources;
                    net.request(v, CsRequest::resources(h));
                }
            }
            Op::Release(i) if net.status(n(i % size)) == Status::Critical => {
                net.release(n(i % size))
            }
            Op::Leave(i) => {
                let v = n(i % size);
                let again = leavers.contains(&v);
                if !again && leavers.len() >= max_leavers {
                    continue;
                }
                let valid = net.status(v) == Status::Remainder && !again;
                let before = net.node(v).clone();
                match net.apply(v, Event::Leave) {
                    Ok(()) if valid => leavers.push(v),
                    Err(Error::WrongMode { .. }) if !valid => {
                        if *net.node(v) != before {
                            return Err(format!("a refused Leave changed {v:?}"));
                        }
                    }
                    other => return Err(format!("Leave at {v:?} (valid: {valid}): {other:?}")),
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
            Op::Break(i) => {
                let links = net.token_links();
                if !links.is_empty() {
                    let (a, b) = links[i % links.len()];
                    net.break_link(a, b);
                }
            }
            Op::Fire(v, t) => {
                let v = n(v % size);
                let armed: Vec<_> = net.timers[v.index()].keys().copied().collect();
                if !armed.is_empty() {
                    net.fire(v, armed[t % armed.len()]);
                }
            }
            _ => {}
        }
        if let Some(fault) = &net.fault {
            return Err(fault.to_string());
        }
    }
    net.settle(6_000).map_err(|v| v.to_string())?;
    for &x in &leavers {
        let count = lefts(&net, x);
        if count > 1 {
            return Err(format!("{x:?} reported Left {count} times"));
        }
        // A leaver without a link keeps its tokens until one joins (L4, "No neighbour").
        if net.node(x).holds_token() && !linked(&net, x).is_empty() {
            return Err(format!(
                "{x:?} left but holds a token, linked to {:?}",
                linked(&net, x)
            ));
        }
        if count == 0 && net.channels.is_empty() {
            return Err(format!("{x:?} never reported Left in a quiet network"));
        }
    }
    Ok(())
}

fn ring<P: TokenHarness>(size: u32, params: &Params<P::Settings>) -> TokenNet<P> {
    TokenNet::new(Graph::from_edges(size as usize, &ring_edges(size)), params)
        .unwrap()
        .checked()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(96)))]

    #[test]
    fn krl_and_krlf_leavers_hand_over_and_the_rest_are_served(
        size in 3u32..7,
        k in 1u32..3,
        forwarding: bool,
        ops in proptest::collection::vec(op(), 0..200),
    ) {
        let settings = reverse_link::Settings::new(k).with_forwarding(forwarding);
        let net = ring::<reverse_link::Node>(size, &Params::first_nodes(settings, k));
        if let Err(e) = play(net, &ops, 1, 1) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn prioritized_leavers_hand_over_and_the_rest_are_served(
        size in 3u32..7,
        k in 1u32..4,
        ops in proptest::collection::vec(op(), 0..200),
    ) {
        let settings = prioritized::Settings::new(k, prioritized::Policy::Equal);
        let net = ring::<prioritized::Node>(size, &Params::first_nodes(settings, 1));
        if let Err(e) = play(net, &ops, k, 1) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn leavers_under_recovery_with_lost_tokens_and_early_timers(
        size in 4u32..7,
        prioritized_core: bool,
        ops in proptest::collection::vec(op(), 0..150),
    ) {
        let recovery = harness_recovery(size as usize);
        let outcome = if prioritized_core {
            let settings = prioritized::Settings::new(2, prioritized::Policy::Equal)
                .with_recovery(recovery);
            play(ring::<prioritized::Node>(size, &Params::first_nodes(settings, 1)), &ops, 2, 1)
        } else {
            let settings = reverse_link::Settings::new(1).with_recovery(recovery);
            play(ring::<reverse_link::Node>(size, &Params::first_nodes(settings, 1)), &ops, 1, 1)
        };
        if let Err(e) = outcome {
            return Err(TestCaseError::fail(e));
        }
    }
}

#[test]
fn a_token_that_comes_to_a_left_node_for_an_orphaned_request_is_passed_on() {
    // A square 0 - 1 - 2 - 3 - 0, the token at 0. 2's REQUEST goes through 1, which queues
    // it and asks 0; then the link 1 - 2 fails: 2 reroutes, and 1's queue is empty while its
    // REQUEST still stands at 0. 1 leaves and reports Left at once (L4's uncovered case);
    // the token 0 sends it is passed on in the same step, and 2 is served.
    let square = [(n(0), n(1)), (n(1), n(2)), (n(2), n(3)), (n(3), n(0))];
    let settings = reverse_link::Settings::new(1);
    let mut net =
        TokenNet::<reverse_link::Node>::with_edges(4, &square, &[n(0)], settings).unwrap();
    net.request(n(0), CsRequest::ONE);
    net.request(n(2), CsRequest::ONE);
    let via = net.node(n(2)).next().unwrap();
    let other = if via == n(1) { n(3) } else { n(1) };
    assert!(net.deliver(n(2), via));
    assert!(net.deliver(via, n(0)));
    assert_eq!(net.node(via).queue().collect::<Vec<_>>(), [n(2)]);
    net.fail(via, n(2));
    assert_eq!(net.node(via).queue().count(), 0);
    net.apply(via, Event::Leave).unwrap();
    assert_eq!(lefts(&net, via), 1, "nothing queued, nothing held");
    net.release(n(0));
    // The token 0 sends for the orphaned REQUEST is passed on in the step it arrives (not
    // only when 0 asks for it back).
    let mut came = false;
    while let Some(head) = net.pending(n(0), via).first().map(|m| m.is_token()) {
        net.deliver(n(0), via);
        if head {
            came = true;
            assert!(!net.node(via).holds_token(), "kept the token it got");
        }
    }
    assert!(came, "0 served the orphaned REQUEST");
    net.run(1_000).unwrap();
    assert!(!net.node(via).holds_token(), "never keeps a token");
    assert_eq!(
        net.status(n(2)),
        Status::Critical,
        "served through {other:?}"
    );
    assert_eq!(lefts(&net, via), 1);
}
