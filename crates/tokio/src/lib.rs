//! An async lock on [tokio] over UDP, built on the sans-IO driver of [`manet_mutex`]
//! ([`manet_mutex::driver`]), in the quinn-proto/quinn split: the protocol crate stays sans-IO
//! and `no_std`; this crate owns a socket, a clock and a task.
//!
//! ```no_run
//! use manet_mutex::{ricart_agrawala, NodeId};
//! use manet_mutex_tokio::Node;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(3, 20))?;
//! let core = ricart_agrawala::Node::new(configs[0].clone())?;
//! let node = Node::builder(core)
//!     .bind("10.0.0.1:7000".parse()?)
//!     .peer(NodeId(1), "10.0.0.2:7000".parse()?)
//!     .peer(NodeId(2), "10.0.0.3:7000".parse()?)
//!     .spawn()?;
//! let guard = node.acquire().await?;
//! println!("in the critical section under fence {:?}", guard.fence());
//! drop(guard); // releases
//! node.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! For a node per process that survives `kill -9` and a restart with the same command line,
//! build it with [`Node::with_state_dir`]; `examples/node.rs` is such a program
//! (`cargo run -p manet-mutex-tokio --example node -- --id 0 --peers 0=…,1=…,2=…`).
//!
//! # Design
//!
//! [`Builder::spawn`] starts one task per node. The task owns the
//! [`Driver`](manet_mutex::driver::Driver), a [`tokio::net::UdpSocket`] and the receiving end
//! of a command channel; the [`Node`] handle and every [`Guard`] hold the sending end. The
//! task waits for the first of a command, a datagram and the driver's next timeout, hands it
//! to the driver, then drains the driver's events and transmits (in that order, as the
//! driver's contract asks).
//!
//! **Time**: the driver's time unit is the **millisecond**, counted by a monotonic
//! [`tokio::time::Instant`] from the node's start. Every setting of the driver and the cores
//! (session timeouts, hello intervals, retransmissions, leases) is read in milliseconds.
//!
//! **Addressing**: a static map from [`NodeId`] to [`SocketAddr`] given to the builder
//! ([`Builder::peer`]). A datagram from an address not in the map is counted
//! ([`Stats::unknown_sender`]) and dropped. Discovery's hellos
//! ([`Destination::Broadcast`](manet_mutex::driver::Destination::Broadcast)) go to the
//! [`Builder::broadcast`] address if one is set (an IPv4 broadcast address, or an IPv4 or IPv6
//! multicast group, which the socket joins), else to every configured peer address in turn:
//! the emulation of a broadcast that loopback tests and networks without broadcast use.
//!
//! **Cancel safety**: the future of [`Node::acquire`] withdraws its request when dropped
//! while waiting (a drop guard inside it sends a cancel command), so
//! [`Node::acquire_timeout`] and `tokio::select!` never leave a phantom request behind. A
//! grant that raced with the drop is released by the task. Dropping a [`Guard`] releases the
//! lock without blocking (it sends a command).
//!
//! **Events**: [`Node::events`] subscribes to the driver's informational events (links and
//! neighbours up and down, messages lost with a failed link, recovery reports, suspect
//! anomalies), for an application that prints, logs or reacts to them; the counters of
//! [`Stats`] count them whatever the subscribers do.
//!
//! **Embedder-named links and faults**: [`Node::connect`] and [`Node::close`] form and close a
//! token algorithm's link to a peer (a node configured without discovery, or a planned link
//! flap); [`Builder::neighbours`] names the links formed at start. [`Builder::filter`] sees
//! every datagram in and out and may drop it: loss injection, cut links, firewalls.
//!
//! **Tracing**: each node task runs in a `tracing` span `manet_mutex_node{id}`; it emits
//! events for entries, releases, cancellations, lost locks (`warn`), anomalies and lost
//! messages (`warn`), recovery reports (`info`), links and neighbours (`debug`), dropped
//! datagrams (`debug`), the peers a waiting request waits on (`warn`, backed off), a
//! panicking filter (`error`).
//!
//! **Checked at spawn**: [`Builder::spawn`] checks, before it binds or starts anything, that
//! it runs inside a tokio runtime ([`Error::NoRuntime`]) and that the peer map fits the
//! core's network ([`Error::Peers`], [`PeerError`]): no id outside a permission algorithm's
//! hosts, no entry for the node's own id at another address (one at its own address is
//! skipped, so every node may be given the whole map), no other peer at the node's own
//! address, no two ids at one address, every host of a permission algorithm with an
//! address, every named [neighbour](Builder::neighbours) with one.
//!
//! **Visible while running**: [`Node::peers`] says, per peer, how long it has been silent
//! and whether the waiting request waits on it; while a request waits the task logs
//! (`warn`) "waiting for peer 2, silent 30 s" for each peer it waits on, 1 s after the
//! request and then at doubling intervals up to a minute.
//!
//! **A panicking filter**: a [`Builder::filter`] that panics is caught; the node ends as a
//! crash would (nothing more sent; an `error` trace) and every later call returns
//! [`Error::FilterPanicked`] with the panic's message, not [`Error::Shutdown`].
//!
//! **Restarts**: a node built with [`Node::with_state_dir`] keeps what a restart needs in a
//! directory of its own, so that starting it again with the same configuration and directory
//! (after a crash, `kill -9`, a reboot; the same command line under systemd) is safe: a new
//! incarnation above every earlier one, no second token, the token rounds it made and its
//! majority-mode promises ([`DriverEvent::Persist`]) kept, each stored before what follows it
//! is sent. A node built with [`Node::builder`] keeps nothing: restarted with its first
//! configuration, a token holder comes back with a second token (build the empty-state
//! configuration yourself, as [`Durable`]'s implementations do), and a `Persist` is logged,
//! not stored.
//!
//! **Limits**: one request at a time per node (a second concurrent `acquire` is
//! [`Error::Busy`]).
//! [`Node::shutdown`] releases or withdraws what the node holds and sends what that produces
//! once; it does not wait for acknowledgements, so a token algorithm's token may still be
//! lost with the node (recovery, where configured, regenerates it), and the peers of a
//! permission host wait for it until recovery excludes it: as a crash. To go without leaving
//! anyone waiting, [`Node::leave`] (which dropping every handle does too).
//!
//! **Leaving and joining**: [`Node::leave`] leaves for good (`docs/ALGORITHMS.md`, L1–L4).
//! A host that was not running when the others started joins by starting: a token node
//! needs only a neighbour that hears it (its hellos form the links, and the others learn its
//! address from them); a permission host must be one of the network's hosts with its
//! address in every peer's map, named by the running ones as [joining](Builder::joining) (or
//! excluded by their recovery while it is absent), and its first request counts it again.
//! A host coming back after it left is a restart: give it its state directory.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod builder;
mod filter;
mod restart;
mod store;
mod task;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use manet_mutex::driver::DriverEvent;
use manet_mutex::{driver, session, CsRequest, Fence, NodeId, Status};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;

pub use builder::{Broadcast, Builder};
pub use filter::{Direction, Verdict};
pub use restart::Durable;
pub use store::{Saved, Start, StoreError};

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// This node already has a request waiting or holds the lock (one at a time per node).
    #[error("this node is already acquiring or holding the lock")]
    Busy,
    /// The node's task has ended ([`Node::shutdown`], or every handle dropped).
    #[error("the node is shut down")]
    Shutdown,
    /// [`Node::acquire_timeout`] gave up; the request was withdrawn.
    #[error("timed out waiting for the lock")]
    Timeout,
    /// The core refused the request ([`manet_mutex::Error`], e.g. a bad number of resources).
    #[error("the protocol core refused: {0}")]
    Core(#[from] manet_mutex::Error),
    /// The link session refused a link ([`Node::connect`]: e.g. more peers than
    /// [`session::Settings::max_peers`]).
    #[error("link: {0}")]
    Link(#[from] session::SessionError),
    /// The driver could not be built from its configuration.
    #[error("driver configuration: {0}")]
    Driver(#[from] driver::DriverError),
    /// The socket could not be bound or configured.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// The state directory could not be used ([`Node::with_state_dir`]); nothing was started.
    #[error("durable state: {0}")]
    Store(#[from] StoreError),
    /// Storing the node's state failed while it ran (the reason): the node stopped as a
    /// crash would, sending nothing more (what it had to store first was never sent). Every
    /// later call returns it instead of [`Error::Shutdown`]; started again with the same
    /// directory, the node takes its last stored state.
    #[error("storing the node's state failed, the node stopped: {0}")]
    StoreFailed(String),
    /// [`Builder::spawn`] found the peer map inconsistent with the core's network
    /// ([`PeerError`] names the problem); nothing was started (no socket bound, no task).
    #[error("peer map: {0}")]
    Peers(#[from] PeerError),
    /// [`Builder::spawn`] was called outside a tokio runtime (it spawns the node's task on
    /// the current one); nothing was started.
    #[error("spawn called outside a tokio runtime")]
    NoRuntime,
    /// The [datagram filter](Builder::filter) panicked (the panic's message): the node's
    /// task caught it and ended as a crash would (nothing more is sent; the waiting request,
    /// if any, ends with this error, a held guard's [`Guard::lost`] says
    /// [`Lost::Shutdown`]). Every later call returns it instead of [`Error::Shutdown`].
    #[error("the datagram filter panicked: {0}")]
    FilterPanicked(String),
    /// The node is leaving or has left ([`Node::leave`], or every handle dropped): it takes
    /// no request any more.
    #[error("the node has left")]
    Left,
    /// [`Node::leave`] gave up waiting for the core to say it left ([`Report::Left`]
    /// within [`LEAVE_WAIT`]: a token node that could hand its tokens to nobody, or whose
    /// neighbours never acknowledged them); the node stopped anyway, as a crash would, and
    /// the others' recovery (where configured) takes over what it held.
    ///
    /// [`Report::Left`]: manet_mutex::Report::Left
    #[error("the node stopped before its leave completed (nothing acknowledged its hand-over)")]
    LeaveIncomplete,
}

/// How long [`Node::leave`] waits for the core's [`Report::Left`](manet_mutex::Report::Left)
/// before it stops the node anyway ([`Error::LeaveIncomplete`]).
pub const LEAVE_WAIT: Duration = Duration::from_secs(10);

/// How long a node that left keeps running before its task ends: it answers the requests of
/// peers that missed its departure (a permission host's LEAVE lost: it tells them again) and
/// forwards what reaches it (a token node).
pub const LEAVE_LINGER: Duration = Duration::from_secs(1);

/// What is wrong with a peer map ([`Error::Peers`], checked by [`Builder::spawn`] against
/// the core's network before anything starts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// A peer id the core can never hear from: outside a permission core's hosts
    /// (`0..hosts`).
    #[error("peer {peer} is not a host of the network (0..{hosts})", peer = .peer.0)]
    NotInNetwork {
        /// The id.
        peer: NodeId,
        /// The network's hosts, `0..hosts`.
        hosts: u32,
    },
    /// An entry for the node's own id at an address that is not the node's own (the socket's,
    /// or [`Builder::bind`]'s where it names an interface or a port): the map says this node
    /// is elsewhere. (An entry at the node's own address is allowed and skipped: a whole
    /// network's map can be given to each of its nodes.)
    #[error("the entry for this node's own id {id} names {addr}, not this node's address {own}", id = .id.0)]
    OwnId {
        /// This node's id.
        id: NodeId,
        /// The address its entry names.
        addr: SocketAddr,
        /// This node's address (the bound socket's, or the bind address).
        own: SocketAddr,
    },
    /// Another peer's entry names this node's own address: its datagrams would come back
    /// here, and this node's would be taken as that peer's.
    #[error("peer {peer} has this node's own address {addr}", peer = .peer.0)]
    OwnAddress {
        /// The peer.
        peer: NodeId,
        /// The address.
        addr: SocketAddr,
    },
    /// Two ids at one address: a datagram from it could not be told apart.
    #[error("peers {first} and {second} share the address {addr}", first = .first.0, second = .second.0)]
    DuplicateAddress {
        /// The lower id.
        first: NodeId,
        /// The higher id.
        second: NodeId,
        /// The address.
        addr: SocketAddr,
    },
    /// Hosts of a permission algorithm's network with no address (every request waits for
    /// every host's REPLY: with one unreachable, no request is ever granted without
    /// recovery), in id order.
    #[error("hosts without an address: {hosts:?}")]
    MissingHosts {
        /// The hosts.
        hosts: Vec<NodeId>,
    },
    /// A [neighbour](Builder::neighbours) with no address.
    #[error("neighbour {peer} has no address", peer = .peer.0)]
    NeighbourWithoutAddress {
        /// The neighbour.
        peer: NodeId,
    },
}

/// One peer as the node sees it ([`Node::peers`]): when it was last heard, and whether the
/// waiting request waits on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PeerState {
    /// The peer's id.
    pub id: NodeId,
    /// Its address in the peer map.
    pub addr: SocketAddr,
    /// How long since a datagram from its address last reached the node (one the
    /// [filter](Builder::filter) kept), or since the node started if it was never heard.
    pub silent: Duration,
    /// Whether a datagram from it was ever kept.
    pub heard: bool,
    /// Datagrams from it kept (after the filter).
    pub datagrams: u64,
    /// Whether this node's waiting request waits on it
    /// ([`Algorithm::waits_on`](driver::Algorithm::waits_on): a REPLY outstanding, or the
    /// token request sent its way). `false` while no request waits.
    pub awaited: bool,
}

/// Why a held lock is no longer safe to act under ([`Guard::lost`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Lost {
    /// The entry's lease ended ([`DriverEvent::LeaseExpired`]):
    /// others may be admitted; stop acting on the resource under this fence, then drop the
    /// guard.
    LeaseExpired,
    /// The node shut down while the guard was held.
    Shutdown,
}

/// What a node counted ([`Node::stats`]): the lock's metrics, the transport's, and the
/// driver's own ([`driver::Stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Requests handed to the core.
    pub requested: u64,
    /// Entries into the critical section (grants).
    pub entered: u64,
    /// Releases (guards dropped, grants nobody took, shutdown).
    pub released: u64,
    /// Requests withdrawn (futures dropped while waiting, timeouts, shutdown).
    pub cancelled: u64,
    /// [`Node::acquire_timeout`] calls that timed out.
    pub timeouts: u64,
    /// Held locks lost ([`Lost::LeaseExpired`]).
    pub lost: u64,
    /// Milliseconds spent waiting, from request to entry, summed over entries.
    pub wait_ms: u64,
    /// Milliseconds spent holding, from entry to release, summed over releases.
    pub hold_ms: u64,
    /// Recovery reports: tokens this node made again, concluding them lost
    /// ([`Report::TokenRegenerated`](manet_mutex::Report::TokenRegenerated)).
    pub regenerated: u64,
    /// Recovery reports: peers this node stopped waiting for
    /// ([`Report::PeerExcluded`](manet_mutex::Report::PeerExcluded)).
    pub excluded: u64,
    /// Recovery reports: older tokens this node destroyed
    /// ([`Report::TokenDestroyed`](manet_mutex::Report::TokenDestroyed)).
    pub destroyed: u64,
    /// Recovery reports: peers this node counts again
    /// ([`Report::PeerReadmitted`](manet_mutex::Report::PeerReadmitted)).
    pub readmitted: u64,
    /// Links that failed with messages unacknowledged
    /// ([`DriverEvent::Lost`] events).
    pub lost_links: u64,
    /// The messages those links gave up, summed.
    pub lost_messages: u64,
    /// Of those, tokens or resources (possibly lost), summed.
    pub lost_precious: u64,
    /// Datagrams read from the socket (before the filter).
    pub datagrams_received: u64,
    /// Datagrams handed to the socket (after the filter; one per address for an emulated
    /// broadcast).
    pub datagrams_sent: u64,
    /// Datagrams received that the [filter](Builder::filter) dropped.
    pub filtered_in: u64,
    /// Datagrams to send that the [filter](Builder::filter) dropped.
    pub filtered_out: u64,
    /// Datagrams from an address in no peer's entry: dropped.
    pub unknown_sender: u64,
    /// Datagrams for a peer without an address: dropped.
    pub no_address: u64,
    /// Datagrams the socket failed to send.
    pub send_errors: u64,
    /// Errors the socket returned on receive.
    pub recv_errors: u64,
    /// The driver's counters (datagrams in and out, drops by cause, messages sent,
    /// retransmissions, anomalies).
    pub driver: driver::Stats,
    /// The link sessions' counters (token algorithms: hellos, links formed and abandoned,
    /// retransmissions); `None` for the permission algorithms.
    pub session: Option<session::Stats>,
    /// The core's status ([`Protocol::status`](manet_mutex::Protocol::status)) after the
    /// last input; `None` until the task first ran.
    pub status: Option<Status>,
    /// Storing the node's state failed ([`Error::StoreFailed`]): the node stopped.
    pub store_failed: bool,
}

/// How many informational events a subscriber of [`Node::events`] may fall behind.
pub const EVENTS_CAPACITY: usize = 1024;

/// What the task and the handles share.
#[derive(Debug)]
struct Shared {
    stats: Mutex<Stats>,
    timeouts: AtomicU64,
    events: broadcast::Sender<DriverEvent>,
    /// Set (once) when the task ended as a crash would: why.
    failure: OnceLock<Failure>,
}

/// Why a node's task ended as a crash would (nothing more sent).
#[derive(Debug, Clone)]
enum Failure {
    /// The datagram filter panicked: the panic's message.
    Filter(String),
    /// Storing the node's state failed: the reason.
    Store(String),
}

impl Shared {
    fn new() -> Self {
        Shared {
            stats: Mutex::default(),
            timeouts: AtomicU64::new(0),
            events: broadcast::Sender::new(EVENTS_CAPACITY),
            failure: OnceLock::new(),
        }
    }

    /// Why the task is gone: [`Error::FilterPanicked`] if the filter panicked,
    /// [`Error::StoreFailed`] if storing failed, else [`Error::Shutdown`].
    fn ended(&self) -> Error {
        match self.failure.get() {
            Some(Failure::Filter(message)) => Error::FilterPanicked(message.clone()),
            Some(Failure::Store(reason)) => Error::StoreFailed(reason.clone()),
            None => Error::Shutdown,
        }
    }
}

/// What the task is told.
#[derive(Debug)]
enum Command {
    Acquire {
        id: u64,
        request: CsRequest,
        reply: oneshot::Sender<Result<Grant, Error>>,
    },
    Cancel {
        id: u64,
    },
    Release {
        id: u64,
    },
    Refused {
        id: u64,
        newest: Fence,
        reply: oneshot::Sender<Result<(), Error>>,
    },
    Connect {
        peer: NodeId,
        reply: oneshot::Sender<Result<(), Error>>,
    },
    Close {
        peer: NodeId,
    },
    Peers {
        reply: oneshot::Sender<Vec<PeerState>>,
    },
    Leave {
        reply: oneshot::Sender<Result<(), Error>>,
    },
    Shutdown,
}

/// An entry, from the task to the waiting future.
#[derive(Debug)]
struct Grant {
    fence: Fence,
    resources: u32,
    lost: watch::Receiver<Option<Lost>>,
}

/// A node of the lock: a handle on its task ([`Node::builder`] to make one).
///
/// Dropping the handle does not stop the task while guards live. When the handle and every
/// guard are gone, the node leaves as [`Node::leave`] does, in the background (the task
/// ends after it left, or with the runtime); [`Node::shutdown`] stops it at once instead.
#[derive(Debug)]
pub struct Node {
    id: NodeId,
    local_addr: SocketAddr,
    tx: mpsc::UnboundedSender<Command>,
    shared: Arc<Shared>,
    next: AtomicU64,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Node {
    /// A builder for a node running `core` (its id is the core's): see [`Builder`] for the
    /// settings and their defaults.
    pub fn builder<P>(core: P) -> Builder<P>
    where
        P: driver::Algorithm + Send + 'static,
        P::Message: manet_mutex::codec::Wire + Send,
    {
        Builder::new(core)
    }

    /// A builder for a node that keeps its durable state in `dir` (created if missing), so
    /// that starting it again with the same `config` and directory — after a crash, a
    /// `kill -9`, a reboot — is safe. `config` is the node's configuration for the network's
    /// first start; how the node starts is read from the directory ([`Start`]):
    ///
    /// - **First start** (no state file): `config` as given.
    /// - **Restart**: the empty-state configuration the failure model asks for, from what the
    ///   last run stored. Every algorithm runs under a new incarnation, above every earlier
    ///   one (request numbers, fences and link epochs start above the old ones: C5, C6).
    ///   KRL and prioritized restart with no token (it lives on elsewhere, or recovery makes
    ///   it again: F14), make only token generations of rounds above the ones they made
    ///   (F4), and keep their majority-mode promises (F9), so no token is duplicated and no
    ///   promise is broken.
    /// - **State lost** (a state file that fails its check; create an empty `state` file to
    ///   say the disk was replaced): the empty state, with nothing kept. A token node then
    ///   makes no token id again before it has heard of it, and never promises.
    ///
    /// While the node runs, every majority-mode promise
    /// ([`DriverEvent::Persist`]) and every round of a generation it makes is stored — written,
    /// flushed and renamed into place — before anything that follows it is sent; if storing
    /// fails the node stops at once, sending nothing more ([`Error::StoreFailed`]). The directory
    /// is locked while the node runs: a second process with the same directory is refused
    /// ([`StoreError::Locked`]), as is a directory of another node or algorithm.
    ///
    /// What it does not do: a node whose *whole directory* was lost cannot be told from a
    /// first start. Its incarnation still starts above every earlier one (incarnations are at
    /// least the seconds since 2024, if the clock did not go back), but an initial token
    /// holder comes back with its initial token copy: the live copy's first beacon moves it
    /// on within a beacon gap (F14), and a fence-checking resource refuses its fences
    /// meanwhile. The state is stored with blocking writes on the node's task (a few per
    /// restart and per token regeneration).
    pub fn with_state_dir<C>(
        config: C,
        dir: impl AsRef<std::path::Path>,
    ) -> Result<Builder<C::Core>, Error>
    where
        C: Durable,
    {
        let node = config.node();
        let (store, start) =
            store::Store::open(dir.as_ref(), node, C::ALGORITHM, C::NUMBERS_FENCES)?;
        let core = config.build(&start, store.saved().incarnation)?;
        tracing::info!(
            node = node.0,
            incarnation = store.saved().incarnation,
            ?start,
            "state directory opened"
        );
        Ok(Builder::new(core).with_store(store))
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The address the node's socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Waits for the lock (one resource) and returns its guard.
    ///
    /// Cancel safe: dropping the future while it waits withdraws the request.
    pub async fn acquire(&self) -> Result<Guard, Error> {
        self.acquire_with(CsRequest::ONE).await
    }

    /// [`Node::acquire`] giving up after `timeout`: then the request is withdrawn and the
    /// result is [`Error::Timeout`].
    pub async fn acquire_timeout(&self, timeout: Duration) -> Result<Guard, Error> {
        match tokio::time::timeout(timeout, self.acquire()).await {
            Ok(result) => result,
            Err(_) => {
                self.shared.timeouts.fetch_add(1, Ordering::Relaxed);
                Err(Error::Timeout)
            }
        }
    }

    /// Waits for the lock with `request` (resources and priority, for the prioritized
    /// h-out-of-k algorithm; the others take one resource).
    ///
    /// Cancel safe, as [`Node::acquire`].
    pub async fn acquire_with(&self, request: CsRequest) -> Result<Guard, Error> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (reply, granted) = oneshot::channel();
        self.tx
            .send(Command::Acquire { id, request, reply })
            .map_err(|_| self.shared.ended())?;
        let mut withdraw = Withdraw {
            tx: &self.tx,
            id,
            armed: true,
        };
        let grant = granted.await;
        withdraw.armed = false;
        let grant = grant.map_err(|_| self.shared.ended())??;
        Ok(Guard {
            id,
            fence: grant.fence,
            resources: grant.resources,
            lost: grant.lost,
            tx: self.tx.clone(),
            shared: self.shared.clone(),
        })
    }

    /// A subscription to the driver's informational events, from now on:
    /// [`DriverEvent::Lost`], [`Report`](DriverEvent::Report),
    /// [`LinkUp`](DriverEvent::LinkUp)/[`LinkDown`](DriverEvent::LinkDown),
    /// [`NeighbourUp`](DriverEvent::NeighbourUp)/[`NeighbourDown`](DriverEvent::NeighbourDown)
    /// and [`Anomaly`](DriverEvent::Anomaly), in the order the driver handed them out. The
    /// events a guard carries (entries, lease ends) come through [`Node::acquire`] and
    /// [`Guard::lost`] instead. Earlier events are not replayed: on a current-thread
    /// runtime a subscription made before the first `.await` after [`Builder::spawn`] sees
    /// them all (the task has not run yet); on a multi-thread one the task may have started.
    ///
    /// The node never waits for a subscriber: one that falls more than
    /// [`EVENTS_CAPACITY`] events behind loses the oldest, and its next `recv` returns
    /// [`RecvError::Lagged`](broadcast::error::RecvError::Lagged) with how many it missed
    /// (then the oldest kept). [`Stats`] counts losses and reports whatever subscribers miss.
    /// The driver's own queue drops informational events beyond
    /// [`Config::max_queued`](driver::Config::max_queued)
    /// ([`driver::Stats::events_dropped`]); the task drains it after every input.
    pub fn events(&self) -> broadcast::Receiver<DriverEvent> {
        self.shared.events.subscribe()
    }

    /// Forms the link to `peer` and keeps it (a token algorithm's
    /// [`Driver::connect`](driver::Driver::connect)): for a node that names its neighbours
    /// itself (no discovery, [`Builder::neighbours`]), or that wants a link again after
    /// [`Node::close`]. The link is up when the peer answers
    /// ([`DriverEvent::LinkUp`] on [`Node::events`]). The permission algorithms need no
    /// link: nothing happens. [`Error::Link`] if the session refuses it (more peers than it
    /// has room for).
    pub async fn connect(&self, peer: NodeId) -> Result<(), Error> {
        let (reply, done) = oneshot::channel();
        self.tx
            .send(Command::Connect { peer, reply })
            .map_err(|_| self.shared.ended())?;
        done.await.map_err(|_| self.shared.ended())?
    }

    /// Closes the link to `peer` (a token algorithm's
    /// [`Driver::close`](driver::Driver::close)): a planned link flap or a neighbour the
    /// embedder no longer wants. Nothing is lost: the session delivers what it has in flight
    /// first, and the core hears [`DriverEvent::LinkDown`] once it did. The link stays down
    /// until [`Node::connect`] (or discovery, if it runs, finds the peer again). Nothing for
    /// the permission algorithms. Does not wait; [`Error::Shutdown`] if the task has ended.
    pub fn close(&self, peer: NodeId) -> Result<(), Error> {
        self.tx
            .send(Command::Close { peer })
            .map_err(|_| self.shared.ended())
    }

    /// Every peer of the map as the node sees it now, in id order: when it was last heard
    /// and whether the waiting request waits on it. While a request waits, the node also
    /// logs (`warn`) the peers it waits on and how long they have been silent, 1 s after the
    /// request and then at doubling intervals up to a minute ("waiting for a peer", with
    /// `peer`, `silent_ms` and `waited_ms`). [`Error::Shutdown`] (or
    /// [`Error::FilterPanicked`]) once the task has ended.
    pub async fn peers(&self) -> Result<Vec<PeerState>, Error> {
        let (reply, done) = oneshot::channel();
        self.tx
            .send(Command::Peers { reply })
            .map_err(|_| self.shared.ended())?;
        done.await.map_err(|_| self.shared.ended())
    }

    /// What the node counted so far (updated by the task after every input).
    pub fn stats(&self) -> Stats {
        let mut stats = *self.shared.stats.lock().unwrap_or_else(|e| e.into_inner());
        stats.timeouts = self.shared.timeouts.load(Ordering::Relaxed);
        stats
    }

    /// Leaves the network for good, so that nobody waits for this node again, and stops it:
    /// a waiting request is withdrawn (its `acquire` returns [`Error::Left`]), a held lock
    /// released (its guard's [`Guard::lost`] says [`Lost::Shutdown`]); then the core leaves
    /// ([`Event::Leave`](manet_mutex::Event::Leave), `docs/ALGORITHMS.md` L1–L4): a
    /// Ricart–Agrawala host tells every host it is gone, a look-ahead host disconnects, a
    /// token node hands its tokens to a neighbour and waits for their acknowledgement. Once
    /// the core reports it left, the node lingers [`LEAVE_LINGER`] (answering whoever missed
    /// the news), then its task ends. Returns when the task has ended.
    ///
    /// [`Error::LeaveIncomplete`] if the core did not report it left within [`LEAVE_WAIT`]
    /// (the node stopped anyway); [`Error::Core`] if the core refused to leave (the node
    /// keeps running); [`Error::Shutdown`] (or the failure) if the task had ended already.
    /// Started again later, the node is a restart: build it with [`Node::with_state_dir`]
    /// (or a new incarnation), as after a crash.
    pub async fn leave(&self) -> Result<(), Error> {
        let (reply, done) = oneshot::channel();
        self.tx
            .send(Command::Leave { reply })
            .map_err(|_| self.shared.ended())?;
        let outcome = done.await.map_err(|_| self.shared.ended())?;
        if let Err(Error::Core(e)) = outcome {
            return Err(Error::Core(e));
        }
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            let _ = task.await;
        }
        outcome
    }

    /// Stops the node: a waiting request is withdrawn (its `acquire` returns
    /// [`Error::Shutdown`]), a held lock released (its guard's [`Guard::lost`] says
    /// [`Lost::Shutdown`]), the datagrams that produces sent once, the task ended and the
    /// socket closed. Returns when the task has ended (a second call returns at once).
    /// Afterwards every `acquire` is [`Error::Shutdown`].
    pub async fn shutdown(&self) {
        let _ = self.tx.send(Command::Shutdown);
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// Withdraws a request whose future is dropped before its answer.
struct Withdraw<'a> {
    tx: &'a mpsc::UnboundedSender<Command>,
    id: u64,
    armed: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.tx.send(Command::Cancel { id: self.id });
        }
    }
}

/// The lock, held: act on the protected resource under [`Guard::fence`]. Dropping it releases
/// the lock (without blocking: a command to the node's task).
#[derive(Debug)]
#[must_use = "dropping the guard releases the lock at once"]
pub struct Guard {
    id: u64,
    fence: Fence,
    resources: u32,
    lost: watch::Receiver<Option<Lost>>,
    tx: mpsc::UnboundedSender<Command>,
    shared: Arc<Shared>,
}

impl Guard {
    /// The entry's fencing token: hand it to the protected resource with every operation,
    /// so that it refuses a holder it must not admit ([`manet_mutex::fence::Fences`] keeps
    /// what it needs). What the resource checks depends on the algorithm:
    ///
    /// - one holder at a time per lane (KRL/KRLF, each token its lane; look-ahead;
    ///   Ricart–Agrawala; prioritized with `k = 1`): refuse any fence not above the highest
    ///   it admitted in the lane ([`Fences::new`](manet_mutex::fence::Fences::new));
    /// - prioritized h-out-of-k with concurrent holders (`k > 1`, requests of fewer than
    ///   `k`): refuse any fence it has seen before, each fence new, not highest-so-far
    ///   ([`Fences::distinct`](manet_mutex::fence::Fences::distinct)). The token issues the
    ///   fences in grant order, but holders granted concurrently reach the resource in any
    ///   order, so "above the highest" would refuse an earlier, legitimate grant.
    pub fn fence(&self) -> Fence {
        self.fence
    }

    /// The resources granted (1, or the request's `h` for the prioritized algorithm).
    pub fn resources(&self) -> u32 {
        self.resources
    }

    /// Whether the lock was lost already, and why.
    pub fn is_lost(&self) -> Option<Lost> {
        *self.lost.borrow()
    }

    /// Waits until the lock is lost: its lease ended, or the node shut down. Pending for as
    /// long as the lock is held safely (use it in a `tokio::select!` beside the work).
    pub async fn lost(&self) -> Lost {
        let mut lost = self.lost.clone();
        let reason = match lost.wait_for(Option::is_some).await {
            Ok(reason) => reason.unwrap_or(Lost::Shutdown),
            Err(_) => Lost::Shutdown,
        };
        reason
    }

    /// The protected resource refused this guard's fence, having admitted `newest` (a
    /// later holder, e.g. of a token made again): tells the core
    /// ([`Driver::refused`](driver::Driver::refused), [`Event::Refused`](manet_mutex::Event::Refused)),
    /// whose recovery moves the token it holds above `newest`'s generation
    /// ([`Report::TokenRenumbered`](manet_mutex::Report::TokenRenumbered) on
    /// [`Node::events`]), so that later entries are admitted. The refused entry stays
    /// refused: stop acting on the resource under this fence, drop the guard, ask again.
    /// [`Error::Core`] if the core refuses the event (an algorithm without recovery, fences
    /// of another unit, `newest` not later); [`Error::Shutdown`] once the node has shut
    /// down.
    pub async fn refused(&self, newest: Fence) -> Result<(), Error> {
        let (reply, done) = oneshot::channel();
        self.tx
            .send(Command::Refused {
                id: self.id,
                newest,
                reply,
            })
            .map_err(|_| self.shared.ended())?;
        done.await.map_err(|_| self.shared.ended())?
    }

    /// Releases the lock (the same as dropping the guard).
    pub fn release(self) {}
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.tx.send(Command::Release { id: self.id });
    }
}
