//! The prioritized algorithm's part in recovery (issue 23): how the one token is held,
//! destroyed and made again, and the turnover that frees the units of crashed holders. The
//! mechanism (beacons, claims, leases) is [`Recover`]'s; `docs/ALGORITHMS.md`, F7, has the
//! rules.

use super::{Message, Node};
use crate::token::height::{Height, Sealed};
use crate::token::recovery::{Recover, Timer, Watch};
use crate::{Action, Fence, FenceCopies, NodeId, Report, Status, TimerId};

impl Recover for Node {
    fn node_id(&self) -> NodeId {
        self.id
    }

    fn lanes(&self) -> u32 {
        1
    }

    fn status_now(&self) -> Status {
        self.status
    }

    fn watch(&mut self) -> Option<&mut Watch> {
        self.watch.as_mut()
    }

    fn held(&mut self, lane: u32) -> Option<&mut Fence> {
        (lane == 0 && self.token.is_some()).then_some(&mut self.grants)
    }

    fn destroy_older(&mut self, newer: Fence) -> bool {
        if self.watch.is_none()
            || self.token.is_none()
            || self.grants.generation() >= newer.generation()
        {
            return false;
        }
        let old = core::mem::replace(&mut self.grants, Fence::new(0, 0));
        self.token = None;
        self.lost = 0;
        self.stop_watch();
        self.outbox
            .push(Action::Report(Report::TokenDestroyed { fence: old }));
        if self.status == Status::Critical && self.entry_generation < newer.generation() {
            // The entry's units are counted free by the later generation: stop now (F6).
            self.revoke();
        }
        true
    }

    fn token_gone(&mut self) {
        // `next` was this node; the queue's request must find the token elsewhere.
        self.links.next = None;
        let before = self.queue.front();
        self.settle(before);
    }

    fn adopt_regenerated(&mut self, token: Fence) {
        if self.token.is_some() && self.status == Status::Critical {
            // A turnover: our own entry's lease ended by now (it began no later than the last
            // grant).
            self.revoke();
        }
        self.token = Some(self.settings.k);
        self.lost = 0;
        self.grants = token;
        if self.backlog_generation < token.generation() {
            self.backlog = 0;
            self.backlog_lost = 0;
        }
        self.links.next = Some(self.id);
        self.links.jumps = false;
        self.beacon(0, None);
        self.rearm_rebuild();
        let before = self.queue.front();
        self.settle(before);
    }

    fn beacon_message(height: Sealed, fence: FenceCopies, hops: u16) -> Message {
        Message::Beacon {
            fence,
            hops,
            height,
        }
    }

    fn claim_message(height: Sealed, lane: u32, generation: u32) -> Message {
        Message::Claim {
            lane,
            generation: [generation; 3],
            height,
        }
    }

    fn promise_message(height: Height, lane: u32, ballot: u32, voter: u32) -> Message {
        Message::promise(height, lane, ballot, voter)
    }

    fn may_make(&mut self, _lane: u32) -> bool {
        self.token.is_none_or(|t| self.turnover_due(t))
    }

    fn turnover_won(&mut self, _lane: u32, generation: u32) {
        if self.token.is_some() {
            // The token is here and, the claim still standing, the watch unbroken since the
            // rebuild timer ran out.
            self.make_turnover(generation);
            return;
        }
        // The token is away: the claim stands, won, until the token comes back with no
        // grant since (then it is made there) or the watch starts over (F15).
        if let Some(l) = self.watch.as_mut().and_then(|w| w.lanes.first_mut()) {
            l.turnover = true;
        }
    }

    fn claim_heard(&mut self, _lane: u32) {
        // Majority mode: another node's claim is under way. A turnover this node started now
        // would outbid it, and the two would outbid each other for ever; the rebuild timer
        // waits for it to be decided (a claim wait) on top of its lease bound (F15).
        let Some(r) = self.watch.as_ref().filter(|w| w.quorum.is_some()) else {
            return;
        };
        if self.quiet.is_none() {
            return;
        }
        let after = r.recovery.lease_bound() + r.recovery.claim_wait();
        self.overdue = false;
        self.set(Timer::Rebuild, after);
    }

    fn may_renumber(&self) -> bool {
        // Every unit not counted lost is back: no RELEASE of the old generation is owed.
        self.token
            .is_some_and(|t| t.saturating_add(self.lost) >= self.settings.k)
    }
}

impl Node {
    /// A recovery timer expired.
    pub(super) fn on_timer(&mut self, timer: TimerId) {
        if self.recovery_timer(timer) == Some(Timer::Rebuild) {
            self.turn_over();
        }
    }

    /// The token was made again or granted here (or arrived after a grant elsewhere): every
    /// grant of its generation came before now, so once every lease that began by now has
    /// ended, units not back yet belong to holders that were told to stop (F7). The watch
    /// starts over at the token's fence.
    pub(super) fn rearm_rebuild(&mut self) {
        let Some(watch) = self.watch.as_ref() else {
            return;
        };
        let after = watch.recovery.lease_bound();
        // A grant since the turnover's claim began: its units are not free, so the claim
        // may no longer make a generation (F9).
        self.drop_turnover_claim();
        if self.token.is_some() {
            self.quiet = Some(self.grants.value);
            self.overdue = false;
            self.set(Timer::Rebuild, after);
        }
    }

    /// The token arrived carrying `fence` (`None`: copies without a majority). If its fence
    /// is where this node's watch left it, no grant happened anywhere since the rebuild timer
    /// was armed here: the timer keeps running (re-arming it at every arrival let two
    /// holders whose own requests are above capacity bounce the token for ever, F11), and if
    /// it ran out meanwhile the turnover is due now. Otherwise the watch starts over. Whether
    /// the token turned over (it was then made again and served).
    pub(super) fn token_arrived(&mut self, fence: Option<Fence>) -> bool {
        let unchanged = self.quiet.is_some() && fence.map(|f| f.value) == self.quiet;
        if !unchanged {
            self.rearm_rebuild();
            return false;
        }
        // Our own beacon on arrival raised the fence here; that is no grant.
        self.quiet = Some(self.grants.value);
        let before = self.grants;
        if let Some(generation) = self.won_turnover() {
            // A turnover claim won while the token was away (majority mode, F15).
            self.overdue = false;
            self.make_turnover(generation);
            return self.grants.generation() != before.generation();
        }
        if !core::mem::take(&mut self.overdue) {
            return false;
        }
        self.turn_over();
        self.grants.generation() != before.generation()
    }

    /// The generation of a turnover claim that won its majority while the token was away
    /// (majority mode, F15), if one stands.
    fn won_turnover(&self) -> Option<u32> {
        let l = self.watch.as_ref()?.lanes.first()?;
        l.claim.filter(|_| l.turnover && !l.claiming)
    }

    /// Make the turnover claim's `generation`, won, if the token is here, the turnover still
    /// due and the generation above the token's; else drop the claim.
    fn make_turnover(&mut self, generation: u32) {
        let due = self.token.is_some_and(|t| self.turnover_due(t));
        if !due || generation <= self.grants.generation() {
            return self.drop_turnover_claim();
        }
        self.make(0, generation);
    }

    /// A beacon arrived: one step above the fence the watch knows is a beacon of the token
    /// with no grant since (a grant raises the fence too, so the holder's next beacon is at
    /// least two steps above); anything further means a grant may have happened, and the
    /// watch starts over from now (F11).
    pub(super) fn watch_beacon(&mut self, fence: &FenceCopies) {
        let (Some(quiet), Some(f)) = (self.quiet, fence.read()) else {
            return;
        };
        if f.lane != 0 || f.value <= quiet {
            return;
        }
        if f.value == quiet + 1 {
            self.quiet = Some(f.value);
            return;
        }
        let Some(watch) = self.watch.as_ref() else {
            return;
        };
        let after = watch.recovery.lease_bound();
        self.quiet = Some(f.value);
        self.overdue = false;
        self.set(Timer::Rebuild, after);
    }

    /// The token left this node: the watch goes on (its timer keeps running) from the fence
    /// the token carries. So does a turnover claim running here (majority mode): it is made
    /// only where the token is, when it comes back with no grant since; a grant anywhere
    /// meanwhile starts the watch over, which drops the claim (F15).
    pub(super) fn token_left(&mut self, fence: Fence) {
        if self.quiet.is_some() {
            self.quiet = Some(fence.value);
        }
    }

    /// The token is gone (destroyed): nothing to watch.
    fn stop_watch(&mut self) {
        self.quiet = None;
        self.overdue = false;
        self.cancel(Timer::Rebuild);
        self.drop_turnover_claim();
    }

    /// Drop a holder's turnover claim in progress (majority mode, F9).
    fn drop_turnover_claim(&mut self) {
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        if let Some(lane) = watch.lanes.first_mut().filter(|l| l.turnover) {
            lane.turnover = false;
            lane.claiming = false;
            lane.claim = None;
            self.cancel(Timer::Claim(0));
        }
    }

    /// Whether the token, holding `t` units, stayed here a lease bound without a grant while
    /// requests wait on units not back: a turnover is due (F7).
    fn turnover_due(&self, t: u32) -> bool {
        t < self.settings.k && !self.queue.is_empty()
    }

    /// The token stayed here, without a grant, for as long as any lease of its generation can
    /// last: if requests wait on units that have not come back, start a new generation with
    /// all `k` units free. Releases of the old generation then add nothing (F7).
    fn turn_over(&mut self) {
        let k = self.settings.k;
        let Some(t) = self.token else {
            // The token is away: the turnover is due when it comes back with no grant since
            // (F11).
            self.overdue = self.quiet.is_some();
            return;
        };
        if t >= k {
            self.quiet = None;
            return;
        }
        if self.queue.is_empty() {
            // Units are missing but nobody waits yet: keep watching, or a request that comes
            // later waits on them for ever (F8).
            return self.rearm_rebuild();
        }
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        if watch.quorum.is_some() {
            // In majority mode a new generation needs a majority's promises like any claim,
            // or a part without the token could make the same round (F9); if the claim fails,
            // the rebuild timer tries again. A turnover claim already under way is left to
            // end (F15): starting another would outbid it.
            let after = watch.recovery.lease_bound();
            let running = watch.lanes.first().is_some_and(|l| l.turnover);
            if let Some(generation) = self.won_turnover() {
                return self.make_turnover(generation);
            }
            if !running {
                self.start_claim(0, true);
            }
            return self.set(Timer::Rebuild, after);
        }
        let Some(lane) = watch.lanes.first_mut() else {
            return;
        };
        let Some(generation) = lane.next_claim(self.id) else {
            return;
        };
        let token = Fence::first_of(0, generation);
        lane.latest = token.value;
        lane.claim = None;
        self.outbox
            .push(Action::Report(Report::TokenRegenerated { fence: token }));
        self.adopt_regenerated(token);
    }

    /// Whether the node is in the critical section on units its token's later generation
    /// counted free: it was told [`Action::LeaseExpired`].
    pub fn revoked(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.revoked)
    }
}
