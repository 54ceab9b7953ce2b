//! The FIFO request queue of KRL: each identifier at most once, served in arrival order.

use alloc::collections::VecDeque;

/// A FIFO queue that holds each item at most once (the KRL `Q`).
///
/// `enqueue` of an item already present is a no-op, which bounds the queue by the number of
/// distinct items (neighbours plus self). Capacity is kept after `dequeue`, so steady-state use
/// does not allocate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FifoQueue<T> {
    items: VecDeque<T>,
}

impl<T> Default for FifoQueue<T> {
    fn default() -> Self {
        FifoQueue {
            items: VecDeque::new(),
        }
    }
}

impl<T: PartialEq + Copy> FifoQueue<T> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Append `item` unless it is already queued. Returns whether it was added.
    pub(crate) fn enqueue(&mut self, item: T) -> bool {
        if self.contains(item) {
            return false;
        }
        self.items.push_back(item);
        true
    }

    /// Remove and return the front item.
    pub(crate) fn dequeue(&mut self) -> Option<T> {
        self.items.pop_front()
    }

    /// Remove `item` wherever it is. Returns whether it was present.
    pub(crate) fn delete(&mut self, item: T) -> bool {
        match self.items.iter().position(|&x| x == item) {
            Some(i) => {
                self.items.remove(i);
                true
            }
            None => false,
        }
    }

    /// Remove every item for which `remove` returns true, keeping the order of the rest.
    pub(crate) fn delete_where(&mut self, mut remove: impl FnMut(T) -> bool) {
        self.items.retain(|&x| !remove(x));
    }

    /// Whether `item` is queued.
    pub(crate) fn contains(&self, item: T) -> bool {
        self.items.contains(&item)
    }

    /// The front item.
    pub(crate) fn front(&self) -> Option<T> {
        self.items.front().copied()
    }

    /// Number of queued items.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the queue is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Visit the memory of the queued items (see `reverse_link::Node::heap_regions`).
    pub(crate) fn heap_regions(&self, visit: &mut impl FnMut(*const u8, usize)) {
        let (front, back) = self.items.as_slices();
        visit(front.as_ptr().cast(), core::mem::size_of_val(front));
        visit(back.as_ptr().cast(), core::mem::size_of_val(back));
    }

    /// The queued items, front first.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = T> + '_ {
        self.items.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enqueue_if_absent_keeps_first_position() {
        let mut q = FifoQueue::new();
        assert!(q.enqueue(1));
        assert!(q.enqueue(2));
        assert!(!q.enqueue(1));
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn dequeue_is_fifo() {
        let mut q = FifoQueue::new();
        for i in [3, 1, 2] {
            q.enqueue(i);
        }
        assert_eq!(q.dequeue(), Some(3));
        assert_eq!(q.dequeue(), Some(1));
        assert_eq!(q.front(), Some(2));
        assert_eq!(q.len(), 1);
        assert_eq!(q.dequeue(), Some(2));
        assert_eq!(q.dequeue(), None);
        assert!(q.is_empty());
    }

    #[test]
    fn delete_removes_from_anywhere_and_reports_absence() {
        let mut q = FifoQueue::new();
        for i in 0..5 {
            q.enqueue(i);
        }
        assert!(q.delete(2));
        assert!(!q.delete(2));
        q.delete_where(|x| x % 2 == 1);
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![0, 4]);
        assert!(!q.contains(1));
    }
}
