//! Scenarios: two nodes come up, a one-way link does not, losses below and above the
//! hysteresis, silence, a restarted peer, and a flood of forged ids.

use manet_mutex::discovery::{Discovery, DiscoveryEvent, Hello, Settings, RESTART_GAP};
use manet_mutex::NodeId;

use crate::net::{id, Net};

const I: u64 = 100;
const H: u64 = 2;
const M: u64 = 4;

fn up(p: usize) -> DiscoveryEvent {
    DiscoveryEvent::NeighbourUp(id(p))
}

fn down(p: usize) -> DiscoveryEvent {
    DiscoveryEvent::NeighbourDown(id(p))
}

#[test]
fn two_nodes_come_up_symmetric_within_the_bound_and_stay_up() {
    for (seed, delay) in [(0, 0), (1, 10), (2, 60), (3, 299)] {
        let settings = Settings::DEFAULT.with_seed(seed);
        let mut net = Net::new(2, settings, Net::perfect(delay));
        net.run(20_000);
        let bound = (H + 1) * I + 2 * delay;
        for (x, y) in [(0, 1), (1, 0)] {
            let seen = net.events_of(x, y, 0);
            assert_eq!(seen.len(), 1, "delay {delay}: {seen:?}");
            assert_eq!(seen[0].1, up(y));
            assert!(
                seen[0].0 <= bound,
                "delay {delay}: up at {} > {bound}",
                seen[0].0
            );
            assert!(net.up(x, y) && net.nodes[x].hears(id(y)));
        }
        let stats = net.nodes[0].stats();
        assert_eq!((stats.stale, stats.restarts, stats.garbage), (0, 0, 0));
    }
}

#[test]
fn a_one_way_link_never_comes_up_at_either_end() {
    // 0 hears 1; 1 never hears 0.
    let mut net = Net::new(
        2,
        Settings::DEFAULT,
        Box::new(|_, from, _| (from == 1).then_some(5)),
    );
    net.run(20_000);
    assert!(net.events.is_empty(), "{:?}", net.events);
    assert!(net.nodes[0].hears(id(1)) && !net.nodes[1].hears(id(0)));
    assert!(!net.up(0, 1) && !net.up(1, 0));
    // 0's hellos list 1 all along: it is 1 that never learns of them.
    assert!(net
        .sent
        .iter()
        .filter(|s| s.1 == 0)
        .skip(3)
        .all(|s| s.2.lists(id(1))));
    assert!(net
        .sent
        .iter()
        .filter(|s| s.1 == 1)
        .all(|s| !s.2.lists(id(0))));
}

/// A channel that, once `from` has passed, drops hellos of node 1 in runs: `lost` dropped,
/// then one delivered, over and over (node 0's hellos all arrive). Delay 5.
fn runs_of_losses(lost: u64, from: u64) -> Box<dyn FnMut(u64, usize, usize) -> Option<u64>> {
    let mut count = 0u64;
    Box::new(move |now, sender, _| {
        if sender == 0 || now < from {
            return Some(5);
        }
        count += 1;
        (count % (lost + 1) == 0).then_some(5)
    })
}

#[test]
fn losses_below_the_hysteresis_keep_the_link() {
    for jitter in [0, 25] {
        let settings = Settings::DEFAULT.with_jitter(jitter);
        let mut net = Net::new(2, settings, runs_of_losses(M - 1, 1000));
        net.run(30_000);
        for (x, y) in [(0, 1), (1, 0)] {
            let seen = net.events_of(x, y, 0);
            assert_eq!(seen.len(), 1, "jitter {jitter}: {seen:?}");
            assert_eq!(seen[0].1, up(y));
            assert!(net.up(x, y));
        }
    }
}

#[test]
fn losses_above_the_hysteresis_take_the_link_down() {
    // Hellos exactly `I` apart: `M` lost in a row lose the peer.
    let settings = Settings::DEFAULT.with_jitter(0);
    let mut net = Net::new(2, settings, runs_of_losses(M, 1000));
    net.run(30_000);
    let seen = net.events_of(0, 1, 1000);
    assert!(seen.iter().any(|e| e.1 == down(1)), "{seen:?}");
    // With jitter, floor(M·I / (I − J)) = 5 lost in a row always do.
    let mut net = Net::new(2, Settings::DEFAULT, runs_of_losses(5, 1000));
    net.run(30_000);
    let seen = net.events_of(0, 1, 1000);
    assert!(seen.iter().any(|e| e.1 == down(1)), "{seen:?}");
    // And 1 follows: 0 stops listing it.
    assert!(net.events_of(1, 0, 1000).iter().any(|e| e.1 == down(0)));
}

#[test]
fn silence_takes_the_link_down_at_both_ends_within_the_bound() {
    let delay = 20;
    // Both directions cut at 5000.
    let cut = 5000;
    let mut net = Net::new(
        2,
        Settings::DEFAULT,
        Box::new(move |now, _, _| (now < cut).then_some(delay)),
    );
    net.run(20_000);
    for (x, y) in [(0, 1), (1, 0)] {
        let seen = net.events_of(x, y, cut);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].1, down(y));
        assert!(seen[0].0 <= cut + delay + M * I + 1, "{seen:?}");
        assert!(!net.up(x, y) && net.nodes[x].table_len() == 0);
    }
    // One direction cut (1's hellos stop reaching 0): 0 loses 1 within the bound, 1 follows
    // at 0's next hello.
    let mut net = Net::new(
        2,
        Settings::DEFAULT,
        Box::new(move |now, from, _| (now < cut || from == 0).then_some(delay)),
    );
    net.run(20_000);
    let at0 = net.events_of(0, 1, cut);
    let at1 = net.events_of(1, 0, cut);
    assert_eq!((at0.len(), at1.len()), (1, 1), "{at0:?} {at1:?}");
    assert!(at0[0].0 <= cut + delay + M * I + 1);
    assert!(at1[0].0 <= at0[0].0 + I + delay, "{at0:?} {at1:?}");
    // 1 still hears 0, which no longer lists it.
    assert!(net.nodes[1].hears(id(0)) && !net.up(1, 0));
}

#[test]
fn a_restarted_peer_is_heard_afresh() {
    // A long run: the restarted peer's numbers fall back far (a restart at once).
    let mut net = Net::new(2, Settings::DEFAULT, Net::perfect(5));
    net.run(10_000);
    assert!(net.up(0, 1) && net.up(1, 0));
    net.restart(1, 99);
    let restart = net.now;
    net.run(20_000);
    let seen = net.events_of(0, 1, restart);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].1, down(1));
    // Down at the restarted peer's first hello (within the jitter), up again once each hears
    // the other afresh.
    assert!(seen[0].0 <= restart + 25 + 5, "{seen:?}");
    assert_eq!(seen[1].1, up(1));
    assert!(seen[1].0 <= restart + 25 + (H + 1) * I + 10, "{seen:?}");
    assert_eq!(net.nodes[0].stats().restarts, 1);
    assert!(net.up(0, 1) && net.up(1, 0));

    // An early restart: old numbers below the gap; its hellos are stale until they pass the
    // old ones or the entry expires, and the link goes down within the hold time.
    let mut net = Net::new(2, Settings::DEFAULT, Net::perfect(5));
    net.run(600);
    assert!(net.up(0, 1));
    let last = net
        .sent
        .iter()
        .filter(|s| s.1 == 1)
        .map(|s| s.2.seq())
        .max()
        .unwrap();
    assert!(last < RESTART_GAP);
    net.restart(1, 7);
    let restart = net.now;
    net.run(5000);
    let seen = net.events_of(0, 1, restart);
    assert_eq!(
        seen.iter().map(|e| e.1).collect::<Vec<_>>(),
        [down(1), up(1)]
    );
    assert!(seen[0].0 <= restart + M * I + 5 + 1, "{seen:?}");
    assert!(net.nodes[0].stats().stale > 0);
    assert!(net.up(0, 1) && net.up(1, 0));
}

#[test]
fn a_flood_of_forged_ids_never_grows_the_table_nor_takes_a_link_down() {
    let settings = Settings::DEFAULT.with_max_neighbours(8);
    let mut net = Net::new(2, settings, Net::perfect(5));
    net.run(2000);
    assert!(net.up(0, 1));
    let d: &mut Discovery = &mut net.nodes[0];
    let mut x = 0x1234_5678_u64;
    for k in 0..20_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Forged ids above the two real ones; half of them list node 0, some send
        // consecutive numbers so they become heard.
        let from = NodeId(2 + (x % 5000) as u32);
        let seq = if k % 3 == 0 { k / 3 } else { x >> 40 };
        let heard: &[NodeId] = if x & 1 == 0 { &[NodeId(0)] } else { &[] };
        let now = 2000 + k / 20;
        d.handle_hello(now, &Hello::new(from, seq, heard).unwrap());
        assert!(d.table_len() <= 8);
        // The real peer keeps its link.
        if k % 2000 == 0 {
            d.handle_hello(now, &Hello::new(NodeId(1), 100 + k, &[NodeId(0)]).unwrap());
        }
        assert!(d.is_up(NodeId(1)), "at {k}");
        while let Some(event) = d.poll_event() {
            assert_ne!(event.peer(), NodeId(1));
        }
    }
    assert!(d.stats().evicted > 1000, "{:?}", d.stats());
    // Forged ids that send consecutive numbers are heard, and protected like real ones: once
    // they fill the table, a new id is refused (never the real peer evicted).
    for f in 0..7 {
        for seq in 0..2 {
            d.handle_hello(3000, &Hello::new(NodeId(10_000 + f), seq, &[]).unwrap());
        }
    }
    d.handle_hello(
        3000,
        &Hello::new(NodeId(1), 1_000_000, &[NodeId(0)]).unwrap(),
    );
    d.handle_hello(3000, &Hello::new(NodeId(20_000), 0, &[]).unwrap());
    assert_eq!(d.stats().refused, 1, "{:?}", d.stats());
    assert!(d.is_up(NodeId(1)) && d.table_len() == 8);
    // They are lost after the hold time like any silent peer, and room comes back.
    d.handle_timeout(3000 + 401);
    assert_eq!(
        d.table_len(),
        1,
        "the real peer waits for its NeighbourDown"
    );
    assert_eq!(
        d.poll_event(),
        Some(DiscoveryEvent::NeighbourDown(NodeId(1)))
    );
    assert_eq!(d.table_len(), 0);
}

#[test]
fn settings_are_checked() {
    let ok = Settings::DEFAULT;
    assert_eq!(ok, Settings::default());
    assert_eq!(ok, Settings::new(100));
    assert_eq!(
        (
            ok.hello_interval,
            ok.jitter,
            ok.up_after,
            ok.missed_hellos,
            ok.max_neighbours,
            ok.seed
        ),
        (100, 25, 2, 4, 64, 0)
    );
    assert_eq!(ok.hold_time(), 400);
    assert!(ok.validate().is_ok());
    for bad in [
        Settings::new(0),
        ok.with_jitter(100),
        ok.with_up_after(0),
        ok.with_missed_hellos(1),
        ok.with_max_neighbours(0),
        ok.with_max_neighbours(65),
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
        assert!(Discovery::new(NodeId(0), bad, 0).is_err());
    }
    assert!(ok.with_jitter(99).with_missed_hellos(2).validate().is_ok());
}

#[test]
fn an_up_peer_can_be_fed_to_a_session() {
    use manet_mutex::session::{Session, Settings as SessionSettings};
    let mut session = Session::<u8>::new(NodeId(0), SessionSettings::DEFAULT).unwrap();
    DiscoveryEvent::NeighbourUp(NodeId(1))
        .apply(&mut session, 0)
        .unwrap();
    // The session greets the peer at once.
    let t = session.poll_transmit().unwrap();
    assert_eq!(t.to, NodeId(1));
    DiscoveryEvent::NeighbourDown(NodeId(1))
        .apply(&mut session, 1)
        .unwrap();
}
