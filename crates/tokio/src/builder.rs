//! The node's configuration.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use manet_mutex::codec::Wire;
use manet_mutex::driver::{Algorithm, Config};
use manet_mutex::{discovery, Event, NodeId};
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::filter::{Direction, Filter, Verdict};
use crate::store::Store;
use crate::task::Task;
use crate::{Error, Node, PeerError, Shared};

/// Where discovery's hellos go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Broadcast {
    /// To every configured peer address, one datagram each: an emulated broadcast, for
    /// loopback and for networks without broadcast. The default.
    #[default]
    Peers,
    /// To this address: an IPv4 broadcast address (the socket gets `SO_BROADCAST`), or an
    /// IPv4 or IPv6 multicast group (the socket joins it, IPv6 on the default interface).
    /// Every node's socket must be bound to the address's port to hear it.
    Address(SocketAddr),
}

/// How to build a [`Node`] ([`Node::builder`]). Defaults:
///
/// | setting | default |
/// | --- | --- |
/// | [`Builder::bind`] | `0.0.0.0:0` (any IPv4 interface, an ephemeral port) |
/// | [`Builder::peer`] | none: a node with no peers hears nobody |
/// | [`Builder::broadcast`] | [`Broadcast::Peers`]: hellos to every peer address |
/// | [`Builder::neighbours`] | every configured peer (token algorithms without discovery) |
/// | [`Builder::filter`] | none: every datagram goes through |
/// | [`Builder::config`] | token algorithms ([`reverse_link`](manet_mutex::reverse_link), [`prioritized`](manet_mutex::prioritized)): [`Config::DEFAULT`] with discovery, hellos every 100 ms ([`discovery::Settings::new`]`(100)`), session timers of [`session::Settings::DEFAULT`](manet_mutex::session::Settings::DEFAULT) (resend after 20 ms, link failed after 400 ms of silence); permission algorithms: [`Config::DEFAULT`] (no discovery, none needed) |
///
/// The driver's time unit is the millisecond. A token algorithm configured without discovery
/// links at start to its [neighbours](Builder::neighbours), by default every configured peer
/// ([`Driver::connect`](manet_mutex::driver::Driver::connect)).
#[must_use = "a builder does nothing until spawned"]
pub struct Builder<P> {
    core: P,
    bind: SocketAddr,
    socket: Option<std::net::UdpSocket>,
    peers: HashMap<NodeId, SocketAddr>,
    neighbours: Option<Vec<NodeId>>,
    broadcast: Broadcast,
    config: Option<Config>,
    filter: Option<Filter>,
    /// The durable state ([`Node::with_state_dir`]).
    store: Option<Store>,
    /// Hosts that have not started yet ([`Builder::joining`]).
    joining: Vec<NodeId>,
}

impl<P: std::fmt::Debug> std::fmt::Debug for Builder<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The filter is a closure: only whether there is one.
        f.debug_struct("Builder")
            .field("core", &self.core)
            .field("bind", &self.bind)
            .field("socket", &self.socket)
            .field("peers", &self.peers)
            .field("neighbours", &self.neighbours)
            .field("broadcast", &self.broadcast)
            .field("config", &self.config)
            .field("filter", &self.filter.is_some())
            .field("store", &self.store)
            .finish()
    }
}

impl<P> Builder<P>
where
    P: Algorithm + Send + 'static,
    P::Message: Wire + Send,
{
    pub(crate) fn new(core: P) -> Self {
        Builder {
            core,
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
            socket: None,
            peers: HashMap::new(),
            neighbours: None,
            broadcast: Broadcast::Peers,
            config: None,
            filter: None,
            store: None,
            joining: Vec::new(),
        }
    }

    pub(crate) fn with_store(mut self, store: Store) -> Self {
        self.store = Some(store);
        self
    }

    /// Binds the node's socket to `addr` (default `0.0.0.0:0`).
    pub fn bind(mut self, addr: SocketAddr) -> Self {
        self.bind = addr;
        self
    }

    /// Uses this socket, bound already (instead of [`Builder::bind`]): for a port chosen
    /// before the peers' maps are written, as tests on ephemeral ports do.
    pub fn socket(mut self, socket: std::net::UdpSocket) -> Self {
        self.socket = Some(socket);
        self
    }

    /// Peer `id` is at `addr` (a later entry for the same id replaces it).
    pub fn peer(mut self, id: NodeId, addr: SocketAddr) -> Self {
        self.peers.insert(id, addr);
        self
    }

    /// Every `(id, addr)` of `peers` ([`Builder::peer`]); the node's own id, if present, is
    /// skipped, if it names the node's own address ([`PeerError::OwnId`] at
    /// [`Builder::spawn`] if not).
    pub fn peers(mut self, peers: impl IntoIterator<Item = (NodeId, SocketAddr)>) -> Self {
        self.peers.extend(peers);
        self
    }

    /// The peers a token algorithm configured without discovery links to at start (default:
    /// every configured peer): the embedder names the neighbours, e.g. a topology's edges, or
    /// none (an empty list) to form every link later with [`Node::connect`]. Every
    /// neighbour needs an address ([`Builder::peer`]). Ignored with discovery (it finds the
    /// neighbours) and by the permission algorithms (they need no links).
    pub fn neighbours(mut self, neighbours: impl IntoIterator<Item = NodeId>) -> Self {
        self.neighbours = Some(neighbours.into_iter().collect());
        self
    }

    /// Calls `filter` for every datagram the socket receives ([`Direction::In`], with the
    /// sender's address, before anything else looks at it) and every one the node is about
    /// to send ([`Direction::Out`], with the destination's address: once per address of an
    /// emulated broadcast); a [`Verdict::Drop`] drops it, counted in
    /// [`Stats::filtered_in`](crate::Stats::filtered_in) or
    /// [`Stats::filtered_out`](crate::Stats::filtered_out). For fault injection (random
    /// loss, cut links: the filter may share state with the application, e.g. a set of cut
    /// peers behind a mutex) and for firewalls. It runs on the node's task: keep it short,
    /// and never block in it. If it panics, the panic is caught and the node ends as a crash
    /// would (nothing more is sent, the filter is never called again); every later call
    /// returns [`Error::FilterPanicked`].
    pub fn filter<F>(mut self, filter: F) -> Self
    where
        F: FnMut(Direction, SocketAddr, &[u8]) -> Verdict + Send + 'static,
    {
        self.filter = Some(Box::new(filter));
        self
    }

    /// Hosts of a permission algorithm's network that have not started yet and will join
    /// later (default: none): the node does not wait for them until they ask
    /// (`docs/ALGORITHMS.md`, L5: each starts excluded, as after
    /// [`Event::Suspect`](manet_mutex::Event::Suspect), and its first request counts it
    /// again, before this node answers it). Give it to the hosts running when the joiners
    /// are not, **never to a joiner itself**: a joiner must wait for everyone, or two joiners
    /// that each took the other for absent could both enter. Every joiner still needs its
    /// address in the map. [`Error::Core`] at [`Builder::spawn`] for the node's own id, an
    /// id outside the network or a token algorithm (a token node joins by its hellos and
    /// needs nothing of the others).
    pub fn joining(mut self, hosts: impl IntoIterator<Item = NodeId>) -> Self {
        self.joining.extend(hosts);
        self
    }

    /// Where discovery's hellos go (default [`Broadcast::Peers`]).
    pub fn broadcast(mut self, broadcast: Broadcast) -> Self {
        self.broadcast = broadcast;
        self
    }

    /// The driver's configuration (default: see [`Builder`]); times in milliseconds.
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// Binds the socket and spawns the node's task on the current tokio runtime (call it
    /// inside one).
    ///
    /// Checked first, before anything starts (no socket bound, no task): a runtime
    /// ([`Error::NoRuntime`] outside one) and the peer map against the core's network
    /// ([`Error::Peers`]): ids outside the network, an entry for the node's own id at
    /// another address, another peer at the node's own address, two ids at one address, a
    /// permission algorithm's host with no address, a neighbour with no address.
    pub fn spawn(self) -> Result<Node, Error> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
        let Builder {
            core,
            bind,
            socket,
            mut peers,
            neighbours,
            broadcast,
            config,
            filter,
            store,
            joining,
        } = self;
        let mut core = core;
        let id = core.id();
        let own = match &socket {
            Some(socket) => socket.local_addr()?,
            None => bind,
        };
        let mut config = config.unwrap_or(match P::LINKED {
            true => Config::DEFAULT.with_discovery(discovery::Settings::new(100)),
            false => Config::DEFAULT,
        });
        let named = match P::LINKED && config.discovery.is_none() {
            true => neighbours.as_deref(),
            false => None,
        };
        check_peers(&core, own, &peers, named)?;
        for &host in &joining {
            // Before anything runs: excluded from the start, its report is nobody's news.
            core.handle(Event::Suspect(host))?.for_each(drop);
        }
        peers.remove(&id);
        if let Some(store) = &store {
            // Link epochs above every earlier incarnation's (each used fewer than 2^32).
            let base = u64::from(store.saved().incarnation) << 32;
            config = config.with_epoch_base(config.epoch_base.max(base));
        }
        let socket = match socket {
            Some(socket) => socket,
            None => std::net::UdpSocket::bind(bind)?,
        };
        let broadcast = match broadcast {
            Broadcast::Peers => None,
            Broadcast::Address(addr) => {
                match addr.ip() {
                    IpAddr::V4(ip) if ip.is_multicast() => {
                        socket.join_multicast_v4(&ip, &Ipv4Addr::UNSPECIFIED)?;
                        socket.set_multicast_loop_v4(false)?;
                    }
                    IpAddr::V4(_) => socket.set_broadcast(true)?,
                    IpAddr::V6(ip) if ip.is_multicast() => {
                        socket.join_multicast_v6(&ip, 0)?;
                        socket.set_multicast_loop_v6(false)?;
                    }
                    IpAddr::V6(_) => {}
                }
                Some(addr)
            }
        };
        socket.set_nonblocking(true)?;
        let socket = tokio::net::UdpSocket::from_std(socket)?;
        let local_addr = socket.local_addr()?;
        let start = tokio::time::Instant::now();
        let mut driver = manet_mutex::driver::Driver::new(core, config, 0)?;
        if P::LINKED && config.discovery.is_none() {
            let mut ids = neighbours.unwrap_or_else(|| peers.keys().copied().collect());
            ids.retain(|&peer| peer != id);
            ids.sort();
            ids.dedup();
            for peer in ids {
                if let Err(e) = driver.connect(0, peer) {
                    tracing::warn!(peer = peer.0, error = %e, "cannot link to a configured peer");
                }
            }
        }
        let shared = Arc::new(Shared::new());
        let (tx, rx) = mpsc::unbounded_channel();
        let span = tracing::info_span!("manet_mutex_node", id = id.0, addr = %local_addr);
        let task = Task::new(
            driver,
            socket,
            start,
            peers,
            broadcast,
            filter,
            store,
            rx,
            shared.clone(),
        );
        let handle = runtime.spawn(task.run().instrument(span));
        Ok(Node {
            id,
            local_addr,
            tx,
            shared,
            next: AtomicU64::new(0),
            task: Mutex::new(Some(handle)),
        })
    }
}

/// Whether `addr` may be the node's own address `own` (its socket's, or the bind address,
/// whose unspecified IP or port 0 match any).
fn is_own(own: SocketAddr, addr: SocketAddr) -> bool {
    (own.ip().is_unspecified() || own.ip() == addr.ip())
        && (own.port() == 0 || own.port() == addr.port())
}

/// The peer map's checks ([`Builder::spawn`]), in a fixed order, ids ascending;
/// `neighbours` the ones named to link to at start (token algorithms without discovery).
fn check_peers<P>(
    core: &P,
    own: SocketAddr,
    peers: &HashMap<NodeId, SocketAddr>,
    neighbours: Option<&[NodeId]>,
) -> Result<(), PeerError>
where
    P: Algorithm,
    P::Message: Wire,
{
    let id = core.id();
    let mut sorted: Vec<(NodeId, SocketAddr)> = peers.iter().map(|(&i, &a)| (i, a)).collect();
    sorted.sort();
    // The node's own address as far as it is known: the socket's or bind's where it names
    // an interface, and its own entry's.
    let mut own_addrs = Vec::new();
    if !own.ip().is_unspecified() && own.port() != 0 {
        own_addrs.push(own);
    }
    if let Some(&addr) = peers.get(&id) {
        if !is_own(own, addr) {
            return Err(PeerError::OwnId { id, addr, own });
        }
        own_addrs.push(addr);
    }
    let hosts = core.hosts();
    for &(peer, addr) in &sorted {
        if peer == id {
            continue;
        }
        if !core.knows(peer) {
            return Err(PeerError::NotInNetwork {
                peer,
                hosts: hosts.unwrap_or(0),
            });
        }
        if own_addrs.contains(&addr) {
            return Err(PeerError::OwnAddress { peer, addr });
        }
    }
    let mut by_addr: Vec<(SocketAddr, NodeId)> = sorted
        .iter()
        .filter(|&&(peer, _)| peer != id)
        .map(|&(peer, addr)| (addr, peer))
        .collect();
    by_addr.sort();
    if let Some(pair) = by_addr.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(PeerError::DuplicateAddress {
            first: pair[0].1,
            second: pair[1].1,
            addr: pair[0].0,
        });
    }
    if let Some(hosts) = hosts {
        let missing: Vec<NodeId> = (0..hosts)
            .map(NodeId)
            .filter(|&host| host != id && !peers.contains_key(&host))
            .collect();
        if !missing.is_empty() {
            return Err(PeerError::MissingHosts { hosts: missing });
        }
    }
    if let Some(&peer) = neighbours
        .unwrap_or_default()
        .iter()
        .find(|&&peer| peer != id && !peers.contains_key(&peer))
    {
        return Err(PeerError::NeighbourWithoutAddress { peer });
    }
    Ok(())
}
