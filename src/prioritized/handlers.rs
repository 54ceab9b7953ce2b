//! The handlers of peer messages and link events.
//!
//! Peer input never panics and never corrupts the resource count: what cannot be valid is
//! reported as [`Action::Anomaly`](crate::Action::Anomaly) and repaired on the safe side.
//! Nothing is dropped on a technicality (an unknown sender, a bad field) if dropping it would
//! lose the token, released resources or a request; only values that would break `Σ = k` are
//! refused.

use crate::queue::Priority;
use crate::token::height::{Height, Sealed};
use crate::token::links::{Take, TokenNode};
use crate::token::neighbors::Said;
use crate::token::recovery::{promise_word, Recover};
use crate::{Anomaly, Fence, FenceCopies, NodeId};

use super::message::Resources;
use super::{Message, Node, Policy};

impl Node {
    pub(super) fn receive(&mut self, from: NodeId, msg: Message) {
        match msg {
            Message::Token {
                available,
                lost,
                priority,
                height,
                fence,
            } => self.on_token(from, [available, lost], priority, height.open(), fence),
            Message::Request { priority, height } => {
                self.on_request(from, priority, height.open());
            }
            Message::Update { priority } => self.on_update(from, priority),
            Message::Release {
                resources,
                lost,
                height,
                generation,
            } => self.on_release(from, [resources, lost], height, generation),
            Message::Link { height } => self.on_link(from, height.open(), Said::Info),
            Message::Probe { height } => self.on_link(from, height.open(), Said::Probe),
            Message::TokenAck { height, tokens } => {
                let count = height.is_intact_with(u64::from(tokens)).then_some(tokens);
                self.on_link(from, height.open_with(u64::from(tokens)), Said::Ack(count));
            }
            Message::Beacon { fence, hops, .. } => {
                self.watch_beacon(&fence);
                self.on_beacon(from, fence, hops);
            }
            Message::Claim {
                lane, generation, ..
            } => self.on_claim(from, lane, generation),
            Message::Promise {
                lane,
                ballot,
                voter,
                height,
            } => {
                let intact = height.is_intact_with(promise_word(lane, voter, ballot));
                self.on_promise(from, lane, ballot, voter, intact);
            }
        }
    }

    /// A peer's priority, repaired: levels above [`Priority::LEVEL_LIMIT`] are cut down to it,
    /// and a rank is possible only under the maximum-concurrency policy. Reports a repair.
    fn sanitize(&mut self, from: NodeId, p: Priority) -> Priority {
        let rank = match self.settings.policy {
            Policy::MaxConcurrency => p.rank,
            _ => 0,
        };
        let fixed = Priority::new(p.level.min(Priority::LEVEL_LIMIT), rank);
        if fixed != p {
            self.outbox.anomaly(from, Anomaly::OutOfRange);
        }
        fixed
    }

    /// The news of lost resources a TOKEN or RELEASE carries, plus what reading `count` may
    /// have given up. Reports copies that disagree.
    fn lost_with(&mut self, from: NodeId, count: Resources, lost: Resources) -> u32 {
        let k = self.settings.k;
        if !lost.read(k).1 {
            self.outbox.anomaly(from, Anomaly::OutOfRange);
        }
        lost.read_high(k).saturating_add(count.at_risk(k)).min(k)
    }

    fn on_token(
        &mut self,
        from: NodeId,
        [available, lost]: [Resources; 2],
        granted: Priority,
        ht: Height,
        fence: FenceCopies,
    ) {
        let k = self.settings.k;
        let linked = self.links.neighbors.get(from).is_some();
        // With recovery, a token of a generation older than one known here is destroyed
        // (its resources were counted free by the later one), and one newer than the token
        // held here destroys that (F7); without, every generation is 0.
        let incoming = fence.read_in(0).map(|value| Fence::new(0, value));
        if let Some(incoming) = incoming.filter(|_| self.watch.is_some()) {
            if !self.admit_generation(incoming) {
                if linked {
                    self.links.hear(from, ht, Said::Info, &mut self.outbox);
                    self.links.ack_token(from, &mut self.outbox);
                }
                if !self.queue.is_empty() {
                    // The sender served our request with a token that is no more: the
                    // requests queued here are nowhere else, so send them on again (F8).
                    self.token_gone();
                }
                return;
            }
        }
        if self.token.is_some() {
            // There is one token; a second one is a duplicate or a faulty peer. Adding its
            // resources could let more than k be used, so it is refused, loudly.
            self.outbox.anomaly(from, Anomaly::Unexpected);
            return;
        }
        if linked {
            // A TOKEN carries the sender's height: from a forming link it completes the
            // handshake (T1).
            self.links.hear(from, ht, Said::Info, &mut self.outbox);
        } else {
            // Still accepted: dropping the only token would block everyone forever.
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
        }
        // t by majority: a corrupted copy is outvoted; without a majority the smallest
        // possible copy, which may lose resources but never creates them (T4). Our own unsent
        // releases join the token here instead of chasing it.
        let (t, intact) = available.read(k);
        let generation = incoming.map_or(0, Fence::generation);
        let mut backlog = core::mem::take(&mut self.backlog);
        if self.backlog_generation != generation {
            // Released under another generation: counted free already, or void (F7).
            backlog = 0;
            self.backlog_lost = 0;
        }
        if !intact || t.saturating_add(backlog) > k {
            self.outbox.anomaly(from, Anomaly::OutOfRange);
        }
        let backlog_lost = core::mem::take(&mut self.backlog_lost);
        self.lost = self
            .lost_with(from, available, lost)
            .saturating_add(backlog_lost)
            .min(k);
        self.grants = match incoming {
            Some(fence) => fence,
            None => {
                // Copies that disagree (or a lane other than 0): a forgery, which no single
                // corrupted field makes. The token is kept, as ever, with the largest copy:
                // if any copy is true, the fences still never go backwards (F1).
                self.outbox.anomaly(from, Anomaly::OutOfRange);
                Fence::new(0, fence.0.iter().map(|f| f.value).max().unwrap_or(0))
            }
        };
        let granted = self.sanitize(from, granted);
        let before = self.queue.front();
        if let Some((front, _)) = before {
            self.queue.raise(front, granted);
        }
        self.token = Some(t.saturating_add(backlog).min(k));
        self.links.next = Some(self.id);
        // A holder's raises are the paper's from now on (F12).
        self.links.jumps = false;
        // Just below the sender if we are above it, as in KRL (the paper moves the recipient
        // unconditionally), told to every other member of `N`.
        self.links.adopt(from, ht, |_| true, &mut self.outbox);
        if linked {
            // Always acknowledged: until it is, the sender ignores what we say of our height.
            self.links.ack_token(from, &mut self.outbox);
        }
        self.heard_token(self.grants);
        if !self.token_arrived(incoming) {
            self.settle(before);
        }
    }

    fn on_request(&mut self, from: NodeId, priority: Priority, ht: Height) {
        let Some(take) = self.links.hear_request(from, ht, &mut self.outbox) else {
            return;
        };
        let priority = self.sanitize(from, priority);
        let before = self.queue.front();
        match take {
            Take::Queue => {
                self.queue.upsert(from, priority);
            }
            Take::Redirect { valid } => self.links.redirect(from, valid, &mut self.outbox),
        }
        self.settle(before);
    }

    fn on_update(&mut self, from: NodeId, priority: Priority) {
        if !self.links.neighbors.is_member(from) {
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
            return;
        }
        let priority = self.sanitize(from, priority);
        let before = self.queue.front();
        if !self.queue.raise(from, priority) {
            // Crossed the token we sent `from`, or a reversal that dropped its entry: it is
            // served or has been told to reroute, so there is nothing to update.
            self.outbox.anomaly(from, Anomaly::Stale);
            return;
        }
        self.settle(before);
    }

    fn on_release(
        &mut self,
        from: NodeId,
        [resources, lost]: [Resources; 2],
        height: Sealed,
        generation: [u32; 3],
    ) {
        let k = self.settings.k;
        let ht = height.open();
        if self.links.neighbors.get(from).is_some() && self.hear_height(from, ht, Said::Info) {
            if ht < self.links.height {
                // Sent to what the sender takes for its lowest neighbour, but we are above it:
                // tell it our height, or the two of us might pass the RELEASE back and forth
                // for ever (T2).
                self.links.tell(from, &mut self.outbox);
            }
            // The height may reverse our link to the sender, as a LINK's would: our request
            // must then find another way (V12).
            self.heard_height(from);
        }
        let (mut r, intact) = resources.read(k);
        if !intact {
            // Copies that disagree are reported; what a read without a majority may give up
            // is news of a loss for the token (T4, P15).
            self.outbox.anomaly(from, Anomaly::OutOfRange);
        }
        let mut lost = self.lost_with(from, resources, lost);
        if !height.is_intact() {
            // The check word covers the kind (W2): without it this may be another message
            // read as a RELEASE, so nothing is added; if it was one, its resources are lost,
            // and that news goes to the token (P15).
            self.outbox.anomaly(from, Anomaly::OutOfRange);
            lost = lost.saturating_add(r).min(k);
            r = 0;
        }
        if r == 0 && lost == 0 {
            if intact {
                self.outbox.anomaly(from, Anomaly::OutOfRange);
            }
            return;
        }
        if !self.links.neighbors.is_member(from) {
            // Still accepted: dropping it would lose resources for good.
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
        }
        // The granting generation by majority; copies without one are a forgery, read as the
        // oldest copy (the resources then count only for a token that old: lost, at worst,
        // until a later generation frees them; F7).
        let generation = match self.watch {
            Some(_) => crate::fence::majority(generation)
                .unwrap_or_else(|| generation.into_iter().min().unwrap_or(0)),
            None => 0,
        };
        if self.token.is_some() && generation != self.grants.generation() {
            if generation < self.grants.generation() {
                // A later generation counted them free already.
                return self.outbox.anomaly(from, Anomaly::Stale);
            }
            // Granted by a later generation than the token here, which is then destroyed;
            // the resources chase the later one.
            if self.destroy_older(Fence::first_of(0, generation)) {
                self.token_gone();
            }
        }
        match self.token.map(|t| t.checked_add(r).filter(|&sum| sum <= k)) {
            Some(Some(sum)) => {
                self.token = Some(sum);
                self.lost = self.lost.saturating_add(lost).min(k);
                self.serve();
            }
            Some(None) => self.outbox.anomaly(from, Anomaly::OutOfRange),
            None => self.forward_release(r, lost, generation),
        }
    }

    /// A LINK, Probe or TokenAck from `from`.
    fn on_link(&mut self, from: NodeId, ht: Height, said: Said) {
        if self.hear_height(from, ht, said) {
            self.heard_height(from);
        }
    }

    /// What a new height of `from` changes: the link may have reversed.
    fn heard_height(&mut self, from: NodeId) {
        let before = self.queue.front();
        if self.links.neighbors.is_lower(from, self.links.height) {
            // `from` is below us now, so it routes its requests elsewhere.
            self.queue.delete(from);
        }
        self.settle(before);
    }

    pub(super) fn link_down(&mut self, peer: NodeId) {
        if !self.links.link_down(peer, &mut self.outbox) {
            return;
        }
        let before = self.queue.front();
        self.queue.delete(peer);
        self.settle(before);
    }
}
