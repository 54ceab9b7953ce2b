//! What travels between nodes: one datagram per core message (permission algorithms) or per
//! session frame (token algorithms), behind a small header naming the sender, closed by a
//! check.
//!
//! | bytes | content |
//! | --- | --- |
//! | 0 | [`MAGIC`] |
//! | 1 | the kind: a core message, or which session frame |
//! | 2..6 | the sender's id, `u32` little endian |
//! | 6.. | session frames: the epochs (two `u64`), then `seq`/`last` (`u64`) if the frame has one; all little endian |
//! | then | a core message, if the datagram carries one: its `codec` frame |
//! | last 4 | the CRC-32C of every byte before it, header included, little endian |
//!
//! The codec frame has its own check, but it covers only the frame: without the datagram's,
//! one flipped bit of the header or of the session fields would name another sender, epoch or
//! sequence number and be believed. A datagram whose check fails is checked no further and
//! counted as garbage, like any other datagram that is not of this format (UDP's own checksum
//! is 16 bits and optional over IPv4).
//!
//! The header is not authenticated (the check has no key): a node believes the id only if
//! the datagram comes from that peer's address.

use manet_mutex::codec::{self, Wire, CHECK_LEN, MAX_FRAME};
use manet_mutex::session::{Epochs, Frame};
use manet_mutex::NodeId;

/// The first byte of every datagram between nodes.
pub const MAGIC: u8 = 0x4d;
/// The longest datagram: header, epochs, a sequence number, the longest codec frame, the check.
pub const MAX_DATAGRAM: usize = 6 + 24 + MAX_FRAME + CHECK_LEN;
// The datagram check is the codec's (`codec::frame_check`, `CHECK_LEN` bytes), for the same
// reasons: every error of up to 5 bits is detected at these lengths.

const CORE: u8 = 0;
const HELLO: u8 = 1;
const DATA: u8 = 2;
const ACK: u8 = 3;
const CLOSE: u8 = 4;
const CLOSE_ACK: u8 = 5;

/// What a datagram carries.
pub enum Body<M> {
    /// A core message sent directly (permission algorithms).
    Core(M),
    /// A link session frame (token algorithms).
    Session(Frame<M>),
}

/// The datagram from `sender` carrying `body`, or `None` for a session frame kind this
/// program does not know (the session's frame enum may grow).
pub fn encode<M: Wire>(sender: NodeId, body: &Body<M>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(MAX_DATAGRAM);
    let (kind, epochs, number, msg) = match body {
        Body::Core(msg) => (CORE, None, None, Some(msg)),
        Body::Session(frame) => match frame {
            Frame::Hello { epochs } => (HELLO, Some(epochs), None, None),
            Frame::Data { epochs, seq, msg } => (DATA, Some(epochs), Some(seq), Some(msg)),
            Frame::Ack { epochs, seq } => (ACK, Some(epochs), Some(seq), None),
            Frame::Close { epochs, last } => (CLOSE, Some(epochs), Some(last), None),
            Frame::CloseAck { epochs } => (CLOSE_ACK, Some(epochs), None, None),
            _ => return None,
        },
    };
    out.extend([MAGIC, kind]);
    out.extend(sender.0.to_le_bytes());
    if let Some(e) = epochs {
        out.extend(e.sender.to_le_bytes());
        out.extend(e.receiver.to_le_bytes());
    }
    if let Some(n) = number {
        out.extend(n.to_le_bytes());
    }
    if let Some(msg) = msg {
        out.extend(codec::encode(msg));
    }
    out.extend(codec::frame_check(&out));
    Some(out)
}

/// The sender and body of `bytes`, or `None` if they are no datagram of this format
/// (garbage, corrupted, truncated, padded, an unknown kind or a core message that does not
/// decode). The check comes first: nothing of a datagram that fails it is read.
pub fn decode<M: Wire>(bytes: &[u8]) -> Option<(NodeId, Body<M>)> {
    let (bytes, check) = bytes.split_last_chunk::<CHECK_LEN>()?;
    if codec::frame_check(bytes) != *check {
        return None;
    }
    let mut r = Reader(bytes);
    let [magic, kind] = r.take::<2>()?;
    if magic != MAGIC {
        return None;
    }
    let sender = NodeId(u32::from_le_bytes(r.take()?));
    let body = if kind == CORE {
        Body::Core(codec::decode(r.0).ok()?)
    } else {
        let epochs = Epochs {
            sender: r.u64()?,
            receiver: r.u64()?,
        };
        let frame = match kind {
            HELLO => Frame::Hello { epochs },
            DATA => Frame::Data {
                epochs,
                seq: r.u64()?,
                msg: codec::decode(std::mem::take(&mut r.0)).ok()?,
            },
            ACK => Frame::Ack {
                epochs,
                seq: r.u64()?,
            },
            CLOSE => Frame::Close {
                epochs,
                last: r.u64()?,
            },
            CLOSE_ACK => Frame::CloseAck { epochs },
            _ => return None,
        };
        if !r.0.is_empty() {
            return None;
        }
        Body::Session(frame)
    };
    Some((sender, body))
}

/// The unread rest of a datagram.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
}
