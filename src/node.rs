//! The node trait every algorithm implements, and the shared output buffer.

use alloc::vec::Vec;
use core::fmt;

use crate::{Action, Error, Event};

/// A node identifier, unique in the system. Also the tie-breaking component of heights and
/// timestamps.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeId(pub u32);

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl NodeId {
    /// The id as an index into per-node arrays.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where the node's application is: the papers' three sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// Not interested in the critical section (REMAINDER / NCS).
    Remainder,
    /// Waiting to enter (WAITING / TRYING).
    Waiting,
    /// Inside the critical section (CRITICAL / CS).
    Critical,
}

/// A sans-IO protocol node: feed it [`Event`]s, carry out the [`Action`]s it returns.
///
/// `handle` is deterministic: the same state and event always give the same actions. It never
/// panics on peer input; local misuse returns `Err` and leaves the node unchanged.
pub trait Protocol {
    /// The protocol's message type.
    type Message: Clone + fmt::Debug + PartialEq + Eq;

    /// This node's id.
    fn id(&self) -> NodeId;

    /// The application's current section.
    fn status(&self) -> Status;

    /// Process one event and return the actions to carry out, in order.
    ///
    /// The returned iterator borrows the node's internal output buffer, so steady-state
    /// handling does not allocate. Unconsumed actions are discarded when it is dropped.
    fn handle(&mut self, event: Event<Self::Message>) -> Result<Actions<'_, Self::Message>, Error>;
}

/// The actions produced by one call to [`Protocol::handle`], in the order they must be carried
/// out.
#[must_use = "actions must be carried out for the protocol to make progress"]
pub struct Actions<'a, M>(alloc::vec::Drain<'a, Action<M>>);

impl<M> Iterator for Actions<'_, M> {
    type Item = Action<M>;
    fn next(&mut self) -> Option<Action<M>> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<M> ExactSizeIterator for Actions<'_, M> {}

impl<M: fmt::Debug> fmt::Debug for Actions<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.as_slice()).finish()
    }
}

/// A node's reusable output buffer. Its capacity survives between calls, so once it has grown
/// to the largest burst a node produces, `handle` stops allocating. It is empty between calls,
/// so comparing it (nodes derive `PartialEq` for "an `Err` changed nothing" tests) is harmless.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outbox<M>(Vec<Action<M>>);

impl<M> Default for Outbox<M> {
    fn default() -> Self {
        Outbox(Vec::new())
    }
}

impl<M> Outbox<M> {
    pub(crate) fn push(&mut self, action: Action<M>) {
        self.0.push(action);
    }

    pub(crate) fn send(&mut self, to: crate::NodeId, msg: M) {
        self.0.push(Action::Send { to, msg });
    }

    pub(crate) fn anomaly(&mut self, from: crate::NodeId, kind: crate::Anomaly) {
        self.0.push(Action::Anomaly { from, kind });
    }

    /// Hand the buffered actions to the caller.
    pub(crate) fn drain(&mut self) -> Actions<'_, M> {
        Actions(self.0.drain(..))
    }

    /// Forget actions buffered by a handler that then failed, so `Err` leaves nothing behind.
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// The outcome of one `handle` call: the buffered actions, or the handler's error with
    /// whatever it buffered forgotten (local handlers validate before they mutate, so an `Err`
    /// leaves the node as it was).
    pub(crate) fn finish(
        &mut self,
        outcome: Result<(), crate::Error>,
    ) -> Result<Actions<'_, M>, crate::Error> {
        match outcome {
            Ok(()) => Ok(self.drain()),
            Err(e) => {
                self.clear();
                Err(e)
            }
        }
    }
}
