//! The wire codec (`manet_mutex::codec`) against the threat model: every message of every
//! algorithm, whatever its field values, round-trips; bytes that are no frame (truncated,
//! oversized, another version, a changed byte, random) are refused or decode to the one
//! message whose frame they are, and never panic; the frame check (CRC-32C) detects every
//! error of up to 5 bits in any frame, proved exhaustively, and every flipped bit of real
//! frames; the exact bytes of messages and the index of every variant are pinned, so a format
//! change cannot slip in without a new version; and a message with impossible fields decodes,
//! for the node to report.

use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::path::Path;

use manet_mutex::codec::{
    decode, encode, encode_into, DecodeError, Wire, CHECK_LEN, MAX_FRAME, VERSION,
};
use manet_mutex::look_ahead::Announcement;
use manet_mutex::permission::Timestamp;
use manet_mutex::prioritized::Resources;
use manet_mutex::queue::Priority;
use manet_mutex::token::height::{Height, Sealed};
use manet_mutex::{
    look_ahead, prioritized, reverse_link, ricart_agrawala, Action, Anomaly, CsRequest, Event,
    Fence, FenceCopies, NodeId, Protocol,
};
use manet_mutex_testkit::fuzz::decode as body;
use manet_mutex_testkit::strategy::cases;
use proptest::collection::vec;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---- The frame check, computed apart from the crate: CRC-32C bit by bit (reflected
// polynomial 0x82f63b78, initial value and final XOR all ones), so the pinned bytes and the
// sealed test frames do not trust the codec's own CRC.

fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = (crc >> 1) ^ if crc & 1 == 1 { 0x82f6_3b78 } else { 0 };
        }
    }
    !crc
}

/// `bytes` (a version byte and a body) followed by their frame check: a frame whose check
/// passes, so that its body reaches the body decoder.
pub(crate) fn seal(bytes: &[u8]) -> Vec<u8> {
    let mut frame = bytes.to_vec();
    frame.extend_from_slice(&crc32c(bytes).to_le_bytes());
    frame
}

/// Whether `frame` ends in the frame check of the rest.
fn check_passes(frame: &[u8]) -> bool {
    let (checked, check) = frame.split_at(frame.len() - CHECK_LEN);
    crc32c(checked).to_le_bytes() == check
}

/// The frame without its check: the version byte and the body.
fn unsealed(frame: &[u8]) -> &[u8] {
    &frame[..frame.len() - CHECK_LEN]
}

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

pub(crate) fn reverse_link_message() -> BoxedStrategy<reverse_link::Message> {
    use reverse_link::Message;
    prop_oneof![
        sealed().prop_map(Message::Request),
        (sealed(), fence()).prop_map(|(height, fence)| Message::Token(height, fence)),
        sealed().prop_map(Message::LinkInfo),
        sealed().prop_map(Message::Probe),
        (sealed(), any::<u16>()).prop_map(|(height, tokens)| Message::TokenAck(height, tokens)),
        (sealed(), fence(), any::<u16>())
            .prop_map(|(height, fence, hops)| Message::Beacon(height, fence, hops)),
        (sealed(), any::<u32>(), any::<[u32; 3]>())
            .prop_map(|(height, lane, generation)| Message::Claim(height, lane, generation)),
        (sealed(), any::<u32>(), any::<[u32; 3]>(), any::<u32>()).prop_map(
            |(height, lane, ballot, voter)| Message::Promise(height, lane, ballot, voter)
        ),
    ]
    .boxed()
}

pub(crate) fn prioritized_message() -> BoxedStrategy<prioritized::Message> {
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
        (resources(), resources(), sealed(), any::<[u32; 3]>()).prop_map(
            |(resources, lost, height, generation)| Message::Release {
                lost,
                resources,
                height,
                generation,
            }
        ),
        sealed().prop_map(|height| Message::Link { height }),
        sealed().prop_map(|height| Message::Probe { height }),
        (sealed(), any::<u16>()).prop_map(|(height, tokens)| Message::TokenAck { height, tokens }),
        (fence(), any::<u16>(), sealed()).prop_map(|(fence, hops, height)| Message::Beacon {
            fence,
            hops,
            height
        }),
        (any::<u32>(), any::<[u32; 3]>(), sealed()).prop_map(|(lane, generation, height)| {
            Message::Claim {
                lane,
                generation,
                height,
            }
        }),
        (any::<u32>(), any::<[u32; 3]>(), any::<u32>(), sealed()).prop_map(
            |(lane, ballot, voter, height)| Message::Promise {
                lane,
                ballot,
                voter,
                height,
            }
        ),
    ]
    .boxed()
}

pub(crate) fn look_ahead_message() -> BoxedStrategy<look_ahead::Message> {
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
        (timestamp(), u64s(), u64s(), u64s(), u64s())
            .prop_map(|(ts, seq, epoch, seen, f)| { Message::reply(ts, seq, epoch, seen, f) }),
        (timestamp(), u64s(), u64s(), u64s(), u64s(), fence()).prop_map(
            |(ts, seq, epoch, seen, check, fence)| Message::Reply {
                ts,
                seq,
                epoch,
                seen,
                check,
                fence,
            }
        ),
        announcement().prop_map(Message::Doze),
        announcement().prop_map(Message::Disconnect),
        announcement().prop_map(Message::Reconnect),
    ]
    .boxed()
}

pub(crate) fn ricart_agrawala_message() -> BoxedStrategy<ricart_agrawala::Message> {
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
        (timestamp(), u64s(), u64s()).prop_map(|(ts, seq, f)| Message::reply(ts, seq, f)),
        (timestamp(), u64s(), u64s(), fence()).prop_map(|(ts, seq, check, fence)| {
            Message::Reply {
                ts,
                seq,
                check,
                fence,
            }
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
    prop_assert!(check_passes(&frame), "{frame:?}");
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

    /// A frame cut short is too short for the version and the check (`Truncated`), or fails
    /// the check; with the check made right, its body ends early (`Truncated`).
    #[test]
    fn every_proper_prefix_of_a_frame_is_truncated_or_fails_the_check(msg in any_message()) {
        let frame = msg.frame();
        for len in 0..frame.len() {
            let cut = &frame[..len];
            let expected = if len < 1 + CHECK_LEN {
                DecodeError::Truncated
            } else if !check_passes(cut) {
                DecodeError::Checksum
            } else {
                // By chance (2^-32) the cut ends in the check of the rest: its body is short.
                DecodeError::Truncated
            };
            prop_assert_eq!(msg.decode_as_own(cut), Err(expected));
            body::run(cut);
        }
        for len in 0..frame.len() - CHECK_LEN {
            let cut = seal(&frame[..len]);
            prop_assert_eq!(msg.decode_as_own(&cut), Err(DecodeError::Truncated));
            body::run(&frame[..len]);
        }
    }

    /// Bytes after a frame fail the check; bytes after the message inside a body whose check
    /// is right are `TrailingBytes`.
    #[test]
    fn bytes_after_the_message_are_refused(msg in any_message(), extra in vec(any::<u8>(), 1..8)) {
        let frame = msg.frame();
        let mut after = frame.clone();
        after.extend_from_slice(&extra);
        let expected = if after.len() > MAX_FRAME {
            DecodeError::Oversized { len: after.len() }
        } else if !check_passes(&after) {
            DecodeError::Checksum
        } else {
            DecodeError::TrailingBytes { extra: extra.len() }
        };
        prop_assert_eq!(msg.decode_as_own(&after), Err(expected));
        body::run(&after);

        let mut inside = unsealed(&frame).to_vec();
        inside.extend_from_slice(&extra);
        let inside = seal(&inside);
        let expected = if inside.len() > MAX_FRAME {
            DecodeError::Oversized { len: inside.len() }
        } else {
            DecodeError::TrailingBytes { extra: extra.len() }
        };
        prop_assert_eq!(msg.decode_as_own(&inside), Err(expected));
        body::run(unsealed(&inside));
    }

    /// The version is checked before the frame check: another version is reported as such,
    /// whether or not the check was made for it.
    #[test]
    fn other_versions_are_refused(msg in any_message(), version in any::<u8>()) {
        prop_assume!(version != VERSION);
        let mut frame = msg.frame();
        frame[0] = version;
        prop_assert_eq!(msg.decode_as_own(&frame), Err(DecodeError::UnknownVersion(version)));
        body::run(&frame);
        let resealed = seal(unsealed(&frame));
        prop_assert_eq!(msg.decode_as_own(&resealed), Err(DecodeError::UnknownVersion(version)));
    }

    #[test]
    fn random_bytes_decode_exactly_or_fail(data in vec(any::<u8>(), 0..80)) {
        body::run(&data);
    }

    /// Random bodies after the version, as they are and sealed (`body::run` does both).
    #[test]
    fn random_bodies_decode_exactly_or_fail(data in vec(any::<u8>(), 0..MAX_FRAME)) {
        let frame: Vec<u8> = std::iter::once(VERSION).chain(data).collect();
        body::run(&frame);
    }
}

/// The test's CRC is CRC-32C (its catalogue check value), and the codec's frame check and the
/// test kit's `seal` are the test's CRC.
#[test]
fn the_frame_check_is_crc32c() {
    assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for _ in 0..1000 {
        let len = rng.random_range(0..MAX_FRAME);
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        assert_eq!(body::seal(&bytes), seal(&bytes));
    }
    let msg = ricart_agrawala::Message::reply(
        Timestamp {
            clock: 9,
            id: NodeId(2),
        },
        4,
        1,
    );
    assert!(check_passes(&encode(&msg)));
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

    /// A frame with one byte changed fails the frame check (a change within one byte is a
    /// burst of at most 8 bits), or the version check if it is the first byte. With the check
    /// made right, the changed body is refused or is exactly the frame of another message
    /// (never of the same one: one frame per message).
    #[test]
    fn every_single_byte_change_of_a_frame_fails_or_decodes_exactly(msg in any_message()) {
        let frame = msg.frame();
        for at in 0..frame.len() {
            for value in 0..=u8::MAX {
                if value == frame[at] {
                    continue;
                }
                let mut changed = frame.clone();
                changed[at] = value;
                let expected = if at == 0 {
                    DecodeError::UnknownVersion(value)
                } else {
                    DecodeError::Checksum
                };
                prop_assert_eq!(msg.decode_as_own(&changed), Err(expected));
                if at < frame.len() - CHECK_LEN {
                    let resealed = seal(unsealed(&changed));
                    prop_assert_ne!(msg.decode_as_own(&resealed), Ok(true));
                    // Both: as changed, and with the check made right.
                    body::run(unsealed(&changed));
                }
            }
        }
    }
}

/// What a frame with `flips` (bit positions, byte × 8 + bit) flipped must decode to: another
/// version if the first byte changed (the version is checked first), else a failed check.
fn flipped(frame: &[u8], flips: &[usize]) -> (Vec<u8>, DecodeError) {
    let mut changed = frame.to_vec();
    for &bit in flips {
        changed[bit / 8] ^= 1 << (bit % 8);
    }
    let expected = if changed[0] != VERSION {
        DecodeError::UnknownVersion(changed[0])
    } else {
        DecodeError::Checksum
    };
    (changed, expected)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Every single flipped bit of a real frame of any algorithm, and random errors of 1 to 5
    /// bits and random bursts of up to 32 bits, are detected: `UnknownVersion` if they hit the
    /// version byte, `Checksum` otherwise.
    #[test]
    fn every_bit_flip_and_small_error_of_a_frame_is_detected(msg in any_message(), seed in any::<u64>()) {
        let frame = msg.frame();
        let bits = frame.len() * 8;
        for bit in 0..bits {
            let (changed, expected) = flipped(&frame, &[bit]);
            prop_assert_eq!(msg.decode_as_own(&changed), Err(expected), "bit {}", bit);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for weight in 1..=5 {
            for _ in 0..64 {
                let flips = rand::seq::index::sample(&mut rng, bits, weight).into_vec();
                let (changed, expected) = flipped(&frame, &flips);
                prop_assert_eq!(msg.decode_as_own(&changed), Err(expected), "bits {:?}", flips);
            }
        }
        for _ in 0..64 {
            // A burst: first and last bit flipped, anything between.
            let len = rng.random_range(1..=32.min(bits));
            let start = rng.random_range(0..=bits - len);
            let flips: Vec<usize> = (start..start + len)
                .filter(|&b| b == start || b == start + len - 1 || rng.random_bool(0.5))
                .collect();
            let (changed, expected) = flipped(&frame, &flips);
            prop_assert_eq!(msg.decode_as_own(&changed), Err(expected), "burst {:?}", flips);
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
    // At the bound the frame is read: its check, then its body.
    let mut full = unsealed(&frame).to_vec();
    full.resize(MAX_FRAME, 0);
    assert_eq!(
        decode::<reverse_link::Message>(&full),
        Err(DecodeError::Checksum)
    );
    let mut full = unsealed(&frame).to_vec();
    full.resize(MAX_FRAME - CHECK_LEN, 0);
    assert_eq!(
        decode::<reverse_link::Message>(&seal(&full)),
        Err(DecodeError::TrailingBytes {
            extra: MAX_FRAME - frame.len()
        })
    );
}

#[test]
fn a_frame_too_short_for_the_check_is_truncated_and_every_other_version_unknown() {
    assert_eq!(
        decode::<look_ahead::Message>(&[]),
        Err(DecodeError::Truncated)
    );
    // Shorter than a version byte and the check, whatever the bytes.
    for short in [&[VERSION][..], &[VERSION, 0, 0, 0], &[9, 1, 2]] {
        assert_eq!(
            decode::<look_ahead::Message>(short),
            Err(DecodeError::Truncated)
        );
    }
    // A version and a right check, and no body.
    assert_eq!(
        decode::<look_ahead::Message>(&seal(&[VERSION])),
        Err(DecodeError::Truncated)
    );
    let ts = Timestamp {
        clock: 1,
        id: NodeId(1),
    };
    let frame = encode(&ricart_agrawala::Message::reply(ts, 1, 0));
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
            seal(&[VERSION, n]),
            seal(&[VERSION, 0xff, 0xff, 0xff, 0xff, 0x0f]),
        ]
    };
    for f in past_last(8) {
        assert_eq!(decode::<reverse_link::Message>(&f), Err(malformed));
    }
    for f in past_last(10) {
        assert_eq!(decode::<prioritized::Message>(&f), Err(malformed));
    }
    for f in past_last(5) {
        assert_eq!(decode::<look_ahead::Message>(&f), Err(malformed));
    }
    for f in past_last(3) {
        assert_eq!(decode::<ricart_agrawala::Message>(&f), Err(malformed));
    }
    // A variant index beyond u32.
    assert_eq!(
        decode::<reverse_link::Message>(&seal(&[VERSION, 0xff, 0xff, 0xff, 0xff, 0x10])),
        Err(malformed)
    );

    // A DOZE whose `absent` byte is 2: ts (1, n1), seen 0, absent, check 0, fence copies
    // (0, 0) three times.
    let doze = |absent: u8| seal(&[VERSION, 2, 1, 1, 0, absent, 0, 0, 0, 0, 0, 0, 0]);
    assert!(decode::<look_ahead::Message>(&doze(1)).is_ok());
    assert_eq!(decode::<look_ahead::Message>(&doze(2)), Err(malformed));

    // A REPLY of ricart_agrawala: ts (clock, id), seq, a check word (7: the codec reads it,
    // the node judges it), fence copies (0, 0) three times.
    let reply = |clock: &[u8], id: &[u8]| {
        let mut f = vec![VERSION, 1];
        f.extend_from_slice(clock);
        f.extend_from_slice(id);
        f.extend_from_slice(&[1, 7]);
        f.extend_from_slice(&[0; 6]);
        seal(&f)
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
        decode::<ricart_agrawala::Message>(&seal(&[
            VERSION, 0x81, 0x00, 5, 3, 1, 7, 0, 0, 0, 0, 0, 0
        ])),
        Err(malformed)
    );
    assert!(
        decode::<ricart_agrawala::Message>(&seal(&[VERSION, 1, 5, 3, 1, 7, 0, 0, 0, 0, 0, 0]))
            .is_ok()
    );
}

/// Every variant of every algorithm with every field at its longest encoding: the largest
/// frames, pinned, within `MAX_FRAME`, and the largest of all as the module docs state it.
#[test]
fn the_largest_frames_fit_max_frame() {
    // A check word is at its longest when it is all ones on the wire, after its kind's tag.
    let longest = |domain, variant| u64::MAX ^ unleb(&tagged(&[0], domain, variant));
    let height = |domain, variant| Sealed {
        height: Height::new(i64::MIN, i64::MAX, NodeId(u32::MAX)),
        check: longest(domain, variant),
    };
    let ts = Timestamp {
        clock: u64::MAX,
        id: NodeId(u32::MAX),
    };
    let resources = Resources([u32::MAX; 3]);
    let priority = Priority::new(u64::MAX, u32::MAX);
    let fence = FenceCopies::new(Fence::new(u32::MAX, u64::MAX));
    let announcement = |variant| Announcement {
        ts,
        seen: u64::MAX,
        absent: true,
        check: longest(LOOK, variant),
        fence,
    };
    let max = u64::MAX;

    use reverse_link::Message as Rl;
    let rl = [
        Rl::Request(height(KRL, 0)),
        Rl::Token(height(KRL, 1), fence),
        Rl::LinkInfo(height(KRL, 2)),
        Rl::Probe(height(KRL, 3)),
        Rl::TokenAck(height(KRL, 4), u16::MAX),
        Rl::Beacon(height(KRL, 5), fence, u16::MAX),
        Rl::Claim(height(KRL, 6), u32::MAX, [u32::MAX; 3]),
        Rl::Promise(height(KRL, 7), u32::MAX, [u32::MAX; 3], u32::MAX),
    ];
    let rl = sizes(&rl);
    // Three fence copies at their longest take 3 × (5 + 10) = 45 bytes; every frame ends in
    // the 4 bytes of the check; a count modulo 2^16 takes 3; a claim's id and three
    // generations take 4 × 5; a promise's, with its voter, 5 × 5.
    assert_eq!(rl, [41, 86, 41, 41, 44, 89, 61, 66]);

    use prioritized::Message as Pr;
    let pr = [
        Pr::Token {
            lost: resources,
            available: resources,
            priority,
            height: height(PRIO, 0),
            fence,
        },
        Pr::Request {
            priority,
            height: height(PRIO, 1),
        },
        Pr::Update { priority },
        Pr::Release {
            lost: resources,
            resources,
            height: height(PRIO, 3),
            generation: [u32::MAX; 3],
        },
        Pr::Link {
            height: height(PRIO, 4),
        },
        Pr::Probe {
            height: height(PRIO, 5),
        },
        Pr::TokenAck {
            height: height(PRIO, 6),
            tokens: u16::MAX,
        },
        Pr::Beacon {
            fence,
            hops: u16::MAX,
            height: height(PRIO, 7),
        },
        Pr::Claim {
            lane: u32::MAX,
            generation: [u32::MAX; 3],
            height: height(PRIO, 8),
        },
        Pr::Promise {
            lane: u32::MAX,
            ballot: [u32::MAX; 3],
            voter: u32::MAX,
            height: height(PRIO, 9),
        },
    ];
    let pr = sizes(&pr);
    // Three resource copies (or generations) at their longest take 15 bytes.
    assert_eq!(pr, [131, 56, 21, 86, 41, 41, 44, 89, 61, 66]);

    use look_ahead::Message as La;
    let la = [
        La::Request {
            ts,
            seq: max,
            epoch: max,
            check: longest(LOOK, 0),
            fence,
        },
        La::Reply {
            ts,
            seq: max,
            epoch: max,
            seen: max,
            check: longest(LOOK, 1),
            fence,
        },
        La::Doze(announcement(2)),
        La::Disconnect(announcement(3)),
        La::Reconnect(announcement(4)),
    ];
    let la = sizes(&la);
    assert_eq!(la, [96, 106, 87, 87, 87]);

    use ricart_agrawala::Message as Ra;
    let ra = [
        Ra::Request {
            ts,
            seq: max,
            check: longest(RICA, 0),
            fence,
        },
        Ra::Reply {
            ts,
            seq: max,
            check: longest(RICA, 1),
            fence,
        },
    ];
    let ra = sizes(&ra);
    assert_eq!(ra, [86, 86]);

    let largest = [rl, pr, la, ra].concat().into_iter().max().unwrap();
    assert!(largest <= MAX_FRAME, "{largest}");
    // The docs give this number; they must say what this test computes.
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/codec.rs"))
        .unwrap();
    for claim in [
        format!("Every message of version {VERSION} encodes in at most {largest} bytes"),
        format!("at most {largest} bytes in version {VERSION}"),
    ] {
        assert!(docs.contains(&claim), "src/codec.rs should say: {claim}");
    }
    println!("largest frame: {largest} of {MAX_FRAME} bytes");
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
    assert_eq!(VERSION, 4);
    assert_eq!(MAX_FRAME, 160);
    assert_eq!(CHECK_LEN, 4);
    // The check words' bytes were worked out apart from the crate: `seal::check_word` of the
    // fields by hand, then LEB128; on the wire each is XORed with its kind's tag (`tagged`
    // here, from the tag's definition). The frame checks (the last 4 bytes) by a CRC-32C
    // written apart from the crate, as `crc32c` and `seal` here.

    // The module docs' worked example: version, Reply, ts (clock 1, n1), seq 1, the check word
    // over (1, 1, 1) tagged as the Ricart–Agrawala variant 1, three fence copies (0, 0), the
    // frame check (worked out apart from the crate, in Python).
    let reply = ricart_agrawala::Message::reply(
        Timestamp {
            clock: 1,
            id: NodeId(1),
        },
        1,
        0,
    );
    let word = [0xa9, 0xb2, 0xcb, 0xe6, 0xad, 0xc8, 0xdb, 0xe4, 0x64];
    let expected = [&[4, 1, 1, 1, 1][..], &tagged(&word, RICA, 1), &[0; 6]].concat();
    assert_eq!(
        expected,
        [
            4, 1, 1, 1, 1, 0xb1, 0xf1, 0xca, 0x86, 0xef, 0x92, 0xce, 0x88, 0xca, 0x01, 0, 0, 0, 0,
            0, 0
        ]
    );
    assert_eq!(
        encode(&reply),
        [expected, vec![0xbb, 0x02, 0xba, 0x6b]].concat()
    );

    // version, Token, h1 0, h2 -1 (zigzag 1), id 2, check word tagged as KRL's variant 1,
    // then three fence copies (lane 1, value 300 = [0xac, 0x02]), the frame check.
    let token = reverse_link::Message::Token(
        Sealed::new(Height::new(0, -1, NodeId(2))),
        Fence::new(1, 300).into(),
    );
    let word = [0xce, 0xd6, 0xc5, 0x8f, 0x87, 0xae, 0xed, 0xd6, 0xd2, 0x01];
    let expected = [
        &[4, 1, 0, 1, 2][..],
        &tagged(&word, KRL, 1),
        &[1, 0xac, 0x02, 1, 0xac, 0x02, 1, 0xac, 0x02],
    ];
    assert_eq!(encode(&token), seal(&expected.concat()));

    // version, Token, available (2, 2, 2), lost (0, 0, 0), priority (level 300 =
    // [0xac, 0x02], rank 0), height (h1 1 = zigzag 2, h2 0, n4), check word tagged as the
    // prioritized variant 0, three fence copies (0, 0).
    let token = prioritized::Message::Token {
        lost: Resources::new(0),
        available: Resources::new(2),
        priority: Priority::new(300, 0),
        height: Sealed::new(Height::new(1, 0, NodeId(4))),
        fence: FenceCopies::default(),
    };
    let word = [0xf2, 0xe1, 0x8b, 0xa4, 0xd3, 0xc1, 0x82, 0xef, 0x59];
    let expected = [
        &[4, 0, 2, 2, 2, 0, 0, 0, 0xac, 0x02, 0, 2, 0, 4][..],
        &tagged(&word, PRIO, 0),
        &[0, 0, 0, 0, 0, 0],
    ];
    assert_eq!(encode(&token), seal(&expected.concat()));

    // version, TokenAck, h1 1 = zigzag 2, h2 0, n4, the check word over the height and the
    // count 2 (its own word XOR 2 × 0xA24B_AED4_963E_E407), tagged as KRL's variant 4, then
    // the count.
    let ack = reverse_link::Message::token_ack(Height::new(1, 0, NodeId(4)), 2);
    let untagged = unleb(&word) ^ 2u64.wrapping_mul(0xA24B_AED4_963E_E407);
    let expected = [&[4, 4, 2, 0, 4][..], &tagged(&leb(untagged), KRL, 4), &[2]];
    assert_eq!(encode(&ack), seal(&expected.concat()));

    // version, Doze, ts (clock 7, n1), seen 3, absent (true), check word tagged as the
    // look-ahead variant 2, three fence copies (0, 2).
    let doze = look_ahead::Message::Doze(Announcement::new(
        Timestamp {
            clock: 7,
            id: NodeId(1),
        },
        3,
        true,
        2,
    ));
    let word = [0x85, 0xcc, 0xf3, 0xa9, 0xc6, 0xda, 0xf9, 0xd2, 0x14];
    let expected = [
        &[4, 2, 7, 1, 3, 1][..],
        &tagged(&word, LOOK, 2),
        &[0, 2, 0, 2, 0, 2],
    ];
    assert_eq!(encode(&doze), seal(&expected.concat()));
    // version, Request, ts (clock 128 = [0x80, 0x01], n1), seq 1, epoch 0, check word tagged
    // as the look-ahead variant 0, three fence copies (0, 0).
    let request = look_ahead::Message::request(
        Timestamp {
            clock: 128,
            id: NodeId(1),
        },
        1,
        0,
        0,
    );
    let word = [0x95, 0xcf, 0x99, 0x96, 0xb0, 0xaa, 0xb7, 0xaa, 0xdc, 0x01];
    let expected = [
        &[4, 0, 0x80, 0x01, 1, 1, 0][..],
        &tagged(&word, LOOK, 0),
        &[0, 0, 0, 0, 0, 0],
    ];
    assert_eq!(encode(&request), seal(&expected.concat()));

    // version, Request, ts (clock 5, n3), seq 1, check word tagged as the Ricart–Agrawala
    // variant 0, three fence copies (0, 5).
    let request = ricart_agrawala::Message::request(
        Timestamp {
            clock: 5,
            id: NodeId(3),
        },
        1,
        5,
    );
    let word = [0xf0, 0xa9, 0x9a, 0x9e, 0xb1, 0x80, 0xf9, 0xab, 0x5c];
    let expected = [
        &[4, 0, 5, 3, 1][..],
        &tagged(&word, RICA, 0),
        &[0, 5, 0, 5, 0, 5],
    ];
    assert_eq!(encode(&request), seal(&expected.concat()));
}

/// The domains of the kind tags (ASCII): "krl-kind", "prio-kin", "look-kin", "rica-kin".
const KRL: u64 = 0x6b72_6c2d_6b69_6e64;
const PRIO: u64 = 0x7072_696f_2d6b_696e;
const LOOK: u64 = 0x6c6f_6f6b_2d6b_696e;
const RICA: u64 = 0x7269_6361_2d6b_696e;

/// The LEB128 bytes of a check word `word` (LEB128 bytes too) as the wire carries it for the
/// variant `variant` of the algorithm of `domain`: XORed with `domain + (variant + 1) ×
/// 0x9E37_79B9_7F4A_7C15`.
fn tagged(word: &[u8], domain: u64, variant: u64) -> Vec<u8> {
    let tag = domain.wrapping_add((variant + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    leb(unleb(word) ^ tag)
}

fn leb(mut x: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (x & 0x7f) as u8;
        x >>= 7;
        if x == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn unleb(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .enumerate()
        .fold(0, |x, (i, b)| x | (u64::from(b & 0x7f) << (7 * i)))
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
            generation: [0; 3],
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
        La::reply(ts, 1, 0, 0, 0),
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

// ---- The frame check's Hamming distance, proved.
//
// For frames of one length the check is affine in the bits: crc(a ^ b) = crc(a) ^ crc(b) ^
// crc(0) for inputs of equal length (the initial value and the final XOR add a constant per
// length). So flipping the bits of an error pattern e in a frame whose check passes leaves it
// passing iff e's syndrome, crc(x ^ e_checked) ^ crc(x) ^ e_check, is zero, whatever the
// frame x; and the syndrome of e is the XOR of the syndromes of its single bits. An error of
// n bits passes iff some n distinct single-bit syndromes XOR to zero. Errors do not change a
// frame's length (a cut or padded frame is another matter: `every_proper_prefix_...`).

/// The syndrome of each single flipped bit of a frame of `len` bytes, by bit position (byte
/// × 8 + bit, the positions `flipped` takes), from the codec's own check (the test kit's
/// `seal` is it, `the_frame_check_is_crc32c`).
fn syndromes(len: usize) -> Vec<u32> {
    let checked = len - CHECK_LEN;
    let check = |x: &[u8]| {
        let sealed = body::seal(x);
        u32::from_le_bytes(sealed[checked..].try_into().unwrap())
    };
    // Any frame will do: the syndromes do not depend on it (linearity, checked below).
    let mut rng = ChaCha8Rng::seed_from_u64(len as u64);
    let mut x: Vec<u8> = (0..checked).map(|_| rng.random()).collect();
    let base = check(&x);
    let mut out = Vec::with_capacity(len * 8);
    for bit in 0..checked * 8 {
        x[bit / 8] ^= 1 << (bit % 8);
        out.push(check(&x) ^ base);
        x[bit / 8] ^= 1 << (bit % 8);
    }
    // A flipped bit of the check itself: the check is little endian, so bit j of its byte i
    // is bit 8i + j of the CRC.
    out.extend((0..CHECK_LEN * 8).map(|bit| 1u32 << bit));
    out
}

/// Every error of 1 to 5 flipped bits in any frame of up to `MAX_FRAME` bytes fails the
/// frame check (the code's Hamming distance is at least 6), and so does every error of an
/// odd number of bits. Exhaustive over every bit position, in well under a second.
#[test]
fn crc_detects_every_error_of_up_to_five_bits() {
    let all = syndromes(MAX_FRAME);
    // Shorter frames have the same syndromes as the last positions of the longest (a bit's
    // syndrome depends only on its distance from the end of the frame: the CRC register
    // carries it forward the same way whatever came before), so what holds for every set of
    // positions of the longest frame holds for every frame.
    for len in 1 + CHECK_LEN..MAX_FRAME {
        assert_eq!(syndromes(len), all[all.len() - len * 8..], "{len} bytes");
    }
    // An odd number of bits (1, 3, 5, ...): every syndrome has an odd number of ones (the
    // Castagnoli polynomial has the factor x + 1), so an XOR of an odd number of them does
    // too and is not zero.
    assert!(all.iter().all(|s| s.count_ones() % 2 == 1));
    // 2 bits: no pair of syndromes XORs to zero (they are distinct). 4 bits: no two disjoint
    // pairs have the same XOR. Two different pairs that share a bit cannot have the same XOR
    // either (their other bits' syndromes would be equal), so both say: the XORs of all pairs
    // are non-zero and distinct.
    let n = all.len();
    let mut pairs = Vec::with_capacity(n * (n - 1) / 2);
    for (i, &a) in all.iter().enumerate() {
        pairs.extend(all[i + 1..].iter().map(|&b| a ^ b));
    }
    pairs.sort_unstable();
    assert_ne!(pairs[0], 0, "two bits with one syndrome");
    let same = pairs.windows(2).position(|w| w[0] == w[1]);
    assert_eq!(same, None, "two pairs of bits with one syndrome");
    println!(
        "{n} bit positions, {} pairs: every error of up to 5 bits is detected",
        pairs.len()
    );
}

/// 5 is the largest such number: some errors of 6 bits pass the check, for example in the
/// largest frame of version 3 (found by comparing the syndromes of random triples of bits
/// outside the version byte). Such an error turns the frame into one whose check passes.
#[test]
fn crc_misses_some_six_bit_errors() {
    let height = Sealed {
        height: Height::new(i64::MIN, i64::MAX, NodeId(u32::MAX)),
        check: u64::MAX,
    };
    let token = prioritized::Message::Token {
        available: Resources([u32::MAX; 3]),
        lost: Resources([u32::MAX; 3]),
        priority: Priority::new(u64::MAX, u32::MAX),
        height,
        fence: FenceCopies::new(Fence::new(u32::MAX, u64::MAX)),
    };
    let frame = encode(&token);
    let bits = frame.len() * 8;
    let syndrome = syndromes(frame.len());
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut seen: HashMap<u32, Vec<usize>> = HashMap::new();
    let (triple, other) = loop {
        let mut triple = rand::seq::index::sample(&mut rng, bits - 8, 3).into_vec();
        triple.iter_mut().for_each(|b| *b += 8);
        triple.sort_unstable();
        let s = triple.iter().fold(0, |s, &b| s ^ syndrome[b]);
        match seen.insert(s, triple.clone()) {
            Some(other) if other != triple => break (triple, other),
            _ => {}
        }
    };
    // Disjoint, or fewer than 6 bits would pass, which the proof above rules out.
    let flips: Vec<usize> = triple.iter().chain(&other).copied().collect();
    assert!(triple.iter().all(|b| !other.contains(b)), "{flips:?}");
    let (changed, _) = flipped(&frame, &flips);
    assert!(check_passes(&changed), "{flips:?}");
    assert_ne!(
        decode::<prioritized::Message>(&changed),
        Err(DecodeError::Checksum)
    );
    println!(
        "a 6-bit error of a {}-byte frame that passes the check: bits {flips:?} ({} triples tried)",
        frame.len(),
        seen.len() + 1
    );
}

/// The proof's model against the decoder itself, on a small real frame: every error of 1 to
/// 4 bits fails to decode (`Checksum`, or `UnknownVersion` if it hits the version byte); and
/// errors of any number of bits pass the check exactly when the XOR of their syndromes is
/// zero (some made to pass by flipping the check bits the syndrome names).
#[test]
fn crc_proof_agrees_with_flipping_bits_and_decoding() {
    type M = ricart_agrawala::Message;
    let frame = encode(&M::reply(
        Timestamp {
            clock: 1,
            id: NodeId(1),
        },
        1,
        0,
    ));
    let bits = frame.len() * 8;
    let expect = |flips: &[usize]| {
        let (changed, expected) = flipped(&frame, flips);
        assert_eq!(decode::<M>(&changed), Err(expected), "bits {flips:?}");
    };
    let mut tried = 0u64;
    for a in 0..bits {
        expect(&[a]);
        for b in a + 1..bits {
            expect(&[a, b]);
            for c in b + 1..bits {
                expect(&[a, b, c]);
                for d in c + 1..bits {
                    expect(&[a, b, c, d]);
                    tried += 1;
                }
            }
        }
    }
    assert_eq!(
        tried,
        (bits * (bits - 1) * (bits - 2) * (bits - 3) / 24) as u64
    );

    let all = syndromes(MAX_FRAME);
    let syndrome = &all[all.len() - bits..];
    assert_eq!(syndrome, syndromes(frame.len()));
    let checked_bits = bits - CHECK_LEN * 8;
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for _ in 0..2000 {
        // Any bits after the version byte.
        let mut flips: Vec<usize> = (8..bits).filter(|_| rng.random_bool(0.3)).collect();
        if rng.random_bool(0.5) {
            // Make it pass: flip the check bits whose syndromes XOR to what the rest gives.
            flips.retain(|&b| b < checked_bits);
            let s = flips.iter().fold(0, |s, &b| s ^ syndrome[b]);
            flips.extend(
                (0..32)
                    .filter(|j| s >> j & 1 == 1)
                    .map(|j| checked_bits + j),
            );
        }
        let s = flips.iter().fold(0, |s, &b| s ^ syndrome[b]);
        let (changed, _) = flipped(&frame, &flips);
        assert_eq!(check_passes(&changed), s == 0, "bits {flips:?}");
        let decoded = decode::<M>(&changed);
        assert_eq!(
            decoded == Err(DecodeError::Checksum),
            s != 0,
            "bits {flips:?}"
        );
    }
}

/// Every burst of errors (any errors within 32 consecutive bits) fails the frame check: for
/// each window of 32 consecutive positions of a `MAX_FRAME`-byte frame (shorter frames' are
/// among them, see above) the 32 syndromes are linearly independent, so no non-zero pattern
/// within the window has syndrome zero. Gaussian elimination over GF(2), every window.
#[test]
fn crc_detects_every_burst_of_up_to_32_bits() {
    let all = syndromes(MAX_FRAME);
    for (start, window) in all.windows(32).enumerate() {
        // A basis by leading bit: each new syndrome reduced against it must stay non-zero.
        let mut basis = [0u32; 32];
        for &s in window {
            let mut s = s;
            while s != 0 {
                let top = 31 - s.leading_zeros() as usize;
                if basis[top] == 0 {
                    basis[top] = s;
                    break;
                }
                s ^= basis[top];
            }
            assert_ne!(s, 0, "a burst within bits {start}..{} passes", start + 32);
        }
    }
}
