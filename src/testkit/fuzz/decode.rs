//! Fuzz body (feature `codec`): arbitrary bytes decoded as the message of every algorithm
//! ([`crate::codec::decode`]). Decoding must not panic (it never allocates, so it cannot run
//! out of memory either), and a frame that decodes must be exactly the frame of the message
//! it decodes to: encoding the message gives the same bytes, and decoding those the same
//! message.
//!
//! Compiled into the `decode` fuzz target (`fuzz/`) and run over random and mutated frames by
//! `tests/faults/codec.rs`.

use core::fmt::Debug;

use crate::codec::{decode, encode, Wire, MAX_FRAME};
use crate::{look_ahead, prioritized, reverse_link, ricart_agrawala};

/// Decode `data` as each of the four message types; panics if a decoded frame does not
/// round-trip or if a frame within [`MAX_FRAME`] is refused as oversized.
pub fn run(data: &[u8]) {
    check::<reverse_link::Message>(data);
    check::<prioritized::Message>(data);
    check::<look_ahead::Message>(data);
    check::<ricart_agrawala::Message>(data);
}

/// Decode `data` as an `M`; panics if it decodes and does not round-trip, or if the error is
/// not the one its length calls for.
pub fn check<M: Wire + Debug + PartialEq>(data: &[u8]) {
    match decode::<M>(data) {
        Ok(msg) => {
            let frame = encode(&msg);
            assert_eq!(
                frame, data,
                "{msg:?} decoded from a frame that is not its own"
            );
            assert_eq!(
                decode::<M>(&frame).as_ref(),
                Ok(&msg),
                "re-decoding {frame:?}"
            );
        }
        Err(crate::codec::DecodeError::Oversized { len }) => {
            assert!(
                len == data.len() && len > MAX_FRAME,
                "{len} bytes refused as oversized"
            );
        }
        Err(_) => assert!(
            data.len() <= MAX_FRAME,
            "{} bytes not refused as oversized",
            data.len()
        ),
    }
}
