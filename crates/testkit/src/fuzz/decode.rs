//! Fuzz body (feature `codec`): arbitrary bytes decoded as the message of every algorithm
//! ([`manet_mutex::codec::decode`]), as they are and with a right frame check appended. Decoding
//! must not panic (it never allocates, so it cannot run out of memory either), must report
//! the first failing check in the documented order (length, version, frame check, body), and
//! a frame that decodes must be exactly the frame of the message it decodes to: encoding the
//! message gives the same bytes, and decoding those the same message.
//!
//! Random bytes almost never end in their own CRC, so as they are they exercise only the
//! checks up to the frame check; sealed (see [`seal`]) they reach the body decoder.
//!
//! Compiled into the `decode` fuzz target (`fuzz/`) and run over random and mutated frames by
//! `tests/faults/codec.rs`.

use alloc::vec::Vec;
use core::fmt::Debug;

use manet_mutex::codec::{
    decode, encode, frame_check, DecodeError, Wire, CHECK_LEN, MAX_FRAME, VERSION,
};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala};

/// Decode `data`, and `data` sealed with its frame check, as each of the four message types;
/// panics if a decoded frame does not round-trip or if the error is not the first failing
/// check's.
pub fn run(data: &[u8]) {
    each(data);
    each(&seal(data));
}

/// `data` followed by its frame check (the CRC-32C of `data`, little endian): a frame whose
/// check passes, whatever `data` holds.
pub fn seal(data: &[u8]) -> Vec<u8> {
    let mut sealed = Vec::with_capacity(data.len() + CHECK_LEN);
    sealed.extend_from_slice(data);
    sealed.extend_from_slice(&frame_check(data));
    sealed
}

fn each(data: &[u8]) {
    check::<reverse_link::Message>(data);
    check::<prioritized::Message>(data);
    check::<look_ahead::Message>(data);
    check::<ricart_agrawala::Message>(data);
}

/// Decode `data` as an `M`; panics if it decodes and does not round-trip, or if the error is
/// not the one the checks before the body call for (`Oversized`, `Truncated`,
/// `UnknownVersion`, `Checksum`, in that order), or if one of those is reported when they all
/// pass.
pub fn check<M: Wire + Debug + PartialEq>(data: &[u8]) {
    let result = decode::<M>(data);
    let before_body = if data.len() > MAX_FRAME {
        Some(DecodeError::Oversized { len: data.len() })
    } else if data.len() < 1 + CHECK_LEN {
        Some(DecodeError::Truncated)
    } else if data[0] != VERSION {
        Some(DecodeError::UnknownVersion(data[0]))
    } else {
        let (checked, check) = data.split_at(data.len() - CHECK_LEN);
        (frame_check(checked) != check).then_some(DecodeError::Checksum)
    };
    match (result, before_body) {
        (Ok(msg), None) => {
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
        (Err(error), Some(expected)) => {
            assert_eq!(error, expected, "{} bytes: {data:?}", data.len());
        }
        (Err(error), None) => assert!(
            matches!(
                error,
                DecodeError::Truncated | DecodeError::Malformed | DecodeError::TrailingBytes { .. }
            ),
            "{error:?} for a frame that passes the checks before the body: {data:?}"
        ),
        (Ok(msg), Some(expected)) => panic!("{data:?} decoded to {msg:?}, not {expected:?}"),
    }
}
