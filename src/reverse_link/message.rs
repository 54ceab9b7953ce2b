//! KRL messages. Every message carries the sender's height at the time it was sent.

use crate::height::Height;

/// A KRL/KRLF protocol message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Message {
    /// Ask the receiver for a token on behalf of the sender's queue.
    Request(Height),
    /// One token.
    Token(Height),
    /// The sender's height, after a change, or in answer to a Hello.
    LinkInfo(Height),
    /// The sender's height when its link layer reported the link to the receiver; a second
    /// Hello from a member of `N` asks for the receiver's height (each end of a link learns
    /// of it at its own time, see `docs/ALGORITHMS.md`, T1).
    Hello(Height),
    /// The sender's height, sent to acknowledge a token: the first message the token's sender
    /// may trust from it again (the paper sends a LinkInfo carrying a guessed height instead;
    /// see `docs/ALGORITHMS.md`).
    TokenAck(Height),
}

impl Message {
    /// The height the message carries.
    pub fn height(&self) -> Height {
        match *self {
            Message::Request(h)
            | Message::Token(h)
            | Message::LinkInfo(h)
            | Message::Hello(h)
            | Message::TokenAck(h) => h,
        }
    }

    /// Whether this is a token.
    pub fn is_token(&self) -> bool {
        matches!(self, Message::Token(_))
    }
}
