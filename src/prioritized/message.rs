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
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(remote = "Self")
)]
#[non_exhaustive]
pub enum Message {
    /// TOKEN(t): the unique token, carrying `available` = t free resources.
    Token {
        /// Free resources, `0..=k`.
        available: Resources,
        /// Resources possibly lost to corrupted counts so far (`0..=k`): the token's holder
        /// takes `k - lost` as what can ever be free, so a request above it does not keep
        /// smaller ones waiting (P15).
        lost: Resources,
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
        /// Released resources, `0..=k` (0 only when it carries news of a loss).
        resources: Resources,
        /// Resources possibly lost on the way so far, carried to the token (P15).
        lost: Resources,
        /// The sender's height: a RELEASE goes to the sender's lowest neighbour, so the
        /// receiver can tell when the sender's view of it is wrong (and two wrong views would
        /// otherwise pass it back and forth for ever; T2).
        height: Sealed,
        /// The generation of the token that granted the resources, in three copies (0
        /// without recovery): a token of a later generation counted them free already and
        /// adds nothing (F7).
        generation: [u32; 3],
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
        /// The sender's height after taking the token, with a check word that also covers
        /// `tokens` ([`Sealed::bound`]).
        height: Sealed,
        /// Tokens the sender has received from the receiver over this link since it formed
        /// (modulo 2^16): the acknowledgement settles exactly those, and any later one
        /// repairs a lost one (R13). Build one with [`Message::token_ack`].
        tokens: u16,
    },
    /// The token exists (recovery, [`crate::token::Recovery`]): the fence its holder raised
    /// for this beacon (lane 0, the generation in the value's high half; three copies).
    /// Forwarded once by every node that had not heard of it.
    Beacon {
        /// The token's fence, raised for the beacon.
        fence: FenceCopies,
        /// Hops travelled.
        hops: u16,
        /// The sender's height, unread.
        height: Sealed,
    },
    /// A claim that the token is lost (recovery): the generation to make it again with.
    Claim {
        /// The token id (always 0: there is one token).
        lane: u32,
        /// The claimed generation, in three copies.
        generation: [u32; 3],
        /// The sender's height, unread.
        height: Sealed,
    },
    /// A promise (recovery in majority mode): node `voter` promised the claim `ballot` for the
    /// token, and no other claim of its round. Every node forwards each voter's promise of
    /// the best ballot it heard once.
    Promise {
        /// The token id (always 0).
        lane: u32,
        /// The claim promised (a generation), in three copies.
        ballot: [u32; 3],
        /// The node that promised.
        voter: u32,
        /// The sender's height, unread, with a check word that also covers `lane`, `voter`
        /// and `ballot` ([`Message::promise`]).
        height: Sealed,
    },
}

impl Message {
    /// A token acknowledgement: our height, and the number of tokens received from the
    /// receiver over this link (modulo 2^16), both under the check word.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn token_ack(height: crate::token::Height, tokens: u16) -> Message {
        Message::TokenAck {
            height: Sealed::bound(height, u64::from(tokens)),
            tokens,
        }
    }

    /// `voter`'s promise of `ballot` for token `lane`, sent at `height`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn promise(height: crate::token::Height, lane: u32, ballot: u32, voter: u32) -> Message {
        Message::Promise {
            lane,
            ballot: [ballot; 3],
            voter,
            height: Sealed::bound(
                height,
                crate::token::recovery::promise_word(lane, voter, [ballot; 3]),
            ),
        }
    }

    /// The message with its check word XORed with its kind's tag (W2).
    #[cfg(feature = "serde")]
    fn tagged(self) -> Self {
        const DOMAIN: u64 = 0x7072_696f_2d6b_696e; // "prio-kin"
        let tag = |variant| crate::seal::kind_tag(DOMAIN, variant);
        match self {
            Message::Token {
                available,
                lost,
                priority,
                height,
                fence,
            } => Message::Token {
                available,
                lost,
                priority,
                height: height.tagged(tag(0)),
                fence,
            },
            Message::Request { priority, height } => Message::Request {
                priority,
                height: height.tagged(tag(1)),
            },
            // UPDATE has no check word: its layout is shared with no other kind (W2).
            update @ Message::Update { .. } => update,
            Message::Release {
                resources,
                lost,
                height,
                generation,
            } => Message::Release {
                resources,
                lost,
                height: height.tagged(tag(3)),
                generation,
            },
            Message::Link { height } => Message::Link {
                height: height.tagged(tag(4)),
            },
            Message::Probe { height } => Message::Probe {
                height: height.tagged(tag(5)),
            },
            Message::TokenAck { height, tokens } => Message::TokenAck {
                height: height.tagged(tag(6)),
                tokens,
            },
            Message::Beacon {
                fence,
                hops,
                height,
            } => Message::Beacon {
                fence,
                hops,
                height: height.tagged(tag(7)),
            },
            Message::Claim {
                lane,
                generation,
                height,
            } => Message::Claim {
                lane,
                generation,
                height: height.tagged(tag(8)),
            },
            Message::Promise {
                lane,
                ballot,
                voter,
                height,
            } => Message::Promise {
                lane,
                ballot,
                voter,
                height: height.tagged(tag(9)),
            },
        }
    }

    /// Whether the height's check word matches what it covers (the height, and an
    /// acknowledgement's count); an UPDATE has none and is always intact.
    // Hidden: the workspace's tests and model checkers use it; not stable API.
    #[doc(hidden)]
    pub fn is_intact(&self) -> bool {
        match *self {
            Message::TokenAck { height, tokens } => height.is_intact_with(u64::from(tokens)),
            Message::Promise {
                height,
                lane,
                ballot,
                voter,
            } => height.is_intact_with(crate::token::recovery::promise_word(lane, voter, ballot)),
            Message::Token { height, .. }
            | Message::Request { height, .. }
            | Message::Release { height, .. }
            | Message::Link { height }
            | Message::Probe { height }
            | Message::Beacon { height, .. }
            | Message::Claim { height, .. } => height.is_intact(),
            Message::Update { .. } => true,
        }
    }

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

/// A resource count sent three times. Safety rests on these counts (Σ = k), and no receiver
/// can tell a wrong count from a right one, so the message carries three copies and the
/// receiver reads them by majority, like a fence ([`crate::FenceCopies`]): one copy corrupted
/// on the way is outvoted, so it neither creates nor loses resources. Copies without a
/// possible majority (a forgery, or several corrupted fields) are read at the smallest
/// possible copy: resources may then be lost (reported, never hidden) but not created
/// (`docs/ALGORITHMS.md`, T4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Resources(pub [u32; 3]);

impl Resources {
    /// Three copies of `count`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub const fn new(count: u32) -> Self {
        Resources([count; 3])
    }

    /// The count to act on in a system of `k` resources: the value at least two copies agree
    /// on if it is at most `k`, else the smallest copy that is (0 if none is); and whether all
    /// three agreed and were possible.
    pub(crate) fn read(self, k: u32) -> (u32, bool) {
        let value = match crate::fence::majority(self.0).filter(|&c| c <= k) {
            Some(c) => c,
            None => self.0.into_iter().filter(|&c| c <= k).min().unwrap_or(0),
        };
        let [a, b, c] = self.0;
        (value, a == b && b == c && a <= k)
    }

    /// What [`Resources::read`] may have given up: nothing when a possible majority decides,
    /// else the difference between the largest and the smallest possible copy.
    pub(crate) fn at_risk(self, k: u32) -> u32 {
        if crate::fence::majority(self.0).is_some_and(|c| c <= k) {
            return 0;
        }
        let possible = self.0.into_iter().filter(|&c| c <= k);
        let (lo, hi) = possible.fold((u32::MAX, 0), |(lo, hi), c| (lo.min(c), hi.max(c)));
        hi.saturating_sub(lo)
    }

    /// The largest copy that is at most `k` (`k` if none is): how a report of lost resources
    /// is read, erring towards a smaller capacity (P15).
    pub(crate) fn read_high(self, k: u32) -> u32 {
        match crate::fence::majority(self.0).filter(|&c| c <= k) {
            Some(c) => c,
            None => self.0.into_iter().filter(|&c| c <= k).max().unwrap_or(k),
        }
    }
}

#[cfg(feature = "serde")]
crate::seal::tagged_serde!(Message);
