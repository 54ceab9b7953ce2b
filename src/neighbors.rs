//! The neighbour table of the token algorithms (`reverse_link`, `prioritized`).
//!
//! For every peer with a live link the table keeps the node's *view* of the peer's height and
//! the LinkInfo handshake state of the KRL appendix:
//! - `in_n`: the peer is in `N` — its first LinkInfo after the link formed has arrived, so its
//!   height is known (the papers add a peer to `N` only then);
//! - `received_li`: false between sending the peer a token and receiving the LinkInfo that
//!   acknowledges it; height information from the peer is stale meanwhile and is not recorded;
//! - `forming` / `form_height`: the link was detected forming while our height was
//!   `form_height`; if our height changed before the peer's first LinkInfo, we resend ours.
//! - `visited`: KRLF's token-forwarding mark.
//!
//! Entries are kept sorted by id in a `Vec`, so lookups are binary searches and a static
//! topology never allocates.

use alloc::vec::Vec;

use crate::height::Height;
use crate::NodeId;

/// One neighbour's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbor {
    /// The peer.
    pub id: NodeId,
    /// Our view of the peer's height (meaningful once `in_n`).
    pub height: Height,
    /// Whether the peer is in `N` (its height is known).
    pub in_n: bool,
    /// False while a token we sent the peer is unacknowledged.
    pub received_li: bool,
    /// The link was detected forming and the peer's first LinkInfo has not arrived yet.
    pub forming: bool,
    /// Our height when the link was detected forming.
    pub form_height: Height,
    /// KRLF: a token was forwarded over this link since the marks were last cleared.
    pub visited: bool,
}

/// The neighbour table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Neighbors {
    entries: Vec<Neighbor>,
}

impl Neighbors {
    /// A table with the given peers already in `N`, with known heights (initial configuration).
    pub fn with_known(peers: impl IntoIterator<Item = Height>, own: Height) -> Self {
        let mut entries: Vec<Neighbor> = peers
            .into_iter()
            .map(|h| Neighbor {
                id: h.id,
                height: h,
                in_n: true,
                received_li: true,
                forming: false,
                form_height: own,
                visited: false,
            })
            .collect();
        entries.sort_by_key(|n| n.id);
        entries.dedup_by_key(|n| n.id);
        Neighbors { entries }
    }

    fn position(&self, id: NodeId) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&id, |n| n.id)
    }

    /// The entry for `id`, whether or not it is in `N` yet.
    pub fn get(&self, id: NodeId) -> Option<&Neighbor> {
        self.position(id).ok().map(|i| &self.entries[i])
    }

    /// Mutable entry for `id`.
    pub fn get_mut(&mut self, id: NodeId) -> Option<&mut Neighbor> {
        self.position(id).ok().map(move |i| &mut self.entries[i])
    }

    /// Whether `id` is in `N`.
    pub fn is_member(&self, id: NodeId) -> bool {
        self.get(id).is_some_and(|n| n.in_n)
    }

    /// Record a forming link to `id` detected while our height is `own`. Returns false (and
    /// changes nothing) if a link to `id` already exists.
    pub fn link_up(&mut self, id: NodeId, own: Height) -> bool {
        match self.position(id) {
            Ok(_) => false,
            Err(i) => {
                self.entries.insert(
                    i,
                    Neighbor {
                        id,
                        height: own,
                        in_n: false,
                        received_li: true,
                        forming: true,
                        form_height: own,
                        visited: false,
                    },
                );
                true
            }
        }
    }

    /// Forget the link to `id`. Returns whether it existed.
    pub fn link_down(&mut self, id: NodeId) -> bool {
        match self.position(id) {
            Ok(i) => {
                self.entries.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Every entry, members of `N` or not, sorted by id.
    pub fn entries(&self) -> impl Iterator<Item = &Neighbor> + Clone {
        self.entries.iter()
    }

    /// The members of `N`, sorted by id.
    pub fn members(&self) -> impl Iterator<Item = &Neighbor> + Clone {
        self.entries.iter().filter(|n| n.in_n)
    }

    /// Mutable members of `N`.
    pub fn members_mut(&mut self) -> impl Iterator<Item = &mut Neighbor> {
        self.entries.iter_mut().filter(|n| n.in_n)
    }

    /// Our view of the heights of `N`.
    pub fn heights(&self) -> impl Iterator<Item = Height> + Clone + '_ {
        self.members().map(|n| n.height)
    }

    /// Whether `N` is empty.
    pub fn is_empty(&self) -> bool {
        self.members().next().is_none()
    }

    /// Every member of `N` is higher than `own` (vacuously true for an empty `N`: callers pair
    /// it with [`crate::height::raise`], which refuses an empty view).
    pub fn all_higher(&self, own: Height) -> bool {
        self.heights().all(|h| h > own)
    }

    /// Every member of `N` is lower than `own` (vacuously true for an empty `N`).
    pub fn all_lower(&self, own: Height) -> bool {
        self.heights().all(|h| h < own)
    }

    /// Members higher than `own` (incoming links).
    pub fn incoming(&self, own: Height) -> impl Iterator<Item = NodeId> + '_ {
        self.members()
            .filter(move |n| n.height > own)
            .map(|n| n.id)
    }

    /// Members lower than `own` (outgoing links).
    pub fn outgoing(&self, own: Height) -> impl Iterator<Item = NodeId> + '_ {
        self.members()
            .filter(move |n| n.height < own)
            .map(|n| n.id)
    }

    /// The lowest member of `N` in our view.
    pub fn lowest(&self) -> Option<NodeId> {
        self.lowest_where(|_| true)
    }

    /// The lowest member of `N` among those that satisfy `keep`.
    pub fn lowest_where(&self, mut keep: impl FnMut(&Neighbor) -> bool) -> Option<NodeId> {
        self.members()
            .filter(|n| keep(n))
            .min_by_key(|n| n.height)
            .map(|n| n.id)
    }

    /// Whether `id` is a member of `N` that is lower than `own` in our view.
    pub fn is_lower(&self, id: NodeId, own: Height) -> bool {
        self.get(id).is_some_and(|n| n.in_n && n.height < own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(h1: i64, id: u32) -> Height {
        Height::new(h1, 0, NodeId(id))
    }

    #[test]
    fn directions_follow_heights() {
        let own = h(5, 0);
        let t = Neighbors::with_known([h(7, 3), h(2, 1), h(6, 2)], own);
        assert_eq!(t.incoming(own).collect::<Vec<_>>(), vec![NodeId(2), NodeId(3)]);
        assert_eq!(t.outgoing(own).collect::<Vec<_>>(), vec![NodeId(1)]);
        assert_eq!(t.lowest(), Some(NodeId(1)));
        assert_eq!(t.lowest_where(|n| n.id != NodeId(1)), Some(NodeId(2)));
        assert!(!t.all_higher(own) && !t.all_lower(own));
        assert!(t.is_lower(NodeId(1), own) && !t.is_lower(NodeId(3), own));
    }

    #[test]
    fn forming_link_joins_n_only_when_marked() {
        let own = h(0, 0);
        let mut t = Neighbors::default();
        assert!(t.link_up(NodeId(4), own));
        assert!(!t.link_up(NodeId(4), own), "duplicate link up");
        assert!(!t.is_member(NodeId(4)));
        assert!(t.is_empty() && t.all_higher(own));
        t.get_mut(NodeId(4)).unwrap().in_n = true;
        assert!(t.is_member(NodeId(4)));
        assert!(t.link_down(NodeId(4)));
        assert!(!t.link_down(NodeId(4)));
        assert!(t.get(NodeId(4)).is_none());
    }
}
