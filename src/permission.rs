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
    Action, Anomaly, Error, Fence, FenceCopies, NodeId, Protocol, Report, Severity, Status,
    TimerId, Violation,
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
/// timer, and the excluded peers it *probes* (asks without waiting for their REPLY, so that a
/// peer wrongly excluded, or back after a partition, is heard from again). At most one entry
/// per peer, so it is bounded by the number of hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Waits {
    timers: PeerMap<(NodeId, Wait)>,
    next_timer: u64,
}

/// One entry of [`Waits`]: the peer's current timer, and whether it is only probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wait {
    timer: TimerId,
    probe: bool,
}

impl Waits {
    /// A fresh timer id, above every id handed out before (numbered per node).
    pub(crate) fn fresh(&mut self) -> TimerId {
        self.next_timer = self.next_timer.wrapping_add(1);
        TimerId(self.next_timer)
    }

    /// The last timer id handed out: a timer with a larger id was armed after this moment.
    fn mark(&self) -> u64 {
        self.next_timer
    }

    /// Start (or restart) waiting for `peer` (or probing it, if `probe`), arming a fresh
    /// timer. A fresh id per arming makes a timeout of an earlier arming stale.
    pub(crate) fn arm<M>(&mut self, peer: NodeId, after: u64, probe: bool, out: &mut Outbox<M>) {
        if let Some((_, old)) = self.timers.remove(peer) {
            out.push(Action::CancelTimer { timer: old.timer });
        }
        let timer = self.fresh();
        self.timers.insert((peer, Wait { timer, probe }));
        out.push(Action::SetTimer { timer, after });
    }

    /// Stop waiting for (or probing) `peer`. Returns whether it was waited for or probed.
    pub(crate) fn resolve<M>(&mut self, peer: NodeId, out: &mut Outbox<M>) -> bool {
        match self.timers.remove(peer) {
            Some((_, wait)) => {
                out.push(Action::CancelTimer { timer: wait.timer });
                true
            }
            None => false,
        }
    }

    /// Timer `timer` fired: stop waiting for its peer (the caller re-arms after resending) and
    /// return the peer, and whether it was only probed. A stale or unknown timer gives `None`
    /// and changes nothing.
    fn expire(&mut self, timer: TimerId) -> Option<(NodeId, bool)> {
        let (peer, wait) = self
            .timers
            .iter()
            .find(|(_, w)| w.timer == timer)
            .copied()?;
        self.timers.remove(peer);
        Some((peer, wait.probe))
    }

    /// Whether the node waits for `peer` (a probe is not a wait).
    pub(crate) fn contains(&self, peer: NodeId) -> bool {
        self.timers.get(peer).is_some_and(|(_, w)| !w.probe)
    }

    /// Stop waiting for anyone and probing anyone, cancelling every timer.
    pub(crate) fn clear<M>(&mut self, out: &mut Outbox<M>) {
        for (_, wait) in self.timers.drain() {
            out.push(Action::CancelTimer { timer: wait.timer });
        }
    }

    /// Whether no REPLY is outstanding (probes aside).
    pub(crate) fn is_empty(&self) -> bool {
        self.timers.iter().all(|(_, w)| w.probe)
    }

    /// The peers still owing a REPLY, in id order (probes aside).
    pub(crate) fn peers(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.timers
            .iter()
            .filter(|(_, w)| !w.probe)
            .map(|(peer, _)| *peer)
    }

    /// The peers probed, in id order.
    pub(crate) fn probed(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.timers
            .iter()
            .filter(|(_, w)| w.probe)
            .map(|(peer, _)| *peer)
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

/// What both permission algorithms' `Settings` hold about failures: a lease, exclusion of
/// silent peers, majority mode. All off by default, as in the papers. Build it through the
/// algorithms' `Settings::with_lease`, `with_exclusion` and `with_majority`; the crate's
/// [failure model](crate#failure-model) says what each buys, and `docs/ALGORITHMS.md` (C1–C9)
/// derives the bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Recovery {
    /// The lease of an entry, in [the embedder's time unit](crate#timers): `after` this long
    /// in the critical section the node emits [`Action::LeaseExpired`] (once, unless it
    /// released first). It also bounds how old a grant may be: a node still waiting a lease
    /// after (re)numbering its request asks again under a new number. `None`: no lease.
    pub lease: Option<u64>,
    /// Exclude a peer the node waits for once it stayed silent through this many consecutive
    /// retransmission timeouts (no valid message from it in between) and the node sent it no
    /// REPLY for as long. `None`: only [`crate::Event::Suspect`] excludes.
    pub exclusion: Option<u32>,
    /// Enter only with the grants of a strict majority of the hosts, the node itself
    /// included.
    pub majority: bool,
    /// The network's stated timing bounds, if given: the node then refuses settings that
    /// break them (an exclusion too short for the lease, C4), instead of running unsafely.
    pub bounds: Option<Bounds>,
}

/// The timing a network promises (`Settings::with_bounds` of both permission algorithms), in
/// [the embedder's time unit](crate#timers): every REQUEST reaches a live host within
/// `delivery` of its first sending, retransmissions included, and every host's clock runs
/// within `drift_ppm` parts per million of real time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Bounds {
    /// The delivery bound Δ.
    pub delivery: u64,
    /// The clock drift ρ, in parts per million (below 10^6).
    pub drift_ppm: u32,
}

impl Bounds {
    /// Delivery within `delivery`, clocks within `drift_ppm` parts per million.
    pub const fn new(delivery: u64, drift_ppm: u32) -> Self {
        Bounds {
            delivery,
            drift_ppm,
        }
    }
}

impl Recovery {
    /// The least exclusion count [`Recovery::exclusion_safe`] accepts for this lease and
    /// `bounds` (`None` without a lease, with no retransmission timeout, with a drift of 10^6
    /// ppm or more, or past `u32::MAX` timeouts).
    pub const fn least_safe_exclusion(&self, retransmit_after: u64, bounds: Bounds) -> Option<u32> {
        const P: u128 = 1_000_000;
        let Some(lease) = self.lease else {
            return None;
        };
        let d = bounds.drift_ppm as u128;
        if d >= P || retransmit_after == 0 {
            return None;
        }
        // The least m with m·R·(P−d)·P ≥ (P+d)·(2L·P + Δ·(P−d)) (exclusion_safe).
        let needed = (P + d) * (2 * lease as u128 * P + bounds.delivery as u128 * (P - d));
        let per = retransmit_after as u128 * (P - d) * P;
        let m = needed.div_ceil(per);
        if m == 0 {
            Some(1)
        } else if m > u32::MAX as u128 {
            None
        } else {
            Some(m as u32)
        }
    }

    /// Whether exclusion by timeout, with leases, keeps at most one holder acting at a time:
    /// `exclusion · retransmit_after ≥ (1 + ρ)·(2·lease/(1 − ρ) + delivery_bound)`, with every
    /// host's clock within a factor `1 ± ρ` of real time (`ρ = drift_ppm / 10^6`) and every
    /// REQUEST reaching a live host within `delivery_bound` of its first sending,
    /// retransmissions included (all in the embedder's time unit; `docs/ALGORITHMS.md`, C4,
    /// derives it). False without a lease or without exclusion, or with `drift_ppm ≥ 10^6`.
    pub fn exclusion_safe(
        &self,
        retransmit_after: u64,
        delivery_bound: u64,
        drift_ppm: u32,
    ) -> bool {
        const P: u128 = 1_000_000;
        let (Some(lease), Some(m)) = (self.lease, self.exclusion) else {
            return false;
        };
        let d = u128::from(drift_ppm);
        if d >= P {
            return false;
        }
        // m·R/(1+ρ) ≥ 2L/(1−ρ) + Δ, times P²·(1+ρ)(1−ρ)/P² ... in integers:
        // m·R·(P−d)·P ≥ (P+d)·(2L·P + Δ·(P−d)).
        let silence = u128::from(m) * u128::from(retransmit_after) * (P - d) * P;
        let needed = (P + d) * (2 * u128::from(lease) * P + u128::from(delivery_bound) * (P - d));
        silence >= needed
    }
}

/// The incarnation a request number belongs to: its high 32 bits. A host restarted under
/// incarnation `i` numbers its requests from `i << 32` on, above every number of its earlier
/// incarnations (2^32 requests per incarnation).
pub const fn incarnation_of(seq: u64) -> u32 {
    (seq >> 32) as u32
}

/// The generation `host` of `hosts` starts above generation `seen`: the least one above it
/// that is `host` modulo `hosts`, so two hosts that start one from the same knowledge never
/// start the same one (C6). Saturates at the last generation.
const fn generation_for(seen: u64, host: NodeId, hosts: u32) -> u64 {
    let n = hosts as u64;
    let above = seen + 1;
    let g = above + (host.0 as u64 + n - above % n) % n;
    if g > u32::MAX as u64 {
        u32::MAX as u64
    } else {
        g
    }
}

/// What the node knows of one peer, beyond the sets of its algorithm.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct PeerState {
    /// Excluded: not waited for, not counted, not asked (only probed).
    excluded: bool,
    /// It left (a LEAVE of its current incarnation, L2): excluded, not even probed, and
    /// readmitted only by a REQUEST of a later incarnation or by `Trust`.
    departed: bool,
    /// The highest incarnation seen in its REQUESTs.
    incarnation: u32,
    /// Consecutive timeouts of its timer counted towards exclusion.
    quiet: u32,
    /// Only timeouts of timers armed after this mark count (the last REPLY sent to it or
    /// message heard from it).
    quiet_since: u64,
    /// It granted the open request under its current number.
    granted: bool,
}

/// What a node does on the expiry of one of its timers ([`Core::timeout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// Not a current timer (or a lease that ended: reported already): nothing.
    Nothing,
    /// Ask `peer` again for the open request, waiting for its REPLY.
    Ask(NodeId, Ticket),
    /// Probe the excluded `peer` again.
    Probe(NodeId, Ticket),
    /// `peer` stayed silent long enough: exclude it.
    Exclude(NodeId),
    /// The grants collected are a lease old: ask again under a new number.
    Refresh,
}

/// The state and rules every permission-based node shares: its section, Lamport clock, open
/// request, its own request counter, outstanding REPLYs (`TO_req`) and deferred requests
/// (`Q_req`, each with the `T` needed to answer it), and what it knows of each peer's
/// failures. The algorithms add their own state around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Core<T> {
    pub(crate) id: NodeId,
    pub(crate) hosts: u32,
    pub(crate) retransmit_after: u64,
    pub(crate) recovery: Recovery,
    /// This host's incarnation.
    pub(crate) incarnation: u32,
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
    /// The next entry starts a new fence generation (a peer was excluded or restarted since
    /// the last entry).
    bump: bool,
    /// The fence of the current (or last) entry.
    entry_fence: u64,
    /// The lease timer while inside; while waiting with a lease, the timer after which the
    /// grants collected are too old.
    lease: Option<TimerId>,
    /// One slot per host (the own slot unused).
    peers: alloc::vec::Vec<PeerState>,
    /// This host left ([`crate::Event::Leave`]): it never requests again (L2).
    pub(crate) left: bool,
}

impl<T: Copy> Core<T> {
    /// A node in the remainder section, after validating the shared configuration. A host
    /// of incarnation `i` numbers its requests from `i << 32` and has seen fences up to
    /// `i << 32` (C5, C6).
    pub(crate) fn new(
        id: NodeId,
        hosts: u32,
        retransmit_after: u64,
        recovery: Recovery,
        incarnation: u32,
    ) -> Result<Self, Error> {
        let bad = |reason| Err(Error::InvalidConfig { node: id, reason });
        if id.0 >= hosts {
            return bad("id must be below the number of hosts");
        }
        if retransmit_after == 0 {
            return bad("retransmit_after must be positive");
        }
        if recovery.lease == Some(0) {
            return bad("a lease must be positive");
        }
        if recovery.exclusion == Some(0) {
            return bad("exclusion needs at least one retransmission timeout");
        }
        if let Some(bounds) = recovery.bounds {
            if bounds.drift_ppm >= 1_000_000 {
                return bad("the stated drift must be below 10^6 ppm");
            }
            if recovery.exclusion.is_some() && recovery.lease.is_none() {
                return bad("exclusion without a lease can let two holders act (C4): give a lease");
            }
            if recovery.exclusion.is_some()
                && !recovery.exclusion_safe(retransmit_after, bounds.delivery, bounds.drift_ppm)
            {
                return bad(
                    "the exclusion is shorter than the stated bounds allow: exclusion · \
                     retransmit_after must be at least (1 + ρ)·(2·lease/(1 − ρ) + delivery) (C4; \
                     Recovery::least_safe_exclusion gives the least)",
                );
            }
        }
        let floor = u64::from(incarnation) << 32;
        Ok(Core {
            id,
            hosts,
            retransmit_after,
            recovery,
            incarnation,
            status: Status::Remainder,
            clock: LamportClock::default(),
            open: None,
            seq: floor,
            waits: Waits::default(),
            deferred: Deferred::default(),
            fence_seen: floor,
            bump: false,
            entry_fence: 0,
            lease: None,
            peers: alloc::vec![PeerState::default(); hosts as usize],
            left: false,
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

    fn peer(&self, peer: NodeId) -> PeerState {
        match self.peers.get(peer.index()) {
            Some(state) if peer != self.id => *state,
            _ => PeerState::default(),
        }
    }

    fn peer_mut(&mut self, peer: NodeId) -> Option<&mut PeerState> {
        if peer == self.id {
            return None;
        }
        self.peers.get_mut(peer.index())
    }

    /// Whether `peer` is excluded.
    pub(crate) fn is_excluded(&self, peer: NodeId) -> bool {
        self.peer(peer).excluded
    }

    /// The excluded peers, in id order.
    pub(crate) fn excluded(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.peers().filter(|&p| self.is_excluded(p))
    }

    /// The highest incarnation of `peer` seen.
    pub(crate) fn peer_incarnation(&self, peer: NodeId) -> u32 {
        self.peer(peer).incarnation
    }

    /// Whether `peer` granted the open request under its current number.
    pub(crate) fn granted(&self, peer: NodeId) -> bool {
        self.peer(peer).granted
    }

    /// Whether excluded peers are probed while waiting: when the node excludes by its own
    /// timeout, nothing else would tell it a peer is back.
    pub(crate) fn probes(&self) -> bool {
        self.recovery.exclusion.is_some()
    }

    /// Whether the node may enter as far as majority mode goes: it and the peers that granted
    /// its current request and are not excluded are a strict majority of the hosts.
    pub(crate) fn quorum(&self) -> bool {
        if !self.recovery.majority {
            return true;
        }
        let granted = self
            .peers()
            .filter(|&p| {
                let s = self.peer(p);
                s.granted && !s.excluded
            })
            .count() as u64;
        2 * (1 + granted) > u64::from(self.hosts)
    }

    /// A fresh Lamport timestamp for a local event.
    pub(crate) fn stamp(&mut self) -> Timestamp {
        Timestamp {
            clock: self.clock.tick(),
            id: self.id,
        }
    }

    /// Forget every grant (a new request, or a new number for it).
    fn forget_grants(&mut self) {
        for p in &mut self.peers {
            p.granted = false;
        }
    }

    /// (Re)arm the timer after which the grants collected are a lease old.
    fn arm_lease<M>(&mut self, out: &mut Outbox<M>) {
        if let Some(after) = self.recovery.lease {
            if let Some(old) = self.lease.take() {
                out.push(Action::CancelTimer { timer: old });
            }
            let timer = self.waits.fresh();
            self.lease = Some(timer);
            out.push(Action::SetTimer { timer, after });
        }
    }

    fn cancel_lease<M>(&mut self, out: &mut Outbox<M>) {
        if let Some(timer) = self.lease.take() {
            out.push(Action::CancelTimer { timer });
        }
    }

    /// Open a request (the application's `Request`, after [`crate::node::check_local`]) and
    /// return it. With a lease, the grants it collects are good for one lease.
    pub(crate) fn open_request<M>(&mut self, out: &mut Outbox<M>) -> Ticket {
        self.seq = self.seq.saturating_add(1);
        let ticket = Ticket {
            ts: self.stamp(),
            seq: self.seq,
        };
        self.open = Some(ticket);
        self.status = Status::Waiting;
        self.forget_grants();
        self.arm_lease(out);
        ticket
    }

    /// A host that left never asks again (L1): a return is a restart. `Request`, `Leave`
    /// and the mode events are refused; a failure detector's `Suspect` and `Trust` still
    /// apply, harmlessly.
    pub(crate) fn check_not_left<M>(&self, event: &crate::Event<M>) -> Result<(), Error> {
        use crate::Event;
        let refused = matches!(
            event,
            Event::Request(_)
                | Event::Leave
                | Event::Doze
                | Event::Wake
                | Event::Disconnect
                | Event::Reconnect
        );
        if self.left && refused {
            return Err(Error::WrongMode {
                event: event.name(),
                mode: "left",
            });
        }
        Ok(())
    }

    /// The number of the last request made (its incarnation in the high half).
    pub(crate) fn last_seq(&self) -> u64 {
        self.seq
    }

    /// Give the open request a new number, keeping its priority: a REPLY to an earlier round
    /// must differ from one to the new round in more than one field. Every grant of the
    /// earlier number is void; the caller asks again. Look-ahead does this after a
    /// reconnection; both algorithms when their grants are a lease old or a peer restarted.
    pub(crate) fn renumber(&mut self) -> Option<Ticket> {
        let ticket = self.open.as_mut()?;
        self.seq = self.seq.saturating_add(1);
        ticket.seq = self.seq;
        let ticket = *ticket;
        self.forget_grants();
        Some(ticket)
    }

    /// Send the open request to `peer` with `msg` and (re)arm its timer: a wait, or a probe
    /// if `peer` is excluded.
    pub(crate) fn ask<M>(&mut self, peer: NodeId, msg: M, out: &mut Outbox<M>) {
        let probe = self.is_excluded(peer);
        if !probe {
            // Waited for again: its earlier grant no longer counts until it answers.
            if let Some(state) = self.peer_mut(peer) {
                state.granted = false;
            }
        }
        out.send(peer, msg);
        self.waits.arm(peer, self.retransmit_after, probe, out);
    }

    /// Send the open request, under a new number, to `peer` again: like [`Core::ask`], but a
    /// timer already running for it keeps running (its expiry resends the current number).
    /// Renumbering when grants are a lease old must not keep a silent peer's retransmission
    /// timer from ever expiring, which would keep the node from excluding it.
    pub(crate) fn ask_again<M>(&mut self, peer: NodeId, msg: M, out: &mut Outbox<M>) {
        if self.waits.timers.get(peer).is_none() {
            return self.ask(peer, msg, out);
        }
        if !self.is_excluded(peer) {
            if let Some(state) = self.peer_mut(peer) {
                state.granted = false;
            }
        }
        out.send(peer, msg);
    }

    /// Probe the excluded `peer` one retransmission timeout from now (its exclusion just
    /// ended a wait: nothing is sent to it at once).
    pub(crate) fn probe_later<M>(&mut self, peer: NodeId, out: &mut Outbox<M>) {
        self.waits.arm(peer, self.retransmit_after, true, out);
    }

    /// Whether to send the open request to `peer` at all: every peer that is not excluded,
    /// and excluded ones only as probes (never one that left: it is gone, L2).
    pub(crate) fn asks(&self, peer: NodeId) -> bool {
        let state = self.peer(peer);
        !state.excluded || (self.probes() && !state.departed)
    }

    /// Whether `peer` left (L2).
    pub(crate) fn has_departed(&self, peer: NodeId) -> bool {
        self.peer(peer).departed
    }

    /// Enter the critical section once every REPLY is in (and, in majority mode, a majority
    /// granted), fenced one above every fence seen, or at the start of a new generation if a
    /// peer was excluded or restarted since the last entry. With a lease, its timer starts.
    pub(crate) fn try_enter<M>(&mut self, out: &mut Outbox<M>) {
        if self.status == Status::Waiting && self.waits.is_empty() && self.quorum() {
            self.status = Status::Critical;
            self.waits.clear(out);
            self.fence_seen = if core::mem::take(&mut self.bump) {
                self.first_of_new_generation()
            } else {
                self.fence_seen.saturating_add(1)
            };
            self.entry_fence = self.fence_seen;
            out.push(Action::EnterCritical {
                resources: 1,
                fence: Fence::new(0, self.fence_seen),
            });
            self.arm_lease(out);
        }
    }

    /// The first fence of the generation an entry starts (C6): above every generation seen,
    /// and above the one each excluded peer would start from the same knowledge, so that
    /// when a peer excluded while it was in fact inside (past its lease, or cut off) started
    /// a generation too, this entry's is the later one; and `id` modulo `hosts`, so no other
    /// host starts the same one. Fences are `generation << 32 | count`.
    fn first_of_new_generation(&self) -> u64 {
        let seen = self.fence_seen >> 32;
        let floor = self
            .excluded()
            .filter(|&p| !self.has_departed(p))
            .map(|p| generation_for(seen, p, self.hosts))
            .fold(seen, u64::max);
        let generation = generation_for(floor, self.id, self.hosts);
        (generation << 32).max(self.fence_seen.saturating_add(1))
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
    /// on withdrawing): no open request, no lease, every deferred request answered with
    /// `reply`.
    pub(crate) fn close<M>(
        &mut self,
        out: &mut Outbox<M>,
        mut reply: impl FnMut(NodeId, Ticket, T) -> M,
    ) {
        self.status = Status::Remainder;
        self.open = None;
        self.cancel_lease(out);
        let (mark, counts) = (self.waits.mark(), self.recovery.exclusion.is_some());
        let peers = &mut self.peers;
        self.deferred.answer_all(out, |peer, ticket, tag| {
            match peers.get_mut(peer.index()) {
                Some(state) if counts => {
                    state.quiet = 0;
                    state.quiet_since = mark;
                }
                _ => {}
            }
            reply(peer, ticket, tag)
        });
    }

    /// Timer `timer` fired: what to do (see [`Expiry`]). A lease that ends inside the critical
    /// section is reported here ([`Action::LeaseExpired`], once); a timer that is not current
    /// (cancelled or re-armed since) is a no-op.
    pub(crate) fn timeout<M>(&mut self, timer: TimerId, out: &mut Outbox<M>) -> Expiry {
        if self.lease == Some(timer) {
            self.lease = None;
            return match self.status {
                Status::Critical => {
                    out.push(Action::LeaseExpired {
                        fence: Fence::new(0, self.entry_fence),
                    });
                    Expiry::Nothing
                }
                Status::Waiting => {
                    self.arm_lease(out);
                    Expiry::Refresh
                }
                Status::Remainder => Expiry::Nothing,
            };
        }
        let Some(open) = self.open else {
            return Expiry::Nothing;
        };
        let Some((peer, probe)) = self.waits.expire(timer) else {
            return Expiry::Nothing;
        };
        if probe {
            return Expiry::Probe(peer, open);
        }
        if let (Some(limit), Some(state)) = (self.recovery.exclusion, self.peer_mut(peer)) {
            if timer.0 > state.quiet_since {
                state.quiet = state.quiet.saturating_add(1);
            }
            if state.quiet >= limit {
                return Expiry::Exclude(peer);
            }
        }
        Expiry::Ask(peer, open)
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

    /// Whether a REPLY naming `ticket` answers the open request and `from` still owed it
    /// (waited for, probed, or excluded before its grant came); if so the wait ends (its timer
    /// is cancelled) and `from` has granted.
    pub(crate) fn accept_reply<M>(
        &mut self,
        from: NodeId,
        ticket: Ticket,
        out: &mut Outbox<M>,
    ) -> bool {
        if self.open != Some(ticket) {
            return false;
        }
        let owed = self.waits.resolve(from, out) || (self.is_excluded(from) && !self.granted(from));
        if owed {
            if let Some(state) = self.peer_mut(from) {
                state.granted = true;
            }
        }
        owed
    }

    /// The node sent `peer` a REPLY: its silence counts towards exclusion only from now (a
    /// host it granted may be inside for up to its lease).
    pub(crate) fn replied(&mut self, peer: NodeId) {
        let mark = self.waits.mark();
        if self.recovery.exclusion.is_none() {
            return; // nothing counts silence
        }
        if let Some(state) = self.peer_mut(peer) {
            state.quiet = 0;
            state.quiet_since = mark;
        }
    }

    /// A valid message from `peer` arrived: its silence counts from now. In majority mode with
    /// exclusion by timeout, a peer heard after a silence (excluded, or a retransmission
    /// timeout missed) is a *gap* closing: the network may have been split, and a host on the
    /// other side may have entered meanwhile without this node's grant. Every peer's silence
    /// then counts from now, and the caller readmits every excluded peer (C9).
    pub(crate) fn heard(&mut self, peer: NodeId) -> Heard {
        let (mark, counts) = (self.waits.mark(), self.recovery.exclusion.is_some());
        let majority = self.recovery.majority;
        let Some(state) = self.peer_mut(peer) else {
            return Heard::default();
        };
        // A host that left is readmitted by nothing it sent before leaving (late copies of
        // its REQUESTs and REPLYs), only by a later incarnation (L2).
        let excluded = state.excluded && !state.departed;
        if !counts {
            return Heard {
                excluded,
                gap: false,
            };
        }
        let gap = majority && (excluded || state.quiet > 0);
        state.quiet = 0;
        state.quiet_since = mark;
        if gap {
            for (i, other) in self.peers.iter_mut().enumerate() {
                if i != self.id.index() {
                    other.quiet = 0;
                    other.quiet_since = mark;
                }
            }
        }
        Heard { excluded, gap }
    }

    /// Whether a deferred REQUEST is answered at once with a deferral notice (a REPLY naming
    /// no request, number 0, which grants nothing): in majority mode with exclusion by
    /// timeout, so that a host that is reachable is never taken for silent, except inside
    /// past its lease, where its silence is what lets the others exclude it (C9).
    pub(crate) fn notifies_deferral(&self) -> bool {
        let past_lease = self.status == Status::Critical
            && self.recovery.lease.is_some()
            && self.lease.is_none();
        self.recovery.majority && self.recovery.exclusion.is_some() && !past_lease
    }

    /// Exclude `peer`: stop waiting for it (and probing it), drop its deferred request, stop
    /// counting it, start a new fence generation at the next entry, report it. Returns false (and does nothing) if it
    /// was excluded already. The caller then probes it if waiting ([`Core::probes`]) and
    /// tries to enter.
    pub(crate) fn exclude<M>(&mut self, peer: NodeId, out: &mut Outbox<M>) -> bool {
        let excluded = self.set_excluded(peer, out);
        if excluded {
            self.bump = true;
        }
        excluded
    }

    /// [`Core::exclude`] but for the new fence generation.
    fn set_excluded<M>(&mut self, peer: NodeId, out: &mut Outbox<M>) -> bool {
        match self.peer_mut(peer) {
            Some(state) if !state.excluded => {
                state.excluded = true;
                state.quiet = 0;
            }
            _ => return false,
        }
        self.waits.resolve(peer, out);
        // Its deferred request goes, as a DISCONNECT's does: if it is alive it asks again,
        // and its REQUEST readmits it. (Look-ahead must drop it: the REPLY would move this
        // node into the peer's `Status_set` while the peer sits in this node's.)
        self.deferred.remove(peer);
        out.push(Action::Report(Report::PeerExcluded(peer)));
        true
    }

    /// Readmit `peer`: count it again and report it. Returns false (and does nothing) if it
    /// was not excluded. The caller then asks it if waiting without its grant.
    pub(crate) fn readmit<M>(&mut self, peer: NodeId, out: &mut Outbox<M>) -> bool {
        match self.peer_mut(peer) {
            Some(state) if state.excluded && !state.departed => state.excluded = false,
            _ => return false,
        }
        self.waits.resolve(peer, out);
        out.push(Action::Report(Report::PeerReadmitted(peer)));
        true
    }

    /// `peer` left (a valid LEAVE of its current incarnation, L2): exclude it for good (not
    /// probed; readmitted only by a later incarnation or by [`Core::trust`]). The caller
    /// then tries to enter.
    pub(crate) fn depart<M>(&mut self, peer: NodeId, out: &mut Outbox<M>) {
        // No new fence generation (C6 needs one only where the chain of fences is cut): the
        // host left outside the critical section, and its LEAVE carries the highest fence it
        // saw, as its REPLYs would (L2).
        self.set_excluded(peer, out);
        if let Some(state) = self.peer_mut(peer) {
            state.departed = true;
        }
        // Not probed either: stop the probe timer of a peer excluded before it left.
        self.waits.resolve(peer, out);
    }

    /// The application trusts `peer` again ([`crate::Event::Trust`]): whatever it did
    /// before, even a LEAVE, it is readmitted. Returns whether it was excluded.
    pub(crate) fn trust<M>(&mut self, peer: NodeId, out: &mut Outbox<M>) -> bool {
        if let Some(state) = self.peer_mut(peer) {
            state.departed = false;
        }
        self.readmit(peer, out)
    }

    /// Whether a waiting node must ask `peer` now: it is not excluded and has not granted the
    /// current number, and is not waited for already.
    pub(crate) fn must_ask(&self, peer: NodeId) -> bool {
        self.status == Status::Waiting
            && !self.is_excluded(peer)
            && !self.granted(peer)
            && !self.waits.contains(peer)
    }

    /// Judge the incarnation of a REQUEST numbered `seq` from `from` (C5): an older
    /// incarnation than one seen is refused; a newer one means the host restarted with empty
    /// state, so its deferred request (of the old incarnation) is dropped, the next entry
    /// starts a new fence generation, and the caller readmits it and, if waiting, asks
    /// everyone again under a new number (its old incarnation's REPLYs, late copies
    /// included, must no longer count).
    pub(crate) fn incarnation_check(&mut self, from: NodeId, seq: u64) -> Incarnation {
        let claimed = incarnation_of(seq);
        let Some(state) = self.peer_mut(from) else {
            return Incarnation::Current;
        };
        match claimed.cmp(&state.incarnation) {
            core::cmp::Ordering::Less => Incarnation::Old,
            core::cmp::Ordering::Equal => Incarnation::Current,
            core::cmp::Ordering::Greater => {
                state.incarnation = claimed;
                state.granted = false;
                // A restart after a LEAVE is a return (L2): the caller readmits it.
                state.departed = false;
                self.deferred.remove(from);
                self.bump = true;
                Incarnation::New
            }
        }
    }
}

/// What hearing from a peer means ([`Core::heard`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Heard {
    /// It was excluded: the caller readmits it.
    pub(crate) excluded: bool,
    /// A gap closed (majority mode): the caller readmits every excluded peer too.
    pub(crate) gap: bool,
}

/// A REQUEST's incarnation, against the sender's highest seen ([`Core::incarnation_check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Incarnation {
    /// Older: refused.
    Old,
    /// The one known.
    Current,
    /// Newer: the host restarted.
    New,
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
/// would have entered, unless majority mode keeps it out (`quorum` false: too few grants);
/// other hosts wait for nothing (rule `outstanding-replies`). This is what makes a waiting
/// host's request impossible to lose.
pub(crate) fn waits_match_status(
    me: NodeId,
    status: Status,
    outstanding: usize,
    quorum: bool,
) -> Result<(), Violation> {
    let detail = match (status, outstanding) {
        (Status::Waiting, 0) if quorum => "waiting with no REPLY outstanding".into(),
        (Status::Waiting, _) | (_, 0) => return Ok(()),
        (s, k) => format!("{k} REPLYs outstanding while {s:?}"),
    };
    Err(Violation::new("outstanding-replies", Some(me), detail))
}

/// An excluded peer is not waited for (rule `excluded-not-awaited`).
pub(crate) fn excluded_not_awaited(
    me: NodeId,
    mut outstanding: impl Iterator<Item = NodeId>,
    excluded: impl Fn(NodeId) -> bool,
) -> Result<(), Violation> {
    match outstanding.find(|&p| excluded(p)) {
        Some(p) => Err(Violation::new(
            "excluded-not-awaited",
            Some(me),
            format!("waits for the REPLY of {p:?}, which it excludes"),
        )),
        None => Ok(()),
    }
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
        let mut core: Core<()> = Core::new(NodeId(0), 2, 1, Recovery::default(), 0).unwrap();
        let mut out: Outbox<()> = Outbox::default();
        core.clock = LamportClock(u64::MAX);
        let first = core.open_request(&mut out);
        core.status = Status::Remainder;
        core.open = None;
        let second = core.open_request(&mut out);
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
        w.arm(NodeId(1), 10, false, &mut out);
        w.arm(NodeId(2), 10, false, &mut out);
        let actions: alloc::vec::Vec<_> = out.drain().collect();
        let Action::SetTimer { timer: first, .. } = actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(w.expire(first), Some((NodeId(1), false)));
        assert_eq!(w.expire(first), None, "already expired");
        w.arm(NodeId(1), 10, false, &mut out);
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
        let mut core: Core<()> = Core::new(NodeId(0), 2, 1, Recovery::default(), 0).unwrap();
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
