//! Nodes on 127.0.0.1 ephemeral ports: every entry admitted by a fence-checking resource,
//! never two holders at once, timeouts and dropped futures withdrawing their requests, guards
//! releasing on drop, the lost signal, shutdown.

use std::collections::HashMap;
use std::net::UdpSocket;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use manet_mutex::codec::Wire;
use manet_mutex::driver::{Algorithm, Config};
use manet_mutex::{look_ahead, reverse_link, ricart_agrawala, Fence, NodeId};
use manet_mutex_tokio::{Error, Lost, Node, Stats};

/// Generous: only to end a hung test.
const PATIENCE: Duration = Duration::from_secs(20);

/// Every core on its own 127.0.0.1 socket, each node told every other's address.
fn spawn_all<P>(cores: Vec<P>) -> Vec<Arc<Node>>
where
    P: Algorithm + Send + 'static,
    P::Message: Wire + Send,
{
    spawn_on("127.0.0.1:0", cores, None).unwrap()
}

/// Every core on its own socket bound to `bind`, with the driver's `config` if given;
/// `None` if the address cannot be bound (no IPv6 loopback, say).
fn spawn_on<P>(bind: &str, cores: Vec<P>, config: Option<Config>) -> Option<Vec<Arc<Node>>>
where
    P: Algorithm + Send + 'static,
    P::Message: Wire + Send,
{
    let sockets = cores
        .iter()
        .map(|_| UdpSocket::bind(bind))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    let addrs: Vec<_> = cores
        .iter()
        .zip(&sockets)
        .map(|(c, s)| (c.id(), s.local_addr().unwrap()))
        .collect();
    let nodes = cores
        .into_iter()
        .zip(sockets)
        .map(|(core, socket)| {
            let builder = Node::builder(core)
                .socket(socket)
                .peers(addrs.iter().copied());
            let builder = match config {
                Some(config) => builder.config(config),
                None => builder,
            };
            Arc::new(builder.spawn().unwrap())
        })
        .collect();
    Some(nodes)
}

fn krl(n: u32) -> Vec<reverse_link::Node> {
    reverse_link::network(n, &[], &[NodeId(0)], reverse_link::Settings::new(1))
        .unwrap()
        .into_iter()
        .map(|c| reverse_link::Node::new(c).unwrap())
        .collect()
}

fn ricart_agrawala(settings: ricart_agrawala::Settings) -> Vec<ricart_agrawala::Node> {
    ricart_agrawala::network(settings)
        .unwrap()
        .into_iter()
        .map(|c| ricart_agrawala::Node::new(c).unwrap())
        .collect()
}

fn look_ahead(n: u32) -> Vec<look_ahead::Node> {
    look_ahead::network(look_ahead::Settings::new(n, 20))
        .unwrap()
        .into_iter()
        .map(|c| look_ahead::Node::new(c).unwrap())
        .collect()
}

/// The protected resource: admits a fence only above every fence admitted in its lane, and
/// counts two holders at once.
#[derive(Default)]
struct Resource {
    newest: HashMap<u32, u64>,
    holders: u32,
    admitted: u64,
    violations: u64,
}

impl Resource {
    fn enter(&mut self, fence: Fence) {
        let stale = self
            .newest
            .get(&fence.lane)
            .is_some_and(|&n| fence.value <= n);
        if stale || self.holders > 0 {
            self.violations += 1;
        }
        let newest = self.newest.entry(fence.lane).or_insert(fence.value);
        *newest = fence.value.max(*newest);
        self.holders += 1;
        self.admitted += 1;
    }

    fn leave(&mut self) {
        self.holders -= 1;
    }
}

/// The node's counters once `done` holds of them (the task publishes them after each input).
async fn settle(node: &Node, done: impl Fn(&Stats) -> bool) -> Stats {
    tokio::time::timeout(PATIENCE, async {
        loop {
            let stats = node.stats();
            if done(&stats) {
                return stats;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap()
}

/// Every node acquires `rounds` times; the resource admits every entry, one at a time.
async fn every_node_enters(nodes: Vec<Arc<Node>>, rounds: u32) {
    let resource = Arc::new(Mutex::new(Resource::default()));
    let mut tasks = Vec::new();
    for node in &nodes {
        let (node, resource) = (node.clone(), resource.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..rounds {
                let guard = node.acquire_timeout(PATIENCE).await.unwrap();
                resource.lock().unwrap().enter(guard.fence());
                tokio::time::sleep(Duration::from_millis(2)).await;
                resource.lock().unwrap().leave();
                drop(guard);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (admitted, violations) = {
        let resource = resource.lock().unwrap();
        (resource.admitted, resource.violations)
    };
    assert_eq!(admitted, u64::from(rounds) * nodes.len() as u64);
    assert_eq!(violations, 0);
    for node in &nodes {
        let stats = node.stats();
        assert_eq!(stats.entered, u64::from(rounds));
        assert_eq!(stats.unknown_sender, 0);
        assert!(stats.driver.datagrams_in > 0 && stats.driver.datagrams_out > 0);
    }
    for node in nodes {
        node.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn krl_every_node_enters_one_at_a_time_under_increasing_fences() {
    every_node_enters(spawn_all(krl(4)), 5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ricart_agrawala_every_node_enters_one_at_a_time() {
    every_node_enters(
        spawn_all(ricart_agrawala(ricart_agrawala::Settings::new(4, 20))),
        5,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn look_ahead_every_node_enters_one_at_a_time() {
    every_node_enters(spawn_all(look_ahead(3)), 5).await;
}

/// IPv6 loopback; KRL without discovery links to every configured peer at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn krl_over_ipv6_without_discovery_links_to_the_configured_peers() {
    let Some(nodes) = spawn_on("[::1]:0", krl(3), Some(Config::DEFAULT)) else {
        eprintln!("no IPv6 loopback: skipped");
        return;
    };
    every_node_enters(nodes, 3).await;
}

/// IPv6 loopback, Ricart-Agrawala.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ricart_agrawala_over_ipv6() {
    let Some(nodes) = spawn_on(
        "[::1]:0",
        ricart_agrawala(ricart_agrawala::Settings::new(3, 20)),
        None,
    ) else {
        eprintln!("no IPv6 loopback: skipped");
        return;
    };
    every_node_enters(nodes, 3).await;
}

/// A timed-out request is withdrawn: it never enters later, and the others are still served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acquire_timeout_withdraws_the_request() {
    let nodes = spawn_all(ricart_agrawala(ricart_agrawala::Settings::new(3, 20)));
    let held = nodes[0].acquire_timeout(PATIENCE).await.unwrap();
    let late = nodes[1].acquire_timeout(Duration::from_millis(150)).await;
    assert!(matches!(late, Err(Error::Timeout)), "{late:?}");
    drop(held);
    // Node 2 gets in, then node 1 again; node 1's withdrawn request granted nothing.
    let guard = nodes[2].acquire_timeout(PATIENCE).await.unwrap();
    drop(guard);
    let guard = nodes[1].acquire_timeout(PATIENCE).await.unwrap();
    drop(guard);
    let stats = settle(&nodes[1], |s| s.released == 1).await;
    assert_eq!((stats.timeouts, stats.cancelled), (1, 1));
    assert_eq!((stats.entered, stats.released), (1, 1));
}

/// Dropping a waiting `acquire` future withdraws its request (KRL: the token moves on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_waiting_acquire_cancels_it() {
    let nodes = spawn_all(krl(3));
    let held = nodes[0].acquire_timeout(PATIENCE).await.unwrap();
    tokio::select! {
        r = nodes[1].acquire() => panic!("entered while node 0 holds: {r:?}"),
        () = tokio::time::sleep(Duration::from_millis(150)) => {}
    }
    let waiter = {
        let node = nodes[2].clone();
        tokio::spawn(async move { node.acquire_timeout(PATIENCE).await.map(|g| g.fence()) })
    };
    drop(held);
    let fence = waiter.await.unwrap().unwrap();
    let again = nodes[1].acquire_timeout(PATIENCE).await.unwrap();
    assert!(again.fence() > fence);
    drop(again);
    let stats = settle(&nodes[1], |s| s.released == 1).await;
    assert_eq!(stats.cancelled, 1);
    assert_eq!((stats.entered, stats.released), (1, 1));
}

/// One request at a time per node; dropping the guard releases, and the node can enter
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_acquire_is_busy_and_a_dropped_guard_releases() {
    let nodes = spawn_all(ricart_agrawala(ricart_agrawala::Settings::new(2, 20)));
    let guard = nodes[0].acquire_timeout(PATIENCE).await.unwrap();
    assert!(matches!(nodes[0].acquire().await, Err(Error::Busy)));
    let first = guard.fence();
    drop(guard);
    let other = nodes[1].acquire_timeout(PATIENCE).await.unwrap();
    assert!(other.fence() > first);
    other.release();
    let again = nodes[0].acquire_timeout(PATIENCE).await.unwrap();
    assert!(again.fence() > first);
    assert_eq!(again.resources(), 1);
    assert_eq!(again.is_lost(), None);
}

/// A lease that ends fires the guard's lost signal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lease_fires_the_lost_signal() {
    let nodes = spawn_all(ricart_agrawala(
        ricart_agrawala::Settings::new(2, 20).with_lease(100),
    ));
    let guard = nodes[0].acquire_timeout(PATIENCE).await.unwrap();
    let lost = tokio::time::timeout(PATIENCE, guard.lost()).await.unwrap();
    assert_eq!(lost, Lost::LeaseExpired);
    assert_eq!(guard.is_lost(), Some(Lost::LeaseExpired));
    drop(guard);
    let stats = settle(&nodes[0], |s| s.released == 1).await;
    assert_eq!(stats.lost, 1);
}

/// Shutdown ends the task: a waiting acquire ends with `Shutdown`, a held guard learns it,
/// and later acquires fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_the_task() {
    let nodes = spawn_all(ricart_agrawala(ricart_agrawala::Settings::new(2, 20)));
    let guard = nodes[0].acquire_timeout(PATIENCE).await.unwrap();
    let waiting = {
        let node = nodes[1].clone();
        tokio::spawn(async move { node.acquire().await.map(|g| g.fence()) })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    tokio::time::timeout(PATIENCE, nodes[1].shutdown())
        .await
        .unwrap();
    assert!(matches!(waiting.await.unwrap(), Err(Error::Shutdown)));
    assert!(matches!(nodes[1].acquire().await, Err(Error::Shutdown)));
    tokio::time::timeout(PATIENCE, nodes[0].shutdown())
        .await
        .unwrap();
    assert_eq!(guard.lost().await, Lost::Shutdown);
    drop(guard);
    let stats = nodes[0].stats();
    assert_eq!((stats.entered, stats.released), (1, 1));
}

/// Datagrams from an address in no peer's entry are counted and dropped.
#[tokio::test]
async fn datagrams_from_unknown_addresses_are_dropped() {
    let nodes = spawn_all(ricart_agrawala(ricart_agrawala::Settings::new(2, 20)));
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    stranger
        .send_to(b"not a frame", nodes[0].local_addr())
        .unwrap();
    tokio::time::timeout(PATIENCE, async {
        while nodes[0].stats().unknown_sender == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(nodes[0].stats().driver.datagrams_in, 0);
}

/// Prioritized h-out-of-k through `acquire_with`: node `i` asks for `i + 1` of `k = 3` units
/// at a time; each guard holds what it asked for, and the units in use never exceed `k`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prioritized_acquire_with_holds_what_it_asked_for_within_k() {
    use manet_mutex::{prioritized, CsRequest};
    const K: u32 = 3;
    let settings = prioritized::Settings::new(K, prioritized::Policy::Explicit);
    let cores: Vec<_> = prioritized::network(3, &[], &[NodeId(0)], settings)
        .unwrap()
        .into_iter()
        .map(|c| prioritized::Node::new(c).unwrap())
        .collect();
    let nodes = spawn_all(cores);
    // (units in use, the most ever in use, entries)
    let use_ = Arc::new(Mutex::new((0u32, 0u32, 0u32)));
    let mut tasks = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        let (node, use_) = (node.clone(), use_.clone());
        let h = i as u32 + 1;
        tasks.push(tokio::spawn(async move {
            for _ in 0..4 {
                let guard =
                    tokio::time::timeout(PATIENCE, node.acquire_with(CsRequest::resources(h)))
                        .await
                        .unwrap()
                        .unwrap();
                assert_eq!(guard.resources(), h);
                {
                    let mut u = use_.lock().unwrap();
                    u.0 += h;
                    u.1 = u.1.max(u.0);
                    u.2 += 1;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
                use_.lock().unwrap().0 -= h;
                drop(guard);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (in_use, most, entries) = *use_.lock().unwrap();
    assert_eq!((in_use, entries), (0, 12));
    assert!(most <= K, "{most} units in use at once, of {K}");
    for node in nodes {
        node.shutdown().await;
    }
}
