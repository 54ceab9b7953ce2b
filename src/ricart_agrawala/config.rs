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
}

impl Settings {
    /// `hosts` hosts retransmitting a REQUEST after `retransmit_after`.
    pub const fn new(hosts: u32, retransmit_after: u64) -> Self {
        Settings {
            hosts,
            retransmit_after,
        }
    }
}

/// One host's initial state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// This host's id, `0..hosts`.
    pub id: NodeId,
    /// What the network agrees on.
    pub settings: Settings,
}

impl Config {
    /// Host `id`.
    pub fn new(id: NodeId, settings: Settings) -> Self {
        Config { id, settings }
    }
}

/// Configurations for hosts `0..settings.hosts`.
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
