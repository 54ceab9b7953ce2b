//! The hello frame: round trips, and arbitrary or damaged bytes never panic, are counted and
//! change nothing.

use manet_mutex::codec::{frame_check, DecodeError};
use manet_mutex::discovery::{Discovery, Hello, Settings, MAX_HEARD, MAX_HELLO_FRAME};
use manet_mutex::NodeId;
use manet_mutex_testkit::strategy::cases;
use proptest::prelude::*;

fn hello_strategy() -> impl Strategy<Value = Hello> {
    (
        any::<u32>(),
        any::<u64>(),
        proptest::collection::btree_set(any::<u32>(), 0..=MAX_HEARD),
    )
        .prop_map(|(from, seq, heard)| {
            let heard: Vec<NodeId> = heard.into_iter().map(NodeId).collect();
            Hello::new(NodeId(from), seq, &heard).unwrap()
        })
}

fn encode(h: &Hello) -> Vec<u8> {
    h.encode_into(&mut [0; MAX_HELLO_FRAME]).to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn hellos_round_trip(h in hello_strategy()) {
        let frame = encode(&h);
        prop_assert!(frame.len() <= MAX_HELLO_FRAME);
        prop_assert_eq!(Hello::decode(&frame), Ok(h));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_are_counted(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        fix_check in any::<bool>(),
        version in any::<bool>(),
    ) {
        let mut bytes = bytes;
        // Let the body decoder see them too: the right version and frame check.
        if version && !bytes.is_empty() {
            bytes[0] = 0x81;
        }
        if fix_check && bytes.len() >= 5 {
            let n = bytes.len() - 4;
            let check = frame_check(&bytes[..n]);
            bytes[n..].copy_from_slice(&check);
        }
        let mut d = Discovery::new(NodeId(0), Settings::DEFAULT, 0).unwrap();
        let before = d.clone();
        match d.handle_datagram(5, &bytes) {
            Ok(()) => {
                // Exactly a frame the encoder makes.
                let h = Hello::decode(&bytes).unwrap();
                prop_assert_eq!(encode(&h), bytes);
                prop_assert_eq!(d.stats().garbage, 0);
            }
            Err(_) => {
                prop_assert_eq!(d.stats().garbage, 1);
                prop_assert_eq!(d.table_len(), before.table_len());
                prop_assert_eq!(d.poll_event(), None);
            }
        }
    }

    #[test]
    fn every_bit_flip_and_cut_of_a_frame_is_refused(h in hello_strategy(), bit in any::<prop::sample::Index>()) {
        let frame = encode(&h);
        let mut flipped = frame.clone();
        let bit = bit.index(frame.len() * 8);
        flipped[bit / 8] ^= 1 << (bit % 8);
        let err = Hello::decode(&flipped).unwrap_err();
        if bit < 8 {
            prop_assert_eq!(err, DecodeError::UnknownVersion(flipped[0]));
        } else {
            prop_assert_eq!(err, DecodeError::Checksum);
        }
        for n in 0..frame.len() {
            prop_assert!(Hello::decode(&frame[..n]).is_err());
        }
    }
}

#[test]
fn oversized_padded_and_trailing_frames_are_refused() {
    let long = vec![0x81; MAX_HELLO_FRAME + 1];
    assert_eq!(
        Hello::decode(&long),
        Err(DecodeError::Oversized {
            len: MAX_HELLO_FRAME + 1
        })
    );
    let sealed = |body: &[u8]| {
        let mut f = body.to_vec();
        f.extend_from_slice(&frame_check(body));
        Hello::decode(&f)
    };
    assert!(sealed(&[0x81, 1, 2, 0]).is_ok());
    // A padded varint, a count above the bound, ids out of order or repeated, a sender id
    // beyond u32, a body cut short, a byte too many.
    assert_eq!(
        sealed(&[0x81, 0x81, 0x00, 2, 0]),
        Err(DecodeError::Malformed)
    );
    assert_eq!(sealed(&[0x81, 1, 2, 65]), Err(DecodeError::Malformed));
    assert_eq!(sealed(&[0x81, 1, 2, 2, 4, 3]), Err(DecodeError::Malformed));
    assert_eq!(sealed(&[0x81, 1, 2, 2, 3, 3]), Err(DecodeError::Malformed));
    assert_eq!(
        sealed(&[0x81, 0x80, 0x80, 0x80, 0x80, 0x10, 2, 0]),
        Err(DecodeError::Malformed)
    );
    assert_eq!(sealed(&[0x81, 1, 2, 2, 3]), Err(DecodeError::Truncated));
    assert_eq!(
        sealed(&[0x81, 1, 2, 0, 9]),
        Err(DecodeError::TrailingBytes { extra: 1 })
    );
    // A codec message frame (version 3) is not a hello.
    assert_eq!(sealed(&[3, 1, 2, 0]), Err(DecodeError::UnknownVersion(3)));
}
