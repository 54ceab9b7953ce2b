//! Exhaustive model checking of KRL and KRLF (stateright) on every small network we care
//! about: 2 to 4 nodes on a line, a triangle, a star, a square and a square with a chord, with
//! k = 1 and 2 tokens. From the initial configuration the checker branches on every
//! interleaving of message deliveries (FIFO per directed link), requests (a bounded number per
//! node), releases, and a bounded number of link failures (idle, non-bridge links; both ends
//! told in one step) and link formations.
//!
//! Properties, on every reachable state:
//! - *safety*: `reverse_link::invariants::check_safety`, and no node ever sends to a
//!   non-neighbour or rejects a valid event;
//! - *every waiting node enters*: a deterministic, bounded, fair drain of the state (no more
//!   requests or link changes) brings every waiting node into the critical section and, for
//!   KRL, ends quiet with `check_quiescent` holding. This is a plain state predicate rather
//!   than stateright's `eventually`, whose handling of cycles can miss counterexamples.
//!
//! `MANET_MUTEX_DEEP=1` raises every bound (see `docs/verification.md`). Run with
//! `cargo test --release --test model_reverse_link -- --nocapture` to see the state counts.

#[path = "harness/token_net.rs"]
mod token_net;

use std::hash::{Hash, Hasher};

use manet_mutex::height::Height;
use manet_mutex::reverse_link::{Node, Params};
use manet_mutex::sim::Graph;
use manet_mutex::{NodeId, Protocol, Status};
use stateright::{Checker, Model, Property};
use token_net::Net;

/// Rounds of the liveness drain: far more than any request needs on four nodes (a request and
/// the token it brings back each cross at most three links, plus reversals).
const DRAIN_ROUNDS: usize = 64;

#[derive(Clone, Copy, Debug)]
struct Bounds {
    requests_per_node: u8,
    failures: u8,
    formations: u8,
    /// Largest difference between two nodes' `h1` (and `h2`) explored.
    height_spread: i64,
    /// The checker stops once it has generated this many states (a hard memory bound).
    states: usize,
}

impl Bounds {
    fn from_env() -> Self {
        if std::env::var_os("MANET_MUTEX_DEEP").is_some_and(|v| v == "1") {
            Bounds {
                requests_per_node: 2,
                failures: 2,
                formations: 2,
                height_spread: 8,
                // About 2.5 GiB per model at the peak: run with --test-threads 1.
                states: 6_000_000,
            }
        } else {
            Bounds {
                requests_per_node: 1,
                failures: 1,
                formations: 1,
                height_spread: 6,
                // All 22 models in about 2.5 minutes on 2 cores, under 1.2 GiB.
                states: 1_500_000,
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Step {
    Deliver(NodeId, NodeId),
    Request(NodeId),
    Release(NodeId),
    Fail(NodeId, NodeId),
    Form(NodeId, NodeId),
}

#[derive(Clone, Debug)]
struct State {
    net: Net<Node>,
    requests_left: Vec<u8>,
    failures_left: u8,
    formations_left: u8,
}

/// Stateright identifies states by this hash alone, so it must cover everything that can
/// influence the future. It deliberately abstracts two things that cannot:
/// - a uniform shift of every height in the system (own heights, views, formation heights and
///   heights in flight): the handlers only compare heights and add or subtract constants, so
///   shifted systems behave identically. Without this KRLF, whose circulating tokens lower
///   their recipients forever, would never repeat a state;
/// - the raise counter, a statistic no handler reads, and the neighbour-table fields no handler
///   reads in the entry's current state (see below).
impl Hash for State {
    fn hash<H: Hasher>(&self, hasher: &mut H) {
        let net = &self.net;
        let every_height = net
            .nodes
            .iter()
            .flat_map(|n| {
                let own = std::iter::once(n.height());
                own.chain(n.neighbors().entries().flat_map(|e| {
                    let view = e.in_n.then_some(e.height);
                    view.into_iter().chain(e.forming.then_some(e.form_height))
                }))
            })
            .chain(net.channels.iter().map(|(_, _, m)| m.height()));
        let (base1, base2) =
            every_height.fold((i64::MAX, i64::MAX), |(a, b), h| (a.min(h.h1), b.min(h.h2)));
        let shifted = |h: Height| (h.h1.wrapping_sub(base1), h.h2.wrapping_sub(base2), h.id);
        for node in &net.nodes {
            node.id().hash(hasher);
            node.status().hash(hasher);
            shifted(node.height()).hash(hasher);
            node.tokens().hash(hasher);
            node.next().hash(hasher);
            node.may_lower_on_link_info().hash(hasher);
            node.queue().len().hash(hasher);
            node.queue().iter().for_each(|q| q.hash(hasher));
            node.neighbors().entries().count().hash(hasher);
            for e in node.neighbors().entries() {
                e.id.hash(hasher);
                (e.in_n, e.received_li, e.forming, e.visited).hash(hasher);
                // The view is read only once the peer is in N, and the formation height only
                // while the link is forming; otherwise they are leftovers.
                if e.in_n {
                    shifted(e.height).hash(hasher);
                }
                if e.forming {
                    shifted(e.form_height).hash(hasher);
                }
            }
        }
        for (from, to, msg) in net.channels.iter() {
            (from, to).hash(hasher);
            std::mem::discriminant(msg).hash(hasher);
            shifted(msg.height()).hash(hasher);
        }
        let mut edges: Vec<_> = net
            .graph
            .edges()
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect();
        edges.sort_unstable();
        edges.hash(hasher);
        net.fault.hash(hasher);
        self.requests_left.hash(hasher);
        (self.failures_left, self.formations_left).hash(hasher);
    }
}

struct KrlModel {
    n: usize,
    edges: Vec<(NodeId, NodeId)>,
    params: Params,
    bounds: Bounds,
}

impl Model for KrlModel {
    type State = State;
    type Action = Step;

    fn init_states(&self) -> Vec<State> {
        let net = Net::new(Graph::from_edges(self.n, &self.edges), &self.params)
            .expect("the topologies below are valid");
        vec![State {
            net,
            requests_left: vec![self.bounds.requests_per_node; self.n],
            failures_left: self.bounds.failures,
            formations_left: self.bounds.formations,
        }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Step>) {
        let net = &state.net;
        if net.fault.is_some() {
            return;
        }
        for (from, to) in net.busy_links() {
            actions.push(Step::Deliver(from, to));
        }
        for (i, left) in state.requests_left.iter().enumerate() {
            let node = NodeId(i as u32);
            match net.status(node) {
                Status::Remainder if *left > 0 => actions.push(Step::Request(node)),
                Status::Critical => actions.push(Step::Release(node)),
                _ => {}
            }
        }
        if state.failures_left > 0 {
            for (a, b) in net.removable_links() {
                actions.push(Step::Fail(a, b));
            }
        }
        if state.formations_left > 0 {
            for (a, b) in net.absent_links() {
                actions.push(Step::Form(a, b));
            }
        }
    }

    fn next_state(&self, state: &State, step: Step) -> Option<State> {
        let mut next = state.clone();
        match step {
            Step::Deliver(from, to) => next.net.deliver(from, to),
            Step::Request(node) => {
                next.requests_left[node.index()] -= 1;
                next.net.request(node);
            }
            Step::Release(node) => next.net.release(node),
            Step::Fail(a, b) => {
                next.failures_left -= 1;
                next.net.fail(a, b);
            }
            Step::Form(a, b) => {
                next.formations_left -= 1;
                next.net.form(a, b);
            }
        }
        Some(next)
    }

    /// Heights can grow without bound: while a formed link's first LinkInfo is still in
    /// flight, two waiting non-holders that see only each other raise above each other again
    /// and again (partial reversal counting up, until the LinkInfo arrives). Such runs repeat
    /// the same shape at ever larger heights, so the model stops at a spread of heights.
    fn within_boundary(&self, state: &State) -> bool {
        let spread = |component: fn(Height) -> i64| {
            let values = state.net.nodes.iter().map(|n| component(n.height()));
            values.clone().max().unwrap_or(0) - values.min().unwrap_or(0)
        };
        spread(|h| h.h1) <= self.bounds.height_spread
            && spread(|h| h.h2) <= self.bounds.height_spread
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("safety", |_, s: &State| s.net.check_safety().is_ok()),
            Property::always("every waiting node enters", |_, s: &State| {
                // A faulty state already fails `safety`; draining it says nothing more.
                s.net.fault.is_some() || s.net.drain(DRAIN_ROUNDS).is_ok()
            }),
        ]
    }
}

fn edges(pairs: &[(u32, u32)]) -> Vec<(NodeId, NodeId)> {
    pairs.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect()
}

/// Check KRL and KRLF with one and two tokens on one topology; print what was explored and
/// every counterexample (with the reason the last state fails), then fail if there was one.
fn check_topology(name: &str, n: usize, pairs: &[(u32, u32)]) {
    let bounds = Bounds::from_env();
    let mut failures = Vec::new();
    // Every k below n: `build` refuses networks where every node holds a token (V1 in
    // docs/ALGORITHMS.md).
    for k in 1..n as u32 {
        for forwarding in [false, true] {
            let model = KrlModel {
                n,
                edges: edges(pairs),
                params: Params { k, forwarding },
                bounds,
            };
            let checker = model
                .checker()
                .threads(1)
                .target_state_count(bounds.states)
                .spawn_bfs()
                .join();
            let algorithm = if forwarding { "KRLF" } else { "KRL" };
            let discoveries = checker.discoveries();
            // The checker stops early only at the state target or on a counterexample.
            let extent = if checker.state_count() < bounds.states && discoveries.is_empty() {
                "exhaustive"
            } else {
                "bounded"
            };
            println!(
                "model_reverse_link {name} {algorithm} k={k} {bounds:?}: {} unique states, depth {}, {extent}",
                checker.unique_state_count(),
                checker.max_depth(),
            );
            for (property, path) in discoveries {
                let last = path.last_state();
                let reason = last
                    .net
                    .check_safety()
                    .and_then(|()| last.net.drain(DRAIN_ROUNDS))
                    .err()
                    .unwrap_or_default();
                let last = format!("{last:#?}");
                failures.push(format!(
                    "{name} {algorithm} k={k}: \"{property}\" fails: {reason}\n  steps: {:?}\n  last state: {last}",
                    path.into_actions()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn line_of_two() {
    check_topology("line-2", 2, &[(0, 1)]);
}

#[test]
fn line_of_three() {
    check_topology("line-3", 3, &[(0, 1), (1, 2)]);
}

#[test]
fn triangle() {
    check_topology("triangle", 3, &[(0, 1), (1, 2), (0, 2)]);
}

#[test]
fn star_of_four() {
    check_topology("star-4", 4, &[(0, 1), (0, 2), (0, 3)]);
}

#[test]
fn square() {
    check_topology("square", 4, &[(0, 1), (1, 2), (2, 3), (3, 0)]);
}

#[test]
fn square_with_chord() {
    check_topology("square+chord", 4, &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]);
}

/// Counterexample found by this model (line-2, KRL, k = 2, steps `[Request(n1)]`): with a token
/// at both ends of the only link, node 1 enters, releases, sees no higher neighbour and lowers
/// below node 0; node 0, a holder that now sees no higher neighbour, lowers below node 1; and
/// so on: LinkInfo messages forever. The paper requires every holder to start with a higher
/// neighbour, which no height assignment gives when every node of a component holds a token;
/// `build` must refuse such a network instead of producing one that never goes quiet.
#[test]
fn regression_holders_alone_on_a_link_are_rejected() {
    let graph = Graph::from_edges(2, &edges(&[(0, 1)]));
    let built = Net::<Node>::new(
        graph,
        &Params {
            k: 2,
            forwarding: false,
        },
    );
    assert!(built.is_err(), "{built:?}");
}
