//! The Ricart–Agrawala node.

use super::message::Message;
use super::{Config, Settings};
use crate::node::Outbox;
use crate::permission::{Core, Decision, Ticket, Timestamp};
use crate::{Anomaly, Error, Event, NodeId, Protocol, Severity, Status};

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

    /// The peers whose REPLY is still outstanding, in id order.
    pub fn outstanding(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.waits.peers()
    }

    fn request(&mut self) {
        let Ticket { ts, seq } = self.s.open_request();
        for peer in self.s.peers() {
            let fence = self.s.fence_seen;
            self.s
                .ask(peer, Message::request(ts, seq, fence), &mut self.out);
        }
        self.s.try_enter(&mut self.out);
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
                let ticket = Ticket { ts, seq };
                if !self.s.current_request(from, ticket) {
                    self.out.anomaly(from, Anomaly::Stale);
                    return;
                }
                match self.s.decide(ts) {
                    Decision::Defer => self.s.deferred.insert(from, ticket, ()),
                    Decision::Reply => {
                        self.s.deferred.remove(from);
                        let fence = self.s.fence_seen;
                        self.out.send(from, Message::reply(ts, seq, fence));
                    }
                }
            }
            Message::Reply { ts, seq, .. } if ts.id == self.s.id => {
                if self.s.status != Status::Waiting {
                    self.out.anomaly(from, Anomaly::Unexpected);
                } else if self.s.accept_reply(from, Ticket { ts, seq }, &mut self.out) {
                    self.s.try_enter(&mut self.out);
                } else {
                    self.out.anomaly(from, Anomaly::Stale);
                }
            }
            _ => self.out.anomaly(from, Anomaly::OutOfRange),
        }
    }
}

impl crate::node::Buffered for Node {
    fn outbox(&mut self) -> &mut Outbox<Message> {
        &mut self.out
    }

    fn step(&mut self, event: Event<Message>) -> Result<(), Error> {
        self.out.clear();
        crate::node::check_local(&event, self.s.status, 1)?;
        match event {
            Event::Request(_) => self.request(),
            Event::Release => self.release(),
            Event::Cancel => self.cancel(),
            Event::Receive { from, msg } => self.receive(from, msg),
            Event::Timeout(timer) => {
                if let Some((peer, Ticket { ts, seq })) = self.s.expired(timer) {
                    let fence = self.s.fence_seen;
                    self.s
                        .ask(peer, Message::request(ts, seq, fence), &mut self.out);
                }
            }
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
