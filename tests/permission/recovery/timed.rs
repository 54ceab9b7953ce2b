//! (b) with time (C4): a discrete-event model of real time, in which every host's clock runs
//! at its own rate within `1 ± ρ`, every message arrives within `Δ` (none is lost: the bound
//! assumes delivery), timers fire when their host's clock says so, and hosts exclude silent
//! peers by their own timeouts. Holders stay inside for up to three leases (so leases end and
//! live holders are excluded), and hosts crash (holders among them). The property: at no
//! instant are two hosts *acting*, i.e. inside, not crashed, and without a `LeaseExpired` for
//! their entry. It holds whenever the settings pass `Settings::exclusion_safe(Δ, ρ)`; with an
//! exclusion shorter than the bound it fails.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use manet_mutex::{look_ahead, ricart_agrawala, Action, CsRequest, Event, NodeId};
use manet_mutex::{Status, TimerId};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::common::{Algo, Knobs};
use manet_mutex_testkit::strategy::cases;

/// The retransmission timeout, the lease and the delivery bound, in the model's time unit.
const R: u64 = 10_000;
const LEASE: u64 = 50_000;
const DELTA: u64 = 5_000;
/// Clock drift: 1%, in parts per million.
const DRIFT_PPM: u32 = 10_000;
/// How long a run lasts.
const HORIZON: u64 = 3_000_000;

enum Ev<M> {
    Deliver { from: NodeId, to: NodeId, msg: M },
    Timeout { at: NodeId, timer: TimerId },
    Request(NodeId),
    Release { at: NodeId, entry: u64 },
    Crash(NodeId),
}

/// What a run found.
#[derive(Debug, Default)]
struct Outcome {
    entries: usize,
    lease_ends: usize,
    exclusions: usize,
    /// The first instant two hosts acted at once, with the two.
    overlap: Option<(u64, NodeId, NodeId)>,
    /// Whether some host never crashed.
    survivor: bool,
}

struct Sim<A: Algo> {
    nodes: Vec<A>,
    /// Each host's clock rate, in parts per million of real time.
    rate: Vec<u64>,
    crashed: Vec<bool>,
    acting: Vec<bool>,
    /// Entries so far per host (to match a release to its entry).
    entry: Vec<u64>,
    now: u64,
    queue: BinaryHeap<Reverse<(u64, usize)>>,
    events: Vec<Option<Ev<A::Message>>>,
    rng: ChaCha8Rng,
    out: Outcome,
}

impl<A: Algo> Sim<A> {
    fn new(n: u32, exclusion: u32, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let knobs = Knobs::default().lease(LEASE).exclusion(exclusion);
        let nodes = A::seeded(n, R, knobs, seed);
        let drift = u64::from(DRIFT_PPM);
        let rate = (0..n)
            .map(|_| rng.random_range(1_000_000 - drift..=1_000_000 + drift))
            .collect();
        let mut sim = Sim {
            nodes,
            rate,
            crashed: vec![false; n as usize],
            acting: vec![false; n as usize],
            entry: vec![0; n as usize],
            now: 0,
            queue: BinaryHeap::new(),
            events: Vec::new(),
            rng,
            out: Outcome::default(),
        };
        for h in 0..n {
            let think = sim.rng.random_range(0..30_000);
            sim.at(think, Ev::Request(NodeId(h)));
        }
        // One or two crashes, at random times.
        for _ in 0..sim.rng.random_range(1..=2) {
            let (when, who) = (sim.rng.random_range(0..HORIZON), sim.rng.random_range(0..n));
            sim.at(when, Ev::Crash(NodeId(who)));
        }
        sim
    }

    /// Schedule `ev` `after` from now.
    fn at(&mut self, after: u64, ev: Ev<A::Message>) {
        self.queue
            .push(Reverse((self.now + after, self.events.len())));
        self.events.push(Some(ev));
    }

    /// Real time for `after` on host `h`'s clock (rounded up: never early).
    fn real(&self, h: NodeId, after: u64) -> u64 {
        (u128::from(after) * 1_000_000).div_ceil(u128::from(self.rate[h.index()])) as u64
    }

    fn feed(&mut self, at: NodeId, event: Event<A::Message>) {
        if self.crashed[at.index()] {
            return;
        }
        let actions: Vec<_> = self.nodes[at.index()]
            .handle(event)
            .expect("a valid event")
            .collect();
        for action in actions {
            match action {
                Action::Send { to, msg } => {
                    let delay = self.rng.random_range(1..=DELTA);
                    self.at(delay, Ev::Deliver { from: at, to, msg });
                }
                Action::SetTimer { timer, after } => {
                    let real = self.real(at, after);
                    self.at(real, Ev::Timeout { at, timer });
                }
                Action::EnterCritical { .. } => {
                    self.out.entries += 1;
                    self.acting[at.index()] = true;
                    self.entry[at.index()] += 1;
                    // Up to three leases inside: many holders outstay their lease.
                    let stay = self.rng.random_range(1_000..=3 * LEASE);
                    let entry = self.entry[at.index()];
                    self.at(stay, Ev::Release { at, entry });
                }
                Action::LeaseExpired { .. } => {
                    self.out.lease_ends += 1;
                    self.acting[at.index()] = false;
                }
                Action::Report(manet_mutex::Report::PeerExcluded(_)) => {
                    self.out.exclusions += 1;
                }
                _ => {}
            }
        }
    }

    fn check(&mut self) {
        let mut acting = (0..self.nodes.len()).filter(|&i| self.acting[i]);
        if let (Some(a), Some(b), None) = (acting.next(), acting.next(), self.out.overlap) {
            self.out.overlap = Some((self.now, NodeId(a as u32), NodeId(b as u32)));
        }
    }

    fn run(mut self) -> Outcome {
        while let Some(Reverse((when, i))) = self.queue.pop() {
            if when > HORIZON {
                break;
            }
            self.now = when;
            match self.events[i].take().expect("once") {
                Ev::Deliver { from, to, msg } => self.feed(to, Event::Receive { from, msg }),
                Ev::Timeout { at, timer } => self.feed(at, Event::Timeout(timer)),
                Ev::Request(at) => {
                    if !self.crashed[at.index()]
                        && self.nodes[at.index()].status() == Status::Remainder
                    {
                        self.feed(at, Event::Request(CsRequest::ONE));
                    }
                }
                Ev::Release { at, entry } => {
                    let h = at.index();
                    if !self.crashed[h]
                        && self.entry[h] == entry
                        && self.nodes[h].status() == Status::Critical
                    {
                        self.acting[h] = false;
                        self.feed(at, Event::Release);
                        let think = self.rng.random_range(0..30_000);
                        self.at(think, Ev::Request(at));
                    }
                }
                Ev::Crash(at) => {
                    self.crashed[at.index()] = true;
                    self.acting[at.index()] = false;
                }
            }
            self.check();
        }
        self.out.survivor = self.crashed.iter().any(|c| !c);
        self.out
    }
}

/// The smallest exclusion that passes `exclusion_safe` for the model's bounds.
fn safe_exclusion() -> u32 {
    (1..100)
        .find(|&m| {
            ricart_agrawala::Settings::new(3, R)
                .with_lease(LEASE)
                .with_exclusion(m)
                .exclusion_safe(DELTA, DRIFT_PPM)
        })
        .expect("some exclusion is safe")
}

#[test]
fn the_bound_of_the_settings_helper() {
    // m·R ≥ (1 + ρ)·(2L/(1 − ρ) + Δ) = 1.01·(101,010.1 + 5,000) ≈ 107,070: m = 11.
    assert_eq!(safe_exclusion(), 11);
    let s = look_ahead::Settings::new(3, R).with_lease(LEASE);
    assert!(!s.with_exclusion(10).exclusion_safe(DELTA, DRIFT_PPM));
    assert!(s.with_exclusion(11).exclusion_safe(DELTA, DRIFT_PPM));
    assert!(
        !s.exclusion_safe(DELTA, DRIFT_PPM),
        "no exclusion: nothing to bound"
    );
    assert!(!s.with_exclusion(1000).exclusion_safe(DELTA, 1_000_000));
    let no_drift = ricart_agrawala::Settings::new(2, 10).with_lease(10);
    assert!(
        no_drift.with_exclusion(3).exclusion_safe(10, 0),
        "3·10 ≥ 2·10 + 10"
    );
    assert!(!no_drift.with_exclusion(2).exclusion_safe(10, 0) || 20 >= 30);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(24), ..ProptestConfig::default() })]

    /// Within the bound, never two acting holders, with leases ending, live holders excluded
    /// and hosts crashing; and hosts keep entering.
    #[test]
    fn within_the_bound_at_most_one_holder_acts(n in 2u32..6, seed in any::<u64>()) {
        let m = safe_exclusion();
        for out in [
            Sim::<ricart_agrawala::Node>::new(n, m, seed).run(),
            Sim::<look_ahead::Node>::new(n, m, seed).run(),
        ] {
            prop_assert_eq!(out.overlap, None, "{:?}", out);
            prop_assert!(out.entries > 0 || !out.survivor, "{:?}", out);
        }
    }
}

/// Outside the bound (an exclusion of 3 retransmissions, shorter than a lease), holders that
/// outstay are excluded while they still act: the model finds two acting at once.
#[test]
fn below_the_bound_two_holders_act_at_once() {
    for (name, found) in [
        (
            "ricart_agrawala",
            (0..20).any(|seed| {
                Sim::<ricart_agrawala::Node>::new(3, 3, seed)
                    .run()
                    .overlap
                    .is_some()
            }),
        ),
        (
            "look_ahead",
            (0..20).any(|seed| {
                Sim::<look_ahead::Node>::new(3, 3, seed)
                    .run()
                    .overlap
                    .is_some()
            }),
        ),
    ] {
        assert!(found, "{name}");
    }
}

/// The model exercises what the bound is about (printed with `--nocapture`).
#[test]
fn the_timed_runs_end_leases_and_exclude_live_holders() {
    let (mut leases, mut exclusions, mut entries) = (0, 0, 0);
    for seed in 0..8 {
        let out = Sim::<look_ahead::Node>::new(4, safe_exclusion(), seed).run();
        leases += out.lease_ends;
        exclusions += out.exclusions;
        entries += out.entries;
    }
    println!("entries {entries}, lease ends {leases}, exclusions {exclusions}");
    assert!(leases > 0 && exclusions > 0 && entries > 0);
}
