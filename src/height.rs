//! Height triples and Gafni–Bertsekas partial reversal.
//!
//! A [`Height`] `(h1, h2, id)` orders nodes totally (lexicographically, the id breaking ties);
//! each link is directed from the higher end to the lower one. Token algorithms keep the
//! resulting DAG *token oriented*: requests travel downhill to a token holder.
//!
//! [`raise`] is partial reversal: a node that has lost every outgoing link lifts itself above at
//! least one neighbour. [`lower`] is its mirror, used by a token holder that has lost every
//! incoming link. Both are pure functions of the node's view of its neighbours.

use crate::NodeId;

/// A height triple. Compared lexicographically; the id makes the order total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Height {
    /// First component: changed by partial reversal.
    pub h1: i64,
    /// Second component: orders nodes with equal `h1`.
    pub h2: i64,
    /// The node's id: ties are impossible between distinct nodes.
    pub id: NodeId,
}

impl Height {
    /// A height from its three components.
    pub const fn new(h1: i64, h2: i64, id: NodeId) -> Self {
        Height { h1, h2, id }
    }

    /// The height just below `self` in the second component, owned by `id`: what a token
    /// recipient adopts, and what the sender assumes it adopted (KRL `(h.h1, h.h2 - 1, id)`).
    pub const fn just_below(self, id: NodeId) -> Self {
        Height {
            h1: self.h1,
            h2: self.h2.saturating_sub(1),
            id,
        }
    }
}

/// Partial reversal (KRL `RaiseHeight`): the new height of a node whose view of its neighbours'
/// heights is `neighbors`. `h1` becomes one more than the smallest neighbour `h1`; among the
/// neighbours that share that new `h1`, the node places itself just below the lowest, so it
/// reverses as few links as possible while gaining at least one outgoing link.
///
/// Returns `None` when there are no neighbours: an isolated node cannot reverse anything.
pub fn raise(own: Height, neighbors: impl Iterator<Item = Height> + Clone) -> Option<Height> {
    let min_h1 = neighbors.clone().map(|h| h.h1).min()?;
    let h1 = min_h1.saturating_add(1);
    let h2 = neighbors
        .filter(|h| h.h1 == h1)
        .map(|h| h.h2)
        .min()
        .map_or(own.h2, |m| m.saturating_sub(1));
    Some(Height { h1, h2, id: own.id })
}

/// The mirror of [`raise`] (KRL `LowerHeight`): `h1` becomes one less than the largest neighbour
/// `h1`; among the neighbours that share it the node places itself just above the highest, so
/// it gains at least one incoming link.
///
/// Returns `None` when there are no neighbours.
pub fn lower(own: Height, neighbors: impl Iterator<Item = Height> + Clone) -> Option<Height> {
    let max_h1 = neighbors.clone().map(|h| h.h1).max()?;
    let h1 = max_h1.saturating_sub(1);
    let h2 = neighbors
        .filter(|h| h.h1 == h1)
        .map(|h| h.h2)
        .max()
        .map_or(own.h2, |m| m.saturating_add(1));
    Some(Height { h1, h2, id: own.id })
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
    fn isolated_node_cannot_reverse() {
        assert_eq!(raise(h(0, 0, 1), core::iter::empty()), None);
        assert_eq!(lower(h(0, 0, 1), core::iter::empty()), None);
    }

    #[test]
    fn extreme_components_saturate_instead_of_overflowing() {
        let top = raise(h(0, 0, 1), [h(i64::MAX, i64::MIN, 2)].into_iter()).unwrap();
        assert_eq!(top.h1, i64::MAX);
        let bottom = lower(h(0, 0, 1), [h(i64::MIN, i64::MAX, 2)].into_iter()).unwrap();
        assert_eq!(bottom.h1, i64::MIN);
        assert_eq!(h(0, i64::MIN, 1).just_below(NodeId(2)).h2, i64::MIN);
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
}
