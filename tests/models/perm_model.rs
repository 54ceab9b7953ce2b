//! The stateright model shared by the permission algorithms (`tests/models/look_ahead.rs`,
//! `tests/models/ricart_agrawala.rs`). From the initial state of `n` hosts it branches on every:
//! - delivery of any message in flight (any order), unless its destination is disconnected;
//! - loss of any message in flight, up to a number of losses;
//! - a second copy of any message in flight, up to a number of duplicates;
//! - expiry of any armed retransmission timer, up to a number of expiries (a timeout may come
//!   before the REPLY it guards, since delays are arbitrary);
//! - request by a host in the remainder section (up to a number per host), release by a host
//!   in the critical section;
//! - for look-ahead, every valid doze, wake, disconnect and reconnect (a reconnect while
//!   connected reports an accidental outage), up to a number of mode changes;
//! - a rewrite of one field of any message in flight to any of `Value::model_set`, or a change
//!   of its kind into each other kind its encoding decodes as (`corrupt::kinds_of`: look-ahead's
//!   REQUEST and REPLY into each other, the announcements into one another and, where a field
//!   fits, into REQUEST and REPLY and back; Ricart–Agrawala's kinds into none), up to a number
//!   of corruptions. Flipped frame bits are not modelled: a flip of 1 to 4 bits always fails
//!   the frame check, and the receiver's codec drops the frame, which is the loss step (the
//!   property tests and fuzz bodies flip bits, and count that the frame never decodes).
//!
//! - in the majority profiles (`with_majority(true)`, C7 in `docs/ALGORITHMS.md`; three hosts,
//!   no exclusion by timeout): a crash of any host, up to a number of crashes; a partition of
//!   the hosts in two, up to a number, only while every live host is in its remainder section
//!   (so that no grant given before the split is used during it: the timed model's leases
//!   cover that case, this one has no clock), and the merge, at which every host's detector
//!   trusts every live peer again; and a failure detector's suspicion (`Event::Suspect`) of a
//!   crashed host, or, while the network is split, of any host on the other side (a wrong
//!   suspicion: the host is alive). *Safety* there is at most one live host in the critical
//!   section, each host's own invariants (look-ahead's pairwise consistency does not hold
//!   across wrong suspicions) and, after at most one crash, every entry admitted by the
//!   protected resource (fences); the drain merges and lets the detectors catch up first.
//!
//! Properties, on every explored state: *safety* (`invariants::check_safety`: one host in the
//! critical section, each host's own invariants, pairwise consistency of the sets; no valid
//! event rejected) and *every waiting host enters* (`PermNet::drain`, a deterministic bounded
//! fair drain, retransmitting only after a loss, as a state predicate).

use std::hash::{Hash, Hasher};

use manet_mutex::{CsRequest, Event, NodeId, Status, TimerId, Violation};
use stateright::{Model, Property};

use crate::explore::{explore, Run};
use manet_mutex_testkit::corrupt::{kinds_of, Corruption, Fields, Value};

use manet_mutex_testkit::{PermNet, PermissionHarness};

/// Drain rounds: a request, its REPLYs and one retransmission per host fit many times over.
const DRAIN_ROUNDS: usize = 64;

#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub requests_per_node: u8,
    pub losses: u8,
    pub duplicates: u8,
    pub timeouts: u8,
    pub mode_changes: u8,
    pub corruptions: u8,
    /// Withdrawals of waiting requests (`Event::Cancel`).
    pub cancels: u8,
    /// Majority mode (C7) with a failure detector: the crash, partition and suspicion steps.
    pub majority: bool,
    /// Crashes (majority profiles).
    pub crashes: u8,
    /// Partitions (majority profiles).
    pub partitions: u8,
    /// The checker stops once it has generated this many states (a hard memory bound).
    pub states: usize,
}

pub fn deep() -> bool {
    std::env::var_os("MANET_MUTEX_DEEP").is_some_and(|v| v == "1")
}

/// The fault profiles checked on `hosts` hosts: requests, releases and deliveries alone, then
/// one kind of fault on top of them each (one loss with a timeout to race the retransmission,
/// one duplicate, early timeouts, and mode changes where the algorithm has them), which keeps
/// each space small enough to be exhaustive on two and three hosts; only mode changes with a
/// loss on three hosts stop at the state budget. Deep runs allow a second request per host and
/// two mode changes on three hosts, and add every fault at once.
fn profiles(hosts: u32, modes: bool) -> Vec<(&'static str, Bounds)> {
    let base = Bounds {
        requests_per_node: if deep() { 2 } else { 1 },
        losses: 0,
        duplicates: 0,
        timeouts: 0,
        mode_changes: 0,
        corruptions: 0,
        cancels: 0,
        majority: false,
        crashes: 0,
        partitions: 0,
        states: if deep() { 4_000_000 } else { 3_000_000 },
    };
    let mut profiles = vec![
        ("reliable", base),
        (
            "one loss",
            Bounds {
                losses: 1,
                timeouts: 1,
                ..base
            },
        ),
        (
            "one duplicate",
            Bounds {
                duplicates: 1,
                ..base
            },
        ),
        (
            "early timeouts",
            Bounds {
                timeouts: 2,
                ..base
            },
        ),
        (
            "one corruption",
            Bounds {
                corruptions: 1,
                timeouts: 1,
                states: base.states / 3,
                ..base
            },
        ),
        (
            "one cancel, one loss",
            Bounds {
                cancels: 1,
                losses: 1,
                timeouts: 1,
                ..base
            },
        ),
    ];
    if modes {
        // Two changes allow a doze and a wake, or a disconnection and its return; on three
        // hosts (every change a broadcast) only one is exhaustive by default.
        let mode_changes = Bounds {
            mode_changes: if hosts <= 2 || deep() { 2 } else { 1 },
            ..base
        };
        profiles.push(("mode changes", mode_changes));
        profiles.push((
            "mode changes, one loss",
            Bounds {
                losses: 1,
                timeouts: 1,
                ..mode_changes
            },
        ));
        profiles.push((
            "mode changes, one corruption",
            Bounds {
                corruptions: 1,
                timeouts: 1,
                states: base.states / 3,
                ..mode_changes
            },
        ));
    }
    if hosts == 3 {
        // Majority mode (C7): a crash (of the holder among others) that a perfect detector
        // reports, and a split of the hosts in two with wrong suspicions across it, where
        // only the side with a majority may enter.
        let majority = Bounds {
            majority: true,
            ..base
        };
        profiles.push((
            "majority, one crash",
            Bounds {
                crashes: 1,
                ..majority
            },
        ));
        profiles.push((
            "majority, one partition",
            Bounds {
                partitions: 1,
                ..majority
            },
        ));
    }
    if deep() {
        profiles.push((
            "every fault",
            Bounds {
                losses: 1,
                duplicates: 1,
                timeouts: 2,
                mode_changes: if modes { 2 } else { 0 },
                ..base
            },
        ));
    }
    profiles
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    Doze,
    Wake,
    Disconnect,
    Reconnect,
}

impl Mode {
    fn event<M>(self) -> Event<M> {
        match self {
            Mode::Doze => Event::Doze,
            Mode::Wake => Event::Wake,
            Mode::Disconnect => Event::Disconnect,
            Mode::Reconnect => Event::Reconnect,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Deliver the i-th message in flight (sent by the first host to the second).
    Deliver(usize, NodeId, NodeId),
    Lose(usize, NodeId, NodeId),
    Duplicate(usize, NodeId, NodeId),
    Fire(NodeId, TimerId),
    Request(NodeId),
    Release(NodeId),
    Cancel(NodeId),
    Mode(NodeId, Mode),
    /// Field `field` of the i-th message in flight (sent by the first host to the second)
    /// becomes `value`.
    Corrupt(usize, NodeId, NodeId, usize, Value),
    /// The i-th message in flight (sent by the first host to the second) changes into its
    /// `kind`-th other kind (`corrupt::kinds_of`).
    ChangeKind(usize, NodeId, NodeId, usize),
    /// The host crashes (`PermNet::crash`).
    Crash(NodeId),
    /// The first host's detector suspects the second (`Event::Suspect`).
    Suspect(NodeId, NodeId),
    /// The hosts of the mask (bit `i` for host `i`) split from the rest (`PermNet::partition`).
    Partition(u8),
    /// The partition heals, and every detector trusts every live host again.
    Merge,
}

/// The hosts a majority profile runs: the algorithm's own (`Host::build`) in majority mode.
pub trait Majority: PermissionHarness {
    /// `hosts` hosts in majority mode (look-ahead's sets seeded with `seed`), retransmitting
    /// after 1.
    fn majority_hosts(hosts: u32, seed: u64) -> Vec<Self>;
}

impl Majority for manet_mutex::ricart_agrawala::Node {
    fn majority_hosts(hosts: u32, _seed: u64) -> Vec<Self> {
        use manet_mutex::ricart_agrawala::{Config, Node, Settings};
        let settings = Settings::new(hosts, 1).with_majority(true);
        (0..hosts)
            .map(|i| Node::new(Config::new(NodeId(i), settings)).expect("a valid configuration"))
            .collect()
    }
}

impl Majority for manet_mutex::look_ahead::Node {
    fn majority_hosts(hosts: u32, seed: u64) -> Vec<Self> {
        use manet_mutex::look_ahead::{Config, Node, Settings};
        let settings = Settings::new(hosts, 1).with_seed(seed).with_majority(true);
        (0..hosts)
            .map(|i| Node::new(Config::new(NodeId(i), settings)).expect("a valid configuration"))
            .collect()
    }
}

#[derive(Clone, Debug)]
pub struct State<H: PermissionHarness> {
    pub net: PermNet<H>,
    requests_left: Vec<u8>,
    losses_left: u8,
    duplicates_left: u8,
    timeouts_left: u8,
    mode_changes_left: u8,
    corruptions_left: u8,
    cancels_left: u8,
    crashes_left: u8,
    partitions_left: u8,
}

/// Stateright identifies states by this hash alone. Hosts are hashed through their `Debug`
/// form, which shows every field (the output buffer is empty between events), so nothing that
/// can influence the future is left out; the messages in flight are a bag, so their order is
/// not.
impl<H: PermissionHarness> Hash for State<H> {
    fn hash<S: Hasher>(&self, hasher: &mut S) {
        for node in &self.net.nodes {
            format!("{node:?}").hash(hasher);
        }
        let mut bag: Vec<String> = self
            .net
            .in_flight
            .iter()
            .zip(&self.net.marks)
            .map(|m| format!("{m:?}"))
            .collect();
        bag.sort_unstable();
        bag.hash(hasher);
        self.net.timers.hash(hasher);
        self.net.fault.hash(hasher);
        self.net.departures.hash(hasher);
        self.net.waived.hash(hasher);
        self.net.lost.hash(hasher);
        self.net.corrupted.hash(hasher);
        self.requests_left.hash(hasher);
        (
            self.losses_left,
            self.duplicates_left,
            self.timeouts_left,
            self.mode_changes_left,
            self.corruptions_left,
            self.cancels_left,
        )
            .hash(hasher);
        if self.net.detector {
            // Majority profiles: who crashed, the sides, and what the resource admitted.
            (&self.net.crashed, self.net.crashes, &self.net.sides).hash(hasher);
            (self.crashes_left, self.partitions_left).hash(hasher);
            format!("{:?}", self.net.fences).hash(hasher);
            self.net.refused.len().hash(hasher);
        }
    }
}

pub struct PermModel<H> {
    pub hosts: u32,
    pub seed: u64,
    pub bounds: Bounds,
    pub _algorithm: std::marker::PhantomData<fn() -> H>,
}

impl<H> Model for PermModel<H>
where
    H: Majority + Send + Sync + 'static,
    H::Message: Send + Sync + 'static,
{
    type State = State<H>;
    type Action = Step;

    fn init_states(&self) -> Vec<State<H>> {
        let net = if self.bounds.majority {
            // A perfect detector for the drain (it merges, then trusts every live host and
            // suspects every crashed one); wrong suspicions are steps. Look-ahead's pairwise
            // consistency does not survive them: `safety` checks one live host inside.
            let mut net =
                PermNet::with_nodes(H::majority_hosts(self.hosts, self.seed)).with_detector();
            net.mutual_exclusion = false;
            net
        } else {
            PermNet::new(self.hosts, self.seed).expect("the modelled systems are valid")
        };
        vec![State {
            net,
            requests_left: vec![self.bounds.requests_per_node; self.hosts as usize],
            losses_left: self.bounds.losses,
            duplicates_left: self.bounds.duplicates,
            timeouts_left: self.bounds.timeouts,
            mode_changes_left: self.bounds.mode_changes,
            corruptions_left: self.bounds.corruptions,
            cancels_left: self.bounds.cancels,
            crashes_left: self.bounds.crashes,
            partitions_left: self.bounds.partitions,
        }]
    }

    fn actions(&self, state: &State<H>, actions: &mut Vec<Step>) {
        let net = &state.net;
        if net.fault.is_some() {
            return;
        }
        let deliverable = net.deliverable();
        let corruptible = net.corruptible();
        for (i, m) in net.in_flight.iter().enumerate() {
            // Equal copies are interchangeable: branch on the first of them only.
            if net.in_flight[..i].contains(m) {
                continue;
            }
            let (from, to) = (m.from, m.to);
            if deliverable.contains(&i) {
                actions.push(Step::Deliver(i, from, to));
            }
            if state.losses_left > 0 {
                actions.push(Step::Lose(i, from, to));
            }
            if state.duplicates_left > 0 {
                actions.push(Step::Duplicate(i, from, to));
            }
            if state.corruptions_left > 0 && corruptible.contains(&i) {
                let msg = &m.msg;
                let kinds = kinds_of(msg).len();
                actions.extend((0..kinds).map(|kind| Step::ChangeKind(i, from, to, kind)));
                for field in 0..msg.field_count() {
                    for value in Value::model_set(self.hosts as u8) {
                        if msg.clone().corrupt(field, value) {
                            actions.push(Step::Corrupt(i, from, to, field, value));
                        }
                    }
                }
            }
        }
        if state.timeouts_left > 0 {
            for (node, timer) in net.armed() {
                actions.push(Step::Fire(node, timer));
            }
        }
        for (i, node) in net.nodes.iter().enumerate() {
            let id = NodeId(i as u32);
            // Only where the host accepts a request (look-ahead refuses one while dozing).
            let accepts = |node: &H| node.clone().handle(Event::Request(CsRequest::ONE)).is_ok();
            match node.status() {
                Status::Remainder if state.requests_left[i] > 0 && accepts(node) => {
                    actions.push(Step::Request(id));
                }
                Status::Critical => actions.push(Step::Release(id)),
                Status::Waiting if state.cancels_left > 0 => actions.push(Step::Cancel(id)),
                _ => {}
            }
            if self.bounds.majority {
                self.failure_actions(state, id, actions);
            }
            if H::MODES && state.mode_changes_left > 0 {
                for mode in [Mode::Doze, Mode::Wake, Mode::Disconnect, Mode::Reconnect] {
                    if node.clone().handle(mode.event()).is_ok() {
                        actions.push(Step::Mode(id, mode));
                    }
                }
            }
        }
    }

    fn next_state(&self, state: &State<H>, step: Step) -> Option<State<H>> {
        let mut next = state.clone();
        match step {
            Step::Deliver(i, ..) => {
                next.net.deliver(i);
            }
            Step::Lose(i, ..) => {
                next.losses_left -= 1;
                next.net.lose(i);
            }
            Step::Duplicate(i, ..) => {
                next.duplicates_left -= 1;
                next.net.duplicate(i);
            }
            Step::Fire(node, timer) => {
                next.timeouts_left -= 1;
                next.net.fire(node, timer);
            }
            Step::Request(node) => {
                next.requests_left[node.index()] -= 1;
                next.net.request(node);
            }
            Step::Release(node) => next.net.release(node),
            Step::Cancel(node) => {
                next.cancels_left -= 1;
                next.net.apply_valid(node, Event::Cancel);
            }
            Step::Mode(node, mode) => {
                next.mode_changes_left -= 1;
                next.net.apply_valid(node, mode.event());
            }
            Step::Corrupt(i, _, _, field, value) => {
                next.corruptions_left -= 1;
                next.net.corrupt(i, field, value);
            }
            Step::ChangeKind(i, _, _, kind) => {
                next.corruptions_left -= 1;
                next.net.corrupt_as(i, Corruption::Kind(kind));
            }
            Step::Crash(node) => {
                next.crashes_left -= 1;
                next.net.crash(node);
            }
            Step::Suspect(at, peer) => next.net.suspect(at, peer),
            Step::Partition(mask) => {
                next.partitions_left -= 1;
                let side: Vec<_> = (0..self.hosts)
                    .filter(|i| mask >> i & 1 == 1)
                    .map(NodeId)
                    .collect();
                next.net.partition(&side);
            }
            Step::Merge => {
                next.net.merge();
                next.net.detect_all();
            }
        }
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("safety", |_, s: &State<H>| majority_safety(&s.net).is_ok()),
            // A model that explores nothing must fail: some host enters somewhere.
            Property::sometimes("a host enters", |_, s: &State<H>| {
                s.net.nodes.iter().any(|n| n.status() == Status::Critical)
            }),
            Property::always("every waiting host enters", |_, s: &State<H>| {
                s.net.fault.is_some() || s.net.drain(DRAIN_ROUNDS).is_ok()
            }),
        ]
    }
}

impl<H> PermModel<H>
where
    H: Majority + Send + Sync + 'static,
    H::Message: Send + Sync + 'static,
{
    /// A majority profile's failure steps at host `id`: its crash; its detector's suspicion of
    /// a crashed peer, or of a peer across the partition; the partition (the first host's side
    /// against the rest, only while every live host is in its remainder section) and the merge.
    fn failure_actions(&self, state: &State<H>, id: NodeId, actions: &mut Vec<Step>) {
        let net = &state.net;
        if !net.live(id) {
            return;
        }
        if state.crashes_left > 0 {
            actions.push(Step::Crash(id));
        }
        // A suspicion changes what a host waits for: only a waiting host's is a step (one
        // that comes earlier takes effect at its request alike, less the REQUEST not sent).
        let waiting = net.status(id) == Status::Waiting;
        for j in 0..self.hosts {
            let peer = NodeId(j);
            if !waiting || peer == id || net.node(id).excludes(peer) {
                continue;
            }
            let across = net
                .sides
                .as_ref()
                .is_some_and(|s| s[id.index()] != s[peer.index()]);
            if !net.live(peer) || across {
                actions.push(Step::Suspect(id, peer));
            }
        }
        if id.0 != 0 {
            return;
        }
        if net.sides.is_some() {
            actions.push(Step::Merge);
        } else if state.partitions_left > 0
            && net
                .live_hosts()
                .iter()
                .all(|&h| net.status(h) == Status::Remainder)
        {
            // Every split in two, each once: the sides without host 0.
            let all = (1u8 << self.hosts) - 1;
            actions.extend((1..all).filter(|m| m & 1 == 0).map(Step::Partition));
        }
    }
}

/// Safety: the algorithm's (`PermNet::check_safety`) and, where its mutual exclusion check is
/// off (the majority profiles: wrong suspicions break look-ahead's pairwise consistency, not
/// mutual exclusion), at most one live host in the critical section, and after at most one
/// crash no entry refused by the protected resource.
pub fn majority_safety<H: PermissionHarness>(net: &PermNet<H>) -> Result<(), Violation> {
    net.check_safety()?;
    if net.mutual_exclusion {
        return Ok(());
    }
    let inside: Vec<NodeId> = net
        .live_hosts()
        .into_iter()
        .filter(|&h| net.status(h) == Status::Critical)
        .collect();
    if inside.len() > 1 {
        let detail = format!("{inside:?} in the critical section at once");
        return Err(Violation::new("mutual-exclusion", None, detail));
    }
    if net.crashes <= 1 {
        if let Some((host, fence)) = net.refused.first() {
            let detail = format!("the resource refused {host:?}'s entry with {fence:?}");
            return Err(Violation::new("fence-order", Some(*host), detail));
        }
    }
    Ok(())
}

/// Replay `steps` (a counterexample's) from the model's initial state, checking safety after
/// each, then the liveness drain: what a regression test of a model counterexample runs.
pub fn replay<H>(model: &PermModel<H>, steps: &[Step]) -> Result<(), String>
where
    H: Majority + Send + Sync + 'static,
    H::Message: Send + Sync + 'static,
{
    let last = crate::explore::replay(model, steps, |state| majority_safety(&state.net))?;
    last.net.drain(DRAIN_ROUNDS).map_err(|v| v.to_string())
}

/// Whether the profile's space on `hosts` hosts is too large to be exhaustive within its
/// budget, or exhaustive but slow (a cancel with a loss on three hosts: 165k–267k states):
/// such profiles run in the long job (`Scope::Large`).
fn large(hosts: u32, label: &str) -> bool {
    match hosts {
        2 => label == "mode changes, one corruption",
        _ => matches!(
            label,
            "one corruption"
                | "one cancel, one loss"
                | "mode changes, one loss"
                | "mode changes, one corruption"
        ),
    }
}

/// Which profiles a test checks: the ones exhaustive within their budget (the default run) or
/// the bounded ones (the long job).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Small,
    Large,
}

/// Check `hosts` hosts from each of `seeds` (look-ahead's initial `Info_set`s) under every
/// fault profile of `scope`.
pub fn check_profiles<H>(algorithm: &str, hosts: u32, seeds: &[u64], scope: Scope)
where
    H: Majority + Send + Sync + 'static,
    H::Message: Send + Sync + 'static,
{
    let models = seeds.iter().flat_map(|&seed| {
        profiles(hosts, H::MODES)
            .into_iter()
            .filter(move |(label, _)| large(hosts, label) == (scope == Scope::Large))
            // Majority mode from one seed: a majority-mode look-ahead host asks every peer it
            // does not exclude (C7), so the seeded sets matter little there.
            .filter(move |(_, bounds)| !bounds.majority || seed == 0)
            .map(move |(label, bounds)| {
                let model = PermModel::<H> {
                    hosts,
                    seed,
                    bounds,
                    _algorithm: std::marker::PhantomData,
                };
                (format!("{hosts} hosts seed {seed} {label}"), model)
            })
    });
    check(algorithm, models);
}

/// Check each labelled configuration; print what was explored and every counterexample, then
/// fail if there was one.
pub fn check<H>(algorithm: &str, models: impl IntoIterator<Item = (String, PermModel<H>)>)
where
    H: Majority + Send + Sync + 'static,
    H::Message: Send + Sync + 'static,
{
    let runs = models.into_iter().map(|(label, model)| Run {
        label,
        states: model.bounds.states,
        bounds: format!("{:?}", model.bounds),
        model,
    });
    explore(&format!("model_{algorithm}"), runs, |last: &State<H>| {
        // The reason, and a viewer page of the counterexample (the trace text names it).
        let reason = majority_safety(&last.net)
            .and_then(|()| last.net.drain(DRAIN_ROUNDS))
            .err()
            .map(|v| v.to_string())
            .unwrap_or_default();
        format!("{reason}\n{}", last.net.trace_text())
    });
}
