//! Fuzz body (feature `codec`): arbitrary datagrams into [`manet_mutex::driver::Driver`]s
//! of every algorithm, from arbitrary senders at arbitrary times, each also sealed as a
//! driver frame or a hello (a right first byte and frame check, so the field decoders see
//! it). The drivers must not panic, must count every datagram once, and must keep their
//! tables and queues within their caps.
//!
//! Compiled into the `driver_datagram` fuzz target (`fuzz/`) and run over random inputs by
//! `tests/driver/bounds.rs`.

use alloc::vec::Vec;

use manet_mutex::codec::{frame_check, Wire};
use manet_mutex::driver::{wire, Algorithm, Config, Driver};
use manet_mutex::token::RaisePause;
use manet_mutex::{discovery, look_ahead, prioritized, reverse_link, ricart_agrawala, session};
use manet_mutex::{CsRequest, NodeId};

const QUEUED: usize = 8;
const PEERS: u32 = 4;

fn config() -> Config {
    Config::DEFAULT
        .with_session(session::Settings::new(10, 100, 4).with_max_peers(PEERS))
        .with_discovery(discovery::Settings::new(20).with_max_neighbours(PEERS))
        .with_max_queued(QUEUED)
}

/// Feed `data`, cut into datagrams, to a driver of each algorithm.
pub fn run(data: &[u8]) {
    // Raises paced (R15): their timer is one more a datagram stream can race.
    let pause = RaisePause::new(5, 40);
    let krl = reverse_link::Settings::new(1).with_raise_pause(pause);
    let token = reverse_link::network(3, &[], &[NodeId(0)], krl);
    let krl = reverse_link::Node::new(token.unwrap().swap_remove(0)).unwrap();
    feed(Driver::new(krl, config(), 0).unwrap(), data);
    let prio = prioritized::Settings::new(2, prioritized::Policy::Equal).with_raise_pause(pause);
    let prio = prioritized::network(3, &[], &[NodeId(1)], prio)
        .unwrap()
        .swap_remove(0);
    feed(
        Driver::new(prioritized::Node::new(prio).unwrap(), config(), 0).unwrap(),
        data,
    );
    let la = look_ahead::network(look_ahead::Settings::new(3, 10))
        .unwrap()
        .swap_remove(0);
    feed(
        Driver::new(look_ahead::Node::new(la).unwrap(), config(), 0).unwrap(),
        data,
    );
    let ra = ricart_agrawala::network(ricart_agrawala::Settings::new(3, 10)).unwrap();
    let ra = ricart_agrawala::Node::new(ra.into_iter().next().unwrap()).unwrap();
    feed(Driver::new(ra, config(), 0).unwrap(), data);
}

/// Each datagram: a header byte (bits 0-1: the sender, 0..4, the driver's own id 0
/// included; bit 2: seal as a driver frame; bit 3: seal as a hello; bits 4-7: time to
/// advance, and a timeout then), a length byte, that many bytes.
fn feed<P: Algorithm>(mut driver: Driver<P>, mut data: &[u8])
where
    P::Message: Wire,
{
    let mut now = 0;
    let mut count = 0;
    let _ = driver.request(now, CsRequest::ONE);
    while let [head, len, rest @ ..] = data {
        let len = usize::from(*len).min(rest.len());
        let (body, tail) = rest.split_at(len);
        data = tail;
        now += u64::from(head >> 4);
        let from = NodeId(u32::from(head & 3));
        let mut bytes = Vec::with_capacity(body.len() + 5);
        match head & 0b1100 {
            0b0100 => bytes.push(wire::VERSION),
            0b1000 => bytes.push(discovery::WIRE_VERSION),
            _ => {}
        }
        bytes.extend_from_slice(body);
        if head & 0b1100 != 0 {
            let check = frame_check(&bytes);
            bytes.extend_from_slice(&check);
        }
        driver.handle_datagram(now, from, &bytes);
        count += 1;
        if head & 0b1111_0000 != 0 {
            driver.handle_timeout(now);
        }
        let (events, direct) = driver.queued();
        assert!(direct <= QUEUED);
        // Vital events are never dropped; at most one entry is pending here.
        assert!(events <= QUEUED + 2);
        if count % 3 == 0 {
            while driver.poll_event().is_some() {}
        }
        while driver.poll_transmit().is_some() {}
        if let Some(s) = driver.session() {
            assert!(s.table_len() <= PEERS as usize);
        }
        if let Some(d) = driver.discovery() {
            assert!(d.table_len() <= PEERS as usize);
        }
    }
    assert_eq!(driver.stats().datagrams_in, count);
}
