//! The look-ahead node: configuration, state, accessors and the normal-execution handlers.

use alloc::vec::Vec;

use super::message::Msg;
use super::sets::{initial_info_set, Relation, Sets};
use crate::node::Outbox;
use crate::permission::{self, Decision, Deferred, LamportClock, Timestamp, Waits};
use crate::{Action, Actions, Anomaly, CsRequest, Error, Event, NodeId, Protocol, Status};

/// How a node's `Info_set` starts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Initial {
    /// Row `id` of the seeded random matrix of Fig. 1; all hosts must use the same seed.
    Seed(u64),
    /// An explicit `Info_set`; every other peer starts in `Status_set`.
    InfoSet(Vec<NodeId>),
}

/// A node's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// This host's id, `0..hosts`.
    pub id: NodeId,
    /// Number of hosts in the system; ids are `0..hosts`.
    pub hosts: u32,
    /// The initial `Info_set`.
    pub initial: Initial,
    /// Retransmission timeout of a REQUEST, in the embedder's time unit (must be > 0).
    pub retransmit_after: u64,
}

impl Config {
    /// A seeded configuration with the given retransmission timeout.
    pub fn seeded(id: NodeId, hosts: u32, seed: u64, retransmit_after: u64) -> Self {
        Config {
            id,
            hosts,
            initial: Initial::Seed(seed),
            retransmit_after,
        }
    }
}

/// The host's mode (section III-A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// Connected and awake.
    Normal,
    /// In doze mode: nobody should send it REQUESTs (it still answers any that arrive).
    Dozing,
    /// Voluntarily disconnected.
    Disconnected,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::Dozing => "dozing",
            Mode::Disconnected => "disconnected",
        }
    }
}

/// Everything but the output buffer, so snapshots compare state only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct State {
    pub(super) id: NodeId,
    pub(super) hosts: u32,
    pub(super) retransmit_after: u64,
    pub(super) status: Status,
    pub(super) mode: Mode,
    pub(super) clock: LamportClock,
    /// `ts_req`: the open request's priority.
    pub(super) ts_req: Option<Timestamp>,
    pub(super) sets: Sets,
    /// `TO_req`.
    pub(super) waits: Waits,
    /// `Q_req`: deferred requests with the timestamp and epoch to answer them with.
    pub(super) q_req: Deferred<(Timestamp, u64)>,
    /// `T_rec`: the timestamp of this host's last DOZE/DISCONNECT/RECONNECT announcement. Its
    /// clock is also the host's epoch.
    pub(super) t_rec: Timestamp,
    /// The latest epoch seen from each peer.
    pub(super) peer_epoch: Vec<u64>,
    /// A reconnect reported inside the critical section, to announce on release.
    pub(super) reconnect_pending: bool,
}

/// A look-ahead node. `Clone` and `PartialEq` (which compares state, not the output buffer)
/// let tests snapshot it.
#[derive(Debug, Clone)]
pub struct Node {
    pub(super) s: State,
    pub(super) out: Outbox<Msg>,
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.s == other.s
    }
}
impl Eq for Node {}

impl Node {
    /// A node in the remainder section, awake, with its initial sets.
    pub fn new(config: Config) -> Result<Self, Error> {
        let Config {
            id,
            hosts,
            initial,
            retransmit_after,
        } = config;
        let bad = |reason| Err(Error::InvalidConfig { node: id, reason });
        if id.0 >= hosts {
            return bad("id must be below the number of hosts");
        }
        if retransmit_after == 0 {
            return bad("retransmit_after must be positive");
        }
        let info = match initial {
            Initial::Seed(seed) => initial_info_set(hosts, seed, id),
            Initial::InfoSet(info) => {
                if info.iter().any(|p| !permission::is_peer(hosts, id, *p)) {
                    return bad("Info_set names an unknown host or the node itself");
                }
                let mut sorted = info.clone();
                sorted.sort_unstable();
                sorted.dedup();
                if sorted.len() != info.len() {
                    return bad("Info_set names a host twice");
                }
                info
            }
        };
        Ok(Node {
            s: State {
                id,
                hosts,
                retransmit_after,
                status: Status::Remainder,
                mode: Mode::Normal,
                clock: LamportClock::default(),
                ts_req: None,
                sets: Sets::from_info(id, hosts, info),
                waits: Waits::default(),
                q_req: Deferred::default(),
                t_rec: Timestamp { clock: 0, id },
                peer_epoch: alloc::vec![0; hosts as usize],
                reconnect_pending: false,
            },
            out: Outbox::default(),
        })
    }

    /// Number of hosts in the system.
    pub fn hosts(&self) -> u32 {
        self.s.hosts
    }

    /// The host's mode.
    pub fn mode(&self) -> Mode {
        self.s.mode
    }

    /// The open request's timestamp (`ts_req`), `None` in the remainder section.
    pub fn timestamp(&self) -> Option<Timestamp> {
        self.s.ts_req
    }

    /// The Lamport clock.
    pub fn clock(&self) -> u64 {
        self.s.clock.now()
    }

    /// `T_rec`: the timestamp of the last DOZE/DISCONNECT/RECONNECT announcement.
    pub fn t_rec(&self) -> Timestamp {
        self.s.t_rec
    }

    /// The sets.
    pub fn sets(&self) -> &Sets {
        &self.s.sets
    }

    /// `Info_set`, in id order.
    pub fn info_set(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.sets.info()
    }

    /// `Status_set`, in id order.
    pub fn status_set(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.sets.status()
    }

    /// Where `peer` is, `None` for an unknown host or the node itself.
    pub fn relation(&self, peer: NodeId) -> Option<Relation> {
        self.s.sets.get(peer)
    }

    /// `Q_req`: the requesters whose REPLY is deferred, in id order.
    pub fn q_req(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.q_req.peers()
    }

    /// The peers whose REPLY is still outstanding (`TO_req`), in id order.
    pub fn outstanding(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.waits.peers()
    }

    /// The latest epoch seen from `peer` (0 for none or an unknown host).
    pub fn peer_epoch(&self, peer: NodeId) -> u64 {
        self.s.peer_epoch.get(peer.index()).copied().unwrap_or(0)
    }

    pub(super) fn epoch(&self) -> u64 {
        self.s.t_rec.clock
    }

    pub(super) fn peers(&self) -> impl Iterator<Item = NodeId> {
        let me = self.s.id;
        (0..self.s.hosts).map(NodeId).filter(move |&p| p != me)
    }

    /// Send the open request to `peer` and (re)arm its timer.
    pub(super) fn ask(&mut self, peer: NodeId, ts: Timestamp) {
        let epoch = self.epoch();
        self.out.send(peer, Msg::Request { ts, epoch });
        self.s
            .waits
            .arm(peer, self.s.retransmit_after, &mut self.out);
    }

    /// Enter the critical section once every REPLY is in.
    pub(super) fn try_enter(&mut self) {
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
        if self.s.mode != Mode::Normal {
            return Err(Error::WrongMode {
                event: "Request",
                mode: self.s.mode.name(),
            });
        }
        let ts = Timestamp {
            clock: self.s.clock.tick(),
            id: self.s.id,
        };
        self.s.ts_req = Some(ts);
        self.s.status = Status::Waiting;
        let info: Vec<NodeId> = self.s.sets.info().collect();
        for peer in info {
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
        // The usual look-ahead rule: the deferred requesters (Q_req) get their REPLY. They are
        // all in our Info_set (Q_req ⊆ Info_set always holds), as they must be: the REPLY
        // moves us into their Status_set.
        for (peer, (ts, epoch)) in self.s.q_req.take_all() {
            self.out.send(peer, Msg::Reply { ts, epoch });
        }
        if self.s.reconnect_pending {
            self.announce_reconnect();
        }
        Ok(())
    }

    fn timeout(&mut self, timer: crate::TimerId) {
        // A timer that is not current (cancelled, or re-armed since) is a no-op.
        let Some(ts) = self.s.ts_req else { return };
        if let Some(peer) = self.s.waits.expire(timer) {
            self.ask(peer, ts);
        }
    }

    fn receive(&mut self, from: NodeId, msg: Msg) {
        if !permission::is_peer(self.s.hosts, self.s.id, from) {
            self.out.anomaly(from, Anomaly::UnknownPeer);
            return;
        }
        match msg {
            Msg::Request { ts, epoch } => self.on_request(from, ts, epoch),
            Msg::Reply { ts, epoch } => self.on_reply(from, ts, epoch),
            Msg::Doze { ts } | Msg::Disconnect { ts } => self.on_announce(from, ts, true),
            Msg::Reconnect { ts } => self.on_announce(from, ts, false),
        }
    }

    fn on_request(&mut self, from: NodeId, ts: Timestamp, epoch: u64) {
        if ts.id != from {
            self.out.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        self.s.clock.observe(ts.clock);
        let seen = &mut self.s.peer_epoch[from.index()];
        if epoch < *seen {
            // A copy sent before an announcement we already applied: superseded.
            self.out.anomaly(from, Anomaly::Stale);
            return;
        }
        // A newer epoch means the announcement was lost or overtaken; it is now superseded.
        *seen = epoch;
        // The requester has us in its Info_set; we now need to ask it too until it answers.
        self.s.sets.set(from, Relation::Info);
        match permission::decide(self.s.status, self.s.ts_req, ts) {
            Decision::Defer => self.s.q_req.insert(from, (ts, epoch)),
            Decision::Reply => {
                self.s.q_req.remove(from);
                self.out.send(from, Msg::Reply { ts, epoch });
                // Waiting with lower priority: the requester will enter first, so we need its
                // permission as well (it defers us until it leaves the critical section).
                if let Some(mine) = self.s.ts_req {
                    if self.s.status == Status::Waiting && !self.s.waits.contains(from) {
                        self.ask(from, mine);
                    }
                }
            }
        }
    }

    fn on_reply(&mut self, from: NodeId, ts: Timestamp, epoch: u64) {
        if ts.id != self.s.id {
            self.out.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        if self.s.status != Status::Waiting {
            self.out.anomaly(from, Anomaly::Unexpected);
            return;
        }
        let current = self.s.ts_req == Some(ts) && epoch == self.epoch();
        if !current || !self.s.waits.resolve(from, &mut self.out) {
            // A REPLY to an older request, to a copy sent before our last reconnect, or a
            // duplicate: it grants nothing and must not move any set.
            self.out.anomaly(from, Anomaly::Stale);
            return;
        }
        // The replier keeps us in its Info_set; unless we still owe it a REPLY (which will move
        // us into its Status_set), it moves into our Status_set.
        if !self.s.q_req.contains(from) {
            self.s.sets.set(from, Relation::Status);
        }
        self.try_enter();
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
        // Every fallible handler validates before it mutates, so an `Err` leaves state alone.
        let result = match event {
            Event::Request(req) => self.request(req),
            Event::Release => self.release(),
            Event::Receive { from, msg } => {
                self.receive(from, msg);
                Ok(())
            }
            Event::Timeout(timer) => {
                self.timeout(timer);
                Ok(())
            }
            Event::Doze => self.doze(),
            Event::Wake => self.wake(),
            Event::Disconnect => self.disconnect(),
            Event::Reconnect => self.reconnect(),
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
