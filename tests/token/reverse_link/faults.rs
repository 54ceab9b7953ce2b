//! KRL/KRLF under the failure model's faults in the test kit's step-by-step driver
//! (`TokenNet` with `harness_recovery`; `docs/ALGORITHMS.md`, F8): crashes, restarts,
//! partitions and merges, tokens lost on breaking links, and timers fired at will, mixed with
//! the threat model's faults. Safety after every step, liveness (d) and one token of each id
//! per connected part after the drain on the network's clock.

use manet_mutex_testkit::fuzz::{reverse_link_network, Recovering};
use manet_mutex_testkit::strategy::{cases, reverse_link_input_with, TokenFaults};
use manet_mutex_testkit::Failures;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Every clock on time: crashes, restarts, partitions, breaking links, one-sided link
    /// events. Rule (a) with no refusal but an older generation's, rule (b) per connected
    /// part, no suspect anomaly, every live requester served, one token of each id per part.
    #[test]
    fn crashes_partitions_and_breaks_keep_the_rules_and_recover(
        input in reverse_link_input_with(TokenFaults::CRASHES),
    ) {
        prop_assert_eq!(input.recovering, Recovering::Timely);
        reverse_link_network::run(&input);
    }

    /// Everything at once, timers fired at will among it (clocks that break the bounds):
    /// rule (a) and each node's own invariants after every step, then the drain.
    #[test]
    fn timers_at_will_and_every_fault_keep_rule_a_and_recover(
        input in reverse_link_input_with(TokenFaults::RECOVERY),
    ) {
        prop_assert_eq!(input.recovering, Recovering::AtWill);
        reverse_link_network::run(&input);
    }
}

/// What the failure profiles exercise (a fixed seed; printed with `--nocapture`): every
/// failure fault happens, tokens are lost, made again, destroyed, and leases end.
#[test]
fn the_failure_profiles_exercise_every_fault() {
    let mut total = Failures::default();
    for profile in [TokenFaults::CRASHES, TokenFaults::RECOVERY] {
        total += crate::exercise(64, reverse_link_input_with(profile), |input| {
            let mut net = reverse_link_network::play_schedule(input);
            let _ = net.settle(0);
            net.failures
        });
    }
    println!("reverse_link failure profiles: {total:?}");
    let f = total;
    assert!(
        f.crashes > 0 && f.restarts > 0 && f.partitions > 0 && f.merges > 0,
        "{f:?}"
    );
    assert!(
        f.breaks > 0 && f.fired > 0 && f.lost > 0 && f.regenerated > 0,
        "{f:?}"
    );
    assert!(f.destroyed > 0 && f.lease_ends > 0, "{f:?}");
}

mod findings {
    //! What these harnesses found in KRL's recovery (issue 23; `docs/ALGORITHMS.md`, F8), each
    //! as its minimal scenario on the test kit's driver with every timer on time
    //! (`TokenNet::run_for`) unless said otherwise. The token simulator's runs found three of
    //! them independently; each test failed before its fix (F4, F6, F8, F10).

    use manet_mutex::reverse_link::{Node, Settings};
    use manet_mutex::{CsRequest, NodeId, Report, Status};
    use manet_mutex_sim::{Graph, Params};
    use manet_mutex_testkit::fuzz::{reverse_link_network, Recovering, Topology};
    use manet_mutex_testkit::{harness_recovery, TimedFault, TokenFault, TokenNet, TokenOp};

    fn n(i: u32) -> NodeId {
        NodeId(i)
    }

    fn krl(nodes: u32, edges: &[(u32, u32)]) -> TokenNet<Node> {
        let edges: Vec<_> = edges.iter().map(|&(a, b)| (n(a), n(b))).collect();
        let graph = Graph::from_edges(nodes as usize, &edges);
        let settings = Settings::new(1).with_recovery(harness_recovery(nodes as usize));
        TokenNet::new(graph, &Params::new(settings, vec![n(0)])).unwrap()
    }

    /// The holder is in the critical section with node 1's request queued when a partition
    /// cuts it off from nodes 2 and 3, which make the token again; after the merge their
    /// beacons destroy its token (it is told `LeaseExpired`). When it left, nothing sent node
    /// 1's request on: node 1 waited for ever, every timer on time (liveness (d)). Now the
    /// node without a token routes its queue on (F6).
    #[test]
    fn a_holder_whose_token_is_destroyed_strands_no_request_queued_there() {
        let mut net = krl(4, &[(0, 1), (1, 2), (2, 3)]);
        net.request(n(0), CsRequest::ONE);
        net.request(n(1), CsRequest::ONE);
        net.run_for(1).unwrap();
        assert_eq!(net.node(n(0)).queue().collect::<Vec<_>>(), [n(1)]);
        net.partition(&[n(2), n(3)]);
        let r = harness_recovery(4);
        net.run_for(r.silence() + r.claim_wait() + 10).unwrap();
        net.merge();
        net.run_for(20).unwrap();
        assert!(
            net.node(n(0)).revoked(),
            "the merge destroyed the holder's token"
        );
        net.release(n(0));
        net.run_for(10 * r.silence()).unwrap();
        assert_eq!(net.status(n(1)), Status::Critical, "node 1 is never served");
    }

    /// Node 2 alone (a partition) makes generation (1, 2) and enters with it; it crashes with
    /// the token and restarts with empty state (its embedder kept nothing:
    /// `Config::restarted`), alone again. It made generation (1, 2) a
    /// second time, its entries repeating fences the protected resource had admitted (F2 says
    /// two regenerations never make one generation). Now a restarted node claims no token it
    /// has not heard of since (F4): alone, it waits; after the merge it hears of node 0's
    /// token and is served with it. That token is of generation 0, below the (1, 2) the
    /// resource admitted, so the resource refuses it (rule (a)), and would refuse it for ever:
    /// the refusal (`Event::Refused`, which the driver feeds back) moves the token above
    /// (1, 2), and the next entry is admitted (F10).
    #[test]
    fn a_restarted_node_makes_no_generation_twice() {
        let mut net = krl(3, &[(0, 1), (1, 2)]);
        net.partition(&[n(2)]);
        let r = harness_recovery(3);
        net.run_for(r.silence() + r.claim_wait() + 5).unwrap();
        net.request(n(2), CsRequest::ONE);
        net.run_for(1).unwrap();
        let lost = net.entries.last().unwrap().2;
        net.release(n(2));
        net.restart_forgetting(n(2));
        net.request(n(2), CsRequest::ONE);
        net.run_for(3 * (r.silence() + r.claim_wait())).unwrap();
        let made = |net: &TokenNet<Node>| {
            net.reports
                .iter()
                .filter_map(|(at, r)| match r {
                    Report::TokenRegenerated { fence } | Report::TokenRenumbered { fence } => {
                        Some((*at, *r, fence.generation()))
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(made(&net).len(), 1, "{:?}", net.reports);
        assert_eq!(net.status(n(2)), Status::Waiting);
        net.merge();
        net.run_for(3 * r.silence()).unwrap();
        assert_eq!(net.status(n(2)), Status::Critical);
        assert_eq!(
            net.failures.refused, 1,
            "the old generation's entry is refused"
        );
        // The refusal moved the token node 2 holds above the lost generation, once.
        let moved = made(&net);
        assert_eq!(moved.len(), 2, "{moved:?}");
        assert_eq!(moved[1].0, n(2));
        assert!(
            matches!(moved[1].1, Report::TokenRenumbered { .. }),
            "{moved:?}"
        );
        assert!(moved[1].2 > lost.generation(), "{moved:?} vs {lost:?}");
        net.release(n(2));
        net.request(n(2), CsRequest::ONE);
        net.run_for(1).unwrap();
        assert_eq!(net.status(n(2)), Status::Critical);
        assert_eq!(net.failures.refused, 1, "the next entry is admitted");
        // And stays so for everyone: node 0 is served in turn.
        net.release(n(2));
        net.request(n(0), CsRequest::ONE);
        net.run_for(3 * r.diameter as u64 * r.hop_bound + 5)
            .unwrap();
        assert_eq!(net.status(n(0)), Status::Critical);
        assert_eq!(net.failures.refused, 1);
    }

    /// As above, but the embedder kept the highest round node 2 made
    /// (`Config::restarted_after`): alone after its restart, it claims at once and makes round
    /// 2, never (1, 2) again, and its entries are admitted; after the merge its generation
    /// destroys node 0's older one, and everyone is served (F4).
    #[test]
    fn a_node_restarted_with_its_last_round_makes_only_later_rounds() {
        let mut net = krl(3, &[(0, 1), (1, 2)]);
        net.partition(&[n(2)]);
        let r = harness_recovery(3);
        net.run_for(r.silence() + r.claim_wait() + 5).unwrap();
        net.request(n(2), CsRequest::ONE);
        net.run_for(1).unwrap();
        net.release(n(2));
        net.restart(n(2));
        net.request(n(2), CsRequest::ONE);
        net.run_for(r.silence() + r.claim_wait() + 5).unwrap();
        assert_eq!(net.status(n(2)), Status::Critical);
        let made: Vec<_> = net
            .reports
            .iter()
            .filter_map(|(at, r)| match r {
                Report::TokenRegenerated { fence } => Some((*at, fence.generation())),
                _ => None,
            })
            .collect();
        assert_eq!(made, vec![(n(2), 1 << 16 | 2), (n(2), 2 << 16 | 2)]);
        net.release(n(2));
        net.merge();
        // Beacons cross the joined network before anyone asks: the older token is destroyed.
        net.run_for(r.silence()).unwrap();
        assert_eq!(net.failures.destroyed, 1);
        for node in [n(0), n(1), n(2)] {
            net.request(node, CsRequest::ONE);
            net.run_for(3 * r.silence()).unwrap();
            assert_eq!(net.status(node), Status::Critical, "{node:?}");
            net.release(node);
        }
        assert_eq!(net.failures.refused, 0);
    }

    /// A refusal can come late, after the token left (a resource answers asynchronously):
    /// the node keeps the generation the resource admitted, and moves the token above it the
    /// moment it holds it again, before it enters with it (F10).
    #[test]
    fn a_late_refusal_moves_the_token_when_it_comes_back() {
        use manet_mutex::{Event, Fence};
        let mut net = krl(3, &[(0, 1), (1, 2)]);
        net.request(n(0), CsRequest::ONE);
        let fence = net.entries.last().unwrap().2;
        net.release(n(0));
        net.request(n(2), CsRequest::ONE);
        net.run_for(10).unwrap();
        assert_eq!(net.status(n(2)), Status::Critical);
        net.release(n(2));
        let newest = Fence::first_of(0, (5 << 16) | 9);
        net.apply_valid(n(0), Event::Refused { fence, newest });
        assert!(
            net.reports.is_empty(),
            "the token is not here: nothing moves"
        );
        net.request(n(0), CsRequest::ONE);
        net.run_for(10).unwrap();
        assert_eq!(net.status(n(0)), Status::Critical);
        let made: Vec<_> = net.reports.iter().map(|(at, r)| (*at, *r)).collect();
        let moved = Fence::first_of(0, 6 << 16); // round 6, made by node 0
        assert_eq!(made, vec![(n(0), Report::TokenRenumbered { fence: moved })]);
        let entered = net.entries.last().unwrap().2;
        assert_eq!(entered.generation(), moved.generation(), "{entered:?}");
    }

    /// One claim while the token lives (node 5's silence timer fired early: a clock that broke
    /// the bounds, or one forged claim) on a six-node mesh with two tokens: every beacon
    /// clears the claim each node heard, so copies of the claim still on their way are news
    /// again and are passed on, and the holder answers each copy with a new beacon. The
    /// messages in flight grow by a quarter per time unit without end (180,000 after 40).
    #[test]
    #[ignore = "finding (issue 23, F8): a claim racing a live token's beacons multiplies without end"]
    fn one_early_claim_does_not_start_a_message_storm() {
        let input = reverse_link_network::Input {
            topology: Topology {
                nodes: 184,
                parents: [59, 193, 103, 150, 174],
                chords: 12327,
            },
            tokens: 51,
            forwarding: false,
            ops: vec![
                TokenOp::LinkUp(5),
                TokenOp::Deliver(100),
                TokenOp::Deliver(157),
            ],
            faults: vec![TimedFault {
                before: 1,
                fault: TokenFault::Fire(183),
            }],
            selectors: Vec::new(),
            recovering: Recovering::AtWill,
            majority: false,
        };
        let mut net = reverse_link_network::play_schedule(&input);
        assert_eq!(net.failures.fired, 1);
        let mut most = 0;
        for _ in 0..40 {
            net.run_for(1).unwrap();
            most = most.max(net.channels.total());
        }
        assert!(most < 500, "{most} messages in flight");
    }
}
