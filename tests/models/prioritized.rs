//! Exhaustive model checking of the prioritized h-out-of-k algorithm (stateright) on the same
//! small networks as `models::reverse_link`: a line of 2 and of 3 nodes, a triangle, a star of
//! 4, a square and a square with a chord; the token starts at node 0. Per network: k = 1 with
//! equal priorities (plain mutual exclusion), k = 2 under maximum concurrency (requests for 1
//! or 2 resources), and k = 2 with explicit priorities (1 or 2 resources, priority 0 or 1). The
//! model (`tests/models/token_model.rs`) branches on every interleaving of deliveries,
//! requests, releases and a bounded number of link failures and formations, and checks
//! `prioritized::invariants::check_safety` and that a fair drain serves every waiting node and then
//! goes quiet with `prioritized::check_quiescent` holding, in every state.
//!
//! `MANET_MUTEX_DEEP=1` raises every bound (see `docs/verification.md`). Run with
//! `cargo test --release --test model_prioritized -- --nocapture` to see the state counts.

use std::hash::{Hash, Hasher};

use crate::token_model::{
    debug_from, edges, hash_neighbors, neighbor_heights, Bounds, Failing, Fingerprint, Shifted,
    TokenModel,
};
use manet_mutex::prioritized::{Message, Node, Policy, Settings};
use manet_mutex::token::{Height, Neighbors, Recovery, Sealed};
use manet_mutex::{CsRequest, NodeId, Protocol};
use manet_mutex_sim::Params;

impl Fingerprint for Node {
    fn height(&self) -> Height {
        Node::height(self)
    }

    fn heights(&self) -> Vec<Height> {
        let mut heights: Vec<Height> = neighbor_heights(self.neighbors()).collect();
        heights.push(Node::height(self));
        heights
    }

    /// Everything but the raise counter (a statistic), the outbox (empty between events), and
    /// the queue's arrival counters, of which only the order they give matters (`queue()`
    /// lists entries in service order; a new entry always comes after every queued one of the
    /// same priority). The grant counter is left out too: the node only raises it and hands
    /// it on, never branching on it, so states that differ in it have the same futures (the
    /// driver checks the fences all the same).
    fn hash_node<H: Hasher>(&self, shift: &impl Fn(Height) -> Shifted, hasher: &mut H) {
        self.id().hash(hasher);
        self.status().hash(hasher);
        shift(Node::height(self)).hash(hasher);
        self.next().hash(hasher);
        (self.available(), self.capacity()).hash(hasher);
        (self.held(), self.requested(), self.release_backlog()).hash(hasher);
        self.queue().len().hash(hasher);
        self.queue().for_each(|entry| entry.hash(hasher));
        hash_neighbors(self.neighbors(), shift, hasher);
    }

    fn msg_height(msg: &Message) -> Option<Height> {
        match *msg {
            Message::Token { height, .. }
            | Message::Request { height, .. }
            | Message::Release { height, .. }
            | Message::Link { height }
            | Message::Probe { height }
            | Message::TokenAck { height, .. } => Some(height.height),
            _ => None,
        }
    }

    fn hash_msg<H: Hasher>(msg: &Message, shift: &impl Fn(Height) -> Shifted, hasher: &mut H) {
        // A check word is not shift invariant; whether it matches is. An acknowledgement's
        // count is hashed by the model, relative to its receiver's.
        let seal = |s: Sealed| (shift(s.height), msg.is_intact());
        std::mem::discriminant(msg).hash(hasher);
        match *msg {
            // The fence is left out, as the grant counter is (see `hash_node`), but for its
            // generation with recovery (always 0 without: left out, so those states hash as
            // before).
            Message::Token {
                available,
                lost,
                priority,
                height,
                fence,
            } => {
                (available, lost, priority, seal(height)).hash(hasher);
                if let Some(generation) = fence.read().map(|f| f.generation()) {
                    if generation != 0 {
                        generation.hash(hasher);
                    }
                }
            }
            Message::Beacon { fence, .. } => fence.hash(hasher),
            Message::Claim {
                lane, generation, ..
            } => (lane, generation).hash(hasher),
            Message::Promise {
                lane,
                ballot,
                voter,
                ..
            } => (lane, ballot, voter).hash(hasher),
            Message::Request { priority, height } => (priority, seal(height)).hash(hasher),
            Message::Update { priority } => priority.hash(hasher),
            Message::Release {
                resources,
                lost,
                height,
                generation,
            } => (resources, lost, seal(height), generation).hash(hasher),
            Message::Link { height }
            | Message::Probe { height }
            | Message::TokenAck { height, .. } => seal(height).hash(hasher),
            // A variant added later: its full contents, heights unshifted (still sound).
            ref other => format!("{other:?}").hash(hasher),
        }
    }

    fn neighbors(&self) -> &Neighbors {
        Node::neighbors(self)
    }

    fn ack_count(msg: &Message) -> Option<u16> {
        match *msg {
            Message::TokenAck { tokens, .. } => Some(tokens),
            _ => None,
        }
    }

    /// With recovery: everything after the links (the token with its grant fence, the queue,
    /// the backlog's and the entry's generations, recovery's state); nothing without.
    fn hash_recovery<H: Hasher>(&self, hasher: &mut H) {
        if self.settings().recovery.is_some() {
            debug_from(self, "token:").hash(hasher);
        }
    }
}

fn requests(k: u32, priorities: &[u32]) -> Vec<CsRequest> {
    (1..=k)
        .flat_map(|resources| {
            priorities.iter().map(move |&priority| CsRequest {
                resources,
                priority,
            })
        })
        .collect()
}

/// `only` keeps the configurations so labelled (all if empty).
fn check_network(network: &str, n: usize, pairs: &[(u32, u32)], only: &[&str]) {
    // All 18 models in under a minute on 2 cores; deep: 6 minutes and 3.5 GiB at the peak with
    // --test-threads 1.
    let bounds = Bounds::from_env(1_000_000, 6_000_000);
    let configs = [
        ("k=1 equal", Settings::new(1, Policy::Equal), vec![0]),
        (
            "k=2 max-concurrency",
            Settings::new(2, Policy::MaxConcurrency),
            vec![0],
        ),
        (
            "k=2 explicit",
            Settings::new(2, Policy::Explicit),
            vec![0, 1],
        ),
    ];
    let configs = configs
        .into_iter()
        .filter(|(label, ..)| only.is_empty() || only.contains(label));
    let models = configs.map(|(label, settings, priorities)| {
        let model = TokenModel::<Node> {
            n,
            edges: edges(pairs),
            params: Params::new(settings, vec![NodeId(0)]),
            requests: requests(settings.k, &priorities),
            bounds,
        };
        (label.to_string(), model)
    });
    crate::token_model::check("prioritized", network, models);
}

/// One token under the faults of a real link layer and channel: link events told to each end at
/// its own time, or one corrupted field (`Value::shift_invariant`; resource counts take any of
/// their values).
fn check_faults(network: &str, n: usize, pairs: &[(u32, u32)]) {
    let bounds = Bounds::from_env(400_000, 3_000_000);
    let profiles = [
        ("asymmetric links", bounds.asymmetric()),
        ("one corruption", bounds.corrupting(1)),
        ("one cancel", bounds.cancelling(1)),
    ];
    let models = profiles.into_iter().flat_map(|(profile, bounds)| {
        let configs = [
            ("k=1 equal", Settings::new(1, Policy::Equal)),
            (
                "k=2 max-concurrency",
                Settings::new(2, Policy::MaxConcurrency),
            ),
        ];
        configs.map(move |(label, settings)| {
            let model = TokenModel::<Node> {
                n,
                edges: edges(pairs),
                params: Params::new(settings, vec![NodeId(0)]),
                requests: requests(settings.k, &[0]),
                bounds,
            };
            (format!("{label} {profile}"), model)
        })
    });
    crate::token_model::check("prioritized", network, models);
}

/// The prioritized token with recovery (`token_model::model_recovery`) under the failure
/// model's faults (issue 23; `docs/ALGORITHMS.md` F8): k = 1 with equal priorities and k = 2
/// under maximum concurrency, one profile each.
fn check_recovery(network: &str, n: usize, pairs: &[(u32, u32)], states: usize) {
    let recovery = crate::token_model::model_recovery(n);
    check_recovery_in(network, n, pairs, &[], states, recovery, "");
}

/// [`check_recovery`] in majority mode (`Recovery::with_majority` over all `n` nodes; F9, F13),
/// the profiles `only` names: claims and turnovers are ballots that need promises from a
/// strict majority, each promise persisted (`Action::Persist`) before it is sent and given back
/// at a restart (`TokenNet::restart`); no round of the token is made twice
/// (`round-made-twice`).
fn check_majority(
    network: &str,
    n: usize,
    pairs: &[(u32, u32)],
    only: &[&str],
    states: usize,
    recovery: Recovery,
) {
    let recovery = recovery.with_majority(n as u32);
    check_recovery_in(network, n, pairs, only, states, recovery, "majority ");
}

fn check_recovery_in(
    network: &str,
    n: usize,
    pairs: &[(u32, u32)],
    only: &[&str],
    states: usize,
    recovery: Recovery,
    mode: &str,
) {
    let bounds = Bounds::from_env(states, states * 4);
    let none = Failing::default();
    let profiles = [
        (
            "crash and restart",
            Failing {
                crashes: 1,
                restarts: 1,
                ..none
            },
        ),
        (
            "partition and merge",
            Failing {
                partitions: 1,
                ..none
            },
        ),
        (
            "token lost on a breaking link",
            Failing {
                breaks: 1,
                crashes: 1,
                ..none
            },
        ),
        ("timers at will", Failing { fires: 2, ..none }),
        (
            "crash, restart, timers at will",
            Failing {
                crashes: 1,
                restarts: 1,
                fires: 1,
                ..none
            },
        ),
    ];
    let profiles = profiles
        .into_iter()
        .filter(|(profile, _)| only.is_empty() || only.contains(profile));
    let models = profiles.flat_map(|(profile, failing)| {
        let configs = [
            ("k=1 equal", Settings::new(1, Policy::Equal)),
            (
                "k=2 max-concurrency",
                Settings::new(2, Policy::MaxConcurrency),
            ),
        ];
        configs.map(move |(label, settings)| {
            let settings = settings.with_recovery(recovery);
            let model = TokenModel::<Node> {
                n,
                edges: edges(pairs),
                params: Params::new(settings, vec![NodeId(0)]),
                requests: requests(settings.k, &[0]),
                bounds: bounds.failing(failing),
            };
            (format!("{label} {mode}{profile}"), model)
        })
    });
    crate::token_model::check("prioritized", network, models);
}

/// Every recovery profile on a line of two: exhaustive.
#[test]
fn recovery_line_of_two() {
    check_recovery("line-2", 2, &[(0, 1)], 1_000_000);
}

/// Every recovery profile on a line of three, bounded at 150,000 generated states each.
#[test]
fn recovery_line_of_three() {
    check_recovery("line-3", 3, LINE_3, 150_000);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn recovery_line_of_three_long() {
    check_recovery("line-3", 3, LINE_3, 3_000_000);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn recovery_triangle() {
    check_recovery("triangle", 3, TRIANGLE, 1_500_000);
}

/// Majority mode (F9, F13) on a line of three, bounded at 60,000 generated states each: a
/// crash of the holder (with a restart that gets its stored promises back), and a partition
/// whose minority must not make the token (the drain keeps it standing for a while). Leases
/// of 5, so that the rebuild timer (a lease bound) outlasts the claim wait (4): with the
/// recovery profiles' leases of 2 the turnover never ends (`majority_line_of_three_short_leases`).
#[test]
fn majority_line_of_three() {
    check_majority(
        "line-3",
        3,
        LINE_3,
        &["crash and restart", "partition and merge"],
        60_000,
        Recovery::new(1, 5, 1, 2).with_drift_ppm(0),
    );
}

/// FAILS (a liveness finding of issue 34's models, not fixed here): majority mode with the
/// recovery profiles' settings (`model_recovery`: leases of 2, so a rebuild timer of 2, and a
/// claim wait of 4). Line 0 - 1 - 2, k = 1, node 0 holds the token: 0 asks and enters; 1
/// asks, 0 sends it the token with no unit free; 0 crashes. 1 holds the token with its unit
/// lost and a request waiting: its rebuild timer starts a turnover (`turn_over`), a claim with
/// promises (F9), and re-arms itself for a lease bound; node 2 promises, but the rebuild timer
/// fires before the claim wait ends and `turn_over` starts a new claim a round above, and so
/// on for ever: node 1 starves (`starvation: [(n1, Waiting)]`, in the crash and the partition
/// profiles alike). The same steps drain with leases of 5 (the rebuild timer outlasting the
/// claim wait). Minimal steps: `Deliver(n0, n1), Request(n0, 1), Request(n1, 1),
/// Deliver(n1, n0), Deliver(n0, n1), Crash(n0)` (`regression_a_turnover_claim_outlives_the_rebuild_timer`).
///
/// Found by this profile on the code before F15; F15's "the rebuild timer no longer restarts
/// a running turnover claim" (merged from the break-3 work at the same time) fixes it.
#[test]
fn majority_line_of_three_short_leases() {
    check_majority(
        "line-3",
        3,
        LINE_3,
        &["crash and restart", "partition and merge"],
        60_000,
        crate::token_model::model_recovery(3),
    );
}

/// The finding of `majority_line_of_three_short_leases`, minimised: node 1 holds the token
/// with the crashed node 0's unit lost and its own request waiting, and its turnover claim is
/// restarted by every rebuild timer before its claim wait ends.
/// It failed before F15 and passes since.
#[test]
fn regression_a_turnover_claim_outlives_the_rebuild_timer() {
    use crate::token_model::Step::*;
    let settings = Settings::new(1, Policy::Equal)
        .with_recovery(crate::token_model::model_recovery(3).with_majority(3));
    let model = TokenModel::<Node> {
        n: 3,
        edges: edges(LINE_3),
        params: Params::new(settings, vec![NodeId(0)]),
        requests: requests(1, &[0]),
        bounds: Bounds::from_env(1, 1).failing(Failing {
            crashes: 1,
            ..Failing::default()
        }),
    };
    let (n0, n1) = (NodeId(0), NodeId(1));
    let one = CsRequest::ONE;
    let steps = [
        Deliver(n0, n1),
        Request(n0, one),
        Request(n1, one),
        Deliver(n1, n0),
        Deliver(n0, n1),
        Crash(n0),
    ];
    crate::token_model::replay(&model, &steps).unwrap();
}

const LINE_3: &[(u32, u32)] = &[(0, 1), (1, 2)];
const TRIANGLE: &[(u32, u32)] = &[(0, 1), (1, 2), (0, 2)];

// The default run keeps the spaces that are exhaustive within their budget; the bounded ones
// are ignored here and run by the long job.

#[test]
fn faults_line_of_two() {
    check_faults("line-2", 2, &[(0, 1)]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn faults_line_of_three() {
    check_faults("line-3", 3, LINE_3);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn faults_triangle() {
    check_faults("triangle", 3, TRIANGLE);
}

#[test]
fn line_of_two() {
    check_network("line-2", 2, &[(0, 1)], &[]);
}

#[test]
fn line_of_three() {
    check_network("line-3", 3, LINE_3, &["k=1 equal"]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn line_of_three_two_resources() {
    check_network(
        "line-3",
        3,
        LINE_3,
        &["k=2 max-concurrency", "k=2 explicit"],
    );
}

#[test]
fn triangle() {
    check_network("triangle", 3, TRIANGLE, &["k=1 equal"]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn triangle_two_resources() {
    check_network(
        "triangle",
        3,
        TRIANGLE,
        &["k=2 max-concurrency", "k=2 explicit"],
    );
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn star_of_four() {
    check_network("star-4", 4, &[(0, 1), (0, 2), (0, 3)], &[]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn square() {
    check_network("square", 4, &[(0, 1), (1, 2), (2, 3), (3, 0)], &[]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn square_with_chord() {
    check_network(
        "square+chord",
        4,
        &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)],
        &[],
    );
}

/// Found by `faults_line_of_three` (`docs/ALGORITHMS.md`, T1): line 0–1–2, the token at node
/// 0, which enters; node 1 asks and gets the token with no resource free. The link 0–2 forms
/// and node 2's LINK reaches node 0 before node 0's own LinkUp (dropped); the link 0–1 fails.
/// Node 0 releases with nobody in `N` to send the resource to, keeps it in its backlog, and
/// (without asking its forming link) node 1 waits for it for ever.
#[test]
fn regression_released_resources_of_a_node_without_neighbours_ask_a_forming_link() {
    use crate::token_model::Step::*;
    let model = TokenModel::<Node> {
        n: 3,
        edges: edges(&[(0, 1), (1, 2)]),
        params: Params::new(Settings::new(1, Policy::Equal), vec![NodeId(0)]),
        requests: vec![CsRequest::ONE],
        bounds: Bounds::from_env(1, 1).asymmetric(),
    };
    let (n0, n1, n2) = (NodeId(0), NodeId(1), NodeId(2));
    let steps = [
        Request(n0, CsRequest::ONE),
        Request(n1, CsRequest::ONE),
        Deliver(n1, n0),
        Deliver(n0, n1),
        Deliver(n1, n0),
        FormAt(n2, n0),
        Deliver(n2, n0),
        FailAt(n0, n1),
    ];
    crate::token_model::replay(&model, &steps).unwrap();
}
