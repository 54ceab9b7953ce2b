//! Majority mode across a partition (C7): five hosts split 3 | 2; only the side with a
//! majority enters; after the merge everyone enters again. Without majority mode both sides
//! enter, which is why (b) needs it across partitions.

use manet_mutex::NodeId;
use manet_mutex_testkit::PermNet;

use super::common::{entries_of, run_rounds, Algo, Knobs};

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod ricart_agrawala {
            $(#[test] fn $name() { super::$name::<manet_mutex::ricart_agrawala::Node>() })*
        }
        mod look_ahead {
            $(#[test] fn $name() { super::$name::<manet_mutex::look_ahead::Node>() })*
        }
    };
}

both!(
    only_the_majority_side_enters_with_timeouts_and_all_after_the_merge,
    only_the_majority_side_enters_with_a_detector_and_all_after_the_merge,
    without_majority_mode_both_sides_enter,
);

const ALL: [u32; 5] = [0, 1, 2, 3, 4];

/// Entries per host.
fn per_host<A: Algo>(net: &PermNet<A>) -> Vec<usize> {
    ALL.iter().map(|&h| entries_of(net, h)).collect()
}

/// Five hosts requesting all the time, split {0, 1, 2} | {3, 4} for `rounds`; `suspect` says
/// whether each side's detector suspects the other side (and trusts it again at the merge).
/// Returns the entries per host during the partition and after the merge.
fn split<A: Algo>(knobs: Knobs, suspect: bool) -> (Vec<usize>, Vec<usize>) {
    // Hand-driven: each host's invariants are checked after every event (the suspicions are
    // wrong, so look-ahead's pairwise consistency no longer holds across the sides: majority
    // mode is what keeps the minority out).
    let mut net = PermNet::with_nodes(A::hosts(5, 10, knobs)).checked();
    net.mutual_exclusion = false;
    let big = [NodeId(0), NodeId(1), NodeId(2)];
    net.partition(&big);
    if suspect {
        for a in ALL {
            for b in ALL {
                if (a < 3) != (b < 3) {
                    net.suspect(NodeId(a), NodeId(b));
                }
            }
        }
    }
    run_rounds(&mut net, &ALL, 3, 300);
    let during = per_host(&net);
    net.merge();
    if suspect {
        for a in ALL {
            for b in ALL {
                if (a < 3) != (b < 3) {
                    net.trust(NodeId(a), NodeId(b));
                }
            }
        }
    }
    run_rounds(&mut net, &ALL, 6, 600);
    let after = per_host(&net);
    (during, after)
}

fn only_the_majority_side_enters_with_timeouts_and_all_after_the_merge<A: Algo>() {
    let (during, after) = split::<A>(Knobs::default().exclusion(3).majority(), false);
    assert_eq!(during, [3, 3, 3, 0, 0], "{}", A::NAME);
    assert_eq!(after, [6, 6, 6, 6, 6], "{}", A::NAME);
}

fn only_the_majority_side_enters_with_a_detector_and_all_after_the_merge<A: Algo>() {
    let (during, after) = split::<A>(Knobs::default().majority(), true);
    assert_eq!(during, [3, 3, 3, 0, 0], "{}", A::NAME);
    assert_eq!(after, [6, 6, 6, 6, 6], "{}", A::NAME);
}

fn without_majority_mode_both_sides_enter<A: Algo>() {
    let (during, _) = split::<A>(Knobs::default().exclusion(3), false);
    assert_eq!(during, [3, 3, 3, 3, 3], "{}", A::NAME);
}
