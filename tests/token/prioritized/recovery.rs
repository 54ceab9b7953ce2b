//! Prioritized recovery (`prioritized::Settings::with_recovery`, `docs/ALGORITHMS.md` F7) on
//! the timed driver (`crate::timed`): a lost token made again with all `k` units free, the
//! units of a crashed holder freed by a new generation, partitions and merges.

use manet_mutex::prioritized::{Node, Policy, Settings};
use manet_mutex::token::{RaisePause, Recovery};
use manet_mutex::{CsRequest, Event, Protocol, Status};
use proptest::prelude::*;

use crate::timed::{recovery, ring, Net};

fn prio(k: u32) -> Settings {
    Settings::new(k, Policy::MaxConcurrency).with_recovery(recovery())
}

fn wheel() -> Vec<(u32, u32)> {
    let mut edges = ring(6);
    edges.extend((0..6).map(|i| (i, 6)));
    edges
}

#[test]
fn without_crashes_the_one_token_stays_and_at_most_k_units_are_used() {
    for k in [1, 3] {
        let mut net = Net::<Node>::new(6, &ring(6), &[0], prio(k));
        for round in 0..20 {
            net.serve_all(3_000);
            assert_eq!(net.tokens(), 1, "round {round}, k {k}");
        }
        assert_eq!(net.counts.destroyed, 0);
        assert_eq!(net.counts.refused_old, 0);
    }
}

/// The finding: with k = 3, a host that crashed holding units made the rest stall
/// for ever once requests needed them. Now the token's holder waits out every lease of its
/// generation and starts a new one with all units free.
#[test]
fn the_units_of_a_holder_that_crashed_inside_are_freed_by_a_new_generation() {
    let mut net = Net::<Node>::new(7, &wheel(), &[6], prio(3));
    net.staying.insert(1);
    net.feed(1, Event::Request(CsRequest::resources(2)));
    while net.nodes[1].as_ref().unwrap().status() != Status::Critical {
        net.step();
    }
    // The token moves on to serve another request, then the holder of two units crashes.
    net.feed(3, Event::Request(CsRequest::resources(1)));
    while net.nodes[3].as_ref().unwrap().status() != Status::Critical {
        net.step();
    }
    assert!(!net.nodes[1].as_ref().unwrap().holds_token());
    net.crash(1);
    net.acting.remove(&1);
    assert_eq!(net.tokens(), 1, "the token survived the crash");
    // Everyone else asks for all three units.
    let live: Vec<u32> = net.live().collect();
    for _ in 0..3 {
        for &i in &live {
            if net.nodes[i as usize].as_ref().unwrap().status() == Status::Remainder {
                net.feed(i, Event::Request(CsRequest::resources(3)));
            }
        }
        net.serve_all(10_000);
    }
    assert!(
        net.counts.regenerated >= 1,
        "a new generation freed the units"
    );
    assert_eq!(net.tokens(), 1);
}

#[test]
fn a_token_holder_that_crashes_is_replaced_and_everyone_is_served() {
    let mut net = Net::<Node>::new(7, &wheel(), &[6], prio(2));
    net.feed(6, Event::Request(CsRequest::resources(1)));
    assert_eq!(net.nodes[6].as_ref().unwrap().status(), Status::Critical);
    net.crash(6);
    net.acting.remove(&6);
    for _ in 0..3 {
        net.serve_all(10_000);
    }
    assert_eq!(net.counts.regenerated, 1);
    assert_eq!(net.tokens(), 1);
}

#[test]
fn a_partition_makes_a_token_per_part_and_the_merge_keeps_the_newer() {
    let mut net = Net::<Node>::new(6, &ring(6), &[0], prio(2));
    net.check_b = false;
    net.cut(2, 3);
    net.cut(5, 0);
    net.serve_all(10_000);
    assert_eq!(net.tokens(), 2);
    net.join(2, 3);
    net.join(5, 0);
    net.run(net.now + 3 * recovery().silence());
    assert_eq!(net.tokens(), 1, "the merge left one token");
    assert!(net.counts.destroyed >= 1);
    net.check_b = true;
    net.acting.clear();
    for _ in 0..3 {
        net.serve_all(10_000);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// One host crashes at a random time on a wheel (the rest stay connected): (b) after every
    /// step, one token in the end, every live requester served.
    #[test]
    fn one_crash_keeps_at_most_k_units_in_use_and_everyone_served(
        seed in any::<u64>(),
        k in 1u32..=3,
        victim in 0u32..7,
        after in 0u64..600,
    ) {
        one_crash_keeps_at_most_k_units_in_use_and_everyone_served_case(seed, victim, after, prio(k))?;
    }

    /// The same with raises paced (R15).
    #[test]
    fn paced_one_crash_keeps_at_most_k_units_in_use_and_everyone_served(
        seed in any::<u64>(),
        k in 1u32..=3,
        victim in 0u32..7,
        after in 0u64..600,
    ) {
        one_crash_keeps_at_most_k_units_in_use_and_everyone_served_case(seed, victim, after, paced(prio(k)))?;
    }

    /// Crashes, restarts and breaking links: (a) after every step; after healing, one token per
    /// connected part and every live requester served.
    #[test]
    fn crashes_restarts_and_breaks_keep_the_fences_and_recover(
        seed in any::<u64>(),
        k in 1u32..=3,
        faults in proptest::collection::vec((0u8..3, 0u32..7, 0u64..400), 1..6),
    ) {
        crashes_restarts_and_breaks_keep_the_fences_and_recover_case(seed, faults, prio(k))?;
    }

    /// The same with raises paced (R15).
    #[test]
    fn paced_crashes_restarts_and_breaks_keep_the_fences_and_recover(
        seed in any::<u64>(),
        k in 1u32..=3,
        faults in proptest::collection::vec((0u8..3, 0u32..7, 0u64..400), 1..6),
    ) {
        crashes_restarts_and_breaks_keep_the_fences_and_recover_case(seed, faults, paced(prio(k)))?;
    }
}

/// Majority mode (`Recovery::with_majority`, `docs/ALGORITHMS.md` F9) on the test kit's
/// driver, which checks after every step that no round of the token is made twice.
mod majority {
    use manet_mutex::prioritized::{Node, Policy, Settings};
    use manet_mutex::{CsRequest, NodeId, Report, Status};
    use manet_mutex_sim::{Graph, Params};
    use manet_mutex_testkit::{harness_majority, TokenNet};

    fn n(i: u32) -> NodeId {
        NodeId(i)
    }

    fn prio(nodes: u32) -> TokenNet<Node> {
        let edges: Vec<_> = (0..nodes)
            .flat_map(|a| (a + 1..nodes).map(move |b| (n(a), n(b))))
            .collect();
        let graph = Graph::from_edges(nodes as usize, &edges);
        let settings = Settings::new(2, Policy::MaxConcurrency)
            .with_recovery(harness_majority(nodes as usize));
        TokenNet::new(graph, &Params::new(settings, vec![n(0)])).unwrap()
    }

    fn made(net: &TokenNet<Node>) -> usize {
        net.reports
            .iter()
            .filter(|(_, r)| matches!(r, Report::TokenRegenerated { .. }))
            .count()
    }

    fn long(net: &TokenNet<Node>) -> u64 {
        let r = net.recovery().unwrap();
        4 * (r.silence() + r.claim_wait())
    }

    #[test]
    fn only_the_majority_part_makes_the_token_and_the_merge_serves_everyone() {
        let mut net = prio(5);
        net.partition(&[n(0), n(1)]);
        net.request(n(3), CsRequest::ONE);
        let wait = long(&net);
        net.run_for(wait).unwrap();
        assert_eq!(made(&net), 1);
        assert_eq!(net.status(n(3)), Status::Critical);
        net.release(n(3));
        net.merge();
        net.run_for(wait).unwrap();
        for v in 0..5 {
            net.request(n(v), CsRequest::ONE);
        }
        net.settle(0).unwrap();
        assert!((0..5).all(|v| net.status(n(v)) == Status::Remainder));
    }

    #[test]
    fn an_even_split_without_the_token_makes_nothing() {
        let mut net = prio(4);
        net.partition(&[n(0), n(1)]);
        net.crash(n(0));
        net.request(n(2), CsRequest::ONE);
        let wait = long(&net);
        net.run_for(2 * wait).unwrap();
        assert_eq!(made(&net), 0);
        assert_eq!(net.status(n(2)), Status::Waiting);
        net.merge();
        net.run_for(wait).unwrap();
        assert_eq!(made(&net), 1);
        assert_eq!(net.status(n(2)), Status::Critical);
    }

    /// A holder whose units went with a crashed node turns the token over only with a
    /// majority's promises (F7 in majority mode).
    #[test]
    fn a_turnover_needs_a_majority_too() {
        let mut net = prio(5);
        net.request(n(1), CsRequest::resources(2));
        net.run_for(10).unwrap();
        assert_eq!(net.status(n(1)), Status::Critical);
        net.crash(n(1));
        net.request(n(2), CsRequest::resources(2));
        let wait = long(&net);
        net.run_for(wait).unwrap();
        assert_eq!(
            net.status(n(2)),
            Status::Critical,
            "served after a turnover"
        );
        assert_eq!(made(&net), 1);
    }
}

fn one_crash_keeps_at_most_k_units_in_use_and_everyone_served_case(
    seed: u64,
    victim: u32,
    after: u64,
    settings: Settings,
) -> Result<(), TestCaseError> {
    let mut net = Net::<Node>::new(7, &wheel(), &[6], settings).seed(seed);
    net.want_all();
    net.run(after);
    net.crash(victim);
    for _ in 0..3 {
        net.serve_all(30_000);
    }
    net.run(net.now + 3 * recovery().silence());
    prop_assert_eq!(net.tokens_per_part(), vec![1]);
    Ok(())
}

fn crashes_restarts_and_breaks_keep_the_fences_and_recover_case(
    seed: u64,
    faults: Vec<(u8, u32, u64)>,
    settings: Settings,
) -> Result<(), TestCaseError> {
    let mut edges = ring(7);
    edges.extend([(0, 3), (2, 5)]);
    let mut net = Net::<Node>::new(7, &edges, &[0], settings).seed(seed);
    net.check_b = false;
    net.play_faults(&edges, &faults);
    net.run(net.now + 3 * recovery().silence());
    net.acting.clear();
    net.serve_all(40_000);
    net.run(net.now + 3 * recovery().silence());
    let parts = net.tokens_per_part();
    prop_assert!(parts.iter().all(|&t| t == 1), "tokens per part {parts:?}");
    Ok(())
}

/// `settings` with raises paced from 2 up to 16 time units (R15): messages take 1 to 3.
fn paced(settings: Settings) -> Settings {
    settings.with_raise_pause(RaisePause::new(2, 16))
}

/// Issue 34, break 3 (`docs/ALGORITHMS.md`, F11): k = 1, two nodes. Node 1 enters, the token
/// (t = 0) goes to node 0, which waits; node 1's RELEASE fails its height's check word, so the
/// unit is lost (reported) and node 1 asks again. Each holder's own request is then above
/// capacity, so the token bounces between them; the turnover used to be re-armed at every
/// arrival and never fired (0 entries in 20 silences). Now the watch keeps running while the
/// token comes back with no grant since: node 0 is served within a lease bound and a round
/// trip of the loss (plus a claim wait in majority mode), node 1 after it, and then the token
/// stops moving. Run with the driver's settings and with beacons every 5 time units, so that
/// beacons go out while the token bounces.
#[test]
fn capacity_lost_to_a_corrupted_release_comes_back_while_two_requests_wait() {
    // Majority mode is left out: there the turnover is a claim that needs the token to stay a
    // claim wait, which the bouncing token does not (F11 says where that stands).
    // Beacons every 5 with leases of 100: the token bounces through many beacon windows
    // before the turnover.
    for r in [
        recovery(),
        Recovery::new(5, 30, 3, 8),
        Recovery::new(5, 100, 3, 8),
    ] {
        lost_release_case(r);
    }
}

fn lost_release_case(r: Recovery) {
    let (mut net, lost, entries) = lost_unit(r, 2, &[(0, 1)]);
    let node = |net: &Net<Node>, i: usize| net.nodes[i].clone().unwrap();
    // Bound: node 0's watch began when the token reached it (before the loss; no grant
    // since), its timer lasts `lease_bound` on any clock, and the token is back within a
    // round trip of two hops (at most `hop_bound` each).
    let bound = lease_bound(r) + 2 * r.hop_bound;
    let limit = lost + 20 * r.silence();
    while node(&net, 0).status() != Status::Critical && net.now < limit {
        net.step();
    }
    let served = net.now - lost;
    assert!(
        node(&net, 0).status() == Status::Critical && served <= bound,
        "{r:?}: node 0 not served within {bound} of the loss ({} entries, {} messages by {})",
        net.counts.entries - entries,
        net.counts.sent,
        net.now
    );
    assert_eq!(net.counts.regenerated, 1, "one turnover");
    assert_eq!(node(&net, 0).capacity(), Some(1), "capacity is back");
    // Node 1 enters after node 0 leaves (the driver may let it leave in the same step).
    while net.counts.entries < entries + 2 && net.now < limit {
        net.step();
    }
    assert_eq!(net.counts.entries, entries + 2, "node 1 served too");
    eprintln!(
        "break 3 ({r:?}): node 0 served {served} after the loss (bound {bound}), node 1 at {}",
        net.now - lost
    );
    rests(&mut net, r);
}

/// Break 3 in majority mode (`docs/ALGORITHMS.md`, F15): the turnover is a claim that needs a
/// majority's promises, and it used to be dropped whenever the token left its holder, so the
/// bouncing token was never turned over (0 entries in 20 silences). Now a turnover claim
/// stands while the token is away and is made where the token comes back with no grant
/// since. Two nodes (majority 2 of 2), and three (node 2, a voter beside node 0 that never
/// asks); with the driver's settings and with beacons every 5.
#[test]
fn capacity_lost_to_a_corrupted_release_comes_back_in_majority_mode() {
    for r in [
        recovery(),
        Recovery::new(5, 30, 3, 8),
        Recovery::new(5, 100, 3, 8),
    ] {
        lost_release_majority_case(r.with_majority(2), 2, &[(0, 1)]);
        lost_release_majority_case(r.with_majority(3), 3, &[(0, 1), (0, 2)]);
    }
}

fn lost_release_majority_case(r: Recovery, n: u32, edges: &[(u32, u32)]) {
    let (mut net, lost, entries) = lost_unit(r, n, edges);
    let status = |net: &Net<Node>, i: u32| net.nodes[i as usize].as_ref().unwrap().status();
    // Both stay inside until this test lets them out, so that it sees who entered when.
    net.staying.extend([0, 1]);
    // Bound: the first watch to run out began before the loss, with no grant since; its timer
    // lasts `lease_bound`, the token is back at its node within a round trip and the node
    // claims; the claim wait lasts `claim_wait` on the slowest clock; the token is back within
    // another round trip and is made there; the maker serves at once, itself or the other
    // requester a hop away.
    let ppm = u64::from(r.drift_ppm);
    let claim_wait = (r.claim_wait() * 1_000_000).div_ceil(1_000_000 - ppm);
    let trip = 2 * r.hop_bound;
    let bound = lease_bound(r) + trip + claim_wait + trip + r.hop_bound;
    let limit = lost + 20 * r.silence();
    // One token at every step, held or in flight: a turnover makes the new generation only
    // where the old one is.
    let step = |net: &mut Net<Node>| {
        net.step();
        assert!(net.tokens() <= 1, "{} tokens at {}", net.tokens(), net.now);
    };
    while net.counts.entries == entries && net.now < limit {
        step(&mut net);
    }
    let first = net.now - lost;
    assert!(
        net.counts.entries > entries && first <= bound,
        "{r:?}, {n} nodes: nobody served within {bound} of the loss ({} entries, {} messages \
         by {})",
        net.counts.entries - entries,
        net.counts.sent,
        net.now
    );
    assert_eq!(net.counts.regenerated, 1, "one turnover");
    let x = (0..2)
        .find(|&i| status(&net, i) == Status::Critical)
        .unwrap();
    let y = 1 - x;
    assert_eq!(status(&net, y), Status::Waiting);
    // The other is served within a hop of the first leaving: the token is with one of them.
    let left = net.now;
    net.staying.clear();
    net.acting.remove(&x);
    net.feed(x, Event::Release);
    while status(&net, y) != Status::Critical && net.now < limit {
        step(&mut net);
    }
    let second = net.now - left;
    assert!(
        status(&net, y) == Status::Critical && second <= r.hop_bound,
        "{r:?}, {n} nodes: node {y} not served within {} of node {x} leaving",
        r.hop_bound
    );
    assert_eq!(net.counts.regenerated, 1, "one turnover");
    eprintln!(
        "break 3 majority ({r:?}, {n} nodes): node {x} served {first} after the loss \
         (bound {bound}), node {y} {second} after it left; {} messages",
        net.counts.sent
    );
    rests(&mut net, r);
}

/// `lease_bound` as the node computes it: the longest lease on the slowest clock, measured
/// by the fastest.
fn lease_bound(r: Recovery) -> u64 {
    let ppm = u64::from(r.drift_ppm);
    let slowest = (r.lease * 1_000_000).div_ceil(1_000_000 - ppm);
    (slowest * (1_000_000 + ppm)).div_ceil(1_000_000)
}

/// Issue 34's break 3 up to the loss, on `n` nodes joined by `edges` (node 1's only
/// neighbour is node 0; any other node only watches): k = 1, node 1 enters, the token goes to
/// node 0, which waits; node 1's RELEASE fails its check word at node 0, the unit is lost, and
/// node 1 asks again. The net, the time of the loss and the entries by then.
fn lost_unit(r: Recovery, n: u32, edges: &[(u32, u32)]) -> (Net<Node>, u64, u64) {
    use manet_mutex::prioritized::Message;
    let settings = Settings::new(1, Policy::MaxConcurrency).with_recovery(r);
    let mut net = Net::<Node>::new(n, edges, &[1], settings);
    let node = |net: &Net<Node>, i: usize| net.nodes[i].clone().unwrap();
    net.staying.insert(1);
    net.feed(1, Event::Request(CsRequest::ONE));
    assert_eq!(node(&net, 1).status(), Status::Critical);
    net.feed(0, Event::Request(CsRequest::ONE));
    while !node(&net, 0).holds_token() {
        net.step();
    }
    assert_eq!(
        node(&net, 0).available(),
        Some(0),
        "node 0 waits for the unit"
    );
    // Node 1 leaves; its RELEASE to node 0 has its height's check word corrupted.
    net.staying.remove(&1);
    net.acting.remove(&1);
    net.feed(1, Event::Release);
    let corrupted = net
        .wires
        .get_mut(&(1, 0))
        .unwrap()
        .iter_mut()
        .find_map(|(_, m)| match m {
            Message::Release { height, .. } => {
                height.check ^= 1;
                Some(())
            }
            _ => None,
        });
    assert!(corrupted.is_some(), "node 1's RELEASE is on the wire");
    // Reported twice: the RELEASE's check word, and its height as impossible.
    net.suspects_allowed = 2;
    while node(&net, 0).capacity() != Some(0) {
        net.step();
    }
    assert_eq!(net.suspects_allowed, 0, "the loss was reported");
    let lost = net.now;
    let entries = net.counts.entries;
    net.feed(1, Event::Request(CsRequest::ONE));
    (net, lost, entries)
}

/// After both entries the token rests: over 5 silences only beacons move (one per beacon
/// window, each sent over every link).
fn rests(net: &mut Net<Node>, r: Recovery) {
    net.run(net.now + 50);
    let (from, sent) = (net.now, net.counts.sent);
    let window = 5 * r.silence();
    net.run(from + window);
    let beacons = (window / r.beacon_every + 1) * net.edges.len() as u64;
    assert!(
        net.counts.sent - sent <= beacons,
        "{} messages in {window} with nothing waiting (at most {beacons} beacons)",
        net.counts.sent - sent
    );
    assert_eq!(net.tokens(), 1);
}
