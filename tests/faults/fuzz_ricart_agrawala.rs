//! The `ricart_agrawala` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

use manet_mutex::ricart_agrawala::Node;

#[test]
fn ricart_agrawala_network_keeps_every_invariant() {
    let ran = crate::seeded::run(
        "ricart_agrawala_network",
        crate::seeded::cases(10_000),
        4096,
        manet_mutex::testkit::fuzz::permission_network::run::<Node>,
    );
    println!("ricart_agrawala_network: {ran} inputs");
}

#[test]
fn ricart_agrawala_node_survives_arbitrary_events() {
    let ran = crate::seeded::run(
        "ricart_agrawala_node",
        crate::seeded::cases(20_000),
        4096,
        manet_mutex::testkit::fuzz::ricart_agrawala_node::run,
    );
    println!("ricart_agrawala_node: {ran} inputs");
}
