//! The handlers of peer messages and link events.
//!
//! Peer input never panics and never corrupts the resource count: what cannot be valid is
//! ignored and reported as [`Action::Anomaly`](crate::Action::Anomaly). The token and released
//! resources are never dropped on a technicality (an unknown sender); only values that would
//! break `Σ = k` are refused.

use crate::height::Height;
use crate::queue::Priority;
use crate::{Anomaly, NodeId};

use super::{Message, Node};

impl Node {
    pub(super) fn receive(&mut self, from: NodeId, msg: Message) {
        match msg {
            Message::Token {
                available,
                priority,
                height,
            } => self.on_token(from, available, priority, height),
            Message::Request { priority, height } => self.on_request(from, priority, height),
            Message::Update { priority } => self.on_update(from, priority),
            Message::Release { resources } => self.on_release(from, resources),
            Message::Link { height } => self.on_link(from, height),
        }
    }

    fn on_token(&mut self, from: NodeId, available: u32, granted: Priority, ht: Height) {
        let k = self.settings.k;
        if self.token.is_some() {
            // There is one token; a second one is a duplicate or a faulty peer. Adding its
            // resources could let more than k be used, so it is refused, loudly.
            self.outbox.anomaly(from, Anomaly::Unexpected);
            return;
        }
        if !self.neighbors.is_member(from) {
            // Still accepted: dropping the only token would block everyone forever.
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
        }
        // Our own unsent releases join the token here instead of chasing it.
        let t = available
            .checked_add(core::mem::take(&mut self.backlog))
            .filter(|&t| t <= k);
        if t.is_none() || ht.id != from {
            self.outbox.anomaly(from, Anomaly::OutOfRange);
        }
        let before = self.queue.front();
        if let Some((front, _)) = before {
            self.queue.raise(front, granted);
        }
        self.token = Some(t.unwrap_or(k));
        self.next = Some(self.id);
        if let Some(n) = self.neighbors.get_mut(from).filter(|n| n.in_n) {
            n.height = Height::new(ht.h1, ht.h2, from);
        }
        // Unconditionally just below the sender (the paper; KRL only lowers): the sender set
        // its view of us to exactly this height and waits for a LINK carrying it.
        self.height = Height::new(ht.h1, ht.h2, from).just_below(self.id);
        self.broadcast_link();
        self.settle(before);
    }

    fn on_request(&mut self, from: NodeId, priority: Priority, ht: Height) {
        let Some(n) = self.neighbors.get_mut(from).filter(|n| n.in_n) else {
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
            return;
        };
        if ht.id != from {
            self.outbox.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        if !n.received_li() {
            // Sent before `from` received the token we sent it: `from` no longer needs us.
            self.outbox.anomaly(from, Anomaly::Stale);
            return;
        }
        n.height = ht;
        let before = self.queue.front();
        if self.height < ht {
            self.queue.upsert(from, priority);
        }
        self.settle(before);
    }

    fn on_update(&mut self, from: NodeId, priority: Priority) {
        if !self.neighbors.is_member(from) {
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
            return;
        }
        let before = self.queue.front();
        if !self.queue.raise(from, priority) {
            // Crossed the token we sent `from`, or a reversal that dropped its entry: it is
            // served or has been told to reroute, so there is nothing to update.
            self.outbox.anomaly(from, Anomaly::Stale);
            return;
        }
        self.settle(before);
    }

    fn on_release(&mut self, from: NodeId, resources: u32) {
        let k = self.settings.k;
        if resources == 0 || resources > k {
            self.outbox.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        if !self.neighbors.is_member(from) {
            // Still accepted: dropping it would lose resources for good.
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
        }
        match self
            .token
            .map(|t| t.checked_add(resources).filter(|&sum| sum <= k))
        {
            Some(Some(sum)) => {
                self.token = Some(sum);
                self.serve();
            }
            Some(None) => self.outbox.anomaly(from, Anomaly::OutOfRange),
            None => self.forward_release(resources),
        }
    }

    fn on_link(&mut self, from: NodeId, ht: Height) {
        // The acknowledgement of our token is the LINK carrying exactly the height we assumed
        // for the recipient (its height update on TOKEN is unconditional, so it always does).
        match self
            .neighbors
            .hear(from, ht, self.height, |n| n.height == ht)
        {
            Err(anomaly) => return self.outbox.anomaly(from, anomaly),
            // Our LINK at link formation carried `form_height`; we moved since, so say it again.
            Ok(true) => self.outbox.send(
                from,
                Message::Link {
                    height: self.height,
                },
            ),
            Ok(false) => {}
        }
        let lower = self.neighbors.is_lower(from, self.height);
        let before = self.queue.front();
        if lower {
            self.queue.delete(from);
        }
        self.settle(before);
    }

    pub(super) fn link_up(&mut self, peer: NodeId) {
        if peer == self.id || !self.neighbors.link_up(peer, self.height) {
            self.outbox.anomaly(peer, Anomaly::RedundantLinkEvent);
            return;
        }
        self.outbox.send(
            peer,
            Message::Link {
                height: self.height,
            },
        );
    }

    pub(super) fn link_down(&mut self, peer: NodeId) {
        if !self.neighbors.link_down(peer) {
            self.outbox.anomaly(peer, Anomaly::RedundantLinkEvent);
            return;
        }
        if self.next == Some(peer) {
            self.next = None;
        }
        let before = self.queue.front();
        self.queue.delete(peer);
        self.settle(before);
    }
}
