//! The hosts routed mode can run, and the invariants checked after every step.

use std::fmt;

use manet_mutex::{look_ahead, ricart_agrawala, Error, NodeId, Protocol};

/// A permission-based node the routed simulator can drive and check (implemented for
/// [`look_ahead::Node`] and [`ricart_agrawala::Node`]).
pub trait Host: Protocol + crate::trace::Visible + Clone + fmt::Debug {
    /// Whether the node understands doze/disconnect/reconnect events.
    const MODES: bool;

    /// Node `id` of `hosts`; `seed` draws any initial randomness, `retransmit_ms` is the
    /// REQUEST timeout in milliseconds.
    fn create(id: NodeId, hosts: u32, seed: u64, retransmit_ms: u64) -> Result<Self, Error>;

    /// The algorithm's safety invariants over all hosts (its `invariants::check_safety`).
    fn check_safety(nodes: &[Self]) -> Result<(), manet_mutex::Violation>;
}

impl Host for look_ahead::Node {
    const MODES: bool = true;

    fn create(id: NodeId, hosts: u32, seed: u64, retransmit_ms: u64) -> Result<Self, Error> {
        let settings = look_ahead::Settings::new(hosts, retransmit_ms).with_seed(seed);
        look_ahead::Node::new(look_ahead::Config::new(id, settings))
    }

    fn check_safety(nodes: &[Self]) -> Result<(), manet_mutex::Violation> {
        look_ahead::invariants::check_safety(nodes)
    }
}

impl Host for ricart_agrawala::Node {
    const MODES: bool = false;

    fn create(id: NodeId, hosts: u32, _seed: u64, retransmit_ms: u64) -> Result<Self, Error> {
        let settings = ricart_agrawala::Settings::new(hosts, retransmit_ms);
        ricart_agrawala::Node::new(ricart_agrawala::Config::new(id, settings))
    }

    fn check_safety(nodes: &[Self]) -> Result<(), manet_mutex::Violation> {
        ricart_agrawala::invariants::check_safety(nodes)
    }
}
