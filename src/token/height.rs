//! Height triples and Gafni–Bertsekas partial reversal.
//!
//! A [`Height`] `(h1, h2, id)` orders nodes totally (lexicographically, the id breaking ties);
//! each link is directed from the higher end to the lower one. Token algorithms keep the
//! resulting DAG *token oriented*: requests travel downhill to a token holder.
//!
//! `raise` is partial reversal: a node that has lost every outgoing link lifts itself above at
//! least one neighbour. `lower` is its mirror, used by a token holder that has lost every
//! incoming link. Both are pure functions of the node's view of its neighbours.
//!
//! Heights drift by design (`h2` falls by one on every token hop), and a peer can report any
//! value, so both components are kept within `±`[`Height::LIMIT`] (2^61): a height outside it
//! is impossible (no network moves a token 2^61 times) and is refused as
//! [`crate::Anomaly::OutOfRange`]; a node never adopts one, so `just_below` and partial reversal
//! never saturate and every height a node announces is one its neighbours accept.

use crate::seal::check_word;
use crate::NodeId;

/// A height triple. Compared lexicographically; the id makes the order total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Height {
    /// First component: changed by partial reversal.
    pub h1: i64,
    /// Second component: orders nodes with equal `h1`.
    pub h2: i64,
    /// The node's id: ties are impossible between distinct nodes.
    pub id: NodeId,
}

impl Height {
    /// The largest magnitude of either component of a possible height.
    pub const LIMIT: i64 = 1 << 61;

    /// What a height that failed its check word ([`Sealed`]) reads as: outside the range, so
    /// impossible from any node.
    pub const CORRUPTED: Height = Height {
        h1: i64::MAX,
        h2: i64::MAX,
        id: NodeId(u32::MAX),
    };

    /// A height from its three components.
    pub const fn new(h1: i64, h2: i64, id: NodeId) -> Self {
        Height { h1, h2, id }
    }

    /// Whether both components are within `±LIMIT`.
    pub(crate) const fn is_valid(self) -> bool {
        self.h1.unsigned_abs() <= Self::LIMIT as u64 && self.h2.unsigned_abs() <= Self::LIMIT as u64
    }

    /// Whether a height received from `from` can be one `from` holds: its own id, and valid.
    pub(crate) fn possible_from(self, from: NodeId) -> bool {
        self.id == from && self.is_valid()
    }

    /// The height just below `self` in the second component, owned by `id`: what a token
    /// recipient adopts, and what the sender assumes it adopted (KRL `(h.h1, h.h2 - 1, id)`).
    /// Saturates; see [`Height::below`] for a height that is always valid.
    pub(crate) const fn just_below(self, id: NodeId) -> Self {
        Height {
            h1: self.h1,
            h2: self.h2.saturating_sub(1),
            id,
        }
    }

    /// A valid height below `self` owned by `id`: [`Height::just_below`], or, at the bottom of
    /// the `h2` range, one level lower in `h1`. `None` at the bottom of both, which only a
    /// forged height reaches.
    pub(crate) fn below(self, id: NodeId) -> Option<Self> {
        [
            self.just_below(id),
            Height::new(self.h1.saturating_sub(1), self.h2, id),
        ]
        .into_iter()
        .find(|h| h.is_valid() && *h < self)
    }
}

/// A height as messages carry it: with a check word over its fields, so that a height with
/// one field corrupted on the way is recognised and treated as impossible, like one outside
/// the range (`docs/ALGORITHMS.md`, T8). A node must not act on a corrupted height: one
/// far above or below the others would make it raise or lower itself there, and its
/// neighbours climb over it by partial reversal one level at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Sealed {
    /// The height.
    pub height: Height,
    /// A check word over its fields.
    pub check: u64,
}

impl Sealed {
    /// `height` with its check word.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn new(height: Height) -> Self {
        Self::bound(height, 0)
    }

    /// `height` with a check word that also covers `extra`, a field of the message outside
    /// the height (a token acknowledgement's count, R13); `bound(h, 0)` is `new(h)`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn bound(height: Height, extra: u64) -> Self {
        Sealed {
            height,
            check: Self::word(height, extra),
        }
    }

    fn word(h: Height, extra: u64) -> u64 {
        const KIND: u64 = 0x6865_6967_6874_2d31; // "height-1"
                                                 // `extra` enters through an odd multiplier, a bijection with 0 fixed, so every
                                                 // change of it changes the word and `bound(h, 0)` keeps the words of `new`.
        check_word(KIND, [h.h1 as u64, h.h2 as u64, u64::from(h.id.0)])
            ^ extra.wrapping_mul(0xA24B_AED4_963E_E407)
    }

    /// Whether the check word matches the height.
    pub(crate) fn is_intact(self) -> bool {
        self.is_intact_with(0)
    }

    /// Whether the check word matches the height and `extra` (see [`Sealed::bound`]).
    pub(crate) fn is_intact_with(self, extra: u64) -> bool {
        self.check == Self::word(self.height, extra)
    }

    /// The height if its check word matches, else [`Height::CORRUPTED`], which no node
    /// accepts: the receiver's view of the sender stays as it was.
    pub(crate) fn open(self) -> Height {
        self.open_with(0)
    }

    /// [`Sealed::open`] for a height sealed with [`Sealed::bound`] over `extra`.
    pub(crate) fn open_with(self, extra: u64) -> Height {
        if self.is_intact_with(extra) {
            self.height
        } else {
            Height::CORRUPTED
        }
    }

    /// The same height with its check word XORed with `tag`: how the wire encoding binds the
    /// message kind into the word ([`crate::seal::kind_tag`]); applying it twice undoes it.
    #[cfg(feature = "serde")]
    pub(crate) fn tagged(self, tag: u64) -> Self {
        Sealed {
            height: self.height,
            check: self.check ^ tag,
        }
    }
}

impl From<Height> for Sealed {
    fn from(height: Height) -> Self {
        Sealed::new(height)
    }
}

/// Partial reversal (KRL `RaiseHeight`): the new height of a node whose view of its neighbours'
/// heights is `neighbors`. `h1` becomes one more than the smallest neighbour `h1`; among the
/// neighbours that share that new `h1`, the node places itself just below the lowest, so it
/// reverses as few links as possible while gaining at least one outgoing link.
///
/// Placing itself below the neighbours that share the new `h1` only spares links; what makes
/// the reversal work is `h1` alone. So at the bottom of the `h2` range (only a forged height
/// leads there) the node keeps its own `h2` instead. Returns `None` when there are no
/// neighbours (an isolated node cannot reverse anything) or every neighbour is at the top of
/// the `h1` range (again only forgery leads there).
pub(crate) fn raise(
    own: Height,
    neighbors: impl Iterator<Item = Height> + Clone,
) -> Option<Height> {
    let min_h1 = neighbors.clone().map(|h| h.h1).min()?;
    let h1 = min_h1.saturating_add(1);
    let h2 = neighbors
        .filter(|h| h.h1 == h1)
        .map(|h| h.h2.saturating_sub(1))
        .min()
        .filter(|&h2| h2 >= -Height::LIMIT)
        .unwrap_or(own.h2);
    Some(Height { h1, h2, id: own.id }).filter(|h| h.is_valid())
}

/// Full reversal, for a node that restarted and has not held a token since (F12): `h1`
/// becomes one more than the largest neighbour `h1` (`h2` and the id stay), so the node
/// rises above every neighbour in one step. Partial reversal would lift it only above its
/// lowest neighbours: a group of restarted nodes at height 0 below everyone else would then
/// climb one level per exchange, as far as the others' heights. `None` when there are no
/// neighbours or the largest `h1` is at the top of the range.
pub(crate) fn jump(own: Height, neighbors: impl Iterator<Item = Height>) -> Option<Height> {
    let h1 = neighbors.map(|h| h.h1).max()?.checked_add(1)?;
    Some(Height { h1, ..own }).filter(|h| h.is_valid() && *h > own)
}

/// The mirror of [`raise`] (KRL `LowerHeight`): `h1` becomes one less than the largest neighbour
/// `h1`; among the neighbours that share it the node places itself just above the highest, so
/// it gains at least one incoming link.
///
/// As for [`raise`], the node keeps its own `h2` at the top of the `h2` range. Returns `None`
/// when there are no neighbours or every neighbour is at the bottom of the `h1` range.
pub(crate) fn lower(
    own: Height,
    neighbors: impl Iterator<Item = Height> + Clone,
) -> Option<Height> {
    let max_h1 = neighbors.clone().map(|h| h.h1).max()?;
    let h1 = max_h1.saturating_sub(1);
    let h2 = neighbors
        .filter(|h| h.h1 == h1)
        .map(|h| h.h2.saturating_add(1))
        .max()
        .filter(|&h2| h2 <= Height::LIMIT)
        .unwrap_or(own.h2);
    Some(Height { h1, h2, id: own.id }).filter(|h| h.is_valid())
}

/// A node above every neighbour by more than one level comes down to one level above the
/// highest (`h1` only; `h2` and the id stay). Every link keeps its direction, so no route
/// changes; but a height that a corrupted view (or a link failure) left far above the rest no
/// longer makes the nodes behind it climb over it by partial reversal, one level per
/// reversal (`docs/ALGORITHMS.md`, T7). `None` if the node is not that far above every
/// neighbour, or has none.
pub(crate) fn trim(own: Height, neighbors: impl Iterator<Item = Height>) -> Option<Height> {
    // The level just above the highest neighbour, given up on at the first neighbour within
    // a level of us (the common case, and where most walks of the table can stop).
    let mut h1 = None;
    for h in neighbors {
        let above = h.h1.saturating_add(1);
        if above >= own.h1 {
            return None;
        }
        h1 = h1.max(Some(above));
    }
    Some(Height { h1: h1?, ..own })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(h1: i64, h2: i64, id: u32) -> Height {
        Height::new(h1, h2, NodeId(id))
    }

    #[test]
    fn order_is_lexicographic_with_id_tie_break() {
        // The paper's own example: (2,3,1) > (2,2,2).
        assert!(h(2, 3, 1) > h(2, 2, 2));
        assert!(h(1, 9, 9) < h(2, 0, 0));
        assert!(h(2, 2, 1) < h(2, 2, 2));
    }

    #[test]
    fn raise_gains_an_outgoing_link() {
        let own = h(0, 0, 5);
        let n = [h(1, 4, 1), h(2, 0, 2), h(1, 2, 3)];
        let new = raise(own, n.iter().copied()).unwrap();
        // h1 = 1 + 1; no neighbour has h1 = 2 ... except node 2 with (2, 0): h2 = 0 - 1.
        assert_eq!(new, h(2, -1, 5));
        assert!(n.iter().any(|&x| new > x), "must have an outgoing link");
        assert!(new < h(2, 0, 2), "reverses no more links than needed");
    }

    #[test]
    fn raise_keeps_h2_when_no_neighbour_shares_the_new_h1() {
        let new = raise(h(0, 7, 5), [h(1, 4, 1), h(1, 2, 3)].into_iter()).unwrap();
        assert_eq!(new, h(2, 7, 5));
    }

    #[test]
    fn lower_gains_an_incoming_link() {
        let own = h(5, 5, 0);
        let n = [h(1, 4, 1), h(0, 0, 2), h(1, 9, 3)];
        let new = lower(own, n.iter().copied()).unwrap();
        assert_eq!(new, h(0, 1, 0));
        assert!(n.iter().any(|&x| new < x), "must have an incoming link");
        assert!(new > h(0, 0, 2), "reverses no more links than needed");
    }

    #[test]
    fn a_jump_rises_above_every_neighbour_in_one_step() {
        let n = [h(1000, 4, 1), h(0, 0, 2), h(999, 9, 3)];
        let new = jump(h(0, 0, 5), n.iter().copied()).unwrap();
        assert_eq!(new, h(1001, 0, 5));
        assert!(n.iter().all(|&x| new > x));
        assert_eq!(jump(h(0, 0, 1), core::iter::empty()), None);
        assert_eq!(jump(h(0, 0, 1), [h(Height::LIMIT, 0, 2)].into_iter()), None);
    }

    #[test]
    fn isolated_node_cannot_reverse() {
        assert_eq!(raise(h(0, 0, 1), core::iter::empty()), None);
        assert_eq!(lower(h(0, 0, 1), core::iter::empty()), None);
    }

    #[test]
    fn heights_outside_the_limit_are_invalid_and_never_result_from_a_reversal() {
        let l = Height::LIMIT;
        assert!(h(l, -l, 1).is_valid() && h(-l, l, 1).is_valid());
        for bad in [l + 1, -l - 1, i64::MAX, i64::MIN] {
            assert!(!h(bad, 0, 1).is_valid() && !h(0, bad, 1).is_valid());
        }
        assert!(h(3, 4, 5).possible_from(NodeId(5)) && !h(3, 4, 5).possible_from(NodeId(6)));
        // A reversal that would leave the range is refused, not saturated into a height that
        // is no longer above (or below) the neighbour it must pass.
        assert_eq!(raise(h(0, 0, 1), [h(l, 0, 2)].into_iter()), None);
        assert_eq!(lower(h(0, 0, 1), [h(-l, 0, 2)].into_iter()), None);
        assert_eq!(
            raise(h(0, 0, 1), [h(i64::MAX, i64::MIN, 2)].into_iter()),
            None
        );
        assert_eq!(
            raise(h(0, 0, 1), [h(l - 1, 0, 2)].into_iter()),
            Some(h(l, 0, 1))
        );
    }

    proptest::proptest! {
        #[test]
        fn raise_and_lower_always_reverse_at_least_one_link(
            own in (-50i64..50, -50i64..50),
            ns in proptest::collection::vec((-50i64..50, -50i64..50), 1..8),
        ) {
            let own = h(own.0, own.1, 100);
            let ns: Vec<Height> = ns.iter().enumerate().map(|(i, &(a, b))| h(a, b, i as u32)).collect();
            let up = raise(own, ns.iter().copied()).unwrap();
            proptest::prop_assert!(ns.iter().any(|&x| up > x));
            let down = lower(own, ns.iter().copied()).unwrap();
            proptest::prop_assert!(ns.iter().any(|&x| down < x));
        }
    }

    #[test]
    fn trim_keeps_every_direction_and_leaves_one_level_of_headroom() {
        let n = [h(3, 7, 1), h(1, 0, 2), h(3, -2, 3)];
        let own = h(90, 5, 4);
        let trimmed = trim(own, n.iter().copied()).unwrap();
        assert_eq!(trimmed, h(4, 5, 4));
        assert!(n.iter().all(|&x| trimmed > x));
        assert_eq!(
            trim(h(4, -9, 4), n.iter().copied()),
            None,
            "one level above: kept"
        );
        assert_eq!(
            trim(h(2, 0, 4), n.iter().copied()),
            None,
            "not above every neighbour"
        );
        assert_eq!(trim(own, core::iter::empty()), None, "no neighbours");
    }

    #[test]
    fn trim_is_one_level_above_the_highest_neighbour_whenever_that_is_lower() {
        // Against the definition: the highest neighbour's level plus one, if below ours.
        let levels = [i64::MIN, -5, 0, 1, 2, 3, 7, i64::MAX - 1, i64::MAX];
        for &own in &levels {
            for &a in &levels {
                for &b in &levels {
                    let views = [h(a, 0, 1), h(b, 3, 2)];
                    let top = views.iter().map(|v| v.h1).max().unwrap().saturating_add(1);
                    let expected = (own > top).then_some(h(top, 9, 0));
                    assert_eq!(trim(h(own, 9, 0), views.iter().copied()), expected);
                    let one = (own > a.saturating_add(1)).then_some(h(a.saturating_add(1), 9, 0));
                    assert_eq!(trim(h(own, 9, 0), views[..1].iter().copied()), one);
                }
            }
        }
    }
}
