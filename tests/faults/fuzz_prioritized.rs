//! The `prioritized` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

use manet_mutex_testkit::corrupt::Counts;

/// Seeded inputs and every committed reproducer (read with today's corruptions: a third of
/// the fuzz inputs' corruptions are kind changes or frame flips); the corruptions they made
/// are counted, and kind changes and flips must be among them.
#[test]
fn prioritized_network_keeps_every_invariant() {
    let done = std::cell::RefCell::new(Counts::default());
    let ran = crate::seeded::run(
        "prioritized_network",
        crate::seeded::cases(10_000),
        4096,
        |input: &manet_mutex_testkit::fuzz::prioritized_network::Input| {
            // Without majority mode: `prioritized_network_in_majority_mode_keeps_every_invariant`.
            let input = manet_mutex_testkit::fuzz::prioritized_network::Input {
                majority: false,
                ..input.clone()
            };
            *done.borrow_mut() +=
                manet_mutex_testkit::fuzz::prioritized_network::play(&input).corruptions
        },
    );
    let done = done.into_inner();
    println!("prioritized_network: {ran} inputs, corruptions {done:?}");
    assert!(
        done.fields > 0 && done.kinds > 0 && done.flips > 0,
        "{done:?}"
    );
}

/// The seeded inputs as decoded, majority mode where the byte after their recovery byte says
/// so (issue 34). Seed 699 failed its drain before F15 (the turnover livelock the models found,
/// `tests/models/prioritized.rs`, `majority_line_of_three_short_leases`: `harness_recovery`'s
/// rebuild timer, a lease bound, is shorter than its claim wait); it passes since.
#[test]
fn prioritized_network_in_majority_mode_keeps_every_invariant() {
    let ran = crate::seeded::run(
        "prioritized_network",
        crate::seeded::cases(10_000),
        4096,
        |input: &manet_mutex_testkit::fuzz::prioritized_network::Input| {
            manet_mutex_testkit::fuzz::prioritized_network::play(input);
        },
    );
    println!("prioritized_network: {ran} inputs");
}

/// The fuzz inputs change kinds and flip frame bits: the schedules of 1,000 seeded inputs
/// (safety after every step, no drain: `play_schedule`), their corruptions counted.
#[test]
fn prioritized_network_inputs_change_kinds_and_flip_frame_bits() {
    let done = std::cell::RefCell::new(Counts::default());
    crate::seeded::seeds("prioritized_network", 1_000, 4096, &|input| {
        *done.borrow_mut() +=
            manet_mutex_testkit::fuzz::prioritized_network::play_schedule(input).corruptions
    });
    let done = done.into_inner();
    println!("prioritized_network: 1000 schedules, corruptions {done:?}");
    assert!(
        done.fields > 0 && done.kinds > 0 && done.flips > 0,
        "{done:?}"
    );
}

/// The committed reproducers as they were recorded, before corruptions could change a kind or
/// flip frame bits: every corruption a field corruption (`run_as_recorded`).
#[test]
fn prioritized_network_reproducers_replay_as_recorded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/prioritized_network");
    let ran = crate::seeded::replay(
        &dir,
        &manet_mutex_testkit::fuzz::prioritized_network::run_as_recorded,
    );
    assert!(ran > 0);
}

/// The reproducers recorded before the inputs carried faults, decoded as they were then.
#[test]
fn prioritized_network_reproducers_from_before_faults_still_pass() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/prioritized_network/before-faults");
    let ran = crate::seeded::replay(
        &dir,
        &manet_mutex_testkit::fuzz::prioritized_network::run_without_faults,
    );
    assert_eq!(ran, 1);
}

#[test]
fn prioritized_node_survives_arbitrary_events() {
    let ran = crate::seeded::run(
        "prioritized_node",
        crate::seeded::cases(20_000),
        4096,
        manet_mutex_testkit::fuzz::prioritized_node::run,
    );
    println!("prioritized_node: {ran} inputs");
}

/// Issue 23: the byte after an input's schedule selects recovery (`Recovering`), and then
/// its link faults stand for the failure model's faults too. Of 1,000 seeded inputs, some run
/// with every timer on time and some with timers fired at will, and their schedules crash,
/// restart, partition, merge, break links with tokens on them and fire timers (counted, no
/// drain: `play_schedule`).
#[test]
fn prioritized_network_inputs_select_recovery_and_failures() {
    use manet_mutex_testkit::fuzz::Recovering;
    let done = std::cell::RefCell::new((
        std::collections::BTreeMap::<String, u32>::new(),
        manet_mutex_testkit::Failures::default(),
    ));
    crate::seeded::seeds(
        "prioritized_network",
        1_000,
        4096,
        &|input: &manet_mutex_testkit::fuzz::prioritized_network::Input| {
            let mut done = done.borrow_mut();
            *done.0.entry(format!("{:?}", input.recovering)).or_default() += 1;
            done.1 += manet_mutex_testkit::fuzz::prioritized_network::play_schedule(input).failures;
        },
    );
    let (modes, f) = done.into_inner();
    println!("prioritized_network: 1000 schedules, {modes:?}, {f:?}");
    for mode in [Recovering::Off, Recovering::Timely, Recovering::AtWill] {
        assert!(
            modes.get(&format!("{mode:?}")).is_some_and(|&n| n > 100),
            "{modes:?}"
        );
    }
    assert!(
        f.crashes > 0 && f.restarts > 0 && f.partitions > 0 && f.merges > 0,
        "{f:?}"
    );
    assert!(f.breaks > 0 && f.fired > 0 && f.lost > 0, "{f:?}");
}

/// The committed reproducers as recorded before issue 23: their byte after the schedule may
/// select recovery today (`prioritized_network_keeps_every_invariant` runs them so), and without
/// recovery they run exactly as they were recorded (`run_without_recovery`).
#[test]
fn prioritized_network_reproducers_replay_without_recovery() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/prioritized_network");
    let ran = crate::seeded::replay(
        &dir,
        &manet_mutex_testkit::fuzz::prioritized_network::run_without_recovery,
    );
    assert!(ran > 0);
}
