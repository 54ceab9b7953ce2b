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
