//! The driver's wire format: pinned bytes of every frame kind, round trips, arbitrary bytes,
//! flipped bits.

use arbitrary::Unstructured;
use manet_mutex::codec::{frame_check, DecodeError};
use manet_mutex::driver::wire::{
    decode, encode, Envelope, Kind, Payload, MAX_DRIVER_FRAME, VERSION,
};
use manet_mutex::permission::Timestamp;
use manet_mutex::session::{Epochs, Frame};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, NodeId};
use proptest::prelude::*;

fn reply() -> ricart_agrawala::Message {
    let ts = Timestamp {
        clock: 1,
        id: NodeId(1),
    };
    ricart_agrawala::Message::reply(ts, 1, 0)
}

fn envelope<M>(payload: Payload<M>) -> Envelope<M> {
    Envelope {
        from: NodeId(1),
        to: NodeId(2),
        payload,
    }
}

const EPOCHS: Epochs = Epochs {
    sender: 300,
    receiver: 7,
};

/// Every kind's bytes, less the frame check (checked to be the CRC-32C of the rest).
#[test]
fn every_frame_kind_has_pinned_bytes() {
    let session = |frame| envelope(Payload::Session(frame));
    let cases: Vec<(Kind, Envelope<ricart_agrawala::Message>, &[u8])> = vec![
        (
            Kind::Message,
            envelope(Payload::Message(reply())),
            &[
                0x83, 0, 1, 2, 1, 1, 1, 1, 0xb1, 0xf1, 0xca, 0x86, 0xef, 0x92, 0xce, 0x88, 0xca,
                0x01, 0, 0, 0, 0, 0, 0,
            ],
        ),
        (
            Kind::Hello,
            session(Frame::Hello { epochs: EPOCHS }),
            &[0x83, 1, 1, 2, 0xac, 0x02, 7],
        ),
        (
            Kind::Data,
            session(Frame::Data {
                epochs: EPOCHS,
                seq: 5,
                msg: reply(),
            }),
            &[
                0x83, 2, 1, 2, 0xac, 0x02, 7, 5, 1, 1, 1, 1, 0xb1, 0xf1, 0xca, 0x86, 0xef, 0x92,
                0xce, 0x88, 0xca, 0x01, 0, 0, 0, 0, 0, 0,
            ],
        ),
        (
            Kind::Ack,
            session(Frame::Ack {
                epochs: EPOCHS,
                seq: 128,
            }),
            &[0x83, 3, 1, 2, 0xac, 0x02, 7, 0x80, 0x01],
        ),
        (
            Kind::Close,
            session(Frame::Close {
                epochs: EPOCHS,
                last: 0,
            }),
            &[0x83, 4, 1, 2, 0xac, 0x02, 7, 0],
        ),
        (
            Kind::CloseAck,
            session(Frame::CloseAck { epochs: EPOCHS }),
            &[0x83, 5, 1, 2, 0xac, 0x02, 7],
        ),
    ];
    for (kind, envelope, pinned) in cases {
        assert_eq!(envelope.payload.kind(), kind);
        let bytes = encode(&envelope);
        let (body, check) = bytes.split_at(bytes.len() - 4);
        assert_eq!(body, pinned, "{kind:?}");
        assert_eq!(check, frame_check(body), "{kind:?}");
        assert_eq!(decode(&bytes), Ok(envelope), "{kind:?}");
    }
    assert_eq!(VERSION, 0x83);
}

/// The longest frame of every algorithm fits [`MAX_DRIVER_FRAME`]: the largest ids, epochs
/// and numbers around the codec's largest message body.
#[test]
fn the_largest_frames_fit() {
    let epochs = Epochs {
        sender: u64::MAX,
        receiver: u64::MAX,
    };
    let big = Envelope {
        from: NodeId(u32::MAX),
        to: NodeId(u32::MAX),
        payload: Payload::Session(Frame::Ack {
            epochs,
            seq: u64::MAX,
        }),
    };
    let bytes = encode::<ricart_agrawala::Message>(&big);
    assert_eq!(bytes.len(), 2 + 5 + 5 + 30 + 4);
    assert_eq!(decode(&bytes), Ok(big));
    const { assert!(MAX_DRIVER_FRAME >= 2 + 10 + 30 + manet_mutex::codec::MAX_FRAME - 5 + 4) };
}

fn round_trip<M>(seed: &[u8])
where
    M: manet_mutex::codec::Wire
        + for<'a> arbitrary::Arbitrary<'a>
        + Clone
        + PartialEq
        + std::fmt::Debug,
{
    let mut u = Unstructured::new(seed);
    let Ok(envelope) = u.arbitrary::<Envelope<M>>() else {
        return;
    };
    let bytes = encode(&envelope);
    assert!(bytes.len() <= MAX_DRIVER_FRAME);
    assert_eq!(decode::<M>(&bytes), Ok(envelope.clone()));
    // Any one bit flipped: never the same envelope (the CRC-32C catches every such error).
    let bit = u.int_in_range(0..=bytes.len() * 8 - 1).unwrap_or(0);
    let mut flipped = bytes.clone();
    flipped[bit / 8] ^= 1 << (bit % 8);
    assert_ne!(decode::<M>(&flipped), Ok(envelope));
}

/// Arbitrary bytes, as they are and with a right frame check after a driver version byte:
/// decoding never panics, and what decodes encodes to exactly those bytes.
fn arbitrary_bytes<M: manet_mutex::codec::Wire + PartialEq + std::fmt::Debug>(data: &[u8]) {
    let mut sealed = vec![VERSION];
    sealed.extend_from_slice(data);
    let check = frame_check(&sealed);
    sealed.extend_from_slice(&check);
    for bytes in [data, &sealed[..]] {
        if let Ok(envelope) = decode::<M>(bytes) {
            assert_eq!(encode(&envelope), bytes);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_envelope_round_trips_and_no_flipped_bit_passes(seed in prop::collection::vec(any::<u8>(), 0..400)) {
        round_trip::<reverse_link::Message>(&seed);
        round_trip::<prioritized::Message>(&seed);
        round_trip::<look_ahead::Message>(&seed);
        round_trip::<ricart_agrawala::Message>(&seed);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_what_decodes_is_canonical(data in prop::collection::vec(any::<u8>(), 0..260)) {
        arbitrary_bytes::<reverse_link::Message>(&data);
        arbitrary_bytes::<prioritized::Message>(&data);
        arbitrary_bytes::<look_ahead::Message>(&data);
        arbitrary_bytes::<ricart_agrawala::Message>(&data);
    }
}

#[test]
fn decode_reports_the_first_failing_check() {
    let bytes = encode(&envelope(Payload::<ricart_agrawala::Message>::Session(
        Frame::Hello { epochs: EPOCHS },
    )));
    let decode = decode::<ricart_agrawala::Message>;
    assert_eq!(decode(&bytes[..5]), Err(DecodeError::Truncated));
    assert_eq!(
        decode(&[0; MAX_DRIVER_FRAME + 1]),
        Err(DecodeError::Oversized {
            len: MAX_DRIVER_FRAME + 1
        })
    );
    let mut other = bytes.clone();
    other[0] = 0x81;
    assert_eq!(decode(&other), Err(DecodeError::UnknownVersion(0x81)));
    let mut flipped = bytes.clone();
    flipped[4] ^= 0x10;
    assert_eq!(decode(&flipped), Err(DecodeError::Checksum));
    let seal = |body: &[u8]| {
        let mut v = body.to_vec();
        v.extend_from_slice(&frame_check(body));
        v
    };
    // An unknown kind, a padded varint, a field after the last.
    assert_eq!(
        decode(&seal(&[0x83, 6, 1, 2, 1, 1])),
        Err(DecodeError::Malformed)
    );
    assert_eq!(
        decode(&seal(&[0x83, 1, 0x81, 0, 2, 1, 1])),
        Err(DecodeError::Malformed)
    );
    assert_eq!(
        decode(&seal(&[0x83, 1, 1, 2, 1, 1, 9])),
        Err(DecodeError::TrailingBytes { extra: 1 })
    );
    assert_eq!(
        decode(&seal(&[0x83, 3, 1, 2, 1, 1])),
        Err(DecodeError::Truncated)
    );
}
