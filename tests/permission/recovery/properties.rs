//! Random schedules with hosts failing (C1–C8): crash-stop, crash-restart under a new
//! incarnation, partitions and merges, with loss, duplicates and timers firing at any time.
//!
//! The test kit's `PermNet` has no clock, so it cannot model the timing that (b) needs for
//! exclusion by timeout: it fires timers at any time, which is a wrong suspicion at will. So:
//! - with a **perfect detector** (the driver suspects exactly the crashed hosts, whenever it
//!   likes, and the hosts' own timeouts do not exclude), (b) is checked after every step: at
//!   most one live host inside, and look-ahead's pairwise consistency among the live hosts;
//!   the fence rule (a) as F1 when at most one host crashed (every entry above every earlier
//!   one: C6), and liveness after the last fault (every live requester enters in the drain).
//!   Every anomaly is noise (no field is corrupted);
//! - with **exclusion by the hosts' own timeouts**, each host's own invariants after every step
//!   and liveness after the drain; (b) is the timed model's (`timed.rs`).

use manet_mutex::{look_ahead, ricart_agrawala};
use manet_mutex_testkit::strategy::{cases, permission_schedule, PermissionFaults};
use manet_mutex_testkit::{run_permission_schedule, PermNet, PermissionOp};
use proptest::prelude::*;

use super::common::{Algo, Knobs};
use crate::fixtures::only_noise;

/// Crash-stop, crash-restart, partitions, a lazy perfect detector, loss, duplicates, timers.
const CRASHES: PermissionFaults = PermissionFaults::CRASHES;

/// All of the above and corruption and look-ahead's modes.
const EVERYTHING: PermissionFaults = PermissionFaults {
    detect: 2,
    ..PermissionFaults::ALL
};

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        prop::option::of(1u64..200),
        prop::option::of(1u32..5),
        any::<bool>(),
    )
        .prop_map(|(lease, exclusion, majority)| Knobs {
            lease,
            exclusion,
            majority,
        })
}

/// A perfect-detector run: `hosts` hosts, no exclusion by timeout.
fn perfect<A: Algo>(n: u32, seed: u64, knobs: Knobs, ops: &[PermissionOp]) -> PermNet<A> {
    let knobs = Knobs {
        exclusion: None,
        ..knobs
    };
    let net = PermNet::with_nodes(A::seeded(n, 10, knobs, seed)).with_detector();
    assert!(net.mutual_exclusion);
    run_permission_schedule(net, ops)
}

/// A run excluding by the hosts' own timeouts.
fn timeouts<A: Algo>(n: u32, seed: u64, knobs: Knobs, ops: &[PermissionOp]) -> PermNet<A> {
    let knobs = Knobs {
        exclusion: Some(knobs.exclusion.unwrap_or(2)),
        ..knobs
    };
    let net = PermNet::with_nodes(A::seeded(n, 10, knobs, seed));
    assert!(!net.mutual_exclusion);
    run_permission_schedule(net, ops)
}

fn fences_hold<A: Algo>(net: &PermNet<A>) -> Result<(), TestCaseError> {
    prop_assert!(
        net.refused.is_empty() || net.crashes > 1,
        "{:?}",
        net.refused
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn ricart_agrawala_with_a_perfect_detector_keeps_one_holder_and_serves_everyone(
        n in 2u32..6, seed in any::<u64>(), knobs in knobs(),
        ops in permission_schedule(0..200, CRASHES),
    ) {
        let net = perfect::<ricart_agrawala::Node>(n, seed, knobs, &ops);
        fences_hold(&net)?;
        only_noise(&net);
    }

    #[test]
    fn look_ahead_with_a_perfect_detector_keeps_one_holder_and_serves_everyone(
        n in 2u32..6, seed in any::<u64>(), knobs in knobs(),
        ops in permission_schedule(0..200, CRASHES),
    ) {
        let net = perfect::<look_ahead::Node>(n, seed, knobs, &ops);
        fences_hold(&net)?;
        only_noise(&net);
    }

    #[test]
    fn both_with_a_perfect_detector_survive_corruption_and_modes_too(
        n in 2u32..6, seed in any::<u64>(), knobs in knobs(),
        ops in permission_schedule(0..200, EVERYTHING),
    ) {
        fences_hold(&perfect::<ricart_agrawala::Node>(n, seed, knobs, &ops))?;
        fences_hold(&perfect::<look_ahead::Node>(n, seed, knobs, &ops))?;
    }

    #[test]
    fn both_excluding_by_their_own_timeouts_stay_consistent_and_serve_everyone(
        n in 2u32..6, seed in any::<u64>(), knobs in knobs(),
        ops in permission_schedule(0..200, CRASHES),
    ) {
        timeouts::<ricart_agrawala::Node>(n, seed, knobs, &ops);
        timeouts::<look_ahead::Node>(n, seed, knobs, &ops);
    }
}

/// The schedules do what they say: over a fixed seed, hosts crash, restart, partitions form,
/// detectors exclude and readmit, and leases end (printed with `--nocapture`).
#[test]
fn the_crash_schedules_crash_restart_partition_exclude_and_end_leases() {
    use manet_mutex::Report;
    use proptest::test_runner::{Config, TestRng, TestRunner};
    use std::cell::RefCell;
    let config = Config {
        failure_persistence: None,
        ..Config::with_cases(64)
    };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let seen = RefCell::new([0usize; 6]);
    let strategy = (2u32..6, any::<u64>(), permission_schedule(0..200, CRASHES));
    runner
        .run(&strategy, |(n, seed, ops)| {
            let knobs = Knobs::default().lease(50);
            let net = perfect::<look_ahead::Node>(n, seed, knobs, &ops);
            let mut s = seen.borrow_mut();
            s[0] += net.crashes;
            s[1] += ops
                .iter()
                .filter(|o| matches!(o, PermissionOp::Restart(_)))
                .count();
            s[2] += ops
                .iter()
                .filter(|o| matches!(o, PermissionOp::Partition(_)))
                .count();
            for (_, r) in &net.reports {
                match r {
                    Report::PeerExcluded(_) => s[3] += 1,
                    Report::PeerReadmitted(_) => s[4] += 1,
                    _ => {}
                }
            }
            s[5] += net.lease_ends.len();
            Ok(())
        })
        .unwrap();
    let s = seen.into_inner();
    println!("crashes, restarts, partitions, exclusions, readmissions, lease ends: {s:?}");
    assert!(s.iter().all(|&k| k > 0), "{s:?}");
}

/// Found by the perfect-detector property test, kept as it shrank (C7): in majority mode a
/// DISCONNECT excludes its sender; a REPLY it had sent before leaving, delivered late, then
/// readmitted it, and host 2 waited for a host that was away. A DISCONNECT now marks its
/// sender absent too, and only a message of a later epoch readmits it.
#[test]
fn regression_a_late_reply_of_a_host_that_left_does_not_readmit_it_in_majority_mode() {
    use manet_mutex_testkit::PermissionOp::*;
    let knobs = Knobs::default().majority();
    let ops = [
        Request(19),
        Merge,
        Request(38),
        Merge,
        Deliver(238),
        Mode(182, 59),
        Request(6),
        Mode(93, 38),
    ];
    perfect::<look_ahead::Node>(4, 0, knobs, &ops);
}

/// Found by the perfect-detector property test (C2): host 3 disconnected, crashed and
/// restarted; host 0's detector trusted it again, and host 0 asked it while still counting it
/// as absent (`absent-not-asked`). Readmission now clears the absent mark.
#[test]
fn regression_a_trusted_host_that_had_left_is_no_longer_absent() {
    use manet_mutex_testkit::PermissionOp::*;
    let ops = [
        Request(0),
        Mode(218, 86),
        Request(0),
        Crash(11),
        Duplicate(0),
        Request(13),
        Deliver(0),
        Request(0),
        Request(0),
        Request(0),
        Crash(18),
        Detect(105),
        Restart(78),
        Request(46),
    ];
    perfect::<look_ahead::Node>(5, 248208379727775956, Knobs::default(), &ops);
}
