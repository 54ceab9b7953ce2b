//! Misuse reported as such (issue 39, item 4): the peer map checked at spawn, spawn outside a
//! runtime, a waiting request's peers visible, a panicking filter.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use manet_mutex::driver::Config;
use manet_mutex::{reverse_link, ricart_agrawala, NodeId};
use manet_mutex_tokio::{Direction, Error, Node, PeerError, Verdict};

/// Generous: only to end a hung test.
const PATIENCE: Duration = Duration::from_secs(20);

fn ra(n: u32) -> Vec<ricart_agrawala::Node> {
    ricart_agrawala::network(ricart_agrawala::Settings::new(n, 20))
        .unwrap()
        .into_iter()
        .map(|c| ricart_agrawala::Node::new(c).unwrap())
        .collect()
}

fn krl(n: u32) -> Vec<reverse_link::Node> {
    reverse_link::network(n, &[], &[NodeId(0)], reverse_link::Settings::new(1))
        .unwrap()
        .into_iter()
        .map(|c| reverse_link::Node::new(c).unwrap())
        .collect()
}

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// An address no socket here can bind: a spawn that got as far as binding would fail with
/// [`Error::Io`], so a [`Error::Peers`] shows the check came first.
const UNBINDABLE: &str = "192.0.2.1:7000";

fn peers_error(result: Result<Node, Error>) -> PeerError {
    match result {
        Err(Error::Peers(e)) => e,
        other => panic!("expected a peer map error, got {other:?}"),
    }
}

#[test]
fn spawn_outside_a_runtime_is_an_error_not_a_panic() {
    let core = ra(2).remove(0);
    let result = Node::builder(core)
        .bind(addr("127.0.0.1:0"))
        .peer(NodeId(1), addr("127.0.0.1:9"))
        .spawn();
    assert!(matches!(result, Err(Error::NoRuntime)), "{result:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_peer_map_that_does_not_fit_the_network_is_refused_before_anything_starts() {
    let before = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    let unbindable = addr(UNBINDABLE);
    let a = addr("10.0.0.2:7000");
    let b = addr("10.0.0.3:7000");
    let spawn = |peers: &[(u32, SocketAddr)]| {
        Node::builder(ra(3).remove(0))
            .bind(unbindable)
            .peers(peers.iter().map(|&(i, a)| (NodeId(i), a)))
            .spawn()
    };
    // An id outside the network's hosts 0..3.
    assert_eq!(
        peers_error(spawn(&[(1, a), (2, b), (5, addr("10.0.0.6:7000"))])),
        PeerError::NotInNetwork {
            peer: NodeId(5),
            hosts: 3
        }
    );
    // The node's own id at another address.
    assert_eq!(
        peers_error(spawn(&[(0, addr("10.0.0.9:7000")), (1, a), (2, b)])),
        PeerError::OwnId {
            id: NodeId(0),
            addr: addr("10.0.0.9:7000"),
            own: unbindable
        }
    );
    // Another peer at the node's own address.
    assert_eq!(
        peers_error(spawn(&[(1, unbindable), (2, b)])),
        PeerError::OwnAddress {
            peer: NodeId(1),
            addr: unbindable
        }
    );
    // Two ids at one address.
    assert_eq!(
        peers_error(spawn(&[(1, a), (2, a)])),
        PeerError::DuplicateAddress {
            first: NodeId(1),
            second: NodeId(2),
            addr: a
        }
    );
    // A permission algorithm's host with no address.
    assert_eq!(
        peers_error(spawn(&[(1, a)])),
        PeerError::MissingHosts {
            hosts: vec![NodeId(2)]
        }
    );
    // A token algorithm's named neighbour with no address (no discovery).
    let result = Node::builder(krl(3).remove(0))
        .bind(unbindable)
        .peer(NodeId(1), a)
        .config(Config::DEFAULT)
        .neighbours([NodeId(1), NodeId(2)])
        .spawn();
    assert_eq!(
        peers_error(result),
        PeerError::NeighbourWithoutAddress { peer: NodeId(2) }
    );
    // The whole network's map, the node's own entry at its own address included, passes the
    // checks (and fails only at binding the address nobody can bind).
    let whole = spawn(&[(0, unbindable), (1, a), (2, b)]);
    assert!(matches!(whole, Err(Error::Io(_))), "{whole:?}");
    // Token algorithms know no network size: any other id is a peer.
    let result = Node::builder(krl(2).remove(0))
        .bind(unbindable)
        .peer(NodeId(40), a)
        .spawn();
    assert!(matches!(result, Err(Error::Io(_))), "{result:?}");
    assert_eq!(
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks(),
        before,
        "no task started"
    );
    // The error says what is wrong.
    let text = Error::from(PeerError::MissingHosts {
        hosts: vec![NodeId(2)],
    })
    .to_string();
    assert!(text.contains("hosts without an address"), "{text}");
}

/// Three RA hosts, host 2 never started: node 0's request waits on host 2 only once host 1
/// replied, and `peers` says so (host 1 heard, host 2 silent since the start).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_request_shows_which_peers_it_waits_on_and_their_silence() {
    let sockets: Vec<UdpSocket> = (0..3)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let addrs: Vec<(NodeId, SocketAddr)> = sockets
        .iter()
        .enumerate()
        .map(|(i, s)| (NodeId(i as u32), s.local_addr().unwrap()))
        .collect();
    let mut nodes = Vec::new();
    for (core, socket) in ra(3).into_iter().zip(sockets).take(2) {
        nodes.push(
            Node::builder(core)
                .socket(socket)
                .peers(addrs.iter().copied())
                .spawn()
                .unwrap(),
        );
    }
    let idle = nodes[0].peers().await.unwrap();
    assert_eq!(idle.len(), 2);
    assert!(idle.iter().all(|p| !p.awaited));
    let result = nodes[0].acquire_timeout(Duration::from_millis(600)).await;
    assert!(matches!(result, Err(Error::Timeout)), "{result:?}");
    let waiting = async {
        let acquire = nodes[0].acquire();
        tokio::pin!(acquire);
        loop {
            tokio::select! {
                result = &mut acquire => panic!("entered without host 2: {result:?}"),
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
            let peers = nodes[0].peers().await.unwrap();
            if peers[0].heard && peers[1].awaited && !peers[0].awaited {
                return peers;
            }
        }
    };
    let peers = tokio::time::timeout(PATIENCE, waiting)
        .await
        .expect("never waited on host 2 alone");
    assert_eq!((peers[0].id, peers[1].id), (NodeId(1), NodeId(2)));
    assert_eq!(peers[1].addr, addrs[2].1);
    assert!(!peers[1].heard && peers[1].datagrams == 0);
    assert!(peers[1].silent >= Duration::from_millis(600), "{peers:?}");
    assert!(peers[0].datagrams > 0);
    for node in &nodes {
        node.shutdown().await;
    }
    assert!(matches!(nodes[0].peers().await, Err(Error::Shutdown)));
}

/// A filter that panics ends the node with its own outcome: the waiting request and every
/// later call say [`Error::FilterPanicked`], with the panic's message, not `Shutdown`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_filter_is_reported_as_such() {
    let sockets: Vec<UdpSocket> = (0..2)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let addrs: Vec<(NodeId, SocketAddr)> = sockets
        .iter()
        .enumerate()
        .map(|(i, s)| (NodeId(i as u32), s.local_addr().unwrap()))
        .collect();
    let mut cores = ra(2).into_iter();
    let mut sockets = sockets.into_iter();
    let broken = Node::builder(cores.next().unwrap())
        .socket(sockets.next().unwrap())
        .peers(addrs.iter().copied())
        .filter(|direction, _, _| match direction {
            Direction::Out => panic!("filter bug"),
            _ => Verdict::Keep,
        })
        .spawn()
        .unwrap();
    let other = Node::builder(cores.next().unwrap())
        .socket(sockets.next().unwrap())
        .peers(addrs.iter().copied())
        .spawn()
        .unwrap();
    let first = tokio::time::timeout(PATIENCE, broken.acquire())
        .await
        .expect("the request never ended");
    match first {
        Err(Error::FilterPanicked(message)) => assert_eq!(message, "filter bug"),
        other => panic!("expected FilterPanicked, got {other:?}"),
    }
    assert!(matches!(
        broken.acquire().await,
        Err(Error::FilterPanicked(_))
    ));
    assert!(matches!(
        broken.peers().await,
        Err(Error::FilterPanicked(_))
    ));
    assert!(matches!(
        broken.close(NodeId(1)),
        Err(Error::FilterPanicked(_))
    ));
    broken.shutdown().await;
    // The other node is untouched.
    assert!(other.peers().await.is_ok());
    other.shutdown().await;
}

/// The `warn` events the node's task emits, as "message" texts (a minimal subscriber: the
/// crate depends on `tracing` alone).
#[derive(Default, Clone)]
struct Warnings(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

struct Message<'a>(&'a mut String);

impl tracing::field::Visit for Message<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Warnings {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut text = String::new();
            event.record(&mut Message(&mut text));
            self.0.lock().unwrap().push(text);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A request waiting on a silent host says so: "waiting for peer 1, silent N s", about 1 s
/// after the request (then backed off).
#[tokio::test(flavor = "current_thread")]
async fn a_waiting_request_logs_the_silent_peer_it_waits_on() {
    let warnings = Warnings::default();
    let _default = tracing::subscriber::set_default(warnings.clone());
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    // Host 1's address is a socket nobody reads: host 1 is silent.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let node = Node::builder(ra(2).remove(0))
        .socket(socket)
        .peer(NodeId(1), silent.local_addr().unwrap())
        .spawn()
        .unwrap();
    let result = node.acquire_timeout(Duration::from_millis(1_500)).await;
    assert!(matches!(result, Err(Error::Timeout)), "{result:?}");
    node.shutdown().await;
    let warnings = warnings.0.lock().unwrap().clone();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("waiting for peer 1, silent ") && w.ends_with(" s")),
        "{warnings:?}"
    );
}
