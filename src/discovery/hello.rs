//! The hello: its contents, and (feature `codec`) its wire format.

use core::fmt;

use crate::NodeId;

/// The most ids a hello lists, and so the largest neighbour table
/// ([`Settings::max_neighbours`](super::Settings::max_neighbours)).
pub const MAX_HEARD: usize = 64;

/// One node's hello: who sends it, its sequence number, and the peers it hears.
///
/// A node lists every peer it *hears* (received [`up_after`](super::Settings::up_after)
/// consecutive hellos from, and not lost since), in increasing id order, whether or not the
/// link to it is up yet; a peer finds itself in the list and so learns that the link works
/// both ways. The list holds at most [`MAX_HEARD`] ids, inline (a hello never allocates);
/// since a node's table holds at most that many peers, a node's hello always lists every
/// peer it hears.
///
/// A hello from the wire may list anything (duplicates, its own sender, more ids than the
/// sender could hear): the receiver only asks whether its own id is listed.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hello {
    sender: NodeId,
    seq: u64,
    len: u8,
    /// `heard[..len]` are the ids; the rest stay `NodeId(0)`, so that the derived equality
    /// and hash see the list only.
    heard: [NodeId; MAX_HEARD],
}

impl Hello {
    /// A hello from `sender`, number `seq`, listing `heard` (in the given order). `None` if
    /// `heard` holds more than [`MAX_HEARD`] ids.
    pub fn new(sender: NodeId, seq: u64, heard: &[NodeId]) -> Option<Self> {
        if heard.len() > MAX_HEARD {
            return None;
        }
        let mut hello = Hello {
            sender,
            seq,
            len: 0,
            heard: [NodeId(0); MAX_HEARD],
        };
        for &id in heard {
            hello.push(id);
        }
        Some(hello)
    }

    /// Append `id` (the caller keeps within [`MAX_HEARD`]).
    pub(super) fn push(&mut self, id: NodeId) {
        if let Some(slot) = self.heard.get_mut(self.len as usize) {
            *slot = id;
            self.len += 1;
        }
    }

    /// The sender.
    pub fn sender(&self) -> NodeId {
        self.sender
    }

    /// The sequence number: the sender numbers its hellos 0, 1, 2, ... from its start.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The peers the sender hears.
    pub fn heard(&self) -> &[NodeId] {
        &self.heard[..self.len as usize]
    }

    /// Whether the sender hears `id`.
    pub fn lists(&self, id: NodeId) -> bool {
        self.heard().contains(&id)
    }
}

impl fmt::Debug for Hello {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hello")
            .field("sender", &self.sender)
            .field("seq", &self.seq)
            .field("heard", &self.heard())
            .finish()
    }
}

#[cfg(feature = "codec")]
pub use wire::{MAX_HELLO_FRAME, WIRE_VERSION};

#[cfg(feature = "codec")]
pub(crate) mod wire {
    use super::{Hello, MAX_HEARD};
    use crate::codec::{frame_check, DecodeError, CHECK_LEN};
    use crate::NodeId;

    /// The first byte of every hello frame: discovery's wire format 1, with the high bit set.
    /// The codec's message frames start with their version, below 128
    /// ([`codec::VERSION`](crate::codec::VERSION)), so one socket can carry both and a
    /// receiver tells them apart by the first byte.
    pub const WIRE_VERSION: u8 = 0x81;

    /// The longest hello frame: the version byte, a sender id (at most 5 bytes), a sequence
    /// number (at most 10), the count (1), [`MAX_HEARD`] ids (at most 5 each), the frame
    /// check (4). [`Hello::decode`] refuses a longer input unread.
    pub const MAX_HELLO_FRAME: usize = 1 + 5 + 10 + 1 + MAX_HEARD * 5 + CHECK_LEN;

    /// Write `value` as a LEB128 varint at `buf[at..]`; returns the position after it.
    pub(crate) fn put(buf: &mut [u8], mut at: usize, mut value: u64) -> usize {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                buf[at] = byte;
                return at + 1;
            }
            buf[at] = byte | 0x80;
            at += 1;
        }
    }

    /// A canonical LEB128 varint at `bytes[*at..]` no larger than `max`: `Truncated` if the
    /// input ends inside it, `Malformed` if it overflows `max` or carries a needless
    /// trailing zero byte.
    pub(crate) fn take(bytes: &[u8], at: &mut usize, max: u64) -> Result<u64, DecodeError> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let &byte = bytes.get(*at).ok_or(DecodeError::Truncated)?;
            *at += 1;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(DecodeError::Malformed);
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                if byte == 0 && shift > 0 {
                    return Err(DecodeError::Malformed);
                }
                return if value > max {
                    Err(DecodeError::Malformed)
                } else {
                    Ok(value)
                };
            }
        }
        Err(DecodeError::Malformed)
    }

    impl Hello {
        /// The hello's frame in `buf`: the returned slice, at most [`MAX_HELLO_FRAME`] bytes.
        /// Does not allocate.
        ///
        /// | bytes | content |
        /// | --- | --- |
        /// | 1 | [`WIRE_VERSION`] (`0x81`) |
        /// | 1..=5 | the sender's id, a LEB128 varint (7 bits a byte, low first) |
        /// | 1..=10 | the sequence number, a varint |
        /// | 1 | how many ids follow, `0..=`[`MAX_HEARD`] |
        /// | 1..=5 each | the ids heard, varints |
        /// | 4 | the frame check: the CRC-32C of every byte before it, little endian ([`codec::frame_check`](crate::codec::frame_check)) |
        ///
        /// So the hello of node 1, number 2, hearing nodes 3 and 4 is
        /// `[0x81, 1, 2, 2, 3, 4]` and its four check bytes.
        pub fn encode_into<'b>(&self, buf: &'b mut [u8; MAX_HELLO_FRAME]) -> &'b [u8] {
            buf[0] = WIRE_VERSION;
            let mut at = put(buf, 1, u64::from(self.sender.0));
            at = put(buf, at, self.seq);
            buf[at] = self.len;
            at += 1;
            for id in self.heard() {
                at = put(buf, at, u64::from(id.0));
            }
            let check = frame_check(&buf[..at]);
            buf[at..at + CHECK_LEN].copy_from_slice(&check);
            &buf[..at + CHECK_LEN]
        }

        /// The hello whose frame `bytes` is, or why it is none. Never panics, never
        /// allocates, on any input.
        ///
        /// The checks, in order, with the codec's errors: the length (`Oversized` above
        /// [`MAX_HELLO_FRAME`], unread; `Truncated` below 5 bytes), the first byte
        /// (`UnknownVersion`), the frame check (`Checksum`, before any other byte is read),
        /// then the fields: a field cut short is `Truncated`; a varint that overflows its
        /// field or is padded, a count above [`MAX_HEARD`], or ids not in strictly increasing
        /// order are `Malformed`; bytes after the last id are `TrailingBytes`. So exactly the
        /// frames [`Hello::encode_into`] makes of hellos with increasing lists decode, each to
        /// its hello.
        pub fn decode(bytes: &[u8]) -> Result<Hello, DecodeError> {
            if bytes.len() > MAX_HELLO_FRAME {
                return Err(DecodeError::Oversized { len: bytes.len() });
            }
            if bytes.len() < 1 + CHECK_LEN {
                return Err(DecodeError::Truncated);
            }
            let (body, check) = bytes.split_at(bytes.len() - CHECK_LEN);
            if body[0] != WIRE_VERSION {
                return Err(DecodeError::UnknownVersion(body[0]));
            }
            if frame_check(body) != check {
                return Err(DecodeError::Checksum);
            }
            let mut at = 1;
            let id = u64::from(u32::MAX);
            let sender = NodeId(take(body, &mut at, id)? as u32);
            let seq = take(body, &mut at, u64::MAX)?;
            let &count = body.get(at).ok_or(DecodeError::Truncated)?;
            at += 1;
            if count as usize > MAX_HEARD {
                return Err(DecodeError::Malformed);
            }
            let mut hello = Hello::new(sender, seq, &[]).ok_or(DecodeError::Malformed)?;
            let mut last = None;
            for _ in 0..count {
                let next = take(body, &mut at, id)? as u32;
                if last.is_some_and(|last| next <= last) {
                    return Err(DecodeError::Malformed);
                }
                last = Some(next);
                hello.push(NodeId(next));
            }
            if at < body.len() {
                return Err(DecodeError::TrailingBytes {
                    extra: body.len() - at,
                });
            }
            Ok(hello)
        }
    }
}
