//! KRL/KRLF recovery of lost tokens (`token::Recovery`, `docs/ALGORITHMS.md` F2–F6) on the
//! timed driver (`crate::timed`): crashes, restarts, breaking links, partitions and merges.

use manet_mutex::reverse_link::{network, Config, Node, Settings};
use manet_mutex::token::{Height, RaisePause, Recovery};
use manet_mutex::{CsRequest, Event, NodeId, Protocol, Status};
use proptest::prelude::*;

use crate::timed::{recovery, ring, Net};

fn krl(k: u32) -> Settings {
    Settings::new(k).with_recovery(recovery())
}

#[test]
fn without_faults_nothing_is_made_again_and_beacons_keep_every_node_quiet() {
    for (k, forwarding) in [(1, false), (2, false), (2, true)] {
        let settings = krl(k).with_forwarding(forwarding);
        let mut net = Net::<Node>::new(6, &ring(6), &[0, 3][..k as usize], settings);
        for round in 0..20 {
            net.serve_all(2_000);
            assert_eq!(net.tokens(), k, "round {round}");
        }
        assert_eq!(net.counts.regenerated, 0, "k {k}");
        assert_eq!(net.counts.destroyed, 0);
        assert_eq!(net.counts.refused_old, 0);
        net.run(net.now + 2_000);
        assert_eq!(net.counts.regenerated, 0, "idle for a long time, k {k}");
    }
}

#[test]
fn a_holder_that_crashes_in_the_critical_section_is_replaced_by_one_new_generation() {
    let mut net = Net::<Node>::new(5, &ring(5), &[0], krl(1));
    net.feed(0, Event::Request(CsRequest::ONE));
    assert_eq!(net.nodes[0].as_ref().unwrap().status(), Status::Critical);
    net.crash(0);
    assert_eq!(net.tokens(), 0);
    let served = net.serve_all(5_000);
    assert_eq!(
        net.counts.regenerated, 1,
        "one node of the part makes it again"
    );
    assert_eq!(net.tokens(), 1);
    let bound = recovery().silence() + recovery().claim_wait() + 200;
    assert!(served < bound + 200, "served at {served}, bound {bound}");
}

#[test]
fn a_token_lost_on_a_breaking_link_is_made_again_and_one_delivered_is_not() {
    // Lost: the token is on the wire 0 → 1 when the link breaks.
    let mut net = Net::<Node>::new(4, &ring(4), &[0], krl(1));
    net.feed(1, Event::Request(CsRequest::ONE));
    while !net
        .wires
        .get(&(0, 1))
        .is_some_and(|w| w.iter().any(|(_, m)| m.is_token()))
    {
        net.step();
    }
    net.cut(0, 1);
    assert_eq!(net.tokens(), 0);
    net.serve_all(5_000);
    assert_eq!((net.counts.regenerated, net.tokens()), (1, 1));

    // Delivered: the link breaks just after the token arrived (its acknowledgement lost).
    let mut net = Net::<Node>::new(4, &ring(4), &[0], krl(1));
    net.feed(1, Event::Request(CsRequest::ONE));
    while net.nodes[1].as_ref().unwrap().tokens() == 0 {
        net.step();
    }
    net.cut(0, 1);
    net.serve_all(5_000);
    net.run(net.now + 3 * recovery().silence());
    assert_eq!((net.counts.regenerated, net.tokens()), (0, 1));
}

#[test]
fn a_partition_makes_one_generation_per_part_and_the_merge_destroys_the_older() {
    let mut net = Net::<Node>::new(6, &ring(6), &[0], krl(1));
    net.check_b = false;
    // Two parts: {0, 1, 2} keeps the token, {3, 4, 5} makes one.
    net.cut(2, 3);
    net.cut(5, 0);
    net.serve_all(5_000);
    assert_eq!(net.counts.regenerated, 1);
    assert_eq!(net.tokens(), 2);
    net.join(2, 3);
    net.join(5, 0);
    net.run(net.now + 3 * recovery().silence());
    assert_eq!(net.tokens(), 1, "the merge left one token");
    assert_eq!(net.counts.destroyed, 1);
    net.check_b = true;
    net.acting.clear();
    for _ in 0..5 {
        net.serve_all(5_000);
    }
    assert_eq!(net.counts.regenerated, 1);
}

#[test]
fn a_restarted_host_rejoins_empty_and_one_that_claims_an_old_generation_is_refused() {
    // Complete: any two crashes leave the rest connected.
    let all: Vec<_> = (0..5u32)
        .flat_map(|a| (a + 1..5).map(move |b| (a, b)))
        .collect();
    let mut net = Net::<Node>::new(5, &all, &[0], krl(1));
    net.crash(2);
    net.serve_all(5_000);
    net.restart(2, &[0, 1, 3, 4]);
    for _ in 0..3 {
        net.serve_all(5_000);
    }
    assert_eq!((net.counts.regenerated, net.tokens()), (0, 1));

    // The holder crashes with the token; the rest make generation 1; it comes back with
    // host 0's initial configuration (the old token, generation 0), which is destroyed at
    // first contact, and its beacons are stale.
    net.run(net.now + 50);
    let holder = net
        .live()
        .find(|&i| net.nodes[i as usize].as_ref().unwrap().tokens() == 1);
    let holder = holder.expect("the token rests at a node");
    net.crash(holder);
    net.crash(0);
    net.serve_all(5_000);
    assert_eq!(net.counts.regenerated, 1);
    let configs = network(
        5,
        &all.iter()
            .map(|&(a, b)| (NodeId(a), NodeId(b)))
            .collect::<Vec<_>>(),
        &[NodeId(0)],
        krl(1),
    )
    .unwrap();
    net.nodes[0] = Some(Node::new(configs[0].clone()).unwrap());
    net.check_b = false;
    // Its configuration names all four peers as linked: the links exist before it speaks.
    let alive: Vec<u32> = net.live().filter(|&b| b != 0).collect();
    net.edges.extend(alive.iter().map(|&b| (0, b)));
    for b in alive {
        net.join(0, b);
    }
    net.run(net.now + 3 * recovery().silence());
    assert_eq!(net.tokens(), 1, "the old generation was destroyed");
    assert!(net.counts.destroyed >= 1);
}

#[test]
fn leases_end_long_entries_and_recovery_settings_are_checked() {
    let mut net = Net::<Node>::new(3, &ring(3), &[0], krl(1));
    net.feed(0, Event::Request(CsRequest::ONE));
    let lease = recovery().lease;
    let start = net.now;
    while net.counts.lease_expired == 0 {
        net.now += 1;
        while let Some(t) = net.timers[0].pop_expired(net.now) {
            net.feed(0, Event::Timeout(t));
        }
    }
    assert_eq!(net.now - start, lease);
    assert_eq!(net.nodes[0].as_ref().unwrap().status(), Status::Critical);

    let bad = Settings::new(1).with_recovery(Recovery::new(0, 1, 1, 1));
    let config = Config::new(NodeId(0), bad, 1, Height::new(0, 0, NodeId(0)), vec![]);
    assert!(Node::new(config.with_first_token(0)).is_err());
    let big_id = Config::new(
        NodeId(70_000),
        krl(1),
        0,
        Height::new(1, 0, NodeId(70_000)),
        vec![],
    );
    assert!(Node::new(big_id).is_err());
}

/// Found by the token simulator: a merge destroyed the token of a sink with a queue, which
/// stayed a sink holding nothing (`next` itself), so the request queued there waited for
/// ever. The node now routes its queue on (F6).
#[test]
fn a_sink_whose_token_is_destroyed_routes_its_queue_on() {
    let line = [(0, 1), (1, 2)];
    let mut net = Net::<Node>::new(3, &line, &[0], krl(1));
    net.check_b = false;
    net.cut(1, 2);
    // Node 2, cut off, makes its own generation.
    net.run(recovery().silence() + recovery().claim_wait() + 50);
    assert_eq!(net.counts.regenerated, 1);
    net.staying.insert(0);
    net.feed(0, Event::Request(CsRequest::ONE));
    net.feed(1, Event::Request(CsRequest::ONE));
    net.run(net.now + 20);
    assert_eq!(
        net.nodes[0].as_ref().unwrap().queue().collect::<Vec<_>>(),
        [NodeId(1)]
    );
    // The merge: 2's beacon destroys 0's older token; 0 releases; 1 is served by 2's token.
    net.join(1, 2);
    net.run(net.now + 2 * recovery().beacon_every);
    assert_eq!(net.counts.destroyed, 1);
    net.staying.clear();
    net.acting.clear();
    net.check_b = true;
    net.serve_all(5_000);
    assert_eq!(net.tokens(), 1);
}

/// Found by the token simulator: a restarted node's claim reached the part holding the token,
/// whose holder answered every copy with a beacon flood, and every beacon cleared the claim
/// heard, so copies in flight went round as new: a storm without end. A claim is now answered
/// and passed on once, and evidence keeps the claim heard.
#[test]
fn a_claim_answered_by_the_holder_does_not_storm() {
    let mut edges: Vec<(u32, u32)> = (0..4u32)
        .flat_map(|a| (a + 1..4).map(move |b| (a, b)))
        .collect();
    edges.push((3, 4));
    let settings = Settings::new(1).with_recovery(Recovery::new(8, 3, 1, 3));
    let mut net = Net::<Node>::new(5, &edges, &[0], settings);
    net.check_b = false;
    net.run(30);
    let before = net.counts.sent;
    net.crash(3);
    net.run(41);
    net.restart(3, &[0, 1, 2, 4]);
    net.run(400);
    let settled = net.counts.sent;
    net.run(600);
    let per_unit = (net.counts.sent - settled) as f64 / 200.0;
    let quiet = before as f64 / 30.0;
    assert!(
        per_unit < 3.0 * quiet + 1.0,
        "{per_unit} messages per unit, {quiet} before"
    );
    assert_eq!(net.tokens(), 1);
}

/// A restarted node knows neither the generations alive nor the ones it made before its crash:
/// cut off before it hears of the token, it must not make one (it could repeat a generation it
/// made before, its id and a round it forgot). Once linked to the part with the token, it hears
/// of it and is served. (Its embedder kept nothing: `Config::restarted`.)
#[test]
fn a_restarted_node_claims_nothing_before_it_has_heard_of_the_token() {
    let mut net = Net::<Node>::new(4, &ring(4), &[0], krl(1));
    net.crash(2);
    net.restart_forgetting(2, &[]);
    net.staying.insert(2);
    net.feed(2, Event::Request(CsRequest::ONE));
    net.run(net.now + 4 * (recovery().silence() + recovery().claim_wait()));
    assert_eq!(
        net.counts.regenerated, 0,
        "an isolated restarted node made a token"
    );
    net.join(2, 1);
    net.join(2, 3);
    net.run(net.now + 2_000);
    assert_eq!(net.nodes[2].as_ref().unwrap().status(), Status::Critical);
    net.staying.clear();
    net.serve_all(5_000);
    assert_eq!((net.counts.regenerated, net.tokens()), (0, 1));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// One host crashes at a random time on a graph that stays connected without it (a wheel):
    /// (b) holds throughout, one generation is made if the token died with the host, and
    /// every live requester is served.
    #[test]
    fn one_crash_in_a_connected_part_keeps_k_exclusion(
        seed in any::<u64>(),
        k in 1u32..=2,
        victim in 0u32..7,
        after in 0u64..600,
    ) {
        one_crash_in_a_connected_part_keeps_k_exclusion_case(seed, k, victim, after, krl(k))?;
    }

    /// The same with raises paced (R15).
    #[test]
    fn paced_one_crash_in_a_connected_part_keeps_k_exclusion(
        seed in any::<u64>(),
        k in 1u32..=2,
        victim in 0u32..7,
        after in 0u64..600,
    ) {
        one_crash_in_a_connected_part_keeps_k_exclusion_case(seed, k, victim, after, paced(krl(k)))?;
    }

    /// Random crashes, restarts and breaking links on a ring with chords: (a) always, (b)
    /// while no partition stands, and every live requester served after the faults.
    #[test]
    fn crashes_restarts_and_breaks_keep_the_fences_and_recover(
        seed in any::<u64>(),
        k in 1u32..=2,
        faults in proptest::collection::vec((0u8..3, 0u32..7, 0u64..400), 1..6),
    ) {
        crashes_restarts_and_breaks_keep_the_fences_and_recover_case(seed, k, faults, krl(k))?;
    }

    /// The same with raises paced (R15).
    #[test]
    fn paced_crashes_restarts_and_breaks_keep_the_fences_and_recover(
        seed in any::<u64>(),
        k in 1u32..=2,
        faults in proptest::collection::vec((0u8..3, 0u32..7, 0u64..400), 1..6),
    ) {
        crashes_restarts_and_breaks_keep_the_fences_and_recover_case(seed, k, faults, paced(krl(k)))?;
    }
}

/// Majority mode (`Recovery::with_majority`, `docs/ALGORITHMS.md` F9) on the test kit's
/// driver: after every step it checks that no token id's round is made twice
/// (`round-made-twice`) and that a promise is persisted before it is sent; its drain owes no
/// token to a part without a majority.
mod majority {
    use manet_mutex::reverse_link::{network, Config, Message, Node, Settings};
    use manet_mutex::token::{Height, Promised, Sealed};
    use manet_mutex::{Action, Event, NodeId, Protocol, Report, Status};
    use manet_mutex_sim::{Graph, Params};
    use manet_mutex_testkit::{harness_majority, TokenNet};
    use proptest::prelude::*;

    fn n(i: u32) -> NodeId {
        NodeId(i)
    }

    fn complete(nodes: u32) -> Vec<(NodeId, NodeId)> {
        (0..nodes)
            .flat_map(|a| (a + 1..nodes).map(move |b| (n(a), n(b))))
            .collect()
    }

    fn krl(nodes: u32, edges: &[(NodeId, NodeId)]) -> TokenNet<Node> {
        let graph = Graph::from_edges(nodes as usize, edges);
        let settings = Settings::new(1).with_recovery(harness_majority(nodes as usize));
        TokenNet::new(graph, &Params::new(settings, vec![n(0)])).unwrap()
    }

    /// Long enough for any part to claim, and retry, several times.
    fn long(net: &TokenNet<Node>) -> u64 {
        let r = net.recovery().unwrap();
        4 * (r.silence() + r.claim_wait())
    }

    fn made(net: &TokenNet<Node>) -> Vec<(NodeId, u32)> {
        net.reports
            .iter()
            .filter_map(|&(at, r)| match r {
                Report::TokenRegenerated { fence } => Some((at, fence.generation())),
                _ => None,
            })
            .collect()
    }

    /// After the merge every node asks and is served, and one token is left.
    fn everyone_served(net: &mut TokenNet<Node>) {
        net.merge();
        let wait = long(net);
        net.run_for(wait).unwrap();
        for v in net.live_nodes() {
            if net.status(v) == Status::Critical {
                net.release(v);
            }
            if net.status(v) == Status::Remainder {
                net.request(v, manet_mutex::CsRequest::ONE);
            }
        }
        net.settle(0).unwrap();
        for v in net.live_nodes() {
            assert_eq!(net.status(v), Status::Remainder, "{v:?}");
        }
        let tokens: u32 = net.live_nodes().iter().map(|&v| net.node(v).tokens()).sum();
        assert_eq!(tokens, 1);
    }

    #[test]
    fn only_the_majority_part_makes_the_token_when_the_holder_is_in_the_minority() {
        let mut net = krl(5, &complete(5));
        net.partition(&[n(0), n(1)]);
        let wait = long(&net);
        net.run_for(wait).unwrap();
        let made = made(&net);
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(made[0].0 .0 >= 2, "made in the majority part: {made:?}");
        net.request(n(3), manet_mutex::CsRequest::ONE);
        net.run_for(10).unwrap();
        assert_eq!(net.status(n(3)), Status::Critical);
        net.release(n(3));
        everyone_served(&mut net);
    }

    #[test]
    fn only_the_majority_part_makes_the_token_when_the_holder_is_in_neither() {
        let mut net = krl(5, &complete(5));
        net.crash(n(0));
        net.partition(&[n(1)]);
        net.request(n(1), manet_mutex::CsRequest::ONE);
        let wait = long(&net);
        net.run_for(wait).unwrap();
        let made = made(&net);
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(made[0].0 .0 >= 2, "{made:?}");
        assert_eq!(net.status(n(1)), Status::Waiting, "the minority waits");
        assert_eq!(net.node(n(1)).tokens(), 0);
        everyone_served(&mut net);
        assert_eq!(net.reports.len() - net.failures.destroyed as usize, 1);
    }

    #[test]
    fn an_even_split_makes_nothing_until_a_majority_joins() {
        let mut net = krl(4, &complete(4));
        net.partition(&[n(0), n(1)]);
        net.crash(n(0));
        let wait = long(&net);
        net.run_for(2 * wait).unwrap();
        assert_eq!(made(&net), [], "2 of 4 is no majority");
        everyone_served(&mut net);
        assert_eq!(made(&net).len(), 1);
    }

    /// Nodes 1 and 4 of a line claim the lost token at once (their silence timers fired at
    /// will), in the same round: the nodes between split their promises, neither reaches
    /// three of five; the better claimer goes on in the next round and the part converges on
    /// one token.
    #[test]
    fn a_split_vote_in_one_round_converges_on_one_token() {
        let line = [(n(0), n(1)), (n(1), n(2)), (n(2), n(3)), (n(3), n(4))];
        let mut net = krl(5, &line);
        net.crash(n(0));
        net.partition(&[n(1), n(2), n(3), n(4)]);
        let silent = |net: &TokenNet<Node>, v: NodeId| {
            net.armed()
                .into_iter()
                .find(|&(w, t)| w == v && t.0 & 0xffff_ffff == 1)
                .map(|(_, t)| t)
                .unwrap()
        };
        let (a, b) = (silent(&net, n(1)), silent(&net, n(4)));
        net.fire(n(1), a);
        net.fire(n(4), b);
        net.run_for(long(&net)).unwrap();
        let made = made(&net);
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(made[0].1 >> 16 >= 1, "{made:?}");
        net.merge();
        for v in 1..5 {
            net.request(n(v), manet_mutex::CsRequest::ONE);
        }
        net.settle(0).unwrap();
        for v in 1..5 {
            assert_eq!(net.status(n(v)), Status::Remainder, "{v}");
        }
        assert_eq!(self::made(&net).len(), 1);
    }

    /// Issue 34, break 2 (F13), where only the refusals can help: {3, 4} claim round after
    /// round for 20 silences in a minority; after the merge the holder crashes and node 1's
    /// silence ends first (fired at will). Nodes 3 and 4 hear its claim before their own
    /// silence ends, so they claim nothing; they refuse, naming the round they promised, and
    /// node 1 claims above it at once: the token is made within two claim waits (and a flood)
    /// of the first claim, not a silence later when 3 or 4 would claim in turn.
    #[test]
    fn a_refused_claimer_goes_above_the_promised_round_at_once() {
        let mut net = krl(5, &complete(5));
        let r = net.recovery().unwrap();
        net.partition(&[n(3), n(4)]);
        net.run_for(20 * r.silence()).unwrap();
        assert_eq!(made(&net), [], "the minority makes nothing");
        net.merge();
        net.run_for(r.silence() / 2).unwrap();
        net.crash(n(0));
        let silent = net
            .armed()
            .into_iter()
            .find(|&(w, t)| w == n(1) && t.0 & 0xffff_ffff == 1)
            .map(|(_, t)| t)
            .unwrap();
        net.fire(n(1), silent);
        let within = 2 * r.claim_wait() + r.hop_bound * u64::from(r.diameter);
        net.run_for(within).unwrap();
        let made = made(&net);
        assert_eq!(made.len(), 1, "made within {within}: {made:?}");
        assert!(made[0].1 >> 16 > 20, "above every round promised: {made:?}");
        everyone_served(&mut net);
    }

    fn node(promises: Option<Vec<Promised>>) -> Node {
        let edges = [(n(0), n(1)), (n(1), n(2))];
        let settings = Settings::new(1).with_recovery(harness_majority(3));
        let configs = network(3, &edges, &[n(0)], settings).unwrap();
        let config: Config = configs[1].clone();
        let config = match promises {
            Some(p) => config.restarted().with_promises(p),
            None => config,
        };
        Node::new(config).unwrap()
    }

    /// What node 1 does with a claim of round `round` from `from`: the promise it persisted,
    /// whether it sent a promise of the claim, and the ballot of a refusal it sent (its
    /// promise that stands, sent again: F13), if any.
    fn claim(node: &mut Node, from: u32, round: u32) -> (Option<Promised>, bool, Option<u32>) {
        let sealed = Sealed::new(Height::new(0, 0, n(from)));
        let ballot = (round << 16) | from;
        let msg = Message::Claim(sealed, 0, [ballot; 3]);
        let actions: Vec<_> = node
            .handle(Event::Receive { from: n(from), msg })
            .unwrap()
            .collect();
        let persisted = actions.iter().find_map(|a| match a {
            Action::Persist { promised } => Some(*promised),
            _ => None,
        });
        let persist_at = actions
            .iter()
            .position(|a| matches!(a, Action::Persist { .. }));
        let sent_at = actions.iter().position(|a| {
            matches!(
                a,
                Action::Send {
                    msg: Message::Promise(_, _, b, 1),
                    ..
                } if *b == [ballot; 3]
            )
        });
        if let Some(sent) = sent_at {
            assert!(persist_at.is_some_and(|p| p < sent), "{actions:?}");
        }
        let refusal = actions.iter().find_map(|a| match a {
            Action::Send {
                msg: Message::Promise(_, _, b, 1),
                ..
            } if *b != [ballot; 3] => Some(b[0]),
            _ => None,
        });
        (persisted, sent_at.is_some(), refusal)
    }

    #[test]
    fn a_node_promises_once_per_round_and_a_restart_keeps_that_only_with_its_promises() {
        let mut v = node(None);
        let (stored, sent, refusal) = claim(&mut v, 2, 1);
        assert!(sent, "a first claim of round 1 is promised");
        assert_eq!(refusal, None);
        let stored = stored.expect("and persisted first");
        assert_eq!((stored.lane, stored.ballot), (0, (1 << 16) | 2));
        assert_eq!(
            claim(&mut v, 0, 1),
            (None, false, Some(stored.ballot)),
            "no second promise in round 1; the refusal names the promise that stands"
        );

        // Restarted with what it stored: still no promise of round 1, one of round 2.
        let mut restarted = node(Some(vec![stored]));
        assert_eq!(
            claim(&mut restarted, 0, 1),
            (None, false, Some(stored.ballot))
        );
        assert!(claim(&mut restarted, 0, 2).1);

        // Restarted without: it never promises (liveness only), but passes claims on.
        let mut forgetful = node(Some(Vec::new()));
        let mut bare = Config::clone(
            &network(
                3,
                &[(n(0), n(1)), (n(1), n(2))],
                &[n(0)],
                Settings::new(1).with_recovery(harness_majority(3)),
            )
            .unwrap()[1],
        );
        bare = bare.restarted();
        let mut never = Node::new(bare).unwrap();
        assert_eq!(claim(&mut never, 0, 1), (None, false, None));
        assert_eq!(claim(&mut never, 2, 2), (None, false, None));
        // Given an empty list it may promise: it made no promise before.
        assert!(claim(&mut forgetful, 0, 1).1);
    }

    /// What `node` does with `event`.
    fn feed(node: &mut Node, event: Event<Message>) -> Vec<Action<Message>> {
        node.handle(event).unwrap().collect()
    }

    /// The recovery timer of kind `kind` for token id 0 (1: silence, 2: claim wait) that
    /// `actions` set.
    fn recovery_timer(actions: &[Action<Message>], kind: u64) -> Option<manet_mutex::TimerId> {
        actions.iter().find_map(|a| match a {
            Action::SetTimer { timer, .. }
                if timer.0 >> 63 == 1 && timer.0 & 0xffff_ffff == kind =>
            {
                Some(*timer)
            }
            _ => None,
        })
    }

    /// The rounds of the claims `actions` send.
    fn claims_sent(actions: &[Action<Message>]) -> Vec<u32> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Send {
                    msg: Message::Claim(_, 0, g),
                    ..
                } => Some(g[0] >> 16),
                _ => None,
            })
            .collect()
    }

    /// F13: a claimer that heard, while claiming, a voter's refusal naming a round it promised
    /// (a promise of a round at or above the claim's) and did not win claims again at once,
    /// above that round, when its claim wait ends, rather than after its next silence. Node 1
    /// of the line 0–1–2 claims round 1; node 2 names its promise of round 5.
    #[test]
    fn a_refused_claimer_claims_above_the_named_round_when_its_claim_wait_ends() {
        let mut v = node(None);
        let armed = feed(&mut v, Event::LinkUp(n(0)));
        let silent = recovery_timer(&armed, 1).expect("the silence timer");
        let claimed = feed(&mut v, Event::Timeout(silent));
        assert_eq!(claims_sent(&claimed), [1, 1], "round 1 to both neighbours");
        let wait = recovery_timer(&claimed, 2).expect("the claim wait");
        let refusal = Message::promise(Height::new(0, 0, n(2)), 0, (5 << 16) | 2, 2);
        let heard = feed(
            &mut v,
            Event::Receive {
                from: n(2),
                msg: refusal,
            },
        );
        assert!(claims_sent(&heard).is_empty());
        let ended = feed(&mut v, Event::Timeout(wait));
        assert_eq!(
            claims_sent(&ended),
            [6, 6],
            "at once, one round above the refusal's: {ended:?}"
        );
    }

    /// F13: a promise's ballot is under its check word. Every copy of the ballot changed alike
    /// on the way (a round far ahead) fails the check word: the promise is refused as out of
    /// range and neither counted nor passed on; the same promise intact is passed on.
    #[test]
    fn a_promise_whose_ballot_changed_on_the_way_fails_its_check_word() {
        let mut v = node(None);
        feed(&mut v, Event::LinkUp(n(0)));
        let sent = Message::promise(Height::new(0, 0, n(2)), 0, (2 << 16) | 2, 2);
        let Message::Promise(sealed, lane, _, voter) = sent else {
            unreachable!("a promise")
        };
        let changed = Message::Promise(sealed, lane, [(30 << 16) | 2; 3], voter);
        let actions = feed(
            &mut v,
            Event::Receive {
                from: n(2),
                msg: changed,
            },
        );
        assert!(
            actions.iter().any(|a| matches!(
                a,
                Action::Anomaly {
                    kind: manet_mutex::Anomaly::OutOfRange,
                    ..
                }
            )),
            "{actions:?}"
        );
        assert!(
            !actions.iter().any(|a| matches!(a, Action::Send { .. })),
            "not passed on: {actions:?}"
        );
        let actions = feed(
            &mut v,
            Event::Receive {
                from: n(2),
                msg: sent,
            },
        );
        assert!(
            actions.iter().any(|a| matches!(
                a,
                Action::Send {
                    msg: Message::Promise(..),
                    ..
                }
            )),
            "the intact promise is passed on: {actions:?}"
        );
    }

    #[test]
    fn majority_settings_and_ids_are_checked() {
        let edges = [(n(0), n(1))];
        let bad = |members| {
            let settings =
                Settings::new(1).with_recovery(harness_majority(2).with_majority(members));
            network(2, &edges, &[n(0)], settings)
                .ok()
                .and_then(|c| {
                    c.into_iter()
                        .map(Node::new)
                        .collect::<Result<Vec<_>, _>>()
                        .ok()
                })
                .is_none()
        };
        assert!(bad(0), "an empty membership");
        assert!(bad(1), "node 1 outside a membership of one");
        assert!(!bad(2));
        let settings = Settings::new(1).with_recovery(harness_majority(2));
        let config = network(2, &edges, &[n(0)], settings).unwrap()[1].clone();
        let wrong = config.with_promises(vec![Promised::new(1, 1 << 16)]);
        assert!(
            Node::new(wrong).is_err(),
            "a promise for token id 1 of k = 1"
        );
    }

    #[test]
    fn a_voter_restarted_with_its_promises_or_without_keeps_the_network_safe() {
        for forget in [false, true] {
            let mut net = krl(5, &complete(5));
            net.partition(&[n(0), n(1)]);
            let wait = long(&net);
            net.run_for(wait).unwrap();
            assert_eq!(made(&net).len(), 1);
            for v in [2, 3, 4] {
                if forget {
                    net.restart_forgetting(n(v));
                } else {
                    net.restart(n(v));
                }
                net.run_for(wait).unwrap();
            }
            everyone_served(&mut net);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(
            manet_mutex_testkit::strategy::cases(48)
        ))]

        /// Partitions, crashes and restarts (with and without promises) at random times on a
        /// complete graph of five: no round of the token is made twice (checked after every
        /// step); once the partition heals with a majority live, everyone is served.
        #[test]
        fn no_round_is_made_twice_and_a_healed_majority_is_served(
            faults in prop::collection::vec((0u8..5, 0u32..5, 0u64..40, any::<u8>()), 1..8),
        ) {
            let mut net = krl(5, &complete(5));
            let mut crashed = 0;
            for (kind, v, pause, side) in faults {
                match kind {
                    0 => {
                        let side: Vec<_> = (0..5).filter(|i| side >> i & 1 == 1).map(n).collect();
                        net.partition(&side);
                    }
                    1 => net.merge(),
                    2 if crashed < 2 && net.live(n(v)) => {
                        net.crash(n(v));
                        crashed += 1;
                    }
                    3 => net.restart(n(v)),
                    _ => net.restart_forgetting(n(v)),
                }
                net.run_for(pause).unwrap();
            }
            net.merge();
            let settle = net.recovery_rounds() as u64;
            net.run_for(settle).unwrap();
            let live = net.live_nodes();
            for &v in &live {
                net.request(v, manet_mutex::CsRequest::ONE);
            }
            if !net.without_majority(&live) {
                net.settle(0).unwrap();
            } else {
                net.run_for(settle).unwrap();
            }
        }
    }
}

#[test]
fn a_refusal_that_cannot_be_one_is_an_error_and_changes_nothing() {
    use manet_mutex::{Error, Fence};
    let mut node = Node::new(
        Config::new(
            NodeId(0),
            krl(2),
            2,
            Height::new(0, 0, NodeId(0)),
            vec![Height::new(1, 0, NodeId(1))],
        )
        .with_first_token(0),
    )
    .unwrap();
    let before = format!("{node:?}");
    let f = |lane, value| Fence::new(lane, value);
    for (fence, newest) in [
        (f(0, 5), f(1, 9)), // two units
        (f(2, 5), f(2, 9)), // no unit 2 with k = 2
        (f(0, 9), f(0, 5)), // earlier
    ] {
        let e = node.handle(Event::Refused { fence, newest }).err();
        assert!(
            matches!(e, Some(Error::InvalidRefusal(_))),
            "{fence:?} {newest:?}: {e:?}"
        );
        assert_eq!(format!("{node:?}"), before);
    }
    let mut plain = Node::new(
        Config::new(
            NodeId(0),
            Settings::new(1),
            1,
            Height::new(0, 0, NodeId(0)),
            vec![Height::new(1, 0, NodeId(1))],
        )
        .with_first_token(0),
    )
    .unwrap();
    let refused = Event::Refused {
        fence: f(0, 1),
        newest: f(0, 2),
    };
    assert!(matches!(
        plain.handle(refused),
        Err(Error::WrongMode {
            event: "Refused",
            ..
        })
    ));
}

#[test]
fn a_refusal_moves_a_held_token_above_the_admitted_generation_once() {
    use manet_mutex::{Action, Fence, Report};
    let mut node = Node::new(
        Config::new(
            NodeId(3),
            krl(1),
            1,
            Height::new(0, 0, NodeId(3)),
            vec![Height::new(1, 0, NodeId(1))],
        )
        .with_first_token(0),
    )
    .unwrap();
    let entered = node.handle(Event::Request(CsRequest::ONE)).unwrap();
    let fence = entered
        .filter_map(|a| match a {
            Action::EnterCritical { fence, .. } => Some(fence),
            _ => None,
        })
        .next()
        .unwrap();
    // The resource admitted generation (round 4, node 7): the token moves to round 5, made here.
    let newest = Fence::new(0, Fence::first_of(0, (4 << 16) | 7).value + 1);
    let made: Vec<_> = node
        .handle(Event::Refused { fence, newest })
        .unwrap()
        .filter_map(|a| match a {
            Action::Report(Report::TokenRenumbered { fence }) => Some(fence),
            _ => None,
        })
        .collect();
    assert_eq!(made, vec![Fence::first_of(0, (5 << 16) | 3)]);
    // A second refusal of the same fence changes nothing: the token is above already.
    let again = node.handle(Event::Refused { fence, newest }).unwrap();
    assert_eq!(again.filter(|a| matches!(a, Action::Report(_))).count(), 0);
}

fn one_crash_in_a_connected_part_keeps_k_exclusion_case(
    seed: u64,
    k: u32,
    victim: u32,
    after: u64,
    settings: Settings,
) -> Result<(), TestCaseError> {
    let mut edges = ring(6);
    edges.extend((0..6).map(|i| (i, 6)));
    let mut net = Net::<Node>::new(7, &edges, &[0, 3][..k as usize], settings).seed(seed);
    net.want_all();
    net.run(after);
    let before = net.tokens();
    net.crash(victim);
    // Held there, or on one of its links.
    let lost = before - net.tokens();
    for _ in 0..3 {
        net.serve_all(20_000);
    }
    net.run(net.now + 3 * recovery().silence());
    prop_assert!(u64::from(lost) >= net.counts.regenerated);
    prop_assert_eq!(net.tokens_per_part(), vec![k]);
    Ok(())
}

fn crashes_restarts_and_breaks_keep_the_fences_and_recover_case(
    seed: u64,
    k: u32,
    faults: Vec<(u8, u32, u64)>,
    settings: Settings,
) -> Result<(), TestCaseError> {
    let mut edges = ring(7);
    edges.extend([(0, 3), (2, 5)]);
    let mut net = Net::<Node>::new(7, &edges, &[0, 4][..k as usize], settings).seed(seed);
    net.check_b = false; // links break with tokens on them: parts may form
    net.play_faults(&edges, &faults);
    net.run(net.now + 3 * recovery().silence());
    net.acting.clear();
    net.serve_all(20_000);
    net.run(net.now + 3 * recovery().silence());
    let parts = net.tokens_per_part();
    prop_assert!(
        parts.iter().all(|&t| t == k),
        "tokens per part {parts:?}, k = {k}"
    );
    Ok(())
}

/// `settings` with raises paced from 2 up to 16 time units (R15): messages take 1 to 3.
fn paced(settings: Settings) -> Settings {
    settings.with_raise_pause(RaisePause::new(2, 16))
}

/// F12: a restarted node's raises jump only until it holds a token; from then on they are the
/// paper's partial reversal. KRL on the star around node 1 (neighbours 0, 2 and 3; node 3
/// and its leaf 4 lifted 50 levels, so that T7 does not trim node 3), the token at 0. Node 1 restarts at height zero, enters with the token, and the
/// token goes back to node 0; then the link 0–1 breaks, so node 1 is a sink without a token:
/// it raises one level above node 2, its lowest neighbour, not above node 3.
#[test]
fn a_restarted_node_that_held_a_token_raises_by_partial_reversal() {
    let edges = [(1, 0), (1, 2), (1, 3), (3, 4)];
    let settings = krl(1);
    let e: Vec<_> = edges.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect();
    let lift = |x: Height| match x.id.0 {
        3 | 4 => Height::new(x.h1 + 50, x.h2, x.id),
        _ => x,
    };
    let nodes = network(5, &e, &[NodeId(0)], settings)
        .unwrap()
        .into_iter()
        .map(|mut c| {
            c.height = lift(c.height);
            c.neighbors = c.neighbors.into_iter().map(lift).collect();
            Node::new(c).unwrap()
        })
        .collect();
    let mut net = Net::<Node>::of(nodes, &edges, settings);
    net.run(50);
    net.crash(1);
    net.restart_forgetting(1, &[0, 2, 3]);
    net.run(net.now + 10);
    let node = |net: &Net<Node>, i: usize| net.nodes[i].clone().unwrap();
    net.feed(1, Event::Request(CsRequest::ONE));
    while net.counts.entries == 0 && net.now < 1_000 {
        net.step();
    }
    assert_eq!(net.counts.entries, 1, "node 1 entered");
    net.feed(0, Event::Request(CsRequest::ONE));
    while net.counts.entries < 2 && net.now < 2_000 {
        net.step();
    }
    assert_eq!(net.counts.entries, 2, "node 0 entered");
    net.run(net.now + 10);
    assert_eq!(node(&net, 1).tokens(), 0);
    let (two, three) = (node(&net, 2).height(), node(&net, 3).height());
    assert!(node(&net, 1).height() < two, "node 1 below its neighbours");
    net.cut(0, 1);
    let raised = node(&net, 1).height();
    assert!(
        raised.h1 == two.h1 + 1 && raised < three,
        "node 1 raised to {raised:?}, neighbours {two:?} and {three:?}"
    );
}

/// Issue 34, break 4 (`docs/ALGORITHMS.md`, F12): KRL on the line 0–4–1–2–3, the token at 0,
/// every height lifted by `h` (heights grow in normal operation: a token-less part raises
/// without end, R15). Nodes 1 and 2 crash and restart together with the README's recipe
/// (`Height::new(0, 0, id)`, `Config::restarted`), their link to each other up first, then
/// their links to the rest. No token is lost; node 3 asks at once.
/// The restarted pair used to be a token-less sink below everyone, climbing one level per
/// exchange: service took time in proportion to `h`. Now a restarted node's raises jump above
/// every neighbour until it holds a token, so service takes a bound independent of `h`.
#[test]
fn hosts_restarted_together_at_height_zero_are_served_within_a_bound_independent_of_heights() {
    let edges = [(0, 4), (4, 1), (1, 2), (2, 3)];
    let settings = krl(1);
    let hop = recovery().hop_bound;
    // Heights settle in a hop per restarted node plus one (each jumps once it hears the
    // neighbour that jumped before it, and node 3 raises once over node 2), the REQUEST
    // crosses the d = 4 hops from node 3 to node 0 and the token crosses them back, with a
    // hop of slack for the handshake after the restart.
    let (d, restarted) = (4, 2);
    let bound = (2 * d + restarted + 2) * hop;
    for h in [10i64, 100, 1_000, 100_000] {
        let e: Vec<_> = edges.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect();
        let lift = |x: Height| Height::new(x.h1 + h, x.h2, x.id);
        let nodes = network(5, &e, &[NodeId(0)], settings)
            .unwrap()
            .into_iter()
            .map(|mut c| {
                c.height = lift(c.height);
                c.neighbors = c.neighbors.into_iter().map(lift).collect();
                Node::new(c).unwrap()
            })
            .collect();
        let mut net = Net::<Node>::of(nodes, &edges, settings);
        net.run(50);
        net.crash(1);
        net.crash(2);
        // Restarted together: their link to each other comes up first, then (a few time
        // units later) their links to the rest.
        net.restart_forgetting(1, &[]);
        net.restart_forgetting(2, &[1]);
        net.run(net.now + 2 * hop);
        net.join(1, 4);
        net.join(2, 3);
        let start = net.now;
        net.feed(3, Event::Request(CsRequest::ONE));
        while net.counts.entries == 0 && net.now < start + 100 * bound {
            net.step();
        }
        let served = net.now - start;
        eprintln!("break 4: h = {h}: node 3 served after {served} (bound {bound})");
        assert_eq!(
            net.counts.entries, 1,
            "h = {h}: node 3 not served by {}",
            net.now
        );
        assert!(
            served <= bound,
            "h = {h}: node 3 served after {served}, bound {bound}"
        );
        assert_eq!(net.tokens(), 1, "no token lost or made");
        assert_eq!(net.counts.regenerated, 0);
    }
}
