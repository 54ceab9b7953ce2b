//! What a network agrees on ([`Settings`]), one host's initial state ([`Config`]), and the
//! configurations of a whole network ([`network`]).

use alloc::vec::Vec;

use crate::permission::{Bounds, Recovery};
use crate::{Error, NodeId};

/// What every host of a network agrees on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Settings {
    /// Number of hosts; ids are `0..hosts`.
    pub hosts: u32,
    /// Retransmission timeout of a REQUEST, in [the embedder's time unit](crate#timers)
    /// (must be > 0).
    pub retransmit_after: u64,
    /// Seed of the random matrix of Fig. 1 that gives every host its initial `Info_set`.
    pub seed: u64,
    /// Lease, exclusion by timeout and majority mode (all off by default, as in the paper).
    pub recovery: Recovery,
}

impl Settings {
    /// `hosts` hosts retransmitting a REQUEST after `retransmit_after`, initial sets from
    /// seed 0.
    pub const fn new(hosts: u32, retransmit_after: u64) -> Self {
        Settings {
            hosts,
            retransmit_after,
            seed: 0,
            recovery: Recovery {
                lease: None,
                exclusion: None,
                majority: false,
                bounds: None,
            },
        }
    }

    /// Initial sets from `seed`.
    pub const fn with_seed(self, seed: u64) -> Self {
        Settings { seed, ..self }
    }

    /// Every entry leased for `after` ([`Recovery::lease`]; must be > 0).
    pub const fn with_lease(mut self, after: u64) -> Self {
        self.recovery.lease = Some(after);
        self
    }

    /// Exclude a peer silent through `retransmissions` consecutive retransmission timeouts
    /// that was sent no REPLY for as long ([`Recovery::exclusion`]; must be > 0), as if it
    /// had sent a DISCONNECT.
    pub const fn with_exclusion(mut self, retransmissions: u32) -> Self {
        self.recovery.exclusion = Some(retransmissions);
        self
    }

    /// Enter only with the grants of a strict majority of the hosts ([`Recovery::majority`]).
    /// A host then asks every peer it does not exclude (the look-ahead saving is given up:
    /// a peer in `Status_set` behind a partition would never be waited for, so never
    /// excluded), and a DISCONNECT excludes its sender.
    pub const fn with_majority(mut self, on: bool) -> Self {
        self.recovery.majority = on;
        self
    }

    /// The network's stated timing bounds (requests delivered within `delivery_bound`,
    /// clocks within `drift_ppm`): the node then refuses an exclusion the bounds make unsafe
    /// (`Error::InvalidConfig` at `Node::new`, naming the bound; C4) instead of running with
    /// it ([`Recovery::bounds`]).
    pub const fn with_bounds(mut self, delivery_bound: u64, drift_ppm: u32) -> Self {
        self.recovery.bounds = Some(Bounds::new(delivery_bound, drift_ppm));
        self
    }

    /// Recovery for a network with these bounds: every entry leased for `lease`, a silent
    /// peer excluded after the least number of retransmission timeouts that keeps one acting
    /// holder ([`Recovery::least_safe_exclusion`]), and the bounds stated
    /// ([`Settings::with_bounds`]). Where no exclusion is safe (no retransmission timeout, a
    /// drift of 10^6 ppm) none is set, and `Node::new` refuses nothing more.
    pub const fn with_recovery_for(self, lease: u64, delivery_bound: u64, drift_ppm: u32) -> Self {
        let mut s = self
            .with_lease(lease)
            .with_bounds(delivery_bound, drift_ppm);
        s.recovery.exclusion = s
            .recovery
            .least_safe_exclusion(s.retransmit_after, Bounds::new(delivery_bound, drift_ppm));
        s
    }

    /// Whether the exclusion timeout outlasts every lease it could cut short, for REQUESTs
    /// delivered within `delivery_bound` and clocks within `drift_ppm` parts per million
    /// ([`Recovery::exclusion_safe`]).
    pub fn exclusion_safe(&self, delivery_bound: u64, drift_ppm: u32) -> bool {
        self.recovery
            .exclusion_safe(self.retransmit_after, delivery_bound, drift_ppm)
    }
}

/// One host's initial state. [`network`] produces consistent ones for a whole network.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// This host's id, `0..hosts`.
    pub id: NodeId,
    /// What the network agrees on.
    pub settings: Settings,
    /// The initial `Info_set`: `None` for the host's row of the seeded matrix of Fig. 1;
    /// explicit sets must be consistent across hosts (of two hosts, exactly one has the other
    /// in its `Info_set`). A restarted host (incarnation above 0) asks everyone whatever this
    /// says: its peers' sets moved on while it ran before.
    pub info_set: Option<Vec<NodeId>>,
    /// This run of the host: 0 at first, larger after every restart with empty state.
    pub incarnation: u32,
}

impl Config {
    /// Host `id`, with its row of the seeded matrix as its initial `Info_set`.
    pub fn new(id: NodeId, settings: Settings) -> Self {
        Config {
            id,
            settings,
            info_set: None,
            incarnation: 0,
        }
    }

    /// The host restarted with empty state as incarnation `incarnation`, which must be larger
    /// than every incarnation it ran as before and than every fence generation it entered
    /// under (its fences start at `incarnation << 32`, and its peers may never have heard of
    /// its last one; `manet_mutex_tokio` keeps both): its request numbers start at
    /// `incarnation << 32`, its announcements are sealed with it, and it starts with every
    /// peer in `Info_set` (`docs/ALGORITHMS.md`, C5).
    pub fn with_incarnation(self, incarnation: u32) -> Self {
        Config {
            incarnation,
            ..self
        }
    }

    /// With an explicit initial `Info_set` (every other peer starts in `Status_set`).
    pub fn with_info_set(self, info_set: Vec<NodeId>) -> Self {
        Config {
            info_set: Some(info_set),
            ..self
        }
    }
}

/// Configurations for hosts `0..settings.hosts`, with consistent initial sets drawn from
/// `settings.seed`.
pub fn network(settings: Settings) -> Result<Vec<Config>, Error> {
    if settings.hosts == 0 {
        return Err(Error::InvalidNetwork {
            reason: "a network needs at least one host",
        });
    }
    Ok((0..settings.hosts)
        .map(|i| Config::new(NodeId(i), settings))
        .collect())
}
