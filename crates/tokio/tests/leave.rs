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
