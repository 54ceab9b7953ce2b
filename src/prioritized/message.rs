//! The messages of the prioritized algorithm.

use crate::queue::Priority;
use crate::token::height::Sealed;
use crate::FenceCopies;

/// A message between neighbours. The sender is the `from` of [`crate::Event::Receive`].
///
/// The paper attaches the sender's height to every message (here sealed with a check word,
/// [`Sealed`]); UPDATE goes where the sender's
/// REQUEST went and needs none, so it carries none.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Message {
    /// TOKEN(t): the unique token, carrying `available` = t free resources.
    Token {
        /// Free resources, `0..=k`.
        available: Resources,
        /// The priority the recipient's request had at the sender when it was granted, aging
        /// included; the recipient raises the front of its queue to it, so aging earned on the
        /// way is not lost (not in the paper, see `docs/ALGORITHMS.md`).
        priority: Priority,
        /// The sender's height when it sent the token.
        height: Sealed,
        /// The token's grant counter, the fence of its last grant (lane 0), in three copies.
        fence: FenceCopies,
    },
    /// REQUEST(j, S): the sender asks for the token on behalf of the front of its queue.
    Request {
        /// The priority of the front of the sender's queue.
        priority: Priority,
        /// The sender's height.
        height: Sealed,
    },
    /// UPDATE(j, S): the front of the sender's queue now has a higher priority.
    Update {
        /// The new priority of the front of the sender's queue.
        priority: Priority,
    },
    /// RELEASE(r): `resources` resources left the critical section and travel to the token.
    Release {
        /// Released resources, `1..=k`.
        resources: Resources,
        /// The sender's height: a RELEASE goes to the sender's lowest neighbour, so the
        /// receiver can tell when the sender's view of it is wrong (and two wrong views would
        /// otherwise pass it back and forth for ever; T2).
        height: Sealed,
    },
    /// LINK: the sender's height, on link formation, after a change or in answer to a Probe.
    Link {
        /// The sender's height.
        height: Sealed,
    },
    /// The sender's height, and a request for the receiver's (answered with a LINK): a node
    /// that needs a link whose peer's first LINK it never received asks with it
    /// (`docs/ALGORITHMS.md`, T1; not in the paper).
    Probe {
        /// The sender's height.
        height: Sealed,
    },
    /// The acknowledgement of a TOKEN, carrying the recipient's height: the first message its
    /// sender may trust again (the paper uses a LINK carrying exactly the height the sender
    /// assumed, which one corrupted height would keep unrecognised forever; T3).
    TokenAck {
        /// The sender's height after taking the token.
        height: Sealed,
    },
}

impl Message {
    /// Whether this is the token.
    pub fn is_token(&self) -> bool {
        matches!(self, Message::Token { .. })
    }

    /// Whether the message carries resources (the TOKEN's free count, or released ones): what
    /// must never be lost unnoticed (a link session's precious predicate).
    pub fn carries_resources(&self) -> bool {
        matches!(self, Message::Token { .. } | Message::Release { .. })
    }
}

/// A resource count sent twice. Safety rests on these counts (Σ = k), and no receiver can
/// tell a wrong count from a right one, so the message carries two copies and the receiver
/// acts on the smaller possible one: a copy corrupted on the way can lose resources (reported,
/// never hidden) but never create them (`docs/ALGORITHMS.md`, T4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Resources {
    /// The count.
    pub count: u32,
    /// The same count again.
    pub copy: u32,
}

impl Resources {
    /// `count`, with its copy.
    pub const fn new(count: u32) -> Self {
        Resources { count, copy: count }
    }

    /// The count to act on in a system of `k` resources: the smaller of the copies that are
    /// at most `k` (0 if neither is), and whether the copies agreed and were possible.
    pub fn read(self, k: u32) -> (u32, bool) {
        let possible = |c: u32| (c <= k).then_some(c);
        let value = match (possible(self.count), possible(self.copy)) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => 0,
        };
        (value, self.count == self.copy && self.count <= k)
    }
}
