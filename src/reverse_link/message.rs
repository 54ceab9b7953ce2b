//! KRL messages. Every message carries the sender's height at the time it was sent, sealed
//! with a check word ([`Sealed`]).

use crate::token::height::{Height, Sealed};
use crate::FenceCopies;

/// A KRL/KRLF protocol message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
    /// see `docs/ALGORITHMS.md`).
    TokenAck(Sealed),
}

impl Message {
    /// The height the message carries, or [`Height::CORRUPTED`] if it fails its check word.
    pub fn height(&self) -> Height {
        self.sealed().open()
    }

    /// The height the message carries, with its check word, as it travelled.
    pub fn sealed(&self) -> Sealed {
        match *self {
            Message::Request(h)
            | Message::Token(h, _)
            | Message::LinkInfo(h)
            | Message::Probe(h)
            | Message::TokenAck(h) => h,
        }
    }

    /// Whether this is a token.
    pub fn is_token(&self) -> bool {
        matches!(self, Message::Token(..))
    }

    /// A token's identity as it travelled (`None` for other messages).
    pub fn token_fence(&self) -> Option<FenceCopies> {
        match *self {
            Message::Token(_, fence) => Some(fence),
            _ => None,
        }
    }
}
