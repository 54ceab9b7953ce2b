//! Recovery of lost tokens (issue 23): what a network agrees on ([`Recovery`]) and what each
//! node keeps per token id (crate-private), for the token algorithms.
//!
//! The mechanism, in one paragraph (`docs/ALGORITHMS.md`, F2–F6, derives every bound):
//! every token carries its *generation* in the high half of its fence value
//! ([`Fence::generation`](crate::Fence::generation)). Its holder floods a **beacon** (the
//! token's fence, raised by one, so every beacon is newer than the last) at most every
//! `beacon_every`, and every node forwards each beacon once: while the token exists in a
//! connected part of the network, every node of the part hears of it at least every
//! [`Recovery::silence`]. A node that hears nothing of a token for that long floods a
//! **claim** for the next generation and, if no better claim reaches it within
//! [`Recovery::claim_wait`], **regenerates** the token with that generation. Every entry has a
//! **lease** (`lease`): [`Action::LeaseExpired`](crate::Action::LeaseExpired) tells the
//! application to stop, and nobody regenerates within a lease of the last beacon. A token of an
//! older generation than one a node has heard of is destroyed where it arrives
//! ([`Report::TokenDestroyed`](crate::Report::TokenDestroyed)), never used.
//!
//! In majority mode ([`Recovery::with_majority`], F9) a claim is a ballot: it makes the token
//! only with **promises** for exactly it from a strict majority of the membership, and a node
//! promises at most one ballot per round, so no round of a token id is ever made twice, and a
//! part without a majority makes none.

use crate::node::Outbox;
use crate::token::height::{Height, Sealed};
use crate::token::links::TokenNode;
use crate::{Action, Anomaly, Error, Fence, FenceCopies, NodeId, Report, Status, TimerId};

/// Token recovery settings: every node of a network must agree on them. Times are in
/// [the embedder's time unit](crate#timers).
///
/// The guarantee they buy, and its assumptions (the crate's
/// [failure model](crate#failure-model)): with every clock drifting at most `drift_ppm`, every
/// message over a link that stays up delivered within `hop_bound` (over a
/// [session](crate::session), its liveness timeout bounds it: a message not delivered by then
/// never is), and every connected part of the network at most `diameter` hops across, a token
/// is regenerated only when no copy of it exists in the part, and by one node of the part.
/// Two parts that cannot reach each other may each regenerate it; a merge destroys the older,
/// unless the network runs in majority mode ([`Recovery::with_majority`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Recovery {
    /// A holder floods a beacon for each token it holds at most this often (and a node that
    /// receives a token floods one if it heard none for this long). At least 1.
    pub beacon_every: u64,
    /// How long an entry may last: after it, the holder is told
    /// [`Action::LeaseExpired`](crate::Action::LeaseExpired) and must stop acting on the
    /// resource. At least 1.
    pub lease: u64,
    /// The longest a message over a link takes to arrive, retransmissions included. At least 1.
    pub hop_bound: u64,
    /// The most hops a beacon crosses to reach every node of a connected part. At least 1.
    pub diameter: u32,
    /// The most any host's clock drifts, in parts per million (`0..=100_000`).
    pub drift_ppm: u32,
    /// Majority mode ([`Recovery::with_majority`]): the membership's size, its nodes the ids
    /// `0..members`. `None` (the default): a part regenerates on its own.
    pub majority: Option<u32>,
}

impl Recovery {
    /// The default clock drift: 100 ppm, ten times a common crystal's.
    pub const DEFAULT_DRIFT_PPM: u32 = 100;

    /// Recovery with beacons every `beacon_every`, entries leased for `lease`, messages
    /// delivered within `hop_bound` across at most `diameter` hops; clocks drift at most
    /// [`Recovery::DEFAULT_DRIFT_PPM`].
    pub const fn new(beacon_every: u64, lease: u64, hop_bound: u64, diameter: u32) -> Self {
        Recovery {
            beacon_every,
            lease,
            hop_bound,
            diameter,
            drift_ppm: Self::DEFAULT_DRIFT_PPM,
            majority: None,
        }
    }

    /// In majority mode over the membership of node ids `0..members` (`1..=65_536`; every
    /// node's id must be below it): a claim makes a token only with promises from more than
    /// `members / 2` of them, each node promising at most one claim per round and token id,
    /// so at most one new generation per round and token id exists system-wide, and a part
    /// without a majority makes none (F9). Promises must survive a restart: each comes with
    /// [`Action::Persist`](crate::Action::Persist), to store before what follows it is sent.
    pub const fn with_majority(self, members: u32) -> Self {
        Recovery {
            majority: Some(members),
            ..self
        }
    }

    /// With clocks drifting at most `ppm` parts per million.
    pub const fn with_drift_ppm(self, ppm: u32) -> Self {
        Recovery {
            drift_ppm: ppm,
            ..self
        }
    }

    /// How long a node hears nothing of a token before it claims it lost (a local timer). It
    /// exceeds, on any clock, the longest gap between two beacons reaching a node while the
    /// token exists in its part (`beacon_every` on the holder's clock, a hop to a node that
    /// has not heard one for that long, and two floods across the part: F3), the time a claim
    /// heard takes to turn into a beacon (a claim wait and a flood: F4), plus the longest lease
    /// on any clock: every entry made with a token before it was lost (at most a gap after the
    /// last evidence of it) has ended its lease before the silence ends (F5).
    pub fn silence(&self) -> u64 {
        let hops = u64::from(self.diameter) * 3 + 1;
        let gap = self
            .slowest(self.beacon_every)
            .saturating_add(self.hop_bound.saturating_mul(hops));
        let lease = self.slowest(self.lease);
        self.fastest(gap.saturating_add(lease))
    }

    /// How long a claimer waits for a better claim before it regenerates (a local timer): two
    /// floods across the part on any clock (F4). In majority mode the same two floods carry a
    /// claim out and its promises back (F9).
    pub fn claim_wait(&self) -> u64 {
        let floods = self
            .hop_bound
            .saturating_mul(u64::from(self.diameter))
            .saturating_mul(2);
        self.fastest(floods)
    }

    /// How long, on any clock, until every lease that began before now has ended (a local
    /// timer): the longest lease on the slowest clock, measured by the fastest (F7).
    pub(crate) fn lease_bound(&self) -> u64 {
        self.fastest(self.slowest(self.lease))
    }

    /// Whether the settings are usable; the problem otherwise.
    pub(crate) fn validate(&self) -> Result<(), &'static str> {
        if self.beacon_every == 0 || self.lease == 0 || self.hop_bound == 0 {
            return Err("recovery times must be at least 1");
        }
        if self.diameter == 0 {
            return Err("recovery needs a diameter of at least 1 hop");
        }
        if self.drift_ppm > 100_000 {
            return Err("clock drift must be at most 100,000 ppm");
        }
        if self.majority.is_some_and(|m| m == 0 || m > 0x1_0000) {
            return Err("a majority's membership must have 1 to 65,536 nodes");
        }
        Ok(())
    }

    /// The longest real time a local timer of `local` units can last (a clock running slow).
    fn slowest(&self, local: u64) -> u64 {
        self.scale(local, 1_000_000, 1_000_000 - u64::from(self.drift_ppm))
    }

    /// The local timer that lasts at least `real` on any clock (one running fast).
    fn fastest(&self, real: u64) -> u64 {
        self.scale(real, 1_000_000 + u64::from(self.drift_ppm), 1_000_000)
    }

    fn scale(&self, x: u64, num: u64, den: u64) -> u64 {
        let scaled = (u128::from(x) * u128::from(num)).div_ceil(u128::from(den));
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }
}

/// A regenerated token's generation: the round in the high 16 bits, the regenerating node's id
/// in the low 16, so two regenerations never make the same generation (F2).
pub(crate) fn generation(round: u16, origin: NodeId) -> u32 {
    (u32::from(round) << 16) | (origin.0 & 0xffff)
}

/// The round of a generation.
pub(crate) fn round(generation: u32) -> u16 {
    (generation >> 16) as u16
}

/// How far a claim's round may be ahead of the highest round its receiver knows of (the
/// generation it knows and, in majority mode, every round it promised or heard promised):
/// beyond it the claim is impossible (every failed claim raises the round by one, and a
/// claimer floods its own promise, which names the round under a check word, before its
/// claim) and is dropped as out of range, so a claim whose round two copies corrupted alike
/// moves no node more than this far (F13).
pub(crate) const ROUND_REACH: u16 = 64;

/// Whether claim `a` beats claim `b`: a later round, or the same round and a smaller id.
pub(crate) fn beats(a: u32, b: u32) -> bool {
    let (ra, rb) = (round(a), round(b));
    ra > rb || (ra == rb && (a & 0xffff) < (b & 0xffff))
}

/// A promise a node made in majority mode ([`Recovery::with_majority`]): for token id `lane`,
/// no claim of a round up to `ballot`'s but `ballot` itself. Plain data for the embedder to
/// store ([`Action::Persist`](crate::Action::Persist)) and give back at a restart (each
/// algorithm's `Config::with_promises`): a node that forgot its promises could promise a
/// second claim of a round, and two claims of one round could both make the token (F9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Promised {
    /// The token id.
    pub lane: u32,
    /// The claim promised: a generation (its round in the high 16 bits, its claimer's id in
    /// the low 16).
    pub ballot: u32,
}

impl Promised {
    /// The promise of `ballot` for token id `lane`.
    pub const fn new(lane: u32, ballot: u32) -> Self {
        Promised { lane, ballot }
    }
}

/// The word a promise's check word covers besides the height: its token id, its voter and its
/// ballot (`ballot`, its three copies read by majority), so a corrupted one is refused rather
/// than counted for another id, voter or round. The ballot enters through an odd multiplier
/// (a bijection), so a change of any one of the three changes the word. A refusal names the
/// round its voter promised, and a claimer goes above it in one step: only the check word
/// keeps a corrupted round from moving it there (F13).
pub(crate) fn promise_word(lane: u32, voter: u32, ballot: [u32; 3]) -> u64 {
    const ODD: u64 = 0x9e37_79b9_7f4a_7c15;
    let ballot = crate::fence::majority(ballot).unwrap_or(0);
    ((u64::from(lane) << 32) | u64::from(voter)) ^ u64::from(ballot).wrapping_mul(ODD)
}

/// What a node keeps per token id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct Lane {
    /// The highest fence value heard of for this token id (from the token or a beacon):
    /// beacons not above it are old news, tokens of a generation below its generation are
    /// destroyed.
    pub(crate) latest: u64,
    /// A beacon for this id was sent or forwarded here within the last `beacon_every`.
    pub(crate) fresh: bool,
    /// The best claim heard of (or made) since the last evidence of the token, if any.
    pub(crate) claim: Option<u32>,
    /// The node's own claim, waiting out the claim timer.
    pub(crate) claiming: bool,
    /// The best claim this node answered as the token's holder: a copy of it, or a worse
    /// claim, is not answered again (F4).
    pub(crate) answered: Option<u32>,
    /// The node may claim this token id lost: not before a restarted node heard of it (F4).
    pub(crate) may_claim: bool,
    /// The node's claim is a holder's turnover (F7 in majority mode, F9): its own token's
    /// beacons do not void it. With `claiming` false and a claim, the turnover won its majority
    /// while the token was away and is made when it comes back with no grant since (F15).
    pub(crate) turnover: bool,
    /// The highest round the node made before it restarted ([`Config::restarted_after`]; 0
    /// otherwise): it makes only later ones.
    ///
    /// [`Config::restarted_after`]: crate::reverse_link::Config::restarted_after
    pub(crate) made: u16,
    /// The generation of the latest fence the protected resource admitted, as told by a
    /// refusal, if any: a token of this id held here at or below it moves above it (F10).
    pub(crate) floor: Option<u32>,
    /// The arming number of each timer of the id (fresh, silent, claim): only the expiry of
    /// the current arming counts.
    pub(crate) armings: [u32; 3],
}

impl Lane {
    /// The generation the node knows of.
    pub(crate) fn generation(&self) -> u32 {
        (self.latest >> 32) as u32
    }

    /// The generation the node would make next, `id` its own: one round above `floor` and
    /// everything it has heard of or made (`None` once the rounds are used up).
    pub(crate) fn next_generation(&self, id: NodeId, floor: u16) -> Option<u32> {
        let heard = round(self.generation()).max(self.claim.map_or(0, round));
        let next = heard.max(self.made).max(floor).checked_add(1)?;
        Some(generation(next, id))
    }

    /// The generation the node would claim next.
    pub(crate) fn next_claim(&self, id: NodeId) -> Option<u32> {
        self.next_generation(id, 0)
    }
}

/// Majority mode's state per token id (F9).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Votes {
    /// The last ballot this node promised (0: none; claims have rounds from 1).
    pub(crate) promised: u32,
    /// The best ballot whose promises this node heard (0: none), and its voters heard, one bit
    /// each: each promise is forwarded once, and a claimer counts its own ballot's.
    pub(crate) ballot: u32,
    pub(crate) voters: alloc::vec::Vec<u64>,
    /// While claiming: a rival claim of the same round was heard (a split vote).
    pub(crate) contested: bool,
    /// The highest round this node promised or heard a voter promise (a refusal names it):
    /// no claim of it or below can win everywhere, so the node's next claim goes above it
    /// (F13). Kept across evidence of the token, unlike the claim heard.
    pub(crate) spent: u16,
    /// While claiming: another voter's promise of a round at or above the claim's was heard
    /// (a refusal, or a better claim's vote), so the claim may fail where it is refused; if
    /// it does, the next goes above at once (F13).
    pub(crate) refused: bool,
}

impl Votes {
    /// Count `voter`'s promise of `ballot`: `false` if it is not news (heard already, or for a
    /// ballot worse than the best heard, which can no longer win).
    pub(crate) fn tally(&mut self, ballot: u32, voter: u32) -> bool {
        if ballot != self.ballot {
            if self.ballot != 0 && !beats(ballot, self.ballot) {
                return false;
            }
            self.ballot = ballot;
            self.voters.fill(0);
        }
        let bit = 1u64 << (voter % 64);
        match self.voters.get_mut((voter / 64) as usize) {
            Some(word) if *word & bit == 0 => {
                *word |= bit;
                true
            }
            _ => false,
        }
    }

    /// The promises heard for `ballot`.
    pub(crate) fn count(&self, ballot: u32) -> u32 {
        if ballot == self.ballot {
            self.voters.iter().map(|w| w.count_ones()).sum()
        } else {
            0
        }
    }
}

/// Majority mode's state (F9).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Quorum {
    /// The membership's size: node ids `0..members`.
    pub(crate) members: u32,
    /// `false` for a node restarted without its promises: it never promises again, since it
    /// cannot know which rounds it promised (liveness only: it still forwards).
    pub(crate) may_promise: bool,
    /// One entry per token id.
    pub(crate) votes: alloc::vec::Vec<Votes>,
}

/// What a node with recovery keeps besides its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Watch {
    /// What the network agrees on.
    pub(crate) recovery: Recovery,
    /// One entry per token id.
    pub(crate) lanes: alloc::vec::Vec<Lane>,
    /// The timers are running: set at the node's first event (a node cannot act before).
    pub(crate) armed: bool,
    /// The fence of the entry whose lease runs.
    pub(crate) leased: Option<Fence>,
    /// The arming numbers of the lease and rebuild timers.
    pub(crate) lease_arming: [u32; 2],
    /// The token of the current entry was destroyed (a newer generation arrived): the node
    /// stays in the critical section until `Release`, holding no token for it.
    pub(crate) revoked: bool,
    /// Majority mode's state, `None` outside it.
    pub(crate) quorum: Option<Quorum>,
}

impl Watch {
    /// The state of a node with `k` token ids, restarted or not, given the highest round it
    /// made before and the promises it made before (`None`: not given). The promises' ids
    /// must be below `k`.
    pub(crate) fn new(
        recovery: Recovery,
        k: u32,
        restarted: bool,
        made: Option<u16>,
        promises: Option<&[Promised]>,
    ) -> Self {
        let lane = Lane {
            may_claim: !restarted || made.is_some(),
            made: made.unwrap_or(0),
            ..Lane::default()
        };
        let quorum = recovery.majority.map(|members| {
            let votes = Votes {
                promised: 0,
                ballot: 0,
                voters: alloc::vec![0; members.div_ceil(64) as usize],
                contested: false,
                spent: 0,
                refused: false,
            };
            let mut votes = alloc::vec![votes; k as usize];
            for p in promises.unwrap_or_default() {
                if let Some(v) = votes.get_mut(p.lane as usize) {
                    v.promised = v.promised.max(p.ballot);
                    v.spent = v.spent.max(round(p.ballot));
                }
            }
            Quorum {
                members,
                may_promise: !restarted || promises.is_some(),
                votes,
            }
        });
        Watch {
            recovery,
            lanes: alloc::vec![lane; k as usize],
            armed: false,
            leased: None,
            lease_arming: [0; 2],
            revoked: false,
            quorum,
        }
    }

    /// The arming number of `timer` (`None` for a token id beyond `k`).
    pub(crate) fn arming(&mut self, timer: Timer) -> Option<&mut u32> {
        match timer {
            Timer::Lease => Some(&mut self.lease_arming[0]),
            Timer::Rebuild => Some(&mut self.lease_arming[1]),
            Timer::Fresh(l) => self.lanes.get_mut(l as usize).map(|l| &mut l.armings[0]),
            Timer::Silent(l) => self.lanes.get_mut(l as usize).map(|l| &mut l.armings[1]),
            Timer::Claim(l) => self.lanes.get_mut(l as usize).map(|l| &mut l.armings[2]),
        }
    }
}

/// What the timers of recovery are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    /// The beacon window of a token id ended.
    Fresh(u32),
    /// Nothing was heard of a token id for [`Recovery::silence`].
    Silent(u32),
    /// A claim for a token id waited out [`Recovery::claim_wait`].
    Claim(u32),
    /// The lease of the current entry ended.
    Lease,
    /// The prioritized token's holder waited out every lease of its generation without a
    /// grant (F7).
    Rebuild,
}

/// Recovery's timer ids have bit 63 set; below it the arming's number (31 bits), then the token
/// id (30 bits) and two bits of kind. A node numbers each arming of a timer, so the expiry of
/// a timer it re-armed or cancelled names an old number and changes nothing, whether or not
/// the embedder lets such timers fire.
const BASE: u64 = 1 << 63;

impl Timer {
    fn parts(self) -> (u32, u64) {
        match self {
            Timer::Fresh(l) => (l, 0),
            Timer::Silent(l) => (l, 1),
            Timer::Claim(l) => (l, 2),
            Timer::Lease => (0, 3),
            Timer::Rebuild => (1, 3),
        }
    }

    /// The id of this timer's arming number `arming`.
    pub(crate) fn id(self, arming: u32) -> TimerId {
        let (lane, kind) = self.parts();
        let arming = u64::from(arming & 0x7fff_ffff);
        TimerId(BASE | (arming << 32) | (u64::from(lane & 0x3fff_ffff) << 2) | kind)
    }

    /// The timer `id` names, with its arming number, if it is one of recovery's for a token
    /// id below `k`.
    pub(crate) fn of(id: TimerId, k: u32) -> Option<(Timer, u32)> {
        if id.0 & BASE == 0 {
            return None;
        }
        let arming = ((id.0 >> 32) & 0x7fff_ffff) as u32;
        let lane = ((id.0 >> 2) & 0x3fff_ffff) as u32;
        let timer = match (id.0 & 3, lane) {
            (3, 0) => Timer::Lease,
            (3, 1) => Timer::Rebuild,
            (3, _) => return None,
            (_, l) if l >= k => return None,
            (0, l) => Timer::Fresh(l),
            (1, l) => Timer::Silent(l),
            (_, l) => Timer::Claim(l),
        };
        Some((timer, arming))
    }
}

/// The fence a beacon carries for `fence`'s token: one above it (beacons are ordered like
/// entries, so each is newer than every one before).
pub(crate) fn beacon_of(fence: Fence) -> Fence {
    fence.next()
}

/// A token node with recovery: what the shared mechanism needs of KRL's and the prioritized
/// algorithm's nodes. The mechanism (beacons, claims, regeneration, leases) is the provided
/// methods; each algorithm says how it holds, destroys and makes a token.
pub(crate) trait Recover: TokenNode {
    /// The node's id.
    fn node_id(&self) -> NodeId;
    /// Token ids (`k` for KRL, 1 for the prioritized token).
    fn lanes(&self) -> u32;
    /// Whether the node is in the critical section.
    fn status_now(&self) -> Status;
    /// Recovery's state, `None` without recovery.
    fn watch(&mut self) -> Option<&mut Watch>;
    /// The fence of the token of id `lane` held here.
    fn held(&mut self, lane: u32) -> Option<&mut Fence>;
    /// Destroy the token of `newer`'s id held here if its generation is below `newer`'s
    /// (reported); an entry made with it ends (F6). Whether one was destroyed.
    fn destroy_older(&mut self, newer: Fence) -> bool;
    /// A token held here was destroyed and no other takes its place: the node is no longer a
    /// sink of the requests routed to it, so it routes its queue on (F6).
    fn token_gone(&mut self);
    /// Hold a token just made again, beacon it (`beacon`), then use it as one that just
    /// arrived.
    fn adopt_regenerated(&mut self, token: Fence);
    /// A beacon for `fence`, the sender's height riding along.
    fn beacon_message(height: Sealed, fence: FenceCopies, hops: u16) -> Self::Message;
    /// A claim for `generation` of token `lane`.
    fn claim_message(height: Sealed, lane: u32, generation: u32) -> Self::Message;
    /// `voter`'s promise of `ballot` for token `lane` (majority mode), sealed with the
    /// sender's `height` under a check word that covers [`promise_word`].
    fn promise_message(height: Height, lane: u32, ballot: u32, voter: u32) -> Self::Message;
    /// Whether a claim (not a turnover) that won its majority may still make its token: a
    /// claimer without the token always may.
    fn may_make(&mut self, _lane: u32) -> bool {
        true
    }
    /// A holder's turnover claim for `generation` won its majority (majority mode, F9, F15):
    /// the algorithm makes it where the token is and the turnover is still due, now or when
    /// the token comes back with no grant since; never while the token is away. KRL makes no
    /// turnover.
    fn turnover_won(&mut self, _lane: u32, _generation: u32) {}
    /// A claim that is news here was heard and passed on (majority mode): a turnover this
    /// node would start meanwhile would only outbid it (F15). KRL makes no turnover.
    fn claim_heard(&mut self, _lane: u32) {}
    /// Whether a token held here may move to a new generation now (F10): always for KRL; for
    /// the prioritized token only with every unit free, since a RELEASE granted under an
    /// older generation is void at a newer one (F7).
    fn may_renumber(&self) -> bool {
        true
    }

    /// The outbox.
    fn out(&mut self) -> &mut Outbox<Self::Message> {
        self.links_mut().1
    }

    /// Arm (or re-arm) `timer` under a new arming number.
    fn set(&mut self, timer: Timer, after: u64) {
        let Some(arming) = self.watch().and_then(|w| w.arming(timer)) else {
            return;
        };
        *arming = arming.wrapping_add(1);
        let timer = timer.id(*arming);
        self.out().push(Action::SetTimer { timer, after });
    }

    /// Cancel `timer`: its current arming is told to the embedder, and a later expiry of it
    /// is stale.
    fn cancel(&mut self, timer: Timer) {
        let Some(arming) = self.watch().and_then(|w| w.arming(timer)) else {
            return;
        };
        let old = timer.id(*arming);
        *arming = arming.wrapping_add(1);
        self.out().push(Action::CancelTimer { timer: old });
    }

    /// Send `msg` to every neighbour of the table but `except`.
    fn flood(&mut self, msg: Self::Message, except: Option<NodeId>)
    where
        Self::Message: Clone,
    {
        let id = self.node_id();
        let (links, out) = self.links_mut();
        for n in links.neighbors.entries() {
            if Some(n.id()) != except && n.id() != id {
                out.send(n.id(), msg.clone());
            }
        }
    }

    /// The node's height, sealed, for a flooded message.
    fn sealed_height(&self) -> Sealed {
        self.links().height.into()
    }

    /// Start recovery's timers at the node's first accepted event: a silence timer per token
    /// id, and a beacon for every token held (a node cannot act before it is first called).
    fn arm(&mut self)
    where
        Self::Message: Clone,
    {
        let Some(watch) = self.watch().filter(|w| !w.armed) else {
            return;
        };
        watch.armed = true;
        let silence = watch.recovery.silence();
        for lane in 0..self.lanes() {
            self.set(Timer::Silent(lane), silence);
        }
        for lane in 0..self.lanes() {
            self.beacon(lane, None);
        }
    }

    /// Whether an arriving `token` may be kept: not if a newer generation of its id is known
    /// here (it is destroyed, and reported). A token held here of an older generation than
    /// the arriving one is destroyed instead.
    fn admit_generation(&mut self, token: Fence) -> bool {
        let Some(known) = self
            .watch()
            .and_then(|w| w.lanes.get(token.lane as usize))
            .map(Lane::generation)
        else {
            return true;
        };
        if token.generation() < known {
            self.out()
                .push(Action::Report(Report::TokenDestroyed { fence: token }));
            return false;
        }
        self.destroy_older(token);
        true
    }

    /// A token was kept here: it is the newest evidence of its id; beacon it if none went
    /// out within the window.
    fn heard_token(&mut self, token: Fence)
    where
        Self::Message: Clone,
    {
        if self.renumber(token.lane) || !self.evidence(token) {
            return;
        }
        let fresh = self
            .watch()
            .and_then(|w| w.lanes.get(token.lane as usize))
            .is_some_and(|l| l.fresh);
        if !fresh {
            self.beacon(token.lane, None);
        }
    }

    /// Take `fence` (a token's or a beacon's) as evidence that its token exists: it becomes
    /// the latest heard of, any claim is void, and the silence starts over. `false` if
    /// recovery is off or the evidence is older than what the node knows.
    fn evidence(&mut self, fence: Fence) -> bool {
        let Some(watch) = self.watch() else {
            return false;
        };
        let silence = watch.recovery.silence();
        let Some(lane) = watch.lanes.get_mut(fence.lane as usize) else {
            return false;
        };
        if fence.value < lane.latest {
            return false;
        }
        // A holder's turnover claim stands against its own generation's beacons (F9).
        let keep = lane.turnover && fence.generation() == lane.generation();
        lane.latest = fence.value;
        lane.may_claim = true;
        if !keep {
            lane.claim = None;
            lane.turnover = false;
            let claimed = core::mem::take(&mut lane.claiming);
            if claimed {
                self.cancel(Timer::Claim(fence.lane));
            }
        }
        self.set(Timer::Silent(fence.lane), silence);
        true
    }

    /// Flood a beacon for the token of id `lane` held here: raise its fence (so the beacon is
    /// newer than every one before), and open a beacon window.
    fn beacon(&mut self, lane: u32, except: Option<NodeId>)
    where
        Self::Message: Clone,
    {
        let Some(token) = self.held(lane) else {
            return;
        };
        *token = beacon_of(*token);
        let fence = *token;
        let Some(watch) = self.watch() else {
            return;
        };
        let every = watch.recovery.beacon_every;
        if let Some(l) = watch.lanes.get_mut(lane as usize) {
            l.fresh = true;
        }
        self.set(Timer::Fresh(lane), every);
        self.evidence(fence);
        let msg = Self::beacon_message(self.sealed_height(), fence.into(), 0);
        self.flood(msg, except);
    }

    /// A beacon from `from`: forward it if it is news, destroying an older generation here.
    fn on_beacon(&mut self, from: NodeId, fence: FenceCopies, hops: u16)
    where
        Self::Message: Clone,
    {
        let lanes = self.lanes();
        let Some(fence) = fence.read().filter(|f| f.lane < lanes) else {
            return self.out().anomaly(from, Anomaly::OutOfRange);
        };
        let Some(watch) = self.watch() else {
            // A beacon at a node without recovery: the network disagrees on its settings.
            return self.out().anomaly(from, Anomaly::Unexpected);
        };
        let every = watch.recovery.beacon_every;
        if fence.value <= watch.lanes[fence.lane as usize].latest {
            // An echo of a beacon already heard (or sent), or an older generation's.
            return self.out().anomaly(from, Anomaly::Stale);
        }
        if self.destroy_older(fence) {
            self.token_gone();
        }
        // A held token of this generation is never behind its own beacons: every beacon was
        // raised from the token's fence, and the token carries it on. A beacon above it is a
        // second copy's (a host restarted with its initial tokens: F14) or a forgery. Catch
        // up, so this node's next beacon is news again, and move this copy to a generation of
        // its own (F10's move, below), whose beacons destroy the other; a forgery costs a round.
        let copy = self.held(fence.lane).is_some_and(|mine| {
            let behind = mine.generation() == fence.generation() && mine.value < fence.value;
            mine.value = mine.value.max(fence.value);
            behind
        });
        self.evidence(fence);
        if let Some(l) = self
            .watch()
            .and_then(|w| w.lanes.get_mut(fence.lane as usize))
        {
            l.fresh = true;
        }
        self.set(Timer::Fresh(fence.lane), every);
        let msg = Self::beacon_message(self.sealed_height(), fence.into(), hops.saturating_add(1));
        self.flood(msg, Some(from));
        if copy {
            if let Some(l) = self
                .watch()
                .and_then(|w| w.lanes.get_mut(fence.lane as usize))
            {
                l.floor = l.floor.max(Some(fence.generation()));
            }
            self.renumber(fence.lane);
        }
    }

    /// A claim from `from` that token `lane` is lost.
    fn on_claim(&mut self, from: NodeId, lane: u32, generation: [u32; 3])
    where
        Self::Message: Clone,
    {
        let claim = crate::fence::majority(generation);
        let Some(watch) = self.watch() else {
            return self.out().anomaly(from, Anomaly::Unexpected);
        };
        let silence = watch.recovery.silence();
        let (Some(claim), Some(&known)) = (claim, watch.lanes.get(lane as usize)) else {
            return self.out().anomaly(from, Anomaly::OutOfRange);
        };
        let known_round = round(known.generation());
        if round(claim) <= known_round {
            // A claim for a generation this node knows already, or an older one.
            return self.out().anomaly(from, Anomaly::Stale);
        }
        // In majority mode a round promised anywhere is within reach: the claimer's own
        // promise (and every refusal) came first and told this node of it (F13).
        let reach = known_round.max(self.votes(lane).map_or(0, |v| v.spent));
        if round(claim).saturating_sub(reach) > ROUND_REACH {
            return self.out().anomaly(from, Anomaly::OutOfRange);
        }
        if self.held(lane).is_some() {
            // The token is here: answer with a beacon at once, which reaches the claimer
            // before its claim wait ends (F4), and do not pass the claim on. Once per claim:
            // a beacon makes the claim's copies still in flight new again where it clears the
            // claim heard, so answering every copy floods beacons without end (F4).
            let Some(l) = self.watch().and_then(|w| w.lanes.get_mut(lane as usize)) else {
                return;
            };
            if l.answered.is_some_and(|done| !beats(claim, done)) {
                return self.out().anomaly(from, Anomaly::Stale);
            }
            l.answered = Some(claim);
            return self.beacon(lane, None);
        }
        let rival = known
            .claim
            .filter(|&mine| known.claiming && mine != claim && round(mine) == round(claim));
        if rival.is_some() {
            // A split vote in this node's round: if it fails, it retries at once (F9).
            if let Some(v) = self.votes(lane) {
                v.contested = true;
            }
        }
        if known.claim.is_some_and(|best| !beats(claim, best)) {
            return self.out().anomaly(from, Anomaly::Stale);
        }
        let Some(l) = self.watch().and_then(|w| w.lanes.get_mut(lane as usize)) else {
            return;
        };
        l.claim = Some(claim);
        l.turnover = false;
        let yielded = core::mem::take(&mut l.claiming);
        if yielded {
            self.cancel(Timer::Claim(lane));
        }
        // Wait for the claimer's token; if it never comes, claim in turn.
        self.set(Timer::Silent(lane), silence);
        self.claim_heard(lane);
        // The promise (or refusal) first: it names its round under a check word, so the claim
        // that follows it over a link is within every receiver's reach (F13).
        self.promise(lane, claim);
        let msg = Self::claim_message(self.sealed_height(), lane, claim);
        self.flood(msg, Some(from));
    }

    /// Majority mode's state of token `lane`, `None` outside majority mode.
    fn votes(&mut self, lane: u32) -> Option<&mut Votes> {
        self.watch()
            .and_then(|w| w.quorum.as_mut())
            .and_then(|q| q.votes.get_mut(lane as usize))
    }

    /// In majority mode, promise `ballot` for token `lane` if this node may: it never promised
    /// a claim of that round or a later one, and it was not restarted without its promises.
    /// The promise is persisted ([`Action::Persist`]) before it is flooded (F9).
    fn promise(&mut self, lane: u32, ballot: u32)
    where
        Self::Message: Clone,
    {
        let id = self.node_id().0;
        let Some(quorum) = self.watch().and_then(|w| w.quorum.as_mut()) else {
            return;
        };
        if !quorum.may_promise {
            return;
        }
        let Some(v) = quorum.votes.get_mut(lane as usize) else {
            return;
        };
        // Exclusive per round: no second promise of a round, so two claims of one round never
        // both win a majority (any two majorities share a member).
        if round(ballot) <= round(v.promised) {
            if ballot == v.promised {
                return;
            }
            // A refusal: the promise that stands, again, so the claimer learns the round to
            // go above in one step rather than one round per silence (F13). Persisted already.
            let promised = v.promised;
            let msg = Self::promise_message(self.links().height, lane, promised, id);
            return self.flood(msg, None);
        }
        v.promised = ballot;
        v.spent = v.spent.max(round(ballot));
        v.tally(ballot, id);
        self.out().push(Action::Persist {
            promised: Promised::new(lane, ballot),
        });
        let msg = Self::promise_message(self.links().height, lane, ballot, id);
        self.flood(msg, None);
    }

    /// `voter`'s promise of `ballot` for token `lane`, from `from` (`intact`: its check word
    /// matches): count it and forward it, once.
    fn on_promise(&mut self, from: NodeId, lane: u32, ballot: [u32; 3], voter: u32, intact: bool)
    where
        Self::Message: Clone,
    {
        let id = self.node_id().0;
        let Some(watch) = self.watch() else {
            return self.out().anomaly(from, Anomaly::Unexpected);
        };
        let (Some(members), Some(known)) = (
            watch.quorum.as_ref().map(|q| q.members),
            watch.lanes.get(lane as usize).map(Lane::generation),
        ) else {
            // Outside majority mode a promise means the network disagrees on its settings.
            let kind = if watch.quorum.is_none() {
                Anomaly::Unexpected
            } else {
                Anomaly::OutOfRange
            };
            return self.out().anomaly(from, kind);
        };
        let Some(ballot) = crate::fence::majority(ballot).filter(|_| intact && voter < members)
        else {
            return self.out().anomaly(from, Anomaly::OutOfRange);
        };
        let (known, r) = (round(known), round(ballot));
        if r <= known || voter == id {
            // Its round's outcome is known here, or it is this node's own promise come back
            // (counted where it was made).
            return self.out().anomaly(from, Anomaly::Stale);
        }
        // The round is under the check word: however far ahead, a voter promised it, and no
        // claim of it or below can win at that voter (F13). No reach applies: a minority cut
        // off for P silences promised rounds up to about P, and the majority must get above
        // them in one step.
        let mine = self
            .watch()
            .and_then(|w| w.lanes.get(lane as usize))
            .and_then(|l| l.claim.filter(|_| l.claiming));
        let news = self.votes(lane).is_some_and(|v| {
            v.spent = v.spent.max(r);
            if mine.is_some_and(|c| c != ballot && r >= round(c)) {
                v.refused = true;
            }
            v.tally(ballot, voter)
        });
        if !news {
            return self.out().anomaly(from, Anomaly::Stale);
        }
        let msg = Self::promise_message(self.links().height, lane, ballot, voter);
        self.flood(msg, Some(from));
    }

    /// A recovery timer expired: the timer and what it is for, if it is the current arming
    /// (a re-armed, cancelled or already fired one is stale: `None`). The lease and the beacon,
    /// silence and claim timers are handled here; the rebuild is the algorithm's.
    fn recovery_timer(&mut self, timer: TimerId) -> Option<Timer>
    where
        Self::Message: Clone,
    {
        let (timer, arming) = Timer::of(timer, self.lanes())?;
        let current = self.watch().and_then(|w| w.arming(timer))?;
        if *current & 0x7fff_ffff != arming {
            return None;
        }
        *current = current.wrapping_add(1);
        match timer {
            Timer::Fresh(lane) => {
                if let Some(l) = self.watch().and_then(|w| w.lanes.get_mut(lane as usize)) {
                    l.fresh = false;
                }
                // A refusal waiting for the token to be free moves it now (and beacons it).
                if !self.renumber(lane) {
                    self.beacon(lane, None);
                }
            }
            Timer::Silent(lane) => self.on_silence(lane),
            Timer::Claim(lane) => self.on_claim_wait(lane),
            Timer::Lease => {
                let critical = self.status_now() == Status::Critical;
                if let Some(fence) = self.watch().and_then(|w| w.leased.take()) {
                    if critical {
                        self.out().push(Action::LeaseExpired { fence });
                    }
                }
            }
            Timer::Rebuild => {}
        }
        Some(timer)
    }

    /// Nothing was heard of token `lane` for the silence: claim it lost.
    fn on_silence(&mut self, lane: u32)
    where
        Self::Message: Clone,
    {
        let held = self.held(lane).is_some();
        let Some(watch) = self.watch() else {
            return;
        };
        let silence = watch.recovery.silence();
        if held {
            // Its own beacons keep a holder's silence from ending; a timer fired early.
            return self.set(Timer::Silent(lane), silence);
        }
        let Some(l) = watch.lanes.get_mut(lane as usize) else {
            return;
        };
        if !l.may_claim {
            // Restarted and never heard of it: a generation this node made before it crashed
            // may live on; wait to hear of the token id (or of a claim's outcome) first.
            return self.set(Timer::Silent(lane), silence);
        }
        self.set(Timer::Silent(lane), silence);
        self.start_claim(lane, false);
    }

    /// Claim token `lane` for the next round (a holder's `turnover`, or a claim that it is
    /// lost), and in majority mode promise the claim (F9).
    fn start_claim(&mut self, lane: u32, turnover: bool)
    where
        Self::Message: Clone,
    {
        let id = self.node_id();
        let Some(watch) = self.watch() else {
            return;
        };
        let wait = watch.recovery.claim_wait();
        // Above every round this node promised or heard promised (majority mode): a claim
        // below one would be refused there (F13).
        let spent = watch
            .quorum
            .as_ref()
            .and_then(|q| q.votes.get(lane as usize))
            .map_or(0, |v| v.spent);
        let Some(l) = watch.lanes.get_mut(lane as usize) else {
            return;
        };
        let Some(claim) = l.next_generation(id, spent) else {
            // Every round is used up: nothing can be made again (2^16 failed claims).
            return;
        };
        l.claim = Some(claim);
        l.claiming = true;
        l.turnover = turnover;
        if let Some(v) = self.votes(lane) {
            v.contested = false;
            v.refused = false;
        }
        self.set(Timer::Claim(lane), wait);
        // The claimer's promise first: it tells every node of the round before the claim
        // arrives, so the claim is within reach everywhere (F13).
        self.promise(lane, claim);
        let msg = Self::claim_message(self.sealed_height(), lane, claim);
        self.flood(msg, None);
    }

    /// The node's claim for token `lane` was not beaten within the claim wait: make the token
    /// again, in the claimed generation.
    fn on_claim_wait(&mut self, lane: u32)
    where
        Self::Message: Clone,
    {
        let Some(l) = self
            .watch()
            .and_then(|w| w.lanes.get_mut(lane as usize))
            .filter(|l| l.claiming)
        else {
            return;
        };
        l.claiming = false;
        let turnover = core::mem::take(&mut l.turnover);
        let Some(generation) = l.claim else {
            return;
        };
        if let Some(quorum) = self.watch().and_then(|w| w.quorum.as_ref()) {
            let won = quorum
                .votes
                .get(lane as usize)
                .is_some_and(|v| v.count(generation) > quorum.members / 2);
            let split = quorum
                .votes
                .get(lane as usize)
                .is_some_and(|v| v.contested || v.refused);
            if !won {
                // No majority for this round: the claim stays the best heard here, so the next
                // goes a round above it; at once after a split vote or a refusal (the next
                // claim goes above the round the refusal named: F13), else after the silence
                // (a part without a majority does not burn a round per claim wait; a
                // holder's turnover is retried by its rebuild timer).
                if split {
                    self.start_claim(lane, turnover);
                }
                return;
            }
            if turnover {
                // Made only where the token is: now, or when it comes back with no grant
                // since (F15).
                return self.turnover_won(lane, generation);
            }
            if !self.may_make(lane) {
                return;
            }
        }
        self.make(lane, generation);
    }

    /// Make token `lane` again in `generation` (a claim's, which won), report it and hold it.
    fn make(&mut self, lane: u32, generation: u32) {
        let Some(l) = self.watch().and_then(|w| w.lanes.get_mut(lane as usize)) else {
            return;
        };
        l.claim = None;
        l.turnover = false;
        let token = Fence::first_of(lane, generation);
        l.latest = token.value;
        self.out()
            .push(Action::Report(Report::TokenRegenerated { fence: token }));
        self.adopt_regenerated(token);
    }

    /// The protected resource refused `fence`, having admitted `newest` ([`Event::Refused`]):
    /// remember `newest`'s generation, and move the token held here above it (F10). A misuse
    /// is an error and changes nothing.
    ///
    /// [`Event::Refused`]: crate::Event::Refused
    fn on_refused(&mut self, fence: Fence, newest: Fence) -> Result<(), Error>
    where
        Self::Message: Clone,
    {
        let lanes = self.lanes();
        let Some(watch) = self.watch() else {
            return Err(Error::WrongMode {
                event: "Refused",
                mode: "without recovery (no fence has a generation)",
            });
        };
        let lane = fence.lane;
        if newest.lane != lane {
            return Err(Error::InvalidRefusal(
                "the two fences are of different units",
            ));
        }
        if lane >= lanes {
            return Err(Error::InvalidRefusal("the unit is outside the system"));
        }
        // `newest == fence` is what `Fences::admit` reports for a fence admitted already: a
        // second copy of the generation issued it (F14), and the generation moves on as for
        // any refusal.
        if newest.value < fence.value {
            return Err(Error::InvalidRefusal(
                "newest is earlier than the refused fence",
            ));
        }
        let l = &mut watch.lanes[lane as usize];
        l.floor = l.floor.max(Some(newest.generation()));
        self.renumber(lane);
        Ok(())
    }

    /// Move the token of id `lane` held here to a generation above the floor a refusal set,
    /// if it is at or below it and the algorithm allows it now (F10): one round above every
    /// round heard of, made by this node, so no other node makes it. Reported as a new
    /// generation and beaconed; whether it moved.
    fn renumber(&mut self, lane: u32) -> bool
    where
        Self::Message: Clone,
    {
        let (id, ready) = (self.node_id(), self.may_renumber());
        let Some(current) = self.held(lane).map(|t| t.generation()) else {
            return false;
        };
        let Some(l) = self.watch().and_then(|w| w.lanes.get_mut(lane as usize)) else {
            return false;
        };
        let Some(floor) = l.floor.filter(|&floor| ready && current <= floor) else {
            return false;
        };
        let Some(next) = l.next_generation(id, round(floor)) else {
            // Every round is used up (2^16 of them): the token stays refused.
            return false;
        };
        let token = Fence::first_of(lane, next);
        l.latest = token.value;
        if let Some(held) = self.held(lane) {
            *held = token;
        }
        self.out()
            .push(Action::Report(Report::TokenRenumbered { fence: token }));
        self.beacon(lane, None);
        true
    }

    /// The node entered with `fence`: its lease starts.
    fn start_lease(&mut self, fence: Fence) {
        let Some(watch) = self.watch() else {
            return;
        };
        watch.leased = Some(fence);
        let lease = watch.recovery.lease;
        self.set(Timer::Lease, lease);
    }

    /// The node left the critical section: its lease, if it still runs, is over.
    fn end_lease(&mut self) {
        let Some(watch) = self.watch() else {
            return;
        };
        watch.revoked = false;
        if watch.leased.take().is_some() {
            self.cancel(Timer::Lease);
        }
    }

    /// The entry's token was destroyed under it: tell the application to stop now.
    fn revoke(&mut self) {
        let Some(watch) = self.watch() else {
            return;
        };
        watch.revoked = true;
        if let Some(fence) = watch.leased.take() {
            self.cancel(Timer::Lease);
            self.out().push(Action::LeaseExpired { fence });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_round_trip_and_foreign_ids_are_none() {
        for t in [
            Timer::Fresh(0),
            Timer::Silent(3),
            Timer::Claim(2),
            Timer::Lease,
        ] {
            assert_eq!(Timer::of(t.id(0), 4), Some((t, 0)));
            assert_eq!(Timer::of(t.id(0x7fff_ffff), 4), Some((t, 0x7fff_ffff)));
        }
        assert_eq!(Timer::of(Timer::Fresh(4).id(1), 4), None, "id beyond k");
        assert_eq!(Timer::of(TimerId(0), 4), None, "the idle pause");
        assert_eq!(
            Timer::of(Timer::Rebuild.id(5), 4),
            Some((Timer::Rebuild, 5))
        );
        assert_eq!(Timer::of(TimerId(BASE | (2 << 2) | 3), 4), None);
    }

    #[test]
    fn claims_order_by_round_then_smaller_id() {
        let (a, b) = (generation(3, NodeId(7)), generation(3, NodeId(2)));
        assert!(beats(b, a) && !beats(a, b) && !beats(a, a));
        assert!(beats(generation(4, NodeId(9)), b));
        let lane = Lane {
            latest: u64::from(generation(3, NodeId(7))) << 32,
            claim: Some(generation(5, NodeId(1))),
            ..Lane::default()
        };
        assert_eq!(lane.next_claim(NodeId(4)), Some(generation(6, NodeId(4))));
    }

    #[test]
    fn votes_count_each_voter_once_for_the_best_ballot_only() {
        let mut v = Votes {
            promised: 0,
            ballot: 0,
            voters: alloc::vec![0; 2],
            contested: false,
            spent: 0,
            refused: false,
        };
        let (a, b) = (generation(2, NodeId(5)), generation(2, NodeId(3)));
        assert!(v.tally(a, 70) && v.tally(a, 1) && !v.tally(a, 70));
        assert_eq!(v.count(a), 2);
        assert!(v.tally(b, 2), "a better ballot of the round takes over");
        assert_eq!((v.count(a), v.count(b)), (0, 1));
        assert!(!v.tally(a, 4), "a worse ballot can no longer win");
        assert!(!v.tally(b, 128), "a voter beyond the membership");
        let w = Watch::new(
            Recovery::new(1, 1, 1, 1).with_majority(3),
            2,
            true,
            None,
            Some(&[Promised::new(1, a)]),
        );
        let q = w.quorum.expect("majority mode");
        assert!(q.may_promise);
        assert_eq!((q.votes[0].promised, q.votes[1].promised), (0, a));
        let forgot = Watch::new(
            Recovery::new(1, 1, 1, 1).with_majority(3),
            2,
            true,
            None,
            None,
        );
        assert!(!forgot.quorum.expect("majority mode").may_promise);
        assert!(Recovery::new(1, 1, 1, 1)
            .with_majority(0)
            .validate()
            .is_err());
        assert!(Recovery::new(1, 1, 1, 1)
            .with_majority(65_537)
            .validate()
            .is_err());
    }

    #[test]
    fn bounds_cover_drift_and_leases() {
        let r = Recovery::new(100, 50, 10, 4).with_drift_ppm(0);
        assert_eq!(r.silence(), 100 + 10 * 13 + 50);
        assert_eq!(r.claim_wait(), 80);
        let drifting = Recovery::new(100, 50, 10, 4).with_drift_ppm(100_000);
        // 100 and 50 local units last up to 111.2 and 55.6 real;
        // (112 + 130 + 56) · 1.1 = 327.8.
        assert_eq!(drifting.silence(), 328);
        assert_eq!(drifting.claim_wait(), 88);
        assert!(Recovery::new(0, 1, 1, 1).validate().is_err());
        assert!(Recovery::new(1, 1, 1, 0).validate().is_err());
        assert!(r.with_drift_ppm(100_001).validate().is_err());
    }
}
