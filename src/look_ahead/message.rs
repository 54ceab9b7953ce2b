//! The look-ahead protocol's messages.

use crate::permission::Timestamp;
use crate::seal::check_word;
use crate::{Fence, FenceCopies};

/// A look-ahead message. Any order of delivery is allowed, so every message carries what the
/// receiver needs to recognise a stale copy.
///
/// `epoch` is the clock value of the sender's last DOZE/DISCONNECT/RECONNECT announcement
/// (its `T_rec`, 0 before any): a message from before an announcement the receiver has already
/// seen is stale, and a message from after it makes the (overtaken) announcement stale.
///
/// Every message also carries the highest fence its sender has seen, in three copies
/// (`docs/ALGORITHMS.md`, F1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(remote = "Self")
)]
#[non_exhaustive]
pub enum Message {
    /// A request for permission. Retransmissions repeat `ts` and `seq`. Build one with
    /// [`Message::request`].
    Request {
        /// The request's priority (its `id` is the sender).
        ts: Timestamp,
        /// The sender's own request number (1 for its first request): no peer can influence
        /// it, so two requests of one host never look alike.
        seq: u64,
        /// The sender's epoch when this copy was sent.
        epoch: u64,
        /// A check word over the other fields: the receiver decides on them alone, and its
        /// REPLY would grant the request a corrupted copy describes (`docs/ALGORITHMS.md`,
        /// A6), so a copy with any one field corrupted is dropped, like a lost one.
        check: u64,
        /// The highest fence the sender has seen.
        fence: FenceCopies,
    },
    /// Permission for the request `(ts, seq)`, sent in answer to its copy of epoch `epoch`.
    /// Build one with [`Message::reply`].
    Reply {
        /// The timestamp of the request being granted (its `id` is the receiver).
        ts: Timestamp,
        /// The number of the request being granted, or 0 in the answer to a copy that looked
        /// stale: that answer grants nothing and only carries `seen`.
        seq: u64,
        /// The epoch of the request copy being answered.
        epoch: u64,
        /// The latest epoch of the receiver the sender has seen. It can never exceed the
        /// receiver's own epoch; if it does, the sender's record of the receiver was corrupted
        /// on the way, the REPLY grants nothing, and the receiver re-announces itself with an
        /// epoch beyond it (`docs/ALGORITHMS.md`, A3).
        seen: u64,
        /// A check word over `ts`, `seq` and `epoch` (not `seen`, which A3 reads on its own):
        /// a renumbered request keeps its timestamp, so without it a late REPLY to the old
        /// number with `seq` corrupted would grant the new one (`docs/ALGORITHMS.md`, A7).
        check: u64,
        /// The highest fence the sender has seen.
        fence: FenceCopies,
    },
    /// The sender enters doze mode; it will ask everyone before its next critical section.
    Doze(Announcement),
    /// The sender disconnects voluntarily; as for `Doze`, and it cannot be reached until it
    /// reconnects.
    Disconnect(Announcement),
    /// The sender is back after a voluntary or accidental disconnection.
    Reconnect(Announcement),
}

impl Message {
    /// A REQUEST with its check word, from a sender that has seen fences up to `fence`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn request(ts: Timestamp, seq: u64, epoch: u64, fence: u64) -> Message {
        Message::Request {
            ts,
            seq,
            epoch,
            check: Self::request_check(ts, seq, epoch),
            fence: Fence::new(0, fence).into(),
        }
    }

    /// A REPLY with its check word granting `(ts, seq)` in answer to the copy of epoch
    /// `epoch`, from a sender that has seen the receiver's epoch `seen` and fences up to
    /// `fence`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn reply(ts: Timestamp, seq: u64, epoch: u64, seen: u64, fence: u64) -> Message {
        Message::Reply {
            ts,
            seq,
            epoch,
            seen,
            check: Self::reply_check(ts, seq, epoch),
            fence: Fence::new(0, fence).into(),
        }
    }

    /// The fence the message carries, as it travelled.
    pub(crate) fn fence(&self) -> FenceCopies {
        match self {
            Message::Request { fence, .. } | Message::Reply { fence, .. } => *fence,
            Message::Doze(a) | Message::Disconnect(a) | Message::Reconnect(a) => a.fence,
        }
    }

    /// The message with its check word XORed with its kind's tag (W2).
    #[cfg(feature = "serde")]
    fn tagged(mut self) -> Self {
        const DOMAIN: u64 = 0x6c6f_6f6b_2d6b_696e; // "look-kin"
        let tag = |variant| crate::seal::kind_tag(DOMAIN, variant);
        match &mut self {
            Message::Request { check, .. } => *check ^= tag(0),
            Message::Reply { check, .. } => *check ^= tag(1),
            Message::Doze(a) => *a = a.tagged(tag(2)),
            Message::Disconnect(a) => *a = a.tagged(tag(3)),
            Message::Reconnect(a) => *a = a.tagged(tag(4)),
        }
        self
    }

    /// The check word of a REQUEST's fields ([`check_word`]).
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn request_check(ts: Timestamp, seq: u64, epoch: u64) -> u64 {
        const KIND: u64 = 0x6c6f_6f6b_2d72_6571; // "look-req"
        check_word(KIND, [ts.clock, u64::from(ts.id.0), seq, epoch])
    }

    /// The check word of a REPLY's fields but `seen` ([`check_word`]).
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn reply_check(ts: Timestamp, seq: u64, epoch: u64) -> u64 {
        const KIND: u64 = 0x6c6f_6f6b_2d72_6570; // "look-rep"
        check_word(KIND, [ts.clock, u64::from(ts.id.0), seq, epoch])
    }
}

#[cfg(feature = "serde")]
crate::seal::tagged_serde!(Message);

/// What a DOZE, DISCONNECT or RECONNECT tells its recipient. Each recipient gets its own copy:
/// `seen` and `absent` describe the sender's view of that recipient.
///
/// Announcements are not retransmitted and every field decides whether the receiver may stop
/// asking the sender, so a copy carries a check word over its fields: a copy with any one
/// field corrupted is recognised and dropped, like a lost one (`docs/ALGORITHMS.md`, A4).
/// Build one with [`Announcement::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Announcement {
    /// The announcement's timestamp: the sender's new epoch and `T_rec`.
    pub ts: Timestamp,
    /// The latest epoch of the recipient the sender had seen. An announcement that had not
    /// seen the recipient's own latest one is *concurrent* with it.
    pub seen: u64,
    /// The sender counts the recipient as disconnected and will not ask it, so the recipient
    /// must go on asking the sender.
    pub absent: bool,
    /// A check word over the other fields but the fence.
    pub check: u64,
    /// The highest fence the sender has seen (three copies: outside the check word).
    pub fence: FenceCopies,
}

impl Announcement {
    /// An announcement with its check word, from a sender that has seen fences up to `fence`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn new(ts: Timestamp, seen: u64, absent: bool, fence: u64) -> Self {
        Self::new_in(ts, seen, absent, fence, 0)
    }

    /// An announcement of a sender of incarnation `incarnation` ([`Announcement::new`] is
    /// incarnation 0): its check word covers the incarnation, which the message does not
    /// carry, so a receiver that knows a later incarnation of the sender refuses it, like a
    /// corrupted copy (`docs/ALGORITHMS.md`, C5).
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn new_in(ts: Timestamp, seen: u64, absent: bool, fence: u64, incarnation: u32) -> Self {
        Announcement {
            ts,
            seen,
            absent,
            check: Self::seal(ts, seen, absent, incarnation),
            fence: Fence::new(0, fence).into(),
        }
    }

    /// The check word of the fields and the sender's incarnation ([`check_word`], with a
    /// scrambled incarnation added to the kind; incarnation 0 adds nothing, so it seals as
    /// before incarnations existed). Scrambled, so that the one value of a field that would
    /// make an older incarnation's word pass as a newer one's is no small change of it.
    pub(crate) fn seal(ts: Timestamp, seen: u64, absent: bool, incarnation: u32) -> u64 {
        const KIND: u64 = 0x6c6f_6f6b_2d61_6865; // "look-ahe"
        let mut tag = u64::from(incarnation).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        tag ^= tag >> 29;
        tag = tag.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        tag ^= tag >> 32;
        check_word(
            KIND.wrapping_add(tag),
            [ts.clock, u64::from(ts.id.0), seen, u64::from(absent)],
        )
    }

    /// Whether the check word matches the fields, for a sender of incarnation 0.
    // Hidden: the workspace's tests and model checkers use it; not stable API.
    #[doc(hidden)]
    pub fn is_intact(&self) -> bool {
        self.is_intact_in(0)
    }

    /// Whether the check word matches the fields, for a sender of incarnation `incarnation`.
    // Hidden: the workspace's tests use it; not stable API.
    #[doc(hidden)]
    pub fn is_intact_in(&self, incarnation: u32) -> bool {
        self.check == Self::seal(self.ts, self.seen, self.absent, incarnation)
    }

    /// The announcement with its check word XORed with `tag` (W2).
    #[cfg(feature = "serde")]
    fn tagged(self, tag: u64) -> Self {
        Announcement {
            check: self.check ^ tag,
            ..self
        }
    }
}
