//! What the nodes of a network agree on for discovery, the errors of local misuse, and the
//! counters.

use super::hello::MAX_HEARD;

/// Discovery settings: the hello schedule, the hysteresis, the table size and the jitter's
/// seed. Built with [`Settings::new`] (or [`Settings::DEFAULT`]) and the `with_*` methods;
/// checked by [`Settings::validate`] (and [`Discovery::new`](super::Discovery::new)).
///
/// Every node of a network should use the same `hello_interval`, `jitter` and
/// `missed_hellos`: a node's hold time assumes its peers say hello at least once every
/// `hello_interval` (the guarantees in the [module docs](super#what-is-guaranteed) are stated
/// for one setting network-wide).
///
/// | field | meaning | default |
/// | --- | --- | --- |
/// | [`hello_interval`](Settings::hello_interval) | the longest time between two hellos of a node | 100 |
/// | [`jitter`](Settings::jitter) | each wait is shortened by a pseudo-random amount in `0..=jitter` | 25 |
/// | [`up_after`](Settings::up_after) | consecutive hellos heard before a peer is heard | 2 |
/// | [`missed_hellos`](Settings::missed_hellos) | hello intervals of silence before a peer is no longer heard | 4 |
/// | [`max_neighbours`](Settings::max_neighbours) | peers in the table | 64 ([`MAX_HEARD`]) |
/// | [`seed`](Settings::seed) | the jitter's seed (mixed with the node's id) | 0 |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Settings {
    /// The longest time between two hellos of a node, in the embedder's time unit, at
    /// least 1. Default 100 (ms: ten hellos a second, a quarter of the link session's
    /// default liveness timeout, so that with the default hold time a silent neighbour is
    /// reported down when the session would declare its link failed, 400 ms).
    pub hello_interval: u64,
    /// Each wait between two hellos is `hello_interval` minus a pseudo-random amount in
    /// `0..=jitter` (as RFC 5148 advises: subtracted, so a node never waits longer than
    /// `hello_interval`), and the first hello goes out after a pseudo-random wait in
    /// `0..=jitter`. Keeps neighbours that started together from saying hello at the same
    /// instants forever. Below `hello_interval`. Default a quarter of `hello_interval` (25).
    pub jitter: u64,
    /// How many hellos of a peer with consecutive sequence numbers this node must receive
    /// before it *hears* the peer (and lists it in its own hellos): the upward hysteresis. A
    /// lost hello starts the count over. At least 1. Default 2 (one lost hello in two keeps a
    /// poor link from coming up).
    pub up_after: u32,
    /// A peer whose last accepted hello is older than `missed_hellos * hello_interval` (the
    /// [hold time](Settings::hold_time)) is no longer heard, and dropped from the table: the
    /// downward hysteresis. It takes at least `missed_hellos` consecutive lost hellos to lose
    /// a peer (more with jitter: the [module docs](super#what-is-guaranteed) give the count).
    /// At least 2, so that a hello delayed up to `hello_interval` does not lose a live
    /// peer. Default 4 (400 with the default interval: the link session's default liveness
    /// timeout).
    pub missed_hellos: u32,
    /// Peers the table holds, `1..=`[`MAX_HEARD`], so that every peer this node hears fits in
    /// its hello. A hello from a new peer when the table is full evicts the peer heard least
    /// recently among those not heard yet (still counting up to `up_after`), if any; otherwise
    /// it is refused ([`Stats::refused`]). Default [`MAX_HEARD`] (64).
    pub max_neighbours: u32,
    /// The seed of the jitter's pseudo-random sequence. The node's id is mixed in, so nodes
    /// with the same seed still say hello at different times; give a node a different seed
    /// on every start if its restarts should not repeat its schedule. Default 0.
    pub seed: u64,
}

impl Settings {
    /// Hellos every 100 time units at most (ms: ten a second), 25 of jitter, a peer heard
    /// after 2 consecutive hellos and lost after 4 intervals of silence (400), 64 neighbours,
    /// seed 0. Equal to `Settings::new(100)` and to [`Settings::default`].
    pub const DEFAULT: Settings = Settings::new(100);

    /// Hellos at most every `hello_interval`, jitter a quarter of it, heard after 2,
    /// lost after 4 intervals of silence, [`MAX_HEARD`] neighbours, seed 0.
    pub const fn new(hello_interval: u64) -> Self {
        Settings {
            hello_interval,
            jitter: hello_interval / 4,
            up_after: 2,
            missed_hellos: 4,
            max_neighbours: MAX_HEARD as u32,
            seed: 0,
        }
    }

    /// With each wait shortened by up to `jitter` ([`Settings::jitter`]; 0 turns it off).
    pub const fn with_jitter(self, jitter: u64) -> Self {
        Settings { jitter, ..self }
    }

    /// With a peer heard after `hellos` consecutive hellos ([`Settings::up_after`]).
    pub const fn with_up_after(self, hellos: u32) -> Self {
        Settings {
            up_after: hellos,
            ..self
        }
    }

    /// With a peer lost after `hellos` intervals of silence ([`Settings::missed_hellos`]).
    pub const fn with_missed_hellos(self, hellos: u32) -> Self {
        Settings {
            missed_hellos: hellos,
            ..self
        }
    }

    /// With room for `peers` peers ([`Settings::max_neighbours`]).
    pub const fn with_max_neighbours(self, peers: u32) -> Self {
        Settings {
            max_neighbours: peers,
            ..self
        }
    }

    /// With the jitter's seed `seed` ([`Settings::seed`]).
    pub const fn with_seed(self, seed: u64) -> Self {
        Settings { seed, ..self }
    }

    /// The hold time: `missed_hellos * hello_interval` (saturating). A peer silent for longer
    /// is no longer heard.
    pub const fn hold_time(&self) -> u64 {
        self.hello_interval
            .saturating_mul(self.missed_hellos as u64)
    }

    /// Whether the settings are usable; the first problem found otherwise.
    pub fn validate(&self) -> Result<(), DiscoveryError> {
        let problem = if self.hello_interval == 0 {
            "hello_interval must be at least 1"
        } else if self.jitter >= self.hello_interval {
            "jitter must be below hello_interval (a node must say hello again after a positive wait)"
        } else if self.up_after == 0 {
            "up_after must be at least 1"
        } else if self.missed_hellos < 2 {
            "missed_hellos must be at least 2 (one late hello must not lose a live peer)"
        } else if self.max_neighbours == 0 || self.max_neighbours as usize > MAX_HEARD {
            "max_neighbours must be 1..=MAX_HEARD (every peer heard must fit in a hello)"
        } else {
            return Ok(());
        };
        Err(DiscoveryError::InvalidSettings(problem))
    }
}

impl Default for Settings {
    /// [`Settings::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Local misuse of discovery: invalid settings. Bad hellos from peers never cause one: they
/// are counted in [`Stats`] and dropped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// The settings are unusable; the reason says which rule they break.
    #[error("invalid discovery settings: {0}")]
    InvalidSettings(&'static str),
}

/// What discovery counted: hellos sent and received, bad input (dropped, never acted on), the
/// table's pressure, and neighbours reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Stats {
    /// Hellos this node made ([`Discovery::poll_transmit`](super::Discovery::poll_transmit)).
    pub hellos_sent: u64,
    /// Hellos accepted: from a peer, newer than its last one.
    pub hellos_accepted: u64,
    /// Hellos numbered at or below the peer's last accepted one, by less than
    /// [`RESTART_GAP`](super::RESTART_GAP) (duplicates, reordered, replayed): ignored.
    pub stale: u64,
    /// Hellos whose sequence number fell back by [`RESTART_GAP`](super::RESTART_GAP) or more:
    /// taken as the peer's restart (it is heard afresh).
    pub restarts: u64,
    /// Hellos naming this node as their sender (a loop, or a forgery): ignored.
    pub own: u64,
    /// Bytes that are no hello (`Discovery::handle_datagram`,
    /// feature `codec`): dropped.
    pub garbage: u64,
    /// Hellos from new peers refused because the table was full of peers heard or reported.
    pub refused: u64,
    /// Peers not heard yet dropped from a full table to make room for a new one.
    pub evicted: u64,
    /// Peers whose entry expired (silent for the hold time).
    pub expired: u64,
    /// [`DiscoveryEvent::NeighbourUp`](super::DiscoveryEvent::NeighbourUp) handed out.
    pub neighbours_up: u64,
    /// [`DiscoveryEvent::NeighbourDown`](super::DiscoveryEvent::NeighbourDown) handed out.
    pub neighbours_down: u64,
}
