//! KRL messages. Every message carries the sender's height at the time it was sent, sealed
//! with a check word ([`Sealed`]).

use crate::token::height::{Height, Sealed};
use crate::FenceCopies;

/// A KRL/KRLF protocol message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(remote = "Self")
)]
#[non_exhaustive]
pub enum Message {
    /// Ask the receiver for a token on behalf of the sender's queue.
    Request(Sealed),
    /// One token, and its identity: its id (`lane`, `0..k`) and the fence of the last entry
    /// made with it (`value`), in three copies ([`FenceCopies`]).
    Token(Sealed, FenceCopies),
    /// The sender's height, on link formation, after a change, or in answer to a Probe.
    LinkInfo(Sealed),
    /// The sender's height, and a request for the receiver's (answered with a LinkInfo): a
    /// node that needs a link whose peer's first LinkInfo it never received (it arrived before
    /// the node's own `LinkUp`) asks with it (`docs/ALGORITHMS.md`, T1; not in the paper).
    Probe(Sealed),
    /// The sender's height, sent to acknowledge a token: the first message the token's sender
    /// may trust from it again (the paper sends a LinkInfo carrying a guessed height instead;
    /// see `docs/ALGORITHMS.md`, R1), and how many tokens the sender has received from the
    /// receiver over this link since it formed (modulo 2^16). The check word covers the count
    /// ([`Sealed::bound`]); a token's receiver also answers every height question of the
    /// token's sender with a `TokenAck`, so a corrupted acknowledgement is repaired by the
    /// next one (R13). Build one with [`Message::token_ack`].
    TokenAck(Sealed, u16),
    /// A token exists (recovery, [`crate::token::Recovery`]): the fence its holder raised for
    /// this beacon (its id is the `lane`, its generation the value's high half; three
    /// copies), and the hops it travelled. Every node forwards a beacon newer than any it has
    /// heard of for that token id, once. The sender's height rides along, unread.
    Beacon(Sealed, FenceCopies, u16),
    /// A claim that token `lane` is lost (recovery): the sender (or a node it heard) proposes
    /// to make it again with the generation in three copies. A better claim (a later round,
    /// or the same round from a smaller id) silences a worse one. The sender's height rides
    /// along, unread.
    Claim(Sealed, u32, [u32; 3]),
    /// A promise (recovery in majority mode): node `voter` (the last field) promised the
    /// claim of generation (ballot) in three copies for token `lane` (the second field), and
    /// no other claim of its round. Every node forwards each voter's promise of the best
    /// ballot it heard once. The check word covers the height, the lane, the voter and the
    /// ballot
    /// ([`Message::promise`]).
    Promise(Sealed, u32, [u32; 3], u32),
}

impl Message {
    /// A token acknowledgement: our height, and the number of tokens received from the
    /// receiver over this link (modulo 2^16), both under the check word.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn token_ack(height: Height, tokens: u16) -> Message {
        Message::TokenAck(Sealed::bound(height, u64::from(tokens)), tokens)
    }

    /// `voter`'s promise of `ballot` for token `lane`, sent at `height`.
    // Hidden: the workspace's test kit and tests build messages with it; not stable API.
    #[doc(hidden)]
    pub fn promise(height: Height, lane: u32, ballot: u32, voter: u32) -> Message {
        let word = crate::token::recovery::promise_word(lane, voter, [ballot; 3]);
        Message::Promise(Sealed::bound(height, word), lane, [ballot; 3], voter)
    }

    /// The height the message carries, or [`Height::CORRUPTED`] if it fails its check word.
    // Hidden: the workspace's tests and model checkers use it; not stable API.
    #[doc(hidden)]
    pub fn height(&self) -> Height {
        match *self {
            Message::TokenAck(h, tokens) => h.open_with(u64::from(tokens)),
            Message::Promise(h, lane, ballot, voter) => {
                h.open_with(crate::token::recovery::promise_word(lane, voter, ballot))
            }
            _ => self.sealed().open(),
        }
    }

    /// Whether the check word matches what it covers (the height, and an acknowledgement's
    /// count).
    // Hidden: the workspace's tests and model checkers use it; not stable API.
    #[doc(hidden)]
    pub fn is_intact(&self) -> bool {
        match *self {
            Message::TokenAck(h, tokens) => h.is_intact_with(u64::from(tokens)),
            Message::Promise(h, lane, ballot, voter) => {
                h.is_intact_with(crate::token::recovery::promise_word(lane, voter, ballot))
            }
            _ => self.sealed().is_intact(),
        }
    }

    /// The height the message carries, with its check word, as it travelled.
    // Hidden: the workspace's tests and model checkers use it; not stable API.
    #[doc(hidden)]
    pub fn sealed(&self) -> Sealed {
        match *self {
            Message::Request(h)
            | Message::Token(h, _)
            | Message::LinkInfo(h)
            | Message::Probe(h)
            | Message::TokenAck(h, _)
            | Message::Beacon(h, _, _)
            | Message::Claim(h, _, _)
            | Message::Promise(h, _, _, _) => h,
        }
    }

    /// Whether this is a token.
    pub fn is_token(&self) -> bool {
        matches!(self, Message::Token(..))
    }

    /// A token's identity as it travelled (`None` for other messages).
    pub(crate) fn token_fence(&self) -> Option<FenceCopies> {
        match *self {
            Message::Token(_, fence) => Some(fence),
            _ => None,
        }
    }

    /// The message with its check word XORed with its kind's tag (W2).
    #[cfg(feature = "serde")]
    fn tagged(self) -> Self {
        const DOMAIN: u64 = 0x6b72_6c2d_6b69_6e64; // "krl-kind"
        let tag = |variant| crate::seal::kind_tag(DOMAIN, variant);
        match self {
            Message::Request(h) => Message::Request(h.tagged(tag(0))),
            Message::Token(h, fence) => Message::Token(h.tagged(tag(1)), fence),
            Message::LinkInfo(h) => Message::LinkInfo(h.tagged(tag(2))),
            Message::Probe(h) => Message::Probe(h.tagged(tag(3))),
            Message::TokenAck(h, n) => Message::TokenAck(h.tagged(tag(4)), n),
            Message::Beacon(h, fence, hops) => Message::Beacon(h.tagged(tag(5)), fence, hops),
            Message::Claim(h, lane, generation) => {
                Message::Claim(h.tagged(tag(6)), lane, generation)
            }
            Message::Promise(h, lane, ballot, voter) => {
                Message::Promise(h.tagged(tag(7)), lane, ballot, voter)
            }
        }
    }
}

#[cfg(feature = "serde")]
crate::seal::tagged_serde!(Message);
