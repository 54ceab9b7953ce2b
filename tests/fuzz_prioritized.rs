//! The `prioritized` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

#[path = "harness/corrupt.rs"]
mod corrupt;
#[path = "harness/height_input.rs"]
mod height_input;
#[path = "harness/input.rs"]
mod input;
#[path = "harness/network_input.rs"]
mod network_input;
#[path = "harness/node_input.rs"]
mod node_input;
#[path = "harness/prioritized_network.rs"]
mod prioritized_network;
#[path = "harness/prioritized_node.rs"]
mod prioritized_node;
#[path = "harness/seeded.rs"]
mod seeded;
#[path = "harness/token_net.rs"]
mod token_net;

#[test]
fn prioritized_network_keeps_every_invariant() {
    let ran = seeded::run(
        "prioritized_network",
        seeded::cases(10_000),
        4096,
        prioritized_network::run,
    );
    println!("prioritized_network: {ran} inputs");
}

/// The reproducers recorded before the inputs carried faults, decoded as they were then.
#[test]
fn prioritized_network_reproducers_from_before_faults_still_pass() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/prioritized_network/before-faults");
    let ran = seeded::replay(&dir, &prioritized_network::run_without_faults);
    assert_eq!(ran, 1);
}

#[test]
fn prioritized_node_survives_arbitrary_events() {
    let ran = seeded::run(
        "prioritized_node",
        seeded::cases(20_000),
        4096,
        prioritized_node::run,
    );
    println!("prioritized_node: {ran} inputs");
}
