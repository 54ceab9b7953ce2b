//! Random loss and delay schedules on a few nodes check the guarantees the module states:
//! no end stays up longer than `M·I + D` after the other stopped hearing it (throughout,
//! chaos included); once every channel is stable (each direction either delivers every
//! hello in order within `D`, or none), the two ends of a working link are up within
//! `(H + 1)·I + 2D` (counted from `D + M·I + 1` after a restart, if later) and stay up,
//! and the two ends of a cut link are down within `2(M·I + D) + 1`.

use manet_mutex::discovery::Settings;
use manet_mutex_testkit::strategy::cases;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::net::{id, Net};

const I: u64 = 100;
/// Chaos is cut in segments this long, each with its own loss rates.
const SEGMENT: u64 = 400;

#[derive(Debug, Clone)]
struct Case {
    n: usize,
    jitter: u64,
    up_after: u32,
    missed: u32,
    /// The longest delay, below `(missed − 1)·I`.
    max_delay: u64,
    seed: u64,
    /// Chaos: loss percentages per segment and directed pair.
    losses: Vec<u8>,
    /// When chaos ends.
    chaos: u64,
    /// After chaos, per directed pair: `None` cut, `Some(d)` every hello after `d`.
    stable: Vec<Option<u64>>,
    /// A node restarted during chaos, and when.
    restart: Option<(usize, u64)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        2usize..=4,
        prop_oneof![Just(0u64), Just(25), Just(50)],
        1u32..=3,
        2u32..=5,
    )
        .prop_flat_map(|(n, jitter, up_after, missed)| {
            let d_max = ((missed as u64 - 1) * I - 1).min(150);
            (
                Just((n, jitter, up_after, missed)),
                0..=d_max,
                any::<u64>(),
                1u64..=12,
                proptest::collection::vec(
                    prop_oneof![Just(0u8), Just(10), Just(30), Just(60), Just(90), Just(100)],
                    n * n * 12,
                ),
                proptest::collection::vec(proptest::option::weighted(0.7, 0u64..=1000), n * n),
                proptest::option::of((0..n, 0u64..=4000)),
            )
        })
        .prop_map(
            |(
                (n, jitter, up_after, missed),
                max_delay,
                seed,
                segments,
                losses,
                stable,
                restart,
            )| {
                let stable = stable
                    .into_iter()
                    .map(|d| d.map(|d| d % (max_delay + 1)))
                    .collect();
                let chaos = segments * SEGMENT;
                Case {
                    n,
                    jitter,
                    up_after,
                    missed,
                    max_delay,
                    seed,
                    losses,
                    chaos,
                    stable,
                    restart: restart.map(|(node, at)| (node, at % chaos)),
                }
            },
        )
}

fn run(case: &Case) -> Result<(), TestCaseError> {
    let Case {
        n,
        max_delay: d,
        chaos,
        ..
    } = *case;
    let settings = Settings::new(I)
        .with_jitter(case.jitter)
        .with_up_after(case.up_after)
        .with_missed_hellos(case.missed)
        .with_seed(case.seed);
    let (h, m) = (u64::from(case.up_after), u64::from(case.missed));
    let mut rng = ChaCha8Rng::seed_from_u64(case.seed);
    let losses = case.losses.clone();
    let stable = case.stable.clone();
    let channel = Box::new(move |now: u64, from: usize, to: usize| {
        let pair = from * n + to;
        if now < chaos {
            let segment = (now / SEGMENT) as usize;
            let loss = losses[segment * n * n + pair];
            if rng.random_range(0..100) < loss {
                return None;
            }
            Some(rng.random_range(0..=d))
        } else {
            stable[pair]
        }
    });
    let mut net = Net::new(n, settings, channel);
    // A restarted peer's hellos may be stale at the other end until its old entry expires,
    // at most `D + M·I + 1` after the restart: the stable period counts from then.
    let stable_from = match case.restart {
        Some((_, at)) => chaos.max(at + d + m * I + 1),
        None => chaos,
    };
    let up_by = stable_from + (h + 1) * I + 2 * d;
    let down_by = chaos + 2 * (m * I + d) + 1;
    let end = down_by.max(up_by) + 3000;
    let mut failure = None;
    let mut check = |net: &Net| {
        if failure.is_some() {
            return;
        }
        let now = net.now;
        for x in 0..n {
            for y in 0..n {
                if x == y {
                    continue;
                }
                // 1: up only where heard.
                if net.up(x, y) && !net.nodes[x].hears(id(y)) {
                    failure = Some(format!("{x} up with {y} without hearing it at {now}"));
                }
                // 2: no end up longer than M·I + D after the other stopped hearing it.
                if let Some(s) = net.not_hearing_since[x][y] {
                    if net.up(y, x) && now > s + m * I + d {
                        failure = Some(format!(
                            "{y} up with {x} at {now}, but {x} has not heard {y} since {s}"
                        ));
                    }
                }
                // 3: after chaos, agreement within the bounds.
                let works = case.stable[x * n + y].is_some() && case.stable[y * n + x].is_some();
                if works && now >= up_by && !(net.up(x, y) && net.up(y, x)) {
                    failure = Some(format!("stable link {x}-{y} not up at both ends at {now}"));
                }
                if !works && now > down_by && (net.up(x, y) || net.up(y, x)) {
                    failure = Some(format!("cut link {x}-{y} still up at {now}"));
                }
            }
        }
    };
    match case.restart {
        Some((node, at)) => {
            net.run_checked(at, &mut check);
            net.restart(node, case.seed ^ 1);
            net.observe();
            net.run_checked(end, &mut check);
        }
        None => net.run_checked(end, &mut check),
    }
    if let Some(f) = failure {
        return Err(TestCaseError::fail(format!(
            "{f}\nevents: {:?}",
            net.events
        )));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]

    #[test]
    fn random_loss_and_delay_keep_the_stated_bounds(case in case()) {
        run(&case)?;
    }
}

/// The property sees both outcomes: links up at both ends after chaos, and cut ones down.
#[test]
fn the_property_exercises_both_outcomes() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut works, mut cut) = (0, 0);
    for _ in 0..64 {
        let case = case().new_tree(&mut runner).unwrap().current();
        run(&case).unwrap();
        for x in 0..case.n {
            for y in 0..x {
                if case.stable[x * case.n + y].is_some() && case.stable[y * case.n + x].is_some() {
                    works += 1;
                } else {
                    cut += 1;
                }
            }
        }
    }
    assert!(works > 20 && cut > 20, "{works} working, {cut} cut");
}
