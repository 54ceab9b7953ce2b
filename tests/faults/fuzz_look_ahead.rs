//! The `look_ahead` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

use manet_mutex::look_ahead::Node;
use manet_mutex_testkit::corrupt::Counts;
use manet_mutex_testkit::fuzz::permission_network;

/// Seeded inputs and every committed reproducer (read with today's corruptions: a third of
/// the fuzz inputs' corruptions are kind changes or frame flips); the corruptions they made
/// are counted, and kind changes and flips must be among them.
#[test]
fn look_ahead_network_keeps_every_invariant() {
    let done = std::cell::RefCell::new(Counts::default());
    let ran = crate::seeded::run(
        "look_ahead_network",
        crate::seeded::cases(10_000),
        4096,
        |input: &permission_network::Input| {
            // Without majority mode: `look_ahead_network_in_majority_mode_keeps_every_invariant`.
            let input = permission_network::Input {
                majority: false,
                ..input.clone()
            };
            *done.borrow_mut() += permission_network::play::<Node>(&input).corruptions
        },
    );
    let done = done.into_inner();
    println!("look_ahead_network: {ran} inputs, corruptions {done:?}");
    assert!(
        done.fields > 0 && done.kinds > 0 && done.flips > 0,
        "{done:?}"
    );
}

/// The seeded inputs as decoded, majority mode where their byte after the steps says so
/// (issue 34). Seed 1780 (2 hosts, majority mode) starved host 0 in the drain: host 1's
/// DISCONNECT excluded it, its RECONNECT was lost to a corrupted kind, and an excluded host
/// was never asked, so host 0 never had a majority. Passes since C10 (`docs/ALGORITHMS.md`):
/// in majority mode a host that left is probed while the host waits, and an answer to a
/// number issued after its DISCONNECT was applied readmits it
/// (`in_majority_mode_a_host_whose_reconnect_was_lost_is_probed_and_readmitted`).
#[test]
fn look_ahead_network_in_majority_mode_keeps_every_invariant() {
    let ran = crate::seeded::run(
        "look_ahead_network",
        crate::seeded::cases(10_000),
        4096,
        |input: &permission_network::Input| {
            permission_network::play::<Node>(input);
        },
    );
    println!("look_ahead_network: {ran} inputs");
}

/// The committed reproducers as they were recorded, before corruptions could change a kind or
/// flip frame bits: every corruption a field corruption (`run_as_recorded`).
#[test]
fn look_ahead_network_reproducers_replay_as_recorded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/look_ahead_network");
    let ran = crate::seeded::replay(&dir, &permission_network::run_as_recorded::<Node>);
    assert!(ran > 0);
}

#[test]
fn look_ahead_node_survives_arbitrary_events() {
    let ran = crate::seeded::run(
        "look_ahead_node",
        crate::seeded::cases(20_000),
        4096,
        manet_mutex_testkit::fuzz::look_ahead_node::run,
    );
    println!("look_ahead_node: {ran} inputs");
}
