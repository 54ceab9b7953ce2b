//! The wire codec (`manet_mutex::codec`) against the threat model: every message of every
//! algorithm, whatever its field values, round-trips; bytes that are no frame (truncated,
//! oversized, another version, a changed byte, random) are refused or decode to the one
//! message whose frame they are, and never panic; the exact bytes of messages and the index of
//! every variant are pinned, so a format change cannot slip in without a new version; and a
//! message with impossible fields decodes, for the node to report.

use std::collections::VecDeque;
use std::fmt::Debug;
use std::path::Path;

use manet_mutex::codec::{decode, encode, encode_into, DecodeError, Wire, MAX_FRAME, VERSION};
use manet_mutex::look_ahead::Announcement;
use manet_mutex::permission::Timestamp;
use manet_mutex::prioritized::Resources;
use manet_mutex::queue::Priority;
use manet_mutex::testkit::fuzz::decode as body;
use manet_mutex::testkit::strategy::cases;
use manet_mutex::token::height::{Height, Sealed};
use manet_mutex::{
    look_ahead, prioritized, reverse_link, ricart_agrawala, Action, Anomaly, CsRequest, Event,
    Fence, FenceCopies, NodeId, Protocol,
};
use proptest::collection::vec;
use proptest::prelude::*;

// ---- Field values: anything the type can hold, with its edges and small values favoured
// (uniform 64-bit values would almost always take the longest varint).

fn u64s() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => any::<u64>(),
        2 => 0u64..300,
        1 => prop::sample::select(vec![
            0,
            127,
            128,
            16_383,
            16_384,
            1 << 40,
            1 << 62,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ]),
    ]
}

fn u32s() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => any::<u32>(),
        2 => 0u32..300,
        1 => prop::sample::select(vec![0, 127, 128, 1 << 28, u32::MAX - 1, u32::MAX]),
    ]
}

fn i64s() -> impl Strategy<Value = i64> {
    prop_oneof![
        2 => any::<i64>(),
        2 => -300i64..300,
        1 => prop::sample::select(vec![
            0,
            -1,
            63,
            -64,
            64,
            Height::LIMIT,
            -Height::LIMIT,
            Height::LIMIT + 1,
            i64::MAX,
            i64::MIN,
        ]),
    ]
}

fn node() -> impl Strategy<Value = NodeId> {
    u32s().prop_map(NodeId)
}

fn height() -> impl Strategy<Value = Height> {
    (i64s(), i64s(), node()).prop_map(|(h1, h2, id)| Height::new(h1, h2, id))
}

/// A sealed height, its check word right or anything.
fn sealed() -> impl Strategy<Value = Sealed> {
    prop_oneof![
        height().prop_map(Sealed::new),
        (height(), u64s()).prop_map(|(height, check)| Sealed { height, check }),
    ]
}

fn timestamp() -> impl Strategy<Value = Timestamp> {
    (u64s(), node()).prop_map(|(clock, id)| Timestamp { clock, id })
}

fn priority() -> impl Strategy<Value = Priority> {
    (u64s(), u32s()).prop_map(|(level, rank)| Priority::new(level, rank))
}

/// Two resource counts, equal or not.
fn resources() -> impl Strategy<Value = Resources> {
    prop_oneof![
        u32s().prop_map(Resources::new),
        (u32s(), u32s(), u32s()).prop_map(|(a, b, c)| Resources([a, b, c])),
    ]
}

/// Three fence copies, equal or not.
fn fence() -> BoxedStrategy<FenceCopies> {
    let one = || (u32s(), u64s()).prop_map(|(lane, value)| Fence::new(lane, value));
    prop_oneof![
        one().prop_map(FenceCopies::new),
        (one(), one(), one()).prop_map(|(a, b, c)| FenceCopies([a, b, c])),
    ]
    .boxed()
}

/// An announcement, its check word right or anything.
fn announcement() -> BoxedStrategy<Announcement> {
    prop_oneof![
        (timestamp(), u64s(), any::<bool>(), u64s())
            .prop_map(|(ts, seen, absent, f)| Announcement::new(ts, seen, absent, f)),
        (timestamp(), u64s(), any::<bool>(), u64s(), fence()).prop_map(
            |(ts, seen, absent, check, fence)| Announcement {
                ts,
                seen,
                absent,
                check,
                fence,
            }
        ),
    ]
    .boxed()
}

// ---- Messages: every variant of every algorithm.

fn reverse_link_message() -> BoxedStrategy<reverse_link::Message> {
    use reverse_link::Message;
    prop_oneof![
        sealed().prop_map(Message::Request),
        (sealed(), fence()).prop_map(|(height, fence)| Message::Token(height, fence)),
        sealed().prop_map(Message::LinkInfo),
        sealed().prop_map(Message::Probe),
        (sealed(), any::<u16>()).prop_map(|(height, tokens)| Message::TokenAck(height, tokens)),
    ]
    .boxed()
}

fn prioritized_message() -> BoxedStrategy<prioritized::Message> {
    use prioritized::Message;
    prop_oneof![
        (resources(), resources(), priority(), sealed(), fence()).prop_map(
            |(available, lost, priority, height, fence)| Message::Token {
                lost,
                available,
                priority,
                height,
                fence,
            }
        ),
        (priority(), sealed()).prop_map(|(priority, height)| Message::Request { priority, height }),
        priority().prop_map(|priority| Message::Update { priority }),
        (resources(), resources(), sealed()).prop_map(|(resources, lost, height)| {
            Message::Release {
                lost,
                resources,
                height,
            }
        }),
        sealed().prop_map(|height| Message::Link { height }),
        sealed().prop_map(|height| Message::Probe { height }),
        (sealed(), any::<u16>()).prop_map(|(height, tokens)| Message::TokenAck { height, tokens }),
    ]
    .boxed()
}

fn look_ahead_message() -> BoxedStrategy<look_ahead::Message> {
    use look_ahead::Message;
    prop_oneof![
        (timestamp(), u64s(), u64s(), u64s())
            .prop_map(|(ts, seq, epoch, f)| Message::request(ts, seq, epoch, f)),
        (timestamp(), u64s(), u64s(), u64s(), fence()).prop_map(
            |(ts, seq, epoch, check, fence)| Message::Request {
                ts,
                seq,
                epoch,
                check,
                fence,
            }
        ),
        (timestamp(), u64s(), u64s(), u64s(), fence()).prop_map(|(ts, seq, epoch, seen, fence)| {
            Message::Reply {
                ts,
                seq,
                epoch,
                seen,
                fence,
            }
        }),
        announcement().prop_map(Message::Doze),
        announcement().prop_map(Message::Disconnect),
        announcement().prop_map(Message::Reconnect),
    ]
    .boxed()
}

fn ricart_agrawala_message() -> BoxedStrategy<ricart_agrawala::Message> {
    use ricart_agrawala::Message;
    prop_oneof![
        (timestamp(), u64s(), u64s()).prop_map(|(ts, seq, f)| Message::request(ts, seq, f)),
        (timestamp(), u64s(), u64s(), fence()).prop_map(|(ts, seq, check, fence)| {
            Message::Request {
                ts,
                seq,
                check,
                fence,
            }
        }),
        (timestamp(), u64s(), fence()).prop_map(|(ts, seq, fence)| Message::Reply {
            ts,
            seq,
            fence
        }),
    ]
    .boxed()
}

/// A message of any algorithm, with what its type's decoder gives for a frame.
#[derive(Debug, Clone)]
enum AnyMessage {
    ReverseLink(reverse_link::Message),
    Prioritized(prioritized::Message),
    LookAhead(look_ahead::Message),
    RicartAgrawala(ricart_agrawala::Message),
}

impl AnyMessage {
    fn frame(&self) -> Vec<u8> {
        match self {
            AnyMessage::ReverseLink(m) => encode(m),
            AnyMessage::Prioritized(m) => encode(m),
            AnyMessage::LookAhead(m) => encode(m),
            AnyMessage::RicartAgrawala(m) => encode(m),
        }
    }

    /// `frame` decoded as this message's type: `Ok(true)` if it is this message.
    fn decode_as_own(&self, frame: &[u8]) -> Result<bool, DecodeError> {
        fn same<M: Wire + PartialEq>(m: &M, frame: &[u8]) -> Result<bool, DecodeError> {
            decode::<M>(frame).map(|d| d == *m)
        }
        match self {
            AnyMessage::ReverseLink(m) => same(m, frame),
            AnyMessage::Prioritized(m) => same(m, frame),
            AnyMessage::LookAhead(m) => same(m, frame),
            AnyMessage::RicartAgrawala(m) => same(m, frame),
        }
    }
}

fn any_message() -> BoxedStrategy<AnyMessage> {
    prop_oneof![
        reverse_link_message().prop_map(AnyMessage::ReverseLink),
        prioritized_message().prop_map(AnyMessage::Prioritized),
        look_ahead_message().prop_map(AnyMessage::LookAhead),
        ricart_agrawala_message().prop_map(AnyMessage::RicartAgrawala),
    ]
    .boxed()
}

/// The round trip of one message: a frame within `MAX_FRAME` starting with the version, the
/// same bytes from `encode_into`, the same message back, and what the test kit's fuzz body
/// checks (exact re-encoding, under every algorithm's decoder).
fn round_trip<M: Wire + Debug + PartialEq>(msg: &M) -> Result<(), TestCaseError> {
    let frame = encode(msg);
    prop_assert!(frame.len() <= MAX_FRAME, "{} bytes: {msg:?}", frame.len());
    prop_assert_eq!(frame[0], VERSION);
    let mut buf = [0; MAX_FRAME];
    prop_assert_eq!(encode_into(msg, &mut buf), &frame[..]);
    let decoded = decode::<M>(&frame);
    prop_assert_eq!(decoded.as_ref(), Ok(msg));
    body::run(&frame);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1024)))]

    #[test]
    fn reverse_link_messages_round_trip(msg in reverse_link_message()) {
        round_trip(&msg)?;
    }

    #[test]
    fn prioritized_messages_round_trip(msg in prioritized_message()) {
        round_trip(&msg)?;
    }

    #[test]
    fn look_ahead_messages_round_trip(msg in look_ahead_message()) {
        round_trip(&msg)?;
    }

    #[test]
    fn ricart_agrawala_messages_round_trip(msg in ricart_agrawala_message()) {
        round_trip(&msg)?;
    }

    #[test]
    fn every_proper_prefix_of_a_frame_is_truncated(msg in any_message()) {
        let frame = msg.frame();
        for len in 0..frame.len() {
            prop_assert_eq!(msg.decode_as_own(&frame[..len]), Err(DecodeError::Truncated));
            body::run(&frame[..len]);
        }
    }

    #[test]
    fn bytes_after_the_message_are_refused(msg in any_message(), extra in vec(any::<u8>(), 1..8)) {
        let mut frame = msg.frame();
        frame.extend_from_slice(&extra);
        let expected = if frame.len() > MAX_FRAME {
            DecodeError::Oversized { len: frame.len() }
        } else {
            DecodeError::TrailingBytes { extra: extra.len() }
        };
        prop_assert_eq!(msg.decode_as_own(&frame), Err(expected));
        body::run(&frame);
    }

    #[test]
    fn other_versions_are_refused(msg in any_message(), version in any::<u8>()) {
        prop_assume!(version != VERSION);
        let mut frame = msg.frame();
        frame[0] = version;
        prop_assert_eq!(msg.decode_as_own(&frame), Err(DecodeError::UnknownVersion(version)));
        body::run(&frame);
    }

    #[test]
    fn random_bytes_decode_exactly_or_fail(data in vec(any::<u8>(), 0..80)) {
        body::run(&data);
    }

    #[test]
    fn random_bodies_decode_exactly_or_fail(data in vec(any::<u8>(), 0..MAX_FRAME)) {
        let frame: Vec<u8> = std::iter::once(VERSION).chain(data).collect();
        body::run(&frame);
    }
}

/// The `decode` fuzz target's committed reproducers (`fuzz/regressions/decode/`, none yet)
/// and any local corpus (`fuzz/corpus/decode/`), through the same body.
#[test]
fn decode_reproducers_and_local_corpus_decode_exactly_or_fail() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut ran = 0;
    for dir in ["regressions", "corpus"].map(|d| fuzz.join(d).join("decode")) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            body::run(&bytes);
            ran += 1;
        }
    }
    println!("decode: {ran} committed and local inputs");
}

proptest! {
    // Each case decodes 255 changes of every byte under all four decoders.
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]

    /// A frame with one byte changed is refused, or is exactly the frame of another message
    /// (never of the same one: one frame per message).
    #[test]
    fn every_single_byte_change_of_a_frame_decodes_exactly_or_fails(msg in any_message()) {
        let frame = msg.frame();
        for at in 0..frame.len() {
            for value in 0..=u8::MAX {
                if value == frame[at] {
                    continue;
                }
                let mut changed = frame.clone();
                changed[at] = value;
                prop_assert_ne!(msg.decode_as_own(&changed), Ok(true));
                body::run(&changed);
            }
        }
    }
}

#[test]
fn oversized_frames_are_refused_before_reading() {
    let frame = encode(&reverse_link::Message::Token(
        Sealed::new(Height::new(0, 0, NodeId(0))),
        FenceCopies::default(),
    ));
    for len in [MAX_FRAME + 1, MAX_FRAME + 2, 1000, 1 << 20] {
        let mut long = frame.clone();
        long.resize(len, 0);
        assert_eq!(
            decode::<reverse_link::Message>(&long),
            Err(DecodeError::Oversized { len })
        );
        // Not even the version is read.
        long[0] = 0xff;
        assert_eq!(
            decode::<ricart_agrawala::Message>(&long),
            Err(DecodeError::Oversized { len })
        );
    }
    // At the bound the frame is read.
    let mut full = frame.clone();
    full.resize(MAX_FRAME, 0);
    assert_eq!(
        decode::<reverse_link::Message>(&full),
        Err(DecodeError::TrailingBytes {
            extra: MAX_FRAME - frame.len()
        })
    );
}

#[test]
fn an_empty_frame_is_truncated_and_every_other_version_unknown() {
    assert_eq!(
        decode::<look_ahead::Message>(&[]),
        Err(DecodeError::Truncated)
    );
    assert_eq!(
        decode::<look_ahead::Message>(&[VERSION]),
        Err(DecodeError::Truncated)
    );
    let frame = encode(&ricart_agrawala::Message::Reply {
        ts: Timestamp {
            clock: 1,
            id: NodeId(1),
        },
        seq: 1,
        fence: FenceCopies::default(),
    });
    for version in (0..=u8::MAX).filter(|&v| v != VERSION) {
        let mut other = frame.clone();
        other[0] = version;
        assert_eq!(
            decode::<ricart_agrawala::Message>(&other),
            Err(DecodeError::UnknownVersion(version))
        );
    }
}

#[test]
fn bodies_no_message_encodes_to_are_malformed() {
    let malformed = DecodeError::Malformed;
    // Variant indices past the last, in one byte and as the largest u32 varint.
    let past_last = |n: u8| {
        [
            vec![VERSION, n],
            vec![VERSION, 0xff, 0xff, 0xff, 0xff, 0x0f],
        ]
    };
    for f in past_last(5) {
        assert_eq!(decode::<reverse_link::Message>(&f), Err(malformed));
    }
    for f in past_last(7) {
        assert_eq!(decode::<prioritized::Message>(&f), Err(malformed));
    }
    for f in past_last(5) {
        assert_eq!(decode::<look_ahead::Message>(&f), Err(malformed));
    }
    for f in past_last(2) {
        assert_eq!(decode::<ricart_agrawala::Message>(&f), Err(malformed));
    }
    // A variant index beyond u32.
    assert_eq!(
        decode::<reverse_link::Message>(&[VERSION, 0xff, 0xff, 0xff, 0xff, 0x10]),
        Err(malformed)
    );

    // A DOZE whose `absent` byte is 2: ts (1, n1), seen 0, absent, check 0, fence copies
    // (0, 0) three times.
    let doze = |absent: u8| vec![VERSION, 2, 1, 1, 0, absent, 0, 0, 0, 0, 0, 0, 0];
    assert!(decode::<look_ahead::Message>(&doze(1)).is_ok());
    assert_eq!(decode::<look_ahead::Message>(&doze(2)), Err(malformed));

    // A REPLY of ricart_agrawala: ts (clock, id), seq, fence copies (0, 0) three times.
    let reply = |clock: &[u8], id: &[u8]| {
        let mut f = vec![VERSION, 1];
        f.extend_from_slice(clock);
        f.extend_from_slice(id);
        f.push(1);
        f.extend_from_slice(&[0; 6]);
        f
    };
    assert!(decode::<ricart_agrawala::Message>(&reply(&[5], &[3])).is_ok());
    // A node id (u32) needing 33 bits.
    assert_eq!(
        decode::<ricart_agrawala::Message>(&reply(&[5], &[0xff, 0xff, 0xff, 0xff, 0x1f])),
        Err(malformed)
    );
    // A clock (u64) needing 11 bytes, and one overflowing its 10th.
    let eleven = [0xff; 10].iter().copied().chain([0x01]).collect::<Vec<_>>();
    assert_eq!(
        decode::<ricart_agrawala::Message>(&reply(&eleven, &[3])),
        Err(malformed)
    );
    let overflow = [0xff; 9].iter().copied().chain([0x02]).collect::<Vec<_>>();
    assert_eq!(
        decode::<ricart_agrawala::Message>(&reply(&overflow, &[3])),
        Err(malformed)
    );
    let max = [0xff; 9].iter().copied().chain([0x01]).collect::<Vec<_>>();
    assert!(decode::<ricart_agrawala::Message>(&reply(&max, &[3])).is_ok());
    // Padded varints: 5 as [0x85, 0x00], 3 as [0x83, 0x80, 0x00], a padded variant index.
    assert_eq!(
        decode::<ricart_agrawala::Message>(&reply(&[0x85, 0x00], &[3])),
        Err(malformed)
    );
    assert_eq!(
        decode::<ricart_agrawala::Message>(&reply(&[5], &[0x83, 0x80, 0x00])),
        Err(malformed)
    );
    assert_eq!(
        decode::<ricart_agrawala::Message>(&[VERSION, 0x81, 0x00, 5, 3, 1, 0, 0, 0, 0, 0, 0]),
        Err(malformed)
    );
    assert!(decode::<ricart_agrawala::Message>(&[VERSION, 1, 5, 3, 1, 0, 0, 0, 0, 0, 0]).is_ok());
}

/// Every variant of every algorithm with every field at its longest encoding: the largest
/// frames, pinned, within `MAX_FRAME`.
#[test]
fn the_largest_frames_fit_max_frame() {
    let height = Sealed {
        height: Height::new(i64::MIN, i64::MAX, NodeId(u32::MAX)),
        check: u64::MAX,
    };
    let ts = Timestamp {
        clock: u64::MAX,
        id: NodeId(u32::MAX),
    };
    let resources = Resources([u32::MAX; 3]);
    let priority = Priority::new(u64::MAX, u32::MAX);
    let fence = FenceCopies::new(Fence::new(u32::MAX, u64::MAX));
    let announcement = Announcement {
        ts,
        seen: u64::MAX,
        absent: true,
        check: u64::MAX,
        fence,
    };
    let max = u64::MAX;

    use reverse_link::Message as Rl;
    let rl = [
        Rl::Request(height),
        Rl::Token(height, fence),
        Rl::LinkInfo(height),
        Rl::Probe(height),
        Rl::TokenAck(height, u16::MAX),
    ];
    let rl = sizes(&rl);
    // Three fence copies at their longest take 3 × (5 + 10) = 45 bytes.
    assert_eq!(rl, [37, 82, 37, 37, 37]);

    use prioritized::Message as Pr;
    let pr = [
        Pr::Token {
            lost: resources,
            available: resources,
            priority,
            height,
            fence,
        },
        Pr::Request { priority, height },
        Pr::Update { priority },
        Pr::Release {
            lost: resources,
            resources,
            height,
        },
        Pr::Link { height },
        Pr::Probe { height },
        Pr::TokenAck {
            height,
            tokens: u16::MAX,
        },
    ];
    let pr = sizes(&pr);
    assert_eq!(pr, [107, 52, 17, 47, 37, 37, 37]);

    use look_ahead::Message as La;
    let la = [
        La::Request {
            ts,
            seq: max,
            epoch: max,
            check: max,
            fence,
        },
        La::Reply {
            ts,
            seq: max,
            epoch: max,
            seen: max,
            fence,
        },
        La::Doze(announcement),
        La::Disconnect(announcement),
        La::Reconnect(announcement),
    ];
    let la = sizes(&la);
    assert_eq!(la, [92, 92, 83, 83, 83]);

    use ricart_agrawala::Message as Ra;
    let ra = [
        Ra::Request {
            ts,
            seq: max,
            check: max,
            fence,
        },
        Ra::Reply {
            ts,
            seq: max,
            fence,
        },
    ];
    let ra = sizes(&ra);
    assert_eq!(ra, [82, 72]);

    let largest = [rl, pr, la, ra].concat().into_iter().max();
    assert!(largest.is_some_and(|n| n <= MAX_FRAME), "{largest:?}");
}

/// Frame lengths, after checking each round-trips.
fn sizes<M: Wire + Debug + PartialEq>(msgs: &[M]) -> Vec<usize> {
    msgs.iter()
        .map(|m| {
            let frame = encode(m);
            assert_eq!(decode::<M>(&frame).as_ref(), Ok(m));
            frame.len()
        })
        .collect()
}

/// The format, pinned: if this fails, the encoding of a message changed, and so must
/// `VERSION` (and this test's expectations, and the module docs).
#[test]
fn the_format_is_pinned() {
    assert_eq!(VERSION, 2);
    assert_eq!(MAX_FRAME, 128);
    // The check words' bytes were worked out apart from the crate: `seal::check_word` of the
    // fields by hand, then LEB128.

    // version, Token, h1 0, h2 -1 (zigzag 1), id 2, check word, then three fence copies
    // (lane 1, value 300 = [0xac, 0x02]).
    let token = reverse_link::Message::Token(
        Sealed::new(Height::new(0, -1, NodeId(2))),
        Fence::new(1, 300).into(),
    );
    assert_eq!(
        encode(&token),
        [
            2, 1, 0, 1, 2, 0xce, 0xd6, 0xc5, 0x8f, 0x87, 0xae, 0xed, 0xd6, 0xd2, 0x01, 1, 0xac,
            0x02, 1, 0xac, 0x02, 1, 0xac, 0x02
        ]
    );

    // version, Token, available (2, 2), priority (level 300 = [0xac, 0x02], rank 0), height
    // (h1 1 = zigzag 2, h2 0, n4), check word, three fence copies (0, 0).
    let token = prioritized::Message::Token {
        lost: Resources::new(0),
        available: Resources::new(2),
        priority: Priority::new(300, 0),
        height: Sealed::new(Height::new(1, 0, NodeId(4))),
        fence: FenceCopies::default(),
    };
    assert_eq!(
        encode(&token),
        [
            2, 0, 2, 2, 0xac, 0x02, 0, 2, 0, 4, 0xf2, 0xe1, 0x8b, 0xa4, 0xd3, 0xc1, 0x82, 0xef,
            0x59, 0, 0, 0, 0, 0, 0
        ]
    );

    // version, Doze, ts (clock 7, n1), seen 3, absent (true), check word, three fence
    // copies (0, 2).
    let doze = look_ahead::Message::Doze(Announcement::new(
        Timestamp {
            clock: 7,
            id: NodeId(1),
        },
        3,
        true,
        2,
    ));
    assert_eq!(
        encode(&doze),
        [
            2, 2, 7, 1, 3, 1, 0x85, 0xcc, 0xf3, 0xa9, 0xc6, 0xda, 0xf9, 0xd2, 0x14, 0, 2, 0, 2, 0,
            2
        ]
    );
    // version, Request, ts (clock 128 = [0x80, 0x01], n1), seq 1, epoch 0, check word, three
    // fence copies (0, 0).
    let request = look_ahead::Message::request(
        Timestamp {
            clock: 128,
            id: NodeId(1),
        },
        1,
        0,
        0,
    );
    assert_eq!(
        encode(&request),
        [
            2, 0, 0x80, 0x01, 1, 1, 0, 0x95, 0xcf, 0x99, 0x96, 0xb0, 0xaa, 0xb7, 0xaa, 0xdc, 0x01,
            0, 0, 0, 0, 0, 0
        ]
    );

    // version, Request, ts (clock 5, n3), seq 1, check word, three fence copies (0, 5).
    let request = ricart_agrawala::Message::request(
        Timestamp {
            clock: 5,
            id: NodeId(3),
        },
        1,
        5,
    );
    assert_eq!(
        encode(&request),
        [2, 0, 5, 3, 1, 0xf0, 0xa9, 0x9a, 0x9e, 0xb1, 0x80, 0xf9, 0xab, 0x5c, 0, 5, 0, 5, 0, 5]
    );
}

/// The index of every variant (the frame's second byte), pinned in declaration order.
#[test]
fn variant_indices_are_pinned() {
    let h = Sealed::new(Height::new(0, 0, NodeId(0)));
    let p = Priority::new(0, 0);
    let r = Resources::new(1);
    let ts = Timestamp {
        clock: 1,
        id: NodeId(0),
    };
    let a = Announcement::new(ts, 0, false, 0);
    fn index<M: Wire>(m: &M) -> u8 {
        encode(m)[1]
    }

    use reverse_link::Message as Rl;
    let rl = [
        Rl::Request(h),
        Rl::Token(h, FenceCopies::default()),
        Rl::LinkInfo(h),
        Rl::Probe(h),
        Rl::TokenAck(h, 0),
    ];
    assert_eq!(rl.iter().map(index).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);

    use prioritized::Message as Pr;
    let pr = [
        Pr::Token {
            lost: Resources::new(0),
            available: r,
            priority: p,
            height: h,
            fence: FenceCopies::default(),
        },
        Pr::Request {
            priority: p,
            height: h,
        },
        Pr::Update { priority: p },
        Pr::Release {
            lost: Resources::new(0),
            resources: r,
            height: h,
        },
        Pr::Link { height: h },
        Pr::Probe { height: h },
        Pr::TokenAck {
            height: h,
            tokens: 0,
        },
    ];
    assert_eq!(
        pr.iter().map(index).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5, 6]
    );

    use look_ahead::Message as La;
    let la = [
        La::request(ts, 1, 0, 0),
        La::Reply {
            ts,
            seq: 1,
            epoch: 0,
            seen: 0,
            fence: FenceCopies::default(),
        },
        La::Doze(a),
        La::Disconnect(a),
        La::Reconnect(a),
    ];
    assert_eq!(la.iter().map(index).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);

    use ricart_agrawala::Message as Ra;
    let ra = [Ra::request(ts, 1, 0), Ra::reply(ts, 1, 0)];
    assert_eq!(ra.iter().map(index).collect::<Vec<_>>(), [0, 1]);
}

/// Impossible field values are messages, not decode errors: they decode, and the node that
/// receives them reports them (`Anomaly::OutOfRange`) and changes nothing it acts on.
#[test]
fn impossible_fields_decode_and_the_node_reports_them() {
    use reverse_link::{network, Message, Node, Settings};
    let line = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
    let configs = network(3, &line, &[NodeId(0)], Settings::new(1)).unwrap();
    let fresh = Node::new(configs[1].clone()).unwrap();
    let beyond = Height::new(Height::LIMIT + 1, 0, NodeId(0));
    let someone_else = Height::new(0, 0, NodeId(7));
    let unsealed = Sealed {
        check: 0,
        ..Sealed::new(Height::new(0, 0, NodeId(0)))
    };
    for sealed in [Sealed::new(beyond), Sealed::new(someone_else), unsealed] {
        let msg: Message = decode(&encode(&Message::LinkInfo(sealed))).unwrap();
        assert_eq!(msg, Message::LinkInfo(sealed));
        let mut node = fresh.clone();
        let actions: Vec<_> = node
            .handle(Event::Receive {
                from: NodeId(0),
                msg,
            })
            .unwrap()
            .collect();
        assert!(
            actions.contains(&Action::Anomaly {
                from: NodeId(0),
                kind: Anomaly::OutOfRange
            }),
            "{sealed:?}: {actions:?}"
        );
        assert_eq!(node.neighbors(), fresh.neighbors(), "{sealed:?}");
        assert_eq!(node.height(), fresh.height());
    }

    // The other algorithms' impossible values decode just the same.
    let token = prioritized::Message::Token {
        lost: Resources::new(0),
        available: Resources([9, 2, 5]),
        priority: Priority::new(u64::MAX, 0),
        height: Sealed::new(beyond),
        fence: FenceCopies::default(),
    };
    assert_eq!(decode(&encode(&token)), Ok(token));
    let far = Timestamp {
        clock: u64::MAX,
        id: NodeId(u32::MAX),
    };
    let doze = look_ahead::Message::Doze(Announcement {
        check: 1,
        ..Announcement::new(far, u64::MAX, true, u64::MAX)
    });
    assert_eq!(decode(&encode(&doze)), Ok(doze));
    let request = ricart_agrawala::Message::Request {
        ts: far,
        seq: 0,
        check: 0,
        fence: FenceCopies([Fence::new(0, 1), Fence::new(1, 0), Fence::new(7, 7)]),
    };
    assert_eq!(decode(&encode(&request)), Ok(request));
}

/// A network whose every message travels as a frame: each node asks for the critical section
/// once and gets it. Returns the frame lengths seen.
fn run_over_frames<N: Protocol>(mut nodes: Vec<N>) -> Vec<usize>
where
    N::Message: Wire,
{
    let mut lengths = Vec::new();
    let mut events: VecDeque<(usize, Event<N::Message>)> = (0..nodes.len())
        .map(|i| (i, Event::Request(CsRequest::ONE)))
        .collect();
    let mut wire: VecDeque<(NodeId, NodeId, Vec<u8>)> = VecDeque::new();
    let mut entered = vec![0; nodes.len()];
    loop {
        let (at, event) = match events.pop_front() {
            Some(next) => next,
            None => match wire.pop_front() {
                Some((from, to, frame)) => {
                    let msg = decode::<N::Message>(&frame).unwrap();
                    assert_eq!(encode(&msg), frame);
                    (to.index(), Event::Receive { from, msg })
                }
                None => break,
            },
        };
        let id = nodes[at].id();
        for action in nodes[at].handle(event).unwrap() {
            match action {
                Action::Send { to, msg } => {
                    let frame = encode(&msg);
                    lengths.push(frame.len());
                    wire.push_back((id, to, frame));
                }
                Action::EnterCritical { .. } => {
                    entered[at] += 1;
                    events.push_back((at, Event::Release));
                }
                _ => {}
            }
        }
    }
    assert!(entered.iter().all(|&e| e == 1), "{entered:?}");
    lengths
}

#[test]
fn every_algorithm_runs_over_frames() {
    let ring = [
        (NodeId(0), NodeId(1)),
        (NodeId(1), NodeId(2)),
        (NodeId(2), NodeId(3)),
        (NodeId(3), NodeId(0)),
    ];
    let holder = [NodeId(0)];
    let rl = reverse_link::network(4, &ring, &holder, reverse_link::Settings::new(1)).unwrap();
    let rl = run_over_frames(
        rl.into_iter()
            .map(|c| reverse_link::Node::new(c).unwrap())
            .collect(),
    );
    let pr_settings = prioritized::Settings::new(2, prioritized::Policy::Explicit);
    let pr = prioritized::network(4, &ring, &holder, pr_settings).unwrap();
    let pr = run_over_frames(
        pr.into_iter()
            .map(|c| prioritized::Node::new(c).unwrap())
            .collect(),
    );
    let la = look_ahead::network(look_ahead::Settings::new(4, 50)).unwrap();
    let la = run_over_frames(
        la.into_iter()
            .map(|c| look_ahead::Node::new(c).unwrap())
            .collect(),
    );
    let ra = ricart_agrawala::network(ricart_agrawala::Settings::new(4, 50)).unwrap();
    let ra = run_over_frames(
        ra.into_iter()
            .map(|c| ricart_agrawala::Node::new(c).unwrap())
            .collect(),
    );
    for (name, lengths) in [
        ("reverse_link", rl),
        ("prioritized", pr),
        ("look_ahead", la),
        ("ricart_agrawala", ra),
    ] {
        assert!(!lengths.is_empty(), "{name} sent nothing");
        let (min, max) = (lengths.iter().min().unwrap(), lengths.iter().max().unwrap());
        let mean = lengths.iter().sum::<usize>() as f64 / lengths.len() as f64;
        println!(
            "{name}: {} frames of {min} to {max} bytes, {mean:.1} on average",
            lengths.len()
        );
        assert!(*max <= MAX_FRAME);
    }
}
