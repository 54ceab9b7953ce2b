//! A timer table for one node, for embedders: it records the node's [`Action::SetTimer`] and
//! [`Action::CancelTimer`] and says which timers are due, so that the embedder can feed them
//! back as [`Event::Timeout`](crate::Event::Timeout).
//!
//! Like the nodes, [`Timers`] reads no clock: every call that needs the time takes `now`, a
//! reading of the embedder's clock in [the embedder's time unit](crate#timers), the unit of
//! `SetTimer`'s `after` and of the permission algorithms' `retransmit_after`. An embedder
//! asks [`Timers::next_deadline`] when to wake up next, and on waking drains
//! [`Timers::pop_expired`] (or [`Timers::expired`]).
//!
//! ```
//! use manet_mutex::ricart_agrawala::{network, Node, Settings};
//! use manet_mutex::timers::Timers;
//! use manet_mutex::{CsRequest, Event, Protocol};
//!
//! let mut node = Node::new(network(Settings::new(2, 25))?.remove(0))?;
//! let mut timers = Timers::new();
//! let now = 100; // the embedder's clock, in the same unit as the 25 above
//! for action in node.handle(Event::Request(CsRequest::ONE))? {
//!     if !timers.apply(&action, now) {
//!         // Send, EnterCritical, Anomaly: the embedder's business.
//!     }
//! }
//! assert_eq!(timers.next_deadline(), Some(125));
//! assert_eq!(timers.pop_expired(124), None);
//! let due = timers.pop_expired(125).expect("due at 125");
//! // The REQUEST is resent under a fresh timer.
//! for action in node.handle(Event::Timeout(due))? {
//!     timers.apply(&action, 125);
//! }
//! assert_eq!(timers.next_deadline(), Some(150));
//! # Ok::<(), manet_mutex::Error>(())
//! ```

use alloc::vec::Vec;

use crate::{Action, TimerId};

/// The armed timers of one node, each with its deadline.
///
/// Re-arming a timer replaces its deadline; cancelling a timer that is not armed does
/// nothing; a due timer is handed out once ([`Timers::pop_expired`]) and forgotten. Due
/// timers come out in deadline order, ties by [`TimerId`]. Deadlines saturate at `u64::MAX`.
///
/// The table is a vector kept sorted, latest deadline first, so the next deadline and the
/// next due timer are at its end. The permission algorithms keep at most one timer per peer
/// armed, so it stays short, and once it has grown to that size no operation allocates.
/// Keep one table per node: [`TimerId`]s are numbered per node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timers {
    /// `(deadline, timer)`, sorted in decreasing order: the earliest is last.
    armed: Vec<(u64, TimerId)>,
}

impl Timers {
    /// An empty table.
    pub const fn new() -> Self {
        Timers { armed: Vec::new() }
    }

    /// Carry out `action` if it is a timer action, at time `now`: a `SetTimer { timer, after }`
    /// arms `timer` for `now + after` (saturating; re-arming replaces the deadline), a
    /// `CancelTimer { timer }` disarms it. Returns whether `action` was one of the two; any
    /// other action is left to the caller.
    pub fn apply<M>(&mut self, action: &Action<M>, now: u64) -> bool {
        match *action {
            Action::SetTimer { timer, after } => {
                self.set(timer, now.saturating_add(after));
                true
            }
            Action::CancelTimer { timer } => {
                self.cancel(timer);
                true
            }
            _ => false,
        }
    }

    /// Arm `timer` to expire at `deadline`, replacing its deadline if it is armed already.
    pub fn set(&mut self, timer: TimerId, deadline: u64) {
        self.cancel(timer);
        let entry = (deadline, timer);
        // Sorted in decreasing order: the insertion point is after every larger entry.
        let at = self.armed.partition_point(|&e| e > entry);
        self.armed.insert(at, entry);
    }

    /// Disarm `timer`. Returns whether it was armed; cancelling a timer that is not armed
    /// (never set, cancelled or handed out already) does nothing.
    pub fn cancel(&mut self, timer: TimerId) -> bool {
        match self.armed.iter().position(|&(_, t)| t == timer) {
            Some(i) => {
                self.armed.remove(i);
                true
            }
            None => false,
        }
    }

    /// The deadline of `timer`, if it is armed.
    pub fn deadline(&self, timer: TimerId) -> Option<u64> {
        self.armed
            .iter()
            .find(|&&(_, t)| t == timer)
            .map(|&(deadline, _)| deadline)
    }

    /// The earliest deadline of an armed timer: when the embedder next has something to do
    /// for this node, unless an event comes first. `None` if no timer is armed.
    pub fn next_deadline(&self) -> Option<u64> {
        self.armed.last().map(|&(deadline, _)| deadline)
    }

    /// Remove and return the earliest timer due at `now` (its deadline is `now` or earlier;
    /// of several, the one with the smallest [`TimerId`]), to be fed to the node as
    /// [`Event::Timeout`](crate::Event::Timeout). `None` if no timer is due.
    pub fn pop_expired(&mut self, now: u64) -> Option<TimerId> {
        match self.armed.last() {
            Some(&(deadline, timer)) if deadline <= now => {
                self.armed.pop();
                Some(timer)
            }
            _ => None,
        }
    }

    /// Remove the timers due at `now` and yield them in deadline order, ties by id (repeated
    /// [`Timers::pop_expired`]). Timers the iterator has not yielded yet when it is dropped
    /// stay armed.
    pub fn expired(&mut self, now: u64) -> Expired<'_> {
        Expired { timers: self, now }
    }

    /// How many armed timers are due at `now` (their deadline is `now` or earlier).
    pub fn due(&self, now: u64) -> usize {
        // Sorted latest first: the due ones are a suffix.
        self.armed.len() - self.armed.partition_point(|&(deadline, _)| deadline > now)
    }

    /// How many timers are armed.
    pub fn len(&self) -> usize {
        self.armed.len()
    }

    /// Whether no timer is armed.
    pub fn is_empty(&self) -> bool {
        self.armed.is_empty()
    }

    /// Disarm every timer (for example when the node is replaced).
    pub fn clear(&mut self) {
        self.armed.clear();
    }
}

/// The timers due at one time, earliest first: [`Timers::expired`].
#[derive(Debug)]
#[must_use = "the due timers are removed only as the iterator yields them"]
pub struct Expired<'a> {
    timers: &'a mut Timers,
    now: u64,
}

impl Iterator for Expired<'_> {
    type Item = TimerId;

    fn next(&mut self) -> Option<TimerId> {
        self.timers.pop_expired(self.now)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.timers.len()))
    }
}

impl core::iter::FusedIterator for Expired<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    type A = Action<()>;

    fn set(timer: u64, after: u64) -> A {
        Action::SetTimer {
            timer: TimerId(timer),
            after,
        }
    }

    fn cancel(timer: u64) -> A {
        Action::CancelTimer {
            timer: TimerId(timer),
        }
    }

    fn drain(t: &mut Timers, now: u64) -> Vec<u64> {
        t.expired(now).map(|TimerId(id)| id).collect()
    }

    #[test]
    fn due_timers_come_out_in_deadline_order_ties_by_id() {
        let mut t = Timers::new();
        for (id, after) in [(5, 30), (3, 10), (9, 20), (1, 20), (4, 10)] {
            assert!(t.apply(&set(id, after), 100));
        }
        assert_eq!((t.len(), t.next_deadline()), (5, Some(110)));
        assert_eq!(drain(&mut t, 109), Vec::<u64>::new());
        assert_eq!(drain(&mut t, 120), [3, 4, 1, 9]);
        assert_eq!(t.next_deadline(), Some(130));
        assert_eq!(drain(&mut t, u64::MAX), [5]);
        assert!(t.is_empty() && t.next_deadline().is_none());
    }

    #[test]
    fn re_arming_replaces_the_deadline() {
        let mut t = Timers::new();
        t.apply(&set(1, 10), 0);
        t.apply(&set(2, 20), 0);
        t.apply(&set(1, 30), 0);
        assert_eq!(t.len(), 2);
        assert_eq!(t.deadline(TimerId(1)), Some(30));
        assert_eq!(drain(&mut t, 25), [2]);
        // Earlier again.
        t.set(TimerId(1), 5);
        assert_eq!(t.next_deadline(), Some(5));
        assert_eq!(drain(&mut t, 5), [1]);
    }

    #[test]
    fn cancel_disarms_and_an_unknown_id_is_a_no_op() {
        let mut t = Timers::new();
        t.apply(&set(1, 10), 0);
        t.apply(&set(2, 10), 0);
        assert!(t.apply(&cancel(1), 3));
        assert_eq!(t.deadline(TimerId(1)), None);
        let before = t.clone();
        assert!(
            t.apply(&cancel(7), 3),
            "a timer action, even for an unknown id"
        );
        assert!(!t.cancel(TimerId(1)), "cancelled already");
        assert_eq!(t, before);
        assert_eq!(drain(&mut t, 10), [2]);
        assert!(!t.cancel(TimerId(2)), "handed out already");
    }

    #[test]
    fn deadlines_saturate_at_the_end_of_time() {
        let mut t = Timers::new();
        t.apply(&set(1, u64::MAX), 10);
        t.apply(&set(2, 5), u64::MAX - 2);
        assert_eq!(t.deadline(TimerId(1)), Some(u64::MAX));
        assert_eq!(t.deadline(TimerId(2)), Some(u64::MAX));
        assert_eq!(t.pop_expired(u64::MAX - 1), None);
        assert_eq!(drain(&mut t, u64::MAX), [1, 2]);
    }

    #[test]
    fn expired_timers_are_handed_out_once() {
        let mut t = Timers::new();
        t.apply(&set(1, 1), 0);
        t.apply(&set(2, 1), 0);
        let mut due = t.expired(1);
        assert_eq!(due.next(), Some(TimerId(1)));
        drop(due);
        assert_eq!(t.len(), 1, "not yielded yet: still armed");
        assert_eq!(t.pop_expired(1), Some(TimerId(2)));
        assert_eq!(t.pop_expired(1), None);
        assert_eq!(drain(&mut t, u64::MAX), Vec::<u64>::new());
    }

    #[test]
    fn other_actions_are_left_to_the_caller() {
        let mut t = Timers::new();
        let others: [A; 3] = [
            Action::Send {
                to: crate::NodeId(1),
                msg: (),
            },
            Action::EnterCritical {
                resources: 1,
                fence: crate::Fence::default(),
            },
            Action::Anomaly {
                from: crate::NodeId(1),
                kind: crate::Anomaly::Stale,
            },
        ];
        for a in &others {
            assert!(!t.apply(a, 0));
        }
        assert!(t.is_empty());
    }

    #[test]
    fn steady_state_reuses_the_buffer() {
        let mut t = Timers::new();
        for id in 0..8 {
            t.apply(&set(id, id + 1), 0);
        }
        let capacity = t.armed.capacity();
        for round in 1..100u64 {
            let id = round % 8;
            t.apply(&set(id, round), round);
            t.apply(&cancel((round + 3) % 8), round);
            t.apply(&set((round + 3) % 8, 2), round);
            let _ = drain(&mut t, round / 2);
            for id in 0..8 {
                if t.deadline(TimerId(id)).is_none() {
                    t.set(TimerId(id), round + 10);
                }
            }
        }
        assert_eq!(t.armed.capacity(), capacity);
        let sorted = t.armed.windows(2).all(|w| w[0] > w[1]);
        assert!(sorted, "{:?}", t.armed);
        assert_eq!(t.len(), 8);
    }
}
