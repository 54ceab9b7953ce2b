//! The Ricart–Agrawala node.

use super::message::Msg;
use crate::node::Outbox;
use crate::permission::{self, Decision, Deferred, LamportClock, Timestamp, Waits};
use crate::{Action, Actions, Anomaly, CsRequest, Error, Event, NodeId, Protocol, Status};

/// A node's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// This host's id, `0..hosts`.
    pub id: NodeId,
    /// Number of hosts; ids are `0..hosts`.
    pub hosts: u32,
    /// Retransmission timeout of a REQUEST, in the embedder's time unit (must be > 0).
    pub retransmit_after: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    id: NodeId,
    hosts: u32,
    retransmit_after: u64,
    status: Status,
    clock: LamportClock,
    ts_req: Option<Timestamp>,
    waits: Waits,
    deferred: Deferred<Timestamp>,
}

/// A Ricart–Agrawala node. `PartialEq` compares state, not the output buffer.
#[derive(Debug, Clone)]
pub struct Node {
    s: State,
    out: Outbox<Msg>,
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.s == other.s
    }
}
impl Eq for Node {}

impl Node {
    /// A node in the remainder section.
    pub fn new(config: Config) -> Result<Self, Error> {
        let bad = |reason| {
            Err(Error::InvalidConfig {
                node: config.id,
                reason,
            })
        };
        if config.id.0 >= config.hosts {
            return bad("id must be below the number of hosts");
        }
        if config.retransmit_after == 0 {
            return bad("retransmit_after must be positive");
        }
        Ok(Node {
            s: State {
                id: config.id,
                hosts: config.hosts,
                retransmit_after: config.retransmit_after,
                status: Status::Remainder,
                clock: LamportClock::default(),
                ts_req: None,
                waits: Waits::default(),
                deferred: Deferred::default(),
            },
            out: Outbox::default(),
        })
    }

    /// The open request's timestamp, `None` in the remainder section.
    pub fn timestamp(&self) -> Option<Timestamp> {
        self.s.ts_req
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

    fn ask(&mut self, peer: NodeId, ts: Timestamp) {
        self.out.send(peer, Msg::Request { ts });
        self.s
            .waits
            .arm(peer, self.s.retransmit_after, &mut self.out);
    }

    fn try_enter(&mut self) {
        if self.s.status == Status::Waiting && self.s.waits.is_empty() {
            self.s.status = Status::Critical;
            self.out.push(Action::EnterCritical { resources: 1 });
        }
    }

    fn request(&mut self, req: CsRequest) -> Result<(), Error> {
        if req.resources != 1 {
            return Err(Error::InvalidResources {
                requested: req.resources,
                k: 1,
            });
        }
        if self.s.status != Status::Remainder {
            return Err(Error::AlreadyRequested(self.s.status));
        }
        let ts = Timestamp {
            clock: self.s.clock.tick(),
            id: self.s.id,
        };
        self.s.ts_req = Some(ts);
        self.s.status = Status::Waiting;
        let me = self.s.id;
        for peer in (0..self.s.hosts).map(NodeId).filter(|&p| p != me) {
            self.ask(peer, ts);
        }
        self.try_enter();
        Ok(())
    }

    fn release(&mut self) -> Result<(), Error> {
        if self.s.status != Status::Critical {
            return Err(Error::NotInCritical(self.s.status));
        }
        self.s.status = Status::Remainder;
        self.s.ts_req = None;
        for (peer, ts) in self.s.deferred.take_all() {
            self.out.send(peer, Msg::Reply { ts });
        }
        Ok(())
    }

    fn receive(&mut self, from: NodeId, msg: Msg) {
        if !permission::is_peer(self.s.hosts, self.s.id, from) {
            self.out.anomaly(from, Anomaly::UnknownPeer);
            return;
        }
        match msg {
            Msg::Request { ts } if ts.id == from => {
                self.s.clock.observe(ts.clock);
                match permission::decide(self.s.status, self.s.ts_req, ts) {
                    Decision::Defer => self.s.deferred.insert(from, ts),
                    Decision::Reply => {
                        self.s.deferred.remove(from);
                        self.out.send(from, Msg::Reply { ts });
                    }
                }
            }
            Msg::Reply { ts } if ts.id == self.s.id => {
                if self.s.status != Status::Waiting {
                    self.out.anomaly(from, Anomaly::Unexpected);
                } else if self.s.ts_req != Some(ts) || !self.s.waits.resolve(from, &mut self.out) {
                    self.out.anomaly(from, Anomaly::Stale);
                } else {
                    self.try_enter();
                }
            }
            _ => self.out.anomaly(from, Anomaly::OutOfRange),
        }
    }
}

impl Protocol for Node {
    type Msg = Msg;

    fn id(&self) -> NodeId {
        self.s.id
    }

    fn status(&self) -> Status {
        self.s.status
    }

    fn handle(&mut self, event: Event<Msg>) -> Result<Actions<'_, Msg>, Error> {
        self.out.clear();
        let result = match event {
            Event::Request(req) => self.request(req),
            Event::Release => self.release(),
            Event::Receive { from, msg } => {
                self.receive(from, msg);
                Ok(())
            }
            Event::Timeout(timer) => {
                // Stale timers (cancelled or re-armed since) are no-ops.
                if let (Some(ts), Some(peer)) = (self.s.ts_req, self.s.waits.expire(timer)) {
                    self.ask(peer, ts);
                }
                Ok(())
            }
            other => Err(Error::Unsupported(other.name())),
        };
        match result {
            Ok(()) => Ok(self.out.drain()),
            Err(e) => {
                self.out.clear();
                Err(e)
            }
        }
    }
}
