//! Property tests of the threat model: the fuzz bodies' networks (`manet_mutex_testkit::fuzz::*_network`)
//! driven by structured, shrinkable schedules instead of raw bytes. Token networks get
//! corruption of any message in flight (a field, its kind, or 1 to 4 bits of its frame, which
//! the link session retransmits) and link events that each end notices at its own time;
//! permission systems get corruption (a field, the kind, or frame bits, which the receiver's
//! codec drops: a loss), loss, duplication, early timeouts and (for look-ahead) mode changes. Safety is checked after every step and liveness after the drain,
//! except where a corruption destroyed what no protocol can recover (each harness names those
//! cases). The weights favour deliveries and faults over requests, unlike uniform fuzz bytes,
//! so long interleavings of faults with traffic are common; a failure shrinks to a short
//! schedule and is kept in `tests/proptest-regressions/adversarial.txt` (proptest keeps every binary's regressions under `tests/proptest-regressions/`, by module path).

use std::cell::RefCell;

use manet_mutex_testkit::corrupt::Counts;
use manet_mutex_testkit::fuzz::{permission_network, prioritized_network, reverse_link_network};
use manet_mutex_testkit::strategy::{
    cases, permission_input, prioritized_input, reverse_link_input,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRng, TestRunner};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn reverse_link_survives_corruption_and_one_sided_link_events(input in reverse_link_input()) {
        reverse_link_network::run(&input);
    }

    #[test]
    fn prioritized_survives_corruption_and_one_sided_link_events(input in prioritized_input()) {
        prioritized_network::run(&input);
    }

    #[test]
    fn look_ahead_survives_corruption_loss_and_mode_changes(input in permission_input()) {
        permission_network::run::<manet_mutex::look_ahead::Node>(&input);
    }

    #[test]
    fn ricart_agrawala_survives_corruption_and_loss(input in permission_input()) {
        permission_network::run::<manet_mutex::ricart_agrawala::Node>(&input);
    }
}

/// `cases` schedules of `strategy` from a fixed seed, each applied by `play` (safety checked
/// after every step; the drains are the property tests' business): what the corruptions did,
/// summed.
fn exercise<T: std::fmt::Debug>(
    cases: u32,
    strategy: impl Strategy<Value = T>,
    play: impl Fn(&T) -> Counts,
) -> Counts {
    let config = Config {
        failure_persistence: None,
        ..Config::with_cases(cases)
    };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let total = RefCell::new(Counts::default());
    runner
        .run(&strategy, |input| {
            *total.borrow_mut() += play(&input);
            Ok(())
        })
        .unwrap();
    total.into_inner()
}

/// What the adversarial schedules exercise (a fixed seed; printed with `--nocapture`): every
/// harness changes kinds and flips frame bits, besides rewriting fields.
#[test]
fn the_adversarial_schedules_change_kinds_and_flip_frame_bits() {
    let n = cases(64);
    let runs = [
        (
            "reverse_link",
            exercise(n, reverse_link_input(), |i| {
                reverse_link_network::play_schedule(i).corruptions
            }),
        ),
        (
            "prioritized",
            exercise(n, prioritized_input(), |i| {
                prioritized_network::play_schedule(i).corruptions
            }),
        ),
        (
            "look_ahead",
            exercise(n, permission_input(), |i| {
                permission_network::play_schedule::<manet_mutex::look_ahead::Node>(i).corruptions
            }),
        ),
        (
            "ricart_agrawala",
            exercise(n, permission_input(), |i| {
                permission_network::play_schedule::<manet_mutex::ricart_agrawala::Node>(i)
                    .corruptions
            }),
        ),
    ];
    for (algorithm, done) in runs {
        println!("{algorithm}: {n} schedules, corruptions {done:?}");
        assert!(done.fields > 0 && done.flips > 0, "{algorithm}: {done:?}");
        // Ricart–Agrawala's messages decode as no other kind.
        if algorithm == "ricart_agrawala" {
            assert_eq!(done.kinds, 0, "{done:?}");
            assert!(done.kindless > 0, "{done:?}");
        } else {
            assert!(done.kinds > 0, "{algorithm}: {done:?}");
        }
    }
}
