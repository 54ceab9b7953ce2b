//! The `prioritized` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

#[test]
fn prioritized_network_keeps_every_invariant() {
    let ran = crate::seeded::run(
        "prioritized_network",
        crate::seeded::cases(10_000),
        4096,
        manet_mutex::testkit::fuzz::prioritized_network::run,
    );
    println!("prioritized_network: {ran} inputs");
}

/// The reproducers recorded before the inputs carried faults, decoded as they were then.
#[test]
fn prioritized_network_reproducers_from_before_faults_still_pass() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/prioritized_network/before-faults");
    let ran = crate::seeded::replay(
        &dir,
        &manet_mutex::testkit::fuzz::prioritized_network::run_without_faults,
    );
    assert_eq!(ran, 1);
}

#[test]
fn prioritized_node_survives_arbitrary_events() {
    let ran = crate::seeded::run(
        "prioritized_node",
        crate::seeded::cases(20_000),
        4096,
        manet_mutex::testkit::fuzz::prioritized_node::run,
    );
    println!("prioritized_node: {ran} inputs");
}
