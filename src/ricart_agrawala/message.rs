//! Ricart–Agrawala messages.

use crate::permission::Timestamp;

/// A Ricart–Agrawala message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Msg {
    /// A request for permission; retransmissions repeat the timestamp.
    Request {
        /// The request's priority (its `id` is the sender).
        ts: Timestamp,
    },
    /// Permission for the request stamped `ts` (its `id` is the receiver), so a late REPLY to
    /// an earlier request is recognisable.
    Reply {
        /// The timestamp of the request being granted.
        ts: Timestamp,
    },
}
