//! Authentication by a pre-shared key (feature `auth`): a keyed network runs; a frame of
//! another key, without a tag, or with a flipped bit is counted and dropped.

use manet_mutex::driver::{AuthKey, Config, Destination, Driver, TAG_LEN};
use manet_mutex::{discovery, reverse_link, ricart_agrawala, session, CsRequest, NodeId};

use crate::net::{Channel, Net};

const KEY: AuthKey = AuthKey([7; 32]);
const OTHER: AuthKey = AuthKey([8; 32]);

fn ra(id: u32, key: Option<AuthKey>) -> Driver<ricart_agrawala::Node> {
    let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(2, 20)).unwrap();
    let node = ricart_agrawala::Node::new(configs[id as usize]).unwrap();
    let config = match key {
        Some(key) => Config::DEFAULT.with_key(key),
        None => Config::DEFAULT,
    };
    Driver::new(node, config, 0).unwrap()
}

fn request_bytes(key: Option<AuthKey>) -> Vec<u8> {
    let mut a = ra(0, key);
    a.request(0, CsRequest::ONE).unwrap();
    let t = a.poll_transmit().unwrap();
    assert_eq!(t.to, Destination::Peer(NodeId(1)));
    t.bytes
}

#[test]
fn a_keyed_krl_network_over_discovery_serves_every_request() {
    let config = Config::DEFAULT
        .with_session(session::Settings::new(15, 300, 8))
        .with_discovery(discovery::Settings::new(50))
        .with_key(KEY);
    let configs =
        reverse_link::network(4, &[], &[NodeId(0)], reverse_link::Settings::new(1)).unwrap();
    let nodes = configs
        .into_iter()
        .map(|c| Driver::new(reverse_link::Node::new(c).unwrap(), config, 0).unwrap())
        .collect();
    let channel = Channel {
        loss: 0.1,
        duplicate: 0.05,
        max_delay: 6,
    };
    let mut net = Net::new(nodes, 3, channel, 5);
    net.run(60_000);
    net.check_served(3);
    assert!(net.nodes.iter().all(|d| d.stats().dropped_auth == 0));
}

#[test]
fn the_tag_is_sixteen_bytes_after_the_frame() {
    let plain = request_bytes(None);
    let keyed = request_bytes(Some(KEY));
    assert_eq!(TAG_LEN, 16);
    assert_eq!(keyed.len(), plain.len() + TAG_LEN);
    assert_eq!(keyed[..plain.len()], plain[..]);
    assert_eq!(keyed[plain.len()..], KEY.tag(&plain));
}

#[test]
fn frames_of_another_key_or_without_a_tag_are_counted_and_dropped() {
    let mut b = ra(1, Some(KEY));
    b.handle_datagram(1, NodeId(0), &request_bytes(Some(OTHER)));
    assert_eq!(b.stats().dropped_auth, 1);
    // An unkeyed frame: its last 20 bytes are no check and tag.
    b.handle_datagram(1, NodeId(0), &request_bytes(None));
    let stats = b.stats();
    assert_eq!(
        stats.dropped_auth + stats.dropped_checksum + stats.dropped_malformed,
        2
    );
    assert!(b.poll_transmit().is_none() && b.poll_event().is_none());
    // A keyed frame at an unkeyed driver: trailing bytes after the frame check.
    let mut plain = ra(1, None);
    plain.handle_datagram(1, NodeId(0), &request_bytes(Some(KEY)));
    assert!(plain.poll_transmit().is_none());
    // The right key: answered.
    b.handle_datagram(1, NodeId(0), &request_bytes(Some(KEY)));
    let reply = b.poll_transmit().expect("a REPLY");
    assert_eq!(
        reply.bytes[reply.bytes.len() - TAG_LEN..],
        KEY.tag(&reply.bytes[..reply.bytes.len() - TAG_LEN])
    );
}

#[test]
fn every_flipped_bit_is_counted_and_dropped_as_corruption_or_forgery() {
    let bytes = request_bytes(Some(KEY));
    let mut b = ra(1, Some(KEY));
    let frame_bits = (bytes.len() - TAG_LEN) * 8;
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        b.handle_datagram(1, NodeId(0), &flipped);
    }
    let stats = b.stats();
    assert_eq!(
        stats.dropped_checksum, frame_bits as u64,
        "the CRC-32C: every one-bit error"
    );
    assert_eq!(stats.dropped_auth, TAG_LEN as u64 * 8, "the tag's bits");
    assert!(b.poll_transmit().is_none() && b.poll_event().is_none());
}
