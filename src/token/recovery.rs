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

use crate::{Fence, NodeId, TimerId};

/// Token recovery settings: every node of a network must agree on them. Times are in
/// [the embedder's time unit](crate#timers).
///
/// The guarantee they buy, and its assumptions (the crate's
/// [failure model](crate#failure-model)): with every clock drifting at most `drift_ppm`, every
/// message over a link that stays up delivered within `hop_bound` (over a
/// [session](crate::session), its liveness timeout bounds it: a message not delivered by then
/// never is), and every connected part of the network at most `diameter` hops across, a token
/// is regenerated only when no copy of it exists in the part, and by one node of the part.
/// Two parts that cannot reach each other may each regenerate it; a merge destroys the older.
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
    /// floods across the part on any clock (F4).
    pub fn claim_wait(&self) -> u64 {
        let floods = self
            .hop_bound
            .saturating_mul(u64::from(self.diameter))
            .saturating_mul(2);
        self.fastest(floods)
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

/// How far ahead of the round a node knows a claim's round may be: beyond it the claim is
/// impossible (every failed claim raises the round by one) and is dropped as out of range, so
/// no forged claim exhausts the rounds.
pub(crate) const ROUND_REACH: u16 = 64;

/// Whether claim `a` beats claim `b`: a later round, or the same round and a smaller id.
pub(crate) fn beats(a: u32, b: u32) -> bool {
    let (ra, rb) = (round(a), round(b));
    ra > rb || (ra == rb && (a & 0xffff) < (b & 0xffff))
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
    /// The arming number of each timer of the id (fresh, silent, claim): only the expiry of
    /// the current arming counts.
    pub(crate) armings: [u32; 3],
}

impl Lane {
    /// The generation the node knows of.
    pub(crate) fn generation(&self) -> u32 {
        (self.latest >> 32) as u32
    }

    /// The generation the node would claim next: one round above everything it has heard of.
    pub(crate) fn next_claim(&self, id: NodeId) -> Option<u32> {
        let heard = round(self.generation()).max(self.claim.map_or(0, round));
        heard.checked_add(1).map(|r| generation(r, id))
    }
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
    /// The arming number of the lease timer.
    pub(crate) lease_arming: u32,
    /// The token of the current entry was destroyed (a newer generation arrived): the node
    /// stays in the critical section until `Release`, holding no token for it.
    pub(crate) revoked: bool,
}

impl Watch {
    pub(crate) fn new(recovery: Recovery, k: u32) -> Self {
        Watch {
            recovery,
            lanes: alloc::vec![Lane::default(); k as usize],
            armed: false,
            leased: None,
            lease_arming: 0,
            revoked: false,
        }
    }

    /// The arming number of `timer` (`None` for a token id beyond `k`).
    pub(crate) fn arming(&mut self, timer: Timer) -> Option<&mut u32> {
        match timer {
            Timer::Lease => Some(&mut self.lease_arming),
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
        assert_eq!(Timer::of(TimerId(BASE | (1 << 2) | 3), 4), None);
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
