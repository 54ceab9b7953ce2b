//! Building blocks shared by the permission-based algorithms (`look_ahead`, `ricart_agrawala`).
//!
//! Both algorithms order requests by Lamport timestamps (ties broken by node id), defer the
//! replies owed to lower-priority requesters (`Q_req`) and keep one retransmission timer per
//! REQUEST still waiting for its REPLY (`TO_req`). Those pieces, and the request / enter / exit
//! / timeout / REPLY-acceptance rules built on them (the crate-internal `Core`), live here once.
//!
//! # What a peer's counters can do
//! Clock values and epochs come from peers, so a corrupted or forged one must not be able to
//! exhaust a counter or make two requests look alike (`docs/ALGORITHMS.md`, A1):
//! - a value more than [`SKEW_LIMIT`] (2^40) ahead of the receiver's own clock is impossible
//!   for a peer that exchanges messages with it (clocks tick once per request or
//!   announcement, and each merges the other's), so the message carrying it is dropped as
//!   [`crate::Anomaly::OutOfRange`]. The receiver's clock moves `SKEW_LIMIT` towards it all
//!   the same: a forged value that one host took in makes its peers drop one message of it
//!   each (recovered by retransmission), not all of them for ever. A single message moves a
//!   clock by at most 2^40 of its 2^64 values;
//! - every request also carries the requester's own sequence number, which no peer can
//!   influence; a REPLY names both, so two requests of one host are never confused, whatever
//!   the clocks did.

use alloc::format;

use crate::node::Outbox;
use crate::peer_map::PeerMap;
use crate::{
    Action, Anomaly, Error, Fence, FenceCopies, NodeId, Protocol, Severity, Status, TimerId,
    Violation,
};

/// How far ahead of the receiver's clock a peer's clock value or epoch may be; beyond it the
/// value is impossible and its message is dropped (see the module docs).
pub const SKEW_LIMIT: u64 = 1 << 40;

/// A request priority: a Lamport clock value and the requester's id. Smaller is more urgent;
/// equal clocks are ordered by id, so two distinct requesters never tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Timestamp {
    /// The Lamport clock value when the request (or announcement) was made.
    pub clock: u64,
    /// The node that made it.
    pub id: NodeId,
}

impl Timestamp {
    /// Whether this request has priority over `other` (it is strictly smaller).
    pub(crate) fn beats(self, other: Timestamp) -> bool {
        self < other
    }

    /// Whether a stamp received from `from` names it, with a clock a tick produced (at least
    /// 1). Whether the clock is within reach is [`LamportClock::admit`]'s question.
    pub(crate) fn names(self, from: NodeId) -> bool {
        self.id == from && self.clock >= 1
    }
}

/// One request of one host: its priority and the host's own request number. A REPLY names
/// both, so it grants exactly that request: a peer can push the clock (priorities may then
/// repeat) but not the sequence number, which the requester alone advances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Ticket {
    pub(crate) ts: Timestamp,
    pub(crate) seq: u64,
}

/// A Lamport logical clock that admits peer values at most [`SKEW_LIMIT`] ahead of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LamportClock(u64);

impl LamportClock {
    /// The current value.
    pub(crate) fn now(self) -> u64 {
        self.0
    }

    /// Advance for a local event and return the new value.
    pub(crate) fn tick(&mut self) -> u64 {
        self.0 = self.0.saturating_add(1);
        self.0
    }

    /// Whether every one of `values` from a peer is within [`SKEW_LIMIT`] of this clock. The
    /// clock merges them (Lamport) either way, by at most `SKEW_LIMIT`; if they were out of
    /// reach, the message is to be dropped.
    pub(crate) fn admit(&mut self, values: impl IntoIterator<Item = u64>) -> bool {
        let reach = self.0.saturating_add(SKEW_LIMIT);
        let largest = values.into_iter().max().unwrap_or(0);
        self.0 = self.0.max(largest.min(reach));
        largest <= reach
    }
}

/// What a node does with a peer's REQUEST: the Ricart–Agrawala rule both algorithms share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Grant now: the node is not competing, or its own request is less urgent.
    Reply,
    /// Owe the reply until the node leaves the critical section.
    Defer,
}

/// Decide on a REQUEST stamped `incoming` given the node's section and its own open request.
fn decide(status: Status, own: Option<Timestamp>, incoming: Timestamp) -> Decision {
    match (status, own) {
        (Status::Critical, _) => Decision::Defer,
        (Status::Waiting, Some(mine)) if mine.beats(incoming) => Decision::Defer,
        _ => Decision::Reply,
    }
}

/// `TO_req`: the peers whose REPLY the node still waits for, each with its retransmission
/// timer. At most one entry per peer, so it is bounded by the number of hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Waits {
    timers: PeerMap<(NodeId, TimerId)>,
    next_timer: u64,
}

impl Waits {
    /// Start (or restart) waiting for `peer`, arming a fresh timer. A fresh id per arming makes
    /// a timeout of an earlier arming stale.
    pub(crate) fn arm<M>(&mut self, peer: NodeId, after: u64, out: &mut Outbox<M>) {
        if let Some((_, old)) = self.timers.remove(peer) {
            out.push(Action::CancelTimer { timer: old });
        }
        self.next_timer = self.next_timer.wrapping_add(1);
        let timer = TimerId(self.next_timer);
        self.timers.insert((peer, timer));
        out.push(Action::SetTimer { timer, after });
    }

    /// Stop waiting for `peer`. Returns whether it was waited for.
    pub(crate) fn resolve<M>(&mut self, peer: NodeId, out: &mut Outbox<M>) -> bool {
        match self.timers.remove(peer) {
            Some((_, timer)) => {
                out.push(Action::CancelTimer { timer });
                true
            }
            None => false,
        }
    }

    /// Timer `timer` fired: stop waiting for its peer (the caller re-arms after resending) and
    /// return the peer. A stale or unknown timer gives `None` and changes nothing.
    pub(crate) fn expire(&mut self, timer: TimerId) -> Option<NodeId> {
        let peer = self
            .timers
            .iter()
            .find(|(_, t)| *t == timer)
            .map(|(peer, _)| *peer)?;
        self.timers.remove(peer);
        Some(peer)
    }

    /// Whether the node waits for `peer`.
    pub(crate) fn contains(&self, peer: NodeId) -> bool {
        self.timers.contains(peer)
    }

    /// Stop waiting for anyone, cancelling every timer.
    pub(crate) fn clear<M>(&mut self, out: &mut Outbox<M>) {
        for (_, timer) in self.timers.drain() {
            out.push(Action::CancelTimer { timer });
        }
    }

    /// Whether no REPLY is outstanding.
    pub(crate) fn is_empty(&self) -> bool {
        self.timers.is_empty()
    }

    /// The peers still owing a REPLY, in id order.
    pub(crate) fn peers(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.timers.peers()
    }
}

/// `Q_req`: the requests whose REPLY the node defers, one per requester: the request's
/// ticket, and whatever else the algorithm needs to address the eventual REPLY (`T`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Deferred<T> {
    entries: PeerMap<(NodeId, (Ticket, T))>,
}

impl<T> Default for Deferred<T> {
    fn default() -> Self {
        Deferred {
            entries: PeerMap::default(),
        }
    }
}

impl<T: Copy> Deferred<T> {
    /// Record (or refresh, for a retransmitted copy) `peer`'s deferred request.
    pub(crate) fn insert(&mut self, peer: NodeId, ticket: Ticket, tag: T) {
        self.entries.insert((peer, (ticket, tag)));
    }

    /// Forget `peer`'s request. Returns whether it was deferred.
    pub(crate) fn remove(&mut self, peer: NodeId) -> bool {
        self.entries.remove(peer).is_some()
    }

    /// Whether `peer`'s request is deferred.
    pub(crate) fn contains(&self, peer: NodeId) -> bool {
        self.entries.contains(peer)
    }

    /// The deferred request of `peer`, if any.
    fn get(&self, peer: NodeId) -> Option<Ticket> {
        self.entries.get(peer).map(|(_, (ticket, _))| *ticket)
    }

    /// The deferred requesters, in id order.
    pub(crate) fn peers(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.entries.peers()
    }

    /// Answer every deferred request with `reply(peer, ticket, tag)`, in id order, leaving the
    /// set empty (on leaving the critical section).
    pub(crate) fn answer_all<M>(
        &mut self,
        out: &mut Outbox<M>,
        mut reply: impl FnMut(NodeId, Ticket, T) -> M,
    ) {
        for (peer, (ticket, tag)) in self.entries.drain() {
            out.send(peer, reply(peer, ticket, tag));
        }
    }
}

/// The state and rules every permission-based node shares: its section, Lamport clock, open
/// request, its own request counter, outstanding REPLYs (`TO_req`) and deferred requests
/// (`Q_req`, each with the `T` needed to answer it). The algorithms add their own state around
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Core<T> {
    pub(crate) id: NodeId,
    pub(crate) hosts: u32,
    pub(crate) retransmit_after: u64,
    pub(crate) status: Status,
    pub(crate) clock: LamportClock,
    /// The open request (`ts_req` and its number), `None` in the remainder section.
    pub(crate) open: Option<Ticket>,
    /// Requests made so far: the number of the last one. Only the host itself advances it.
    seq: u64,
    pub(crate) waits: Waits,
    pub(crate) deferred: Deferred<T>,
    /// The highest fence value seen in a message or issued here. Every message carries it,
    /// so it travels along every causal chain from one critical section's exit to the next
    /// entry, which is one above it (`docs/ALGORITHMS.md`, F1).
    pub(crate) fence_seen: u64,
}

impl<T: Copy> Core<T> {
    /// A node in the remainder section, after validating the shared configuration.
    pub(crate) fn new(id: NodeId, hosts: u32, retransmit_after: u64) -> Result<Self, Error> {
        let bad = |reason| Err(Error::InvalidConfig { node: id, reason });
        if id.0 >= hosts {
            return bad("id must be below the number of hosts");
        }
        if retransmit_after == 0 {
            return bad("retransmit_after must be positive");
        }
        Ok(Core {
            id,
            hosts,
            retransmit_after,
            status: Status::Remainder,
            clock: LamportClock::default(),
            open: None,
            seq: 0,
            waits: Waits::default(),
            deferred: Deferred::default(),
            fence_seen: 0,
        })
    }

    /// Whether `from` is another host of the system.
    pub(crate) fn is_peer(&self, from: NodeId) -> bool {
        from.0 < self.hosts && from != self.id
    }

    /// Every other host, in id order.
    pub(crate) fn peers(&self) -> impl Iterator<Item = NodeId> {
        let me = self.id;
        (0..self.hosts).map(NodeId).filter(move |&p| p != me)
    }

    /// A fresh Lamport timestamp for a local event.
    pub(crate) fn stamp(&mut self) -> Timestamp {
        Timestamp {
            clock: self.clock.tick(),
            id: self.id,
        }
    }

    /// Open a request (the application's `Request`, after [`crate::node::check_local`]) and
    /// return it.
    pub(crate) fn open_request(&mut self) -> Ticket {
        self.seq = self.seq.saturating_add(1);
        let ticket = Ticket {
            ts: self.stamp(),
            seq: self.seq,
        };
        self.open = Some(ticket);
        self.status = Status::Waiting;
        ticket
    }

    /// Give the open request a new number, keeping its priority: look-ahead asks again under a
    /// new epoch after a reconnection, and a REPLY to the earlier round must differ from one
    /// to the new round in more than the epoch (one corrupted field could change that).
    pub(crate) fn renumber(&mut self) -> Option<Ticket> {
        let ticket = self.open.as_mut()?;
        self.seq = self.seq.saturating_add(1);
        ticket.seq = self.seq;
        Some(*ticket)
    }

    /// Send the open request to `peer` with `msg` and (re)arm its timer.
    pub(crate) fn ask<M>(&mut self, peer: NodeId, msg: M, out: &mut Outbox<M>) {
        out.send(peer, msg);
        self.waits.arm(peer, self.retransmit_after, out);
    }

    /// Enter the critical section once every REPLY is in, fenced one above every fence seen.
    pub(crate) fn try_enter<M>(&mut self, out: &mut Outbox<M>) {
        if self.status == Status::Waiting && self.waits.is_empty() {
            self.status = Status::Critical;
            self.fence_seen = self.fence_seen.saturating_add(1);
            out.push(Action::EnterCritical {
                resources: 1,
                fence: Fence::new(0, self.fence_seen),
            });
        }
    }

    /// Take in the fence a peer's message carries. Copies that do not read as one fence of
    /// lane 0 are a forgery, which no single corrupted field makes: the message is to be
    /// dropped (like a lost one), reported as [`Anomaly::OutOfRange`].
    pub(crate) fn hear_fence<M>(
        &mut self,
        from: NodeId,
        fence: FenceCopies,
        out: &mut Outbox<M>,
    ) -> bool {
        match fence.read_in(0) {
            Some(value) => {
                self.fence_seen = self.fence_seen.max(value);
                true
            }
            None => {
                out.anomaly(from, Anomaly::OutOfRange);
                false
            }
        }
    }

    /// Withdraw the waiting request (the application's `Cancel`, after
    /// [`crate::node::check_local`]): stop waiting (cancelling every retransmission timer) and
    /// answer every deferred request with `reply`, as on leaving the critical section. REPLYs
    /// still on their way name the withdrawn request and grant nothing.
    pub(crate) fn withdraw<M>(
        &mut self,
        out: &mut Outbox<M>,
        reply: impl FnMut(NodeId, Ticket, T) -> M,
    ) {
        self.waits.clear(out);
        self.close(out, reply);
    }

    /// Back to the remainder section (on `Release`, after [`crate::node::check_local`], or
    /// on withdrawing): no open request, every deferred request answered with `reply`.
    pub(crate) fn close<M>(
        &mut self,
        out: &mut Outbox<M>,
        reply: impl FnMut(NodeId, Ticket, T) -> M,
    ) {
        self.status = Status::Remainder;
        self.open = None;
        self.deferred.answer_all(out, reply);
    }

    /// Timer `timer` fired: the peer to ask again and the open request, or `None` for a timer
    /// that is not current (cancelled or re-armed since), which is a no-op.
    pub(crate) fn expired(&mut self, timer: TimerId) -> Option<(NodeId, Ticket)> {
        let open = self.open?;
        self.waits.expire(timer).map(|peer| (peer, open))
    }

    /// Whether a REQUEST `ticket` from `from` is current, i.e. not older than the request of
    /// `from` already deferred here. A host numbers its requests, so a lower number belongs to
    /// a late copy of a request it has since been answered for; acting on it would drop or
    /// overwrite the deferral of the newer one, which would then never be answered (V5).
    /// Retransmissions repeat the number and stay current. Only a deferred entry is compared:
    /// nothing a peer sends raises a permanent mark, so no single message can make the
    /// peer's later requests look old.
    pub(crate) fn current_request(&self, from: NodeId, ticket: Ticket) -> bool {
        self.deferred
            .get(from)
            .is_none_or(|deferred| ticket.seq >= deferred.seq)
    }

    /// What to do with a REQUEST stamped `incoming` (the shared Ricart–Agrawala rule).
    pub(crate) fn decide(&self, incoming: Timestamp) -> Decision {
        decide(self.status, self.open.map(|t| t.ts), incoming)
    }

    /// Whether a REPLY naming `ticket` answers the open request and `from` still owed it; if
    /// so the wait ends (its timer is cancelled).
    pub(crate) fn accept_reply<M>(
        &mut self,
        from: NodeId,
        ticket: Ticket,
        out: &mut Outbox<M>,
    ) -> bool {
        self.open == Some(ticket) && self.waits.resolve(from, out)
    }
}

/// How the permission algorithms read an anomaly (the reasons are on [`Anomaly`]'s variants):
/// late and repeated REPLYs are normal with retransmission; a sender outside the system, or a
/// value out of range, is not. They report no link events.
pub(crate) fn anomaly_severity(kind: Anomaly) -> Severity {
    match kind {
        Anomaly::Stale | Anomaly::Unexpected => Severity::Noise,
        Anomaly::UnknownPeer | Anomaly::OutOfRange | Anomaly::RedundantLinkEvent => {
            Severity::Suspect
        }
    }
}

/// At most one of `nodes` is in the critical section (rule `mutual-exclusion`).
pub(crate) fn one_inside<P: Protocol>(nodes: &[P]) -> Result<(), Violation> {
    let mut inside = nodes.iter().filter(|n| n.status() == Status::Critical);
    match (inside.next(), inside.next()) {
        (Some(a), Some(b)) => {
            let detail = format!(
                "hosts [{:?}, {:?}] are in the critical section together",
                a.id(),
                b.id()
            );
            Err(Violation::new("mutual-exclusion", None, detail))
        }
        _ => Ok(()),
    }
}

/// A waiting host always has a REPLY outstanding (with its retransmission timer), otherwise it
/// would have entered; other hosts wait for nothing (rule `outstanding-replies`). This is
/// what makes a waiting host's request impossible to lose.
pub(crate) fn waits_match_status(
    me: NodeId,
    status: Status,
    outstanding: usize,
) -> Result<(), Violation> {
    let detail = match (status, outstanding) {
        (Status::Waiting, 0) => "waiting with no REPLY outstanding".into(),
        (Status::Waiting, _) | (_, 0) => return Ok(()),
        (s, k) => format!("{k} REPLYs outstanding while {s:?}"),
    };
    Err(Violation::new("outstanding-replies", Some(me), detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(clock: u64, id: u32) -> Timestamp {
        Timestamp {
            clock,
            id: NodeId(id),
        }
    }

    #[test]
    fn timestamps_order_by_clock_then_id() {
        assert!(ts(1, 5).beats(ts(2, 0)));
        assert!(ts(3, 1).beats(ts(3, 2)));
        assert!(!ts(3, 2).beats(ts(3, 2)));
    }

    #[test]
    fn lamport_clock_admits_peer_values_within_the_skew_limit() {
        let mut c = LamportClock::default();
        assert_eq!(c.tick(), 1);
        assert!(c.admit([7]));
        assert_eq!(c.tick(), 8);
        assert!(c.admit([3, 5]));
        assert_eq!(c.now(), 8);
        // A value out of reach is refused; the clock moves the limit towards it, so one
        // message moves it by at most 2^40 of its 2^64 values.
        assert!(!c.admit([1, u64::MAX]));
        assert_eq!(c.now(), 8 + SKEW_LIMIT);
        assert!(c.admit([8 + 2 * SKEW_LIMIT]));
        assert_eq!(c.now(), 8 + 2 * SKEW_LIMIT);
    }

    #[test]
    fn impossible_stamps_are_recognised() {
        assert!(ts(1, 4).names(NodeId(4)));
        assert!(!ts(0, 4).names(NodeId(4)), "a tick never gives 0");
        assert!(!ts(3, 5).names(NodeId(4)), "names another host");
    }

    #[test]
    fn requests_of_one_host_never_share_a_ticket_even_with_a_pinned_clock() {
        let mut core: Core<()> = Core::new(NodeId(0), 2, 1).unwrap();
        core.clock = LamportClock(u64::MAX);
        let first = core.open_request();
        core.status = Status::Remainder;
        core.open = None;
        let second = core.open_request();
        assert_eq!(first.ts, second.ts, "the clock is pinned");
        assert_ne!(first, second);
        assert_eq!(second.seq, first.seq + 1);
    }

    #[test]
    fn decide_defers_only_inside_or_for_an_older_own_request() {
        let (mine, theirs) = (ts(1, 0), ts(2, 1));
        assert_eq!(decide(Status::Remainder, None, theirs), Decision::Reply);
        assert_eq!(decide(Status::Critical, None, theirs), Decision::Defer);
        assert_eq!(decide(Status::Waiting, Some(mine), theirs), Decision::Defer);
        assert_eq!(decide(Status::Waiting, Some(theirs), mine), Decision::Reply);
    }

    #[test]
    fn waits_rearm_with_fresh_ids_and_ignore_stale_timers() {
        let mut out: Outbox<()> = Outbox::default();
        let mut w = Waits::default();
        w.arm(NodeId(1), 10, &mut out);
        w.arm(NodeId(2), 10, &mut out);
        let actions: alloc::vec::Vec<_> = out.drain().collect();
        let Action::SetTimer { timer: first, .. } = actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(w.expire(first), Some(NodeId(1)));
        assert_eq!(w.expire(first), None, "already expired");
        w.arm(NodeId(1), 10, &mut out);
        assert_eq!(w.expire(first), None, "re-armed with a new id");
        assert!(w.resolve(NodeId(2), &mut out));
        assert!(!w.resolve(NodeId(2), &mut out));
        assert_eq!(w.peers().collect::<alloc::vec::Vec<_>>(), [NodeId(1)]);
    }

    #[test]
    fn deferred_keeps_one_entry_per_peer_and_answers_in_id_order() {
        let ticket = |seq| Ticket {
            ts: ts(seq, 9),
            seq,
        };
        let mut d = Deferred::default();
        d.insert(NodeId(3), ticket(1), 1);
        d.insert(NodeId(3), ticket(2), 2);
        d.insert(NodeId(1), ticket(7), 5);
        assert!(d.contains(NodeId(3)));
        assert_eq!(d.get(NodeId(3)), Some(ticket(2)));
        let mut out = Outbox::default();
        d.answer_all(&mut out, |_, t, tag| t.seq * 10 + tag);
        assert_eq!(
            out.drain().collect::<alloc::vec::Vec<_>>(),
            [
                Action::Send {
                    to: NodeId(1),
                    msg: 75
                },
                Action::Send {
                    to: NodeId(3),
                    msg: 22
                }
            ]
        );
        assert!(d.peers().next().is_none());
        assert!(!d.remove(NodeId(1)));
    }

    #[test]
    fn only_a_deferred_request_makes_an_older_one_stale() {
        let ticket = |seq| Ticket {
            ts: ts(seq, 1),
            seq,
        };
        let mut core: Core<()> = Core::new(NodeId(0), 2, 1).unwrap();
        // Nothing deferred: any number is current (no permanent mark to poison).
        assert!(core.current_request(NodeId(1), ticket(u64::MAX)));
        assert!(core.current_request(NodeId(1), ticket(1)));
        core.deferred.insert(NodeId(1), ticket(5), ());
        assert!(!core.current_request(NodeId(1), ticket(4)));
        assert!(
            core.current_request(NodeId(1), ticket(5)),
            "a retransmission"
        );
        assert!(core.current_request(NodeId(1), ticket(6)));
    }
}
