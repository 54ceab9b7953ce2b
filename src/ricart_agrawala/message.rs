//! Ricart–Agrawala messages.

use crate::permission::Timestamp;
use crate::seal::check_word;
use crate::{Fence, FenceCopies};

/// A Ricart–Agrawala message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(remote = "Self")
)]
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
        /// A check word over the other fields: the receiver decides on them alone, and its
        /// REPLY would grant the request a corrupted copy describes (`docs/ALGORITHMS.md`,
        /// A6), so a copy with any one field corrupted is dropped, like a lost one.
        check: u64,
        /// The highest fence the sender has seen (`docs/ALGORITHMS.md`, F1).
        fence: FenceCopies,
    },
    /// Permission for the request `(ts, seq)` (its `id` is the receiver), so a late REPLY to
    /// an earlier request is recognisable. Build one with [`Message::reply`].
    Reply {
        /// The timestamp of the request being granted.
        ts: Timestamp,
        /// The number of the request being granted.
        seq: u64,
        /// A check word over `ts` and `seq`: a renumbered request keeps its timestamp, so
        /// without it a late REPLY to the old number with `seq` corrupted would grant the new
        /// one (`docs/ALGORITHMS.md`, A7).
        check: u64,
        /// The highest fence the sender has seen (`docs/ALGORITHMS.md`, F1).
        fence: FenceCopies,
    },
    /// The sender left the system for good ([`crate::Event::Leave`]; `docs/ALGORITHMS.md`,
    /// L2): nobody waits for it any more, and only a REQUEST of a later incarnation counts
    /// it again. Build one with [`Message::leave`].
    Leave {
        /// The sender's last request number (its incarnation in the high half), so a LEAVE
        /// of an incarnation that has restarted since is recognisably stale.
        seq: u64,
        /// A check word over `seq`: a copy with it corrupted is dropped, like a lost one.
        check: u64,
        /// The highest fence the sender has seen (`docs/ALGORITHMS.md`, F1).
        fence: FenceCopies,
    },
}

impl Message {
    /// A REQUEST with its check word, from a sender that has seen fences up to `fence`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn request(ts: Timestamp, seq: u64, fence: u64) -> Message {
        Message::Request {
            ts,
            seq,
            check: Self::request_check(ts, seq),
            fence: Fence::new(0, fence).into(),
        }
    }

    /// A REPLY granting `(ts, seq)`, from a sender that has seen fences up to `fence`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn reply(ts: Timestamp, seq: u64, fence: u64) -> Message {
        Message::Reply {
            ts,
            seq,
            check: Self::reply_check(ts, seq),
            fence: Fence::new(0, fence).into(),
        }
    }

    /// A LEAVE of a sender whose last request number is `seq`, that has seen fences up to
    /// `fence`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn leave(seq: u64, fence: u64) -> Message {
        Message::Leave {
            seq,
            check: Self::leave_check(seq),
            fence: Fence::new(0, fence).into(),
        }
    }

    /// The fence the message carries, as it travelled.
    pub(crate) fn fence(&self) -> FenceCopies {
        match *self {
            Message::Request { fence, .. }
            | Message::Reply { fence, .. }
            | Message::Leave { fence, .. } => fence,
        }
    }

    /// The message with its check word XORed with its kind's tag (W2).
    #[cfg(feature = "serde")]
    fn tagged(mut self) -> Self {
        const DOMAIN: u64 = 0x7269_6361_2d6b_696e; // "rica-kin"
        let variant = match self {
            Message::Request { .. } => 0,
            Message::Reply { .. } => 1,
            Message::Leave { .. } => 2,
        };
        let (Message::Request { check, .. }
        | Message::Reply { check, .. }
        | Message::Leave { check, .. }) = &mut self;
        *check ^= crate::seal::kind_tag(DOMAIN, variant);
        self
    }

    /// The check word of a REQUEST's fields ([`check_word`]).
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn request_check(ts: Timestamp, seq: u64) -> u64 {
        const KIND: u64 = 0x7269_6361_2d72_6571; // "rica-req"
        check_word(KIND, [ts.clock, u64::from(ts.id.0), seq])
    }

    /// The check word of a LEAVE's number ([`check_word`]).
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn leave_check(seq: u64) -> u64 {
        const KIND: u64 = 0x7269_6361_2d6c_6561; // "rica-lea"
        check_word(KIND, [seq])
    }

    /// The check word of a REPLY's fields ([`check_word`]).
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn reply_check(ts: Timestamp, seq: u64) -> u64 {
        const KIND: u64 = 0x7269_6361_2d72_6570; // "rica-rep"
        check_word(KIND, [ts.clock, u64::from(ts.id.0), seq])
    }
}

#[cfg(feature = "serde")]
crate::seal::tagged_serde!(Message);
