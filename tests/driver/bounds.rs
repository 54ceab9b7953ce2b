//! Bad input: forged floods (bounded memory), corrupted frames, frames naming the wrong
//! sender or receiver or of the wrong kind (counted and dropped), and misuse.

use manet_mutex::discovery::{self, Hello, MAX_HELLO_FRAME};
use manet_mutex::driver::wire::{encode, Envelope, Payload};
use manet_mutex::driver::{Config, Destination, Driver, DriverEvent};
use manet_mutex::session::{self, Epochs, Frame};
use manet_mutex::{reverse_link, ricart_agrawala, CsRequest, Error, Event, NodeId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn krl(id: u32, n: u32, config: Config) -> Driver<reverse_link::Node> {
    let configs =
        reverse_link::network(n, &[], &[NodeId(0)], reverse_link::Settings::new(1)).unwrap();
    let node = reverse_link::Node::new(configs[id as usize].clone()).unwrap();
    Driver::new(node, config, 0).unwrap()
}

fn ra(id: u32, n: u32) -> Driver<ricart_agrawala::Node> {
    let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(n, 20)).unwrap();
    let node = ricart_agrawala::Node::new(configs[id as usize]).unwrap();
    Driver::new(node, Config::DEFAULT.with_max_queued(16), 0).unwrap()
}

fn hello_bytes(sender: u32, seq: u64, heard: &[NodeId]) -> Vec<u8> {
    let mut buf = [0; MAX_HELLO_FRAME];
    Hello::new(NodeId(sender), seq, heard)
        .unwrap()
        .encode_into(&mut buf)
        .to_vec()
}

/// A token driver with discovery under a flood from 100,000 forged ids (discovery hellos,
/// streaks of them, session `Hello`s, data, garbage): its tables stay within their caps,
/// the queues within theirs, and everything is counted.
#[test]
fn a_forged_id_flood_never_grows_memory_past_the_caps() {
    let config = Config::DEFAULT
        .with_session(session::Settings::new(15, 300, 8).with_max_peers(8))
        .with_discovery(discovery::Settings::new(50).with_max_neighbours(8))
        .with_max_queued(32);
    let me = NodeId(0);
    let mut d = krl(0, 3, config);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut now = 0;
    let mut most = (0, 0, 0);
    for i in 0..100_000u32 {
        let forged = 1 + rng.random_range(0..100_000u32);
        let bytes = match i % 4 {
            // Consecutive hellos from a few ids at a time, listing us: they get heard.
            0 => hello_bytes(forged % 64 + 1, u64::from(i / 64), &[me]),
            1 => encode(&Envelope::<reverse_link::Message> {
                from: NodeId(forged),
                to: me,
                payload: Payload::Session(Frame::Hello {
                    epochs: Epochs {
                        sender: u64::from(i) + 1,
                        receiver: 0,
                    },
                }),
            }),
            2 => encode(&Envelope::<reverse_link::Message> {
                from: NodeId(forged),
                to: me,
                payload: Payload::Session(Frame::Ack {
                    epochs: Epochs {
                        sender: 5,
                        receiver: 1,
                    },
                    seq: 3,
                }),
            }),
            _ => (0..rng.random_range(0..300))
                .map(|_| rng.random())
                .collect(),
        };
        let from = if i % 4 == 0 {
            NodeId(forged % 64 + 1)
        } else {
            NodeId(forged)
        };
        d.handle_datagram(now, from, &bytes);
        if i % 16 == 0 {
            now += 1;
            d.handle_timeout(now);
        }
        while d.poll_event().is_some() {}
        while d.poll_transmit().is_some() {}
        most = most.max((
            d.session().unwrap().table_len(),
            d.discovery().unwrap().table_len(),
            0,
        ));
    }
    assert!(most.0 <= 8 && most.1 <= 8, "{most:?}");
    let stats = d.stats();
    assert_eq!(stats.datagrams_in, 100_000);
    assert!(stats.dropped_malformed >= 20_000, "{stats:?}");
    let session = d.session_stats().unwrap();
    assert!(
        session.refused > 0 && session.unknown_peer > 0,
        "{session:?}"
    );
    assert!(d.discovery_stats().unwrap().refused + d.discovery_stats().unwrap().evicted > 0);
}

/// Nobody polls: the informational events and the direct datagrams stay within
/// `max_queued` (the oldest datagrams dropped and counted), and ids outside the hosts leave
/// no trace.
#[test]
fn unpolled_queues_stay_within_max_queued() {
    let mut target = ra(0, 3);
    // Real REQUESTs from hosts 1 and 2, replayed 10,000 times each.
    let mut requests = Vec::new();
    for id in 1..3 {
        let mut peer = ra(id, 3);
        peer.request(0, CsRequest::ONE).unwrap();
        while let Some(t) = peer.poll_transmit() {
            if t.to == Destination::Peer(NodeId(0)) {
                requests.push((NodeId(id), t.bytes));
            }
        }
    }
    assert_eq!(requests.len(), 2);
    for i in 0..10_000 {
        for (from, bytes) in &requests {
            target.handle_datagram(i, *from, bytes);
        }
        let forged = encode(&Envelope::<ricart_agrawala::Message> {
            from: NodeId(3 + i as u32),
            to: NodeId(0),
            payload: Payload::Message(ricart_agrawala::Message::request(
                manet_mutex::permission::Timestamp {
                    clock: 1,
                    id: NodeId(3 + i as u32),
                },
                1,
                0,
            )),
        });
        target.handle_datagram(i, NodeId(3 + i as u32), &forged);
        let (events, direct) = target.queued();
        assert!(events <= 16 && direct <= 16);
    }
    let stats = target.stats();
    assert_eq!(stats.dropped_unknown_peer, 10_000);
    assert_eq!(stats.datagrams_in, 30_000);
    assert_eq!(stats.suspect, 0, "the core never saw the forged ids");
    // Each replayed REQUEST is answered again (a retransmission): the oldest answers go.
    assert!(stats.transmits_dropped > 0, "{stats:?}");
    assert_eq!(target.queued().1, 16);
}

/// A real frame with one bit flipped, naming another sender or receiver, of the wrong kind
/// for the algorithm, or a hello for a driver without discovery: counted, dropped, and the
/// driver unchanged.
#[test]
fn corrupted_misaddressed_and_unexpected_frames_are_counted_and_dropped() {
    let mut a = ra(0, 2);
    let mut b = ra(1, 2);
    a.request(0, CsRequest::ONE).unwrap();
    let request = a.poll_transmit().expect("a REQUEST to 1").bytes;
    for bit in 0..request.len() * 8 {
        let mut flipped = request.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        b.handle_datagram(1, NodeId(0), &flipped);
    }
    let stats = b.stats();
    // Flips of the first byte make no frame of any format but one, 0x83 ^ 0x02: a hello's
    // version, whose check then fails like every other flip's.
    assert_eq!(
        stats.dropped_checksum + stats.dropped_malformed,
        request.len() as u64 * 8
    );
    assert_eq!(stats.dropped_malformed, 7);
    assert!(b.poll_transmit().is_none() && b.poll_event().is_none());
    // Another sender than the transport says, and the node's own id.
    b.handle_datagram(1, NodeId(5), &request);
    b.handle_datagram(1, NodeId(1), &request);
    assert_eq!(b.stats().dropped_unknown_peer, 2);
    // A session frame and a hello: not what a permission driver takes.
    let session = encode(&Envelope::<ricart_agrawala::Message> {
        from: NodeId(0),
        to: NodeId(1),
        payload: Payload::Session(Frame::Hello {
            epochs: Epochs::default(),
        }),
    });
    b.handle_datagram(1, NodeId(0), &session);
    b.handle_datagram(1, NodeId(0), &hello_bytes(0, 0, &[]));
    assert_eq!(b.stats().dropped_unexpected, 2);
    assert!(b.poll_transmit().is_none());
    // The genuine one is answered.
    b.handle_datagram(1, NodeId(0), &request);
    assert!(b.poll_transmit().is_some());
    assert_eq!(b.stats().datagrams_in, request.len() as u64 * 8 + 5);
}

/// A datagram is taken only by the receiver it names.
#[test]
fn a_frame_for_another_receiver_is_dropped() {
    let mut a = ra(0, 3);
    a.request(0, CsRequest::ONE).unwrap();
    let to_1 = a.poll_transmit().unwrap();
    assert_eq!(to_1.to, Destination::Peer(NodeId(1)));
    let mut c = ra(2, 3);
    c.handle_datagram(1, NodeId(0), &to_1.bytes);
    assert_eq!(c.stats().dropped_unknown_peer, 1);
    assert!(c.poll_transmit().is_none());
}

/// The events the driver makes itself cannot be fed from outside; the application's are
/// checked by the core.
#[test]
fn misuse_is_refused_and_changes_nothing() {
    let mut d = krl(1, 2, Config::DEFAULT);
    assert_eq!(
        d.core_event(0, Event::LinkUp(NodeId(0))),
        Err(Error::Unsupported("LinkUp"))
    );
    assert!(matches!(d.release(0), Err(Error::NotInCritical(_))));
    assert!(matches!(d.cancel(0), Err(Error::NotWaiting(_))));
    assert!(d.poll_event().is_none());
    // The holder enters at once, with the token's first fence.
    let mut holder = krl(0, 2, Config::DEFAULT);
    holder.request(0, CsRequest::ONE).unwrap();
    assert!(matches!(
        holder.poll_event(),
        Some(DriverEvent::Entered { resources: 1, .. })
    ));
    assert_eq!(
        holder.request(0, CsRequest::ONE),
        Err(Error::AlreadyRequested(manet_mutex::Status::Critical))
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// The `driver_datagram` fuzz body over random inputs: no panic, everything counted,
    /// every cap kept.
    #[test]
    fn arbitrary_datagrams_never_panic_and_keep_the_caps(
        data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000)
    ) {
        manet_mutex_testkit::fuzz::driver::run(&data);
    }
}
