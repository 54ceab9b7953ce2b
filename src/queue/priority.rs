//! The priority request queue with aging of the prioritized h-out-of-k algorithm.
//!
//! Order (front first): higher [`Priority`] first; among equal priorities, earlier arrival
//! first. Arrival order is fixed when an item is first inserted and survives priority raises,
//! so equal priorities give plain FCFS. [`PriorityQueue::age`] raises every queued priority by
//! the same step: relative order is unchanged, but an old entry climbs above later arrivals of
//! higher base priority, which is what rules out starvation.

use alloc::vec::Vec;
use core::cmp::{Ordering, Reverse};

/// A request priority. Greater is more urgent: a higher `level` wins; among equal levels the
/// smaller `rank` wins (the maximum-concurrency policy puts the requester's id there; the other
/// policies leave it 0 so arrival order decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Priority {
    /// Urgency; raised by aging.
    pub level: u64,
    /// Tie-break among equal levels: smaller is more urgent.
    pub rank: u32,
}

impl Priority {
    /// The highest level a peer may report: above it a level is impossible (a request would
    /// have to age 2^62 / step times) and is cut down to it, so that aging, which adds to
    /// levels, never saturates in a run.
    pub const LEVEL_LIMIT: u64 = 1 << 62;

    /// A priority from its components.
    pub const fn new(level: u64, rank: u32) -> Self {
        Priority { level, rank }
    }

    /// The priority after one aging step of `step`.
    pub(crate) const fn aged(self, step: u64) -> Self {
        Priority {
            level: self.level.saturating_add(step),
            rank: self.rank,
        }
    }
}

impl Ord for Priority {
    fn cmp(&self, other: &Self) -> Ordering {
        self.level
            .cmp(&other.level)
            .then_with(|| other.rank.cmp(&self.rank))
    }
}

impl PartialOrd for Priority {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry<T> {
    item: T,
    priority: Priority,
    /// Arrival number: the deterministic tie-break among equal priorities.
    seq: u64,
}

impl<T> Entry<T> {
    fn key(&self) -> (Reverse<Priority>, u64) {
        (Reverse(self.priority), self.seq)
    }
}

/// A priority queue holding each item at most once.
///
/// Kept as a `Vec` sorted front first: the queue holds at most one entry per neighbour plus the
/// node itself, so binary-search insertion beats a heap that cannot delete or reorder by item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PriorityQueue<T> {
    entries: Vec<Entry<T>>,
    next_seq: u64,
}

impl<T> Default for PriorityQueue<T> {
    fn default() -> Self {
        PriorityQueue {
            entries: Vec::new(),
            next_seq: 0,
        }
    }
}

impl<T: PartialEq + Copy> PriorityQueue<T> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn position(&self, item: T) -> Option<usize> {
        self.entries.iter().position(|e| e.item == item)
    }

    fn place(&mut self, entry: Entry<T>) {
        let key = entry.key();
        let at = self.entries.partition_point(|e| e.key() < key);
        self.entries.insert(at, entry);
    }

    /// Insert `item` with `priority`; if it is already queued, raise its priority to
    /// `priority` if that is higher (it keeps its arrival order). Returns whether it was added.
    pub(crate) fn upsert(&mut self, item: T, priority: Priority) -> bool {
        if self.raise(item, priority) {
            return false;
        }
        let seq = self.next_seq;
        self.next_seq = self.next_seq.saturating_add(1);
        self.place(Entry {
            item,
            priority,
            seq,
        });
        true
    }

    /// Raise the priority of a queued `item` to `priority` if that is higher, moving it
    /// forward. A lower `priority` never demotes an entry, so aging is never undone. Returns
    /// whether `item` is queued.
    pub(crate) fn raise(&mut self, item: T, priority: Priority) -> bool {
        let Some(i) = self.position(item) else {
            return false;
        };
        if priority > self.entries[i].priority {
            let mut entry = self.entries.remove(i);
            entry.priority = priority;
            self.place(entry);
        }
        true
    }

    /// Remove and return the front item and its priority.
    pub(crate) fn pop(&mut self) -> Option<(T, Priority)> {
        if self.entries.is_empty() {
            return None;
        }
        let e = self.entries.remove(0);
        Some((e.item, e.priority))
    }

    /// The front item and its priority.
    pub(crate) fn front(&self) -> Option<(T, Priority)> {
        self.entries.first().map(|e| (e.item, e.priority))
    }

    /// Remove `item` wherever it is. Returns whether it was present.
    pub(crate) fn delete(&mut self, item: T) -> bool {
        match self.position(item) {
            Some(i) => {
                self.entries.remove(i);
                true
            }
            None => false,
        }
    }

    /// Remove every item for which `remove` returns true.
    pub(crate) fn delete_where(&mut self, mut remove: impl FnMut(T) -> bool) {
        self.entries.retain(|e| !remove(e.item));
    }

    /// Aging: raise every queued priority by `step` (saturating).
    pub(crate) fn age(&mut self, step: u64) {
        for e in &mut self.entries {
            e.priority = e.priority.aged(step);
        }
        // Only saturation at `u64::MAX` can change the order; a sort of sorted data is linear.
        self.entries.sort_by_key(Entry::key);
    }

    /// The priority of a queued `item`.
    #[cfg(test)] // only the unit tests ask
    pub(crate) fn priority_of(&self, item: T) -> Option<Priority> {
        self.position(item).map(|i| self.entries[i].priority)
    }

    /// Whether `item` is queued.
    pub(crate) fn contains(&self, item: T) -> bool {
        self.position(item).is_some()
    }

    /// Number of queued items.
    #[cfg(test)] // only the unit tests ask
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the queue is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Visit the memory of the queued entries (see `reverse_link::Node::heap_regions`).
    pub(crate) fn heap_regions(&self, visit: &mut impl FnMut(*const u8, usize)) {
        visit(
            self.entries.as_ptr().cast(),
            core::mem::size_of_val(&self.entries[..]),
        );
    }

    /// The queued items and their priorities, front first.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (T, Priority)> + '_ {
        self.entries.iter().map(|e| (e.item, e.priority))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(level: u64) -> Priority {
        Priority::new(level, 0)
    }

    fn items(q: &PriorityQueue<u32>) -> Vec<u32> {
        q.iter().map(|(i, _)| i).collect()
    }

    #[test]
    fn highest_priority_first_then_arrival_order() {
        let mut q = PriorityQueue::new();
        q.upsert(1, p(1));
        q.upsert(2, p(5));
        q.upsert(3, p(1));
        q.upsert(4, p(5));
        assert_eq!(items(&q), vec![2, 4, 1, 3]);
        assert_eq!(q.pop(), Some((2, p(5))));
        assert_eq!(q.front(), Some((4, p(5))));
    }

    #[test]
    fn smaller_rank_wins_among_equal_levels_before_arrival_order() {
        let mut q = PriorityQueue::new();
        q.upsert(1, Priority::new(3, 9));
        q.upsert(2, Priority::new(3, 4));
        q.upsert(3, Priority::new(2, 0));
        assert_eq!(items(&q), vec![2, 1, 3]);
        assert!(Priority::new(3, 4) > Priority::new(3, 9));
        assert!(Priority::new(4, 9) > Priority::new(3, 0));
    }

    #[test]
    fn at_most_one_entry_per_item_and_upsert_only_raises() {
        let mut q = PriorityQueue::new();
        assert!(q.upsert(7, p(3)));
        assert!(!q.upsert(7, p(1)), "already queued");
        assert_eq!(q.len(), 1);
        assert_eq!(
            q.priority_of(7),
            Some(p(3)),
            "a lower priority never demotes"
        );
        assert!(!q.upsert(7, p(9)));
        assert_eq!(q.priority_of(7), Some(p(9)));
    }

    #[test]
    fn raise_reorders_but_keeps_arrival_order_among_equals() {
        let mut q = PriorityQueue::new();
        for i in 0..4 {
            q.upsert(i, p(1));
        }
        assert!(q.raise(3, p(2)));
        assert_eq!(items(&q), vec![3, 0, 1, 2]);
        // 2 catches up with 3: it arrived earlier, so it goes first among equals.
        q.raise(2, p(2));
        assert_eq!(items(&q), vec![2, 3, 0, 1]);
        assert!(!q.raise(9, p(5)), "raise of an absent item is a no-op");
        assert_eq!(q.len(), 4);
    }

    #[test]
    fn delete_by_item_and_predicate() {
        let mut q = PriorityQueue::new();
        for i in 0..5 {
            q.upsert(i, p(u64::from(i)));
        }
        assert!(q.delete(2));
        assert!(!q.delete(2));
        assert!(!q.contains(2));
        q.delete_where(|i| i % 2 == 1);
        assert_eq!(items(&q), vec![4, 0]);
        assert_eq!(q.pop(), Some((4, p(4))));
        assert_eq!(q.pop(), Some((0, p(0))));
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }

    #[test]
    fn aging_raises_everyone_and_keeps_order() {
        let mut q = PriorityQueue::new();
        q.upsert(1, p(2));
        q.upsert(2, p(7));
        q.age(3);
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![(2, p(10)), (1, p(5))]);
        q.upsert(1, p(u64::MAX));
        q.age(1);
        assert_eq!(
            q.priority_of(1),
            Some(p(u64::MAX)),
            "saturates instead of wrapping"
        );
    }

    /// The starvation-freedom argument at one queue: an entry waiting behind a stream of
    /// higher-priority arrivals (each at most `top`) climbs by `step` at every dequeue, so it is
    /// served within `(top - level) / step + 2` dequeues however long the stream is.
    #[test]
    fn low_priority_entry_is_not_starved_by_a_stream_of_higher_arrivals() {
        let (low, top, step) = (0u64, 100u64, 7u64);
        let bound = (top - low) / step + 2;
        let mut q = PriorityQueue::new();
        q.upsert(0u32, p(low));
        let mut served_after = None;
        for round in 1..=1_000u64 {
            // A fresh high-priority request arrives before every dequeue.
            q.upsert(round as u32, p(top));
            let (front, _) = q.pop().unwrap();
            q.age(step);
            if front == 0 {
                served_after = Some(round);
                break;
            }
        }
        let served_after = served_after.expect("the low-priority entry starved");
        assert!(
            served_after <= bound,
            "served after {served_after} > {bound}"
        );
    }

    proptest::proptest! {
        #[test]
        fn queue_stays_sorted_and_unique(
            ops in proptest::collection::vec((0u8..5, 0u32..6, 0u64..20), 0..60),
        ) {
            let mut q = PriorityQueue::new();
            for (op, item, level) in ops {
                match op {
                    0 | 1 => { q.upsert(item, p(level)); }
                    2 => { q.raise(item, p(level)); }
                    3 => { q.delete(item); }
                    _ => { q.age(level + 1); }
                }
                let v: Vec<_> = q.iter().collect();
                for w in v.windows(2) {
                    proptest::prop_assert!(w[0].1 >= w[1].1);
                }
                let mut ids: Vec<_> = v.iter().map(|e| e.0).collect();
                ids.sort_unstable();
                ids.dedup();
                proptest::prop_assert_eq!(ids.len(), v.len());
            }
        }
    }
}
