//! Ricart–Agrawala messages.

use crate::permission::Timestamp;

/// A Ricart–Agrawala message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Msg {
    /// A request for permission; retransmissions repeat it exactly.
    Request {
        /// The request's priority (its `id` is the sender).
        ts: Timestamp,
        /// The sender's own request number (1 for its first request): unlike the clock, no
        /// peer can influence it, so two requests of one host never look alike.
        seq: u64,
    },
    /// Permission for the request `(ts, seq)` (its `id` is the receiver), so a late REPLY to
    /// an earlier request is recognisable.
    Reply {
        /// The timestamp of the request being granted.
        ts: Timestamp,
        /// The number of the request being granted.
        seq: u64,
    },
}
