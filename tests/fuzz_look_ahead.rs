//! The `look_ahead` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

#[path = "harness/corrupt.rs"]
mod corrupt;
#[path = "harness/input.rs"]
mod input;
#[path = "harness/look_ahead_node.rs"]
mod look_ahead_node;
#[path = "harness/node_input.rs"]
mod node_input;
#[path = "harness/perm_input.rs"]
mod perm_input;
#[path = "harness/perm_net.rs"]
mod perm_net;
#[path = "harness/perm_network.rs"]
mod perm_network;
#[path = "harness/seeded.rs"]
mod seeded;

use manet_mutex::look_ahead::Node;

#[test]
fn look_ahead_network_keeps_every_invariant() {
    let ran = seeded::run(
        "look_ahead_network",
        seeded::cases(10_000),
        4096,
        perm_network::run::<Node>,
    );
    println!("look_ahead_network: {ran} inputs");
}

#[test]
fn look_ahead_node_survives_arbitrary_events() {
    let ran = seeded::run(
        "look_ahead_node",
        seeded::cases(20_000),
        4096,
        look_ahead_node::run,
    );
    println!("look_ahead_node: {ran} inputs");
}
