//! The `reverse_link` fuzz targets' bodies as ordinary tests: seeded random inputs plus every
//! committed reproducer, on stable and without cargo-fuzz (see `docs/verification.md`).

use manet_mutex_testkit::corrupt::Counts;

/// Seeded inputs and every committed reproducer (read with today's corruptions: a third of
/// the fuzz inputs' corruptions are kind changes or frame flips); the corruptions they made
/// are counted, and kind changes and flips must be among them.
#[test]
fn reverse_link_network_keeps_every_invariant() {
    let done = std::cell::RefCell::new(Counts::default());
    let ran = crate::seeded::run(
        "reverse_link_network",
        crate::seeded::cases(10_000),
        4096,
        |input| {
            *done.borrow_mut() +=
                manet_mutex_testkit::fuzz::reverse_link_network::play(input).corruptions
        },
    );
    let done = done.into_inner();
    println!("reverse_link_network: {ran} inputs, corruptions {done:?}");
    assert!(
        done.fields > 0 && done.kinds > 0 && done.flips > 0,
        "{done:?}"
    );
}

/// The fuzz inputs change kinds and flip frame bits: the schedules of 1,000 seeded inputs
/// (safety after every step, no drain: `play_schedule`), their corruptions counted.
#[test]
fn reverse_link_network_inputs_change_kinds_and_flip_frame_bits() {
    let done = std::cell::RefCell::new(Counts::default());
    crate::seeded::seeds("reverse_link_network", 1_000, 4096, &|input| {
        *done.borrow_mut() +=
            manet_mutex_testkit::fuzz::reverse_link_network::play_schedule(input).corruptions
    });
    let done = done.into_inner();
    println!("reverse_link_network: 1000 schedules, corruptions {done:?}");
    assert!(
        done.fields > 0 && done.kinds > 0 && done.flips > 0,
        "{done:?}"
    );
}

/// The committed reproducers as they were recorded, before corruptions could change a kind or
/// flip frame bits: every corruption a field corruption (`run_as_recorded`).
#[test]
fn reverse_link_network_reproducers_replay_as_recorded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/reverse_link_network");
    let ran = crate::seeded::replay(
        &dir,
        &manet_mutex_testkit::fuzz::reverse_link_network::run_as_recorded,
    );
    assert!(ran > 0);
}

/// The reproducers recorded before the inputs carried faults, decoded as they were then.
#[test]
fn reverse_link_network_reproducers_from_before_faults_still_pass() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/reverse_link_network/before-faults");
    let ran = crate::seeded::replay(
        &dir,
        &manet_mutex_testkit::fuzz::reverse_link_network::run_without_faults,
    );
    assert_eq!(ran, 2);
}

#[test]
fn reverse_link_node_survives_arbitrary_events() {
    let ran = crate::seeded::run(
        "reverse_link_node",
        crate::seeded::cases(20_000),
        4096,
        manet_mutex_testkit::fuzz::reverse_link_node::run,
    );
    println!("reverse_link_node: {ran} inputs");
}

/// Found by `reverse_link_network` (seed 70, kept in `fuzz/regressions/…/before-faults/`; V2 in
/// `docs/ALGORITHMS.md`). Node 1 asks the holder, node 0, which is in the critical section and
/// queues it. Node 1's only other link is still forming when the link to node 0 fails: node 0
/// drops node 1 from its queue, and node 1, with nobody in N, cannot forward its request. When
/// the link to node 0 forms again, node 1's `next` is once more a lower member of N, so it
/// believed its request was still queued there and waited forever.
#[test]
fn regression_request_is_resent_when_the_link_to_next_fails_and_reforms() {
    use manet_mutex::reverse_link::{Node, Settings};
    use manet_mutex::{CsRequest, NodeId};
    use manet_mutex_sim::{Graph, Params};

    let (n0, n1, n2) = (NodeId(0), NodeId(1), NodeId(2));
    let graph = Graph::from_edges(3, &[(n0, n1), (n0, n2)]);
    let params = Params::first_nodes(Settings::new(1), 1);
    let mut net = manet_mutex_testkit::TokenNet::<Node>::new(graph, &params).unwrap();
    net.request(n0, CsRequest::ONE);
    net.request(n1, CsRequest::ONE);
    net.deliver(n1, n0);
    net.form(n1, n2);
    net.fail(n0, n1);
    net.form(n0, n1);
    net.check_safety().unwrap();
    net.drain(64).unwrap();
}

/// Found by the `reverse_link_network` fuzz target (kept in `fuzz/regressions/…/before-faults/`; V3 in
/// `docs/ALGORITHMS.md`): KRL on six nodes with five tokens; after a series of link changes a
/// group of token holders whose neighbours all hold tokens keeps lowering below one another
/// (each LinkInfo makes the receiving holder see no higher neighbour), so the network never
/// goes quiet.
#[test]
fn regression_holders_surrounded_by_holders_stop_lowering() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/reverse_link_network/before-faults/holders-lower-below-each-other-forever");
    let bytes = std::fs::read(&file).unwrap();
    let input = arbitrary::Unstructured::new(&bytes);
    manet_mutex_testkit::fuzz::reverse_link_network::run_without_faults(
        &arbitrary::Arbitrary::arbitrary_take_rest(input).unwrap(),
    );
}

/// Issue 23: the byte after an input's schedule selects recovery (`Recovering`), and then
/// its link faults stand for the failure model's faults too. Of 1,000 seeded inputs, some run
/// with every timer on time and some with timers fired at will, and their schedules crash,
/// restart, partition, merge, break links with tokens on them and fire timers (counted, no
/// drain: `play_schedule`).
#[test]
fn reverse_link_network_inputs_select_recovery_and_failures() {
    use manet_mutex_testkit::fuzz::Recovering;
    let done = std::cell::RefCell::new((
        std::collections::BTreeMap::<String, u32>::new(),
        manet_mutex_testkit::Failures::default(),
    ));
    crate::seeded::seeds(
        "reverse_link_network",
        1_000,
        4096,
        &|input: &manet_mutex_testkit::fuzz::reverse_link_network::Input| {
            let mut done = done.borrow_mut();
            *done.0.entry(format!("{:?}", input.recovering)).or_default() += 1;
            done.1 +=
                manet_mutex_testkit::fuzz::reverse_link_network::play_schedule(input).failures;
        },
    );
    let (modes, f) = done.into_inner();
    println!("reverse_link_network: 1000 schedules, {modes:?}, {f:?}");
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
/// select recovery today (`reverse_link_network_keeps_every_invariant` runs them so), and without
/// recovery they run exactly as they were recorded (`run_without_recovery`).
#[test]
fn reverse_link_network_reproducers_replay_without_recovery() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/reverse_link_network");
    let ran = crate::seeded::replay(
        &dir,
        &manet_mutex_testkit::fuzz::reverse_link_network::run_without_recovery,
    );
    assert!(ran > 0);
}
