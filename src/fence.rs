//! Fencing tokens: a number with every entry into the critical section that a protected
//! resource can check, so that a node that lost its grant (paused, partitioned, slow) cannot
//! act on the resource after a later holder did.
//!
//! Every [`Action::EnterCritical`](crate::Action::EnterCritical) carries a [`Fence`]. A
//! protected resource keeps the highest `value` it has accepted per `lane` and refuses any
//! fence whose `value` is not above it ([`Fences`] does exactly that). What the algorithms
//! guarantee (`docs/ALGORITHMS.md`, F1):
//! - KRL/KRLF: the lane is the id of the token the entry uses (`0..k`); each token carries its
//!   own counter, which every entry with it raises, so per lane the values strictly increase.
//! - Prioritized: lane 0; the token carries a grant counter raised at every grant, and every
//!   grant happens at the token, in order.
//! - Look-ahead and Ricart–Agrawala: lane 0; a critical section's value is above the value of
//!   every critical section that ended before it began.
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

/// What a protected resource keeps: the highest fence value accepted per lane. The crate's
/// drivers and simulators keep one and check every entry against it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fences {
    highest: BTreeMap<u32, u64>,
}

impl Fences {
    /// No fence accepted yet.
    pub fn new() -> Self {
        Fences::default()
    }

    /// Accept `fence` if its value is above every value accepted in its lane; otherwise
    /// refuse it with the highest value accepted there, and change nothing.
    pub fn admit(&mut self, fence: Fence) -> Result<(), u64> {
        match self.highest.get(&fence.lane) {
            Some(&highest) if fence.value <= highest => Err(highest),
            _ => {
                self.highest.insert(fence.lane, fence.value);
                Ok(())
            }
        }
    }

    /// The highest value accepted in `lane`.
    pub fn highest(&self, lane: u32) -> Option<u64> {
        self.highest.get(&lane).copied()
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
}
