//! A whole token network driven one step at a time, shared by the model checker
//! (`tests/models/`), the fuzz bodies ([`super::fuzz`], also behind `fuzz/`), the adversarial
//! property tests and the hand-driven scenario tests. Unlike the simulator it has no clock: the
//! caller chooses every step, so a model checker can branch on each one and a fuzzer can pick
//! them from its input.
//!
//! The network follows the token algorithms' link contract in its weakest form:
//! - FIFO per directed link: only the head of a channel can be delivered;
//! - each end of a link learns of its formation and of its failure at its own time (a
//!   *notice*); the first message over a new link can arrive before the receiver's own
//!   `LinkUp`, and a message sent before the sender learned of a failure is still delivered,
//!   possibly after the receiver's `LinkDown`;
//! - a link fails only when nothing is in flight on it, and forms again only once both ends
//!   have noticed the failure and nothing is left in flight (messages of one incarnation never
//!   reach the next);
//! - as in the paper's mobility model, a failure never disconnects the graph, so every waiting
//!   node can still be served.
//!
//! On top of that the harness can *corrupt* any message in flight (each message at most once:
//! [`corrupt`](crate::corrupt)): rewrite one field, change its kind into another kind
//! its encoding decodes as, or flip 1 to 4 bits of its frame. A flipped frame fails the codec's
//! frame check (it detects every error of up to 5 bits); this driver models the link session
//! under the token algorithms ([`manet_mutex::session`]), which retransmits a frame that failed its
//! check, so the original message is delivered, unchanged and in order: the flip is counted
//! ([`TokenNet::corruptions`]) and changes nothing else. (Were a flipped frame ever to decode,
//! the message it decodes to would replace the original, as a corruption.) The harness tracks
//! what a corruption destroys that no protocol can recover (resources of a prioritized count,
//! or carried by a RELEASE that no longer passes its check), and checks liveness except where
//! that makes it impossible; after any corruption it also requires that every node, asking
//! once more, is served (a corrupted height may leave a wrong view until its sender next
//! speaks, and no such view may keep a request from being served).
//!
//! A network whose nodes run token recovery ([`manet_mutex::token::Recovery`], issue 23;
//! `docs/ALGORITHMS.md` F8) also takes the failure model's faults, which do nothing
//! elsewhere: crash-stop ([`TokenNet::crash`]: the node and what is on its links are gone, its
//! neighbours told `LinkDown`), crash-restart with empty state ([`TokenNet::restart`]),
//! partitions and merges ([`TokenNet::partition`], [`TokenNet::merge`]), a link breaking with
//! a token on it ([`TokenNet::break_link`]), and any armed timer fired at will
//! ([`TokenNet::fire`]). The driver keeps each node's armed timers; it has no clock between
//! steps, so a timer fired at will models a clock that breaks the bounds, after which only rule
//! (a) and each node's own invariants are owed. Its drain ([`TokenNet::drain`]) runs on a clock
//! instead: every message in flight delivered within one unit and every timer fired at its
//! deadline, which keeps the bounds of [`harness_recovery`]. Without recovery nothing of this
//! changes the driver.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use manet_mutex::fence::Fences;
use manet_mutex::prioritized;
use manet_mutex::reverse_link;
use manet_mutex::token::{Height, Promised, Recovery};
use manet_mutex::{
    Action, Anomaly, CsRequest, Error, Event, Fence, NodeId, Protocol, Report, Status, TimerId,
    Violation,
};
use manet_mutex_sim::{busy, Channels, Graph, Params, TokenAlgorithm};

use crate::corrupt::{Corruptible, Corruption, Counts, Outcome, Value};
use crate::driver::{amend, contract, fence_went_back, rule, Driver};

mod failures;

use failures::Step;
pub use failures::{harness_majority, harness_recovery, Failures, STORM};

/// What the harness needs from a token algorithm besides [`TokenAlgorithm`].
pub trait TokenHarness:
    TokenAlgorithm + std::fmt::Debug + PartialEq + Protocol<Message: Corruptible>
{
    /// Resources of `nodes`' system that corrupting `before` into `after` destroyed.
    fn lost(_before: &Self::Message, _after: &Self::Message, _nodes: &[Self]) -> u32 {
        0
    }

    /// Safety, with `lost` resources known destroyed.
    fn check(
        nodes: &[Self],
        channels: &Channels<Self::Message>,
        lost: u32,
    ) -> Result<(), Violation> {
        if lost > 0 {
            let detail = format!("{lost} resources lost in an algorithm that has none");
            return Err(Violation::new("resource-count", None, detail));
        }
        Self::check_safety(nodes, channels)
    }

    /// Whether every request can still be served with `lost` resources destroyed.
    fn live_after_loss(_nodes: &[Self], lost: u32) -> bool {
        lost == 0
    }

    /// What a quiescent system must satisfy after corruption (see each algorithm's
    /// `check_settled`).
    fn check_settled(nodes: &[Self]) -> Result<(), Violation>;

    /// Whether losing `msg` would destroy something no protocol can recover (a token,
    /// resources): a link session's precious predicate.
    fn precious(_msg: &Self::Message) -> bool {
        true
    }

    /// Whether this node holds a token.
    fn holds_token(&self) -> bool;

    /// Whether this node accepted `Event::Leave` (L4): it takes no request any more, so the
    /// drain does not ask it.
    fn leaving(&self) -> bool {
        false
    }

    /// Whether `msg` carries a token.
    fn is_token(msg: &Self::Message) -> bool;

    /// The node's token recovery ([`Recovery`]), `None` without it (the default): only a
    /// network with recovery takes the failure faults ([`TokenNet::crash`] and the rest).
    fn recovery_settings(&self) -> Option<Recovery> {
        None
    }

    /// The node as it restarts after a crash: empty state (height `(0, 0, id)`), no token, no
    /// neighbour, configured as restarted: by an embedder that kept what the node asked it to
    /// keep if `kept` is some (the highest round it made, `Config::restarted_after`, so it
    /// makes no generation twice; its promises in majority mode, `Config::with_promises`),
    /// else `Config::restarted`; `None` (the default) if the algorithm cannot restart.
    fn restarted_empty(&self, _kept: Option<(u16, Vec<Promised>)>) -> Option<Self> {
        None
    }

    /// The promise `msg` carries, as `(lane, ballot, voter)`, if it is one (majority mode; the
    /// default: never).
    fn promise_of(_msg: &Self::Message) -> Option<(u32, u32, u32)> {
        None
    }

    /// Whether the node may promise (majority mode): not a node restarted without its
    /// promises (F9; the default: always).
    fn may_promise(&self) -> bool {
        true
    }

    /// Whether the node is in the critical section on a token recovery destroyed under it
    /// (it was told `LeaseExpired`, and holds nothing for the entry): its own invariants are
    /// not checked then. The default: never.
    fn is_revoked(&self) -> bool {
        false
    }

    /// How many token ids the network has: `k` for KRL, 1 for the prioritized token (the
    /// default).
    fn lanes(&self) -> u32 {
        1
    }

    /// How many units may be acting at once: `k` (KRL: tokens, prioritized: resources); the
    /// default is [`TokenHarness::lanes`].
    fn units(&self) -> u32 {
        self.lanes()
    }

    /// The units the node holds while in the critical section (1 for KRL, the default).
    fn acting_units(&self) -> u32 {
        1
    }

    /// Whether the node holds the token with units missing from it (lent out, or lost with
    /// a crashed holder; never for KRL, the default).
    fn units_missing(&self) -> bool {
        false
    }

    /// The ids of the tokens the node holds (the default: id 0 if it holds a token).
    fn token_lanes(&self) -> Vec<u32> {
        if self.holds_token() {
            vec![0]
        } else {
            Vec::new()
        }
    }

    /// The id of the token `msg` carries, if it carries one (the default: 0 for a token).
    fn message_lane(msg: &Self::Message) -> Option<u32> {
        Self::is_token(msg).then_some(0)
    }

    /// Whether `msg` is a recovery claim or promise (the default: never).
    fn is_claim(_msg: &Self::Message) -> bool {
        false
    }

    /// Whether the node may claim token id `lane` lost: not a restarted node that has not
    /// heard of it since (F4; the default: always).
    fn may_claim(&self, _lane: u32) -> bool {
        true
    }

    /// Which timer `timer` is an arming of, if the node numbers its armings: a new arming
    /// of the same timer supersedes the old one, whose expiry the node ignores, so the
    /// driver forgets the old one (the default: every id is its own timer).
    fn timer_slot(_timer: TimerId) -> Option<u64> {
        None
    }
}

/// The value at least two of three copies agree on.
fn read3([a, b, c]: [u32; 3]) -> Option<u32> {
    if a == b || a == c {
        Some(a)
    } else {
        (b == c).then_some(b)
    }
}

/// Whether a token node may promise (majority mode), read from its `Debug` form (recovery's
/// state has no accessor): not one whose quorum says `may_promise: false`.
fn node_may_promise(node: &impl std::fmt::Debug) -> bool {
    !format!("{node:?}").contains("may_promise: false")
}

/// Whether a token node may claim token id `lane` lost, read from its `Debug` form (recovery's
/// per-id state has no accessor): the `lane`-th `may_claim` (true without recovery).
fn lane_may_claim(node: &impl std::fmt::Debug, lane: u32) -> bool {
    let text = format!("{node:?}");
    text.match_indices("may_claim: ")
        .nth(lane as usize)
        .is_none_or(|(at, field)| text[at + field.len()..].starts_with("true"))
}

/// The timer a token node's recovery timer id is an arming of: the id without its arming
/// number. Recovery's ids have bit 63 set and the arming's number in bits 32 to 62
/// (`token::recovery`; pinned by the test kit's `timers_supersede_their_armings` test); the
/// idle pause's id is its own timer.
fn recovery_slot(timer: TimerId) -> Option<u64> {
    const BASE: u64 = 1 << 63;
    (timer.0 & BASE != 0).then_some(timer.0 & !(0x7fff_ffff << 32))
}

impl TokenHarness for reverse_link::Node {
    fn precious(msg: &reverse_link::Message) -> bool {
        msg.is_token()
    }

    fn holds_token(&self) -> bool {
        reverse_link::Node::holds_token(self)
    }

    fn leaving(&self) -> bool {
        reverse_link::Node::leaving(self)
    }

    fn is_token(msg: &reverse_link::Message) -> bool {
        msg.is_token()
    }

    fn check_settled(nodes: &[Self]) -> Result<(), Violation> {
        reverse_link::invariants::check_settled(nodes)
    }

    fn recovery_settings(&self) -> Option<Recovery> {
        self.settings().recovery
    }

    fn restarted_empty(&self, kept: Option<(u16, Vec<Promised>)>) -> Option<Self> {
        let id = self.id();
        let height = Height::new(0, 0, id);
        let config = reverse_link::Config::new(id, self.settings(), 0, height, Vec::new());
        let config = match kept {
            Some((round, promises)) => config.restarted_after(round).with_promises(promises),
            None => config.restarted(),
        };
        reverse_link::Node::new(config).ok()
    }

    fn promise_of(msg: &reverse_link::Message) -> Option<(u32, u32, u32)> {
        match *msg {
            reverse_link::Message::Promise(_, lane, ballot, voter) => {
                Some((lane, read3(ballot)?, voter))
            }
            _ => None,
        }
    }

    fn may_promise(&self) -> bool {
        node_may_promise(self)
    }

    fn is_revoked(&self) -> bool {
        self.revoked()
    }

    fn lanes(&self) -> u32 {
        self.settings().k
    }

    fn token_lanes(&self) -> Vec<u32> {
        self.held_tokens().map(|t| t.lane).collect()
    }

    /// A token whose fence copies do not read still is one: `u32::MAX` stands for its id.
    fn message_lane(msg: &reverse_link::Message) -> Option<u32> {
        match msg {
            reverse_link::Message::Token(_, fence) => {
                Some(fence.read().map_or(u32::MAX, |f| f.lane))
            }
            _ => None,
        }
    }

    fn is_claim(msg: &reverse_link::Message) -> bool {
        matches!(
            msg,
            reverse_link::Message::Claim(..) | reverse_link::Message::Promise(..)
        )
    }

    fn timer_slot(timer: TimerId) -> Option<u64> {
        recovery_slot(timer)
    }

    fn may_claim(&self, lane: u32) -> bool {
        lane_may_claim(self, lane)
    }
}

impl TokenHarness for prioritized::Node {
    /// What the message contributes to the resources in flight before, less after
    /// ([`prioritized::invariants::Tally::of_message`]): a count read at its smaller possible
    /// copy gives up the difference, and a RELEASE whose check word fails (its kind cannot be
    /// trusted, W2) or that is no longer a RELEASE gives up all it carried. A corruption that
    /// makes resources (a TOKEN or RELEASE out of another kind) is not counted here: the
    /// safety check sees it.
    fn lost(before: &prioritized::Message, after: &prioritized::Message, nodes: &[Self]) -> u32 {
        use prioritized::invariants::Tally;
        let k = nodes[0].settings().k;
        let total = |m| Tally::of_message(m, k).total;
        u32::try_from(total(before).saturating_sub(total(after))).unwrap_or(u32::MAX)
    }

    fn check(
        nodes: &[Self],
        channels: &Channels<prioritized::Message>,
        lost: u32,
    ) -> Result<(), Violation> {
        let k = nodes[0].settings().k;
        let capacity = k.checked_sub(lost).ok_or_else(|| {
            let detail = format!("{lost} resources lost of k = {k}");
            Violation::new("resource-count", None, detail)
        })?;
        prioritized::invariants::check_safety(nodes, capacity, channels.iter())
    }

    /// Every open request, and the probe's requests for one resource, must fit in what is
    /// left: a waiting holder whose request exceeds it keeps the token for ever.
    fn live_after_loss(nodes: &[Self], lost: u32) -> bool {
        let left = nodes[0].settings().k.saturating_sub(lost);
        left >= 1
            && nodes
                .iter()
                .all(|n| n.requested().is_none_or(|h| h <= left))
    }

    fn check_settled(nodes: &[Self]) -> Result<(), Violation> {
        prioritized::invariants::check_settled(nodes)
    }

    fn precious(msg: &prioritized::Message) -> bool {
        msg.carries_resources()
    }

    fn holds_token(&self) -> bool {
        prioritized::Node::holds_token(self)
    }

    fn leaving(&self) -> bool {
        prioritized::Node::leaving(self)
    }

    fn is_token(msg: &prioritized::Message) -> bool {
        msg.is_token()
    }

    fn recovery_settings(&self) -> Option<Recovery> {
        self.settings().recovery
    }

    fn restarted_empty(&self, kept: Option<(u16, Vec<Promised>)>) -> Option<Self> {
        let id = self.id();
        let height = Height::new(0, 0, id);
        let config = prioritized::Config::new(id, self.settings(), false, height, Vec::new());
        let config = match kept {
            Some((round, promises)) => config.restarted_after(round).with_promises(promises),
            None => config.restarted(),
        };
        prioritized::Node::new(config).ok()
    }

    fn promise_of(msg: &prioritized::Message) -> Option<(u32, u32, u32)> {
        match *msg {
            prioritized::Message::Promise {
                lane,
                ballot,
                voter,
                ..
            } => Some((lane, read3(ballot)?, voter)),
            _ => None,
        }
    }

    fn may_promise(&self) -> bool {
        node_may_promise(self)
    }

    fn is_revoked(&self) -> bool {
        self.revoked()
    }

    fn units(&self) -> u32 {
        self.settings().k
    }

    fn acting_units(&self) -> u32 {
        self.held()
    }

    fn units_missing(&self) -> bool {
        self.available().is_some_and(|t| t < self.settings().k)
    }

    fn is_claim(msg: &prioritized::Message) -> bool {
        matches!(
            msg,
            prioritized::Message::Claim { .. } | prioritized::Message::Promise { .. }
        )
    }

    fn timer_slot(timer: TimerId) -> Option<u64> {
        recovery_slot(timer)
    }

    fn may_claim(&self, lane: u32) -> bool {
        lane_may_claim(self, lane)
    }
}

/// Nodes, messages in flight, the physical topology, which end knows of which link, which
/// messages were corrupted, what corruption destroyed, and the first contract breach seen (a
/// send over a link its sender does not know, or a valid event rejected): once set, the
/// network stops changing.
#[derive(Clone, Debug)]
pub struct TokenNet<P: TokenHarness> {
    /// The nodes, node `i` at index `i`.
    pub nodes: Vec<P>,
    /// The messages in flight, FIFO per directed link.
    pub channels: Channels<P::Message>,
    /// The physical links.
    pub graph: Graph,
    /// `(a, b)`: `a` has been told its link to `b` is up, and not told it is down since.
    pub up: BTreeSet<(NodeId, NodeId)>,
    /// Per directed link, whether each message in flight was corrupted already.
    pub marks: BTreeMap<(NodeId, NodeId), VecDeque<bool>>,
    /// Whether a message was corrupted in this run (a field or its kind changed).
    pub corrupted: bool,
    /// What the corrupt operation did in this run.
    pub corruptions: Counts,
    /// Whether a link event reached one end before the other in this run.
    pub asymmetric: bool,
    /// Resources destroyed by corruption (prioritized counts).
    pub lost: u32,
    /// The first contract breach seen, if any (a `driver-contract` or `fence-order`
    /// violation): once set, the network stops changing.
    pub fault: Option<Violation>,
    /// Every entry into the critical section, in order: `(node, resources, fence)`.
    pub entries: Vec<(NodeId, u32, Fence)>,
    /// The protected resource: the highest fence of every lane so far. An entry whose fence
    /// is not above it is a contract breach ([`TokenNet::fault`]).
    pub fences: Fences,
    /// Every anomaly reported: `(reporter, peer, kind)`.
    pub anomalies: Vec<(NodeId, NodeId, Anomaly)>,
    /// What the last event applied produced.
    pub last: Vec<Action<P::Message>>,
    /// In hand-driven mode, the link of every message sent, in sending order, for
    /// [`TokenNet::deliver_oldest`] (entries of links drained otherwise are skipped).
    pub order: VecDeque<(NodeId, NodeId)>,
    /// Whether to check safety after every event and panic, with the trace, on a violation
    /// or contract breach ([`TokenNet::checked`]).
    pub checked: bool,
    /// The events applied and what they produced, when tracing (`MANET_MUTEX_TRACE=1`, or
    /// always when [`TokenNet::checked`]).
    pub trace: Option<Vec<String>>,
    /// The run for the viewer (unless `MANET_MUTEX_RECORD=0`): a failure's
    /// [`TokenNet::trace_text`] writes it as a page and names the file. A restart ends it
    /// (the viewer replays events on the first incarnations).
    pub tape: Option<manet_mutex_sim::trace::Tape<P>>,
    /// Each node's armed timers, with their deadlines on [`TokenNet::now`]'s clock.
    pub timers: Vec<BTreeMap<TimerId, u64>>,
    /// The clock of a network with recovery: it stands still while a schedule runs (its
    /// steps take no time) and moves one unit per round of the drain
    /// ([`TokenNet::drain`]), which fires timers at their deadlines.
    pub now: u64,
    /// Which nodes have crashed (and not restarted): they take no event and are left out of
    /// every check.
    pub crashed: Vec<bool>,
    /// Which nodes have taken an event since they started (a node's recovery timers run from
    /// its first event).
    pub started: Vec<bool>,
    /// What the failure faults did and what recovery reported.
    pub failures: Failures,
    /// Every `Report` of recovery: `(node, report)`.
    pub reports: Vec<(NodeId, Report)>,
    /// Every `LeaseExpired`: `(node, fence)`.
    pub lease_ends: Vec<(NodeId, Fence)>,
    /// Each node's side while the network is partitioned ([`TokenNet::partition`]).
    pub sides: Option<Vec<bool>>,
    /// The links the partition cut, formed again by [`TokenNet::merge`].
    pub cut: BTreeSet<(NodeId, NodeId)>,
    /// Each crashed node's neighbours when it crashed, linked again at its restart.
    pub former: Vec<Vec<NodeId>>,
    /// Every `(lane, generation)` made again so far ([`Report::TokenRegenerated`]): one made
    /// twice is a `regeneration` violation (F2: two regenerations never make one generation).
    pub made: BTreeSet<(u32, u32)>,
    /// In majority mode, every `(lane, round)` made so far: one made twice is a
    /// `round-made-twice` violation (F9: at most one generation per round and token id).
    pub rounds: BTreeSet<(u32, u16)>,
    /// In majority mode, each node's stored promises (its last
    /// [`Action::Persist`](manet_mutex::Action::Persist) per token id): what
    /// [`TokenNet::restart`] gives back.
    pub persisted: Vec<BTreeMap<u32, Promised>>,
    /// The nodes acting on the resource: in the critical section, lease not expired, with
    /// the entry's fence and units.
    pub acting: BTreeMap<NodeId, (Fence, u32)>,
    /// When parts of the network last joined ([`TokenNet::merge`], a restart's links), on
    /// [`TokenNet::now`]'s clock.
    pub joined: u64,
    /// Refusals of the protected resource not yet told to the refused node: `(node, fence,
    /// newest admitted)`, told (`Event::Refused`) as soon as the step that entered ends.
    refusals: Vec<(NodeId, Fence, Fence)>,
}

impl<P: TokenHarness> TokenNet<P> {
    /// The network `params` describes on `graph`, every link known to both ends; the error
    /// of building its nodes if the configuration is invalid.
    pub fn new(graph: Graph, params: &Params<P::Settings>) -> Result<Self, Error> {
        let nodes = P::build(&graph, params)?;
        Ok(Self::with_nodes(nodes, graph))
    }

    /// A network of the given nodes (node `i` at index `i`, configured by hand, e.g. with
    /// explicit heights) on `graph`, every link known to both ends, nothing in flight (with
    /// recovery, each node started: [`TokenNet::start`]).
    pub fn with_nodes(nodes: Vec<P>, graph: Graph) -> Self {
        let n = nodes.len();
        let up = graph
            .edges()
            .iter()
            .flat_map(|&(a, b)| [(a, b), (b, a)])
            .collect();
        TokenNet {
            nodes,
            channels: Channels::default(),
            graph,
            up,
            marks: BTreeMap::new(),
            corrupted: false,
            corruptions: Counts::default(),
            asymmetric: false,
            lost: 0,
            fault: None,
            entries: Vec::new(),
            fences: Fences::new(),
            anomalies: Vec::new(),
            last: Vec::new(),
            order: VecDeque::new(),
            checked: false,
            trace: None,
            tape: None,
            timers: vec![BTreeMap::new(); n],
            now: 0,
            crashed: vec![false; n],
            started: vec![false; n],
            failures: Failures::default(),
            reports: Vec::new(),
            lease_ends: Vec::new(),
            sides: None,
            cut: BTreeSet::new(),
            former: vec![Vec::new(); n],
            made: BTreeSet::new(),
            rounds: BTreeSet::new(),
            persisted: vec![BTreeMap::new(); n],
            acting: BTreeMap::new(),
            joined: 0,
            refusals: Vec::new(),
        }
        .traced(std::env::var_os("MANET_MUTEX_TRACE").is_some())
        .started()
    }

    /// Keep the trace and the recording from now on, if `on`.
    fn traced(mut self, on: bool) -> Self {
        let graph = &self.graph;
        let links = || graph.edges().iter().map(|(a, b)| (a.0, b.0)).collect();
        crate::driver::start_tracing(&mut self.trace, &mut self.tape, &self.nodes, links, on);
        self
    }

    /// The network of `settings` on nodes `0..n` linked by `edges`, with the tokens at
    /// `holders`, in hand-driven mode ([`TokenNet::checked`]); the error of building its
    /// nodes if the configuration is invalid.
    pub fn with_edges(
        n: u32,
        edges: &[(NodeId, NodeId)],
        holders: &[NodeId],
        settings: P::Settings,
    ) -> Result<Self, Error> {
        let graph = Graph::from_edges(n as usize, edges);
        Ok(Self::new(graph, &Params::new(settings, holders.to_vec()))?.checked())
    }

    /// Hand-driven mode, for tests that stage a scenario: safety is checked after every
    /// event, and a violation or contract breach panics at once with the trace.
    pub fn checked(mut self) -> Self {
        self.checked = true;
        self.traced(true)
    }

    /// Node `id`.
    pub fn node(&self, id: NodeId) -> &P {
        &self.nodes[id.index()]
    }

    /// The trace, if one was kept (`MANET_MUTEX_TRACE=1`), for a failure message; with it, the
    /// run is written as a page for the viewer ([`manet_mutex_sim::trace`]) and the message names the file.
    pub fn trace_text(&self) -> String {
        let text = match &self.trace {
            Some(trace) => {
                let flying: Vec<_> = self.channels.iter().collect();
                format!(
                    "{}\nin flight: {flying:?}\nnodes: {:#?}",
                    trace.join("\n"),
                    self.nodes
                )
            }
            None => "(set MANET_MUTEX_TRACE=1 for the trace and a page for the viewer)".into(),
        };
        text + &crate::driver::write_page(self.tape.as_ref())
    }

    /// Add a line to the trace, if one is kept.
    pub fn note(&mut self, line: impl FnOnce() -> String) {
        if let Some(trace) = &mut self.trace {
            trace.push(line());
        }
    }

    /// Feed `event` to `at` and carry out its actions. Local misuse returns the node's
    /// `Err` (and the node must be unchanged); a send over a link the sender does not know is a
    /// contract breach (recorded in [`TokenNet::fault`]).
    pub fn apply(&mut self, at: NodeId, event: Event<P::Message>) -> Result<(), Error> {
        if self.crashed[at.index()] {
            // A crashed node takes nothing (the harness never offers it an event).
            return Ok(());
        }
        let step = self.step_of(at, &event);
        let Some(outcome) = self.handle(at, event) else {
            return Ok(());
        };
        let actions = outcome?;
        self.started[at.index()] = true;
        for action in &actions {
            if let Err(breach) = self.carry_out(at, action, &step) {
                self.breach(breach);
                return Ok(());
            }
        }
        self.last = actions;
        if self.checked {
            if let Err(e) = self.check_safety() {
                panic!("invariant violated: {e}\n{}", self.trace_text());
            }
        }
        // The resource answers a refused entry as a real one would (F10).
        for (node, fence, newest) in core::mem::take(&mut self.refusals) {
            self.apply_valid(node, Event::Refused { fence, newest });
        }
        Ok(())
    }

    /// Carry out one action of `at`, taken in `step`: a contract breach is its `Err`.
    fn carry_out(
        &mut self,
        at: NodeId,
        action: &Action<P::Message>,
        step: &Step,
    ) -> Result<(), Violation> {
        match action {
            Action::Send { to, msg } => self.send(at, *to, msg),
            Action::EnterCritical { resources, fence } => self.enter(at, *resources, *fence),
            Action::Anomaly { from, kind } => {
                self.anomalies.push((at, *from, *kind));
                self.explain(at, *from, *kind, step)
            }
            Action::SetTimer { timer, after } => {
                let deadline = self.now.saturating_add(*after);
                let armed = &mut self.timers[at.index()];
                if let Some(slot) = P::timer_slot(*timer) {
                    armed.retain(|&t, _| P::timer_slot(t) != Some(slot));
                }
                armed.insert(*timer, deadline);
                Ok(())
            }
            Action::CancelTimer { timer } => {
                self.timers[at.index()].remove(timer);
                Ok(())
            }
            Action::LeaseExpired { fence } => self.lease_expired(at, *fence),
            Action::Report(report) => self.report(at, *report, step),
            Action::Persist { promised } => {
                self.persisted[at.index()].insert(promised.lane, *promised);
                Ok(())
            }
            other => Err(contract(
                at,
                format!("returned an action this driver does not know: {other:?}"),
            )),
        }
    }

    /// `at` sends `msg` to `to`: onto their channel, if `at` knows the link.
    fn send(&mut self, at: NodeId, to: NodeId, msg: &P::Message) -> Result<(), Violation> {
        if let Some((lane, ballot, voter)) = P::promise_of(msg) {
            let stored = self.persisted[at.index()].get(&lane).map(|p| p.ballot);
            if voter == at.0 && stored != Some(ballot) {
                let detail = format!(
                    "sent its promise of {ballot:#x} for lane {lane} before persisting it (stored: {stored:?})"
                );
                return Err(contract(at, detail));
            }
        }
        if !self.up.contains(&(at, to)) {
            let detail = format!("sent {msg:?} to {to:?} over a link it does not know");
            return Err(contract(at, detail));
        }
        self.channels.push(at, to, msg.clone());
        self.marks.entry((at, to)).or_default().push_back(false);
        if self.checked {
            self.order.push_back((at, to));
        }
        Ok(())
    }

    /// `at` enters the critical section with `resources` and `fence`, which must be above
    /// the highest fence of its lane; with recovery, the protected resource may refuse a fence
    /// of a generation older than the newest it admitted (rule (a): counted in
    /// [`Failures::refused`]).
    fn enter(&mut self, at: NodeId, resources: u32, fence: Fence) -> Result<(), Violation> {
        self.entries.push((at, resources, fence));
        if self.recovery().is_some() {
            self.acting.insert(at, (fence, resources));
        }
        match self.fences.admit(fence) {
            Ok(()) => Ok(()),
            Err(highest) if self.refusal_allowed(fence, highest) => {
                self.failures.refused += 1;
                self.refusals
                    .push((at, fence, Fence::new(fence.lane, highest)));
                Ok(())
            }
            Err(highest) => Err(fence_went_back(at, fence, highest)),
        }
    }

    /// Feed an event the caller knows to be valid: a rejection is a contract breach
    /// ([`Self::fault`], or a panic in hand-driven mode).
    pub fn apply_valid(&mut self, at: NodeId, event: Event<P::Message>) {
        if let Err(e) = self.apply(at, event) {
            self.breach(contract(at, format!("rejected a valid event: {e}")));
        }
    }

    /// The section `node` is in.
    pub fn status(&self, node: NodeId) -> Status {
        self.nodes[node.index()].status()
    }

    /// `node` asks for the critical section; it must be in its remainder section.
    pub fn request(&mut self, node: NodeId, request: CsRequest) {
        self.apply_valid(node, Event::Request(request));
    }

    /// `node` leaves the critical section; it must be in it.
    pub fn release(&mut self, node: NodeId) {
        self.acting.remove(&node);
        self.apply_valid(node, Event::Release);
    }

    /// The directed links with a message in flight, in a fixed (sorted) order.
    pub fn busy_links(&self) -> Vec<(NodeId, NodeId)> {
        let mut links: Vec<_> = self.channels.iter().map(|(f, t, _)| (f, t)).collect();
        links.dedup();
        links
    }

    /// Deliver the oldest message on `from → to`; whether there was one.
    pub fn deliver(&mut self, from: NodeId, to: NodeId) -> bool {
        let Some(msg) = self.channels.pop(from, to) else {
            return false;
        };
        if let Some(marks) = self.marks.get_mut(&(from, to)) {
            marks.pop_front();
        }
        self.apply_valid(to, Event::Receive { from, msg });
        true
    }

    /// Deliver the heads of the busy links round-robin until nothing is in flight, then
    /// [`TokenNet::check_safety`]; a `quiescence` violation after `limit` deliveries (a
    /// message storm: KRLF's idle tokens never stop).
    pub fn run(&mut self, limit: usize) -> Result<(), Violation> {
        let mut delivered = 0;
        loop {
            let busy = self.busy_links();
            if busy.is_empty() {
                return self.check_safety();
            }
            for (from, to) in busy {
                self.deliver(from, to);
                delivered += 1;
            }
            if delivered > limit {
                let detail = format!("still busy after {limit} deliveries");
                return Err(Violation::new(rule::QUIESCENCE, None, detail));
            }
        }
    }

    /// Deliver the oldest message still in flight (hand-driven mode: a fair, globally FIFO
    /// scheduler); its link, or `None` if nothing is in flight.
    pub fn deliver_oldest(&mut self) -> Option<(NodeId, NodeId)> {
        while let Some((from, to)) = self.order.pop_front() {
            if self.deliver(from, to) {
                return Some((from, to));
            }
        }
        None
    }

    /// The messages in flight on `from → to`, oldest first.
    pub fn pending(&self, from: NodeId, to: NodeId) -> Vec<&P::Message> {
        self.channels
            .iter()
            .filter(|&(f, t, _)| (f, t) == (from, to))
            .map(|(.., msg)| msg)
            .collect()
    }

    /// Links that may fail now: idle in both directions and not bridges (with recovery: not
    /// bridges of the live nodes' graph).
    pub fn removable_links(&self) -> Vec<(NodeId, NodeId)> {
        if self.recovery().is_some() {
            return self.removable_live_links();
        }
        let mut links: Vec<_> = self
            .graph
            .edges()
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .filter(|&(a, b)| {
                self.channels.idle(a, b) && self.graph.is_connected_without(Some((a, b)))
            })
            .collect();
        links.sort_unstable();
        links
    }

    /// Pairs of nodes that may be linked now: not linked, both ends told of the last failure,
    /// nothing of the last incarnation in flight, both live and on one side of the partition.
    /// In a fixed order.
    pub fn absent_links(&self) -> Vec<(NodeId, NodeId)> {
        let n = self.nodes.len() as u32;
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (NodeId(a), NodeId(b))))
            .filter(|&(a, b)| {
                !self.graph.has(a, b)
                    && !self.up.contains(&(a, b))
                    && !self.up.contains(&(b, a))
                    && self.channels.idle(a, b)
                    && self.may_link(a, b)
            })
            .collect()
    }

    /// The notices not given yet: `(a, b)` where `a` has not been told the current state of
    /// its link to `b`. In a fixed order.
    pub fn pending_notices(&self) -> Vec<(NodeId, NodeId)> {
        let n = self.nodes.len() as u32;
        (0..n)
            .flat_map(|a| (0..n).map(move |b| (NodeId(a), NodeId(b))))
            .filter(|&(a, b)| a != b && self.up.contains(&(a, b)) != self.graph.has(a, b))
            .collect()
    }

    /// Tell `a` the current state of its link to `b`.
    pub fn notice(&mut self, a: NodeId, b: NodeId) {
        if self.graph.has(a, b) {
            if self.up.insert((a, b)) {
                self.apply_valid(a, Event::LinkUp(b));
            }
        } else if self.up.remove(&(a, b)) {
            self.apply_valid(a, Event::LinkDown(b));
        }
    }

    /// The link fails; both ends are told in this one step.
    pub fn fail(&mut self, a: NodeId, b: NodeId) {
        self.graph.remove(a, b);
        self.notice(a, b);
        self.notice(b, a);
    }

    /// The link fails; only `a` is told now.
    pub fn fail_at(&mut self, a: NodeId, b: NodeId) {
        self.asymmetric = true;
        self.graph.remove(a, b);
        self.notice(a, b);
    }

    /// A link forms; both ends are told in this one step.
    pub fn form(&mut self, a: NodeId, b: NodeId) {
        self.graph.add(a, b);
        self.notice(a, b);
        self.notice(b, a);
    }

    /// A link forms; only `a` is told now.
    pub fn form_at(&mut self, a: NodeId, b: NodeId) {
        self.asymmetric = true;
        self.graph.add(a, b);
        self.notice(a, b);
    }

    /// The messages in flight not corrupted yet, as `(from, to, position)`, in a fixed order.
    pub fn corruptible(&self) -> Vec<(NodeId, NodeId, usize)> {
        self.marks
            .iter()
            .flat_map(|(&(f, t), marks)| {
                marks
                    .iter()
                    .enumerate()
                    .filter(|(_, &m)| !m)
                    .map(move |(i, _)| (f, t, i))
            })
            .collect()
    }

    /// Rewrite field `field` of the `i`-th message on `from → to` to `value`. Returns
    /// whether anything changed (a message is corrupted at most once).
    pub fn corrupt(
        &mut self,
        from: NodeId,
        to: NodeId,
        i: usize,
        field: usize,
        value: Value,
    ) -> bool {
        self.corrupt_as(from, to, i, Corruption::Field { field, value }) == Outcome::Changed
    }

    /// Corrupt the `i`-th message on `from → to` as `how` says (see the
    /// module docs): a field, its kind, or bits of its frame. A message is corrupted at
    /// most once (`Unchanged` if it was already). A flipped frame that fails to decode
    /// (`Dropped`) is retransmitted by the link session: the original is delivered and nothing
    /// else changes.
    pub fn corrupt_as(&mut self, from: NodeId, to: NodeId, i: usize, how: Corruption) -> Outcome {
        let already = self
            .marks
            .get(&(from, to))
            .and_then(|m| m.get(i))
            .is_none_or(|&m| m);
        if already || self.fault.is_some() {
            return Outcome::Unchanged;
        }
        let Some(msg) = self.channels.get_mut(from, to, i) else {
            return Outcome::Unchanged;
        };
        let before = msg.clone();
        let outcome = msg.corrupt_as(how);
        let after = msg.clone();
        self.corruptions.count(&how, outcome);
        match outcome {
            Outcome::Changed => {}
            Outcome::Dropped(e) => {
                self.note(|| {
                    format!(
                        "flipped {how:?} of the frame of {from:?} -> {to:?} #{i} ({before:?}): \
                         {e}, retransmitted by the link session"
                    )
                });
                return outcome;
            }
            Outcome::Unchanged => return outcome,
        }
        self.marks.get_mut(&(from, to)).unwrap()[i] = true;
        self.corrupted = true;
        self.lost += P::lost(&before, &after, &self.nodes);
        self.note(|| {
            format!("corrupted {from:?} -> {to:?} #{i} ({how:?}): {before:?} into {after:?}")
        });
        outcome
    }

    /// The algorithm's safety invariants (knowing what corruption destroyed), plus the
    /// contract breaches recorded by `apply` ([`TokenNet::fault`]). Once a failure fault
    /// destroyed a token or resources, or a timer fired at will, or recovery made or
    /// destroyed a token, the network-wide counts no longer hold: then each live node's own
    /// invariants, and, while every timer has fired on time, at most `k` units acting per
    /// connected part (see [`TokenNet::crash`]).
    pub fn check_safety(&self) -> Result<(), Violation> {
        if let Some(fault) = &self.fault {
            return Err(fault.clone());
        }
        if self.intact() {
            P::check(&self.nodes, &self.channels, self.lost)
        } else {
            self.check_failing()
        }
    }

    fn anyone_busy(&self) -> bool {
        busy(&self.nodes).next().is_some()
    }

    /// Liveness as a check on one state: with no further requests, link changes or
    /// corruption, give every pending notice, deliver every channel's head in a fixed
    /// round-robin order (fair, so a token circulating between two KRLF nodes cannot starve a
    /// third channel) and release every node in the critical section, for at most `rounds`
    /// rounds. Every waiting node must have entered by then, and the algorithm's drained-state
    /// checks must hold (for KRL: quiet, with a token-oriented DAG). After a corruption, every
    /// node must also be served when it asks once more (and only `check_settled` holds at
    /// quiescence). Liveness is not required where corruption destroyed what it needs
    /// ([`TokenHarness::live_after_loss`]); safety is checked after every round either way.
    ///
    /// The error is the algorithm's violation, or the driver's own (`liveness` when a waiting
    /// node is not served), with the trace added to its detail.
    ///
    /// A network with recovery drains on its clock instead ([`TokenNet::crash`] describes
    /// the faults and what is checked): the partition heals, crashed nodes stay down, and each
    /// round is one time unit in which every node in the critical section leaves, every
    /// message in flight is delivered and every timer whose deadline has come fires, in
    /// deadline order. Every live waiting node must enter, within at least `rounds` rounds
    /// (more if recovery needs them: [`TokenNet::recovery_rounds`]); then, after the network
    /// has run for two silences and a claim wait with nobody asking, every connected part of
    /// the live nodes in which a node has started must hold one token of each id (KRL: `k`,
    /// the prioritized algorithm: one).
    pub fn drain(&self, rounds: usize) -> Result<(), Violation> {
        self.clone().settle(rounds)
    }

    /// [`TokenNet::drain`] on this network itself rather than on a copy, for tests that
    /// look at the result (entry order, final heights).
    pub fn settle(&mut self, rounds: usize) -> Result<(), Violation> {
        self.settle_here(rounds)
            .map_err(|v| amend(v, format_args!("\n{}", self.trace_text())))
    }

    fn settle_here(&mut self, rounds: usize) -> Result<(), Violation> {
        if self.recovery().is_some() {
            return self.settle_recovering(rounds);
        }
        let required = P::live_after_loss(&self.nodes, self.lost);
        match self.settle_refreshed(rounds) {
            Err(v) if !required && v.rule == rule::LIVENESS => return Ok(()),
            Ok(()) if !required => return Ok(()),
            outcome => outcome?,
        }
        if self.corrupted || self.asymmetric {
            for i in 0..self.nodes.len() {
                let node = NodeId(i as u32);
                if self.status(node) == Status::Remainder && !self.nodes[i].leaving() {
                    self.request(node, CsRequest::ONE);
                }
            }
            self.settle_refreshed(rounds)
                .map_err(|v| amend(v, ", when every node asked once more"))?;
        }
        Ok(())
    }

    /// `serve`; after a corruption, when that starves, the link layer confirms every
    /// link once (a keepalive: each end re-announces its height, which corrects any view a
    /// corrupted height left wrong) and it is tried again. A corrupted height can leave a
    /// view that nothing else ever refreshes, and wrong views can make waiting nodes ask one
    /// another in a circle (docs/ALGORITHMS.md, T6).
    fn settle_refreshed(&mut self, rounds: usize) -> Result<(), Violation> {
        match self.serve(rounds) {
            Err(v) if self.corrupted && v.rule == rule::LIVENESS => {
                self.note(|| "keepalive on every link".into());
                for (a, b) in self.up.clone() {
                    self.apply_valid(a, Event::LinkUp(b));
                }
                self.serve(rounds)
                    .map_err(|v| amend(v, ", even after a keepalive on every link"))
            }
            outcome => outcome,
        }
    }

    /// Drain rounds until nobody waits (see [`TokenNet::drain`]).
    fn serve(&mut self, rounds: usize) -> Result<(), Violation> {
        for _ in 0..rounds {
            for (a, b) in self.pending_notices() {
                self.notice(a, b);
            }
            if !self.anyone_busy() {
                if self.channels.is_empty() {
                    break;
                }
                // Every request is served. An algorithm that never goes quiet (KRLF keeps
                // idle tokens moving) accepts this state as drained; KRL must go quiet first.
                if P::check_drained(&self.nodes, &self.channels, false).is_ok() {
                    return self.check_safety();
                }
            }
            for i in 0..self.nodes.len() {
                let node = NodeId(i as u32);
                if self.status(node) == Status::Critical {
                    self.release(node);
                }
            }
            for (from, to) in self.busy_links() {
                self.deliver(from, to);
            }
            self.check_safety()?;
        }
        if self.anyone_busy() {
            let stuck: Vec<_> = busy(&self.nodes).map(|n| (n.id(), n.status())).collect();
            let detail = format!("starvation: {stuck:?} after {rounds} drain rounds");
            return Err(Violation::new(rule::LIVENESS, None, detail));
        }
        let quiet = self.channels.is_empty();
        if (self.corrupted || self.asymmetric) && quiet {
            P::check_settled(&self.nodes)
        } else {
            P::check_drained(&self.nodes, &self.channels, quiet)
        }
    }
}
