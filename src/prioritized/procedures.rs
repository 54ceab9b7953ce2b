//! The paper's procedures: giveTokenToFrontOfQ, forwardRequest, forwardUpdate,
//! forwardRelease, raiseHeight, and the bookkeeping every handler ends with.

use crate::queue::Priority;
use crate::token::height;
use crate::{Action, NodeId, Status};

use super::message::Resources;
use super::{Message, Node};

impl Node {
    /// What every handler that touched the queue or the link directions ends with.
    ///
    /// A token holder serves its queue. A node without the token that has lost its last
    /// outgoing link raises its height (which reroutes its request); one far above every
    /// neighbour comes down to one level above them (T7); then it makes sure
    /// the token holder hears of its queue: a REQUEST when the queue just became non-empty or
    /// the link to `next` is gone or reversed, an UPDATE when the front's priority rose.
    /// `before` is the queue's front when the handler started.
    pub(super) fn settle(&mut self, before: Option<(NodeId, Priority)>) {
        if self.token.is_some() {
            if !self.neighbors.is_empty() && self.neighbors.all_lower(self.height) {
                self.lower_height();
            }
            self.serve();
            return;
        }
        if !self.neighbors.is_empty() && self.neighbors.all_higher(self.height) {
            self.raise_height();
            self.flush_backlog();
            return;
        }
        if let Some(trimmed) = height::trim(self.height, self.neighbors.heights()) {
            // Far above every neighbour: come down to one level above them (T7).
            self.height = trimmed;
            self.broadcast_link(None);
        }
        if let Some((_, now)) = self.queue.front() {
            match (before, self.live_next()) {
                (Some((_, was)), Some(next)) => {
                    if now > was {
                        self.outbox.send(next, Message::Update { priority: now });
                    }
                }
                _ => self.forward_request(),
            }
        }
        self.flush_backlog();
    }

    /// `next`, unless its link failed or no longer points down.
    pub(super) fn live_next(&self) -> Option<NodeId> {
        self.next
            .filter(|&v| self.neighbors.is_lower(v, self.height))
    }

    /// giveTokenToFrontOfQ, looped: serve the queue while holding the token.
    ///
    /// The paper's blocking "wait until t ≥ h" is a state: when the node's own request is at
    /// the front and `t < h`, it keeps the token (and its entry at the front) until released
    /// resources come back, or until a higher-priority request overtakes its entry, which
    /// passes the token on (preemption).
    pub(super) fn serve(&mut self) {
        while let (Some(t), Some((front, granted))) = (self.token, self.queue.front()) {
            if front == self.id && t < self.wanted {
                return;
            }
            self.queue.pop();
            // The REQUEST that follows a token carries the rest's priority from before this
            // aging step: the recipient then ranks it below the request it was granted for, as
            // we did, so two waiting nodes cannot bounce the token between them forever.
            let rest = self.queue.front().map(|(_, p)| p);
            self.queue.age(self.settings.aging_step);
            if front == self.id {
                self.token = Some(t - self.wanted);
                self.status = Status::Critical;
                self.outbox.push(Action::EnterCritical {
                    resources: self.wanted,
                });
                continue;
            }
            // Entries are deleted with their link, so a queued peer always has one: a bug
            // otherwise (caught in debug builds). Release builds skip the entry, keeping the
            // token rather than sending it over a missing link.
            debug_assert!(
                self.neighbors.get(front).is_some(),
                "{front:?} queued unlinked"
            );
            let Some(peer) = self.neighbors.get_mut(front) else {
                continue;
            };
            // The recipient will adopt this height (TOKEN handler); until its LINK confirms
            // it, nothing it says about its height is recorded.
            peer.token_sent(self.height.just_below(front));
            self.token = None;
            self.next = Some(front);
            self.outbox.send(
                front,
                Message::Token {
                    available: Resources::new(t),
                    priority: granted,
                    height: self.height.into(),
                },
            );
            if let Some(priority) = rest {
                // So that the token comes back for the rest of the queue.
                self.outbox.send(
                    front,
                    Message::Request {
                        priority,
                        height: self.height.into(),
                    },
                );
            }
            return;
        }
    }

    /// forwardRequest: send REQUEST, with the front's priority, to the lowest neighbour. A
    /// node with no member of `N` has no `next`; it asks its forming links for their peers'
    /// heights (T1), and the first LINK reroutes.
    pub(super) fn forward_request(&mut self) {
        self.next = self.neighbors.lowest();
        let Some((_, priority)) = self.queue.front() else {
            return;
        };
        match self.next {
            Some(next) => self.outbox.send(
                next,
                Message::Request {
                    priority,
                    height: self.height.into(),
                },
            ),
            None => self.ask_forming(),
        }
    }

    /// Send a Probe to every forming link not asked yet: this node needs its links now.
    pub(super) fn ask_forming(&mut self) {
        let own = self.height;
        for peer in self.neighbors.ask_forming(own) {
            self.outbox
                .send(peer, Message::Probe { height: own.into() });
        }
    }

    /// Ask one forming link's peer for its height with a Probe.
    pub(super) fn ask(&mut self, peer: NodeId) {
        let own = self.height;
        if let Some(entry) = self.neighbors.get_mut(peer) {
            entry.asked = true;
            entry.form_height = own;
        }
        self.outbox
            .send(peer, Message::Probe { height: own.into() });
    }

    /// forwardRelease: send RELEASE(r) towards the token (the lowest neighbour). Unlike the
    /// paper it leaves `next` alone: `next` tracks where this node's REQUEST went, and moving
    /// it would hide a later failure or reversal of that link. An isolated node keeps the
    /// resources in its backlog.
    pub(super) fn forward_release(&mut self, resources: u32) {
        match self.neighbors.lowest() {
            Some(lowest) => self.outbox.send(
                lowest,
                Message::Release {
                    resources: Resources::new(resources),
                    height: self.height.into(),
                },
            ),
            None => {
                self.backlog = self.backlog.saturating_add(resources).min(self.settings.k);
                // The way to the token may lie through a link still forming (T1).
                self.ask_forming();
            }
        }
    }

    fn flush_backlog(&mut self) {
        if self.backlog > 0 && !self.neighbors.is_empty() {
            let r = core::mem::take(&mut self.backlog);
            self.forward_release(r);
        }
    }

    /// raiseHeight: partial reversal, LINK to every neighbour, drop the requests of neighbours
    /// now below, and reroute the rest. The node also asks its forming links (T1): the way down
    /// may lie through one of them, and without it nodes cut off from the token in `N` would
    /// raise over each other for ever.
    pub(super) fn raise_height(&mut self) {
        let Some(raised) = height::raise(self.height, self.neighbors.heights()) else {
            // Only a forged view at the edge of the height range leads here (an isolated node
            // does not raise): ask the lowest neighbour anyway; its answer corrects the view.
            self.ask_forming();
            self.forward_request();
            return;
        };
        self.height = raised;
        self.raises += 1;
        self.broadcast_link(None);
        self.ask_forming();
        let (id, neighbors) = (self.id, &self.neighbors);
        self.queue
            .delete_where(|v| v != id && neighbors.is_lower(v, raised));
        self.forward_request();
    }

    /// lowerHeight (KRL's mirror of raiseHeight, not in this paper): a holder with no higher
    /// neighbour drops just below its highest one, so that requests, which travel downhill,
    /// can reach it. Without it, a holder left above every neighbour (a link failure, or a
    /// forged TOKEN height) is reached only once the others have climbed over it by partial
    /// reversal, one level per reversal (T5).
    fn lower_height(&mut self) {
        if let Some(lowered) = height::lower(self.height, self.neighbors.heights()) {
            self.height = lowered;
            self.broadcast_link(None);
        }
    }

    /// Send LINK with the current height to every member of `N` but `except`.
    pub(super) fn broadcast_link(&mut self, except: Option<NodeId>) {
        let height = self.height.into();
        for n in self.neighbors.members().filter(|n| Some(n.id) != except) {
            self.outbox.send(n.id, Message::Link { height });
        }
    }
}
