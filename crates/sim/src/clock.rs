//! Virtual time and the simulator's event queue.

use std::cmp::Ordering;
use std::collections::VecDeque;

use dary_heap::QuaternaryHeap;

/// Virtual time, in the papers' abstract time units.
pub type Time = f64;

struct Entry<E> {
    at: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event first; equal times
        // pop in scheduling order, which makes equal-delay channels FIFO and runs reproducible.
        other
            .at
            .total_cmp(&self.at)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// A priority queue of timed events: earliest first, ties in scheduling order.
///
/// Besides a binary heap it keeps FIFO *lanes* for delays fixed in advance
/// ([`EventQueue::with_lanes`]): the clock never goes back, so events scheduled with one
/// constant delay come due in the order they were scheduled, and a lane is a plain FIFO whose
/// front is its earliest event. [`EventQueue::pop`] takes the earliest of the heap's top and the
/// lanes' fronts by `(time, scheduling order)`, so the order of events is exactly what one heap
/// would give; a simulator whose messages all take one delay then pushes and pops most events
/// in constant time.
pub struct EventQueue<E> {
    heap: QuaternaryHeap<Entry<E>>,
    lanes: Vec<Lane<E>>,
    now: Time,
    seq: u64,
}

/// The events scheduled with one fixed delay, in scheduling (hence time) order.
struct Lane<E> {
    delay: Time,
    events: VecDeque<Entry<E>>,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: QuaternaryHeap::new(),
            lanes: Vec::new(),
            now: 0.0,
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty queue at time 0 with a FIFO lane for each of `delays` (non-negative, finite,
    /// distinct; others are ignored): events scheduled with exactly one of these delays skip
    /// the heap. The order of events is the same as without lanes.
    pub fn with_lanes(delays: &[Time]) -> Self {
        let mut q = Self::default();
        for &delay in delays {
            if delay.is_finite() && delay >= 0.0 && q.lanes.iter().all(|l| l.delay != delay) {
                q.lanes.push(Lane {
                    delay,
                    events: VecDeque::new(),
                });
            }
        }
        q
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule `event` `delay` time units from now (negative delays count as zero).
    #[inline]
    pub fn schedule(&mut self, delay: Time, event: E) {
        let at = self.now + delay.max(0.0);
        self.seq += 1;
        let entry = Entry {
            at,
            seq: self.seq,
            event,
        };
        if let Some(lane) = self.lanes.iter_mut().find(|l| l.delay == delay) {
            // `now` never decreases, so neither does `now + delay`: the lane stays sorted.
            // (Checked anyway: an out-of-order entry would go to the heap.)
            if lane.events.back().is_none_or(|b| b.at <= at) {
                lane.events.push_back(entry);
                return;
            }
        }
        self.heap.push(entry);
    }

    /// Where the earliest event is: `None` for the heap, `Some(i)` for lane `i`; and its time.
    fn earliest(&self) -> Option<(Option<usize>, Time)> {
        let mut best: Option<(Option<usize>, &Entry<E>)> = self.heap.peek().map(|e| (None, e));
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Some(front) = lane.events.front() {
                // `Entry`'s order is reversed (for the max-heap): greater is earlier.
                if best.is_none_or(|(_, b)| front > b) {
                    best = Some((Some(i), front));
                }
            }
        }
        best.map(|(at, e)| (at, e.at))
    }

    /// Pop the next event, advancing the clock to its time.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = match self.lanes.as_mut_slice() {
            [] => self.heap.pop()?,
            // The token simulator's case: one lane.
            [lane] => match (lane.events.front(), self.heap.peek()) {
                (Some(front), Some(top)) if top > front => self.heap.pop()?,
                (Some(_), _) => lane.events.pop_front()?,
                (None, _) => self.heap.pop()?,
            },
            _ => match self.earliest()?.0 {
                None => self.heap.pop()?,
                Some(i) => self.lanes[i].events.pop_front()?,
            },
        };
        self.now = e.at;
        Some((e.at, e.event))
    }

    /// The `i`-th event waiting in lane `lane` (the lanes in the order of
    /// [`EventQueue::with_lanes`]; 0 is the next one out of it), to look ahead.
    pub fn lane_event(&self, lane: usize, i: usize) -> Option<&E> {
        self.lanes.get(lane)?.events.get(i).map(|e| &e.event)
    }

    /// The earliest event outside the lanes, to look ahead.
    pub fn heap_top(&self) -> Option<&E> {
        self.heap.peek().map(|e| &e.event)
    }

    /// The time of the next event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.earliest().map(|(_, at)| at)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(|l| l.events.len()).sum::<usize>()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keep only the pending events for which `keep` returns true.
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        self.heap.retain(|e| keep(&e.event));
        for lane in &mut self.lanes {
            lane.events.retain(|e| keep(&e.event));
        }
    }

    /// Iterate over pending events in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.heap
            .iter()
            .chain(self.lanes.iter().flat_map(|l| l.events.iter()))
            .map(|e| &e.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(2.0, "c");
        q.schedule(1.0, "a");
        q.schedule(1.0, "b");
        assert_eq!(q.pop(), Some((1.0, "a")));
        assert_eq!(q.pop(), Some((1.0, "b")));
        assert_eq!(q.now(), 1.0);
        q.schedule(0.5, "d");
        assert_eq!(q.pop(), Some((1.5, "d")));
        assert_eq!(q.pop(), Some((2.0, "c")));
        assert!(q.pop().is_none());
    }

    /// Lanes change nothing about the order: random delays, some of them a lane's, pop in
    /// the same order (and at the same times) as from a plain heap.
    #[test]
    fn lanes_keep_the_heap_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut plain = EventQueue::new();
        let mut laned = EventQueue::with_lanes(&[1.0, 0.25]);
        let mut one = EventQueue::with_lanes(&[1.0]);
        let mut id = 0u32;
        for _ in 0..20_000 {
            if rng.random::<f64>() < 0.55 || plain.is_empty() {
                let delay = match rng.random_range(0..4) {
                    0 => 1.0,
                    1 => 0.25,
                    2 => 0.0,
                    _ => rng.random::<f64>() * 3.0,
                };
                plain.schedule(delay, id);
                laned.schedule(delay, id);
                one.schedule(delay, id);
                id += 1;
            } else {
                assert_eq!(plain.peek_time(), laned.peek_time());
                assert_eq!(plain.peek_time(), one.peek_time());
                let e = plain.pop();
                assert_eq!(e, laned.pop());
                assert_eq!(e, one.pop());
                assert_eq!(plain.len(), laned.len());
            }
        }
        laned.retain(|e| e % 3 != 0);
        plain.retain(|e| e % 3 != 0);
        one.retain(|e| e % 3 != 0);
        while let Some(e) = plain.pop() {
            assert_eq!(Some(e), laned.pop());
            assert_eq!(Some(e), one.pop());
        }
        assert!(laned.is_empty() && one.is_empty());
    }

    #[test]
    fn lanes_can_be_looked_into() {
        let mut q = EventQueue::with_lanes(&[1.0, 2.0]);
        for (delay, e) in [(1.0, "a"), (2.0, "x"), (1.0, "b"), (0.5, "h")] {
            q.schedule(delay, e);
        }
        assert_eq!(q.lane_event(0, 0), Some(&"a"));
        assert_eq!(q.lane_event(0, 1), Some(&"b"));
        assert_eq!(q.lane_event(0, 2), None);
        assert_eq!(q.lane_event(1, 0), Some(&"x"));
        assert_eq!(q.lane_event(2, 0), None);
        assert_eq!(q.pop(), Some((0.5, "h")));
        assert_eq!(q.pop(), Some((1.0, "a")));
        assert_eq!(q.lane_event(0, 0), Some(&"b"));
    }
}
