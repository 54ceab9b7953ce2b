//! The driver's frames on the wire: one format for the session frames of the token
//! algorithms and the messages of the permission algorithms, beside discovery's hellos.
//!
//! | bytes | content |
//! | --- | --- |
//! | 1 | [`VERSION`] (`0x83`) |
//! | 1 | the kind: [`Kind`] (0 a core message, 1 `Hello`, 2 `Data`, 3 `Ack`, 4 `Close`, 5 `CloseAck`) |
//! | 1..=5 | the sender's id, a LEB128 varint |
//! | 1..=5 | the receiver's id, a varint |
//! | 1..=10 each | session frames: the epochs (sender's, receiver's), varints |
//! | 1..=10 | `Data` and `Ack`: `seq`; `Close`: `last`; a varint |
//! | the rest | a core message and `Data`: the message's body, as the [codec](crate::codec) encodes it (postcard) |
//! | 4 | the frame check: the CRC-32C of every byte before it, little endian ([`codec::frame_check`](crate::codec::frame_check)) |
//!
//! Varints are the hello's (7 bits a byte, low bits first, no padding). Every frame has
//! exactly one encoding: [`decode`] takes only what [`encode`] makes, so
//! `encode(decode(bytes)?) == bytes`. The first byte tells the three formats that can share
//! one socket apart: the codec's frames start with their version (4), discovery's hellos with
//! `0x81`, the driver's frames with `0x83`.

use alloc::vec::Vec;

use crate::codec::{decode_body, encode_body, frame_check, DecodeError, Wire, CHECK_LEN};
use crate::discovery::hello::wire::{put, take};
use crate::session::{Epochs, Frame as SessionFrame};
use crate::NodeId;

/// The first byte of every driver frame: the driver's wire format 2, with the high bit set
/// (discovery's hellos are `0x81`, the codec's message frames below 128). Format 1 (`0x82`)
/// carried codec version 3's bodies, whose REPLYs had no check word (`docs/ALGORITHMS.md`, A7).
pub const VERSION: u8 = 0x83;

/// The longest driver frame: version, kind, two ids (5 bytes each), two epochs and a number
/// (10 each), the longest message body (155), the frame check (4): 205 bytes.
/// [`decode`] refuses a longer input unread.
pub const MAX_DRIVER_FRAME: usize = 2 + 2 * 5 + 3 * 10 + crate::codec::MAX_BODY + CHECK_LEN;

/// The second byte of a driver frame: what it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A core message sent directly (permission algorithms).
    Message = 0,
    /// A session `Hello`.
    Hello = 1,
    /// A session `Data` frame.
    Data = 2,
    /// A session `Ack`.
    Ack = 3,
    /// A session `Close`.
    Close = 4,
    /// A session `CloseAck`.
    CloseAck = 5,
}

/// What a driver frame carries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Payload<M> {
    /// A core message, sent directly (permission algorithms).
    Message(M),
    /// A link session's frame (token algorithms).
    Session(SessionFrame<M>),
}

impl<M> Payload<M> {
    /// The frame's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Payload::Message(_) => Kind::Message,
            Payload::Session(SessionFrame::Hello { .. }) => Kind::Hello,
            Payload::Session(SessionFrame::Data { .. }) => Kind::Data,
            Payload::Session(SessionFrame::Ack { .. }) => Kind::Ack,
            Payload::Session(SessionFrame::Close { .. }) => Kind::Close,
            Payload::Session(SessionFrame::CloseAck { .. }) => Kind::CloseAck,
        }
    }
}

/// A decoded driver frame: who says it sent it, to whom, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Envelope<M> {
    /// The sender, as the frame names it.
    pub from: NodeId,
    /// The receiver, as the frame names it.
    pub to: NodeId,
    /// The payload.
    pub payload: Payload<M>,
}

/// The frame of `envelope`, appended to `out` (at most [`MAX_DRIVER_FRAME`] bytes).
pub fn encode_into<M: Wire>(envelope: &Envelope<M>, out: &mut Vec<u8>) {
    let start = out.len();
    let mut head = [0; 2 + 2 * 5 + 3 * 10];
    head[0] = VERSION;
    head[1] = envelope.payload.kind() as u8;
    let mut at = put(&mut head, 2, u64::from(envelope.from.0));
    at = put(&mut head, at, u64::from(envelope.to.0));
    let epochs = |head: &mut [u8], at: usize, e: &Epochs| {
        let at = put(head, at, e.sender);
        put(head, at, e.receiver)
    };
    let msg = match &envelope.payload {
        Payload::Message(msg) => Some(msg),
        Payload::Session(frame) => match frame {
            SessionFrame::Hello { epochs: e } | SessionFrame::CloseAck { epochs: e } => {
                at = epochs(&mut head, at, e);
                None
            }
            SessionFrame::Ack { epochs: e, seq: n }
            | SessionFrame::Close { epochs: e, last: n } => {
                at = epochs(&mut head, at, e);
                at = put(&mut head, at, *n);
                None
            }
            SessionFrame::Data {
                epochs: e,
                seq,
                msg,
            } => {
                at = epochs(&mut head, at, e);
                at = put(&mut head, at, *seq);
                Some(msg)
            }
        },
    };
    out.extend_from_slice(&head[..at]);
    if let Some(msg) = msg {
        encode_body(msg, out);
    }
    let check = frame_check(&out[start..]);
    out.extend_from_slice(&check);
}

/// The frame of `envelope`.
pub fn encode<M: Wire>(envelope: &Envelope<M>) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_DRIVER_FRAME);
    encode_into(envelope, &mut out);
    out
}

/// The envelope whose frame `bytes` is, or why it is none. Never panics, never allocates.
///
/// The checks, in order, with the codec's errors: the length (`Oversized` above
/// [`MAX_DRIVER_FRAME`], unread; `Truncated` below 8 bytes), the first byte
/// (`UnknownVersion`), the frame check (`Checksum`, before any other byte is read), then the
/// fields: an unknown kind, a varint that overflows its field or is padded, or a body that
/// is no message's are `Malformed`; a field cut short is `Truncated`; bytes after the last
/// field of a frame without a message are `TrailingBytes`.
pub fn decode<M: Wire>(bytes: &[u8]) -> Result<Envelope<M>, DecodeError> {
    if bytes.len() > MAX_DRIVER_FRAME {
        return Err(DecodeError::Oversized { len: bytes.len() });
    }
    if bytes.len() < 4 + CHECK_LEN {
        return Err(DecodeError::Truncated);
    }
    let (body, check) = bytes.split_at(bytes.len() - CHECK_LEN);
    if body[0] != VERSION {
        return Err(DecodeError::UnknownVersion(body[0]));
    }
    if frame_check(body) != check {
        return Err(DecodeError::Checksum);
    }
    let kind = body[1];
    if kind > Kind::CloseAck as u8 {
        return Err(DecodeError::Malformed);
    }
    let mut at = 2;
    let id = u64::from(u32::MAX);
    let from = NodeId(take(body, &mut at, id)? as u32);
    let to = NodeId(take(body, &mut at, id)? as u32);
    let payload = if kind == Kind::Message as u8 {
        Payload::Message(decode_body(&body[at..])?)
    } else {
        let epochs = Epochs {
            sender: take(body, &mut at, u64::MAX)?,
            receiver: take(body, &mut at, u64::MAX)?,
        };
        let frame = match kind {
            1 => SessionFrame::Hello { epochs },
            2 => {
                let seq = take(body, &mut at, u64::MAX)?;
                let msg = decode_body(&body[at..])?;
                at = body.len();
                SessionFrame::Data { epochs, seq, msg }
            }
            3 => SessionFrame::Ack {
                epochs,
                seq: take(body, &mut at, u64::MAX)?,
            },
            4 => SessionFrame::Close {
                epochs,
                last: take(body, &mut at, u64::MAX)?,
            },
            _ => SessionFrame::CloseAck { epochs },
        };
        if at < body.len() {
            return Err(DecodeError::TrailingBytes {
                extra: body.len() - at,
            });
        }
        Payload::Session(frame)
    };
    Ok(Envelope { from, to, payload })
}
