//! The paper's procedures: giveTokenToFrontOfQ, forwardUpdate, forwardRelease, raiseHeight,
//! and the bookkeeping every handler ends with (forwardRequest is the token module's).

use crate::node::Outbox;
use crate::queue::Priority;
use crate::token::height::{Height, Sealed};
use crate::token::links::{LinkMessages, Links, TokenNode};
use crate::token::recovery::Recover;
use crate::{Action, Fence, NodeId, Status};

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
        let (neighbors, own) = (&self.links.neighbors, self.links.height);
        if self.token.is_some() {
            if !neighbors.is_empty() && neighbors.all_lower(own) {
                // lowerHeight (KRL's mirror of raiseHeight, not in this paper), told to every
                // neighbour: without it, a holder left above every neighbour (a link failure,
                // or a forged TOKEN height) is reached only once the others have climbed over
                // it by partial reversal, one level per reversal (T5).
                self.links.lower(|_, _| true, &mut self.outbox);
            }
            self.serve();
            return;
        }
        if !neighbors.is_empty() && neighbors.all_higher(own) {
            self.raise_height();
            self.flush_backlog();
            return;
        }
        self.links.trim(&mut self.outbox);
        if let Some((_, now)) = self.queue.front() {
            match (before, self.links.live_next()) {
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

    /// giveTokenToFrontOfQ, looped: serve the queue while holding the token.
    ///
    /// The paper's blocking "wait until t ≥ h" is a state: when the node's own request is at
    /// the front and `t < h`, it keeps the token (and its entry at the front) until released
    /// resources come back, or until a higher-priority request overtakes its entry, which
    /// passes the token on (preemption).
    pub(super) fn serve(&mut self) {
        while let (Some(t), Some(head)) = (self.token, self.queue.front()) {
            let (front, granted) = if head.0 == self.id && t < self.wanted {
                if self.wanted <= self.settings.k.saturating_sub(self.lost) {
                    return;
                }
                // Our request is above what can ever be free again (resources lost to a
                // corrupted count, reported): it waits without holding up the requests
                // behind it (P15).
                let Some(second) = self.queue.iter().nth(1) else {
                    return;
                };
                self.queue.delete(second.0);
                second
            } else {
                self.queue.pop();
                head
            };
            // The REQUEST that follows a token carries the rest's priority from before this
            // aging step: the recipient then ranks it below the request it was granted for, as
            // we did, so two waiting nodes cannot bounce the token between them forever.
            let rest = self.queue.front().map(|(_, p)| p);
            self.queue.age(self.settings.aging_step);
            if front == self.id {
                self.token = Some(t - self.wanted);
                self.status = Status::Critical;
                self.grants = self.grants.next();
                self.entry_generation = self.grants.generation();
                let fence = self.grants;
                self.outbox.push(Action::EnterCritical {
                    resources: self.wanted,
                    fence,
                });
                self.start_lease(fence);
                self.rearm_rebuild();
                continue;
            }
            // Entries are deleted with their link, so a queued peer always has one: a bug
            // otherwise (caught in debug builds). Release builds skip the entry, keeping the
            // token rather than sending it over a missing link.
            debug_assert!(
                self.links.neighbors.get(front).is_some(),
                "{front:?} queued unlinked"
            );
            if !self.give_token(front, granted) {
                continue;
            }
            if let Some(priority) = rest {
                // So that the token comes back for the rest of the queue.
                self.outbox.send(
                    front,
                    Message::Request {
                        priority,
                        height: self.links.height.into(),
                    },
                );
            }
            return;
        }
    }

    /// Send the token held here to `to` (granted at `granted`) with its count, its news of
    /// lost resources and its fence; false (and nothing changed) without the token or a link
    /// to `to`.
    pub(super) fn give_token(&mut self, to: NodeId, granted: Priority) -> bool {
        let Some(t) = self.token else {
            return false;
        };
        // The recipient will adopt this height (TOKEN handler); until it acknowledges,
        // nothing it says about its height is recorded.
        if !self.links.token_sent(to) {
            return false;
        }
        self.token = None;
        let grants = core::mem::replace(&mut self.grants, Fence::new(0, 0));
        let lost = core::mem::take(&mut self.lost);
        self.token_left(grants);
        self.outbox.send(
            to,
            Message::Token {
                available: Resources::new(t),
                lost: Resources::new(lost),
                priority: granted,
                height: self.links.height.into(),
                fence: grants.into(),
            },
        );
        true
    }

    /// forwardRelease: send RELEASE(r) towards the token (the lowest neighbour), with the
    /// news of `lost` resources lost on the way (P15). Unlike the paper it leaves `next`
    /// alone: `next` tracks where this node's REQUEST went, and moving it would hide a later
    /// failure or reversal of that link. An isolated node keeps both in its backlog.
    pub(super) fn forward_release(&mut self, resources: u32, lost: u32, generation: u32) {
        let k = self.settings.k;
        match self.links.neighbors.lowest() {
            Some(lowest) => self.outbox.send(
                lowest,
                Message::Release {
                    resources: Resources::new(resources),
                    lost: Resources::new(lost),
                    height: self.links.height.into(),
                    generation: [generation; 3],
                },
            ),
            None => {
                // Releases of one generation add up; a later generation voids the earlier
                // ones' (it counted their resources free), and an earlier one is void (F7).
                let empty = self.backlog == 0 && self.backlog_lost == 0;
                if empty || generation > self.backlog_generation {
                    self.backlog = 0;
                    self.backlog_lost = 0;
                    self.backlog_generation = generation;
                }
                if generation == self.backlog_generation {
                    self.backlog = self.backlog.saturating_add(resources).min(k);
                    self.backlog_lost = self.backlog_lost.saturating_add(lost).min(k);
                }
                // The way to the token may lie through a link still forming (T1).
                self.links.ask_forming(&mut self.outbox);
            }
        }
    }

    fn flush_backlog(&mut self) {
        if (self.backlog > 0 || self.backlog_lost > 0) && !self.links.neighbors.is_empty() {
            let r = core::mem::take(&mut self.backlog);
            let lost = core::mem::take(&mut self.backlog_lost);
            self.forward_release(r, lost, self.backlog_generation);
        }
    }

    /// raiseHeight: partial reversal, LINK to every neighbour, drop the requests of neighbours
    /// now below, and reroute the rest (only a forged view at the edge of the height range
    /// makes the reversal fail, since an isolated node does not raise: the lowest neighbour
    /// is asked anyway, and its answer corrects the view).
    fn raise_height(&mut self) {
        if !self.links.may_raise(&mut self.outbox) {
            // Paced: the pause's end settles again (R15); the queue waits, as it has no way
            // down.
            return;
        }
        if self.links.raise(&mut self.outbox).is_some() {
            let links = &self.links;
            self.queue.delete_where(|v| links.reversed(v));
        }
        self.forward_request();
    }
}

impl LinkMessages for Message {
    fn link_info(height: Sealed) -> Self {
        Message::Link { height }
    }

    fn probe(height: Sealed) -> Self {
        Message::Probe { height }
    }

    fn token_ack(height: Height, tokens: u16) -> Self {
        Message::token_ack(height, tokens)
    }
}

impl TokenNode for Node {
    type Message = Message;

    fn links(&self) -> &Links {
        &self.links
    }

    fn links_mut(&mut self) -> (&mut Links, &mut Outbox<Message>) {
        (&mut self.links, &mut self.outbox)
    }

    fn waiting(&self) -> bool {
        self.token.is_none() && !self.queue.is_empty()
    }

    /// A REQUEST already queued at the receiver only has its priority raised.
    fn request(&self) -> Message {
        Message::Request {
            priority: self.queue.front().map_or(Priority::new(0, 0), |(_, p)| p),
            height: self.links.height.into(),
        }
    }

    fn releases_waiting(&self) -> bool {
        self.token.is_none() && self.backlog > 0
    }
}
