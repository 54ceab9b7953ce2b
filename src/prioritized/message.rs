//! The messages of the prioritized algorithm.

use crate::height::Height;
use crate::queue::Priority;

/// A message between neighbours. The sender is the `from` of [`crate::Event::Receive`].
///
/// The paper attaches the sender's height to every message; only the handlers of TOKEN,
/// REQUEST and LINK read it, so UPDATE and RELEASE do not carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Message {
    /// TOKEN(t): the unique token, carrying `available` = t free resources.
    Token {
        /// Free resources, `0..=k`.
        available: u32,
        /// The priority the recipient's request had at the sender when it was granted, aging
        /// included; the recipient raises the front of its queue to it, so aging earned on the
        /// way is not lost (not in the paper, see `docs/ALGORITHMS.md`).
        priority: Priority,
        /// The sender's height when it sent the token.
        height: Height,
    },
    /// REQUEST(j, S): the sender asks for the token on behalf of the front of its queue.
    Request {
        /// The priority of the front of the sender's queue.
        priority: Priority,
        /// The sender's height.
        height: Height,
    },
    /// UPDATE(j, S): the front of the sender's queue now has a higher priority.
    Update {
        /// The new priority of the front of the sender's queue.
        priority: Priority,
    },
    /// RELEASE(r): `resources` resources left the critical section and travel to the token.
    Release {
        /// Released resources, `1..=k`.
        resources: u32,
    },
    /// LINK: the sender's height (link formation, height changes, token acknowledgement).
    Link {
        /// The sender's height.
        height: Height,
    },
}
