//! Ricart–Agrawala messages.

use crate::permission::Timestamp;
use crate::seal::check_word;

/// A Ricart–Agrawala message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Message {
    /// A request for permission; retransmissions repeat it exactly. Build one with
    /// [`Message::request`].
    Request {
        /// The request's priority (its `id` is the sender).
        ts: Timestamp,
        /// The sender's own request number (1 for its first request): unlike the clock, no
        /// peer can influence it, so two requests of one host never look alike.
        seq: u64,
        /// [`check_word`] of the other fields: the receiver decides on them alone, and its
        /// REPLY would grant the request a corrupted copy describes (`docs/ALGORITHMS.md`,
        /// A6), so a copy with any one field corrupted is dropped, like a lost one.
        check: u64,
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

impl Message {
    /// A REQUEST with its check word.
    pub fn request(ts: Timestamp, seq: u64) -> Message {
        Message::Request {
            ts,
            seq,
            check: Self::request_check(ts, seq),
        }
    }

    /// The check word of a REQUEST's fields ([`check_word`]).
    pub fn request_check(ts: Timestamp, seq: u64) -> u64 {
        const KIND: u64 = 0x7269_6361_2d72_6571; // "rica-req"
        check_word(KIND, [ts.clock, u64::from(ts.id.0), seq])
    }
}
