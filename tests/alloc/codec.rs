//! The wire codec's decoder allocates nothing, on frames and on garbage alike (whether it
//! fails the frame check or reaches the body decoder), and `encode_into` nothing either (`manet_mutex::codec`, "Resources").

use manet_mutex::codec::{decode, encode_into, Wire, CHECK_LEN, MAX_FRAME};
use manet_mutex::look_ahead::Announcement;
use manet_mutex::permission::Timestamp;
use manet_mutex::prioritized::Resources;
use manet_mutex::queue::Priority;
use manet_mutex::token::height::{Height, Sealed};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, NodeId};
use manet_mutex_testkit::fuzz::decode::seal;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::counting::counted;

/// Decoding `bytes` as every message type allocates nothing.
fn decode_all(bytes: &[u8]) -> u64 {
    fn one<M: Wire>(bytes: &[u8]) -> u64 {
        counted(|| decode::<M>(bytes).is_ok()).1
    }
    one::<reverse_link::Message>(bytes)
        + one::<prioritized::Message>(bytes)
        + one::<look_ahead::Message>(bytes)
        + one::<ricart_agrawala::Message>(bytes)
}

/// `msg`'s frame, made without allocating, and every change of it decoded without allocating.
fn frame_and_changes<M: Wire>(msg: &M) -> u64 {
    let mut buf = [0; MAX_FRAME];
    let (frame, made) = counted(|| encode_into(msg, &mut buf).to_owned());
    // `to_owned` is the test's own allocation.
    let mut allocations = made - 1;
    allocations += decode_all(&frame);
    for at in 0..frame.len() {
        for value in [0, 1, 0x7f, 0x80, 0xff, frame[at] ^ 1] {
            let mut changed = frame.clone();
            changed[at] = value;
            allocations += decode_all(&changed) + decode_all(&changed[..at]);
            // With the frame check made right, so that the body decoder reads the change.
            let body = &changed[..changed.len() - CHECK_LEN];
            allocations += decode_all(&seal(body)) + decode_all(&seal(&body[..at.min(body.len())]));
        }
    }
    allocations
}

#[test]
fn decoding_allocates_nothing() {
    let height = Sealed::new(Height::new(3, -7, NodeId(2)));
    let ts = Timestamp {
        clock: 1 << 33,
        id: NodeId(4),
    };
    let fence = manet_mutex::Fence::new(1, 1 << 40).into();
    let mut allocations = frame_and_changes(&reverse_link::Message::Token(height, fence))
        + frame_and_changes(&prioritized::Message::Token {
            lost: Resources::new(0),
            available: Resources::new(3),
            priority: Priority::new(9, 1),
            height,
            fence,
        })
        + frame_and_changes(&look_ahead::Message::Doze(Announcement::new(
            ts, 5, true, 3,
        )))
        + frame_and_changes(&ricart_agrawala::Message::request(ts, 2, 3));
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut bytes = vec![0; 4 * MAX_FRAME];
    for _ in 0..20_000 {
        let len = rng.random_range(0..=bytes.len());
        rng.fill(&mut bytes[..len]);
        allocations += decode_all(&bytes[..len]);
        bytes[0] = manet_mutex::codec::VERSION;
        let frame = &bytes[..len.clamp(1, MAX_FRAME)];
        allocations += decode_all(frame);
        allocations += decode_all(&seal(&frame[..frame.len().min(MAX_FRAME - CHECK_LEN)]));
    }
    assert_eq!(allocations, 0);
}
