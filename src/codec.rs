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
//! assert_eq!(decode::<Message>(&frame[..4]), Err(DecodeError::Truncated));
//! let mut flipped = frame.clone();
//! flipped[1] ^= 0x02; // the kind: TOKEN (1) would read as PROBE (3)
//! assert_eq!(decode::<Message>(&flipped), Err(DecodeError::Checksum));
//! let mut future = frame.clone();
//! future[0] = 9;
//! assert_eq!(decode::<Message>(&future), Err(DecodeError::UnknownVersion(9)));
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
//! | 0 | the format version, [`VERSION`] (4) |
//! | 1..n−4 | the body: the [postcard](https://docs.rs/postcard) encoding of the message |
//! | n−4..n | the frame check: the CRC-32C (Castagnoli) of bytes 0..n−4, version byte included, little endian |
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
//! `[4, 1, 0, 1, 2]` followed by the check word's varint, the three fence copies (lane, value)
//! and the frame check; and the frame of a `ricart_agrawala` REPLY with timestamp `(1, n1)`,
//! sequence number 1 and three fence copies `(0, 0)` is, in full,
//!
//! ```text
//! 04  01  01 01  01  b1 f1 ca 86 ef 92 ce 88 ca 01  00 00 00 00 00 00  bb 02 ba 6b
//! ver REPLY ts   seq check word (tagged, LEB128)    fence copies       CRC-32C (0x6bba02bb)
//! ```
//!
//! Every message of version 4 encodes in at most 131 bytes (a prioritized TOKEN with every field at
//! its longest; three fence copies at their longest take 45, two counts of three resource copies
//! 30), as the test `the_largest_frames_fit_max_frame` computes and checks against this sentence.
//! Typical frames take 18 to 33 bytes (measured by `every_algorithm_runs_over_frames`): counters,
//! ids, heights and fences are usually small (three small fence copies take 6 bytes), and a check
//! word, a full 64-bit value, takes 9 or 10 (a permission REPLY 24 to 27 bytes, a sealed height 14
//! or 15). [`MAX_FRAME`] (160) bounds every frame, with room for fields a later
//! version may add: a receive buffer of that size holds any frame, and [`decode`] refuses a longer
//! input before reading it. Version 1 had no fences (`docs/ALGORITHMS.md`, F1), version 2 no frame
//! check (W1), version 3 no check word in the permission algorithms' REPLYs (A7).
//!
//! The frame has no length and no algorithm tag. The transport delimits frames. A network runs
//! one algorithm, so the receiver knows which `Message` type to decode (a frame decoded as
//! another algorithm's type is an error or a message with meaningless fields, which the nodes
//! cope with like any corrupted message).
//!
//! There is exactly one frame per message: [`decode`] accepts only the bytes [`encode`]
//! produces (postcard alone would also read a varint padded with `0x80` bytes; that is
//! refused as [`DecodeError::Malformed`]). So `encode(&decode(frame)?) == frame`, and two
//! frames that differ are two different messages.
//!
//! # The frame check
//!
//! The check covers every bit of the frame, the message kind included. Several kinds of one
//! algorithm share a layout and differ by one bit of postcard's variant index, so before
//! version 3 one flipped bit could turn, say, a prioritized REQUEST into a RELEASE that decoded
//! cleanly (issue 21). Since version 3 the messages' own check words cover the kind as well
//! (their serde encoding XORs each word with a tag of its variant, `docs/ALGORITHMS.md`, W2),
//! in any serde format; the frame check adds every other bit (fields without a check word,
//! the varints' structure, the version). [`decode`] verifies the check before it interprets
//! any byte of the body.
//! For frames of at most [`MAX_FRAME`] bytes it detects, for certain:
//!
//! - every error of up to 5 flipped bits, anywhere in the frame (the code's Hamming distance
//!   is 6 at these lengths), and every error of an odd number of bits (the Castagnoli
//!   polynomial has the factor x + 1). The test `crc_detects_every_error_of_up_to_five_bits`
//!   proves this exhaustively over every bit position of a [`MAX_FRAME`]-byte frame (which
//!   covers every shorter one), and `crc_misses_some_six_bit_errors` shows 5 is the bound: some
//!   6-bit errors of the largest frame of version 4 pass;
//! - every burst: any errors confined to 32 consecutive bits
//!   (`crc_detects_every_burst_of_up_to_32_bits` proves it too).
//!
//! Other corruption (more scattered bits, a frame cut short or run on) passes only if the last
//! four bytes happen to match the rest: random bytes do with probability 2^-32, and must then
//! also be a valid body to decode.
//!
//! It detects corruption, not forgery: there is no key, and anyone can compute a CRC, so a
//! peer or anything on the path can make a frame that passes with any field values. The nodes
//! still judge every value they receive (see below). And it covers the frame only: the nodes'
//! own check words and second copies (heights, announcements, requests, fences, resource
//! counts; the crate's threat model) still protect the typed messages, for embedders that
//! carry them in another encoding (the `serde` derives with any format) and against
//! corruption before encoding or after decoding.
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
//! [`DecodeError`] says why not, in the order [`decode`] checks: the frame is longer than
//! [`MAX_FRAME`] ([`Oversized`](DecodeError::Oversized), before any byte is read), too short
//! for a version byte and the check ([`Truncated`](DecodeError::Truncated)), starts with
//! another version ([`UnknownVersion`](DecodeError::UnknownVersion): checked before the frame
//! check, so a frame of a later version, whose check may differ, is reported as such; a
//! corrupted version byte is reported so too), fails the frame check
//! ([`Checksum`](DecodeError::Checksum)), or has a body that ends early (`Truncated`), that
//! no message encodes to: an unknown variant index, a `bool` byte other than 0 or 1, a varint
//! that overflows its field or is padded ([`Malformed`](DecodeError::Malformed)), or that
//! goes on after the message ends ([`TrailingBytes`](DecodeError::TrailingBytes)).
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
//! change and every single-bit flip of valid frames, oversized frames, unknown versions and
//! random bytes, each also with its frame check made right so that the body decoder sees it,
//! and the `decode` fuzz target (`fuzz/`) does both with coverage guidance.

use alloc::vec::Vec;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The format version: the first byte of every frame.
pub const VERSION: u8 = 4;

/// The largest frame, in bytes, version byte and frame check included. Every message of every
/// algorithm encodes within it (at most 131 bytes in version 4; the rest is room for fields a
/// later version may add); [`decode`] refuses a longer input as [`DecodeError::Oversized`]
/// without reading it.
pub const MAX_FRAME: usize = 160;

/// The frame check's length: a CRC-32C, little endian, after the body.
pub const CHECK_LEN: usize = 4;

/// The shortest input that can be a frame: a version byte and the frame check. A body is
/// never empty, so every frame is longer.
const MIN_LEN: usize = 1 + CHECK_LEN;

/// CRC-32C (Castagnoli, as in iSCSI and SCTP) rather than the IEEE CRC-32: over frames this
/// long it detects every error of up to 5 bits (proved by the tests), where the IEEE
/// polynomial misses some 5-bit errors of a 131-byte frame (Koopman 2002: Hamming distance 5
/// above 268 data bits).
const CASTAGNOLI: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// The frame check of `bytes`: their CRC-32C, little endian. In a frame, `bytes` are the
/// version byte and the body; other formats may close their own frames with it (the cluster
/// example's datagrams do).
pub fn frame_check(bytes: &[u8]) -> [u8; CHECK_LEN] {
    CASTAGNOLI.checksum(bytes).to_le_bytes()
}

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
    /// The frame is too short for a version byte and the frame check, or its body ends before
    /// the message does. A proper prefix of a frame is `Truncated` if it is that short, and
    /// otherwise fails the [`Checksum`](Self::Checksum) (unless by chance it ends in the check
    /// of the rest; then its body is cut short).
    #[error("truncated frame")]
    Truncated,
    /// The frame is longer than [`MAX_FRAME`]; it was not read.
    #[error("frame of {len} bytes, longer than the largest ({MAX_FRAME})")]
    Oversized {
        /// The frame's length.
        len: usize,
    },
    /// The first byte is not [`VERSION`]. Checked before the frame check, so that a frame of
    /// another version is reported as such; a corrupted version byte is reported so too.
    #[error("unknown frame format version {0}")]
    UnknownVersion(u8),
    /// The last [`CHECK_LEN`] bytes are not the CRC-32C of the rest: the frame was corrupted
    /// (or is no frame). No byte of the body was interpreted.
    #[error("frame check failed")]
    Checksum,
    /// The body is no message's encoding: an unknown variant index, a `bool` byte other than
    /// 0 or 1, a varint that overflows its field or is padded with needless bytes.
    #[error("malformed frame body")]
    Malformed,
    /// The message ends before the body does.
    #[error("{extra} bytes after the message")]
    TrailingBytes {
        /// How many bytes of the body follow the message.
        extra: usize,
    },
}

/// The frame of `msg`, in `buf`: the returned slice, at most [`MAX_FRAME`] bytes. Does not
/// allocate.
pub fn encode_into<'b, M: Wire>(msg: &M, buf: &'b mut [u8; MAX_FRAME]) -> &'b [u8] {
    let (version, rest) = buf.split_at_mut(1);
    version[0] = VERSION;
    let body = &mut rest[..MAX_FRAME - MIN_LEN];
    let len = match postcard::to_slice(msg, body) {
        Ok(body) => 1 + body.len(),
        // The only way postcard fails on these types is a full buffer.
        Err(_) => unreachable!("every message fits in MAX_FRAME bytes"),
    };
    let check = frame_check(&buf[..len]);
    buf[len..len + CHECK_LEN].copy_from_slice(&check);
    &buf[..len + CHECK_LEN]
}

/// The frame of `msg`: [`VERSION`], the message's postcard encoding, the frame check.
pub fn encode<M: Wire>(msg: &M) -> Vec<u8> {
    encode_into(msg, &mut [0; MAX_FRAME]).to_vec()
}

/// The message whose frame `frame` is, or why it is none. Never panics, never allocates.
///
/// The checks, in order: the length (`Oversized`; `Truncated` if shorter than a version byte
/// and the frame check), the version (`UnknownVersion`), the frame check (`Checksum`, before
/// any byte of the body is interpreted), the body (`Truncated`, `Malformed`), what follows the
/// message in it (`TrailingBytes`), and that the frame is the one [`encode`] gives
/// (`Malformed`).
pub fn decode<M: Wire>(frame: &[u8]) -> Result<M, DecodeError> {
    if frame.len() > MAX_FRAME {
        return Err(DecodeError::Oversized { len: frame.len() });
    }
    if frame.len() < MIN_LEN {
        return Err(DecodeError::Truncated);
    }
    let (checked, check) = frame.split_at(frame.len() - CHECK_LEN);
    if checked[0] != VERSION {
        return Err(DecodeError::UnknownVersion(checked[0]));
    }
    if frame_check(checked) != check {
        return Err(DecodeError::Checksum);
    }
    let msg = decode_body::<M>(&checked[1..])?;
    if encode_into(&msg, &mut [0; MAX_FRAME]) != frame {
        return Err(DecodeError::Malformed);
    }
    Ok(msg)
}

/// The longest body (the postcard encoding of a message): a frame less its version byte and
/// its frame check.
pub(crate) const MAX_BODY: usize = MAX_FRAME - MIN_LEN;

/// The body of `msg` (its postcard encoding, no version, no check) appended to `out`, for
/// formats that frame messages themselves (the [driver](crate::driver)'s frames).
pub(crate) fn encode_body<M: Wire>(msg: &M, out: &mut Vec<u8>) {
    let mut buf = [0; MAX_BODY];
    match postcard::to_slice(msg, &mut buf) {
        Ok(body) => out.extend_from_slice(body),
        Err(_) => unreachable!("every message fits in MAX_FRAME bytes"),
    }
}

/// The message whose body (as [`encode_body`] makes it) `body` is, all of it: `Truncated`,
/// `Malformed` (no message's encoding, or not the one [`encode_body`] gives: a padded
/// varint) or `TrailingBytes`. The caller checks the frame around it first. Never panics,
/// never allocates.
pub(crate) fn decode_body<M: Wire>(body: &[u8]) -> Result<M, DecodeError> {
    if body.len() > MAX_BODY {
        return Err(DecodeError::Oversized { len: body.len() });
    }
    let (msg, rest) = postcard::take_from_bytes::<M>(body).map_err(|e| match e {
        postcard::Error::DeserializeUnexpectedEnd => DecodeError::Truncated,
        _ => DecodeError::Malformed,
    })?;
    if !rest.is_empty() {
        return Err(DecodeError::TrailingBytes { extra: rest.len() });
    }
    let mut buf = [0; MAX_BODY];
    match postcard::to_slice(&msg, &mut buf) {
        Ok(again) if again == body => Ok(msg),
        _ => Err(DecodeError::Malformed),
    }
}
