//! Whole networks of drivers over a lossy, duplicating, reordering channel: every request is
//! served, never two inside at once, and the fences of each lane increase.

use manet_mutex::driver::{Config, Driver};
use manet_mutex::token::RaisePause;
use manet_mutex::NodeId;
use manet_mutex::{discovery, look_ahead, prioritized, reverse_link, ricart_agrawala, session};

use crate::net::{Channel, Net};

const LOSSY: Channel = Channel {
    loss: 0.2,
    duplicate: 0.1,
    max_delay: 8,
};
const REQUESTS: u32 = 6;
/// Raises paced from 10 to 200 (R15), as `examples/mesh` runs them.
const PAUSE: RaisePause = RaisePause::new(10, 200);

fn token_config() -> Config {
    Config::DEFAULT
        .with_session(session::Settings::new(15, 300, 8))
        .with_discovery(discovery::Settings::new(50))
}

#[test]
fn krl_over_discovery_serves_every_request_with_increasing_fences() {
    for seed in 0..12 {
        let n = 3 + seed as u32 % 3;
        // Every other seed with raises paced (R15).
        let mut settings = reverse_link::Settings::new(1);
        if seed % 2 == 1 {
            settings = settings.with_raise_pause(PAUSE);
        }
        let configs = reverse_link::network(n, &[], &[NodeId(0)], settings).unwrap();
        let nodes = configs
            .into_iter()
            .map(|c| Driver::new(reverse_link::Node::new(c).unwrap(), token_config(), 0).unwrap())
            .collect();
        let mut net = Net::new(nodes, REQUESTS, LOSSY, seed);
        net.run(60_000);
        net.check_served(REQUESTS);
        let stats = net.nodes[0].stats();
        assert!(stats.datagrams_in > 0 && stats.datagrams_out > 0);
        assert_eq!(stats.dropped_checksum + stats.dropped_malformed, 0);
    }
}

#[test]
fn krl_on_a_line_of_configured_neighbours_serves_every_request() {
    for pause in [None, Some(PAUSE)] {
        krl_on_a_line(pause);
    }
}

fn krl_on_a_line(pause: Option<RaisePause>) {
    // No discovery: the embedder names each node's neighbours; 0 - 1 - 2 - 3 by radio range.
    let n = 4;
    let mut settings = reverse_link::Settings::new(1);
    if let Some(pause) = pause {
        settings = settings.with_raise_pause(pause);
    }
    let configs = reverse_link::network(n, &[], &[NodeId(0)], settings).unwrap();
    let config = Config::DEFAULT.with_session(session::Settings::new(15, 300, 8));
    let mut nodes: Vec<_> = configs
        .into_iter()
        .map(|c| Driver::new(reverse_link::Node::new(c).unwrap(), config, 0).unwrap())
        .collect();
    for (i, node) in nodes.iter_mut().enumerate().take(n as usize - 1) {
        node.connect(0, NodeId(i as u32 + 1)).unwrap();
    }
    let mut net = Net::new(nodes, REQUESTS, LOSSY, 11);
    net.in_range = |a, b| a.abs_diff(b) == 1;
    net.run(60_000);
    net.check_served(REQUESTS);
    assert!(net.nodes.iter().any(|d| d.stats().retransmitted > 0));
}

#[test]
fn prioritized_over_discovery_serves_every_request() {
    for seed in 0..6 {
        let mut settings = prioritized::Settings::new(1, prioritized::Policy::Equal);
        if seed % 2 == 1 {
            settings = settings.with_raise_pause(PAUSE);
        }
        let configs = prioritized::network(4, &[], &[NodeId(0)], settings).unwrap();
        let nodes = configs
            .into_iter()
            .map(|c| Driver::new(prioritized::Node::new(c).unwrap(), token_config(), 0).unwrap())
            .collect();
        let mut net = Net::new(nodes, REQUESTS, LOSSY, 20 + seed);
        net.run(60_000);
        net.check_served(REQUESTS);
    }
}

#[test]
fn look_ahead_over_direct_datagrams_serves_every_request_with_increasing_fences() {
    for seed in 0..12 {
        let n = 3 + seed as u32 % 3;
        let configs =
            look_ahead::network(look_ahead::Settings::new(n, 20).with_seed(seed)).unwrap();
        let nodes = configs
            .into_iter()
            .map(|c| Driver::new(look_ahead::Node::new(c).unwrap(), Config::DEFAULT, 0).unwrap())
            .collect();
        let mut net = Net::new(nodes, REQUESTS, LOSSY, 30 + seed);
        net.run(60_000);
        net.check_served(REQUESTS);
        assert!(net.nodes.iter().all(|d| d.session().is_none()));
    }
}

#[test]
fn ricart_agrawala_over_direct_datagrams_serves_every_request() {
    let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(5, 20)).unwrap();
    let nodes = configs
        .into_iter()
        .map(|c| Driver::new(ricart_agrawala::Node::new(c).unwrap(), Config::DEFAULT, 0).unwrap())
        .collect();
    let mut net = Net::new(nodes, REQUESTS, LOSSY, 40);
    net.run(60_000);
    net.check_served(REQUESTS);
}

/// A peer that vanishes with the token in flight to it: the session gives the token up after
/// its liveness timeout, and the driver reports it (`Lost`, one precious message) and the
/// link's end, in that order after the core's `LinkDown`.
#[test]
fn a_token_lost_with_its_link_is_reported() {
    use manet_mutex::driver::DriverEvent;
    use manet_mutex::CsRequest;
    let configs =
        reverse_link::network(2, &[], &[NodeId(0)], reverse_link::Settings::new(1)).unwrap();
    let config = Config::DEFAULT.with_session(session::Settings::new(10, 100, 4));
    let mut pair: Vec<_> = configs
        .into_iter()
        .map(|c| Driver::new(reverse_link::Node::new(c).unwrap(), config, 0).unwrap())
        .collect();
    pair[0].connect(0, NodeId(1)).unwrap();
    // Lossless until the link is up and node 1 asked.
    let mut moved = true;
    while moved {
        moved = false;
        for i in 0..2 {
            while pair[i].poll_event().is_some() {}
            while let Some(t) = pair[i].poll_transmit() {
                moved = true;
                pair[1 - i].handle_datagram(0, NodeId(i as u32), &t.bytes);
            }
        }
        if !moved && manet_mutex::Protocol::status(pair[1].core()) == manet_mutex::Status::Remainder
        {
            pair[1].request(0, CsRequest::ONE).unwrap();
            // The REQUEST reaches node 0, whose token goes out; then node 1 vanishes.
            let t = pair[1].poll_transmit().unwrap();
            pair[0].handle_datagram(0, NodeId(1), &t.bytes);
            break;
        }
    }
    let mut events = Vec::new();
    let mut now = 0;
    while now < 1000 {
        while pair[0].poll_transmit().is_some() {}
        while let Some(event) = pair[0].poll_event() {
            events.push((now, event));
        }
        if events
            .iter()
            .any(|(_, e)| matches!(e, DriverEvent::Lost { .. }))
        {
            break;
        }
        now = pair[0].poll_timeout().expect("the link is up").max(now + 1);
        pair[0].handle_timeout(now);
    }
    let lost = events
        .iter()
        .position(|(_, e)| matches!(e, DriverEvent::Lost { precious: 1, .. }))
        .expect("the token reported lost");
    let down = events
        .iter()
        .position(|(_, e)| *e == DriverEvent::LinkDown(NodeId(1)))
        .expect("the link reported down");
    assert!(down < lost, "{events:?}");
    assert!(events[lost].0 <= 100 + 10, "{events:?}");
    assert_eq!(pair[0].session_stats().unwrap().lost_precious, 1);
}

/// Planned link flaps while everyone asks (as `examples/cluster`'s `--flaps`): both ends close
/// a link, then open it again; nothing is lost, so every request must be served, raises paced
/// or not. Paced, a raise that waits must not leave a request behind: R15's node forgets
/// `next` then, since the REQUEST that went along it was dropped when `next` rose above it
/// (without that, 5 of 45 cluster runs starved a node; this test does not catch that
/// mutation, `raise_pause::a_raise_that_waits_forgets_next` does).
#[test]
fn prioritized_with_links_flapping_serves_every_request_paced_or_not() {
    use rand::{Rng, SeedableRng};
    let config = Config::DEFAULT.with_session(session::Settings::new(15, 300, 8));
    for seed in 0..24u64 {
        let mut settings = prioritized::Settings::new(1, prioritized::Policy::Equal);
        if seed % 4 != 0 {
            settings = settings.with_raise_pause(PAUSE);
        }
        let n = 5;
        let mut nodes: Vec<_> = prioritized::network(n, &[], &[NodeId(0)], settings)
            .unwrap()
            .into_iter()
            .map(|c| Driver::new(prioritized::Node::new(c).unwrap(), config, 0).unwrap())
            .collect();
        for (i, node) in nodes.iter_mut().enumerate() {
            for j in (0..n).filter(|&j| j != i as u32) {
                node.connect(0, NodeId(j)).unwrap();
            }
        }
        let mut net = Net::new(nodes, 40, LOSSY, 100 + seed);
        let mut flaps = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut reopen: Vec<(u64, usize, usize)> = Vec::new();
        while net.now < 120_000 {
            let now = net.now;
            if now % 200 == 0 && now < 20_000 {
                let a = flaps.random_range(0..n as usize);
                let b = (a + flaps.random_range(1..n as usize)) % n as usize;
                if !reopen
                    .iter()
                    .any(|&(_, x, y)| (x, y) == (a, b) || (y, x) == (a, b))
                {
                    net.nodes[a].close(now, NodeId(b as u32));
                    net.nodes[b].close(now, NodeId(a as u32));
                    net.drain(a);
                    net.drain(b);
                    reopen.push((now + flaps.random_range(20..200), a, b));
                }
            }
            for &(at, a, b) in reopen.iter().filter(|&&(at, _, _)| at == now) {
                let _ = at;
                net.nodes[a].connect(now, NodeId(b as u32)).unwrap();
                net.nodes[b].connect(now, NodeId(a as u32)).unwrap();
                net.drain(a);
                net.drain(b);
            }
            reopen.retain(|&(at, _, _)| at > now);
            net.step();
            if net
                .apps
                .iter()
                .all(|a| a.left == 0 && !a.waiting && a.leave_at.is_none())
            {
                break;
            }
        }
        assert_eq!(
            net.precious_lost, 0,
            "seed {seed}: a planned flap loses nothing"
        );
        for (i, app) in net.apps.iter().enumerate() {
            assert!(
                app.left == 0 && !app.waiting && app.leave_at.is_none(),
                "seed {seed}: node {i} not served by {}: {} left, waiting {}",
                net.now,
                app.left,
                app.waiting
            );
        }
    }
}
