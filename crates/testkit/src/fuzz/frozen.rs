//! The frozen fuzz input layouts of the schedule steps that corrupt ([`TokenFault`],
//! [`PermissionOp`]), in one place.
//!
//! Committed reproducers (`fuzz/regressions/`) and corpora decode through these layouts, so
//! they never change: each step decodes from exactly the bytes, and into exactly the variants,
//! of the derived layout it had before kind changes and flips existed (`TokenFaultLayout`,
//! `PermissionOpLayout` below). How a `Corrupt` step corrupts ([`How`]) comes from the bits of
//! the variant choice that the layout leaves free: `arbitrary`'s derive chooses the variant
//! from the top bits of a `u32` (`(x * variants) >> 32`), so with a power of two variants the
//! low bits are free ([`How::from_bits`]: half field corruptions, a quarter kind changes, a
//! quarter flips). [`Frozen::recorded`] reads a step as inputs recorded before then meant it:
//! every corruption a field corruption.
//!
//! The failure faults of issue 23 ([`TokenFault::Crash`] and the rest) come the same way, from
//! bits no layout reads: an input selects recovery by the byte after its schedule
//! (`token_network`'s `Recovering::from_byte`), and in such an input three more free bits of a
//! non-corrupting fault's variant choice say which failure it stands for ([`Selectable`],
//! [`select`]). Every step still decodes from exactly the bytes, and into exactly the
//! variants, of its layout; the input keeps the selector bits beside its faults, so that
//! inputs recorded before issue 23 (whose byte after the schedule is whatever followed) also
//! replay exactly as they were recorded, without recovery (`run_without_recovery`).

use arbitrary::{Arbitrary, MaxRecursionReached, Result, Unstructured};

use super::token_network::Recovering;
use crate::corrupt::{How, Value};
use crate::schedule::{CorruptStep, PermissionOp, TimedFault, TokenFault};

/// A schedule step decoded through a frozen layout.
pub(crate) trait Frozen: Sized {
    /// The layout: the step's derive as it was before kind changes and flips existed.
    type Layout: for<'a> Arbitrary<'a>;
    /// The layout's number of variants: a power of two, so that the variant choice leaves
    /// free bits.
    const VARIANTS: u32;

    /// The step a decoded layout stands for, corrupting as `how` says.
    fn thaw(layout: Self::Layout, how: How) -> Self;

    /// The step's corruption, if it corrupts.
    fn corrupt_step(&mut self) -> Option<&mut CorruptStep>;

    /// The step as inputs recorded before kind changes and flips existed meant it: every
    /// corruption a field corruption.
    fn recorded(mut self) -> Self {
        if let Some(step) = self.corrupt_step() {
            step.how = How::Field;
        }
        self
    }
}

/// The bytes of a `Corrupt` variant in the frozen layouts: its fields before `how` existed.
#[derive(Arbitrary)]
pub(crate) struct CorruptLayout {
    msg: u8,
    field: u8,
    value: Value,
}

impl CorruptLayout {
    fn thaw(self, how: How) -> CorruptStep {
        let CorruptLayout { msg, field, value } = self;
        CorruptStep {
            msg,
            field,
            value,
            how,
        }
    }
}

/// The frozen fuzz input layout of [`TokenFault`]. Never change it.
#[derive(Arbitrary)]
pub(crate) enum TokenFaultLayout {
    Corrupt(CorruptLayout),
    FormAt(u8, bool),
    FailAt(u8, bool),
    Notice(u8),
}

impl Frozen for TokenFault {
    type Layout = TokenFaultLayout;
    const VARIANTS: u32 = 4;

    fn thaw(layout: TokenFaultLayout, how: How) -> Self {
        match layout {
            TokenFaultLayout::Corrupt(c) => TokenFault::Corrupt(c.thaw(how)),
            TokenFaultLayout::FormAt(x, lower) => TokenFault::FormAt(x, lower),
            TokenFaultLayout::FailAt(x, lower) => TokenFault::FailAt(x, lower),
            TokenFaultLayout::Notice(x) => TokenFault::Notice(x),
        }
    }

    fn corrupt_step(&mut self) -> Option<&mut CorruptStep> {
        match self {
            TokenFault::Corrupt(step) => Some(step),
            _ => None,
        }
    }
}

/// The frozen fuzz input layout of [`PermissionOp`]. Never change it.
#[derive(Arbitrary)]
pub(crate) enum PermissionOpLayout {
    Request(u8),
    Release(u8),
    Deliver(u8),
    Lose(u8),
    Duplicate(u8),
    Fire(u8),
    Mode(u8, u8),
    Corrupt(CorruptLayout),
}

impl Frozen for PermissionOp {
    type Layout = PermissionOpLayout;
    const VARIANTS: u32 = 8;

    fn thaw(layout: PermissionOpLayout, how: How) -> Self {
        match layout {
            PermissionOpLayout::Request(x) => PermissionOp::Request(x),
            PermissionOpLayout::Release(x) => PermissionOp::Release(x),
            PermissionOpLayout::Deliver(x) => PermissionOp::Deliver(x),
            PermissionOpLayout::Lose(x) => PermissionOp::Lose(x),
            PermissionOpLayout::Duplicate(x) => PermissionOp::Duplicate(x),
            PermissionOpLayout::Fire(x) => PermissionOp::Fire(x),
            PermissionOpLayout::Mode(x, m) => PermissionOp::Mode(x, m),
            PermissionOpLayout::Corrupt(c) => PermissionOp::Corrupt(c.thaw(how)),
        }
    }

    fn corrupt_step(&mut self) -> Option<&mut CorruptStep> {
        match self {
            PermissionOp::Corrupt(step) => Some(step),
            _ => None,
        }
    }
}

/// Decode a `T` through its frozen layout: `how` from the free bits of the variant choice
/// (peeked), then the layout as derived.
fn decode<'a, T: Frozen>(u: &mut Unstructured<'a>) -> Result<T> {
    debug_assert!(T::VARIANTS.is_power_of_two());
    let how = How::from_bits(peek_u32(u) & (u32::MAX >> T::VARIANTS.trailing_zeros()));
    Ok(T::thaw(T::Layout::arbitrary(u)?, how))
}

/// The `u32` that `u32::arbitrary(u)` would read next (zeros past the end), without consuming
/// it: what a derived enum's variant choice reads.
fn peek_u32(u: &Unstructured) -> u32 {
    let mut buf = [0; 4];
    let n = u.len().min(4);
    buf[..n].copy_from_slice(u.peek_bytes(n).unwrap_or_default());
    u32::from_le_bytes(buf)
}

/// `Arbitrary` for steps with a frozen layout: decoded by [`decode`], sized as their layout.
macro_rules! arbitrary_through_frozen_layout {
    ($($step:ty),*) => {$(
        impl<'a> Arbitrary<'a> for $step {
            fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
                decode(u)
            }

            fn size_hint(depth: usize) -> (usize, Option<usize>) {
                <<$step as Frozen>::Layout as Arbitrary>::size_hint(depth)
            }

            fn try_size_hint(
                depth: usize,
            ) -> core::result::Result<(usize, Option<usize>), MaxRecursionReached> {
                <<$step as Frozen>::Layout as Arbitrary>::try_size_hint(depth)
            }
        }
    )*};
}

arbitrary_through_frozen_layout!(TokenFault, PermissionOp);

/// A [`TimedFault`] decoded through its frozen layout, with the three free bits of its
/// variant choice above those [`How`] reads (bits 27 to 29): in an input with recovery they
/// say which failure a non-corrupting fault stands for ([`select`]).
pub(crate) struct Selectable {
    pub(crate) timed: TimedFault,
    pub(crate) selector: u8,
}

impl<'a> Arbitrary<'a> for Selectable {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let before = u8::arbitrary(u)?;
        let selector = (peek_u32(u) >> 27 & 7) as u8;
        let fault = TokenFault::arbitrary(u)?;
        Ok(Selectable {
            timed: TimedFault { before, fault },
            selector,
        })
    }

    fn size_hint(depth: usize) -> (usize, Option<usize>) {
        TimedFault::size_hint(depth)
    }

    fn try_size_hint(
        depth: usize,
    ) -> core::result::Result<(usize, Option<usize>), MaxRecursionReached> {
        TimedFault::try_size_hint(depth)
    }
}

/// The fault `timed` decoded with `selector` as an input run `recovering` reads it. Without
/// recovery: as decoded. With it, a corruption stays one, and of every eight selector values
/// of a link fault two keep its meaning and the rest stand for failures, with its index `x`:
/// for a `Notice(x)` three fire a timer, one crashes, one restarts and one breaks a link; for
/// a `FailAt(x, _)` two fire a timer, one crashes, two break a link and one partitions; for a
/// `FormAt(x, _)` two fire a timer, one restarts, two merge and one partitions. Where timers
/// do not fire at will ([`Recovering::Timely`]), a timer's firing keeps the fault's meaning.
pub(crate) fn select(timed: TimedFault, selector: u8, recovering: Recovering) -> TimedFault {
    use TokenFault::{Break, Crash, FailAt, Fire, FormAt, Merge, Notice, Partition, Restart};
    if recovering == Recovering::Off || selector < 2 {
        return timed;
    }
    let fire = |x| match recovering {
        Recovering::AtWill => Fire(x),
        _ => timed.fault,
    };
    let fault = match timed.fault {
        Notice(x) => match selector {
            2..=4 => fire(x),
            5 => Crash(x),
            6 => Restart(x),
            _ => Break(x),
        },
        FailAt(x, _) => match selector {
            2 | 3 => fire(x),
            4 => Crash(x),
            6 => Partition(x),
            _ => Break(x),
        },
        FormAt(x, _) => match selector {
            2 | 3 => fire(x),
            4 => Restart(x),
            6 => Partition(x),
            _ => Merge,
        },
        other => other,
    };
    TimedFault { fault, ..timed }
}
