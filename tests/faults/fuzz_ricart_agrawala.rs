//! The `ricart_agrawala` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

use manet_mutex::ricart_agrawala::Node;
use manet_mutex_testkit::corrupt::Counts;
use manet_mutex_testkit::fuzz::permission_network;

/// Seeded inputs and every committed reproducer (read with today's corruptions: a third of
/// the fuzz inputs' corruptions are kind changes or frame flips); the corruptions they made
/// are counted, and frame flips and kind changes asked must be among them.
#[test]
fn ricart_agrawala_network_keeps_every_invariant() {
    let done = std::cell::RefCell::new(Counts::default());
    let ran = crate::seeded::run(
        "ricart_agrawala_network",
        crate::seeded::cases(10_000),
        4096,
        |input| *done.borrow_mut() += permission_network::play::<Node>(input).corruptions,
    );
    let done = done.into_inner();
    println!("ricart_agrawala_network: {ran} inputs, corruptions {done:?}");
    // A REQUEST and a REPLY share a layout since the REPLY's check word (A7): each kind
    // change makes the other kind, whose word then fails.
    assert!(
        done.fields > 0 && done.flips > 0 && done.kinds > 0,
        "{done:?}"
    );
}

/// The committed reproducers as they were recorded, before corruptions could change a kind or
/// flip frame bits: every corruption a field corruption (`run_as_recorded`).
#[test]
fn ricart_agrawala_network_reproducers_replay_as_recorded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/ricart_agrawala_network");
    let ran = crate::seeded::replay(&dir, &permission_network::run_as_recorded::<Node>);
    assert!(ran > 0);
}

#[test]
fn ricart_agrawala_node_survives_arbitrary_events() {
    let ran = crate::seeded::run(
        "ricart_agrawala_node",
        crate::seeded::cases(20_000),
        4096,
        manet_mutex_testkit::fuzz::ricart_agrawala_node::run,
    );
    println!("ricart_agrawala_node: {ran} inputs");
}
