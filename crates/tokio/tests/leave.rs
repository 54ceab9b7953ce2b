//! Leaving (`Node::leave`, and every handle dropped) on 127.0.0.1: the others keep entering
//! without recovery, a waiting request ends with `Error::Left`, and a node that left takes no
//! request.

use std::net::UdpSocket;
use std::time::Duration;

use manet_mutex::{look_ahead, ricart_agrawala, NodeId};
use manet_mutex_tokio::{Error, Node};

/// Generous: only to end a hung test.
const PATIENCE: Duration = Duration::from_secs(20);

fn sockets(n: usize) -> (Vec<UdpSocket>, Vec<(NodeId, std::net::SocketAddr)>) {
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

fn ra_nodes(n: u32) -> Vec<Node> {
    let (sockets, addrs) = sockets(n as usize);
    ricart_agrawala::network(ricart_agrawala::Settings::new(n, 20))
        .unwrap()
        .into_iter()
        .zip(sockets)
        .map(|(c, socket)| {
            Node::builder(ricart_agrawala::Node::new(c).unwrap())
                .socket(socket)
                .peers(addrs.iter().copied())
                .spawn()
                .unwrap()
        })
        .collect()
}

fn la_nodes(n: u32) -> Vec<Node> {
    let (sockets, addrs) = sockets(n as usize);
    look_ahead::network(look_ahead::Settings::new(n, 20))
        .unwrap()
        .into_iter()
        .zip(sockets)
        .map(|(c, socket)| {
            Node::builder(look_ahead::Node::new(c).unwrap())
                .socket(socket)
                .peers(addrs.iter().copied())
                .spawn()
                .unwrap()
        })
        .collect()
}

/// Each of `nodes` acquires `rounds` times, one after another.
async fn all_enter(nodes: &[Node], rounds: u32) {
    for _ in 0..rounds {
        for node in nodes {
            let guard = node.acquire_timeout(PATIENCE).await.unwrap();
            drop(guard);
        }
    }
}

async fn the_others_keep_entering_after_one_leaves(mut nodes: Vec<Node>) {
    all_enter(&nodes, 3).await;
    let leaver = nodes.pop().unwrap();
    tokio::time::timeout(PATIENCE, leaver.leave())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(leaver.acquire().await, Err(Error::Shutdown)));
    // No recovery configured: before leaving existed, every request waited for ever here.
    all_enter(&nodes, 5).await;
    for node in nodes {
        node.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ricart_agrawala_the_others_keep_entering_after_one_leaves() {
    the_others_keep_entering_after_one_leaves(ra_nodes(3)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn look_ahead_the_others_keep_entering_after_one_leaves() {
    the_others_keep_entering_after_one_leaves(la_nodes(3)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_every_handle_leaves_in_the_background() {
    let mut nodes = ra_nodes(3);
    all_enter(&nodes, 2).await;
    drop(nodes.pop());
    all_enter(&nodes, 5).await;
    for node in nodes {
        node.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_while_waiting_withdraws_the_request_with_left() {
    let nodes = ra_nodes(3);
    // Host 0 holds; host 1 waits behind it and leaves meanwhile.
    let guard = nodes[0].acquire_timeout(PATIENCE).await.unwrap();
    let waiting = {
        let node = &nodes[1];
        async move { node.acquire().await }
    };
    let leave = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        nodes[1].leave().await
    };
    let (waited, left) = tokio::join!(waiting, leave);
    assert!(matches!(waited, Err(Error::Left)), "{waited:?}");
    left.unwrap();
    drop(guard);
    // Host 2 still enters, without host 1.
    drop(nodes[2].acquire_timeout(PATIENCE).await.unwrap());
    for node in &nodes {
        node.shutdown().await;
    }
}

/// A KRL node that nobody's map names joins a running network: its hellos teach the others
/// its address, the links form, and it takes the lock; the others keep entering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn krl_a_node_nobody_knows_joins_by_its_hellos_and_takes_the_lock() {
    use manet_mutex::reverse_link;
    let cores: Vec<_> = reverse_link::network(4, &[], &[NodeId(0)], reverse_link::Settings::new(1))
        .unwrap()
        .into_iter()
        .map(|c| reverse_link::Node::new(c).unwrap())
        .collect();
    let (sockets, addrs) = sockets(4);
    let mut cores = cores.into_iter();
    let mut sockets = sockets.into_iter();
    let first: Vec<Node> = (0..3)
        .map(|_| {
            Node::builder(cores.next().unwrap())
                .socket(sockets.next().unwrap())
                .peers(addrs[..3].iter().copied())
                .spawn()
                .unwrap()
        })
        .collect();
    all_enter(&first, 2).await;
    let joiner = Node::builder(cores.next().unwrap())
        .socket(sockets.next().unwrap())
        .peers(addrs[..3].iter().copied())
        .spawn()
        .unwrap();
    let guard = joiner.acquire_timeout(PATIENCE).await.unwrap();
    drop(guard);
    all_enter(&first, 2).await;
    for node in first.iter().chain([&joiner]) {
        assert_eq!(
            node.stats().entered,
            if node.id() == NodeId(3) { 1 } else { 4 }
        );
        node.shutdown().await;
    }
}

/// Hosts 0–2 start with host 3 named as joining (`Builder::joining`), so they do not wait
/// for it; host 3 starts later (asking everyone) and takes the lock, and everyone keeps
/// entering. Without `joining` the first three would wait for host 3 from their first
/// request on (`without_joining_the_others_wait_for_the_host_not_started`).
async fn a_late_host_joins_and_takes_the_lock<P>(mut cores: Vec<P>, joining: bool)
where
    P: manet_mutex::driver::Algorithm + Send + 'static,
    P::Message: manet_mutex::codec::Wire + Send,
{
    let (mut sockets, addrs) = sockets(cores.len());
    // Bound, so its address is known, but not running yet.
    let (late, late_socket) = (cores.pop().unwrap(), sockets.pop().unwrap());
    let mut nodes: Vec<Node> = cores
        .into_iter()
        .zip(sockets)
        .map(|(core, socket)| {
            let builder = Node::builder(core)
                .socket(socket)
                .peers(addrs.iter().copied());
            match joining {
                true => builder.joining([NodeId(3)]),
                false => builder,
            }
            .spawn()
            .unwrap()
        })
        .collect();
    if !joining {
        let waited = nodes[0].acquire_timeout(Duration::from_millis(500)).await;
        assert!(matches!(waited, Err(Error::Timeout)), "{waited:?}");
        return;
    }
    all_enter(&nodes, 2).await;
    // The joiner itself names nobody as joining: it waits for everyone.
    nodes.push(
        Node::builder(late)
            .socket(late_socket)
            .peers(addrs.iter().copied())
            .spawn()
            .unwrap(),
    );
    drop(nodes[3].acquire_timeout(PATIENCE).await.unwrap());
    all_enter(&nodes, 2).await;
    for node in &nodes {
        node.shutdown().await;
    }
}

fn ra_cores(n: u32) -> Vec<ricart_agrawala::Node> {
    ricart_agrawala::network(ricart_agrawala::Settings::new(n, 20))
        .unwrap()
        .into_iter()
        .map(|c| ricart_agrawala::Node::new(c).unwrap())
        .collect()
}

/// Look-ahead hosts; the last (the joiner) asks everyone, as a joiner must (L5).
fn la_cores(n: u32) -> Vec<look_ahead::Node> {
    let mut configs = look_ahead::network(look_ahead::Settings::new(n, 20)).unwrap();
    let last = configs.pop().unwrap();
    let everyone = (0..n - 1).map(NodeId).collect();
    configs.push(last.with_info_set(everyone));
    configs
        .into_iter()
        .map(|c| look_ahead::Node::new(c).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ricart_agrawala_a_late_host_joins_and_takes_the_lock() {
    a_late_host_joins_and_takes_the_lock(ra_cores(4), true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn look_ahead_a_late_host_joins_and_takes_the_lock() {
    a_late_host_joins_and_takes_the_lock(la_cores(4), true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_joining_the_others_wait_for_the_host_not_started() {
    a_late_host_joins_and_takes_the_lock(ra_cores(4), false).await;
}

#[tokio::test]
async fn joining_names_another_host_of_a_permission_network() {
    for bad in [NodeId(0), NodeId(7)] {
        let (mut sockets, addrs) = sockets(3);
        let err = Node::builder(ra_cores(3).remove(0))
            .socket(sockets.remove(0))
            .peers(addrs.iter().copied())
            .joining([bad])
            .spawn()
            .unwrap_err();
        assert!(
            matches!(err, Error::Core(manet_mutex::Error::NotAPeer { .. })),
            "{err}"
        );
    }
}
