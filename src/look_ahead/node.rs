//! The look-ahead node: configuration, state, accessors and the normal-execution handlers.

use alloc::vec::Vec;

use super::message::Message;
use super::modes::Kind;
use super::sets::{initial_info_set, Relation, Sets};
use super::{Config, Settings};
use crate::node::Outbox;
use crate::permission::{Core, Decision, Expiry, Heard, Incarnation, Ticket, Timestamp};
use crate::{Anomaly, Error, Event, NodeId, Protocol, Severity, Status};

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

/// Everything but the output buffer, apart so that handlers can borrow the two at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct State {
    /// What the network agrees on.
    pub(super) settings: Settings,
    /// Section, clock, the open request, `TO_req` and `Q_req` (deferred requests with the
    /// epoch of the copy to answer).
    pub(super) core: Core<u64>,
    pub(super) mode: Mode,
    pub(super) sets: Sets,
    /// `T_rec`: the timestamp of this host's last DOZE/DISCONNECT/RECONNECT announcement. Its
    /// clock is also the host's epoch.
    pub(super) t_rec: Timestamp,
    /// The timestamp of this host's last DISCONNECT (clock 0: never), for the tie-break between
    /// concurrent DISCONNECTs.
    pub(super) departed: Timestamp,
    /// What the host knows of each peer (indexed by id; the own slot is unused).
    pub(super) peers: Vec<PeerView>,
    /// A reconnect reported inside the critical section, to announce on release.
    pub(super) reconnect_pending: bool,
}

/// What a host knows of one peer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct PeerView {
    /// The latest epoch seen from the peer.
    pub(super) epoch: u64,
    /// The peer's last word was a DISCONNECT this host applied: it is away, in `Status_set`,
    /// and not asked until it is heard from again (under a newer epoch).
    pub(super) absent: bool,
    /// This host restarted (incarnation above 0) and the peer has not yet answered one of its
    /// requests: the peer's `seen` may be a record of an earlier incarnation of this host,
    /// whose epochs counted from 0 as well, so its announcements are not applied (C5).
    pub(super) may_know_an_old_us: bool,
    /// Majority mode: the number of the request that was open when the peer's DISCONNECT was
    /// applied (0: none was). Only a REPLY granting a later number was sent after the peer
    /// left, so only such a REPLY to a probe readmits it (C10).
    pub(super) left_at: u64,
}

impl PeerView {
    /// Something from the peer's epoch `epoch` (not older than the one known) arrived: it is
    /// present, whatever was known of it before.
    pub(super) fn heard(&mut self, epoch: u64) {
        self.epoch = self.epoch.max(epoch);
        self.absent = false;
    }
}

/// A look-ahead node. `Clone` and `PartialEq` (which compares state) let tests snapshot it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub(super) s: State,
    pub(super) out: Outbox<Message>,
}

impl Node {
    /// A node in the remainder section, awake, with its initial sets.
    pub fn new(config: Config) -> Result<Self, Error> {
        let Config {
            id,
            settings,
            info_set,
            incarnation,
        } = config;
        let hosts = settings.hosts;
        let core = Core::new(
            id,
            hosts,
            settings.retransmit_after,
            settings.recovery,
            incarnation,
        )?;
        let mut info = match info_set {
            None => initial_info_set(hosts, settings.seed, id),
            Some(info) => {
                let bad = |reason| Err(Error::InvalidConfig { node: id, reason });
                if info.iter().any(|&p| !core.is_peer(p)) {
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
        if incarnation > 0 {
            // Restarted with empty state: its peers' sets moved on while it ran before, so it
            // asks everyone (always safe).
            info = core.peers().collect();
        }
        Ok(Node {
            s: State {
                settings,
                core,
                mode: Mode::Normal,
                sets: Sets::from_info(id, hosts, info),
                t_rec: Timestamp { clock: 0, id },
                departed: Timestamp { clock: 0, id },
                peers: alloc::vec![
                    PeerView {
                        may_know_an_old_us: incarnation > 0,
                        ..PeerView::default()
                    };
                    hosts as usize
                ],
                reconnect_pending: false,
            },
            out: Outbox::default(),
        })
    }

    /// What the network agrees on.
    pub fn settings(&self) -> Settings {
        self.s.settings
    }

    /// The host's mode.
    pub fn mode(&self) -> Mode {
        self.s.mode
    }

    /// The open request's timestamp (`ts_req`), `None` in the remainder section.
    pub fn timestamp(&self) -> Option<Timestamp> {
        self.s.core.open.map(|t| t.ts)
    }

    /// The Lamport clock.
    pub fn clock(&self) -> u64 {
        self.s.core.clock.now()
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
    pub fn deferred(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.core.deferred.peers()
    }

    /// The peers whose REPLY is still outstanding (`TO_req`), in id order.
    pub fn outstanding(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.core.waits.peers()
    }

    /// The latest epoch seen from `peer` (0 for none or an unknown host).
    pub fn peer_epoch(&self, peer: NodeId) -> u64 {
        self.peer(peer).epoch
    }

    /// Whether the host counts `peer` as voluntarily disconnected: its DISCONNECT was applied
    /// and nothing newer has been heard from it. An absent peer is in `Status_set` and stays
    /// there when this host announces, so nobody waits for a host that is away.
    pub fn is_absent(&self, peer: NodeId) -> bool {
        self.peer(peer).absent
    }

    /// The excluded peers the node probes while it waits, in id order: every excluded peer if
    /// it excludes by its own timeout (C3), and in majority mode every peer whose DISCONNECT
    /// it applied (C10); only a probe's answer tells it such a peer is back.
    pub fn probed(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.core.waits.probed()
    }

    /// Whether this host left ([`Event::Leave`]).
    pub fn has_left(&self) -> bool {
        self.s.core.left
    }

    /// Whether `peer` is excluded ([`Event::Suspect`], or the host's own timeout): treated as
    /// if it had sent a DISCONNECT (in `Status_set`, neither asked nor waited for, and told
    /// `absent` in this host's announcements) until it is readmitted.
    pub fn is_excluded(&self, peer: NodeId) -> bool {
        self.s.core.is_excluded(peer)
    }

    /// The excluded peers, in id order.
    pub fn excluded(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.s.core.excluded()
    }

    /// This host's incarnation ([`Config::with_incarnation`]).
    pub fn incarnation(&self) -> u32 {
        self.s.core.incarnation
    }

    /// The highest incarnation of `peer` seen in its REQUESTs (0 for none or an unknown host).
    pub fn peer_incarnation(&self, peer: NodeId) -> u32 {
        self.s.core.peer_incarnation(peer)
    }

    /// Whether, in majority mode, the host and the peers that granted its open request
    /// (excluded ones aside) are a strict majority of the hosts; always true otherwise.
    pub fn has_quorum(&self) -> bool {
        self.s.core.quorum()
    }

    /// Whether the host does not ask `peer`: it left (an applied DISCONNECT) or is excluded.
    pub(super) fn away(&self, peer: NodeId) -> bool {
        self.s.peers[peer.index()].absent || self.s.core.is_excluded(peer)
    }

    /// Whether the excluded `peer` is probed while the host waits: when the host excludes by
    /// its own timeout (C3), and in majority mode when it is excluded for its DISCONNECT
    /// (C10): its RECONNECT may have been lost, and without its grant there may be no
    /// majority, so the host would wait for ever without asking the one host that can end it.
    fn probes(&self, peer: NodeId) -> bool {
        self.s.core.probes()
            || (self.s.settings.recovery.majority && self.s.peers[peer.index()].absent)
    }

    /// Whether a REPLY of `peer` granting `ticket` was sent after the peer left: `peer`'s
    /// DISCONNECT was applied before `ticket`'s number was issued (C10).
    fn granted_since_it_left(&self, peer: NodeId, ticket: Ticket) -> bool {
        ticket.seq > self.s.peers[peer.index()].left_at
    }

    fn peer(&self, peer: NodeId) -> PeerView {
        match self.s.peers.get(peer.index()) {
            Some(view) if peer != self.s.core.id => *view,
            _ => PeerView::default(),
        }
    }

    pub(super) fn epoch(&self) -> u64 {
        self.s.t_rec.clock
    }

    /// Send the open request to `peer` under our current epoch and (re)arm its timer.
    pub(super) fn ask(&mut self, peer: NodeId, Ticket { ts, seq }: Ticket) {
        let (epoch, fence) = (self.epoch(), self.s.core.fence_seen);
        self.s
            .core
            .ask(peer, Message::request(ts, seq, epoch, fence), &mut self.out);
    }

    /// Send the open request to every member of `Info_set` (in majority mode, to every peer
    /// not excluded, moved into `Info_set`), and probe the excluded peers if the host
    /// excludes by its own timeout.
    pub(super) fn ask_info_set(&mut self, ticket: Ticket) {
        self.ask_needed(ticket, false);
    }

    /// [`Node::ask_info_set`]; `again`: the timers already running keep running
    /// ([`Core::ask_again`]).
    fn ask_needed(&mut self, ticket: Ticket, again: bool) {
        // By id rather than through `sets.info()`, which would borrow the sets while `ask`
        // needs the node (and collecting them would allocate on every request).
        let majority = self.s.settings.recovery.majority;
        for peer in self.s.core.peers() {
            let asks = if self.s.core.is_excluded(peer) {
                self.probes(peer)
            } else if again && self.s.core.waits.contains(peer) {
                // Still waited for (in `Status_set` after its RECONNECT, say): the new number
                // goes to it now, not only with its next retransmission.
                true
            } else if majority || self.s.sets.get(peer) == Some(Relation::Info) {
                self.s.sets.set(peer, Relation::Info);
                true
            } else {
                false
            };
            if asks && again {
                let Ticket { ts, seq } = ticket;
                let (epoch, fence) = (self.epoch(), self.s.core.fence_seen);
                let msg = Message::request(ts, seq, epoch, fence);
                self.s.core.ask_again(peer, msg, &mut self.out);
            } else if asks {
                self.ask(peer, ticket);
            }
        }
    }

    /// Ask again under a new number (the grants are a lease old, or a peer restarted): every
    /// REPLY to the old number is void.
    pub(super) fn renew(&mut self) {
        if self.s.core.status != Status::Waiting {
            return;
        }
        if let Some(ticket) = self.s.core.renumber() {
            self.ask_needed(ticket, true);
            self.s.core.try_enter(&mut self.out);
        }
    }

    /// Exclude `peer`, as if it had sent a DISCONNECT: into `Status_set`, not waited for,
    /// not asked (only probed, if the host excludes by its own timeout), its deferred request
    /// dropped (if it is alive it asks again, which readmits it); enter if nothing else is
    /// awaited.
    pub(super) fn exclude(&mut self, peer: NodeId) {
        if self.s.core.exclude(peer, &mut self.out) {
            self.s.sets.set(peer, Relation::Status);
            if self.s.core.status == Status::Waiting && self.probes(peer) {
                self.s.core.probe_later(peer, &mut self.out);
            }
            self.s.core.try_enter(&mut self.out);
        }
    }

    /// Readmit `peer`, as if it had sent a RECONNECT that is not applied: into `Info_set`,
    /// and a waiting host without its grant for the current number asks it now.
    pub(super) fn readmit(&mut self, peer: NodeId) {
        if self.rejoin(peer) {
            // Its grant, if it gave one, counts again (majority mode).
            self.s.core.try_enter(&mut self.out);
        }
    }

    /// [`Node::readmit`] without trying to enter: returns whether `peer` was excluded.
    fn rejoin(&mut self, peer: NodeId) -> bool {
        if !self.s.core.readmit(peer, &mut self.out) {
            return false;
        }
        // Back, whatever was known of it: not absent either (as after its RECONNECT).
        self.s.peers[peer.index()].absent = false;
        self.s.sets.set(peer, Relation::Info);
        if self.s.core.must_ask(peer) {
            if let Some(ticket) = self.s.core.open {
                self.ask(peer, ticket);
            }
        }
        true
    }

    /// After a gap (C9), readmit every excluded peer but `from`, except those away (their
    /// DISCONNECT applied: they are in no critical section).
    fn lift(&mut self, from: NodeId, heard: Heard) {
        if heard.gap {
            for peer in self.s.core.peers() {
                if peer != from
                    && self.s.core.is_excluded(peer)
                    && !self.s.peers[peer.index()].absent
                {
                    self.rejoin(peer);
                }
            }
        }
    }

    /// A valid message from `from`: evidence of life, which readmits it if excluded, unless
    /// it is absent (its DISCONNECT applied: only a message of a later epoch, which clears
    /// that, brings it back, as in the paper; a late REPLY of it must not). A gap closing
    /// readmits every excluded peer first, before any grant of `from` counts (C9).
    pub(super) fn heard(&mut self, from: NodeId) {
        let heard = self.s.core.heard(from);
        self.lift(from, heard);
        let readmitted = heard.excluded && !self.s.peers[from.index()].absent && self.rejoin(from);
        if readmitted || heard.gap {
            self.s.core.try_enter(&mut self.out);
        }
    }

    /// `Suspect` and `Trust` must name another host (local misuse otherwise).
    fn check_peer(&self, event: &'static str, peer: NodeId) -> Result<(), Error> {
        if self.s.core.is_peer(peer) {
            Ok(())
        } else {
            Err(Error::NotAPeer { event, peer })
        }
    }

    /// A REPLY to `peer` for its request `ticket`, copy of epoch `epoch`, telling it what we
    /// have seen of it and the highest fence we have seen.
    fn reply(
        peers: &[PeerView],
        fence: u64,
        peer: NodeId,
        Ticket { ts, seq }: Ticket,
        epoch: u64,
    ) -> Message {
        Message::reply(ts, seq, epoch, peers[peer.index()].epoch, fence)
    }

    /// The application asks (after [`crate::node::check_local`]): only a host in `Normal`
    /// mode may.
    fn request(&mut self) -> Result<(), Error> {
        if self.s.mode != Mode::Normal {
            return Err(Error::WrongMode {
                event: "Request",
                mode: self.s.mode.name(),
            });
        }
        let ticket = self.s.core.open_request(&mut self.out);
        self.ask_info_set(ticket);
        self.s.core.try_enter(&mut self.out);
        Ok(())
    }

    fn release(&mut self) {
        // The usual look-ahead rule: the deferred requesters (Q_req) get their REPLY. They are
        // all in our Info_set (Q_req ⊆ Info_set always holds), as they must be: the REPLY
        // moves us into their Status_set.
        let State { core, peers, .. } = &mut self.s;
        let fence = core.fence_seen;
        core.close(&mut self.out, |peer, ticket, epoch| {
            Self::reply(peers, fence, peer, ticket, epoch)
        });
        if self.s.reconnect_pending {
            self.announce_reconnect();
        }
    }

    /// Withdraw the waiting request: the deferred requesters get their REPLY, as on release,
    /// and the sets move only as those REPLYs move them.
    fn cancel(&mut self) {
        let State { core, peers, .. } = &mut self.s;
        let fence = core.fence_seen;
        core.withdraw(&mut self.out, |peer, ticket, epoch| {
            Self::reply(peers, fence, peer, ticket, epoch)
        });
        if self.s.reconnect_pending {
            self.announce_reconnect();
        }
    }

    fn timeout(&mut self, timer: crate::TimerId) {
        match self.s.core.timeout(timer, &mut self.out) {
            Expiry::Nothing => {}
            Expiry::Probe(peer, ticket)
                if self.s.peers[peer.index()].absent
                    && !self.granted_since_it_left(peer, ticket)
                    && !self.s.core.quorum() =>
            {
                // The peer left while this number was open: a REPLY to it cannot tell a
                // grant sent since from one sent before, and without a majority the host
                // needs one sent since (C10). Ask everyone under a new number; the peer is
                // probed with it.
                self.renew();
            }
            Expiry::Ask(peer, ticket) | Expiry::Probe(peer, ticket) => self.ask(peer, ticket),
            Expiry::Exclude(peer) => self.exclude(peer),
            Expiry::Refresh => self.renew(),
        }
    }

    fn receive(&mut self, from: NodeId, msg: Message) {
        if !self.s.core.is_peer(from) {
            self.out.anomaly(from, Anomaly::UnknownPeer);
            return;
        }
        if !self.s.core.hear_fence(from, msg.fence(), &mut self.out) {
            return;
        }
        match msg {
            Message::Request {
                ts,
                seq,
                epoch,
                check,
                ..
            } => {
                if check == Message::request_check(ts, seq, epoch) {
                    self.on_request(from, Ticket { ts, seq }, epoch);
                } else {
                    // Corrupted on the way: dropped like a lost copy (A6).
                    self.out.anomaly(from, Anomaly::OutOfRange);
                }
            }
            Message::Reply {
                ts,
                seq,
                epoch,
                seen,
                check,
                ..
            } => {
                if check == Message::reply_check(ts, seq, epoch) {
                    self.on_reply(from, Ticket { ts, seq }, epoch, seen);
                } else {
                    // Corrupted on the way: dropped like a lost copy (A7).
                    self.out.anomaly(from, Anomaly::OutOfRange);
                }
            }
            Message::Doze(a) => self.on_announce(from, Kind::Doze, a),
            Message::Disconnect(a) => self.on_announce(from, Kind::Disconnect, a),
            Message::Reconnect(a) => self.on_announce(from, Kind::Reconnect, a),
        }
    }

    fn on_request(&mut self, from: NodeId, ticket: Ticket, epoch: u64) {
        if !ticket.ts.names(from) || ticket.seq == 0 {
            self.out.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        // The epoch is a clock value of the sender's too.
        if !self.s.core.clock.admit([ticket.ts.clock, epoch]) {
            self.out.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        match self.s.core.incarnation_check(from, ticket.seq) {
            // A host that restarted since: its old incarnation's request is dead.
            Incarnation::Old => {
                self.out.anomaly(from, Anomaly::Stale);
                return;
            }
            // It restarted with empty state: its epochs start again, it asks everyone, and
            // everyone is asked again under a new number, so no REPLY of its old
            // incarnation counts any more.
            Incarnation::New => {
                self.s.peers[from.index()] = PeerView::default();
                let heard = self.s.core.heard(from);
                self.lift(from, heard);
                if heard.excluded {
                    self.s.core.readmit(from, &mut self.out);
                }
                self.s.sets.set(from, Relation::Info);
                self.renew();
            }
            Incarnation::Current => self.heard(from),
        }
        let known = self.s.peers[from.index()].epoch;
        if epoch < known {
            // A copy sent before an announcement we already have, or our record of the peer
            // was pushed past its real epoch by a corrupted message. The answer tells the peer
            // what we have seen, so that in the second case it re-announces beyond it (A3).
            // It grants nothing, and no single corrupted field may make it a grant: it names
            // no request (number 0) besides naming an epoch the peer left or one it never had.
            self.out.anomaly(from, Anomaly::Stale);
            let hint = Ticket { seq: 0, ..ticket };
            let reply = Self::reply(&self.s.peers, self.s.core.fence_seen, from, hint, epoch);
            self.out.send(from, reply);
            return;
        }
        if !self.s.core.current_request(from, ticket) {
            // A late copy of a request the peer has since been answered for.
            self.out.anomaly(from, Anomaly::Stale);
            return;
        }
        // A newer epoch means the announcement was lost or overtaken; it is now superseded.
        self.s.peers[from.index()].heard(epoch);
        // No longer absent, if it was: an excluded host is readmitted now.
        self.heard(from);
        // Our REPLY (now or on exit) moves us into the requester's Status_set, so it must be in
        // our Info_set: of two hosts, at least one always asks the other.
        self.s.sets.set(from, Relation::Info);
        match self.s.core.decide(ticket.ts) {
            Decision::Defer => {
                self.s.core.deferred.insert(from, ticket, epoch);
                if self.s.core.notifies_deferral() {
                    // A deferral notice (C9): number 0 names no request and grants nothing.
                    let notice = Ticket { seq: 0, ..ticket };
                    let fence = self.s.core.fence_seen;
                    let reply = Self::reply(&self.s.peers, fence, from, notice, epoch);
                    self.out.send(from, reply);
                }
            }
            Decision::Reply => {
                self.s.core.deferred.remove(from);
                let reply = Self::reply(&self.s.peers, self.s.core.fence_seen, from, ticket, epoch);
                self.out.send(from, reply);
                self.s.core.replied(from);
                // Waiting with lower priority: the requester will enter first, so we need its
                // permission as well (it defers us until it leaves the critical section).
                if let Some(mine) = self.s.core.open {
                    if self.s.core.status == Status::Waiting && !self.s.core.waits.contains(from) {
                        self.ask(from, mine);
                    }
                }
            }
        }
    }

    fn on_reply(&mut self, from: NodeId, ticket: Ticket, epoch: u64, seen: u64) {
        if ticket.ts.id != self.s.core.id {
            self.out.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        if seen > self.epoch() {
            // The replier has "seen" an epoch of ours we never announced: its record of us was
            // corrupted on the way. What it grants cannot be trusted, and until we announce
            // beyond it, it takes our messages for old ones (A3).
            self.out.anomaly(from, Anomaly::OutOfRange);
            self.resync(seen);
            return;
        }
        if self.s.core.status != Status::Waiting {
            self.heard(from);
            self.out.anomaly(from, Anomaly::Unexpected);
            return;
        }
        let accepted =
            epoch == self.epoch() && self.s.core.accept_reply(from, ticket, &mut self.out);
        self.heard(from);
        if !accepted {
            // A REPLY to an older request, to a copy sent before our last reconnect, or a
            // duplicate: it grants nothing and must not move any set.
            self.out.anomaly(from, Anomaly::Stale);
            return;
        }
        // It answered a request of this incarnation: its records of us are of this one.
        self.s.peers[from.index()].may_know_an_old_us = false;
        if self.s.settings.recovery.majority && self.s.peers[from.index()].absent {
            if self.granted_since_it_left(from, ticket) {
                // A probe's answer, sent after the peer left (C10): it is back, though its
                // RECONNECT never came. Readmitted (not absent), its grant counts.
                self.s.peers[from.index()].absent = false;
                self.rejoin(from);
            } else {
                // A REPLY it may have sent before leaving (late, or to a probe of a number
                // open when it left): it readmits nothing and ends no probe. The next probe
                // goes a timeout from now, under a new number if there is still no majority.
                self.s.core.probe_later(from, &mut self.out);
            }
        }
        // The replier keeps us in its Info_set; unless we still owe it a REPLY (which will move
        // us into its Status_set), it moves into our Status_set.
        if !self.s.core.deferred.contains(from) {
            self.s.sets.set(from, Relation::Status);
        }
        self.s.core.try_enter(&mut self.out);
    }
}

impl crate::node::Buffered for Node {
    fn outbox(&mut self) -> &mut Outbox<Message> {
        &mut self.out
    }

    fn step(&mut self, event: Event<Message>) -> Result<(), Error> {
        self.out.clear();
        self.s.core.check_not_left(&event)?;
        crate::node::check_local(&event, self.s.core.status, None)?;
        // Every fallible handler validates before it mutates, so an `Err` leaves state alone.
        let result = match event {
            Event::Request(_) => self.request(),
            Event::Release => {
                self.release();
                Ok(())
            }
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
            Event::Leave => self.leave(),
            Event::Cancel => {
                self.cancel();
                Ok(())
            }
            Event::Suspect(peer) => self
                .check_peer("Suspect", peer)
                .map(|()| self.exclude(peer)),
            Event::Trust(peer) => self.check_peer("Trust", peer).map(|()| self.readmit(peer)),
            other => Err(Error::Unsupported(other.name())),
        };
        self.out.settle(result)
    }
}

impl Protocol for Node {
    type Message = Message;

    fn id(&self) -> NodeId {
        self.s.core.id
    }

    fn status(&self) -> Status {
        self.s.core.status
    }

    crate::node::buffered_handlers!(Message);

    fn anomaly_severity(kind: Anomaly) -> Severity {
        crate::permission::anomaly_severity(kind)
    }
}
