//! Crashes, restarts, partitions and merges ([`crate::token::Faults`]), and the checks of what
//! token recovery promises under them (`docs/ALGORITHMS.md`, F2–F6):
//!
//! - (a), always: an entry's fence is refused by the protected resource only if a newer
//!   generation of its token was admitted before (in `deliver`, for every run);
//! - (b): at most `k` hosts *acting* (in the critical section, lease not expired, not
//!   crashed) while the live network is one connected part whose shape has not changed for
//!   the quiet time (a silence, see [`FaultState::quiet`]);
//! - once quiet, at most one token of each id in every connected part.
//!
//! A run is in *fault mode* when it injects faults, or runs recovery on a topology that may
//! come apart (cut-offs allowed, or a replayed trace): then the number of tokens is no longer
//! a constant and those checks replace [`TokenAlgorithm::check_tally`].

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{exp_sample, Sim, SimEvent};
use crate::link::LinkModel;
use crate::token::{Config, Params, TokenAlgorithm};
use crate::{Failure, Time};
use manet_mutex::{Event, Fence, NodeId, Status};

/// The part label of a crashed host.
const DOWN: u32 = u32::MAX;

/// What the simulator keeps in fault mode.
pub(super) struct FaultState {
    /// Whether each host is up.
    alive: Vec<bool>,
    /// Each host's incarnation, raised at each crash: events scheduled for an earlier one
    /// (its timers, its release, its next request) are dropped.
    incarnation: Vec<u32>,
    /// While a partition stands, each node's side.
    side: Option<Vec<bool>>,
    /// Each live node's connected part as last computed (`DOWN` for a crashed host).
    parts: Vec<u32>,
    /// Whether the live nodes form one connected part.
    connected: bool,
    /// When the parts last changed shape (two live nodes joined or separated).
    changed_at: Time,
    /// How long the parts must keep their shape before (b) and the per-part token check
    /// apply ([`FaultState::quiet`]).
    quiet_for: Time,
    /// Per link id, deliveries still scheduled for messages that a fault destroyed: the next
    /// that many deliveries on the link deliver nothing.
    lost_deliveries: Vec<u32>,
    /// Per host, the fence of the entry it acts under.
    acting: Vec<Option<Fence>>,
    /// Hosts acting.
    acting_count: u32,
    /// Per token id, when a fault lost it, until the next entry with that id; and whether it
    /// was made again since.
    lost_at: Vec<Option<(Time, bool)>>,
    /// The faults' own random stream: the same fault times for every algorithm of a seed.
    rng: ChaCha8Rng,
}

impl FaultState {
    /// The fault state of a run of `config`, if the run is in fault mode; an error if it has
    /// faults its algorithm cannot recover from.
    pub(super) fn new<P: TokenAlgorithm, L>(
        config: &Config<Params<P::Settings>, L>,
    ) -> Result<Option<Self>, String> {
        let faults = config.faults;
        faults.check()?;
        let settings = &config.params.settings;
        let recovery = P::recovery(settings);
        if faults.any() && (recovery.is_none() || P::restarted(settings, NodeId(0)).is_none()) {
            return Err(format!(
                "{faults:?}: crashes and partitions need an algorithm that recovers lost tokens \
                 (KRL or KRLF with recovery); this network has none"
            ));
        }
        let may_split = !config.keep_connected || !config.replay.is_empty();
        let Some(recovery) = recovery.filter(|_| faults.any() || may_split) else {
            return Ok(None);
        };
        let n = config.graph.n();
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        rng.set_stream(1);
        Ok(Some(FaultState {
            alive: vec![true; n],
            incarnation: vec![0; n],
            side: None,
            parts: vec![0; n],
            connected: true,
            changed_at: 0.0,
            // A merge settles within a silence: a claim running then ends within a claim wait
            // and its beacon floods within D hops, and every older token meets the newest
            // generation's beacon within a beacon period and two floods (F3–F6); a silence
            // exceeds both.
            quiet_for: recovery.silence() as f64,
            lost_deliveries: Vec::new(),
            acting: vec![None; n],
            acting_count: 0,
            lost_at: Vec::new(),
            rng,
        }))
    }

    /// Whether the parts have kept their shape for the quiet time at `now`.
    fn quiet(&self, now: Time) -> bool {
        now - self.changed_at >= self.quiet_for
    }

    /// Whether the link `a`–`b` of the radio graph is up for the nodes.
    pub(super) fn up(&self, a: NodeId, b: NodeId) -> bool {
        let side = |x: NodeId| self.side.as_ref().is_some_and(|s| s[x.index()]);
        self.alive[a.index()] && self.alive[b.index()] && side(a) == side(b)
    }

    /// Whether an event of `node` scheduled in its incarnation `incarnation` is still its.
    pub(super) fn current(&self, node: NodeId, incarnation: u32) -> bool {
        self.alive[node.index()]
            && (incarnation == ANY || self.incarnation[node.index()] == incarnation)
    }

    /// Whether the next delivery on `link` is one of a destroyed message (and count it off).
    pub(super) fn lost_delivery(&mut self, link: u32) -> bool {
        match self.lost_deliveries.get_mut(link as usize) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }
}

/// The incarnation of an event that any incarnation of its node takes (a scripted request).
pub(super) const ANY: u32 = u32::MAX;

impl<P: TokenAlgorithm, L: LinkModel> Sim<P, L> {
    /// The incarnation of `node` that events scheduled now belong to.
    pub(super) fn incarnation(&self, node: NodeId) -> u32 {
        self.faults
            .as_ref()
            .map_or(0, |f| f.incarnation[node.index()])
    }

    /// Whether the link `a`–`b`, present in the radio graph, is up for the nodes.
    pub(super) fn up(&self, a: NodeId, b: NodeId) -> bool {
        self.faults.as_ref().is_none_or(|f| f.up(a, b))
    }

    /// Schedule the first crash and the first partition.
    pub(super) fn start_faults(&mut self) {
        let faults = self.config.faults;
        let n = self.nodes.len() as f64;
        let Some(f) = &mut self.faults else { return };
        if let Some(dt) = exp_sample(faults.crash_rate * n, &mut f.rng) {
            self.queue.schedule(dt, SimEvent::Crash);
        }
        if let Some(dt) = exp_sample(faults.partition_rate, &mut f.rng) {
            self.queue.schedule(dt, SimEvent::Partition);
        }
    }

    /// A crash is due: a random host crashes if it is up (each live host thus crashes at the
    /// configured rate), and the next is scheduled. Only in the load phase.
    pub(super) fn crash_due(&mut self) -> Result<(), Failure> {
        if !self.loading {
            return Ok(());
        }
        let rate = self.config.faults.crash_rate * self.nodes.len() as f64;
        let Some(f) = &mut self.faults else {
            return Ok(());
        };
        let victim = NodeId(f.rng.random_range(0..self.nodes.len() as u32));
        if let Some(dt) = exp_sample(rate, &mut f.rng) {
            self.queue.schedule(dt, SimEvent::Crash);
        }
        if f.alive[victim.index()] {
            self.crash(victim)?;
        }
        Ok(())
    }

    /// `node` crashes: its state and everything in flight on its links are gone, its
    /// neighbours learn `LinkDown`, and its restart is scheduled.
    pub(super) fn crash(&mut self, node: NodeId) -> Result<(), Failure> {
        let now = self.queue.now();
        let neighbours: Vec<NodeId> = self
            .graph
            .neighbors(node)
            .filter(|&b| self.up(node, b))
            .collect();
        let mut lost = P::held_lanes(&self.nodes[node.index()]);
        for &b in &neighbours {
            self.cut(node, b, &mut lost);
        }
        let Some(fresh) = P::restarted(&self.config.params.settings, node) else {
            return Err(self.failure(format!("{node:?} cannot restart")));
        };
        let old = std::mem::replace(&mut self.nodes[node.index()], fresh);
        if self.config.check_every_step {
            self.tally -= old.tally();
            self.tally += self.nodes[node.index()].tally();
            self.touched.push(node);
        }
        if old.status() != Status::Remainder {
            self.busy -= 1;
        }
        self.requested_at[node.index()] = None;
        self.usage.change(&mut self.metrics, node, 0, now);
        let restart = self.config.faults.restart_after;
        let Some(f) = &mut self.faults else {
            return Ok(());
        };
        f.alive[node.index()] = false;
        f.incarnation[node.index()] += 1;
        if f.acting[node.index()].take().is_some() {
            f.acting_count -= 1;
        }
        self.metrics.recovery.crashes += 1;
        self.lose_tokens(&lost, now);
        if let Some(after) = restart {
            self.queue.schedule(after, SimEvent::Restart(node));
        }
        for b in neighbours {
            self.deliver(b, Event::LinkDown(node))?;
        }
        self.reshaped();
        Ok(())
    }

    /// Count the tokens of ids `lanes` lost now, and start their time to recover.
    fn lose_tokens(&mut self, lanes: &[u32], now: Time) {
        let Some(f) = &mut self.faults else { return };
        for &lane in lanes {
            self.metrics.recovery.tokens_lost += 1;
            // A token whose id does not read (u32::MAX) is not timed.
            if let Some(slot) = usize::try_from(lane).ok().filter(|&l| l < 1 << 16) {
                if f.lost_at.len() <= slot {
                    f.lost_at.resize(slot + 1, None);
                }
                f.lost_at[slot].get_or_insert((now, false));
            }
        }
    }

    /// Destroy everything in flight between `a` and `b` (the ids of the tokens among it go
    /// into `lost`) and forget their link; its scheduled deliveries deliver nothing.
    fn cut(&mut self, a: NodeId, b: NodeId, lost: &mut Vec<u32>) {
        for (from, to) in [(a, b), (b, a)] {
            let Some(link) = self.channels.id(from, to) else {
                continue;
            };
            while let Some((_, _, msg)) = self.channels.pop_on(link) {
                if self.config.check_every_step {
                    self.tally -= P::message_tally(&self.config.params.settings, &msg);
                }
                lost.extend(P::carried_lane(&msg));
                if let Some(f) = &mut self.faults {
                    let slot = link as usize;
                    if f.lost_deliveries.len() <= slot {
                        f.lost_deliveries.resize(slot + 1, 0);
                    }
                    f.lost_deliveries[slot] += 1;
                }
            }
        }
        self.channels.forget(a, b);
    }

    /// A message sent over a link that a fault took down before its sender heard of it: lost.
    pub(super) fn lost_in_sending(&mut self, msg: &P::Message) {
        let lanes: Vec<u32> = P::carried_lane(msg).into_iter().collect();
        self.lose_tokens(&lanes, self.queue.now());
    }

    /// `node` restarts with empty state: `LinkUp` on every link it has, both ways, and, in
    /// the load phase, its first request scheduled.
    pub(super) fn restart(&mut self, node: NodeId) -> Result<(), Failure> {
        let Some(f) = &mut self.faults else {
            return Ok(());
        };
        f.alive[node.index()] = true;
        self.metrics.recovery.restarts += 1;
        // The node has been fresh since its crash and has received nothing.
        let neighbours: Vec<NodeId> = self
            .graph
            .neighbors(node)
            .filter(|&b| self.up(node, b))
            .collect();
        for b in neighbours {
            self.deliver(node, Event::LinkUp(b))?;
            self.deliver(b, Event::LinkUp(node))?;
        }
        if self.loading {
            self.schedule_request(node);
        }
        self.reshaped();
        Ok(())
    }

    /// A partition is due: unless one stands, split the nodes into two random halves, cut
    /// every link between them, and schedule the merge. Only in the load phase.
    pub(super) fn partition_due(&mut self) -> Result<(), Failure> {
        if !self.loading {
            return Ok(());
        }
        let faults = self.config.faults;
        let n = self.nodes.len();
        let Some(f) = &mut self.faults else {
            return Ok(());
        };
        if let Some(dt) = exp_sample(faults.partition_rate, &mut f.rng) {
            self.queue.schedule(dt, SimEvent::Partition);
        }
        if f.side.is_some() {
            return Ok(());
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut f.rng);
        let mut side = vec![false; n];
        for &i in &order[..n / 2] {
            side[i] = true;
        }
        let crossing = self.crossing(&side);
        // Down for every node before any hears of it: a message sent to the other side in
        // the meantime is lost, as it would be.
        if let Some(f) = &mut self.faults {
            f.side = Some(side);
        }
        self.metrics.recovery.partitions += 1;
        self.queue.schedule(faults.partition_for, SimEvent::Merge);
        let mut lost = Vec::new();
        for &(a, b) in &crossing {
            self.cut(a, b, &mut lost);
        }
        self.lose_tokens(&lost, self.queue.now());
        for (a, b) in crossing {
            self.deliver(a, Event::LinkDown(b))?;
            self.deliver(b, Event::LinkDown(a))?;
        }
        self.reshaped();
        Ok(())
    }

    /// The live links of the radio graph between the two sides of `side`.
    fn crossing(&self, side: &[bool]) -> Vec<(NodeId, NodeId)> {
        let alive = |x: NodeId| self.faults.as_ref().is_some_and(|f| f.alive[x.index()]);
        self.graph
            .edges()
            .iter()
            .copied()
            .filter(|&(a, b)| side[a.index()] != side[b.index()] && alive(a) && alive(b))
            .collect()
    }

    /// The partition ends: every live link between the sides comes up, both ways.
    pub(super) fn merge(&mut self) -> Result<(), Failure> {
        let Some(side) = self.faults.as_mut().and_then(|f| f.side.take()) else {
            return Ok(());
        };
        for (a, b) in self.crossing(&side) {
            self.deliver(a, Event::LinkUp(b))?;
            self.deliver(b, Event::LinkUp(a))?;
        }
        self.reshaped();
        Ok(())
    }

    /// The links changed (a fault, or a link change in fault mode): recompute the live
    /// nodes' parts, and restart the quiet time if two live nodes joined or separated.
    pub(super) fn reshaped(&mut self) {
        if self.faults.is_none() {
            return;
        }
        let parts = self.parts();
        let now = self.queue.now();
        let Some(f) = &mut self.faults else { return };
        let live = parts.iter().filter(|&&p| p != DOWN);
        f.connected = live.clone().all(|&p| p == 0);
        if !same_shape(&f.parts, &parts) {
            f.changed_at = now;
        }
        f.parts = parts;
    }

    /// Each node's connected part over the links up for the nodes (`DOWN` for a crashed
    /// host), numbered in order of their smallest node.
    fn parts(&self) -> Vec<u32> {
        let n = self.nodes.len();
        let mut parts = vec![DOWN; n];
        let Some(f) = &self.faults else { return parts };
        let mut count = 0;
        let mut stack = Vec::new();
        for start in 0..n {
            if !f.alive[start] || parts[start] != DOWN {
                continue;
            }
            parts[start] = count;
            stack.push(NodeId(start as u32));
            while let Some(u) = stack.pop() {
                for v in self.graph.neighbors(u) {
                    if parts[v.index()] == DOWN && f.up(u, v) {
                        parts[v.index()] = count;
                        stack.push(v);
                    }
                }
            }
            count += 1;
        }
        parts
    }

    /// `node` entered under `fence`: it acts, and a token of `fence`'s id lost to a fault is
    /// used again. A checked run fails if that makes more than `k` acting in a quiet,
    /// connected network; an unchecked one counts it.
    pub(super) fn fault_enter(&mut self, node: NodeId, fence: Fence) -> Result<(), String> {
        let now = self.queue.now();
        let Some(f) = &mut self.faults else {
            return Ok(());
        };
        if let Some((at, _)) = f
            .lost_at
            .get_mut(fence.lane as usize)
            .and_then(Option::take)
        {
            self.metrics.recovery.recover_times.push(now - at);
        }
        if f.acting[node.index()].replace(fence).is_none() {
            f.acting_count += 1;
        }
        match self.overlap() {
            Some(m) if self.config.check_every_step => Err(m),
            Some(_) => {
                self.metrics.recovery.overlaps += 1;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// A token of id `lane` was made again: the first time since a fault lost it, its time to
    /// regenerate is measured.
    pub(super) fn regenerated(&mut self, lane: u32) {
        let now = self.queue.now();
        let Some(f) = &mut self.faults else { return };
        if let Some((at, made)) = f.lost_at.get_mut(lane as usize).and_then(Option::as_mut) {
            if !*made {
                *made = true;
                self.metrics.recovery.regen_times.push(now - *at);
            }
        }
    }

    /// `node` stopped acting: its lease ended under `fence` (`Some`), or it released or
    /// crashed (`None`). A lease that ends on another fence than the entry's is an error.
    pub(super) fn stop_acting(&mut self, node: NodeId, fence: Option<Fence>) -> Result<(), String> {
        let Some(f) = &mut self.faults else {
            return Ok(());
        };
        let was = f.acting[node.index()].take();
        if was.is_some() {
            f.acting_count -= 1;
        }
        match fence {
            Some(fence) if was != Some(fence) => Err(format!(
                "{node:?}'s lease ended under {fence:?}, but it acts under {was:?}"
            )),
            _ => Ok(()),
        }
    }

    /// (b): more than `k` hosts acting in a network that is one part and has kept its shape
    /// for the quiet time; the violation, if so.
    fn overlap(&self) -> Option<String> {
        let f = self.faults.as_ref()?;
        let k = self.k();
        let now = self.queue.now();
        (f.acting_count > k && f.connected && f.quiet(now)).then(|| {
            let acting: Vec<_> = (0..self.nodes.len())
                .filter_map(|i| f.acting[i].map(|fence| (NodeId(i as u32), fence)))
                .collect();
            format!(
                "(b) violated: {} hosts acting, k = {k}, in a connected network unchanged since \
                 t={}: {acting:?}",
                f.acting_count, f.changed_at
            )
        })
    }

    /// The network's `k`: one token id per initial holder.
    fn k(&self) -> u32 {
        self.config.params.holders.len() as u32
    }

    /// The checks of fault mode after a step, besides each touched node's own: (b).
    pub(super) fn check_faults(&self) -> Result<(), Failure> {
        match self.overlap() {
            Some(m) => Err(self.failure(m)),
            None => Ok(()),
        }
    }

    /// Once quiet: at most one token of each id in each connected part (held, or in flight
    /// on a link of the part).
    pub(super) fn check_parts(&self) -> Result<(), Failure> {
        let Some(f) = &self.faults else {
            return Ok(());
        };
        if !f.quiet(self.queue.now()) {
            return Ok(());
        }
        let mut seen: HashMap<(u32, u32), NodeId> = HashMap::new();
        let mut note = |part: u32, lane: u32, at: NodeId| {
            match seen.insert((part, lane), at) {
            Some(other) => Err(self.failure(format!(
                "two tokens of id {lane} in one connected part, quiet since t={}: at {other:?} and {at:?}",
                f.changed_at
            ))),
            None => Ok(()),
        }
        };
        for (i, node) in self.nodes.iter().enumerate() {
            if f.alive[i] {
                for lane in node.held_lanes() {
                    note(f.parts[i], lane, NodeId(i as u32))?;
                }
            }
        }
        for (from, _, msg) in self.channels.iter() {
            if let Some(lane) = P::carried_lane(msg) {
                note(f.parts[from.index()], lane, from)?;
            }
        }
        Ok(())
    }

    /// Whether a node's own invariants are checked: not while it is in the critical section
    /// on a token recovery destroyed under it (it holds nothing for the entry, by design).
    pub(super) fn checks_node(&self, node: &P) -> bool {
        self.faults.is_none() || !node.revoked()
    }
}

/// Whether `a` and `b` group the nodes live in both alike: no two joined in one and apart in
/// the other (a host that crashed or restarted in between changes nothing by itself).
fn same_shape(a: &[u32], b: &[u32]) -> bool {
    let mut forward = HashMap::new();
    let mut backward = HashMap::new();
    a.iter().zip(b).all(|(&x, &y)| {
        x == DOWN
            || y == DOWN
            || (*forward.entry(x).or_insert(y) == y && *backward.entry(y).or_insert(x) == x)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_compare_the_nodes_live_in_both() {
        assert!(same_shape(&[0, 0, 1], &[3, 3, 0]));
        assert!(!same_shape(&[0, 0, 1], &[0, 1, 1]), "a node moved");
        assert!(!same_shape(&[0, 0, 1], &[0, 0, 0]), "a merge");
        assert!(!same_shape(&[0, 0, 0], &[0, 0, 1]), "a split");
        assert!(same_shape(&[0, DOWN, 1], &[0, 0, 1]), "a restart alone");
        assert!(same_shape(&[0, 0, 0], &[0, DOWN, 0]), "a crash alone");
    }
}
