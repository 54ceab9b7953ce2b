//! Fencing tokens: a number with every entry into the critical section that a protected
//! resource can check, so that a node that lost its grant (paused, partitioned, slow) cannot
//! act on the resource after a later holder did.
//!
//! Every [`Action::EnterCritical`](crate::Action::EnterCritical) carries a [`Fence`]. What a
//! protected resource checks depends on whether holders of one lane can overlap
//! (`docs/ALGORITHMS.md`, F1):
//! - KRL/KRLF: the lane is the id of the token the entry uses (`0..k`); each token carries its
//!   own counter, which every entry with it raises, so per lane the values strictly increase
//!   and one holder at a time uses a lane. The resource refuses any fence whose value is not
//!   above the highest it accepted in the lane ([`Fences::new`], [`Mode::Highest`]).
//! - Look-ahead and Ricart–Agrawala: lane 0; a critical section's value is above the value of
//!   every critical section that ended before it began: [`Mode::Highest`] as well.
//! - Prioritized: lane 0; the token carries a grant counter raised at every grant, and every
//!   grant happens at the token, in order. With `k = 1` (or requests of all `k` resources)
//!   one holder at a time: [`Mode::Highest`]. With h-out-of-k holders that overlap (`k > 1`,
//!   requests of fewer than `k`), the token issues their fences in grant order but the
//!   holders reach the resource in any order, so "above the highest" would refuse a
//!   legitimate earlier grant that arrives after a later one: the resource must instead
//!   refuse any fence it has seen before, each fence new, not highest-so-far
//!   ([`Fences::distinct`], [`Mode::Distinct`]).
//!
//! A fence that travels in a message is sent in three copies ([`FenceCopies`]) and read by
//! majority, so one corrupted field (the crate's threat model) never changes it.

use alloc::collections::BTreeMap;

/// A fencing token: the `lane` it is ordered in and its `value` there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Fence {
    /// The order the value belongs to: the token id for KRL, 0 for the other algorithms.
    pub lane: u32,
    /// Strictly increasing within the lane, entry after entry.
    pub value: u64,
}

impl Fence {
    /// The fence `value` in `lane`.
    pub const fn new(lane: u32, value: u64) -> Self {
        Fence { lane, value }
    }

    /// The first fence of `generation` in `lane`: the value's high 32 bits are the generation,
    /// the low 32 bits count within it (from 0, before any entry). Every fence of a generation
    /// is above every fence of the generations below it, so a resource that has admitted a
    /// grant of a token made again after a loss refuses the older token's (F2).
    pub const fn first_of(lane: u32, generation: u32) -> Self {
        Fence {
            lane,
            value: (generation as u64) << 32,
        }
    }

    /// The generation of the token that issued this fence (the value's high 32 bits; 0 for a
    /// token that was never made again, and for the permission algorithms' fences below
    /// 2^32).
    pub const fn generation(self) -> u32 {
        (self.value >> 32) as u32
    }

    /// The count within the generation (the value's low 32 bits).
    pub const fn count(self) -> u32 {
        self.value as u32
    }

    /// The next fence of the lane and generation. It saturates at the generation's last count
    /// rather than spill into the next generation (2^32 entries and beacons per generation).
    pub(crate) const fn next(self) -> Self {
        if self.count() == u32::MAX {
            self
        } else {
            Fence {
                lane: self.lane,
                value: self.value + 1,
            }
        }
    }
}

/// A fence as a message carries it: three copies, read by majority ([`FenceCopies::read`]).
/// A corrupted field changes one copy, which the other two outvote; no receiver could tell a
/// wrong fence from a right one, and acting on one could let a fence go backwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FenceCopies(pub [Fence; 3]);

impl FenceCopies {
    /// Three copies of `fence`.
    pub const fn new(fence: Fence) -> Self {
        FenceCopies([fence; 3])
    }

    /// The fence at least two copies agree on; `None` if no two agree, which one corrupted
    /// field cannot cause: the message is forged (reported as a suspect anomaly).
    pub fn read(self) -> Option<Fence> {
        majority(self.0)
    }

    /// The value of [`FenceCopies::read`] if it is a fence of `lane` (the single-lane
    /// algorithms' messages all carry lane 0).
    pub(crate) fn read_in(self, lane: u32) -> Option<u64> {
        self.read().filter(|f| f.lane == lane).map(|f| f.value)
    }
}

impl From<Fence> for FenceCopies {
    fn from(fence: Fence) -> Self {
        FenceCopies::new(fence)
    }
}

/// The value at least two of three copies agree on (`None` if no two agree): how every field
/// sent in three copies is read (fences, prioritized resource counts).
pub(crate) fn majority<T: PartialEq + Copy>([a, b, c]: [T; 3]) -> Option<T> {
    if a == b || a == c {
        Some(a)
    } else if b == c {
        Some(b)
    } else {
        None
    }
}

/// How a [`Fences`] decides which fences to admit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Mode {
    /// Admit a fence only if its value is above every value admitted in its lane: for the
    /// algorithms with one holder at a time per lane (KRL/KRLF per token, look-ahead,
    /// Ricart–Agrawala, prioritized with `k = 1` and requests of all `k`), whose holders
    /// reach the resource in the order they were granted. The default.
    #[default]
    Highest,
    /// Admit a fence only if its value was never admitted before in its lane, whatever its
    /// place: for prioritized h-out-of-k with concurrent holders (`k > 1` and requests of
    /// fewer than `k` resources). The token issues the fences in grant order, but the
    /// holders it granted concurrently reach the resource in any order (one is slower, or
    /// its datagram is later), so the later grant may come first: [`Mode::Highest`] would
    /// then refuse the earlier, legitimate one.
    ///
    /// Memory is bounded: per lane, the highest value admitted and which of the
    /// [`DISTINCT_WINDOW`] values below it were admitted (a bitmap). A value that far or
    /// further below the highest is refused: it may have been admitted, and is too old to
    /// tell (a holder that reaches the resource after that many later grants did). A
    /// regenerated token's fences (a higher generation, F2) move the window above every
    /// older generation's fence, which are then refused, as in [`Mode::Highest`].
    Distinct,
}

/// How many values below the highest admitted one a [`Mode::Distinct`] lane remembers.
pub const DISTINCT_WINDOW: u64 = 128;

/// One lane of a [`Fences`]: the highest value admitted and, in [`Mode::Distinct`], which
/// of the [`DISTINCT_WINDOW`] values at and below it were (bit `i`: `highest - i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lane {
    highest: u64,
    seen: u128,
}

/// What a protected resource keeps per lane to check the fences it is handed: the highest
/// value accepted ([`Mode::Highest`], [`Fences::new`]), and in [`Mode::Distinct`]
/// ([`Fences::distinct`], for prioritized h-out-of-k) a window of the values below it. The
/// crate's drivers and simulators keep one and check every entry against it. Needs `alloc`
/// (one map entry per lane), no `std`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fences {
    mode: Mode,
    lanes: BTreeMap<u32, Lane>,
}

impl Fences {
    /// No fence accepted yet; [`Mode::Highest`].
    pub fn new() -> Self {
        Fences::default()
    }

    /// No fence accepted yet; [`Mode::Distinct`]: each fence admitted once, in any order
    /// (prioritized h-out-of-k).
    pub fn distinct() -> Self {
        Fences::with_mode(Mode::Distinct)
    }

    /// No fence accepted yet, in `mode`.
    pub fn with_mode(mode: Mode) -> Self {
        Fences {
            mode,
            lanes: BTreeMap::new(),
        }
    }

    /// The mode the fences are checked in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Accept `fence` or refuse it with the highest value accepted in its lane, changing
    /// nothing. [`Mode::Highest`]: accepted if its value is above every value accepted in
    /// its lane. [`Mode::Distinct`]: accepted if its value was never accepted in its lane
    /// and is less than [`DISTINCT_WINDOW`] below the highest accepted there.
    pub fn admit(&mut self, fence: Fence) -> Result<(), u64> {
        let Some(lane) = self.lanes.get_mut(&fence.lane) else {
            self.lanes.insert(
                fence.lane,
                Lane {
                    highest: fence.value,
                    seen: 1,
                },
            );
            return Ok(());
        };
        let value = fence.value;
        if value > lane.highest {
            let up = value - lane.highest;
            lane.seen = match up < DISTINCT_WINDOW {
                true => (lane.seen << up) | 1,
                false => 1,
            };
            lane.highest = value;
            return Ok(());
        }
        let below = lane.highest - value;
        match self.mode {
            Mode::Distinct if below < DISTINCT_WINDOW && lane.seen & (1 << below) == 0 => {
                lane.seen |= 1 << below;
                Ok(())
            }
            _ => Err(lane.highest),
        }
    }

    /// The highest value accepted in `lane`.
    pub fn highest(&self, lane: u32) -> Option<u64> {
        self.lanes.get(&lane).map(|l| l.highest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_one_corrupted_copy_is_outvoted() {
        let fence = Fence::new(3, 41);
        for i in 0..3 {
            for wrong in [
                Fence::new(3, 40),
                Fence::new(3, u64::MAX),
                Fence::new(0, 41),
            ] {
                let mut copies = FenceCopies::new(fence);
                copies.0[i] = wrong;
                assert_eq!(copies.read(), Some(fence), "copy {i} = {wrong:?}");
            }
        }
    }

    #[test]
    fn copies_that_all_disagree_read_as_nothing() {
        let copies = FenceCopies([Fence::new(0, 1), Fence::new(0, 2), Fence::new(1, 1)]);
        assert_eq!(copies.read(), None);
        let two_agree = FenceCopies([Fence::new(0, 1), Fence::new(0, 2), Fence::new(0, 2)]);
        assert_eq!(two_agree.read(), Some(Fence::new(0, 2)));
        assert_eq!(two_agree.read_in(0), Some(2));
        assert_eq!(two_agree.read_in(1), None, "another lane");
    }

    #[test]
    fn a_resource_refuses_a_fence_not_above_its_lane() {
        let mut fences = Fences::new();
        assert_eq!(fences.admit(Fence::new(0, 1)), Ok(()));
        assert_eq!(fences.admit(Fence::new(1, 1)), Ok(()), "lanes are apart");
        assert_eq!(fences.admit(Fence::new(0, 1)), Err(1));
        assert_eq!(fences.admit(Fence::new(0, 0)), Err(1));
        assert_eq!(fences.admit(Fence::new(0, 5)), Ok(()));
        assert_eq!(fences.highest(0), Some(5));
        assert_eq!(Fence::new(2, u64::MAX).next(), Fence::new(2, u64::MAX));
        let last_of_0 = Fence::new(2, u64::from(u32::MAX));
        assert_eq!(
            last_of_0.next(),
            last_of_0,
            "a count never spills into a generation"
        );
        let g = Fence::first_of(2, 7);
        assert_eq!((g.generation(), g.count()), (7, 0));
        assert_eq!(g.next().count(), 1);
        assert!(
            last_of_0 < g,
            "every fence of a generation is above the ones before"
        );
    }

    #[test]
    fn distinct_admits_out_of_grant_order_and_refuses_a_repeat() {
        let mut fences = Fences::distinct();
        assert_eq!(fences.mode(), Mode::Distinct);
        // Grants 1, 2, 3 issued in that order; their holders arrive 3, 1, 2.
        assert_eq!(fences.admit(Fence::new(0, 3)), Ok(()));
        assert_eq!(
            fences.admit(Fence::new(0, 1)),
            Ok(()),
            "earlier grant, later"
        );
        assert_eq!(fences.admit(Fence::new(0, 2)), Ok(()));
        assert_eq!(
            fences.admit(Fence::new(0, 2)),
            Err(3),
            "a repeat is refused"
        );
        assert_eq!(
            fences.admit(Fence::new(0, 3)),
            Err(3),
            "so is the highest again"
        );
        assert_eq!(fences.admit(Fence::new(1, 2)), Ok(()), "lanes are apart");
        assert_eq!(fences.highest(0), Some(3));
        // The same arrivals in Highest mode refuse the two earlier grants.
        let mut highest = Fences::new();
        assert_eq!(highest.mode(), Mode::Highest);
        assert_eq!(highest.admit(Fence::new(0, 3)), Ok(()));
        assert_eq!(highest.admit(Fence::new(0, 1)), Err(3));
        assert_eq!(highest.admit(Fence::new(0, 2)), Err(3));
    }

    #[test]
    fn distinct_remembers_a_window_below_the_highest() {
        let mut fences = Fences::distinct();
        assert_eq!(fences.admit(Fence::new(0, 1000)), Ok(()));
        let oldest = 1000 - (DISTINCT_WINDOW - 1);
        assert_eq!(fences.admit(Fence::new(0, oldest)), Ok(()), "in the window");
        assert_eq!(fences.admit(Fence::new(0, oldest)), Err(1000));
        assert_eq!(
            fences.admit(Fence::new(0, oldest - 1)),
            Err(1000),
            "below the window: too old to tell"
        );
        // A step up keeps what the window still covers.
        assert_eq!(fences.admit(Fence::new(0, 1010)), Ok(()));
        assert_eq!(
            fences.admit(Fence::new(0, 1000)),
            Err(1010),
            "still remembered"
        );
        assert_eq!(fences.admit(Fence::new(0, 1005)), Ok(()));
        assert_eq!(
            fences.admit(Fence::new(0, oldest)),
            Err(1010),
            "slid out of the window"
        );
        // A jump past the window (a regenerated token's generation) forgets everything
        // below it: the older generation is refused.
        let next_generation = Fence::first_of(0, 1);
        assert_eq!(fences.admit(next_generation), Ok(()));
        assert_eq!(
            fences.admit(Fence::new(0, 1009)),
            Err(next_generation.value)
        );
        assert_eq!(fences.admit(next_generation.next()), Ok(()));
        assert_eq!(
            fences.admit(next_generation),
            Err(next_generation.value + 1)
        );
        assert_eq!(fences.admit(Fence::new(0, u64::MAX)), Ok(()));
        assert_eq!(fences.admit(Fence::new(0, u64::MAX)), Err(u64::MAX));
        assert_eq!(fences.admit(Fence::new(0, 0)), Err(u64::MAX));
    }
}
