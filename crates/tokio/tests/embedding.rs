//! What an embedder that runs the network itself uses: the event subscription, links it
//! names ([`Node::connect`], [`Node::close`], [`Builder::neighbours`]), the datagram filter,
//! a refused fence, and the counters a status line prints.
//!
//! [`Builder::neighbours`]: manet_mutex_tokio::Builder::neighbours

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use manet_mutex::driver::{Config, DriverEvent};
use manet_mutex::token::Recovery;
use manet_mutex::{reverse_link, ricart_agrawala, Fence, NodeId, Protocol, Report, Status};
use manet_mutex_tokio::{Direction, Error, Node, Stats, Verdict};
use tokio::sync::broadcast;

/// Generous: only to end a hung test.
const PATIENCE: Duration = Duration::from_secs(20);

/// `n` sockets on 127.0.0.1 ephemeral ports, and their addresses by id.
fn sockets(n: u32) -> (Vec<UdpSocket>, Vec<(NodeId, SocketAddr)>) {
    let sockets: Vec<_> = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let addrs = sockets
        .iter()
        .enumerate()
        .map(|(i, s)| (NodeId(i as u32), s.local_addr().unwrap()))
        .collect();
    (sockets, addrs)
}

fn krl(n: u32, settings: reverse_link::Settings) -> Vec<reverse_link::Node> {
    reverse_link::network(n, &[], &[NodeId(0)], settings)
        .unwrap()
        .into_iter()
        .map(|c| reverse_link::Node::new(c).unwrap())
        .collect()
}

/// The next event `wanted` picks on `events`, skipping others; panics after [`PATIENCE`].
async fn next<T>(
    events: &mut broadcast::Receiver<DriverEvent>,
    wanted: impl Fn(&DriverEvent) -> Option<T>,
) -> T {
    tokio::time::timeout(PATIENCE, async {
        loop {
            let event = events.recv().await.expect("the node's events end or lag");
            if let Some(found) = wanted(&event) {
                return found;
            }
        }
    })
    .await
    .expect("the event never came")
}

/// KRL nodes without discovery and with no neighbour named link to nobody; `connect` forms a
/// link (both ends' subscribers see `LinkUp`), `close` ends it with nothing lost (`LinkDown`
/// at both ends), and `connect` forms it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_and_close_form_and_end_named_links_and_events_report_them() {
    let (sockets, addrs) = sockets(2);
    let nodes: Vec<Node> = krl(2, reverse_link::Settings::new(1))
        .into_iter()
        .zip(sockets)
        .map(|(core, socket)| {
            Node::builder(core)
                .socket(socket)
                .peers(addrs.iter().copied())
                .config(Config::DEFAULT)
                .neighbours([])
                .spawn()
                .unwrap()
        })
        .collect();
    let mut events: Vec<_> = nodes.iter().map(Node::events).collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    for e in &mut events {
        assert_eq!(e.try_recv(), Err(broadcast::error::TryRecvError::Empty));
    }
    assert_eq!(
        nodes[0].stats().driver.datagrams_out,
        0,
        "a link nobody named"
    );

    let up =
        |peer: u32| move |e: &DriverEvent| (*e == DriverEvent::LinkUp(NodeId(peer))).then_some(());
    let down = |peer: u32| {
        move |e: &DriverEvent| (*e == DriverEvent::LinkDown(NodeId(peer))).then_some(())
    };
    nodes[0].connect(NodeId(1)).await.unwrap();
    next(&mut events[0], up(1)).await;
    next(&mut events[1], up(0)).await;

    nodes[1].close(NodeId(0)).unwrap();
    next(&mut events[1], down(0)).await;
    next(&mut events[0], down(1)).await;

    nodes[1].connect(NodeId(0)).await.unwrap();
    next(&mut events[1], up(0)).await;
    next(&mut events[0], up(1)).await;
    let stats = nodes[1].stats();
    let session = stats.session.expect("a token algorithm has sessions");
    assert_eq!(session.lost, 0, "a planned close loses nothing");
    assert!(session.links_up >= 2, "{session:?}");
    assert!(
        stats.datagrams_sent > 0 && stats.datagrams_received > 0,
        "{stats:?}"
    );
    assert_eq!(stats.status, Some(Status::Remainder));

    // Across the link: node 1 is served by node 0's token.
    let guard = tokio::time::timeout(PATIENCE, nodes[1].acquire())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(nodes[1].stats().status, Some(Status::Critical));
    drop(guard);
    for node in &nodes {
        node.shutdown().await;
    }
    assert!(matches!(
        nodes[0].connect(NodeId(1)).await,
        Err(Error::Shutdown)
    ));
    assert!(matches!(nodes[0].close(NodeId(1)), Err(Error::Shutdown)));
}

/// A permission node whose filter drops everything from its peer cannot enter (the peer's
/// reply never arrives), and counts what it dropped; once the filter lets datagrams through
/// again it enters. An outbound drop is counted on the other side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filter_drops_datagrams_both_ways_and_counts_them() {
    let (sockets, addrs) = sockets(2);
    let settings = ricart_agrawala::Settings::new(2, 20);
    let cores: Vec<_> = ricart_agrawala::network(settings)
        .unwrap()
        .into_iter()
        .map(|c| ricart_agrawala::Node::new(c).unwrap())
        .collect();
    // Node 1 drops what comes from node 0 while `cut_in`; node 0 drops what it sends while
    // `cut_out`.
    let cut_in = Arc::new(AtomicBool::new(true));
    let cut_out = Arc::new(AtomicBool::new(false));
    let from = addrs[0].1;
    let mut nodes = Vec::new();
    for (core, socket) in cores.into_iter().zip(sockets) {
        let id = core.id();
        let (cut_in, cut_out) = (cut_in.clone(), cut_out.clone());
        let filter = move |d: Direction, addr: SocketAddr, bytes: &[u8]| {
            assert!(!bytes.is_empty());
            let drop = match (id, d) {
                (NodeId(0), Direction::Out) => cut_out.load(Ordering::SeqCst),
                (NodeId(1), Direction::In) => addr == from && cut_in.load(Ordering::SeqCst),
                _ => false,
            };
            match drop {
                true => Verdict::Drop,
                false => Verdict::Keep,
            }
        };
        let node = Node::builder(core)
            .socket(socket)
            .peers(addrs.iter().copied())
            .filter(filter)
            .spawn()
            .unwrap();
        nodes.push(node);
    }
    // Node 1 hears nothing from node 0, whose reply it needs.
    let refused = nodes[1].acquire_timeout(Duration::from_millis(500)).await;
    assert!(matches!(refused, Err(Error::Timeout)), "{refused:?}");
    let stats = nodes[1].stats();
    assert!(stats.filtered_in > 0, "{stats:?}");
    assert_eq!(stats.filtered_out, 0);
    assert_eq!(stats.driver.datagrams_in, 0, "{stats:?}");
    assert_eq!(stats.datagrams_received, stats.filtered_in, "{stats:?}");
    // Node 0 sends nothing.
    let sent = nodes[0].stats().datagrams_sent;
    cut_in.store(false, Ordering::SeqCst);
    cut_out.store(true, Ordering::SeqCst);
    let refused = nodes[0].acquire_timeout(Duration::from_millis(500)).await;
    assert!(matches!(refused, Err(Error::Timeout)), "{refused:?}");
    let stats = nodes[0].stats();
    assert!(stats.filtered_out > 0, "{stats:?}");
    assert_eq!(stats.filtered_in, 0);
    assert_eq!(stats.datagrams_sent, sent, "{stats:?}");

    cut_out.store(false, Ordering::SeqCst);
    for node in &nodes {
        let guard = tokio::time::timeout(PATIENCE, node.acquire())
            .await
            .unwrap()
            .unwrap();
        drop(guard);
    }
    for node in &nodes {
        node.shutdown().await;
    }
}

/// A refused fence reaches the core: with recovery the token moves to a generation above the
/// refused one's (reported on the events); without, the core refuses the event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_fence_renumbers_the_token_with_recovery_and_is_an_error_without() {
    let recovery = Recovery::new(100, 250, 420, 1);
    for with_recovery in [true, false] {
        let mut settings = reverse_link::Settings::new(1);
        if with_recovery {
            settings = settings.with_recovery(recovery);
        }
        let (mut sockets, addrs) = sockets(2);
        let core = krl(2, settings).swap_remove(0);
        let node = Node::builder(core)
            .socket(sockets.swap_remove(0))
            .peers(addrs.iter().copied())
            .spawn()
            .unwrap();
        let mut events = node.events();
        let guard = tokio::time::timeout(PATIENCE, node.acquire())
            .await
            .unwrap()
            .unwrap();
        let fence = guard.fence();
        let newest = Fence::first_of(fence.lane, fence.generation() + 1);
        let outcome = guard.refused(newest).await;
        if with_recovery {
            outcome.unwrap();
            let renumbered = next(&mut events, |e| match e {
                DriverEvent::Report(Report::TokenRenumbered { fence }) => Some(*fence),
                _ => None,
            })
            .await;
            assert!(
                renumbered.generation() > newest.generation(),
                "{renumbered:?}"
            );
        } else {
            assert!(matches!(outcome, Err(Error::Core(_))), "{outcome:?}");
        }
        drop(guard);
        node.shutdown().await;
        let stats: Stats = node.stats();
        assert_eq!(stats.driver.core_errors, 0, "{stats:?}");
    }
}
