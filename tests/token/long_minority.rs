//! Issue 34, break 2: a long minority must not cost the majority its lost token (majority
//! mode, `docs/ALGORITHMS.md` F9 and F13). Five nodes, the token at 0; {3, 4} are cut off for
//! `P` silences, claiming (and promising) one round after another; the parts merge, the
//! holder crashes, and the four live nodes must make the token again within the bound the
//! settings give, whatever `P` is.

use manet_mutex::token::Recovery;
use manet_mutex::{prioritized, reverse_link};

use crate::timed::{recovery, Algo, Net};

/// What a run took, from the holder's crash: until the token was made again, and until every
/// live requester was served. Only the first is bounded here: serving then waits for the
/// requesters' heights to climb over the minority's, which raised for `P` silences without a
/// token (R15; issue 34's break 4, not this mechanism), so it grows with `P`; the run asserts
/// that it ends (within 100 silences).
#[derive(Debug)]
struct Recovered {
    made: u64,
    served: u64,
}

fn complete(n: u32) -> Vec<(u32, u32)> {
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect()
}

/// The longest real time a local timer of `local` units lasts (a clock `drift_ppm` slow).
fn slowest(r: &Recovery, local: u64) -> u64 {
    let den = 1_000_000 - u64::from(r.drift_ppm);
    (local * 1_000_000).div_ceil(den)
}

/// From the crash until the token is made again: every live node heard the holder's last
/// beacon before the crash, so the first claim starts within a silence, spread by a flood
/// (`D·Δ`) across the part; the claim is refused by the voters that promised rounds in the
/// minority, each naming its round; the claimer goes above it at once (a second claim wait);
/// a split vote in that round costs a third, and the best claimer wins the next (F13).
fn made_bound(r: &Recovery) -> u64 {
    let flood = r.hop_bound * u64::from(r.diameter);
    slowest(r, r.silence() + 3 * r.claim_wait()) + flood
}

/// The two graphs: complete, and the line 0–1–2–3–4, where {3, 4} hear the holder's beacons
/// last, so the majority's claim reaches them before their own silence ends and only their
/// refusals tell it the rounds they promised.
fn graphs() -> [(&'static str, Vec<(u32, u32)>); 2] {
    let line = (0..4).map(|a| (a, a + 1)).collect();
    [("complete", complete(5)), ("line", line)]
}

fn run<A: Algo>(
    settings: A::Settings,
    r: &Recovery,
    edges: &[(u32, u32)],
    silences: u64,
) -> Recovered
where
    A::Message: Clone + std::fmt::Debug,
{
    let mut net = Net::<A>::new(5, edges, &[0], settings);
    net.run(50);
    let minority = |a: u32| a >= 3;
    let cut: Vec<_> = edges
        .iter()
        .copied()
        .filter(|&(a, b)| minority(a) != minority(b))
        .collect();
    for &(a, b) in &cut {
        net.cut(a, b);
    }
    net.run(net.now + silences * r.silence());
    assert_eq!(net.counts.regenerated, 0, "the minority made a token");
    for &(a, b) in &cut {
        net.join(a, b);
    }
    // The merge: 3 and 4 hear the live token's beacons.
    net.run(net.now + r.silence());
    let crashed_at = net.now;
    net.crash(0);
    let give_up = crashed_at + 100 * r.silence();
    while net.counts.regenerated == 0 && net.now < give_up {
        net.step();
    }
    assert_eq!(net.counts.regenerated, 1, "not made again by {}", net.now);
    let made = net.now - crashed_at;
    let served = net.serve_all(give_up - net.now) - crashed_at;
    assert_eq!(net.tokens(), 1);
    Recovered { made, served }
}

fn check<A: Algo>(settings: A::Settings, r: &Recovery, name: &str)
where
    A::Message: Clone + std::fmt::Debug,
{
    let made = made_bound(r);
    let mut runs = Vec::new();
    for (graph, edges) in graphs() {
        for silences in [5, 20, 70] {
            let got = run::<A>(settings, r, &edges, silences);
            eprintln!(
                "{name} {graph} P = {silences}: made after {} ({:.2} silences; bound {made}), \
                 every requester served after {}",
                got.made,
                got.made as f64 / r.silence() as f64,
                got.served
            );
            runs.push((graph, silences, got));
        }
    }
    for (graph, silences, got) in runs {
        assert!(
            got.made <= made,
            "{name} {graph} P = {silences}: {got:?}, bound {made}"
        );
    }
}

#[test]
fn after_a_long_minority_the_lost_token_is_made_again_within_the_bound_krl() {
    let r = recovery().with_majority(5);
    let settings = reverse_link::Settings::new(1).with_recovery(r);
    check::<reverse_link::Node>(settings, &r, "KRL");
}

#[test]
fn after_a_long_minority_the_lost_token_is_made_again_within_the_bound_prioritized() {
    let r = recovery().with_majority(5);
    let settings = prioritized::Settings::new(1, prioritized::Policy::Equal).with_recovery(r);
    check::<prioritized::Node>(settings, &r, "prioritized");
}
