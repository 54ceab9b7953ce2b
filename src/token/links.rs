//! The link and height handling both token algorithms share: the LinkInfo/Probe handshake,
//! keepalives, partial reversal and its mirror with the announcements that follow them,
//! trimming, and `next`. Each algorithm's node keeps a [`Links`] and implements [`TokenNode`];
//! where the two algorithms differ (which neighbours hear of a lowered height, what a REQUEST
//! carries), the caller says so.

use crate::node::Outbox;
use crate::token::height::{self, Height, Sealed};
use crate::token::neighbors::{Heard, Neighbor, Neighbors, Said};
use crate::token::pause::{Pacer, RaisePause};
use crate::{Anomaly, NodeId};

/// The messages the shared handshake sends.
pub(crate) trait LinkMessages {
    /// Our height: KRL's LinkInfo, the prioritized algorithm's LINK.
    fn link_info(height: Sealed) -> Self;
    /// Our height and a question for the peer's (T1).
    fn probe(height: Sealed) -> Self;
    /// Our height and the tokens received from the peer over this link (R13).
    fn token_ack(height: Height, tokens: u16) -> Self;
}

/// A node's own height, its view of its neighbours, and `next`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Links {
    /// The node's height (its id is the node's).
    pub(crate) height: Height,
    /// The neighbour table.
    pub(crate) neighbors: Neighbors,
    /// Where the last REQUEST or token went; the node itself while it holds a token; `None`
    /// when that link failed or no neighbour could be asked, so that a link re-formed to the
    /// same peer is not mistaken for a live request path.
    pub(crate) next: Option<NodeId>,
    /// Partial reversals performed (a simulator metric).
    pub(crate) raises: u64,
    /// The node restarted and has held no token since: its raises are full reversals, above
    /// every neighbour (F12).
    pub(crate) jumps: bool,
    /// The pacing of raises, if configured ([`RaisePause`]).
    pacer: Option<Pacer>,
}

/// How to take a REQUEST that [`Links::hear_request`] let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Take {
    /// The sender is above us: queue its request.
    Queue,
    /// The sender is not above us in our view: [`Links::redirect`] it.
    Redirect {
        /// Whether the REQUEST's height was possible.
        valid: bool,
    },
}

impl Links {
    /// A node at `height` whose neighbours' heights are known, with its initial `next`, its
    /// raises paced by `pause` if given.
    pub(crate) fn new(
        height: Height,
        neighbors: impl IntoIterator<Item = Height>,
        next: Option<NodeId>,
        pause: Option<RaisePause>,
    ) -> Self {
        Links {
            height,
            neighbors: Neighbors::with_known(neighbors),
            next,
            raises: 0,
            jumps: false,
            pacer: pause.map(Pacer::new),
        }
    }

    /// With `jumps`: the node restarted holding no token, so its raises jump above every
    /// neighbour until it holds one (F12).
    pub(crate) fn jumping(self, jumps: bool) -> Self {
        Links { jumps, ..self }
    }

    /// A raise is due: whether it may be made now (always, unpaced), else it waits for the
    /// running pause ([`Links::pause_ended`]). A raise that waits forgets `next`: the node has
    /// no way down, so the REQUEST that went along it is void (its receiver, now above, drops
    /// it), and whatever settles the node next must send the queue's request again rather
    /// than trust `next` should it point down once more (R15).
    pub(crate) fn may_raise<M>(&mut self, out: &mut Outbox<M>) -> bool {
        let now = self.pacer.as_mut().is_none_or(|p| p.may_raise(out));
        if !now {
            self.next = None;
        }
        now
    }

    /// Whether `timer` is the raise pause's (its expiry goes to [`Links::pause_ended`]).
    pub(crate) fn paces(&self, timer: crate::TimerId) -> bool {
        self.pacer.is_some() && Pacer::owns(timer)
    }

    /// The raise pause `timer` ended: `true` if a raise waited for it, so the node must look
    /// again whether it still has no way down.
    pub(crate) fn pause_ended(&mut self, timer: crate::TimerId) -> bool {
        self.pacer.as_mut().is_some_and(|p| p.expired(timer))
    }

    /// `next`, unless its link failed or no longer points down.
    #[inline]
    pub(crate) fn live_next(&self) -> Option<NodeId> {
        self.next
            .filter(|&v| self.neighbors.is_lower(v, self.height))
    }

    /// Hear what `j` says of its height (`h`, used only if `j` can hold it), report what is
    /// wrong with it, and tell `j` our height if it asked or ours moved during the handshake.
    /// `None` if `j` has no link here.
    pub(crate) fn hear<M: LinkMessages>(
        &mut self,
        j: NodeId,
        h: Height,
        said: Said,
        out: &mut Outbox<M>,
    ) -> Option<Heard> {
        let valid = h.possible_from(j).then_some(h);
        match self.neighbors.hear(j, valid, self.height, said) {
            Err(anomaly) => {
                out.anomaly(j, anomaly);
                None
            }
            Ok(heard) => {
                if valid.is_none() || heard.bad_count {
                    out.anomaly(j, Anomaly::OutOfRange);
                }
                if heard.tell {
                    self.tell(j, out);
                }
                if valid.is_none() {
                    self.doubt(j, heard.tell, out);
                }
                Some(heard)
            }
        }
    }

    /// Send `j` our height: with the count of tokens received from it, if any, so the answer
    /// also settles what a lost acknowledgement did not (R13). On a FIFO link every token
    /// that count includes was acknowledged before, so without faults it acts as a LinkInfo.
    pub(crate) fn tell<M: LinkMessages>(&self, j: NodeId, out: &mut Outbox<M>) {
        let msg = match self.neighbors.get(j).map_or(0, |n| n.received) {
            0 => M::link_info(self.height.into()),
            tokens => M::token_ack(self.height, tokens),
        };
        out.send(j, msg);
    }

    /// While tokens we sent `j` are unacknowledged, ask `j` for its height, which it answers
    /// with its count of our tokens (R13): on a keepalive, and when a message of `j` fails its
    /// check (`doubt`).
    pub(crate) fn ask_ack<M: LinkMessages>(&self, j: NodeId, out: &mut Outbox<M>) {
        if self.neighbors.get(j).is_some_and(|n| n.unacked > 0) {
            out.send(j, M::probe(self.height.into()));
        }
    }

    /// A message of `j` failed its check (or its height is impossible). It may have been our
    /// acknowledgement, so we ask again ([`Links::ask_ack`]); or, if `j` sent us tokens, its
    /// question for our acknowledgement, so we answer (unless `answered` already). Either
    /// exchange repeats until one gets through, so no number of corrupted messages pins the
    /// link (R13). Without a fault no message fails its check, so neither is ever sent.
    fn doubt<M: LinkMessages>(&self, j: NodeId, answered: bool, out: &mut Outbox<M>) {
        if !answered && self.neighbors.get(j).is_some_and(|n| n.received > 0) {
            self.tell(j, out);
        }
        self.ask_ack(j, out);
    }

    /// Acknowledge a token that came from `j` over its link: one more received, and our
    /// height with the count.
    pub(crate) fn ack_token<M: LinkMessages>(&mut self, j: NodeId, out: &mut Outbox<M>) {
        if let Some(entry) = self.neighbors.get_mut(j) {
            entry.received = entry.received.wrapping_add(1);
            out.send(j, M::token_ack(self.height, entry.received));
        }
    }

    /// Send our height to the members of `N` that `to` picks, in id order.
    pub(crate) fn announce<M: LinkMessages>(
        &self,
        mut to: impl FnMut(&Neighbor) -> bool,
        out: &mut Outbox<M>,
    ) {
        let height = self.height.into();
        for n in self.neighbors.members().filter(|n| to(n)) {
            out.send(n.id, M::link_info(height));
        }
    }

    /// Ask one forming link's peer for its height with a Probe.
    pub(crate) fn ask<M: LinkMessages>(&mut self, j: NodeId, out: &mut Outbox<M>) {
        let own = self.height;
        self.neighbors.asked(j, own);
        out.send(j, M::probe(own.into()));
    }

    /// Send a Probe to every forming link not asked yet: this node needs its links now.
    pub(crate) fn ask_forming<M: LinkMessages>(&mut self, out: &mut Outbox<M>) {
        let own = self.height;
        for peer in self.neighbors.ask_forming(own) {
            out.send(peer, M::probe(own.into()));
        }
    }

    /// The checks a REQUEST from `j` carrying `h` passes before it is taken, with the
    /// handshake it completes: `None` (reported) from an unknown peer, one we sent a token
    /// that has not acknowledged it (the token answered the request), or one whose LinkInfo
    /// never came and whose height is impossible (asked for with a Probe: the peer answers
    /// and, since we are its `next`, asks again; T1).
    pub(crate) fn hear_request<M: LinkMessages>(
        &mut self,
        j: NodeId,
        h: Height,
        out: &mut Outbox<M>,
    ) -> Option<Take> {
        let Some(entry) = self.neighbors.get(j) else {
            out.anomaly(j, Anomaly::UnknownPeer);
            return None;
        };
        let valid = h.possible_from(j);
        if !entry.received_li() {
            out.anomaly(j, Anomaly::Stale);
            if !valid {
                out.anomaly(j, Anomaly::OutOfRange);
                self.doubt(j, false, out);
            }
            return None;
        }
        if !entry.in_n && !valid {
            out.anomaly(j, Anomaly::OutOfRange);
            self.ask(j, out);
            return None;
        }
        // From a forming link a REQUEST completes the handshake its lost LinkInfo would have
        // (T1). An impossible height leaves our view as it was.
        self.hear(j, h, Said::Info, out);
        Some(
            if self
                .neighbors
                .get(j)
                .is_some_and(|n| n.height > self.height)
            {
                Take::Queue
            } else {
                Take::Redirect { valid }
            },
        )
    }

    /// `j` takes us for lower than we are (our LinkInfo is on its way, or was corrupted and
    /// dropped): tell it our height, and it routes its request elsewhere (T2).
    pub(crate) fn redirect<M: LinkMessages>(&self, j: NodeId, valid: bool, out: &mut Outbox<M>) {
        if valid {
            out.anomaly(j, Anomaly::Stale);
        }
        self.tell(j, out);
    }

    /// Forget the link to `j` (reported if there was none) and `next` if it was `j`: our
    /// request died with the link, and even if it re-forms, `j` has dropped it.
    pub(crate) fn link_down<M>(&mut self, j: NodeId, out: &mut Outbox<M>) -> bool {
        if !self.neighbors.link_down(j) {
            out.anomaly(j, Anomaly::RedundantLinkEvent);
            return false;
        }
        if self.next == Some(j) {
            self.next = None;
        }
        true
    }

    /// Partial reversal (RaiseHeight), announced to every member of `N`; the new height, or
    /// `None` if the node is isolated or the reversal would leave the height range (only a
    /// forged view at its edge causes that). Either way the node asks its forming links
    /// (T1): the way down may lie through one of them, and without it nodes cut off from
    /// every token in `N` would raise over each other for ever.
    pub(crate) fn raise<M: LinkMessages>(&mut self, out: &mut Outbox<M>) -> Option<Height> {
        let jumped = self
            .jumps
            .then(|| height::jump(self.height, self.neighbors.heights()))
            .flatten();
        let raised = jumped.or_else(|| height::raise(self.height, self.neighbors.heights()));
        if let Some(raised) = raised {
            self.height = raised;
            self.raises += 1;
            self.announce(|_| true, out);
        }
        self.ask_forming(out);
        raised
    }

    /// Whether a queued request of `q` must go after a reversal: `q` is now below us, so it
    /// routes its requests elsewhere.
    #[inline]
    pub(crate) fn reversed(&self, q: NodeId) -> bool {
        q != self.height.id && self.neighbors.is_lower(q, self.height)
    }

    /// LowerHeight, the mirror of partial reversal: `tell` picks (given the new height) the
    /// members of `N` that hear of it.
    pub(crate) fn lower<M: LinkMessages>(
        &mut self,
        tell: impl Fn(&Neighbor, Height) -> bool,
        out: &mut Outbox<M>,
    ) {
        if let Some(lowered) = height::lower(self.height, self.neighbors.heights()) {
            self.height = lowered;
            self.announce(|n| tell(n, lowered), out);
        }
    }

    /// A leaving node (L4) rises one level above every member of `N` (a full reversal, as a
    /// restarted node's, F12), told to all of them: every link now points away from it, so
    /// routes that went through it move to other neighbours where there are any. Nothing if
    /// `N` is empty or the top of the range is reached.
    pub(crate) fn rise_to_leave<M: LinkMessages>(&mut self, out: &mut Outbox<M>) {
        if let Some(risen) = height::jump(self.height, self.neighbors.heights()) {
            self.height = risen;
            self.announce(|_| true, out);
        }
    }

    /// No token sent from here waits for its acknowledgement (L4).
    pub(crate) fn all_acked(&self) -> bool {
        self.neighbors.entries().all(|n| n.unacked == 0)
    }

    /// A node far above every neighbour comes down to one level above them (T7).
    pub(crate) fn trim<M: LinkMessages>(&mut self, out: &mut Outbox<M>) {
        if let Some(trimmed) = height::trim(self.height, self.neighbors.heights()) {
            self.height = trimmed;
            self.announce(|_| true, out);
        }
    }

    /// A token came from `from` at height `h`: go just below it if we are above it, and tell
    /// the members of `N` but `from` that `tell` picks. Never to a height outside the range,
    /// nor up: a forged TOKEN height would lift us above every node, and all would then climb
    /// over us one level at a time (T5).
    pub(crate) fn adopt<M: LinkMessages>(
        &mut self,
        from: NodeId,
        h: Height,
        mut tell: impl FnMut(&Neighbor) -> bool,
        out: &mut Outbox<M>,
    ) {
        let adopted = h
            .below(self.height.id)
            .filter(|_| h.possible_from(from) && self.height > h);
        if let Some(adopted) = adopted {
            self.height = adopted;
            self.announce(|n| n.id != from && tell(n), out);
        }
    }

    /// We are sending `to` a token: it becomes `next`, and until it acknowledges, we take it
    /// to be just below us. False (and nothing changed) if `to` has no link.
    #[inline]
    pub(crate) fn token_sent(&mut self, to: NodeId) -> bool {
        let assumed = self.height.just_below(to);
        let Some(entry) = self.neighbors.get_mut(to) else {
            return false;
        };
        entry.token_sent(assumed);
        self.next = Some(to);
        true
    }
}

/// A token algorithm's node, as the shared link handlers see it.
pub(crate) trait TokenNode {
    /// The algorithm's message.
    type Message: LinkMessages;

    /// The node's links.
    fn links(&self) -> &Links;

    /// The node's links and its output buffer.
    fn links_mut(&mut self) -> (&mut Links, &mut Outbox<Self::Message>);

    /// Without a token and with requests queued: a REQUEST to send downhill.
    fn waiting(&self) -> bool;

    /// The REQUEST for the node's queue (asked for only while [`TokenNode::waiting`]).
    fn request(&self) -> Self::Message;

    /// Released resources wait for a neighbour to be sent to (the prioritized backlog).
    fn releases_waiting(&self) -> bool {
        false
    }

    /// No member of `N` below a node with requests to forward, or no member at all for one
    /// with released resources to send.
    fn needs_links(&self) -> bool {
        let links = self.links();
        (self.waiting() && links.neighbors.all_higher(links.height))
            || (self.releases_waiting() && links.neighbors.is_empty())
    }

    /// Send our REQUEST again if `j` is our way to a token: it may not have it (T1, T6).
    fn ask_again(&mut self, j: NodeId) {
        if self.waiting() && self.links().live_next() == Some(j) {
            let msg = self.request();
            self.links_mut().1.send(j, msg);
        }
    }

    /// forwardRequest: ask the lowest neighbour. With no member of `N` the request waits for a
    /// link; links that are still forming are asked for their peer's height (T1).
    fn forward_request(&mut self) {
        let (links, _) = self.links_mut();
        links.next = links.neighbors.lowest();
        if !self.waiting() {
            return;
        }
        let msg = self.request();
        let (links, out) = self.links_mut();
        match links.next {
            Some(next) => out.send(next, msg),
            None => links.ask_forming(out),
        }
    }

    /// A new link, or (for a link already known) the link layer confirming it: a keepalive,
    /// on which the node announces its height again, and asks again if the peer is its way to
    /// a token, so a view of it or a REQUEST to it corrupted on the way is corrected (T6).
    fn link_up(&mut self, j: NodeId) {
        let (links, out) = self.links_mut();
        if j == links.height.id {
            return out.anomaly(j, Anomaly::RedundantLinkEvent);
        }
        if !links.neighbors.link_up(j, links.height) {
            // A keepalive also repairs an acknowledgement lost to corruption (R13).
            links.ask_ack(j, out);
        }
        let forming = links.neighbors.get(j).is_some_and(|n| n.forming);
        if self.needs_links() && forming {
            // No way down and something to send: this link may be the way, and the peer's
            // LinkInfo may already have come and gone (T1). Ask for it.
            let (links, out) = self.links_mut();
            links.ask_forming(out);
        } else {
            let (links, out) = self.links_mut();
            links.tell(j, out);
            self.ask_again(j);
        }
    }

    /// What a LinkInfo, Probe or TokenAck from `j` carrying `h` changes in the handshake.
    /// True if the height is possible and the node is to act on it; false for an unknown peer
    /// or an impossible height (which may have been the answer to our Probe, T1: it is asked
    /// again if still needed).
    fn hear_height(&mut self, j: NodeId, h: Height, said: Said) -> bool {
        let (links, out) = self.links_mut();
        // KRLF can send `j` a second token before the first is acknowledged; each TokenAck
        // settles the tokens it counts, so only the last restores trust in what `j` says (R13).
        if links.hear(j, h, said, out).is_none() {
            return false;
        }
        if said == Said::Probe {
            // Our `next` asks for our height: it may be the peer of a link it had not noticed
            // when our REQUEST came, which it then had to drop (T1).
            self.ask_again(j);
        }
        if !h.possible_from(j) {
            if self.needs_links() {
                let (links, out) = self.links_mut();
                links.ask_forming(out);
            }
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;
    use crate::Action;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Msg {
        Info(Height),
        Probe(Height),
    }

    impl LinkMessages for Msg {
        fn link_info(height: Sealed) -> Self {
            Msg::Info(height.height)
        }
        fn probe(height: Sealed) -> Self {
            Msg::Probe(height.height)
        }
        fn token_ack(height: Height, _: u16) -> Self {
            Msg::Info(height)
        }
    }

    fn h(h1: i64, id: u32) -> Height {
        Height::new(h1, 0, NodeId(id))
    }

    fn sent(out: &mut Outbox<Msg>) -> Vec<(u32, Msg)> {
        out.drain()
            .filter_map(|a| match a {
                Action::Send { to, msg } => Some((to.0, msg)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn adopting_a_token_height_tells_the_chosen_members_but_the_sender() {
        let mut out = Outbox::default();
        let mut links = Links::new(h(5, 0), [h(1, 1), h(3, 2), h(7, 3)], None, None);
        let old = links.height;
        links.adopt(NodeId(2), h(3, 2), |n| n.height < old, &mut out);
        let new = Height::new(3, -1, NodeId(0));
        assert_eq!(links.height, new);
        assert_eq!(sent(&mut out), [(1, Msg::Info(new))]);
        // Never up, and never to an impossible height.
        links.adopt(NodeId(3), h(7, 3), |_| true, &mut out);
        links.adopt(NodeId(1), h(0, 9), |_| true, &mut out);
        assert_eq!(links.height, new);
        assert!(sent(&mut out).is_empty());
    }

    #[test]
    fn a_failed_reversal_still_asks_the_forming_links() {
        let mut out = Outbox::default();
        let mut links = Links::new(h(0, 0), [], None, None);
        links.neighbors.link_up(NodeId(4), links.height);
        assert_eq!(links.raise(&mut out), None, "isolated in N");
        assert_eq!(sent(&mut out), [(4, Msg::Probe(h(0, 0)))]);
        assert_eq!(links.raises, 0);
    }

    #[test]
    fn lowering_tells_whom_the_caller_picks_given_the_new_height() {
        let mut out = Outbox::default();
        let mut links = Links::new(h(9, 0), [h(1, 1), h(3, 2)], Some(NodeId(0)), None);
        links.lower(|n, new| n.height > new, &mut out);
        assert_eq!(links.height, h(2, 0));
        assert_eq!(sent(&mut out), [(2, Msg::Info(links.height))]);
    }
}
