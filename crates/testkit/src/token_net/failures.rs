//! The failure model's faults in a [`TokenNet`] with recovery (issue 23; `docs/ALGORITHMS.md`,
//! F8): crash-stop, crash-restart, partitions and merges, a token lost on a breaking link,
//! timers fired at will, and the drain on the network's clock that checks liveness (d).

use std::collections::BTreeSet;
use std::ops::AddAssign;

use manet_mutex::token::Recovery;
use manet_mutex::{Anomaly, CsRequest, Event, Fence, NodeId, Report, Status, TimerId, Violation};

use super::{TokenHarness, TokenNet};
use crate::driver::{amend, contract, rule};

/// The recovery settings the test kit's recovery networks run ([`TokenNet`]'s drain delivers
/// every message within one time unit and fires every timer on time, so these bounds hold in
/// it): beacons every 2, leases of 3, a hop bound of 2 (twice what the drain takes), a
/// diameter of `nodes − 1` hops (at least 1), the default clock drift.
pub fn harness_recovery(nodes: usize) -> Recovery {
    let diameter = u32::try_from(nodes.saturating_sub(1))
        .unwrap_or(u32::MAX)
        .max(1);
    Recovery::new(2, 3, 2, diameter)
}

/// [`harness_recovery`] in majority mode over all `nodes` (F9): a part makes a token only with
/// more than half of them.
pub fn harness_majority(nodes: usize) -> Recovery {
    harness_recovery(nodes).with_majority(u32::try_from(nodes).unwrap_or(u32::MAX))
}

/// What the failure faults did in a run, and what recovery reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Failures {
    /// Crashes (a restart of a live node counts one).
    pub crashes: u32,
    /// Restarts with empty state.
    pub restarts: u32,
    /// Partitions made.
    pub partitions: u32,
    /// Partitions healed.
    pub merges: u32,
    /// Links broken with a token on them.
    pub breaks: u32,
    /// Timers fired at will, outside the drain: each breaks the bounds of the run's clocks.
    pub fired: u32,
    /// Tokens, and messages carrying resources, that a failure destroyed (held by a crashed
    /// node, or in flight on a link that crashed, broke or was cut).
    pub lost: u32,
    /// Tokens made again by a claim ([`Report::TokenRegenerated`] from a node without the
    /// token).
    pub regenerated: u32,
    /// Prioritized turnovers: a holder started a new generation ([`Report::TokenRegenerated`]
    /// from the token's holder, F7).
    pub turnovers: u32,
    /// Tokens of an older generation destroyed ([`Report::TokenDestroyed`]).
    pub destroyed: u32,
    /// Nodes that reported [`Report::Left`] (L4).
    pub left: u32,
    /// `LeaseExpired` actions.
    pub lease_ends: u32,
    /// Entries whose fence the protected resource refused: their generation was older than
    /// one it admitted (rule (a) allows it).
    pub refused: u32,
    /// Tokens moved to a new generation after a refusal ([`Report::TokenRenumbered`]).
    pub renumbered: u32,
}

/// Messages in flight beyond which a drain is a message storm: a few hundred at most are in
/// flight in a healthy network of six nodes.
pub const STORM: usize = 5_000;

impl AddAssign for Failures {
    fn add_assign(&mut self, o: Self) {
        self.crashes += o.crashes;
        self.restarts += o.restarts;
        self.partitions += o.partitions;
        self.merges += o.merges;
        self.breaks += o.breaks;
        self.fired += o.fired;
        self.lost += o.lost;
        self.regenerated += o.regenerated;
        self.turnovers += o.turnovers;
        self.destroyed += o.destroyed;
        self.left += o.left;
        self.lease_ends += o.lease_ends;
        self.refused += o.refused;
        self.renumbered += o.renumbered;
    }
}

/// What the driver notes of an event before a node takes it.
#[derive(Debug, Default)]
pub(super) struct Step {
    /// The event is a recovery claim's delivery.
    claim: bool,
    /// The token ids the node held before.
    held: Vec<u32>,
    /// The event delivers a token: a token made in this step is the turnover of the one
    /// that arrived (the prioritized turnover of a watch that ran out while the token was
    /// away, `docs/ALGORITHMS.md` F11); a claim makes one only when its claim wait ends.
    token_in: bool,
}

/// The undirected link `a`–`b`, its smaller end first.
fn key(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    (a.min(b), a.max(b))
}

impl<P: TokenHarness> TokenNet<P> {
    /// The nodes' token recovery, `None` without it (then no failure fault does anything).
    pub fn recovery(&self) -> Option<Recovery> {
        self.nodes.first().and_then(P::recovery_settings)
    }

    /// Whether `node` is live (not crashed).
    pub fn live(&self, node: NodeId) -> bool {
        !self.crashed[node.index()]
    }

    /// The live nodes, in id order.
    pub fn live_nodes(&self) -> Vec<NodeId> {
        (0..self.nodes.len() as u32)
            .map(NodeId)
            .filter(|&v| self.live(v))
            .collect()
    }

    /// Whether every timer so far fired on time: none fired at will ([`TokenNet::fire`]).
    /// Such a run models clocks that respect the drift bound; a timer fired at will models
    /// one that broke it, after which only rule (a) and each node's own invariants hold.
    pub fn timely(&self) -> bool {
        self.failures.fired == 0
    }

    /// Whether the network-wide counts still hold: no recovery, or nothing lost to a
    /// failure, no timer fired at will, and no token made again or destroyed.
    pub(super) fn intact(&self) -> bool {
        let f = &self.failures;
        self.recovery().is_none()
            || (f.crashes == 0
                && f.lost == 0
                && f.fired == 0
                && f.regenerated == 0
                && f.turnovers == 0
                && f.destroyed == 0)
    }

    /// What the driver needs to know of `event` at `at` before `at` takes it.
    pub(super) fn step_of(&self, at: NodeId, event: &Event<P::Message>) -> Step {
        if self.recovery().is_none() {
            return Step::default();
        }
        Step {
            claim: matches!(event, Event::Receive { msg, .. } if P::is_claim(msg)),
            held: self.nodes[at.index()].token_lanes(),
            token_in: matches!(event, Event::Receive { msg, .. } if P::is_token(msg)),
        }
    }

    /// With recovery, every node started ([`TokenNet::start`]), as a real embedder's nodes
    /// are by their first events.
    pub(super) fn started(mut self) -> Self {
        if self.recovery().is_some() {
            for v in 0..self.nodes.len() as u32 {
                self.start(NodeId(v));
            }
        }
        self
    }

    /// The embedder starts node `v`: its recovery timers run from its first event, so it
    /// is fed the expiry of a timer it never set (ignored, like any stale timer), after which
    /// a holder beacons its tokens and every node's silence runs. The networks with recovery
    /// start every node at construction and at its restart, as a real embedder's are started
    /// by their first events; a node that never started would keep a token unheard of.
    pub fn start(&mut self, v: NodeId) {
        if self.recovery().is_some() && !self.started[v.index()] {
            self.apply_valid(v, Event::Timeout(TimerId(u64::MAX)));
        }
    }

    /// Whether `a` and `b` may be linked: both live, on one side of the partition.
    pub(super) fn may_link(&self, a: NodeId, b: NodeId) -> bool {
        let side = |v: NodeId| self.sides.as_ref().is_some_and(|s| s[v.index()]);
        self.live(a) && self.live(b) && side(a) == side(b)
    }

    /// [`TokenNet::removable_links`] with recovery: idle links whose ends stay linked by
    /// another path (crashed nodes have no links, so the whole graph is no longer connected).
    pub(super) fn removable_live_links(&self) -> Vec<(NodeId, NodeId)> {
        let mut links: Vec<_> = self
            .graph
            .edges()
            .iter()
            .map(|&(a, b)| key(a, b))
            .filter(|&(a, b)| self.channels.idle(a, b) && self.graph.linked_without(a, b))
            .collect();
        links.sort_unstable();
        links
    }

    /// Whether the protected resource may refuse `fence` after admitting `highest` in its
    /// lane: with recovery, if its generation is older than `highest`'s (rule (a)).
    pub(super) fn refusal_allowed(&self, fence: Fence, highest: u64) -> bool {
        let newest = Fence::new(fence.lane, highest).generation();
        self.recovery().is_some() && fence.generation() < newest
    }

    /// With recovery and no corruption, a suspect anomaly must be one the failure model
    /// explains: a claim's round out of reach (`OutOfRange`, more than 64 rounds above the
    /// round the receiver knows) after a timer fired at will or a node restarted (it knows
    /// round 0).
    pub(super) fn explain(
        &self,
        at: NodeId,
        from: NodeId,
        kind: Anomaly,
        step: &Step,
    ) -> Result<(), Violation> {
        if self.recovery().is_none() || self.corrupted || P::anomaly_severity(kind).is_noise() {
            return Ok(());
        }
        let explained = kind == Anomaly::OutOfRange
            && step.claim
            && (!self.timely() || self.failures.restarts > 0);
        if explained {
            return Ok(());
        }
        let detail = format!("reported {kind:?} from {from:?}, which no failure explains");
        Err(Violation::new(rule::SUSPECT_ANOMALY, Some(at), detail))
    }

    /// `at` was told its lease under `fence` ended: it must be acting under that fence.
    pub(super) fn lease_expired(&mut self, at: NodeId, fence: Fence) -> Result<(), Violation> {
        self.lease_ends.push((at, fence));
        self.failures.lease_ends += 1;
        match self.acting.remove(&at) {
            Some((entered, _)) if entered == fence => Ok(()),
            other => Err(contract(
                at,
                format!("told LeaseExpired under {fence:?} while acting under {other:?}"),
            )),
        }
    }

    /// A recovery report of `at`, taken in `step`. A token made again by a claim in a run
    /// whose clocks kept the bounds, in which no failure destroyed anything and the network
    /// never split, is a `regeneration` violation: every node hears of a live token within
    /// the silence (F3).
    pub(super) fn report(
        &mut self,
        at: NodeId,
        report: Report,
        step: &Step,
    ) -> Result<(), Violation> {
        self.reports.push((at, report));
        match report {
            Report::TokenRegenerated { fence } => {
                let round = (fence.generation() >> 16) as u16;
                let majority = self.recovery().is_some_and(|r| r.majority.is_some());
                if majority && !self.rounds.insert((fence.lane, round)) {
                    let detail = format!("made {fence:?}: its round {round} was made before");
                    return Err(Violation::new(rule::ROUND_MADE_TWICE, Some(at), detail));
                }
                if !self.made.insert((fence.lane, fence.generation())) {
                    let detail = format!("made {fence:?} again: its generation was made before");
                    return Err(Violation::new(rule::REGENERATION, Some(at), detail));
                }
                if step.held.contains(&fence.lane) || step.token_in {
                    self.failures.turnovers += 1;
                    return Ok(());
                }
                self.failures.regenerated += 1;
                let f = &self.failures;
                if self.timely() && f.crashes == 0 && f.lost == 0 && f.partitions == 0 {
                    let detail = format!(
                        "made {fence:?} again though no token was lost and every timer kept time"
                    );
                    return Err(Violation::new(rule::REGENERATION, Some(at), detail));
                }
                Ok(())
            }
            Report::TokenRenumbered { fence } => {
                // A refusal moved a held token: no new token, but a generation of its own.
                if !self.made.insert((fence.lane, fence.generation())) {
                    let detail = format!("moved to {fence:?}, a generation made before");
                    return Err(Violation::new(rule::REGENERATION, Some(at), detail));
                }
                self.failures.renumbered += 1;
                Ok(())
            }
            Report::TokenDestroyed { .. } => {
                self.failures.destroyed += 1;
                Ok(())
            }
            Report::Left => {
                // L4: once, and only with no token held here.
                let again = self.reports[..self.reports.len() - 1].contains(&(at, Report::Left));
                if again
                    || self.nodes[at.index()].holds_token()
                    || !self.nodes[at.index()].leaving()
                {
                    let detail = format!(
                        "reported Left (again: {again}) holding a token: {}, leaving: {}",
                        self.nodes[at.index()].holds_token(),
                        self.nodes[at.index()].leaving()
                    );
                    return Err(Violation::new("leave", Some(at), detail));
                }
                self.failures.left += 1;
                Ok(())
            }
            other => Err(contract(
                at,
                format!("reported {other:?}, which no token algorithm reports"),
            )),
        }
    }

    /// Safety once failures broke the network-wide counts: every live node's own invariants
    /// (not while it is in the critical section on a destroyed token: it holds nothing for
    /// the entry, by design), and while every timer kept time, at most `k` units acting in
    /// each connected part (rule (b); across parts lease mode promises nothing).
    pub(super) fn check_failing(&self) -> Result<(), Violation> {
        for v in self.live_nodes() {
            let node = &self.nodes[v.index()];
            if node.status() == Status::Critical && node.is_revoked() {
                continue;
            }
            node.check_node()?;
        }
        if self.exclusion_holds() {
            self.check_exclusion()?;
        }
        Ok(())
    }

    /// Whether rule (b) is owed per part now: every timer kept time, and either no token was
    /// made again yet (only the first generation exists) or two silences have passed since
    /// parts last joined (a merge or a restart's links): until the newer generation's beacons
    /// destroy the older, both may grant (lease mode promises nothing across a partition).
    fn exclusion_holds(&self) -> bool {
        let settled = self
            .recovery()
            .is_some_and(|r| self.now >= self.joined.saturating_add(r.silence().saturating_mul(2)));
        self.timely() && (self.made.is_empty() || settled)
    }

    /// Rule (b) per connected part: the units of the nodes acting there are at most `k`
    /// ([`Self::exclusion_holds`] says when it is owed).
    fn check_exclusion(&self) -> Result<(), Violation> {
        let units = self.nodes.first().map_or(0, P::units);
        for part in self.parts() {
            let acting: u32 = part
                .iter()
                .filter_map(|v| self.acting.get(v))
                .map(|&(_, u)| u)
                .sum();
            if acting > units {
                let holders: Vec<_> = part
                    .iter()
                    .filter_map(|v| self.acting.get(v).map(|a| (*v, *a)))
                    .collect();
                let detail = format!("{acting} units acting in one part, k = {units}: {holders:?}");
                return Err(Violation::new(rule::LEASE_EXCLUSION, None, detail));
            }
        }
        Ok(())
    }

    /// The connected parts of the live nodes (over the physical links), each in id order,
    /// ordered by their smallest node.
    pub fn parts(&self) -> Vec<Vec<NodeId>> {
        let mut seen = vec![false; self.nodes.len()];
        let mut parts = Vec::new();
        for start in self.live_nodes() {
            if seen[start.index()] {
                continue;
            }
            seen[start.index()] = true;
            let mut part = vec![start];
            let mut i = 0;
            while i < part.len() {
                let v = part[i];
                i += 1;
                for w in self.graph.neighbors(v) {
                    if !seen[w.index()] && self.live(w) {
                        seen[w.index()] = true;
                        part.push(w);
                    }
                }
            }
            part.sort_unstable();
            parts.push(part);
        }
        parts
    }

    /// Node `x` crashes for good (crash-stop): it takes no event any more, its timers die,
    /// the tokens it holds and everything on its links are lost, and each neighbour that knew
    /// a link to it is told `LinkDown` now. Nothing happens without recovery.
    ///
    /// The failure faults of a network with recovery ([`TokenNet::crash`],
    /// [`TokenNet::restart`], [`TokenNet::partition`], [`TokenNet::merge`],
    /// [`TokenNet::break_link`], [`TokenNet::fire`]) and what is checked: after every step,
    /// rule (a) (an entry's fence is refused only if its generation is older than one the
    /// resource admitted, or was made twice), the network-wide invariants until a failure
    /// destroys something or a timer fires at will, and from then on each live node's own
    /// invariants and, while no timer fired at will, rule (b) per connected part; no suspect
    /// anomaly but those the failure model explains ([`Failures`] counts what happened). The
    /// drain ([`TokenNet::drain`]) checks liveness (d) and the tokens per part.
    pub fn crash(&mut self, x: NodeId) {
        if self.recovery().is_none() || !self.live(x) || self.fault.is_some() {
            return;
        }
        self.note(|| format!("{x:?} crashes"));
        self.crashed[x.index()] = true;
        self.failures.crashes += 1;
        self.failures.lost += self.nodes[x.index()].token_lanes().len() as u32;
        let n = self.nodes.len() as u32;
        let peers: Vec<NodeId> = (0..n)
            .map(NodeId)
            .filter(|&y| {
                y != x
                    && (self.graph.has(x, y)
                        || self.up.contains(&(x, y))
                        || self.up.contains(&(y, x))
                        || !self.channels.idle(x, y))
            })
            .collect();
        self.former[x.index()] = (0..n)
            .map(NodeId)
            .filter(|&y| self.graph.has(x, y) || self.cut.contains(&key(x, y)))
            .collect();
        self.cut.retain(|&(a, b)| a != x && b != x);
        self.timers[x.index()].clear();
        self.acting.remove(&x);
        for y in peers {
            self.sever(x, y);
        }
    }

    /// Node `x` restarts with empty state (a live node crashes first: crash-restart): no
    /// token, no neighbour, height `(0, 0, x)`; then its links to its neighbours of before
    /// that are live form again, each end told `LinkUp` now (across a partition they wait for
    /// the merge). The viewer's tape ends here.
    /// Its embedder kept what the node asked it to keep: the highest round it made
    /// (`Config::restarted_after`) and, in majority mode, the promises it persisted
    /// ([`TokenNet::persisted`], `Config::with_promises`).
    pub fn restart(&mut self, x: NodeId) {
        self.restart_keeping(x, true);
    }

    /// [`TokenNet::restart`] by an embedder that kept nothing (`Config::restarted`): in
    /// majority mode the node never promises again (F9).
    pub fn restart_forgetting(&mut self, x: NodeId) {
        self.restart_keeping(x, false);
    }

    fn restart_keeping(&mut self, x: NodeId, kept: bool) {
        if self.recovery().is_none() || self.fault.is_some() {
            return;
        }
        self.crash(x);
        // The embedder kept the highest round in the node's reports of what it made, and
        // the promises it persisted.
        let kept = kept.then(|| {
            let made_up_to = self
                .made
                .iter()
                .filter(|&&(_, generation)| generation & 0xffff == x.0)
                .map(|&(_, generation)| (generation >> 16) as u16)
                .max()
                .unwrap_or(0);
            (
                made_up_to,
                self.persisted[x.index()].values().copied().collect(),
            )
        });
        if kept.is_none() {
            self.persisted[x.index()].clear();
        }
        let Some(fresh) = self.nodes[x.index()].restarted_empty(kept) else {
            return;
        };
        self.note(|| format!("{x:?} restarts with empty state"));
        self.nodes[x.index()] = fresh;
        self.crashed[x.index()] = false;
        self.started[x.index()] = false;
        self.failures.restarts += 1;
        self.joined = self.now;
        self.tape = None;
        self.start(x);
        for y in std::mem::take(&mut self.former[x.index()]) {
            if !self.live(y) {
                continue;
            }
            if self.may_link(x, y) {
                self.form(x, y);
            } else {
                self.cut.insert(key(x, y));
            }
        }
    }

    /// The network splits: the live nodes of `side` on one side, the rest on the other.
    /// Every link between the sides is cut, what is on it lost and each end told `LinkDown`
    /// now; no link forms across until [`TokenNet::merge`]. A partition already standing is
    /// merged first.
    pub fn partition(&mut self, side: &[NodeId]) {
        if self.recovery().is_none() || self.fault.is_some() {
            return;
        }
        self.merge();
        let n = self.nodes.len() as u32;
        let sides: Vec<bool> = (0..n).map(|i| side.contains(&NodeId(i))).collect();
        if sides.iter().all(|&s| s == sides[0]) {
            return;
        }
        self.note(|| format!("partition: {side:?} apart"));
        self.failures.partitions += 1;
        self.sides = Some(sides.clone());
        for a in (0..n).map(NodeId) {
            for b in (a.0 + 1..n).map(NodeId) {
                if sides[a.index()] == sides[b.index()] || !self.live(a) || !self.live(b) {
                    continue;
                }
                if self.graph.has(a, b) {
                    self.cut.insert((a, b));
                }
                let touched = self.graph.has(a, b)
                    || self.up.contains(&(a, b))
                    || self.up.contains(&(b, a))
                    || !self.channels.idle(a, b);
                if touched {
                    self.sever(a, b);
                }
            }
        }
    }

    /// The partition heals: every link it cut whose ends are live forms again, both ends
    /// told `LinkUp` now.
    pub fn merge(&mut self) {
        if self.sides.take().is_none() && self.cut.is_empty() {
            return;
        }
        self.note(|| "merge".into());
        self.failures.merges += 1;
        self.joined = self.now;
        for (a, b) in std::mem::take(&mut self.cut) {
            let absent = !self.graph.has(a, b)
                && !self.up.contains(&(a, b))
                && !self.up.contains(&(b, a))
                && self.channels.idle(a, b);
            if self.may_link(a, b) && absent {
                self.form(a, b);
            }
        }
    }

    /// The link `a`–`b` breaks with whatever is on it (a token, typically: see
    /// [`TokenNet::token_links`]): it is lost, and both ends are told `LinkDown` now.
    pub fn break_link(&mut self, a: NodeId, b: NodeId) {
        if self.recovery().is_none() || self.fault.is_some() {
            return;
        }
        self.note(|| format!("{a:?} - {b:?} breaks"));
        self.failures.breaks += 1;
        self.sever(a, b);
    }

    /// The links with a token in flight either way, smaller end first, in a fixed order.
    pub fn token_links(&self) -> Vec<(NodeId, NodeId)> {
        let links: BTreeSet<_> = self
            .channels
            .iter()
            .filter(|(.., msg)| P::is_token(msg))
            .map(|(f, t, _)| key(f, t))
            .collect();
        links.into_iter().collect()
    }

    /// Every armed timer of a live node, as `(node, timer)`, in a fixed order.
    pub fn armed(&self) -> Vec<(NodeId, TimerId)> {
        self.live_nodes()
            .into_iter()
            .flat_map(|v| self.timers[v.index()].keys().map(move |&t| (v, t)))
            .collect()
    }

    /// Fire `at`'s armed `timer` now, whatever its deadline: the network has no clock
    /// outside the drain, so this models a clock that breaks the bounds ([`TokenNet::timely`]
    /// is false from then on). Nothing happens without recovery.
    pub fn fire(&mut self, at: NodeId, timer: TimerId) {
        if self.recovery().is_none() || !self.live(at) || self.fault.is_some() {
            return;
        }
        if self.timers[at.index()].remove(&timer).is_some() {
            self.failures.fired += 1;
            self.apply_valid(at, Event::Timeout(timer));
        }
    }

    /// Cut `a`–`b` at once: everything on it, both ways, is lost, and each live end that
    /// knew the link is told `LinkDown`.
    fn sever(&mut self, a: NodeId, b: NodeId) {
        self.drop_link(a, b);
        self.drop_link(b, a);
        self.graph.remove(a, b);
        for (u, v) in [(a, b), (b, a)] {
            if self.up.remove(&(u, v)) && self.live(u) {
                self.apply_valid(u, Event::LinkDown(v));
            }
        }
    }

    /// Everything in flight on `from → to` is lost.
    fn drop_link(&mut self, from: NodeId, to: NodeId) {
        while let Some(msg) = self.channels.pop(from, to) {
            if P::precious(&msg) {
                self.failures.lost += 1;
            }
            self.note(|| format!("lost {from:?} -> {to:?}: {msg:?}"));
        }
        self.marks.remove(&(from, to));
        self.order.retain(|&link| link != (from, to));
    }

    /// The drain rounds recovery needs, at least: four silences and claim waits (a token
    /// lost at the start, made again, a merge that destroys the older generation, requests
    /// that follow the new one), plus 64.
    pub fn recovery_rounds(&self) -> usize {
        self.recovery().map_or(0, |r| {
            let wait = r.silence().saturating_add(r.claim_wait());
            usize::try_from(wait.saturating_mul(4).saturating_add(64)).unwrap_or(usize::MAX)
        })
    }

    /// Let `units` time units pass with every timer on time: each delivers every message in
    /// flight when it starts and fires every timer whose deadline has come
    /// ([`TokenNet::drain`]'s rounds, without the application leaving the critical
    /// section), checking safety after each. What a hand-driven test uses to let recovery
    /// work; nothing happens without recovery.
    pub fn run_for(&mut self, units: u64) -> Result<(), Violation> {
        if self.recovery().is_none() {
            return Ok(());
        }
        for _ in 0..units {
            for (a, b) in self.pending_notices() {
                self.notice(a, b);
            }
            self.tick();
            self.check_safety()?;
            self.storm()?;
        }
        Ok(())
    }

    /// A message storm (more than [`STORM`] messages in flight) is a `quiescence` violation:
    /// recovery's beacons and claims must not multiply (F4).
    fn storm(&self) -> Result<(), Violation> {
        let flying = self.channels.total();
        if flying <= STORM {
            return Ok(());
        }
        let detail = format!("a message storm: {flying} messages in flight");
        Err(Violation::new(rule::QUIESCENCE, None, detail))
    }

    /// [`TokenNet::settle`] with recovery (see [`TokenNet::drain`]).
    pub(super) fn settle_recovering(&mut self, rounds: usize) -> Result<(), Violation> {
        let rounds = rounds.max(self.recovery_rounds());
        // Resources a corruption destroyed may leave requests that nothing can serve (P15):
        // liveness is owed only if every open request fits in what is left.
        let required = P::live_after_loss(&self.nodes, self.lost);
        let waived = |outcome: Result<(), Violation>| match outcome {
            Err(v) if !required && v.rule == rule::LIVENESS => Ok(()),
            outcome => outcome,
        };
        if self.sides.is_some() {
            // Each side is served on its own first (a side without a token makes one), then
            // the partition heals and every live node asks once more.
            waived(self.serve_refreshed(rounds))
                .map_err(|v| amend(v, ", with the partition standing"))?;
            self.merge();
            self.ask_everyone();
            waived(self.serve_refreshed(rounds))
                .map_err(|v| amend(v, ", after the partition healed"))?;
        } else {
            waived(self.serve_refreshed(rounds))?;
        }
        if self.corrupted || self.asymmetric {
            self.ask_everyone();
            waived(self.serve_refreshed(rounds))
                .map_err(|v| amend(v, ", when every node asked once more"))?;
        }
        let quiet = self.recovery().map_or(0, |r| {
            r.silence().saturating_mul(2).saturating_add(r.claim_wait())
        });
        for _ in 0..quiet {
            self.tick();
            self.check_safety()?;
            self.storm()?;
        }
        self.check_tokens_per_part()
    }

    /// Every live node in the remainder section asks for one unit.
    fn ask_everyone(&mut self) {
        for v in self.live_nodes() {
            if self.status(v) == Status::Remainder && !self.nodes[v.index()].leaving() {
                self.request(v, CsRequest::ONE);
            }
        }
    }

    /// [`Self::serve_timed`]; after a corruption, when that starves, once more after a
    /// keepalive on every link (as `settle_refreshed`).
    fn serve_refreshed(&mut self, rounds: usize) -> Result<(), Violation> {
        match self.serve_timed(rounds) {
            Err(v) if self.corrupted && v.rule == rule::LIVENESS => {
                self.note(|| "keepalive on every link".into());
                for (a, b) in self.up.clone() {
                    self.apply_valid(a, Event::LinkUp(b));
                }
                self.serve_timed(rounds)
                    .map_err(|v| amend(v, ", even after a keepalive on every link"))
            }
            outcome => outcome,
        }
    }

    /// Rounds of one time unit until no live node waits: every pending notice is given,
    /// every node in the critical section leaves, then [`Self::tick`]. Nodes left waiting
    /// in a part that may make no token ([`Self::unclaimable`]) are not a violation.
    fn serve_timed(&mut self, rounds: usize) -> Result<(), Violation> {
        for _ in 0..rounds {
            for (a, b) in self.pending_notices() {
                self.notice(a, b);
            }
            if !self.live_busy() {
                return self.check_safety();
            }
            for v in self.live_nodes() {
                if self.status(v) == Status::Critical {
                    self.release(v);
                }
            }
            self.tick();
            self.check_safety()?;
            self.storm()?;
        }
        let stuck: Vec<_> = self
            .live_nodes()
            .into_iter()
            .filter(|&v| {
                self.status(v) != Status::Remainder
                    && !self.unclaimable(v)
                    && !self.short_of_units(v)
            })
            .map(|v| (v, self.status(v)))
            .collect();
        if !stuck.is_empty() {
            let detail = format!("starvation: {stuck:?} after {rounds} drain rounds");
            return Err(Violation::new(rule::LIVENESS, None, detail));
        }
        self.check_safety()
    }

    /// Whether `part` may make no token in majority mode: fewer than a majority of the
    /// membership in it may promise (F9: it waits).
    pub fn without_majority(&self, part: &[NodeId]) -> bool {
        let Some(members) = self.recovery().and_then(|r| r.majority) else {
            return false;
        };
        let voters = part
            .iter()
            .filter(|w| w.0 < members && self.nodes[w.index()].may_promise())
            .count();
        voters as u64 <= u64::from(members) / 2
    }

    /// Whether `v`'s part holds no token and no node of it may claim one: made only of
    /// restarted nodes that never heard of a token since (F4's cost: it makes none), or, in
    /// majority mode, without a majority (F9).
    fn unclaimable(&self, v: NodeId) -> bool {
        let Some(part) = self.parts().into_iter().find(|p| p.contains(&v)) else {
            return false;
        };
        let lanes = self.nodes.first().map_or(0, P::lanes);
        let holds = part.iter().any(|w| self.nodes[w.index()].holds_token())
            || self
                .channels
                .iter()
                .any(|(_, to, msg)| part.contains(&to) && P::is_token(msg));
        !holds
            && (self.without_majority(&part)
                || part
                    .iter()
                    .all(|w| (0..lanes).all(|lane| !self.nodes[w.index()].may_claim(lane))))
    }

    /// Whether `v`'s part, in majority mode, has no majority and holds the token with units
    /// missing (checked once the part's own holders have left: the missing units are held
    /// outside the part or were lost): only a new generation would free them, and such a
    /// part makes none (F9), so its requests may wait until the partition heals (found by
    /// the majority-mode models: a prioritized holder cut off alone with no unit free).
    fn short_of_units(&self, v: NodeId) -> bool {
        let Some(part) = self.parts().into_iter().find(|p| p.contains(&v)) else {
            return false;
        };
        self.without_majority(&part) && part.iter().any(|w| self.nodes[w.index()].units_missing())
    }

    /// Whether a live node waits or is in the critical section.
    fn live_busy(&self) -> bool {
        self.live_nodes()
            .into_iter()
            .any(|v| self.status(v) != Status::Remainder)
    }

    /// One time unit: every message in flight when it starts is delivered (the heads of the
    /// links in turn, in a fixed order), then every timer whose deadline has come fires, the
    /// earliest first.
    fn tick(&mut self) {
        self.now += 1;
        let links: Vec<_> = self
            .busy_links()
            .into_iter()
            .map(|(f, t)| (f, t, self.channels.len(f, t)))
            .collect();
        let most = links.iter().map(|l| l.2).max().unwrap_or(0);
        for i in 0..most {
            for &(from, to, len) in &links {
                if i < len {
                    self.deliver(from, to);
                }
            }
        }
        // Every timer is armed for at least one unit, so none that fires now arms one due now.
        let mut due: Vec<_> = self
            .live_nodes()
            .into_iter()
            .flat_map(|v| {
                self.timers[v.index()]
                    .iter()
                    .filter(|&(_, &deadline)| deadline <= self.now)
                    .map(move |(&t, &deadline)| (deadline, v, t))
            })
            .collect();
        due.sort_unstable();
        for (deadline, at, timer) in due {
            if self.timers[at.index()].get(&timer) == Some(&deadline) {
                self.timers[at.index()].remove(&timer);
                self.apply_valid(at, Event::Timeout(timer));
            }
        }
    }

    /// Once quiet: every connected part of the live nodes in which a node has started holds
    /// one token of each id, held or in flight to one of its nodes, unless no node of the
    /// part may claim that id (restarted nodes that never heard of it, F4).
    fn check_tokens_per_part(&self) -> Result<(), Violation> {
        let lanes = self.nodes.first().map_or(0, P::lanes) as usize;
        let parts = self.parts();
        let mut part_of = vec![usize::MAX; self.nodes.len()];
        for (i, part) in parts.iter().enumerate() {
            for v in part {
                part_of[v.index()] = i;
            }
        }
        let mut counts = vec![vec![0u32; lanes + 1]; parts.len()];
        let mut count = |part: usize, lane: u32| {
            if let Some(c) = counts.get_mut(part) {
                let lane = (lane as usize).min(lanes);
                c[lane] += 1;
            }
        };
        for v in self.live_nodes() {
            for lane in self.nodes[v.index()].token_lanes() {
                count(part_of[v.index()], lane);
            }
        }
        for (_, to, msg) in self.channels.iter() {
            if let Some(lane) = P::message_lane(msg) {
                count(part_of[to.index()], lane);
            }
        }
        for (part, counted) in parts.iter().zip(&counts) {
            if !part.iter().any(|v| self.started[v.index()]) {
                continue;
            }
            // A part of restarted nodes that never heard of an id makes none (F4's cost), nor
            // does a part without a majority in majority mode (F9).
            let claimable = |lane: usize| {
                !self.without_majority(part)
                    && part
                        .iter()
                        .any(|v| self.nodes[v.index()].may_claim(lane as u32))
            };
            let wrong = counted[..lanes]
                .iter()
                .enumerate()
                .any(|(lane, &c)| c > 1 || (c == 0 && claimable(lane)))
                || (counted[lanes] > 0 && !self.corrupted);
            if wrong {
                let detail = format!(
                    "part {part:?} holds {:?} tokens per id (the last: ids out of range) once quiet",
                    counted
                );
                return Err(Violation::new(rule::TOKENS_PER_PART, None, detail));
            }
        }
        Ok(())
    }
}
