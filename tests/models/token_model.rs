//! The stateright model shared by the token algorithms (`tests/models/reverse_link.rs`,
//! `tests/models/prioritized.rs`). From the initial configuration of a small network it
//! branches on every:
//! - delivery of the head of a directed channel (links are FIFO);
//! - request by a node in the remainder section, among the algorithm's request choices, up to
//!   a number of requests per node;
//! - release by a node in the critical section;
//! - failure of an idle, non-bridge link, both ends told in one step, up to a number of
//!   failures; formation of an absent link, likewise;
//! - with `asymmetric`, link formations and failures told to one end (either) first, and every
//!   pending notice as a step of its own;
//! - in the recovery profiles (networks with `token::Recovery`, issue 23; `docs/ALGORITHMS.md`
//!   F8), up to a number each of crashes, restarts with empty state, partitions (every split
//!   of the nodes in two; the merge is a step of its own), links broken with a token on them,
//!   and timer expiries: any armed timer of a live node fires at any step (the driver has no
//!   clock, so this models clocks that break the bounds);
//! - up to `corruptions` corruptions of one message in flight each: a rewrite of one field to
//!   a value that commutes with the height shift below (`Value::shift_invariant`), or a change
//!   of its kind into each other kind its encoding decodes as (`corrupt::kinds_of`: KRL's
//!   REQUEST, LINKINFO and PROBE into one another, prioritized LINK and PROBE). Flipped frame
//!   bits are not modelled: a flip of 1 to 4 bits always fails the frame check, and the link
//!   session retransmits the frame, so the step would change nothing (the property tests and
//!   fuzz bodies flip bits, and count that the frame never decodes).
//!
//! Properties, on every explored state:
//! - *safety*: the algorithm's safety check, and no send to a non-neighbour and no valid
//!   event rejected;
//! - *every waiting node enters*: a deterministic, bounded, fair drain of the state (no more
//!   requests or link changes) serves every waiting node and passes the algorithm's drained
//!   checks (`Net::drain`). A plain state predicate rather than stateright's `eventually`,
//!   whose handling of cycles can miss counterexamples. With recovery the drain runs on the
//!   driver's clock, every timer on time (liveness (d), then one token per part once quiet),
//!   and *safety* is rule (a) and each node's own invariants once a failure struck
//!   (`TokenNet::check_safety`).

use std::hash::{Hash, Hasher};

use manet_mutex::token::Height;
use manet_mutex::token::Neighbors;
use manet_mutex::{CsRequest, Event, Fence, NodeId, Status, TimerId};
use manet_mutex_sim::{Graph, Params};
use stateright::{Model, Property};

use crate::explore::{explore, Run};
use manet_mutex_testkit::corrupt::{kinds_of, Corruption, Fields, Value};

use manet_mutex_testkit::{TokenHarness as Harnessed, TokenNet as Net};

/// Rounds of the liveness drain: far more than any request needs on four nodes (a request and
/// the token it brings back each cross at most three links, plus reversals).
const DRAIN_ROUNDS: usize = 64;

/// A height with the system-wide minimum `h1` and `h2` subtracted (see [`Fingerprint`]).
pub type Shifted = (i64, i64, NodeId);

/// What the model needs from an algorithm besides [`TokenAlgorithm`]: how to identify a state.
///
/// Stateright identifies states by their hash alone, so the hash must cover everything that
/// can influence the future. It may, and does, abstract what cannot: a uniform shift of every
/// height in the system (handlers only compare heights and add or subtract constants, so
/// shifted systems behave identically; without this KRLF, whose circulating tokens lower their
/// recipients forever, would never repeat a state), statistics no handler reads (raise
/// counters), and neighbour-table fields no handler reads in the entry's current state.
pub trait Fingerprint: Harnessed + std::fmt::Debug + Send + Sync + 'static {
    /// The node's own height.
    fn height(&self) -> Height;
    /// Every height stored in the node that the hash covers (own, views, formation heights).
    fn heights(&self) -> Vec<Height>;
    /// Hash the node's state, heights through `shift`.
    fn hash_node<H: Hasher>(&self, shift: &impl Fn(Height) -> Shifted, hasher: &mut H);
    /// The height a message carries, if any.
    fn msg_height(msg: &Self::Message) -> Option<Height>;
    /// Hash a message, its height through `shift`, an acknowledgement's count left out.
    fn hash_msg<H: Hasher>(msg: &Self::Message, shift: &impl Fn(Height) -> Shifted, hasher: &mut H);
    /// Hash the node's recovery state (nothing without recovery).
    fn hash_recovery<H: Hasher>(&self, hasher: &mut H);
    /// The neighbour table.
    fn neighbors(&self) -> &Neighbors;
    /// The count of tokens an acknowledgement says it received.
    fn ack_count(msg: &Self::Message) -> Option<u16>;
}

/// The part of a node's `Debug` form from its field `from` on, without heights: what a
/// recovery profile hashes of a node besides its fingerprint (the recovery state, `watch`,
/// has no accessor; the fields before `from` hold the heights, hashed shifted).
pub fn debug_from(node: &impl std::fmt::Debug, from: &str) -> String {
    let all = format!("{node:?}");
    let mut rest = all
        .find(from)
        .map_or(all.as_str(), |i| &all[i..])
        .to_string();
    // The timers' arming numbers only tell the current arming from stale ones, and the
    // driver keeps only the current one (`TokenHarness::timer_slot`): left out, as the timer
    // ids are hashed by the timer they arm.
    for field in ["lease_arming: [", "armings: ["] {
        while let Some(start) = rest.find(field) {
            let end = rest[start..]
                .find(']')
                .map_or(rest.len(), |e| start + e + 1);
            rest.replace_range(start..end, "");
        }
    }
    rest
}

/// The heights of a neighbour table that handlers read: the view of a peer once it is in N,
/// our height at formation while the link is forming.
pub fn neighbor_heights(neighbors: &Neighbors) -> impl Iterator<Item = Height> + '_ {
    neighbors.entries().flat_map(|e| {
        let view = e.in_n().then_some(e.height());
        view.into_iter().chain(neighbors.form_height(e.id()))
    })
}

/// Hash a neighbour table, skipping the leftovers `neighbor_heights` skips.
pub fn hash_neighbors<H: Hasher>(
    neighbors: &Neighbors,
    shift: &impl Fn(Height) -> Shifted,
    hasher: &mut H,
) {
    neighbors.entries().count().hash(hasher);
    for e in neighbors.entries() {
        e.id().hash(hasher);
        (e.in_n(), e.unacked(), e.forming(), e.visited()).hash(hasher);
        if e.in_n() {
            shift(e.height()).hash(hasher);
        }
        if let Some(h) = neighbors.form_height(e.id()) {
            shift(h).hash(hasher);
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub requests_per_node: u8,
    pub failures: u8,
    pub formations: u8,
    /// Largest difference between two nodes' `h1` (and `h2`) explored: partial reversal can
    /// count up without bound while a formed link's first height announcement is in flight
    /// (two waiting non-holders that see only each other raise over each other until it
    /// arrives); such runs repeat the same shape at ever larger heights.
    pub height_spread: i64,
    /// The checker stops once it has generated this many states (a hard memory bound).
    pub states: usize,
    /// Link events reach one end first (the other end is a separate notice step).
    pub asymmetric: bool,
    /// How many message fields may be corrupted in a run.
    pub corruptions: u8,
    /// How many waiting requests may be withdrawn (`Event::Cancel`) in a run.
    pub cancels: u8,
    /// Recovery's failures: how many crashes, restarts, partitions, broken links and timers
    /// fired at will a run may have.
    pub failing: Failing,
}

/// The recovery the models' recovery profiles run: beacons every unit, leases of 2, a hop
/// bound of 1 (the drain delivers every message within one unit), a diameter of `n − 1`, no
/// drift (the drain's clock is exact). Small, so that a drain is short.
pub fn model_recovery(n: usize) -> manet_mutex::token::Recovery {
    let diameter = u32::try_from(n.saturating_sub(1)).unwrap_or(1).max(1);
    manet_mutex::token::Recovery::new(1, 2, 1, diameter).with_drift_ppm(0)
}

/// How many of each failure a run of a recovery profile may have (all 0 elsewhere).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Failing {
    pub crashes: u8,
    pub restarts: u8,
    pub partitions: u8,
    pub breaks: u8,
    pub fires: u8,
}

impl Bounds {
    /// The default bounds, or the deep ones with `MANET_MUTEX_DEEP=1`.
    pub fn from_env(default_states: usize, deep_states: usize) -> Self {
        if std::env::var_os("MANET_MUTEX_DEEP").is_some_and(|v| v == "1") {
            Bounds {
                requests_per_node: 2,
                failures: 2,
                formations: 2,
                height_spread: 8,
                states: deep_states,
                asymmetric: false,
                corruptions: 0,
                cancels: 0,
                failing: Failing::default(),
            }
        } else {
            Bounds {
                requests_per_node: 1,
                failures: 1,
                formations: 1,
                height_spread: 6,
                states: default_states,
                asymmetric: false,
                corruptions: 0,
                cancels: 0,
                failing: Failing::default(),
            }
        }
    }

    /// `n` withdrawals of waiting requests.
    pub fn cancelling(self, n: u8) -> Self {
        Bounds { cancels: n, ..self }
    }

    /// Link events told to each end at its own time.
    pub fn asymmetric(self) -> Self {
        Bounds {
            asymmetric: true,
            ..self
        }
    }

    /// The failures of `failing` and no link changes: a recovery profile (the network must
    /// run recovery).
    pub fn failing(self, failing: Failing) -> Self {
        Bounds {
            failing,
            failures: 0,
            formations: 0,
            ..self
        }
    }

    /// `n` corruptions, no link changes: the corrupt operation's own space.
    pub fn corrupting(self, n: u8) -> Self {
        Bounds {
            corruptions: n,
            failures: 0,
            formations: 0,
            ..self
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    Deliver(NodeId, NodeId),
    Request(NodeId, CsRequest),
    Release(NodeId),
    Cancel(NodeId),
    Fail(NodeId, NodeId),
    Form(NodeId, NodeId),
    /// The link fails; only the first node is told now.
    FailAt(NodeId, NodeId),
    /// A link forms; only the first node is told now.
    FormAt(NodeId, NodeId),
    /// The first node is told the state of its link to the second.
    Notice(NodeId, NodeId),
    /// Field `field` of the `i`-th message on `from → to` becomes `value`.
    Corrupt {
        from: NodeId,
        to: NodeId,
        i: usize,
        field: usize,
        value: Value,
    },
    /// The `i`-th message on `from → to` changes into its `kind`-th other kind
    /// (`corrupt::kinds_of`).
    ChangeKind {
        from: NodeId,
        to: NodeId,
        i: usize,
        kind: usize,
    },
    /// The node crashes (`TokenNet::crash`).
    Crash(NodeId),
    /// The node restarts with empty state (`TokenNet::restart`).
    Restart(NodeId),
    /// The nodes of the mask (bit `i` for node `i`) split from the rest (`TokenNet::partition`).
    Partition(u8),
    /// The partition heals (`TokenNet::merge`).
    Merge,
    /// The link breaks with the token on it (`TokenNet::break_link`).
    Break(NodeId, NodeId),
    /// The node's armed timer fires now (`TokenNet::fire`).
    Fire(NodeId, TimerId),
}

#[derive(Clone, Debug)]
pub struct State<P: Fingerprint> {
    pub net: Net<P>,
    requests_left: Vec<u8>,
    failures_left: u8,
    formations_left: u8,
    corruptions_left: u8,
    cancels_left: u8,
    failing_left: Failing,
}

impl<P: Fingerprint> Hash for State<P> {
    fn hash<H: Hasher>(&self, hasher: &mut H) {
        let net = &self.net;
        let every_height = net
            .nodes
            .iter()
            .flat_map(P::heights)
            .chain(net.channels.iter().filter_map(|(_, _, m)| P::msg_height(m)));
        let (base1, base2) =
            every_height.fold((i64::MAX, i64::MAX), |(a, b), h| (a.min(h.h1), b.min(h.h2)));
        let shift = |h: Height| (h.h1.wrapping_sub(base1), h.h2.wrapping_sub(base2), h.id);
        for node in &net.nodes {
            node.hash_node(&shift, hasher);
            node.hash_recovery(hasher);
        }
        // Token counts only ever meet as differences on one directed link (what the sender
        // sent less what the receiver received or acknowledged), so they are hashed relative
        // to the sender's: counts that grow for ever still repeat states.
        let sent = |from: NodeId, to: NodeId| {
            P::neighbors(&net.nodes[from.index()])
                .get(to)
                .map(|e| e.sent())
        };
        for node in &net.nodes {
            for e in P::neighbors(node).entries() {
                let base = sent(e.id(), node.id());
                base.map_or(Some(e.received()), |b| Some(b.wrapping_sub(e.received())))
                    .hash(hasher);
            }
        }
        for (from, to, msg) in net.channels.iter() {
            (from, to).hash(hasher);
            P::hash_msg(msg, &shift, hasher);
            if let Some(count) = P::ack_count(msg) {
                sent(to, from).map(|b| b.wrapping_sub(count)).hash(hasher);
            }
        }
        net.marks.hash(hasher);
        net.up.hash(hasher);
        (net.corrupted, net.asymmetric, net.lost).hash(hasher);
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
        (
            self.failures_left,
            self.formations_left,
            self.corruptions_left,
            self.cancels_left,
        )
            .hash(hasher);
        if net.recovery().is_some() {
            hash_recovery(net, hasher);
            self.failing_left.hash(hasher);
        }
    }
}

/// What a recovery profile's state adds to the hash: which nodes are live and started, their
/// armed timers, the partition, the fence generations the resource admitted, who acts, the
/// generations made, and which kinds of failure struck (the
/// checks owed depend on them).
fn hash_recovery<P: Fingerprint, H: Hasher>(net: &Net<P>, hasher: &mut H) {
    (
        &net.crashed,
        &net.started,
        &net.timers,
        &net.sides,
        &net.cut,
    )
        .hash(hasher);
    (&net.former, &net.made, &net.acting, net.joined).hash(hasher);
    // Majority mode: the rounds made (a second one is a violation) and each node's stored
    // promises (a restart gives them back).
    (&net.rounds, &net.persisted).hash(hasher);
    let lanes = net.nodes.first().map_or(0, |n| n.lanes());
    for lane in 0..lanes {
        net.fences
            .highest(lane)
            .map(|h| Fence::new(lane, h).generation())
            .hash(hasher);
    }
    let f = &net.failures;
    let struck = [
        f.crashes,
        f.restarts,
        f.partitions,
        f.lost,
        f.fired,
        f.regenerated,
        f.turnovers,
        f.destroyed,
    ];
    struck.map(|c| c > 0).hash(hasher);
}

/// One configuration of one algorithm on one network.
pub struct TokenModel<P: Fingerprint> {
    pub n: usize,
    pub edges: Vec<(NodeId, NodeId)>,
    pub params: Params<P::Settings>,
    /// What a request may ask for (resources and priority).
    pub requests: Vec<CsRequest>,
    pub bounds: Bounds,
}

impl<P: Fingerprint> Model for TokenModel<P>
where
    Params<P::Settings>: Send + Sync + 'static,
    P::Message: Send + Sync + 'static,
{
    type State = State<P>;
    type Action = Step;

    fn init_states(&self) -> Vec<State<P>> {
        let net = Net::new(Graph::from_edges(self.n, &self.edges), &self.params)
            .expect("the modelled networks are valid");
        vec![State {
            net,
            requests_left: vec![self.bounds.requests_per_node; self.n],
            failures_left: self.bounds.failures,
            formations_left: self.bounds.formations,
            corruptions_left: self.bounds.corruptions,
            cancels_left: self.bounds.cancels,
            failing_left: self.bounds.failing,
        }]
    }

    fn actions(&self, state: &State<P>, actions: &mut Vec<Step>) {
        let net = &state.net;
        if net.fault.is_some() {
            return;
        }
        for (from, to) in net.busy_links() {
            actions.push(Step::Deliver(from, to));
        }
        for (i, left) in state.requests_left.iter().enumerate() {
            let node = NodeId(i as u32);
            if !net.live(node) {
                continue;
            }
            match net.status(node) {
                Status::Remainder if *left > 0 => {
                    actions.extend(self.requests.iter().map(|&r| Step::Request(node, r)));
                }
                Status::Critical => actions.push(Step::Release(node)),
                Status::Waiting if state.cancels_left > 0 => actions.push(Step::Cancel(node)),
                _ => {}
            }
        }
        let asymmetric = self.bounds.asymmetric;
        if state.failures_left > 0 {
            for (a, b) in net.removable_links() {
                if asymmetric {
                    actions.extend([Step::FailAt(a, b), Step::FailAt(b, a)]);
                } else {
                    actions.push(Step::Fail(a, b));
                }
            }
        }
        if state.formations_left > 0 {
            for (a, b) in net.absent_links() {
                if asymmetric {
                    actions.extend([Step::FormAt(a, b), Step::FormAt(b, a)]);
                } else {
                    actions.push(Step::Form(a, b));
                }
            }
        }
        for (a, b) in net.pending_notices() {
            actions.push(Step::Notice(a, b));
        }
        self.failure_actions(state, actions);
        if state.corruptions_left > 0 {
            let values = Value::shift_invariant(self.n as u8);
            for (from, to, i) in net.corruptible() {
                let Some(msg) = net
                    .channels
                    .iter()
                    .filter(|&(f, t, _)| (f, t) == (from, to))
                    .nth(i)
                else {
                    continue;
                };
                let kinds = kinds_of(msg.2).len();
                actions.extend((0..kinds).map(|kind| Step::ChangeKind { from, to, i, kind }));
                for field in 0..msg.2.field_count() {
                    for &value in &values {
                        // Only steps that change the message: the rest are deliveries' twins.
                        let mut probe = msg.2.clone();
                        if probe.corrupt(field, value) {
                            actions.push(Step::Corrupt {
                                from,
                                to,
                                i,
                                field,
                                value,
                            });
                        }
                    }
                }
            }
        }
    }

    fn next_state(&self, state: &State<P>, step: Step) -> Option<State<P>> {
        let mut next = state.clone();
        match step {
            Step::Deliver(from, to) => {
                next.net.deliver(from, to);
            }
            Step::Request(node, request) => {
                next.requests_left[node.index()] -= 1;
                next.net.request(node, request);
            }
            Step::Release(node) => next.net.release(node),
            Step::Cancel(node) => {
                next.cancels_left -= 1;
                next.net.apply_valid(node, Event::Cancel);
            }
            Step::Fail(a, b) => {
                next.failures_left -= 1;
                next.net.fail(a, b);
            }
            Step::Form(a, b) => {
                next.formations_left -= 1;
                next.net.form(a, b);
            }
            Step::FailAt(a, b) => {
                next.failures_left -= 1;
                next.net.fail_at(a, b);
            }
            Step::FormAt(a, b) => {
                next.formations_left -= 1;
                next.net.form_at(a, b);
            }
            Step::Notice(a, b) => next.net.notice(a, b),
            Step::Corrupt {
                from,
                to,
                i,
                field,
                value,
            } => {
                next.corruptions_left -= 1;
                next.net.corrupt(from, to, i, field, value);
            }
            Step::ChangeKind { from, to, i, kind } => {
                next.corruptions_left -= 1;
                next.net.corrupt_as(from, to, i, Corruption::Kind(kind));
            }
            Step::Crash(node) => {
                next.failing_left.crashes -= 1;
                next.net.crash(node);
            }
            Step::Restart(node) => {
                next.failing_left.restarts -= 1;
                next.net.restart(node);
            }
            Step::Partition(mask) => {
                next.failing_left.partitions -= 1;
                let side: Vec<_> = (0..self.n as u32)
                    .filter(|i| mask >> i & 1 == 1)
                    .map(NodeId)
                    .collect();
                next.net.partition(&side);
            }
            Step::Merge => next.net.merge(),
            Step::Break(a, b) => {
                next.failing_left.breaks -= 1;
                next.net.break_link(a, b);
            }
            Step::Fire(node, timer) => {
                next.failing_left.fires -= 1;
                next.net.fire(node, timer);
            }
        }
        Some(next)
    }

    fn within_boundary(&self, state: &State<P>) -> bool {
        let spread = |component: fn(Height) -> i64| {
            let values = state.net.nodes.iter().map(|n| component(n.height()));
            values.clone().max().unwrap_or(0) - values.min().unwrap_or(0)
        };
        spread(|h| h.h1) <= self.bounds.height_spread
            && spread(|h| h.h2) <= self.bounds.height_spread
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("safety", |_, s: &State<P>| s.net.check_safety().is_ok()),
            // A model that explores nothing must fail: some host enters somewhere.
            Property::sometimes("a host enters", |_, s: &State<P>| {
                s.net.nodes.iter().any(|n| n.status() == Status::Critical)
            }),
            Property::always("every waiting node enters", |_, s: &State<P>| {
                // A faulty state already fails `safety`; draining it says nothing more.
                s.net.fault.is_some() || s.net.drain(DRAIN_ROUNDS).is_ok()
            }),
        ]
    }
}

impl<P: Fingerprint> TokenModel<P> {
    /// The failure steps a recovery profile's state offers.
    fn failure_actions(&self, state: &State<P>, actions: &mut Vec<Step>) {
        let (net, left) = (&state.net, state.failing_left);
        if net.recovery().is_none() {
            return;
        }
        let live = net.live_nodes();
        if left.crashes > 0 {
            actions.extend(live.iter().map(|&v| Step::Crash(v)));
        }
        if left.restarts > 0 {
            actions.extend((0..self.n as u32).map(|v| Step::Restart(NodeId(v))));
        }
        if net.sides.is_some() {
            actions.push(Step::Merge);
        } else if left.partitions > 0 {
            // Every split in two, each once: the sides with node 0 on the other side.
            let all = (1u8 << self.n) - 1;
            actions.extend((1..all).filter(|m| m & 1 == 0).map(Step::Partition));
        }
        if left.breaks > 0 {
            actions.extend(
                net.token_links()
                    .into_iter()
                    .map(|(a, b)| Step::Break(a, b)),
            );
        }
        if left.fires > 0 {
            actions.extend(net.armed().into_iter().map(|(v, t)| Step::Fire(v, t)));
        }
    }
}

/// Replay `steps` (a counterexample's) from the model's initial state, checking safety after
/// each, then the liveness drain: what a regression test of a model counterexample runs.
pub fn replay<P: Fingerprint>(model: &TokenModel<P>, steps: &[Step]) -> Result<(), String>
where
    Params<P::Settings>: Send + Sync + 'static,
    P::Message: Send + Sync + 'static,
{
    let last = crate::explore::replay(model, steps, |state| state.net.check_safety())?;
    last.net.drain(DRAIN_ROUNDS).map_err(|v| v.to_string())
}

pub fn edges(pairs: &[(u32, u32)]) -> Vec<(NodeId, NodeId)> {
    pairs.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect()
}

/// Check each labelled configuration on one network; print what was explored and every
/// counterexample (with the reason its last state fails), then fail if there was one.
pub fn check<P: Fingerprint>(
    algorithm: &str,
    network: &str,
    models: impl IntoIterator<Item = (String, TokenModel<P>)>,
) where
    Params<P::Settings>: Send + Sync + 'static,
    P::Message: Send + Sync + 'static,
{
    let runs = models.into_iter().map(|(label, model)| Run {
        label: format!("{network} {label}"),
        states: model.bounds.states,
        bounds: format!("{:?}", model.bounds),
        model,
    });
    explore(&format!("model_{algorithm}"), runs, |last: &State<P>| {
        // The reason, and a viewer page of the counterexample (the trace text names it).
        let reason = last
            .net
            .check_safety()
            .and_then(|()| last.net.drain(DRAIN_ROUNDS))
            .err()
            .map(|v| v.to_string())
            .unwrap_or_default();
        format!("{reason}\n{}", last.net.trace_text())
    });
}
