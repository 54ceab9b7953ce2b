//! The prioritized algorithm under the failure model's faults in the test kit's step-by-step
//! driver (`TokenNet` with `harness_recovery`; `docs/ALGORITHMS.md`, F8), as
//! `reverse_link::faults`: crashes, restarts, partitions and merges, tokens lost on breaking
//! links, timers fired at will. The turnover (F7) frees units a crash or a lost RELEASE took.

use manet_mutex_testkit::fuzz::{prioritized_network, Recovering};
use manet_mutex_testkit::strategy::{cases, prioritized_input_with, TokenFaults};
use manet_mutex_testkit::Failures;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Every clock on time: rule (a), rule (b) per connected part (units), no suspect
    /// anomaly, every live requester served, one token per part once quiet.
    #[test]
    fn crashes_partitions_and_breaks_keep_the_rules_and_recover(
        input in prioritized_input_with(TokenFaults::CRASHES),
    ) {
        prop_assert_eq!(input.recovering, Recovering::Timely);
        prioritized_network::run(&input);
    }

    /// Everything at once, timers fired at will among it: rule (a) and each node's own
    /// invariants after every step, then the drain.
    #[test]
    fn timers_at_will_and_every_fault_keep_rule_a_and_recover(
        input in prioritized_input_with(TokenFaults::RECOVERY),
    ) {
        prop_assert_eq!(input.recovering, Recovering::AtWill);
        prioritized_network::run(&input);
    }
}

/// What the failure profiles exercise (a fixed seed; printed with `--nocapture`).
#[test]
fn the_failure_profiles_exercise_every_fault() {
    let mut total = Failures::default();
    for profile in [TokenFaults::CRASHES, TokenFaults::RECOVERY] {
        total += crate::exercise(64, prioritized_input_with(profile), |input| {
            let mut net = prioritized_network::play_schedule(input);
            let _ = net.settle(0);
            net.failures
        });
    }
    println!("prioritized failure profiles: {total:?}");
    let f = total;
    assert!(
        f.crashes > 0 && f.restarts > 0 && f.partitions > 0 && f.merges > 0,
        "{f:?}"
    );
    assert!(
        f.breaks > 0 && f.fired > 0 && f.lost > 0 && f.regenerated > 0,
        "{f:?}"
    );
    assert!(
        f.destroyed > 0 && f.turnovers > 0 && f.lease_ends > 0,
        "{f:?}"
    );
}

mod findings {
    //! What these harnesses found in the prioritized algorithm's recovery (issue 23;
    //! `docs/ALGORITHMS.md`, F8); see `reverse_link::faults::findings`. Each failed before its
    //! fix (F6, F8, F10).

    use manet_mutex::prioritized::{invariants, Node, Policy, Settings};
    use manet_mutex::{CsRequest, NodeId, Report, Status};
    use manet_mutex_sim::{Graph, Params};
    use manet_mutex_testkit::{harness_recovery, TokenNet};

    fn n(i: u32) -> NodeId {
        NodeId(i)
    }

    /// The holder (idle) is cut off from nodes 2 and 3 by a partition; they make the token
    /// again and, after the merge, their beacons destroy its token. It kept `next` pointing
    /// at itself without the token, which its own invariants refuse (`next-pointer`), and the
    /// fuzz bodies saw requests queued at such a node stranded, as in KRL. Now it forgets
    /// `next` and routes its queue on (F6). Every timer on time.
    #[test]
    fn a_holder_whose_token_is_destroyed_no_longer_points_at_itself() {
        let edges: Vec<_> = [(0, 1), (1, 2), (2, 3)]
            .iter()
            .map(|&(a, b)| (n(a), n(b)))
            .collect();
        let settings = Settings::new(1, Policy::Equal).with_recovery(harness_recovery(4));
        let graph = Graph::from_edges(4, &edges);
        let mut net = TokenNet::<Node>::new(graph, &Params::new(settings, vec![n(0)])).unwrap();
        net.request(n(0), CsRequest::ONE);
        net.release(n(0));
        net.partition(&[n(2), n(3)]);
        let r = harness_recovery(4);
        net.run_for(r.silence() + r.claim_wait() + 10).unwrap();
        net.merge();
        net.run_for(20).unwrap();
        let holder = net.node(n(0));
        assert!(
            !holder.holds_token(),
            "the merge destroyed the holder's token"
        );
        assert_eq!(invariants::check_node(holder, 1), Ok(()));
    }

    /// The prioritized side of `reverse_link::faults::findings::
    /// a_restarted_node_makes_no_generation_twice`: node 2, cut off, makes generation (1, 2),
    /// enters with it and crashes; restarted, it is served after the merge by node 0's token
    /// of generation 0, which the resource refuses for ever after (it admitted (1, 2)). The
    /// refusal (`Event::Refused`, fed back by the driver) moves the token above (1, 2) once
    /// every unit is back (F10): node 2's own unit is back when it leaves, and the token moves
    /// at its next beacon; the next entries are admitted.
    #[test]
    fn a_refused_generation_moves_above_the_one_the_resource_admitted() {
        let edges = [(n(0), n(1)), (n(1), n(2))];
        let r = harness_recovery(3);
        let settings = Settings::new(2, Policy::Equal).with_recovery(r);
        let graph = Graph::from_edges(3, &edges);
        let mut net = TokenNet::<Node>::new(graph, &Params::new(settings, vec![n(0)])).unwrap();
        net.partition(&[n(2)]);
        net.run_for(r.silence() + r.claim_wait() + 5).unwrap();
        net.request(n(2), CsRequest::ONE);
        net.run_for(1).unwrap();
        assert_eq!(net.status(n(2)), Status::Critical);
        net.crash(n(2));
        net.restart_forgetting(n(2));
        net.request(n(2), CsRequest::ONE);
        net.merge();
        net.run_for(3 * r.silence()).unwrap();
        assert_eq!(net.status(n(2)), Status::Critical);
        assert_eq!(
            net.failures.refused, 1,
            "generation 0 is refused after (1, 2)"
        );
        let made = |net: &TokenNet<Node>| {
            net.reports
                .iter()
                .filter(|(_, r)| matches!(r, Report::TokenRenumbered { .. }))
                .count()
        };
        assert_eq!(made(&net), 0, "the unit node 2 holds is not back yet");
        net.release(n(2));
        net.run_for(r.beacon_every + 5).unwrap();
        assert_eq!(made(&net), 1, "{:?}", net.reports);
        for node in [n(2), n(0), n(1)] {
            net.request(node, CsRequest::ONE);
            net.run_for(3 * r.diameter as u64 * r.hop_bound + 5)
                .unwrap();
            assert_eq!(net.status(node), Status::Critical, "{node:?}");
            net.release(node);
        }
        assert_eq!(net.failures.refused, 1, "every later entry is admitted");
    }

    /// Node 2 enters with one of k = 2 units, node 1 then gets the token and enters with the
    /// other, releases it and keeps the token (t = 1), whose turnover timer runs out with
    /// nobody waiting. Node 2 crashes in the critical section: its unit never comes back.
    /// When node 1 then asks for both units it waits for ever: the turnover (F7) is armed only
    /// when the token arrives, is made again or grants, never when a request at the holder
    /// waits on units that are not back. Every timer on time.
    #[test]
    fn a_holder_that_asks_for_units_a_crashed_node_took_gets_them_back() {
        let edges = [(n(0), n(1)), (n(1), n(2))];
        let settings = Settings::new(2, Policy::MaxConcurrency).with_recovery(harness_recovery(3));
        let graph = Graph::from_edges(3, &edges);
        let mut net = TokenNet::<Node>::new(graph, &Params::new(settings, vec![n(0)])).unwrap();
        let one = CsRequest {
            resources: 1,
            priority: 0,
        };
        net.request(n(2), one);
        net.run_for(5).unwrap();
        net.request(n(1), one);
        net.run_for(5).unwrap();
        assert_eq!(net.status(n(1)), Status::Critical);
        net.release(n(1));
        net.run_for(20).unwrap();
        assert_eq!(
            net.node(n(1)).available(),
            Some(1),
            "node 2 holds the other unit"
        );
        net.crash(n(2));
        net.request(
            n(1),
            CsRequest {
                resources: 2,
                priority: 0,
            },
        );
        net.run_for(10 * harness_recovery(3).silence()).unwrap();
        assert_eq!(net.status(n(1)), Status::Critical, "node 1 waits for ever");
    }
}
