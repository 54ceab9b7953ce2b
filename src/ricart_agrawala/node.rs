//! The Ricart–Agrawala node.

use super::message::Message;
use super::{Config, Settings};
use crate::node::Outbox;
use crate::permission::{Core, Decision, Expiry, Heard, Incarnation, Ticket, Timestamp};
use crate::{Action, Anomaly, Error, Event, NodeId, Protocol, Report, Severity, Status};

/// A Ricart–Agrawala node. `Clone` and `PartialEq` (which compares state) let tests snapshot
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    s: Core<()>,
    settings: Settings,
    out: Outbox<Message>,
}

impl Node {
    /// A node in the remainder section.
    pub fn new(config: Config) -> Result<Self, Error> {
        Ok(Node {
            s: Core::new(
                config.id,
                config.settings.hosts,
                config.settings.retransmit_after,
                config.settings.recovery,
                config.incarnation,
            )?,
            settings: config.settings,
            out: Outbox::default(),
        })
    }

    /// What the network agrees on.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// The open request's timestamp, `None` in the remainder section.
    pub fn timestamp(&self) -> Option<Timestamp> {
        self.s.open.map(|t| t.ts)
    }

    /// The Lamport clock.
    pub fn clock(&self) -> u64 {
        self.s.clock.now()
    }

    /// The requesters whose REPLY is deferred, in id order.
    pub fn deferred(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.deferred.peers()
    }

    /// The peers whose REPLY is still outstanding, in id order (excluded peers that are only
    /// probed are not).
    pub fn outstanding(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.waits.peers()
    }

    /// The excluded peers (by [`Event::Suspect`] or the node's own timeout), in id order.
    pub fn excluded(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.excluded()
    }

    /// The excluded peers the node probes while it waits (it excludes by its own timeout,
    /// so only a probe's answer tells it a peer is back), in id order.
    pub fn probed(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.waits.probed()
    }

    /// Whether `peer` is excluded.
    pub fn is_excluded(&self, peer: NodeId) -> bool {
        self.s.is_excluded(peer)
    }

    /// Whether `peer` left ([`Event::Leave`]; excluded until a later incarnation of it asks,
    /// or [`Event::Trust`]).
    pub fn has_departed(&self, peer: NodeId) -> bool {
        self.s.has_departed(peer)
    }

    /// Whether this host left ([`Event::Leave`]).
    pub fn has_left(&self) -> bool {
        self.s.left
    }

    /// This host's incarnation ([`Config::with_incarnation`]).
    pub fn incarnation(&self) -> u32 {
        self.s.incarnation
    }

    /// The highest incarnation of `peer` seen in its REQUESTs (0 for none or an unknown host).
    pub fn peer_incarnation(&self, peer: NodeId) -> u32 {
        self.s.peer_incarnation(peer)
    }

    /// Whether, in majority mode, the node and the peers that granted its open request
    /// (excluded ones aside) are a strict majority of the hosts; always true otherwise.
    pub fn has_quorum(&self) -> bool {
        self.s.quorum()
    }

    fn ask(&mut self, peer: NodeId, Ticket { ts, seq }: Ticket) {
        let fence = self.s.fence_seen;
        self.s
            .ask(peer, Message::request(ts, seq, fence), &mut self.out);
    }

    /// Ask every peer for `ticket` (excluded ones only as probes, if at all); `again`: the
    /// timers already running keep running ([`Core::ask_again`]).
    fn ask_everyone(&mut self, ticket: Ticket, again: bool) {
        for peer in self.s.peers() {
            if self.s.asks(peer) {
                let Ticket { ts, seq } = ticket;
                let msg = Message::request(ts, seq, self.s.fence_seen);
                if again {
                    self.s.ask_again(peer, msg, &mut self.out);
                } else {
                    self.s.ask(peer, msg, &mut self.out);
                }
            }
        }
    }

    fn request(&mut self) {
        let ticket = self.s.open_request(&mut self.out);
        self.ask_everyone(ticket, false);
        self.s.try_enter(&mut self.out);
    }

    /// Ask everyone again under a new number: every grant of the old number is void (the
    /// grants are a lease old, or a peer restarted and its old incarnation's REPLYs must not
    /// count).
    fn renew(&mut self) {
        if self.s.status != Status::Waiting {
            return;
        }
        if let Some(ticket) = self.s.renumber() {
            self.ask_everyone(ticket, true);
            self.s.try_enter(&mut self.out);
        }
    }

    fn release(&mut self) {
        let fence = self.s.fence_seen;
        self.s.close(&mut self.out, |_, Ticket { ts, seq }, ()| {
            Message::reply(ts, seq, fence)
        });
    }

    fn cancel(&mut self) {
        let fence = self.s.fence_seen;
        self.s.withdraw(&mut self.out, |_, Ticket { ts, seq }, ()| {
            Message::reply(ts, seq, fence)
        });
    }

    /// Exclude `peer` (a suspicion, or its silence): stop waiting for it, probe it if the
    /// node excludes by timeout, and enter if nothing else is awaited.
    fn exclude(&mut self, peer: NodeId) {
        if self.s.exclude(peer, &mut self.out) {
            if self.s.status == Status::Waiting && self.s.probes() {
                self.s.probe_later(peer, &mut self.out);
            }
            self.s.try_enter(&mut self.out);
        }
    }

    /// Readmit `peer` (heard from again): a waiting node without its grant for the current
    /// number asks it now and waits for it, which keeps safety when the suspicion was wrong.
    /// Returns whether `peer` was excluded; the caller tries to enter.
    fn rejoin(&mut self, peer: NodeId) -> bool {
        if !self.s.readmit(peer, &mut self.out) {
            return false;
        }
        self.readmit_asks(peer);
        true
    }

    /// `peer` was just readmitted: a waiting node without its grant asks it now.
    fn readmit_asks(&mut self, peer: NodeId) {
        if self.s.must_ask(peer) {
            if let Some(ticket) = self.s.open {
                self.ask(peer, ticket);
            }
        }
    }

    /// Leave for good (L2): only in the remainder section; every host is told, so nobody
    /// waits for this one again, and the node reports [`Report::Left`] at once (nothing it
    /// holds is needed: it owes no REPLY outside the critical section).
    fn leave(&mut self) -> Result<(), Error> {
        if self.s.status != Status::Remainder {
            return Err(Error::WrongMode {
                event: "Leave",
                mode: if self.s.status == Status::Waiting {
                    "waiting for the critical section"
                } else {
                    "in the critical section"
                },
            });
        }
        self.s.left = true;
        for peer in self.s.peers() {
            self.tell_gone(peer);
        }
        self.out.push(Action::Report(Report::Left));
        Ok(())
    }

    fn tell_gone(&mut self, peer: NodeId) {
        let msg = Message::leave(self.s.last_seq(), self.s.fence_seen);
        self.out.send(peer, msg);
    }

    /// After a gap (C9), readmit every excluded peer but `from`.
    fn lift(&mut self, from: NodeId, heard: Heard) {
        if heard.gap {
            for peer in self.s.peers() {
                if peer != from && self.s.is_excluded(peer) {
                    self.rejoin(peer);
                }
            }
        }
    }

    /// `Suspect` and `Trust` must name another host (local misuse otherwise).
    fn check_peer(&self, event: &'static str, peer: NodeId) -> Result<(), Error> {
        if self.s.is_peer(peer) {
            Ok(())
        } else {
            Err(Error::NotAPeer { event, peer })
        }
    }

    /// A valid message from `from`: evidence of life, which readmits it if excluded. A gap
    /// closing readmits every excluded peer first, before any grant of `from` counts (C9).
    fn heard(&mut self, from: NodeId) {
        let heard = self.s.heard(from);
        self.lift(from, heard);
        let readmitted = heard.excluded && self.rejoin(from);
        if readmitted || heard.gap {
            self.s.try_enter(&mut self.out);
        }
    }

    fn receive(&mut self, from: NodeId, msg: Message) {
        if !self.s.is_peer(from) {
            self.out.anomaly(from, Anomaly::UnknownPeer);
            return;
        }
        if !self.s.hear_fence(from, msg.fence(), &mut self.out) {
            return;
        }
        match msg {
            Message::Request { ts, seq, check, .. }
                if ts.names(from) && seq >= 1 && check == Message::request_check(ts, seq) =>
            {
                if !self.s.clock.admit([ts.clock]) {
                    self.out.anomaly(from, Anomaly::OutOfRange);
                    return;
                }
                match self.s.incarnation_check(from, seq) {
                    // A host that restarted since: its old incarnation's request is dead.
                    Incarnation::Old => {
                        self.out.anomaly(from, Anomaly::Stale);
                        return;
                    }
                    // It restarted: readmitted, and asked again with everyone else under a new
                    // number, so no REPLY of its old incarnation counts any more.
                    Incarnation::New => {
                        let heard = self.s.heard(from);
                        self.lift(from, heard);
                        if heard.excluded {
                            self.s.readmit(from, &mut self.out);
                        }
                        self.renew();
                    }
                    Incarnation::Current => self.heard(from),
                }
                let ticket = Ticket { ts, seq };
                if !self.s.current_request(from, ticket) {
                    self.out.anomaly(from, Anomaly::Stale);
                    return;
                }
                match self.s.decide(ts) {
                    Decision::Defer => {
                        self.s.deferred.insert(from, ticket, ());
                        if self.s.notifies_deferral() {
                            let fence = self.s.fence_seen;
                            self.out.send(from, Message::reply(ts, 0, fence));
                        }
                    }
                    Decision::Reply => {
                        self.s.deferred.remove(from);
                        let fence = self.s.fence_seen;
                        self.out.send(from, Message::reply(ts, seq, fence));
                        self.s.replied(from);
                    }
                }
                if self.s.left {
                    // Its copy of our LEAVE was lost (or it has not got it yet): tell it again.
                    self.tell_gone(from);
                }
            }
            Message::Leave { seq, check, .. } if check == Message::leave_check(seq) => {
                match self.s.incarnation_check(from, seq) {
                    // A LEAVE of an incarnation that has restarted since: it is back.
                    Incarnation::Old => self.out.anomaly(from, Anomaly::Stale),
                    // Its current (or a newer) incarnation left: nobody waits for it now.
                    Incarnation::Current | Incarnation::New => {
                        // Gone first, so that hearing it (which may close a gap, C9)
                        // readmits everyone but it.
                        self.s.depart(from, &mut self.out);
                        self.heard(from);
                        self.s.try_enter(&mut self.out);
                    }
                }
            }
            // A deferral notice (C9): the peer has the request and is alive; it grants nothing.
            Message::Reply {
                ts, seq: 0, check, ..
            } if ts.id == self.s.id && check == Message::reply_check(ts, 0) => {
                self.heard(from);
            }
            Message::Reply { ts, seq, check, .. }
                if ts.id == self.s.id && check == Message::reply_check(ts, seq) =>
            {
                let accepted = self.s.status == Status::Waiting
                    && self.s.accept_reply(from, Ticket { ts, seq }, &mut self.out);
                self.heard(from);
                if accepted {
                    self.s.try_enter(&mut self.out);
                } else if self.s.status != Status::Waiting {
                    self.out.anomaly(from, Anomaly::Unexpected);
                } else {
                    self.out.anomaly(from, Anomaly::Stale);
                }
            }
            _ => self.out.anomaly(from, Anomaly::OutOfRange),
        }
    }

    fn timeout(&mut self, timer: crate::TimerId) {
        match self.s.timeout(timer, &mut self.out) {
            Expiry::Nothing => {}
            Expiry::Ask(peer, ticket) | Expiry::Probe(peer, ticket) => self.ask(peer, ticket),
            Expiry::Exclude(peer) => self.exclude(peer),
            Expiry::Refresh => self.renew(),
        }
    }
}

impl crate::node::Buffered for Node {
    fn outbox(&mut self) -> &mut Outbox<Message> {
        &mut self.out
    }

    fn step(&mut self, event: Event<Message>) -> Result<(), Error> {
        self.out.clear();
        self.s.check_not_left(&event)?;
        crate::node::check_local(&event, self.s.status, None)?;
        match event {
            Event::Request(_) => self.request(),
            Event::Release => self.release(),
            Event::Cancel => self.cancel(),
            Event::Receive { from, msg } => self.receive(from, msg),
            Event::Timeout(timer) => self.timeout(timer),
            Event::Suspect(peer) => {
                self.check_peer("Suspect", peer)?;
                self.exclude(peer);
            }
            Event::Trust(peer) => {
                self.check_peer("Trust", peer)?;
                if self.s.trust(peer, &mut self.out) {
                    self.readmit_asks(peer);
                    // Its grant, if it gave one, counts again (majority mode).
                    self.s.try_enter(&mut self.out);
                }
            }
            Event::Leave => self.leave()?,
            other => return Err(Error::Unsupported(other.name())),
        }
        Ok(())
    }
}

impl Protocol for Node {
    type Message = Message;

    fn id(&self) -> NodeId {
        self.s.id
    }

    fn status(&self) -> Status {
        self.s.status
    }

    crate::node::buffered_handlers!(Message);

    fn anomaly_severity(kind: Anomaly) -> Severity {
        crate::permission::anomaly_severity(kind)
    }
}
