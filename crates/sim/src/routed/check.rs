//! The hosts routed mode can run, and the invariants checked after every step.

use std::fmt;

use manet_mutex::{look_ahead, ricart_agrawala, Error, NodeId};

use crate::{Algorithm, Plugin};

/// What a routed network's hosts agree on besides their number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostParams {
    /// Seed of any initial randomness (look-ahead's initial sets).
    pub seed: u64,
    /// The REQUEST retransmission timeout, in milliseconds.
    pub retransmit_ms: u64,
}

impl HostParams {
    /// Hosts seeded with `seed` that retransmit a REQUEST after `retransmit_ms` ms.
    pub fn new(seed: u64, retransmit_ms: u64) -> Self {
        HostParams {
            seed,
            retransmit_ms,
        }
    }
}

/// A permission-based node the routed simulator can drive and check (implemented for
/// [`look_ahead::Node`] and [`ricart_agrawala::Node`]): a [`Plugin`] built from a number of
/// hosts and [`HostParams`], whose invariants read the hosts alone.
pub trait Host: Plugin<Shape = u32, Params = HostParams, InFlight = ()> + fmt::Debug {
    /// Whether the node understands doze/disconnect/reconnect events.
    const MODES: bool;
}

impl Plugin for look_ahead::Node {
    type Shape = u32;
    type Params = HostParams;
    type InFlight = ();

    fn name(_: &HostParams) -> &'static str {
        Algorithm::LookAhead.name()
    }

    fn build(hosts: &u32, params: &HostParams) -> Result<Vec<Self>, Error> {
        let settings =
            look_ahead::Settings::new(*hosts, params.retransmit_ms).with_seed(params.seed);
        (0..*hosts)
            .map(|i| look_ahead::Node::new(look_ahead::Config::new(NodeId(i), settings)))
            .collect()
    }

    fn check_safety(nodes: &[Self], (): &()) -> Result<(), manet_mutex::Violation> {
        look_ahead::invariants::check_safety(nodes)
    }
}

impl Host for look_ahead::Node {
    const MODES: bool = true;
}

impl Plugin for ricart_agrawala::Node {
    type Shape = u32;
    type Params = HostParams;
    type InFlight = ();

    fn name(_: &HostParams) -> &'static str {
        Algorithm::RicartAgrawala.name()
    }

    fn build(hosts: &u32, params: &HostParams) -> Result<Vec<Self>, Error> {
        let settings = ricart_agrawala::Settings::new(*hosts, params.retransmit_ms);
        (0..*hosts)
            .map(|i| ricart_agrawala::Node::new(ricart_agrawala::Config::new(NodeId(i), settings)))
            .collect()
    }

    fn check_safety(nodes: &[Self], (): &()) -> Result<(), manet_mutex::Violation> {
        ricart_agrawala::invariants::check_safety(nodes)
    }
}

impl Host for ricart_agrawala::Node {
    const MODES: bool = false;
}
