//! What a network agrees on ([`Settings`]), one host's initial state ([`Config`]), and the
//! configurations of a whole network ([`network`]).

use alloc::vec::Vec;

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
}

impl Settings {
    /// `hosts` hosts retransmitting a REQUEST after `retransmit_after`, initial sets from
    /// seed 0.
    pub const fn new(hosts: u32, retransmit_after: u64) -> Self {
        Settings {
            hosts,
            retransmit_after,
            seed: 0,
        }
    }

    /// Initial sets from `seed`.
    pub const fn with_seed(self, seed: u64) -> Self {
        Settings { seed, ..self }
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
    /// in its `Info_set`).
    pub info_set: Option<Vec<NodeId>>,
}

impl Config {
    /// Host `id`, with its row of the seeded matrix as its initial `Info_set`.
    pub fn new(id: NodeId, settings: Settings) -> Self {
        Config {
            id,
            settings,
            info_set: None,
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
        return Err(Error::InvalidConfig {
            node: NodeId(0),
            reason: "a network needs at least one host",
        });
    }
    Ok((0..settings.hosts)
        .map(|i| Config::new(NodeId(i), settings))
        .collect())
}
