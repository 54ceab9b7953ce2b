//! Majority mode (`Recovery::with_majority`, `docs/ALGORITHMS.md` F9, F13) on the timed driver
//! under the fault shapes of issue 34: partitions into random sides that heal after 1 to 30
//! silences (often with a holder inside, whose token the majority side makes again), crashes,
//! and restarts with the kept rounds and promises (`Config::with_promises`), several at once.
//!
//! Checked at every step by the driver: (a) every entry admitted by a fence-checking resource
//! unless its generation is older than the newest admitted (then refused, and told back:
//! F10). Checked per run: once every part is joined and every crashed node restarted, every
//! node is served within 100 silences and the network then holds at most `k` tokens; the
//! worst time from the last heal to every node served is reported against the silence.

use manet_mutex::{prioritized, reverse_link};
use proptest::prelude::*;

use crate::timed::{recovery, Algo, Net};

/// Nodes in every run: a majority is 3.
const N: u32 = 5;

fn complete(n: u32) -> Vec<(u32, u32)> {
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect()
}

/// One fault: the network waits `after` time units, then a partition (`side` a bit mask of
/// the nodes cut off) stands for `silences` silences and heals, or a node crashes, or a
/// crashed node (or two at once) restarts.
#[derive(Debug, Clone)]
enum Fault {
    Partition { side: u32, silences: u64 },
    Crash(u32),
    Restart { first: u32, both: bool },
}

fn fault() -> impl Strategy<Value = (u64, Fault)> {
    let fault = prop_oneof![
        3 => (1u32..(1 << N) - 1, 1u64..30)
            .prop_map(|(side, silences)| Fault::Partition { side, silences }),
        1 => (0..N).prop_map(Fault::Crash),
        1 => (0..N, any::<bool>()).prop_map(|(first, both)| Fault::Restart { first, both }),
    ];
    (0u64..200, fault)
}

/// Plays `faults` on a complete graph of `N` nodes in majority mode; returns the time from
/// the last heal (every part joined, every node live) until every node was served.
fn play<A: Algo>(settings: A::Settings, seed: u64, faults: &[(u64, Fault)]) -> Played
where
    A::Message: Clone + std::fmt::Debug,
{
    let r = recovery();
    let edges = complete(N);
    let mut net = Net::<A>::new(N, &edges, &[0], settings).seed(seed);
    // Two sides of a partition may each have a holder acting: (b) is not promised then.
    net.check_b = false;
    let everyone: Vec<u32> = (0..N).collect();
    for (after, fault) in faults {
        net.want_all();
        net.run(net.now + after);
        match *fault {
            Fault::Partition { side, silences } => {
                let cut: Vec<_> = edges
                    .iter()
                    .copied()
                    .filter(|&(a, b)| (side >> a) & 1 != (side >> b) & 1)
                    .collect();
                for &(a, b) in &cut {
                    net.cut(a, b);
                }
                // Holders inside stay inside across the partition, some past their lease.
                net.want_all();
                net.run(net.now + silences * r.silence());
                for &(a, b) in &cut {
                    net.join(a, b);
                }
            }
            Fault::Crash(node) => {
                if net.live().count() > 3 {
                    net.crash(node);
                }
            }
            Fault::Restart { first, both } => {
                for node in [first, (first + 1) % N]
                    .into_iter()
                    .take(1 + usize::from(both))
                {
                    if net.nodes[node as usize].is_none() {
                        net.restart(node, &everyone);
                    }
                }
            }
        }
    }
    for node in 0..N {
        if net.nodes[node as usize].is_none() {
            net.restart(node, &everyone);
        }
    }
    for &(a, b) in &edges {
        net.join(a, b);
    }
    let healed = net.now;
    let served = net.serve_all(100 * r.silence()) - healed;
    // Quiet for a silence: what is left is one token per id at most.
    net.run(net.now + r.silence());
    assert!(
        net.tokens() <= A::k(settings),
        "{} tokens after the run",
        net.tokens()
    );
    Played {
        served,
        regenerated: net.counts.regenerated,
        refused: net.counts.refused_old,
        destroyed: net.counts.destroyed,
    }
}

/// What a run did.
struct Played {
    served: u64,
    regenerated: u64,
    refused: u64,
    destroyed: u64,
}

/// Counts summed over runs.
#[derive(Default, Debug)]
struct Sum([u64; 4]);

impl std::ops::AddAssign for Sum {
    fn add_assign(&mut self, other: Sum) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

fn check<A: Algo>(settings: A::Settings, name: &str, cases: u32)
where
    A::Message: Clone + std::fmt::Debug,
{
    let silence = recovery().silence();
    let worst = std::cell::Cell::new(0u64);
    let strategy = (any::<u64>(), prop::collection::vec(fault(), 1..8));
    let [partitions, regenerated, refused, destroyed] =
        crate::exercise(cases, strategy, |(seed, faults)| {
            let played = play::<A>(settings, *seed, faults);
            worst.set(worst.get().max(played.served));
            let partitions = faults
                .iter()
                .filter(|(_, f)| matches!(f, Fault::Partition { .. }))
                .count() as u64;
            Sum([
                partitions,
                played.regenerated,
                played.refused,
                played.destroyed,
            ])
        })
        .0;
    eprintln!(
        "{name} majority mode, {cases} runs: {partitions} partitions healed, {regenerated} tokens \
         made again, {destroyed} destroyed, {refused} entries refused (older generation); every \
         node served at most {} after the last heal ({:.2} silences)",
        worst.get(),
        worst.get() as f64 / silence as f64
    );
    // The runs must make tokens again in majority mode, or they test nothing of it.
    assert!(regenerated > 0 && destroyed > 0, "{name}: no regeneration");
}

#[test]
fn majority_mode_keeps_fences_and_serves_everyone_across_healed_partitions_and_restarts_krl() {
    let r = recovery().with_majority(N);
    let settings = reverse_link::Settings::new(1).with_recovery(r);
    check::<reverse_link::Node>(settings, "KRL", 200);
}

#[test]
fn majority_mode_keeps_fences_and_serves_everyone_across_healed_partitions_and_restarts_prioritized(
) {
    let r = recovery().with_majority(N);
    let settings = prioritized::Settings::new(2, prioritized::Policy::Equal).with_recovery(r);
    check::<prioritized::Node>(settings, "prioritized", 200);
}
