//! The driver's configuration, its errors and its counters.

use crate::discovery::{self, DiscoveryError};
use crate::session::{self, SessionError};

/// How a [`Driver`](super::Driver) runs its core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The link sessions' settings (token algorithms). Default
    /// [`session::Settings::DEFAULT`].
    pub session: session::Settings,
    /// Neighbour discovery, if any: hellos broadcast, and for the token algorithms every
    /// neighbour found is [`Session::connect`](crate::session::Session::connect)ed and every
    /// one lost `close`d. Without it the embedder names the neighbours
    /// ([`Driver::connect`](super::Driver::connect)). Default none.
    pub discovery: Option<discovery::Settings>,
    /// The sessions' epochs start above this ([`Session::with_epoch_base`](crate::session::Session::with_epoch_base)):
    /// a node that restarts must start above every epoch it used. Default 0.
    pub epoch_base: u64,
    /// The most informational events, and the most direct datagrams (permission
    /// algorithms), that wait to be polled; beyond it the oldest datagram, or the new event,
    /// is dropped and counted. Default 1024.
    pub max_queued: usize,
    /// The pre-shared key that authenticates every datagram (feature `auth`), if any: sent
    /// ones carry its tag, received ones without a right tag are dropped
    /// ([`Stats::dropped_auth`]). Every node of a network must agree. Default none.
    #[cfg(feature = "auth")]
    pub key: Option<super::AuthKey>,
}

impl Config {
    /// The defaults: [`session::Settings::DEFAULT`], no discovery, epochs from 0, 1024
    /// queued.
    pub const DEFAULT: Config = Config {
        session: session::Settings::DEFAULT,
        discovery: None,
        epoch_base: 0,
        max_queued: 1024,
        #[cfg(feature = "auth")]
        key: None,
    };

    /// With these session settings.
    pub const fn with_session(mut self, settings: session::Settings) -> Self {
        self.session = settings;
        self
    }

    /// With neighbour discovery.
    pub const fn with_discovery(mut self, settings: discovery::Settings) -> Self {
        self.discovery = Some(settings);
        self
    }

    /// With epochs above `base`.
    pub const fn with_epoch_base(mut self, base: u64) -> Self {
        self.epoch_base = base;
        self
    }

    /// With at most `max` queued (at least 1).
    pub const fn with_max_queued(mut self, max: usize) -> Self {
        self.max_queued = if max == 0 { 1 } else { max };
        self
    }
}

#[cfg(feature = "auth")]
impl Config {
    /// With every datagram authenticated by `key`.
    pub const fn with_key(mut self, key: super::AuthKey) -> Self {
        self.key = Some(key);
        self
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

/// Why a driver cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// The session settings are unusable.
    #[error("session: {0}")]
    Session(#[from] SessionError),
    /// The discovery settings are unusable.
    #[error("discovery: {0}")]
    Discovery(#[from] DiscoveryError),
}

/// What the driver counted. Every datagram that comes in is counted once in `datagrams_in`
/// and, if dropped before reaching discovery, the session or the core, once in one of the
/// `dropped_*` counters; what those three drop is in their own stats
/// ([`Driver::session_stats`](super::Driver::session_stats),
/// [`Driver::discovery_stats`](super::Driver::discovery_stats)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Stats {
    /// Datagrams handed to [`handle_datagram`](super::Driver::handle_datagram).
    pub datagrams_in: u64,
    /// Datagrams handed out by [`poll_transmit`](super::Driver::poll_transmit).
    pub datagrams_out: u64,
    /// Messages the core sent (its `Action::Send`s): the algorithm's own messages, as the
    /// papers and the simulators count them; no session frame (acknowledgement, keepalive,
    /// retransmission), hello or authentication tag is one.
    pub messages_sent: u64,
    /// Dropped: the frame check failed (corruption).
    pub dropped_checksum: u64,
    /// Dropped: the authentication tag failed (feature `auth`, with a key): a forgery, a
    /// frame of another key, or one corrupted in the tag (a corruption elsewhere is caught by
    /// the frame check first, and counted in `dropped_checksum`).
    pub dropped_auth: u64,
    /// Dropped: no frame of any format the driver speaks (unknown first byte, too short, too
    /// long, malformed fields).
    pub dropped_malformed: u64,
    /// Dropped: from no peer of this node (the node's own id, a permission algorithm's id
    /// outside its hosts), or naming another sender than the transport says, or another
    /// receiver than this node.
    pub dropped_unknown_peer: u64,
    /// Dropped: a frame this algorithm does not take (a session frame for a permission core,
    /// a direct message for a token core).
    pub dropped_unexpected: u64,
    /// Direct datagrams (permission algorithms) dropped because `max_queued` waited.
    pub transmits_dropped: u64,
    /// Informational events dropped because `max_queued` waited.
    pub events_dropped: u64,
    /// Data frames the sessions sent again (their
    /// [`retransmitted`](crate::session::Stats::retransmitted)).
    pub retransmitted: u64,
    /// Anomalies the core reported that are noise for its algorithm.
    pub noise: u64,
    /// Anomalies the core reported that are suspect (each also a
    /// [`DriverEvent::Anomaly`](super::DriverEvent::Anomaly)).
    pub suspect: u64,
    /// Events the core refused that the driver fed it (a driver bug if ever above 0), and
    /// sends the session refused.
    pub core_errors: u64,
}
