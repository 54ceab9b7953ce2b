//! The `look_ahead` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

use manet_mutex::look_ahead::Node;

#[test]
fn look_ahead_network_keeps_every_invariant() {
    let ran = crate::seeded::run(
        "look_ahead_network",
        crate::seeded::cases(10_000),
        4096,
        manet_mutex::testkit::fuzz::permission_network::run::<Node>,
    );
    println!("look_ahead_network: {ran} inputs");
}

#[test]
fn look_ahead_node_survives_arbitrary_events() {
    let ran = crate::seeded::run(
        "look_ahead_node",
        crate::seeded::cases(20_000),
        4096,
        manet_mutex::testkit::fuzz::look_ahead_node::run,
    );
    println!("look_ahead_node: {ran} inputs");
}
