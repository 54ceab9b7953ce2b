//! The `ricart_agrawala` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

#[path = "harness/corrupt.rs"]
mod corrupt;
#[path = "harness/input.rs"]
mod input;
#[path = "harness/node_input.rs"]
mod node_input;
#[path = "harness/perm_input.rs"]
mod perm_input;
#[path = "harness/perm_net.rs"]
mod perm_net;
#[path = "harness/perm_network.rs"]
mod perm_network;
#[path = "harness/ricart_agrawala_node.rs"]
mod ricart_agrawala_node;
#[path = "harness/seeded.rs"]
mod seeded;

use manet_mutex::ricart_agrawala::Node;

#[test]
fn ricart_agrawala_network_keeps_every_invariant() {
    let ran = seeded::run(
        "ricart_agrawala_network",
        seeded::cases(10_000),
        4096,
        perm_network::run::<Node>,
    );
    println!("ricart_agrawala_network: {ran} inputs");
}

#[test]
fn ricart_agrawala_node_survives_arbitrary_events() {
    let ran = seeded::run(
        "ricart_agrawala_node",
        seeded::cases(20_000),
        4096,
        ricart_agrawala_node::run,
    );
    println!("ricart_agrawala_node: {ran} inputs");
}
