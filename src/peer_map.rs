//! A map keyed by peer, kept as a vector sorted by id: the token algorithms' neighbour table
//! and the permission algorithms' per-peer sets. Lookups are binary searches, there is at most
//! one entry per peer, iteration is in id order (which fixes the order of the messages sent
//! to several peers), and unlike a `BTreeMap` it keeps its capacity when emptied, so
//! steady-state use does not allocate.

use alloc::vec::Vec;

use crate::NodeId;

/// An entry of a [`PeerMap`]: it names its peer.
pub(crate) trait Keyed {
    /// The peer the entry belongs to.
    fn peer(&self) -> NodeId;
}

impl<V> Keyed for (NodeId, V) {
    fn peer(&self) -> NodeId {
        self.0
    }
}

/// Entries sorted by [`Keyed::peer`], one per peer.
///
/// It remembers where the last entry changed through [`PeerMap::get_mut`] is: a handler
/// usually looks at the peer it heard from several times (to record what it said, then to
/// read where it now stands), and a look-up that finds that entry still there skips the
/// binary search. The remembered position is only a hint, checked against the entry's peer,
/// so it cannot give a wrong answer; equality and `Debug` ignore it.
#[derive(Clone)]
pub(crate) struct PeerMap<E> {
    entries: Vec<E>,
    /// Where the entry last handed out by `get_mut` was (maybe moved or gone since).
    hint: usize,
}

impl<E> Default for PeerMap<E> {
    fn default() -> Self {
        PeerMap {
            entries: Vec::new(),
            hint: 0,
        }
    }
}

impl<E: PartialEq> PartialEq for PeerMap<E> {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl<E: Eq> Eq for PeerMap<E> {}

impl<E: core::fmt::Debug> core::fmt::Debug for PeerMap<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("PeerMap").field(&self.entries).finish()
    }
}

impl<E: Keyed> PeerMap<E> {
    /// The entries given, sorted; of several for one peer the first is kept.
    pub(crate) fn from_entries(entries: impl IntoIterator<Item = E>) -> Self {
        let mut entries: Vec<E> = entries.into_iter().collect();
        entries.sort_by_key(E::peer);
        entries.dedup_by_key(|e| e.peer());
        PeerMap { entries, hint: 0 }
    }

    #[inline]
    fn position(&self, peer: NodeId) -> Result<usize, usize> {
        match self.entries.get(self.hint) {
            Some(e) if e.peer() == peer => Ok(self.hint),
            _ => self.entries.binary_search_by_key(&peer, E::peer),
        }
    }

    /// The entry of `peer`.
    #[inline]
    pub(crate) fn get(&self, peer: NodeId) -> Option<&E> {
        self.position(peer).ok().map(|i| &self.entries[i])
    }

    /// The entry of `peer`, to change (not its peer: that would break the order).
    #[inline]
    pub(crate) fn get_mut(&mut self, peer: NodeId) -> Option<&mut E> {
        let i = self.position(peer).ok()?;
        self.hint = i;
        Some(&mut self.entries[i])
    }

    /// Whether `peer` has an entry.
    pub(crate) fn contains(&self, peer: NodeId) -> bool {
        self.position(peer).is_ok()
    }

    /// Add `entry`, replacing its peer's entry if there is one.
    pub(crate) fn insert(&mut self, entry: E) {
        match self.position(entry.peer()) {
            Ok(i) => self.entries[i] = entry,
            Err(i) => self.entries.insert(i, entry),
        }
    }

    /// Add `entry` unless its peer has one already. Returns whether it was added.
    pub(crate) fn insert_new(&mut self, entry: E) -> bool {
        match self.position(entry.peer()) {
            Ok(_) => false,
            Err(i) => {
                self.entries.insert(i, entry);
                true
            }
        }
    }

    /// Remove and return the entry of `peer`.
    pub(crate) fn remove(&mut self, peer: NodeId) -> Option<E> {
        self.position(peer).ok().map(|i| self.entries.remove(i))
    }

    /// The peers, in id order.
    pub(crate) fn peers(&self) -> impl Iterator<Item = NodeId> + Clone + '_ {
        self.entries.iter().map(E::peer)
    }
}

impl<E> PeerMap<E> {
    /// The entries, in id order.
    pub(crate) fn iter(&self) -> core::slice::Iter<'_, E> {
        self.entries.iter()
    }

    /// The entries, in id order, to change (not their peers).
    pub(crate) fn iter_mut(&mut self) -> core::slice::IterMut<'_, E> {
        self.entries.iter_mut()
    }

    /// Remove every entry, in id order, keeping the capacity.
    pub(crate) fn drain(&mut self) -> alloc::vec::Drain<'_, E> {
        self.entries.drain(..)
    }

    /// Whether there are no entries.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_stay_sorted_one_per_peer() {
        let mut m = PeerMap::from_entries([(NodeId(5), 'a'), (NodeId(2), 'b'), (NodeId(5), 'c')]);
        assert_eq!(m.peers().collect::<Vec<_>>(), [NodeId(2), NodeId(5)]);
        assert_eq!(m.get(NodeId(5)), Some(&(NodeId(5), 'a')), "the first kept");
        assert!(!m.insert_new((NodeId(5), 'd')));
        m.insert((NodeId(5), 'e'));
        assert!(m.insert_new((NodeId(3), 'f')));
        assert_eq!(m.iter().map(|e| e.1).collect::<Vec<_>>(), ['b', 'f', 'e']);
        assert_eq!(m.remove(NodeId(3)), Some((NodeId(3), 'f')));
        assert_eq!(m.remove(NodeId(3)), None);
        assert!(m.contains(NodeId(2)) && !m.contains(NodeId(3)));
        assert_eq!(m.drain().count(), 2);
        assert!(m.is_empty());
    }

    #[test]
    fn the_remembered_position_never_misleads_a_look_up() {
        let mut m = PeerMap::from_entries([(NodeId(2), 'a'), (NodeId(5), 'b'), (NodeId(8), 'c')]);
        let same = m.clone();
        m.get_mut(NodeId(5)).unwrap().1 = 'd';
        assert_eq!(m.get(NodeId(5)), Some(&(NodeId(5), 'd')));
        assert_eq!(m.get(NodeId(8)), Some(&(NodeId(8), 'c')));
        // Entries move under the remembered position: it is checked, not trusted.
        assert!(m.insert_new((NodeId(1), 'e')));
        assert_eq!(m.get(NodeId(5)), Some(&(NodeId(5), 'd')));
        assert_eq!(m.get(NodeId(2)), Some(&(NodeId(2), 'a')));
        m.get_mut(NodeId(8)).unwrap();
        assert_eq!(m.remove(NodeId(8)), Some((NodeId(8), 'c')));
        assert_eq!(m.get(NodeId(8)), None);
        assert_eq!(m.get_mut(NodeId(8)), None);
        assert_eq!(m.get(NodeId(9)), None);
        // Equality and the debug form ignore it.
        m.get_mut(NodeId(5)).unwrap().1 = 'b';
        assert_eq!(m.remove(NodeId(1)), Some((NodeId(1), 'e')));
        m.insert((NodeId(8), 'c'));
        assert_eq!(m, same);
        assert_eq!(format!("{m:?}"), format!("{same:?}"));
        assert!(format!("{m:?}").starts_with("PeerMap(["));
    }
}
