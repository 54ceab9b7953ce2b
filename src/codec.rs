//! The wire codec (feature `codec`): a small versioned binary frame around one message of any
//! of the four algorithms.
//!
//! The nodes are sans-IO: they hand out [`Message`](crate::reverse_link::Message) values and
//! take them back, and how those travel is the embedder's business. This module is one answer
//! for embedders that need bytes: [`encode`] a message into a frame, send it with whatever
//! delimits datagrams or records on the transport, and [`decode`] it at the other end.
//!
//! ```
//! use manet_mutex::codec::{decode, encode, DecodeError, MAX_FRAME};
//! use manet_mutex::reverse_link::Message;
//! use manet_mutex::token::height::{Height, Sealed};
//! use manet_mutex::{Fence, NodeId};
//!
//! let msg = Message::Token(Sealed::new(Height::new(0, -1, NodeId(2))), Fence::new(0, 7).into());
//! let frame = encode(&msg);
//! assert!(frame.len() <= MAX_FRAME);
//! assert_eq!(decode::<Message>(&frame), Ok(msg));
//!
//! // Bytes that are no frame of a message are an error...
//! assert_eq!(decode::<Message>(&frame[..frame.len() - 1]), Err(DecodeError::Truncated));
//! assert_eq!(decode::<Message>(&[9, 1, 2]), Err(DecodeError::UnknownVersion(9)));
//! // ...but a message whose fields are impossible is a message: the node that receives it
//! // reports it (`Anomaly::OutOfRange`) and does not act on it.
//! let far = Message::LinkInfo(Sealed::new(Height::new(i64::MAX, 0, NodeId(2))));
//! assert_eq!(decode::<Message>(&encode(&far)), Ok(far));
//! ```
//!
//! # Format
//!
//! | bytes | content |
//! | --- | --- |
//! | 0 | the format version, [`VERSION`] (2) |
//! | 1.. | the [postcard](https://docs.rs/postcard) encoding of the message |
//!
//! The postcard encoding of these types is: the variant's index in declaration order (0 for
//! the first variant), then every field in declaration order, with nothing between them (no
//! field names, no lengths). Unsigned integers are LEB128 varints (7 bits a byte, low bits
//! first, so values below 128 take one byte, a `u32` at most 5, a `u64` at most 10), signed
//! ones zigzag-encoded varints (`0, -1, 1, -2, ..` become `0, 1, 2, 3, ..`), a `bool` one byte
//! (0 or 1), and a struct or newtype (heights, sealed heights, timestamps, announcements,
//! resource counts, priorities, [`NodeId`](crate::NodeId), fences) its fields in order, and an
//! array its elements (the three copies of a [`FenceCopies`](crate::FenceCopies)). So the frame
//! of `reverse_link::Message::Token` carrying the sealed height `(0, -1, n2)` is
//! `[2, 1, 0, 1, 2]` followed by the check word's varint and the three fence copies (lane, value).
//!
//! Every message of version 2 encodes in at most 107 bytes (a prioritized TOKEN with every
//! field at its longest; three fence copies at their longest take 45). Typical frames take 11
//! to 30 bytes: counters, ids, heights and fences are usually small (three small fence copies
//! take 6 bytes), and a check word, a full 64-bit value, takes 9 or 10 (a permission REPLY has
//! none and takes 11 to 16 bytes, a sealed height 14 or 15). [`MAX_FRAME`] (128) bounds every
//! frame: a receive buffer of that size holds any frame, and [`decode`] refuses a longer input
//! before reading it. Version 1 had no fences (`docs/ALGORITHMS.md`, F1).
//!
//! The frame has no length, no checksum and no algorithm tag. The transport delimits frames.
//! Corruption is the nodes' business (check words and second copies, see the crate's threat
//! model); a transport checksum makes it rarer but is not needed for safety. A network runs
//! one algorithm, so the receiver knows which `Message` type to decode (a frame decoded as
//! another algorithm's type is an error or a message with meaningless fields, which the nodes
//! cope with like any corrupted message).
//!
//! There is exactly one frame per message: [`decode`] accepts only the bytes [`encode`]
//! produces (postcard alone would also read a varint padded with `0x80` bytes; that is
//! refused as [`DecodeError::Malformed`]). So `encode(&decode(frame)?) == frame`, and two
//! frames that differ are two different messages.
//!
//! # Versioning
//!
//! [`VERSION`] covers the messages of all four algorithms together. Any change to a message
//! type that changes its encoding (a variant added, removed or moved; a field added, removed,
//! moved or retyped) ships with a new version; the crate's tests pin the exact bytes of
//! messages of every algorithm and the index of every variant, so such a change cannot slip in
//! unnoticed. A decoder accepts its own version only ([`DecodeError::UnknownVersion`] for
//! every other first byte): there is no negotiation and no reading of older frames. Nodes of
//! one network must agree on the algorithm and its settings anyway, so a network upgrades
//! together.
//!
//! # What is an error, and what is the node's business
//!
//! [`decode`] answers one question: are these bytes the frame of a message of this type?
//! [`DecodeError`] says why not: the frame is empty or ends early
//! ([`Truncated`](DecodeError::Truncated)), is longer than [`MAX_FRAME`]
//! ([`Oversized`](DecodeError::Oversized), checked first, before any byte is read), starts
//! with another version ([`UnknownVersion`](DecodeError::UnknownVersion)), has a body that no
//! message encodes to: an unknown variant index, a `bool` byte other than 0 or 1, a varint
//! that overflows its field or is padded ([`Malformed`](DecodeError::Malformed)), or goes on
//! after the message ends ([`TrailingBytes`](DecodeError::TrailingBytes)).
//!
//! Whether a message's *values* make sense is not the codec's question. Every field may hold
//! any value its type can (the threat model says a peer's message may), and each decodes: a
//! height outside `±Height::LIMIT` or naming another node, a check word that does not match,
//! two resource counts that disagree or exceed `k`, a timestamp from the far future, a priority
//! above its limit. Only the node can judge these, against its own state, and it does, as the
//! threat model says: it reports them (`Anomaly::OutOfRange`, or `Stale` and `UnknownPeer`
//! where that is what they show) and drops or repairs them (a priority above its limit is cut
//! down to it; a token is kept with the impossible part ignored). Deserialising
//! bypasses no constructor that matters: every field of every message type is public, so a
//! decoded message is one that code could also have built field by field, and
//! [`Sealed::new`](crate::token::height::Sealed::new),
//! [`Announcement::new`](crate::look_ahead::Announcement::new) and the `request` constructors
//! only fill in check words that the receiver verifies and never assumes. The same holds for
//! the `serde` derives alone, with any serde format.
//!
//! # Resources
//!
//! [`decode`] never panics and never allocates, on any input: the input is a slice bounded by
//! [`MAX_FRAME`], postcard reads it in place, and the message types hold only integers, `bool`s
//! and enums of them (no vectors, strings or boxes), so there is no length prefix to trust and
//! nothing to allocate. [`encode_into`] does not allocate either; [`encode`] allocates the
//! returned vector. The crate's tests feed [`decode`] truncated frames, every single-byte
//! change of valid frames, oversized frames, unknown versions and random bytes, and the `decode`
//! fuzz target (`fuzz/`) does so with coverage guidance.

use alloc::vec::Vec;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The format version: the first byte of every frame.
pub const VERSION: u8 = 2;

/// The largest frame, in bytes, version byte included. Every message of every algorithm
/// encodes within it (at most 107 bytes in version 2); [`decode`] refuses a longer input as
/// [`DecodeError::Oversized`] without reading it.
pub const MAX_FRAME: usize = 128;

/// A message type with a wire format: the `Message` of [`reverse_link`](crate::reverse_link),
/// [`prioritized`](crate::prioritized), [`look_ahead`](crate::look_ahead) and
/// [`ricart_agrawala`](crate::ricart_agrawala). Sealed: the bound [`MAX_FRAME`] holds for these
/// types only.
pub trait Wire: Serialize + DeserializeOwned + private::Sealed {}

mod private {
    pub trait Sealed {}
}

macro_rules! wire {
    ($($m:ty),*) => {$(
        impl private::Sealed for $m {}
        impl Wire for $m {}
    )*};
}

wire!(
    crate::reverse_link::Message,
    crate::prioritized::Message,
    crate::look_ahead::Message,
    crate::ricart_agrawala::Message
);

/// Why bytes are not the frame of a message of the expected type. Out-of-range field values
/// are not decode errors (see the [module docs](self#what-is-an-error-and-what-is-the-nodes-business)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The frame ends before the message does: it is empty (no version byte), or the body is
    /// cut short. Every proper prefix of a frame is `Truncated`.
    #[error("truncated frame")]
    Truncated,
    /// The frame is longer than [`MAX_FRAME`]; it was not read.
    #[error("frame of {len} bytes, longer than the largest ({MAX_FRAME})")]
    Oversized {
        /// The frame's length.
        len: usize,
    },
    /// The first byte is not [`VERSION`].
    #[error("unknown frame format version {0}")]
    UnknownVersion(u8),
    /// The body is no message's encoding: an unknown variant index, a `bool` byte other than
    /// 0 or 1, a varint that overflows its field or is padded with needless bytes.
    #[error("malformed frame body")]
    Malformed,
    /// The message ends before the frame does.
    #[error("{extra} bytes after the message")]
    TrailingBytes {
        /// How many bytes follow the message.
        extra: usize,
    },
}

/// The frame of `msg`, in `buf`: the returned slice, at most [`MAX_FRAME`] bytes. Does not
/// allocate.
pub fn encode_into<'b, M: Wire>(msg: &M, buf: &'b mut [u8; MAX_FRAME]) -> &'b [u8] {
    let (version, body) = buf.split_at_mut(1);
    version[0] = VERSION;
    let len = match postcard::to_slice(msg, body) {
        Ok(body) => body.len(),
        // The only way postcard fails on these types is a full buffer.
        Err(_) => unreachable!("every message fits in MAX_FRAME bytes"),
    };
    &buf[..1 + len]
}

/// The frame of `msg`: [`VERSION`], then the message's postcard encoding.
pub fn encode<M: Wire>(msg: &M) -> Vec<u8> {
    encode_into(msg, &mut [0; MAX_FRAME]).to_vec()
}

/// The message whose frame `frame` is, or why it is none. Never panics, never allocates.
///
/// The checks, in order: the length (`Oversized`, `Truncated` if empty), the version, the
/// body (`Truncated`, `Malformed`), what follows it (`TrailingBytes`), and that the frame is
/// the one [`encode`] gives (`Malformed`).
pub fn decode<M: Wire>(frame: &[u8]) -> Result<M, DecodeError> {
    if frame.len() > MAX_FRAME {
        return Err(DecodeError::Oversized { len: frame.len() });
    }
    let (&version, body) = frame.split_first().ok_or(DecodeError::Truncated)?;
    if version != VERSION {
        return Err(DecodeError::UnknownVersion(version));
    }
    let (msg, rest) = postcard::take_from_bytes::<M>(body).map_err(|e| match e {
        postcard::Error::DeserializeUnexpectedEnd => DecodeError::Truncated,
        _ => DecodeError::Malformed,
    })?;
    if !rest.is_empty() {
        return Err(DecodeError::TrailingBytes { extra: rest.len() });
    }
    if encode_into(&msg, &mut [0; MAX_FRAME]) != frame {
        return Err(DecodeError::Malformed);
    }
    Ok(msg)
}
