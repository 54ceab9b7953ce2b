//! The look-ahead protocol's messages.

use crate::permission::Timestamp;

/// A look-ahead message. Any order of delivery is allowed, so every message carries what the
/// receiver needs to recognise a stale copy.
///
/// `epoch` is the clock value of the sender's last DOZE/DISCONNECT/RECONNECT announcement
/// (its `T_rec`, 0 before any): a message from before an announcement the receiver has already
/// seen is stale, and a message from after it makes the (overtaken) announcement stale.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Msg {
    /// A request for permission, stamped with the request's priority. Retransmissions repeat
    /// the timestamp.
    Request {
        /// The request's priority (its `id` is the sender).
        ts: Timestamp,
        /// The sender's epoch when this copy was sent.
        epoch: u64,
    },
    /// Permission for the request stamped `ts`, sent in answer to its copy of epoch `epoch`.
    Reply {
        /// The timestamp of the request being granted (its `id` is the receiver).
        ts: Timestamp,
        /// The epoch of the request copy being answered.
        epoch: u64,
    },
    /// The sender enters doze mode; it will ask everyone before its next critical section.
    Doze(Announcement),
    /// The sender disconnects voluntarily; as for `Doze`, and it cannot be reached until it
    /// reconnects.
    Disconnect(Announcement),
    /// The sender is back after a voluntary or accidental disconnection.
    Reconnect(Announcement),
}

/// What a DOZE, DISCONNECT or RECONNECT tells its recipient. Each recipient gets its own copy:
/// `seen` and `absent` describe the sender's view of that recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Announcement {
    /// The announcement's timestamp: the sender's new epoch and `T_rec`.
    pub ts: Timestamp,
    /// The latest epoch of the recipient the sender had seen. An announcement that had not
    /// seen the recipient's own latest one is *concurrent* with it.
    pub seen: u64,
    /// The sender counts the recipient as disconnected and will not ask it, so the recipient
    /// must go on asking the sender.
    pub absent: bool,
}
