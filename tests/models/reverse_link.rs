//! Exhaustive model checking of KRL and KRLF (stateright) on small networks: a line of 2 and
//! of 3 nodes, a triangle, a star of 4, a square and a square with a chord, with every
//! `k < n` tokens. The model (`tests/models/token_model.rs`) branches on every interleaving of
//! deliveries, requests, releases and a bounded number of link failures and formations, and
//! checks `reverse_link::invariants::check_safety` and that a fair drain serves every waiting
//! node (KRL then going quiet with `check_quiescent` holding) in every state.
//!
//! `MANET_MUTEX_DEEP=1` raises every bound (see `docs/verification.md`). Run with
//! `cargo test --release --test model_reverse_link -- --nocapture` to see the state counts.

use std::hash::{Hash, Hasher};

use crate::token_model::{
    debug_from, edges, hash_neighbors, neighbor_heights, Bounds, Failing, Fingerprint, Shifted,
    TokenModel,
};
use manet_mutex::reverse_link::{Message, Node, Settings};
use manet_mutex::token::{Height, Neighbors};
use manet_mutex::{CsRequest, Protocol};
use manet_mutex_sim::Graph;
use manet_mutex_sim::Params;
use manet_mutex_testkit::TokenNet;

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
    /// the held tokens' ids and fence counters: the node never branches on a counter, and
    /// renaming tokens maps a state's futures onto the other's, so hashing them would only
    /// multiply the states (the driver checks the fences and ids all the same).
    fn hash_node<H: Hasher>(&self, shift: &impl Fn(Height) -> Shifted, hasher: &mut H) {
        self.id().hash(hasher);
        self.status().hash(hasher);
        shift(Node::height(self)).hash(hasher);
        self.tokens().hash(hasher);
        self.next().hash(hasher);
        self.may_lower_on_link_info().hash(hasher);
        self.queue().len().hash(hasher);
        self.queue().for_each(|q| q.hash(hasher));
        hash_neighbors(self.neighbors(), shift, hasher);
    }

    fn msg_height(msg: &Message) -> Option<Height> {
        Some(msg.sealed().height)
    }

    fn hash_msg<H: Hasher>(msg: &Message, shift: &impl Fn(Height) -> Shifted, hasher: &mut H) {
        // A check word is not shift invariant; whether it matches is.
        let sealed = msg.sealed();
        std::mem::discriminant(msg).hash(hasher);
        // An acknowledgement's count is hashed by the model, relative to its receiver's.
        (shift(sealed.height), msg.is_intact()).hash(hasher);
        // Recovery's messages (issue 23): the token's generation (0 without recovery, left
        // out so that those states hash as before), a beacon's fence, a claim.
        match *msg {
            Message::Token(_, fence) => {
                if let Some(generation) = fence.read().map(|f| f.generation()) {
                    if generation != 0 {
                        generation.hash(hasher);
                    }
                }
            }
            Message::Beacon(_, fence, _) => fence.hash(hasher),
            Message::Claim(_, lane, generation) => (lane, generation).hash(hasher),
            Message::Promise(_, lane, ballot, voter) => (lane, ballot, voter).hash(hasher),
            _ => {}
        }
    }

    /// With recovery: everything after the links (the tokens with their fences, the queue,
    /// recovery's state); nothing without.
    fn hash_recovery<H: Hasher>(&self, hasher: &mut H) {
        if self.settings().recovery.is_some() {
            debug_from(self, "held:").hash(hasher);
        }
    }

    fn neighbors(&self) -> &Neighbors {
        Node::neighbors(self)
    }

    fn ack_count(msg: &Message) -> Option<u16> {
        match *msg {
            Message::TokenAck(_, tokens) => Some(tokens),
            _ => None,
        }
    }
}

/// KRL (`forwarding` false) and KRLF with every `k < n` on one network. `build` refuses a
/// token at every node (V1 in docs/ALGORITHMS.md).
fn check_network(network: &str, n: usize, pairs: &[(u32, u32)], forwarding: &[bool]) {
    // All 30 models in about 1.5 minutes on 2 cores under 1.3 GiB; deep: 7.5 minutes and
    // 3 GiB at the peak with --test-threads 1.
    let bounds = Bounds::from_env(1_500_000, 6_000_000);
    let models = (1..n as u32).flat_map(|k| {
        forwarding.iter().map(move |&forwarding| {
            let label = format!("{} k={k}", if forwarding { "KRLF" } else { "KRL" });
            let model = TokenModel::<Node> {
                n,
                edges: edges(pairs),
                params: Params::first_nodes(Settings::new(k).with_forwarding(forwarding), k),
                requests: vec![CsRequest::ONE],
                bounds,
            };
            (label, model)
        })
    });
    crate::token_model::check("reverse_link", network, models);
}

/// KRL and KRLF with one token under the faults of a real link layer and channel: link events
/// told to each end at its own time, or one corrupted field (`Value::shift_invariant`). `only`
/// keeps the profiles so named (all if empty).
fn check_faults(network: &str, n: usize, pairs: &[(u32, u32)], only: &[&str], forwarding: &[bool]) {
    let bounds = Bounds::from_env(400_000, 3_000_000);
    let profiles = [
        ("asymmetric links", bounds.asymmetric()),
        ("one corruption", bounds.corrupting(1)),
        ("one cancel", bounds.cancelling(1)),
    ];
    let profiles = profiles
        .into_iter()
        .filter(|(profile, _)| only.is_empty() || only.contains(profile));
    let models = profiles.flat_map(|(profile, bounds)| {
        forwarding.iter().map(move |&forwarding| {
            let label = format!("{} k=1 {profile}", if forwarding { "KRLF" } else { "KRL" });
            let model = TokenModel::<Node> {
                n,
                edges: edges(pairs),
                params: Params::first_nodes(Settings::new(1).with_forwarding(forwarding), 1),
                requests: vec![CsRequest::ONE],
                bounds,
            };
            (label, model)
        })
    });
    crate::token_model::check("reverse_link", network, models);
}

/// KRL with one token and recovery (`token_model::model_recovery`) under the failure model's
/// faults (issue 23; `docs/ALGORITHMS.md` F8), one profile each; `only` keeps the profiles so
/// named (all if empty).
fn check_recovery(network: &str, n: usize, pairs: &[(u32, u32)], only: &[&str], states: usize) {
    check_recovery_in(network, n, pairs, only, states, false);
}

/// [`check_recovery`] in majority mode (`Recovery::with_majority` over all `n` nodes; F9, F13):
/// claims are ballots that need promises from a strict majority, and every promise is persisted
/// (`Action::Persist`) before it is sent; a restart gives the node its stored promises back
/// (`TokenNet::restart`). Checks, besides the recovery profiles' properties, that no round of a
/// token id is made twice (`round-made-twice`).
fn check_majority(network: &str, n: usize, pairs: &[(u32, u32)], only: &[&str], states: usize) {
    check_recovery_in(network, n, pairs, only, states, true);
}

fn check_recovery_in(
    network: &str,
    n: usize,
    pairs: &[(u32, u32)],
    only: &[&str],
    states: usize,
    majority: bool,
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
    let models = profiles.map(|(profile, failing)| {
        let recovery = crate::token_model::model_recovery(n);
        let (recovery, mode) = if majority {
            (recovery.with_majority(n as u32), "majority ")
        } else {
            (recovery, "")
        };
        let settings = Settings::new(1).with_recovery(recovery);
        let model = TokenModel::<Node> {
            n,
            edges: edges(pairs),
            params: Params::first_nodes(settings, 1),
            requests: vec![CsRequest::ONE],
            bounds: bounds.failing(failing),
        };
        (format!("KRL k=1 {mode}{profile}"), model)
    });
    crate::token_model::check("reverse_link", network, models);
}

/// Every recovery profile on a line of two: exhaustive.
#[test]
fn recovery_line_of_two() {
    check_recovery("line-2", 2, &[(0, 1)], &[], 1_000_000);
}

/// Every recovery profile on a line of three, bounded at 300,000 generated states each (the
/// spaces run into millions: the beacons' floods interleave with every other step).
#[test]
fn recovery_line_of_three() {
    check_recovery("line-3", 3, LINE_3, &[], 300_000);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn recovery_line_of_three_long() {
    check_recovery("line-3", 3, LINE_3, &[], 3_000_000);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn recovery_triangle() {
    check_recovery("triangle", 3, TRIANGLE, &[], 1_500_000);
}

/// Majority mode (F9, F13) on a line of three, bounded at 60,000 generated states each: a
/// crash of the holder (and a restart that gets its stored promises back) leaves a majority
/// that must claim the token with promises, a crash of the middle node leaves none on either
/// side; a partition; timers fired at will (claims at any time).
#[test]
fn majority_line_of_three() {
    check_majority(
        "line-3",
        3,
        LINE_3,
        &["crash and restart", "partition and merge", "timers at will"],
        60_000,
    );
}

/// Majority mode on a triangle, where the two nodes of a split's bigger side talk to each
/// other directly: the partition, bounded at 60,000 generated states.
#[test]
fn majority_triangle() {
    check_majority("triangle", 3, TRIANGLE, &["partition and merge"], 60_000);
}

const LINE_3: &[(u32, u32)] = &[(0, 1), (1, 2)];
const TRIANGLE: &[(u32, u32)] = &[(0, 1), (1, 2), (0, 2)];

// The default run keeps the spaces that are exhaustive within their budget; the bounded ones
// are ignored here and run by the long job.

#[test]
fn faults_line_of_two() {
    check_faults("line-2", 2, &[(0, 1)], &[], &[false, true]);
}

#[test]
fn faults_line_of_three() {
    check_faults("line-3", 3, LINE_3, &["one corruption"], &[false]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn faults_line_of_three_long() {
    check_faults(
        "line-3",
        3,
        LINE_3,
        &["asymmetric links", "one cancel"],
        &[false],
    );
    check_faults("line-3", 3, LINE_3, &[], &[true]);
}

#[test]
fn faults_triangle() {
    check_faults("triangle", 3, TRIANGLE, &["one corruption"], &[false]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn faults_triangle_long() {
    check_faults("triangle", 3, TRIANGLE, &["asymmetric links"], &[false]);
    check_faults("triangle", 3, TRIANGLE, &[], &[true]);
}

#[test]
fn line_of_two() {
    check_network("line-2", 2, &[(0, 1)], &[false, true]);
}

#[test]
fn line_of_three() {
    check_network("line-3", 3, LINE_3, &[false]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn line_of_three_krlf() {
    check_network("line-3", 3, LINE_3, &[true]);
}

#[test]
fn triangle() {
    check_network("triangle", 3, TRIANGLE, &[false]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn triangle_krlf() {
    check_network("triangle", 3, TRIANGLE, &[true]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn star_of_four() {
    check_network("star-4", 4, &[(0, 1), (0, 2), (0, 3)], &[false, true]);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn square() {
    check_network(
        "square",
        4,
        &[(0, 1), (1, 2), (2, 3), (3, 0)],
        &[false, true],
    );
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn square_with_chord() {
    let pairs = &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)];
    check_network("square+chord", 4, pairs, &[false, true]);
}

/// Counterexample found by this model (line-2, KRL, k = 2, steps `[Request(n1)]`): with a token
/// at both ends of the only link, node 1 enters, releases, sees no higher neighbour and lowers
/// below node 0; node 0, a holder that now sees no higher neighbour, lowers below node 1; and
/// so on: LinkInfo messages forever. The paper requires every holder to start with a higher
/// neighbour, which no height assignment gives when every node of a component holds a token;
/// `network` must refuse such a network instead of producing one that never goes quiet.
#[test]
fn regression_holders_alone_on_a_link_are_rejected() {
    let graph = Graph::from_edges(2, &edges(&[(0, 1)]));
    let built = TokenNet::<Node>::new(graph, &Params::first_nodes(Settings::new(2), 2));
    assert!(built.is_err(), "{built:?}");
}

/// The corruption steps include kind changes (issue 21): on a line of two, node 1's REQUEST in
/// flight can become a LINKINFO or a PROBE, and the driver makes and counts the change.
#[test]
fn the_corruption_steps_change_kinds() {
    use crate::token_model::Step;
    use manet_mutex::NodeId;
    use stateright::Model;
    let model = TokenModel::<Node> {
        n: 2,
        edges: edges(&[(0, 1)]),
        params: Params::first_nodes(Settings::new(1), 1),
        requests: vec![CsRequest::ONE],
        bounds: Bounds::from_env(1, 1).corrupting(1),
    };
    let state = model.init_states().remove(0);
    let state = model
        .next_state(&state, Step::Request(NodeId(1), CsRequest::ONE))
        .unwrap();
    let mut actions = Vec::new();
    model.actions(&state, &mut actions);
    let kinds: Vec<_> = actions
        .iter()
        .filter(|a| matches!(a, Step::ChangeKind { .. }))
        .collect();
    assert_eq!(kinds.len(), 2, "{actions:?}");
    let next = model.next_state(&state, *kinds[0]).unwrap();
    assert_eq!(next.net.corruptions.kinds, 1);
    assert!(matches!(
        next.net.pending(NodeId(1), NodeId(0))[..],
        [Message::LinkInfo(_)]
    ));
}
