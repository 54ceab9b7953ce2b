//! Recovery of lost tokens for KRL/KRLF (issue 23): beacons, claims, regeneration, the
//! destruction of older generations, and entry leases. The shared settings, per-token state
//! and bounds are in [`crate::token::Recovery`]; `docs/ALGORITHMS.md`, F2–F6, has the rules
//! and their reasons.

use super::{Message, Node};
use crate::token::recovery::{beacon_of, beats, round, Lane, Timer, ROUND_REACH};
use crate::{Action, Anomaly, Fence, FenceCopies, NodeId, Report, TimerId};

impl Node {
    /// The recovery state of token `lane` (recovery on, `lane < k`).
    fn lane(&mut self, lane: u32) -> Option<&mut Lane> {
        self.watch.as_mut()?.lanes.get_mut(lane as usize)
    }

    /// Arm (or re-arm) `timer` under a new arming number.
    fn set(&mut self, timer: Timer, after: u64) {
        let Some(arming) = self.watch.as_mut().and_then(|w| w.arming(timer)) else {
            return;
        };
        *arming = arming.wrapping_add(1);
        let timer = timer.id(*arming);
        self.outbox.push(Action::SetTimer { timer, after });
    }

    /// Cancel `timer`: its current arming is told to the embedder, and a later expiry of it
    /// is stale.
    fn cancel(&mut self, timer: Timer) {
        let Some(arming) = self.watch.as_mut().and_then(|w| w.arming(timer)) else {
            return;
        };
        let old = timer.id(*arming);
        *arming = arming.wrapping_add(1);
        self.outbox.push(Action::CancelTimer { timer: old });
    }

    /// Send `msg` to every neighbour of the table but `except`.
    fn flood(&mut self, msg: Message, except: Option<NodeId>) {
        let Node {
            links, outbox, id, ..
        } = self;
        for n in links.neighbors.entries() {
            if Some(n.id()) != except && n.id() != *id {
                outbox.send(n.id(), msg);
            }
        }
    }

    /// Start recovery's timers at the node's first accepted event: a silence timer per token
    /// id, and a beacon for every token held (a node cannot act before it is first called).
    pub(super) fn arm(&mut self) {
        let Some(watch) = self.watch.as_mut().filter(|w| !w.armed) else {
            return;
        };
        watch.armed = true;
        let silence = watch.recovery.silence();
        for lane in 0..self.settings.k {
            self.set(Timer::Silent(lane), silence);
        }
        let held: smallvec::SmallVec<[u32; 4]> = self.held.iter().map(|t| t.lane).collect();
        for lane in held {
            self.beacon(lane, None);
        }
    }

    /// Whether an arriving `token` may be kept: not if a newer generation of its id is known
    /// here (it is destroyed, and reported). A token held here of an older generation than
    /// the arriving one is destroyed instead.
    pub(super) fn admit_generation(&mut self, token: Fence) -> bool {
        let Some(lane) = self.lane(token.lane) else {
            return true;
        };
        if token.generation() < lane.generation() {
            self.outbox
                .push(Action::Report(Report::TokenDestroyed { fence: token }));
            return false;
        }
        self.destroy_older(token);
        true
    }

    /// Destroy a token of `newer`'s id held here whose generation is below `newer`'s.
    fn destroy_older(&mut self, newer: Fence) {
        let Some(i) = self
            .held
            .iter()
            .position(|t| t.lane == newer.lane && t.generation() < newer.generation())
        else {
            return;
        };
        // The token in use by the critical section is first in `held`: the application is
        // told to stop now, and the node stays inside, without it, until `Release` (F6).
        if i == 0 && self.in_use() {
            if let Some(watch) = self.watch.as_mut() {
                watch.revoked = true;
                if let Some(fence) = watch.leased.take() {
                    self.cancel(Timer::Lease);
                    self.outbox.push(Action::LeaseExpired { fence });
                }
            }
        }
        let old = self.held.remove(i);
        self.outbox
            .push(Action::Report(Report::TokenDestroyed { fence: old }));
    }

    /// A token of this generation was kept here: it is the newest evidence of its id; beacon
    /// it if none went out within the window.
    pub(super) fn heard_token(&mut self, token: Fence) {
        if !self.evidence(token) {
            return;
        }
        if self.lane(token.lane).is_some_and(|l| !l.fresh) {
            self.beacon(token.lane, None);
        }
    }

    /// Take `fence` (a token's or a beacon's) as evidence that its token exists: it becomes
    /// the latest heard of, any claim is void, and the silence starts over. `false` if
    /// recovery is off or the evidence is not newer than what the node knows.
    fn evidence(&mut self, fence: Fence) -> bool {
        let Some(watch) = self.watch.as_mut() else {
            return false;
        };
        let silence = watch.recovery.silence();
        let Some(lane) = watch.lanes.get_mut(fence.lane as usize) else {
            return false;
        };
        if fence.value < lane.latest {
            return false;
        }
        lane.latest = fence.value;
        lane.claim = None;
        let claimed = core::mem::take(&mut lane.claiming);
        if claimed {
            self.cancel(Timer::Claim(fence.lane));
        }
        self.set(Timer::Silent(fence.lane), silence);
        true
    }

    /// Flood a beacon for the token of id `lane` held here: raise its fence (so the beacon is
    /// newer than every one before), and open a beacon window.
    fn beacon(&mut self, lane: u32, except: Option<NodeId>) {
        let Some(token) = self.held.iter_mut().find(|t| t.lane == lane) else {
            return;
        };
        *token = beacon_of(*token);
        let fence = *token;
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        let every = watch.recovery.beacon_every;
        if let Some(l) = watch.lanes.get_mut(lane as usize) {
            l.fresh = true;
        }
        self.set(Timer::Fresh(lane), every);
        self.evidence(fence);
        let msg = Message::Beacon(self.links.height.into(), fence.into(), 0);
        self.flood(msg, except);
    }

    pub(super) fn on_beacon(&mut self, from: NodeId, fence: FenceCopies, hops: u16) {
        let k = self.settings.k;
        let Some(fence) = fence.read().filter(|f| f.lane < k) else {
            return self.outbox.anomaly(from, Anomaly::OutOfRange);
        };
        let Some(watch) = self.watch.as_ref() else {
            // A beacon at a node without recovery: the network disagrees on its settings.
            return self.outbox.anomaly(from, Anomaly::Unexpected);
        };
        let every = watch.recovery.beacon_every;
        let lane = watch.lanes[fence.lane as usize];
        if fence.value <= lane.latest {
            // An echo of a beacon already heard (or sent), or an older generation's.
            return self.outbox.anomaly(from, Anomaly::Stale);
        }
        self.destroy_older(fence);
        // A held token of this generation is never behind its own beacons, except by a forged
        // or corrupted beacon: catch up, so this node's next beacon is news again.
        if let Some(mine) = self.held.iter_mut().find(|t| t.lane == fence.lane) {
            mine.value = mine.value.max(fence.value);
        }
        self.evidence(fence);
        if let Some(l) = self.lane(fence.lane) {
            l.fresh = true;
        }
        self.set(Timer::Fresh(fence.lane), every);
        let msg = Message::Beacon(
            self.links.height.into(),
            fence.into(),
            hops.saturating_add(1),
        );
        self.flood(msg, Some(from));
    }

    pub(super) fn on_claim(&mut self, from: NodeId, lane: u32, generation: [u32; 3]) {
        let claim = crate::fence::majority(generation);
        let Some(watch) = self.watch.as_ref() else {
            return self.outbox.anomaly(from, Anomaly::Unexpected);
        };
        let silence = watch.recovery.silence();
        let (Some(claim), Some(&known)) = (claim, watch.lanes.get(lane as usize)) else {
            return self.outbox.anomaly(from, Anomaly::OutOfRange);
        };
        let known_round = round(known.generation());
        if round(claim) <= known_round {
            // A claim for a generation this node knows already, or an older one.
            return self.outbox.anomaly(from, Anomaly::Stale);
        }
        if round(claim) - known_round > ROUND_REACH {
            return self.outbox.anomaly(from, Anomaly::OutOfRange);
        }
        if self.held.iter().any(|t| t.lane == lane) {
            // The token is here: answer with a beacon at once, which reaches the claimer
            // before its claim wait ends (F4), and do not pass the claim on.
            return self.beacon(lane, None);
        }
        if known.claim.is_some_and(|best| !beats(claim, best)) {
            return self.outbox.anomaly(from, Anomaly::Stale);
        }
        let Some(l) = self.lane(lane) else { return };
        l.claim = Some(claim);
        let yielded = core::mem::take(&mut l.claiming);
        if yielded {
            self.cancel(Timer::Claim(lane));
        }
        // Wait for the claimer's token; if it never comes, claim in turn.
        self.set(Timer::Silent(lane), silence);
        let msg = Message::Claim(self.links.height.into(), lane, [claim; 3]);
        self.flood(msg, Some(from));
    }

    pub(super) fn on_recovery_timer(&mut self, timer: TimerId) {
        let Some((timer, arming)) = Timer::of(timer, self.settings.k) else {
            return;
        };
        let Some(current) = self.watch.as_mut().and_then(|w| w.arming(timer)) else {
            return;
        };
        if *current & 0x7fff_ffff != arming {
            // Re-armed or cancelled since, or fired already: stale.
            return;
        }
        *current = current.wrapping_add(1);
        match timer {
            Timer::Fresh(lane) => {
                if let Some(l) = self.lane(lane) {
                    l.fresh = false;
                }
                self.beacon(lane, None);
            }
            Timer::Silent(lane) => self.on_silence(lane),
            Timer::Claim(lane) => self.on_claim_wait(lane),
            Timer::Lease => {
                let critical = self.status == crate::Status::Critical;
                if let Some(fence) = self.watch.as_mut().and_then(|w| w.leased.take()) {
                    if critical {
                        self.outbox.push(Action::LeaseExpired { fence });
                    }
                }
            }
        }
    }

    /// Nothing was heard of token `lane` for the silence: claim it lost.
    fn on_silence(&mut self, lane: u32) {
        let id = self.id;
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        let (silence, wait) = (watch.recovery.silence(), watch.recovery.claim_wait());
        if self.held.iter().any(|t| t.lane == lane) {
            // Its own beacons keep a holder's silence from ending; a timer fired early.
            return self.set(Timer::Silent(lane), silence);
        }
        let Some(l) = watch.lanes.get_mut(lane as usize) else {
            return;
        };
        let Some(claim) = l.next_claim(id) else {
            // Every round is used up: nothing can be made again (2^16 failed claims).
            return;
        };
        l.claim = Some(claim);
        l.claiming = true;
        self.set(Timer::Claim(lane), wait);
        self.set(Timer::Silent(lane), silence);
        let msg = Message::Claim(self.links.height.into(), lane, [claim; 3]);
        self.flood(msg, None);
    }

    /// The node's claim for token `lane` was not beaten within the claim wait: make the token
    /// again, in the claimed generation.
    fn on_claim_wait(&mut self, lane: u32) {
        let Some(l) = self.lane(lane).filter(|l| l.claiming) else {
            return;
        };
        l.claiming = false;
        let Some(generation) = l.claim.take() else {
            return;
        };
        let token = Fence::first_of(lane, generation);
        l.latest = token.value;
        self.outbox
            .push(Action::Report(Report::TokenRegenerated { fence: token }));
        self.held.push(token);
        self.beacon(lane, None);
        self.use_new_token();
    }

    /// The node entered with `fence`: its lease starts.
    pub(super) fn start_lease(&mut self, fence: Fence) {
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        watch.leased = Some(fence);
        let lease = watch.recovery.lease;
        self.set(Timer::Lease, lease);
    }

    /// The node left the critical section: its lease, if it still runs, is over.
    pub(super) fn end_lease(&mut self) {
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        watch.revoked = false;
        if watch.leased.take().is_some() {
            self.cancel(Timer::Lease);
        }
    }

    /// Whether the first token held is in use by the node's critical section.
    pub(super) fn in_use(&self) -> bool {
        self.status == crate::Status::Critical && !self.watch.as_ref().is_some_and(|w| w.revoked)
    }

    /// Whether the node is in the critical section on a token that was destroyed under it
    /// (a newer generation arrived): it holds no token for the entry, and was told
    /// [`Action::LeaseExpired`].
    pub fn revoked(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.revoked)
    }
}
