//! Restarts with the same configuration and state directory ([`Node::with_state_dir`]): a
//! crash is a node's runtime dropped with its task (no shutdown, nothing more sent), as a
//! `kill -9` ends a process; the restart builds the node again from the same configuration
//! and directory, as systemd runs the same command line.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use manet_mutex::driver::DriverEvent;
use manet_mutex::token::Recovery;
use manet_mutex::{look_ahead, reverse_link, ricart_agrawala, Fence, NodeId, Report};
use manet_mutex_tokio::{Durable, Error, Node, StoreError};
use tokio::runtime::Runtime;

/// Generous: only to end a hung test.
const PATIENCE: Duration = Duration::from_secs(30);

/// A node on a runtime of its own, so that dropping the runtime crashes it.
struct Host {
    node: Arc<Node>,
    runtime: Option<Runtime>,
}

impl Drop for Host {
    /// Without waiting for anything: the tests drop hosts on a runtime's thread.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Host {
    /// Starts node `config` on `addr` with its state in `dir`.
    fn start<C: Durable>(
        config: C,
        dir: &Path,
        addr: SocketAddr,
        peers: &[(NodeId, SocketAddr)],
    ) -> Host {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let node = {
            let _inside = runtime.enter();
            Node::with_state_dir(config, dir)
                .unwrap()
                .socket(UdpSocket::bind(addr).unwrap())
                .peers(peers.iter().copied())
                .spawn()
                .unwrap()
        };
        Host {
            node: Arc::new(node),
            runtime: Some(runtime),
        }
    }

    /// A crash: the task is dropped where it stands, its socket closed, nothing sent.
    fn crash(mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Until the task is dropped (its socket and its directory's lock with it), as the
            // death of a process is over when `kill -9` returns.
            tokio::task::block_in_place(|| runtime.shutdown_timeout(PATIENCE));
        }
    }
}

/// A fresh directory for one test's state directories.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("manet-mutex-restart-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `n` free addresses on 127.0.0.1, by id.
fn addresses(n: u32) -> Vec<(NodeId, SocketAddr)> {
    let sockets: Vec<_> = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    sockets
        .iter()
        .enumerate()
        .map(|(i, s)| (NodeId(i as u32), s.local_addr().unwrap()))
        .collect()
}

/// The protected resource: each lane's fences must go up; counts two holders at once.
#[derive(Default)]
struct Resource {
    newest: HashMap<u32, u64>,
    holders: u32,
    admitted: u64,
    refused: u64,
    overlaps: u64,
    /// Every fence admitted, in order, for the failure message.
    log: Vec<(u32, u64)>,
}

impl Resource {
    fn enter(&mut self, fence: Fence) {
        self.log
            .push((fence.generation(), fence.value & 0xffff_ffff));
        let newest = self.newest.entry(fence.lane).or_insert(0);
        if fence.value <= *newest && self.admitted > 0 {
            self.refused += 1;
        }
        *newest = fence.value.max(*newest);
        if self.holders > 0 {
            self.overlaps += 1;
        }
        self.holders += 1;
        self.admitted += 1;
    }

    fn leave(&mut self) {
        self.holders -= 1;
    }
}

/// Entries admitted, refused (a fence not above the lane's newest) and overlapping another.
fn tally(resource: &Mutex<Resource>) -> (u64, u64, u64) {
    let r = resource.lock().unwrap();
    if r.refused > 0 || r.overlaps > 0 {
        eprintln!("fences (generation, count): {:?}", r.log);
    }
    (r.admitted, r.refused, r.overlaps)
}

/// Every node of `nodes` enters `rounds` times, each entry checked by `resource`.
async fn rounds(nodes: &[Arc<Node>], rounds: u32, resource: &Arc<Mutex<Resource>>) {
    let mut tasks = Vec::new();
    for node in nodes {
        let (node, resource) = (node.clone(), resource.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..rounds {
                let guard = node.acquire_timeout(PATIENCE).await.unwrap();
                resource.lock().unwrap().enter(guard.fence());
                tokio::time::sleep(Duration::from_millis(3)).await;
                resource.lock().unwrap().leave();
                drop(guard);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

fn krl_configs(n: u32, recovery: Recovery) -> Vec<reverse_link::Config> {
    let settings = reverse_link::Settings::new(1).with_recovery(recovery);
    reverse_link::network(n, &[], &[NodeId(0)], settings).unwrap()
}

/// Recovery on loopback: beacons every 100 ms, leases 2 s, a hop within 420 ms, one hop.
const RECOVERY: Recovery = Recovery::new(100, 2_000, 420, 1);

/// The scenario: the first token holder is killed after the token moved on and started
/// again with the same configuration. Without its state it would come back holding the
/// initial token, a second one (two holders in 20 of 20 rounds); with it, it holds none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_holder_restarted_with_the_same_configuration_holds_no_second_token() {
    let root = scratch("krl-moved");
    let addrs = addresses(3);
    let configs = krl_configs(3, RECOVERY);
    let dir = |i: usize| root.join(format!("node-{i}"));
    let mut hosts: Vec<Option<Host>> = (0..3)
        .map(|i| Some(Host::start(configs[i].clone(), &dir(i), addrs[i].1, &addrs)))
        .collect();
    let resource = Arc::new(Mutex::new(Resource::default()));
    let nodes: Vec<_> = hosts
        .iter()
        .map(|h| h.as_ref().unwrap().node.clone())
        .collect();
    rounds(&nodes, 2, &resource).await;
    // The token moves to node 1, which keeps it (inside) while node 0 dies and comes back.
    let held = nodes[1].acquire_timeout(PATIENCE).await.unwrap();
    resource.lock().unwrap().enter(held.fence());
    hosts[0].take().unwrap().crash();
    let host = Host::start(configs[0].clone(), &dir(0), addrs[0].1, &addrs);
    let restarted = host.node.clone();
    hosts[0] = Some(host);
    // The restarted node asks while node 1 is inside: it must wait for node 1's release.
    let waiting = tokio::spawn(async move { restarted.acquire_timeout(PATIENCE).await });
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        !waiting.is_finished(),
        "the restarted node entered beside the holder"
    );
    resource.lock().unwrap().leave();
    drop(held);
    let guard = waiting.await.unwrap().unwrap();
    resource.lock().unwrap().enter(guard.fence());
    resource.lock().unwrap().leave();
    drop(guard);
    let nodes: Vec<_> = hosts
        .iter()
        .map(|h| h.as_ref().unwrap().node.clone())
        .collect();
    rounds(&nodes, 5, &resource).await;
    assert_eq!(tally(&resource), (3 * 2 + 2 + 3 * 5, 0, 0));
    for node in &nodes {
        assert_eq!(node.stats().regenerated, 0, "no token was lost");
        node.shutdown().await;
    }
    drop(hosts);
    std::fs::remove_dir_all(&root).unwrap();
}

/// The holder is killed inside: the token is lost with it, recovery makes it again, and the
/// holder started again with the same configuration takes part under higher fences; the
/// round of the generation made is stored before its beacons go (restarting its maker finds
/// it in the state file).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_killed_inside_and_restarted_rejoins_above_the_lost_tokens_fences() {
    let root = scratch("krl-inside");
    let addrs = addresses(3);
    let configs = krl_configs(3, RECOVERY);
    let dir = |i: usize| root.join(format!("node-{i}"));
    let mut hosts: Vec<Option<Host>> = (0..3)
        .map(|i| Some(Host::start(configs[i].clone(), &dir(i), addrs[i].1, &addrs)))
        .collect();
    let resource = Arc::new(Mutex::new(Resource::default()));
    let held = hosts[0]
        .as_ref()
        .unwrap()
        .node
        .acquire_timeout(PATIENCE)
        .await
        .unwrap();
    resource.lock().unwrap().enter(held.fence());
    std::mem::forget(held);
    hosts[0].take().unwrap().crash();
    // The dead holder's lease runs out before anyone else may act (the resource's rule).
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    resource.lock().unwrap().leave();
    let host = Host::start(configs[0].clone(), &dir(0), addrs[0].1, &addrs);
    hosts[0] = Some(host);
    let nodes: Vec<_> = hosts
        .iter()
        .map(|h| h.as_ref().unwrap().node.clone())
        .collect();
    rounds(&nodes, 3, &resource).await;
    assert_eq!(tally(&resource), (1 + 3 * 3, 0, 0));
    let makers: Vec<usize> = (0..3)
        .filter(|&i| nodes[i].stats().regenerated > 0)
        .collect();
    assert_eq!(makers.len(), 1, "one node made the token again");
    let state = std::fs::read_to_string(dir(makers[0]).join("state")).unwrap();
    assert!(
        state
            .lines()
            .any(|l| l.starts_with("made-up-to ") && l != "made-up-to 0"),
        "{state}"
    );
    for node in &nodes {
        node.shutdown().await;
    }
    drop(hosts);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Majority mode: the promises a voter makes are in its state file before its answer goes,
/// and a voter restarted with the same configuration gets them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn majority_mode_promises_are_stored_and_survive_a_restart() {
    let root = scratch("krl-majority");
    let addrs = addresses(3);
    let configs = krl_configs(3, RECOVERY.with_majority(3));
    let dir = |i: usize| root.join(format!("node-{i}"));
    let mut hosts: Vec<Option<Host>> = (0..3)
        .map(|i| Some(Host::start(configs[i].clone(), &dir(i), addrs[i].1, &addrs)))
        .collect();
    let mut events: Vec<_> = hosts
        .iter()
        .map(|h| h.as_ref().unwrap().node.events())
        .collect();
    // The holder dies: the others claim the token with a majority of promises.
    hosts[0].take().unwrap().crash();
    let regenerated = tokio::time::timeout(PATIENCE, async {
        loop {
            for e in events.iter_mut().skip(1) {
                if let Ok(DriverEvent::Report(Report::TokenRegenerated { fence })) = e.try_recv() {
                    return fence;
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    let ballot = regenerated.generation();
    let promised = |i: usize| {
        std::fs::read_to_string(dir(i).join("state"))
            .unwrap()
            .lines()
            .any(|l| l == format!("promise 0 {ballot}"))
    };
    assert!(
        promised(1) && promised(2),
        "both voters stored promise 0 {ballot}"
    );
    // Restarted, voter 2 keeps its promise and the network serves everyone.
    hosts[2].take().unwrap().crash();
    hosts[2] = Some(Host::start(configs[2].clone(), &dir(2), addrs[2].1, &addrs));
    assert!(promised(2));
    hosts[0] = Some(Host::start(configs[0].clone(), &dir(0), addrs[0].1, &addrs));
    let nodes: Vec<_> = hosts
        .iter()
        .map(|h| h.as_ref().unwrap().node.clone())
        .collect();
    let resource = Arc::new(Mutex::new(Resource::default()));
    rounds(&nodes, 3, &resource).await;
    assert_eq!(tally(&resource), (9, 0, 0));
    for node in &nodes {
        node.shutdown().await;
    }
    drop(hosts);
    std::fs::remove_dir_all(&root).unwrap();
}

/// A permission host killed and started again with the same configuration runs as a new
/// incarnation; its peers answer it and every fence is admitted. The host killed is the last
/// to have entered, so no peer knows its last fence: its first entry after the restart must
/// still be above it (its incarnation is above every generation it entered under, C6).
async fn restarted_permission_hosts_are_served_above_their_last_fence<C>(
    name: &str,
    configs: Vec<C>,
) where
    C: Durable + Clone,
{
    let root = scratch(name);
    let addrs = addresses(3);
    let dir = |i: usize| root.join(format!("node-{i}"));
    let mut hosts: Vec<Option<Host>> = (0..3)
        .map(|i| Some(Host::start(configs[i].clone(), &dir(i), addrs[i].1, &addrs)))
        .collect();
    let resource = Arc::new(Mutex::new(Resource::default()));
    let node = |hosts: &[Option<Host>], i: usize| hosts[i].as_ref().unwrap().node.clone();
    for round in 0..2 {
        let nodes: Vec<_> = (0..3).map(|i| node(&hosts, i)).collect();
        rounds(&nodes, 3, &resource).await;
        let crashed = 2 - round;
        rounds(&nodes[crashed..=crashed], 1, &resource).await;
        hosts[crashed].take().unwrap().crash();
        hosts[crashed] = Some(Host::start(
            configs[crashed].clone(),
            &dir(crashed),
            addrs[crashed].1,
            &addrs,
        ));
        rounds(&[node(&hosts, crashed)], 1, &resource).await;
    }
    let nodes: Vec<_> = (0..3).map(|i| node(&hosts, i)).collect();
    rounds(&nodes, 3, &resource).await;
    assert_eq!(tally(&resource), (31, 0, 0));
    for node in &nodes {
        node.shutdown().await;
    }
    drop(hosts);
    std::fs::remove_dir_all(&root).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ricart_agrawala_restarted_with_the_same_configuration_is_served_above_its_last_fence() {
    let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(3, 20)).unwrap();
    restarted_permission_hosts_are_served_above_their_last_fence("ra", configs).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn look_ahead_restarted_with_the_same_configuration_is_served_above_its_last_fence() {
    let configs = look_ahead::network(look_ahead::Settings::new(3, 20)).unwrap();
    restarted_permission_hosts_are_served_above_their_last_fence("la", configs).await;
}

/// A second process on a node's state directory is refused, and so is the directory of
/// another node; neither starts anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_directory_in_use_or_of_another_node_is_refused() {
    let root = scratch("misuse");
    let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(2, 20)).unwrap();
    let first = Node::with_state_dir(configs[0], &root).unwrap();
    let again = Node::with_state_dir(configs[0], &root);
    assert!(
        matches!(again, Err(Error::Store(StoreError::Locked(_)))),
        "{again:?}"
    );
    drop(first);
    let other = Node::with_state_dir(configs[1], &root);
    assert!(
        matches!(
            other,
            Err(Error::Store(StoreError::OtherNode {
                found: 0,
                expected: 1,
                ..
            }))
        ),
        "{other:?}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// A node that cannot store what must precede a grant stops as a crash would, says why, and
/// hands over no grant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_cannot_store_its_state_stops_and_says_why() {
    let root = scratch("unwritable");
    let addrs = addresses(2);
    let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(2, 20)).unwrap();
    let dir = |i: usize| root.join(format!("node-{i}"));
    let hosts: Vec<Host> = (0..2)
        .map(|i| Host::start(configs[i], &dir(i), addrs[i].1, &addrs))
        .collect();
    // The directory gone: the first entry's generation cannot be stored.
    std::fs::remove_dir_all(dir(0)).unwrap();
    let outcome = hosts[0].node.acquire_timeout(PATIENCE).await;
    assert!(matches!(outcome, Err(Error::StoreFailed(_))), "{outcome:?}");
    let again = hosts[0].node.acquire_timeout(PATIENCE).await;
    assert!(matches!(again, Err(Error::StoreFailed(_))), "{again:?}");
    assert!(hosts[0].node.stats().store_failed);
    drop(hosts);
    std::fs::remove_dir_all(&root).unwrap();
}
