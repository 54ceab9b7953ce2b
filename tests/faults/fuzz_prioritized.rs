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
        |input| {
            *done.borrow_mut() +=
                manet_mutex_testkit::fuzz::prioritized_network::play(input).corruptions
        },
    );
    let done = done.into_inner();
    println!("prioritized_network: {ran} inputs, corruptions {done:?}");
    assert!(
        done.fields > 0 && done.kinds > 0 && done.flips > 0,
        "{done:?}"
    );
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
