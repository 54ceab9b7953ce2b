//! The handlers of peer messages and link events.
//!
//! Peer input never panics and never corrupts the resource count: what cannot be valid is
//! reported as [`Action::Anomaly`](crate::Action::Anomaly) and repaired on the safe side.
//! Nothing is dropped on a technicality (an unknown sender, a bad field) if dropping it would
//! lose the token, released resources or a request; only values that would break `Σ = k` are
//! refused.

use crate::queue::Priority;
use crate::token::height::Height;
use crate::token::neighbors::{Heard, Said};
use crate::{Anomaly, NodeId};

use super::message::Resources;
use super::{Message, Node, Policy};

impl Node {
    pub(super) fn receive(&mut self, from: NodeId, msg: Message) {
        match msg {
            Message::Token {
                available,
                priority,
                height,
            } => self.on_token(from, available, priority, height.open()),
            Message::Request { priority, height } => {
                self.on_request(from, priority, height.open());
            }
            Message::Update { priority } => self.on_update(from, priority),
            Message::Release { resources, height } => {
                self.on_release(from, resources, height.open());
            }
            Message::Link { height } => self.on_link(from, height.open(), Said::Info),
            Message::Probe { height } => self.on_link(from, height.open(), Said::Probe),
            Message::TokenAck { height } => self.on_link(from, height.open(), Said::Ack),
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

    /// Hear what `from` says of its height (used only if `from` can hold it), report what is
    /// wrong with it, and tell `from` our height if it asked or ours moved during the
    /// handshake. `None` if `from` has no link here.
    fn hear(&mut self, from: NodeId, height: Height, said: Said) -> Option<Heard> {
        let valid = height.possible_from(from).then_some(height);
        match self.neighbors.hear(from, valid, self.height, said) {
            Err(anomaly) => {
                self.outbox.anomaly(from, anomaly);
                None
            }
            Ok(heard) => {
                if valid.is_none() {
                    self.outbox.anomaly(from, Anomaly::OutOfRange);
                }
                if heard.tell {
                    self.outbox.send(
                        from,
                        Message::Link {
                            height: self.height.into(),
                        },
                    );
                }
                Some(heard)
            }
        }
    }

    fn on_token(&mut self, from: NodeId, available: Resources, granted: Priority, ht: Height) {
        let k = self.settings.k;
        if self.token.is_some() {
            // There is one token; a second one is a duplicate or a faulty peer. Adding its
            // resources could let more than k be used, so it is refused, loudly.
            self.outbox.anomaly(from, Anomaly::Unexpected);
            return;
        }
        let linked = self.neighbors.get(from).is_some();
        if linked {
            // A TOKEN carries the sender's height: from a forming link it completes the
            // handshake (T1).
            self.hear(from, ht, Said::Info);
        } else {
            // Still accepted: dropping the only token would block everyone forever.
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
        }
        // The smaller copy of t: a corrupted copy loses resources, never creates them (T4).
        // Our own unsent releases join the token here instead of chasing it.
        let (t, intact) = available.read(k);
        let backlog = core::mem::take(&mut self.backlog);
        if !intact || t.saturating_add(backlog) > k {
            self.outbox.anomaly(from, Anomaly::OutOfRange);
        }
        let granted = self.sanitize(from, granted);
        let before = self.queue.front();
        if let Some((front, _)) = before {
            self.queue.raise(front, granted);
        }
        self.token = Some(t.saturating_add(backlog).min(k));
        self.next = Some(self.id);
        // Just below the sender if we are above it, as in KRL (the paper moves the recipient
        // unconditionally, which a forged TOKEN height would lift above every node: all would
        // then climb over it one level at a time, T5). A height outside the range is not
        // adopted.
        let adopted = ht
            .below(self.id)
            .filter(|_| ht.possible_from(from) && self.height > ht);
        if let Some(adopted) = adopted {
            self.height = adopted;
            self.broadcast_link(Some(from));
        }
        if linked {
            // Always acknowledged: until it is, the sender ignores what we say of our height.
            self.outbox.send(
                from,
                Message::TokenAck {
                    height: self.height.into(),
                },
            );
        }
        self.settle(before);
    }

    fn on_request(&mut self, from: NodeId, priority: Priority, ht: Height) {
        let Some(n) = self.neighbors.get(from) else {
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
            return;
        };
        if !n.received_li() {
            // Sent before `from` received the token we sent it: `from` no longer needs us.
            self.outbox.anomaly(from, Anomaly::Stale);
            return;
        }
        let valid = ht.possible_from(from);
        if !n.in_n && !valid {
            // Its LINK never reached us and this height is impossible: ask for it; the peer
            // answers and, since we are its `next`, asks again (T1).
            self.outbox.anomaly(from, Anomaly::OutOfRange);
            self.ask(from);
            return;
        }
        self.hear(from, ht, Said::Info);
        let priority = self.sanitize(from, priority);
        let before = self.queue.front();
        if self
            .neighbors
            .get(from)
            .is_some_and(|n| n.height > self.height)
        {
            self.queue.upsert(from, priority);
        } else {
            // It takes us for lower than we are (our LINK is on its way, or was corrupted and
            // dropped): tell it our height, and it routes its request elsewhere (T2).
            if valid {
                self.outbox.anomaly(from, Anomaly::Stale);
            }
            self.outbox.send(
                from,
                Message::Link {
                    height: self.height.into(),
                },
            );
        }
        self.settle(before);
    }

    fn on_update(&mut self, from: NodeId, priority: Priority) {
        if !self.neighbors.is_member(from) {
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

    fn on_release(&mut self, from: NodeId, resources: Resources, ht: Height) {
        let k = self.settings.k;
        if self.neighbors.get(from).is_some() {
            self.hear(from, ht, Said::Info);
            if ht.possible_from(from) && ht < self.height {
                // Sent to what the sender takes for its lowest neighbour, but we are above it:
                // tell it our height, or the two of us might pass the RELEASE back and forth
                // for ever (T2).
                self.outbox.send(
                    from,
                    Message::Link {
                        height: self.height.into(),
                    },
                );
            }
        }
        let (r, intact) = resources.read(k);
        if !intact {
            // The smaller possible copy is kept: what is lost is reported (T4).
            self.outbox.anomaly(from, Anomaly::OutOfRange);
        }
        if r == 0 {
            if intact {
                self.outbox.anomaly(from, Anomaly::OutOfRange);
            }
            return;
        }
        if !self.neighbors.is_member(from) {
            // Still accepted: dropping it would lose resources for good.
            self.outbox.anomaly(from, Anomaly::UnknownPeer);
        }
        match self.token.map(|t| t.checked_add(r).filter(|&sum| sum <= k)) {
            Some(Some(sum)) => {
                self.token = Some(sum);
                self.serve();
            }
            Some(None) => self.outbox.anomaly(from, Anomaly::OutOfRange),
            None => self.forward_release(r),
        }
    }

    /// A LINK, Probe or TokenAck from `from`.
    fn on_link(&mut self, from: NodeId, ht: Height, said: Said) {
        if self.hear(from, ht, said).is_none() {
            return;
        }
        if said == Said::Probe {
            // Our `next` asks for our height: it may be the peer of a link it had not noticed
            // when our REQUEST came, which it then had to drop (T1).
            self.ask_again(from);
        }
        if !ht.possible_from(from) {
            // Nothing can be concluded from an impossible height, but it may have been the
            // answer to our Probe (T1): ask again if we still need it.
            if self.needs_links() {
                self.ask_forming();
            }
            return;
        }
        let before = self.queue.front();
        if self.neighbors.is_lower(from, self.height) {
            // `from` is below us now, so it routes its requests elsewhere.
            self.queue.delete(from);
        }
        self.settle(before);
    }

    /// A new link, or (for a link already known) the link layer confirming it: a keepalive,
    /// on which the node announces its height again, and asks again if the peer is its way to
    /// the token, so a view of it or a REQUEST to it corrupted on the way is corrected (T6).
    pub(super) fn link_up(&mut self, peer: NodeId) {
        if peer == self.id {
            self.outbox.anomaly(peer, Anomaly::RedundantLinkEvent);
            return;
        }
        self.neighbors.link_up(peer, self.height);
        if self.needs_links() && self.neighbors.get(peer).is_some_and(|n| n.forming) {
            // No way down and a request to forward: this link may be the way, and the peer's
            // LINK may already have come and gone (T1). Ask for it.
            self.ask_forming();
        } else {
            self.outbox.send(
                peer,
                Message::Link {
                    height: self.height.into(),
                },
            );
            self.ask_again(peer);
        }
    }

    /// Send our REQUEST again if `peer` is our way to the token: it may not have it (T1, T6).
    /// A REQUEST already queued there only has its priority raised.
    fn ask_again(&mut self, peer: NodeId) {
        if let Some((_, priority)) = self.queue.front() {
            if self.token.is_none() && self.live_next() == Some(peer) {
                self.outbox.send(
                    peer,
                    Message::Request {
                        priority,
                        height: self.height.into(),
                    },
                );
            }
        }
    }

    /// Without the token, with requests to forward and no member of `N` below, or with released
    /// resources and nobody in `N` to send them to.
    fn needs_links(&self) -> bool {
        let requests = !self.queue.is_empty() && self.neighbors.all_higher(self.height);
        let releases = self.backlog > 0 && self.neighbors.is_empty();
        self.token.is_none() && (requests || releases)
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
