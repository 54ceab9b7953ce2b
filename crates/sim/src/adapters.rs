//! The token algorithms plugged into the token simulator ([`super::token`]). The cores never
//! import the simulator; their adapters live here.

use super::token::{Channels, Params, TokenAlgorithm};
use super::{Algorithm, Graph, Plugin};
use manet_mutex::token::{Height, Recovery};
use manet_mutex::{prioritized, reverse_link, Error, NodeId};

impl Plugin for reverse_link::Node {
    type Shape = Graph;
    type Params = Params<reverse_link::Settings>;
    type InFlight = Channels<reverse_link::Message>;

    fn name(params: &Self::Params) -> &'static str {
        if params.settings.forwarding {
            Algorithm::Krlf.name()
        } else {
            Algorithm::Krl.name()
        }
    }

    fn build(graph: &Graph, params: &Self::Params) -> Result<Vec<Self>, Error> {
        let n = graph.n() as u32;
        reverse_link::network(n, graph.edges(), &params.holders, params.settings)?
            .into_iter()
            .map(Self::new)
            .collect()
    }

    fn check_safety(
        nodes: &[Self],
        in_flight: &Self::InFlight,
    ) -> Result<(), manet_mutex::Violation> {
        reverse_link::invariants::check_safety(nodes, in_flight.iter())
    }
}

impl TokenAlgorithm for reverse_link::Node {
    type Settings = reverse_link::Settings;

    type Tally = reverse_link::invariants::Tally;

    fn tally(&self) -> Self::Tally {
        Self::Tally::of_node(self)
    }

    fn message_tally(_settings: &Self::Settings, msg: &Self::Message) -> Self::Tally {
        Self::Tally::of_message(msg)
    }

    fn check_node(&self) -> Result<(), manet_mutex::Violation> {
        reverse_link::invariants::check_node(self)
    }

    fn check_tally(nodes: &[Self], total: Self::Tally) -> Result<(), manet_mutex::Violation> {
        match nodes.first() {
            Some(node) => reverse_link::invariants::check_tally(node.settings().k, total),
            None => Ok(()),
        }
    }

    fn check_drained(
        nodes: &[Self],
        _in_flight: &Channels<Self::Message>,
        quiescent: bool,
    ) -> Result<(), manet_mutex::Violation> {
        let forwarding = nodes.first().is_some_and(|n| n.settings().forwarding);
        match (quiescent, forwarding) {
            (true, _) => reverse_link::invariants::check_quiescent(nodes),
            // KRLF circulates idle tokens forever, so it never goes quiet.
            (false, true) => Ok(()),
            (false, false) => Err(manet_mutex::Violation::new(
                "quiescence",
                None,
                "KRL did not go quiet after the last request",
            )),
        }
    }

    fn raises(&self) -> u64 {
        Self::raises(self)
    }

    fn prefetch(&self) {
        self.heap_regions(&mut crate::prefetch::bytes);
    }

    fn recovery(settings: &Self::Settings) -> Option<Recovery> {
        settings.recovery
    }

    /// As the crate's timed recovery driver restarts a host: height `(0, 0, id)`, no token,
    /// no neighbour, marked restarted (it claims nothing before it hears of each token id);
    /// its links come up afterwards.
    fn restarted(settings: &Self::Settings, id: NodeId) -> Option<Self> {
        let height = Height::new(0, 0, id);
        let config = reverse_link::Config::new(id, *settings, 0, height, Vec::new());
        Self::new(config.restarted()).ok()
    }

    fn revoked(&self) -> bool {
        Self::revoked(self)
    }

    fn held_lanes(&self) -> Vec<u32> {
        self.held_tokens().map(|t| t.lane).collect()
    }

    fn carried_lane(msg: &Self::Message) -> Option<u32> {
        match msg {
            // A token whose fence does not read still is one: `u32::MAX` stands for its id.
            reverse_link::Message::Token(_, fence) => {
                Some(fence.read().map_or(u32::MAX, |f| f.lane))
            }
            _ => None,
        }
    }
}

impl Plugin for prioritized::Node {
    type Shape = Graph;
    type Params = Params<prioritized::Settings>;
    type InFlight = Channels<prioritized::Message>;

    fn name(_: &Self::Params) -> &'static str {
        Algorithm::Prioritized.name()
    }

    fn build(graph: &Graph, params: &Self::Params) -> Result<Vec<Self>, Error> {
        let n = graph.n() as u32;
        prioritized::network(n, graph.edges(), &params.holders, params.settings)?
            .into_iter()
            .map(Self::new)
            .collect()
    }

    fn check_safety(
        nodes: &[Self],
        in_flight: &Self::InFlight,
    ) -> Result<(), manet_mutex::Violation> {
        let k = nodes.first().map_or(0, |n| n.settings().k);
        prioritized::invariants::check_safety(nodes, k, in_flight.iter())
    }
}

impl TokenAlgorithm for prioritized::Node {
    type Settings = prioritized::Settings;

    type Tally = prioritized::invariants::Tally;

    fn tally(&self) -> Self::Tally {
        Self::Tally::of_node(self)
    }

    fn message_tally(settings: &Self::Settings, msg: &Self::Message) -> Self::Tally {
        Self::Tally::of_message(msg, settings.k)
    }

    fn check_node(&self) -> Result<(), manet_mutex::Violation> {
        prioritized::invariants::check_node(self, self.settings().k)
    }

    fn check_tally(nodes: &[Self], total: Self::Tally) -> Result<(), manet_mutex::Violation> {
        match nodes.first() {
            Some(node) => {
                let k = node.settings().k;
                prioritized::invariants::check_tally(k, k, total)
            }
            None => Ok(()),
        }
    }

    fn check_drained(
        nodes: &[Self],
        _in_flight: &Channels<Self::Message>,
        quiescent: bool,
    ) -> Result<(), manet_mutex::Violation> {
        if quiescent {
            prioritized::invariants::check_quiescent(nodes)
        } else {
            Err(manet_mutex::Violation::new(
                "quiescence",
                None,
                "the prioritized algorithm did not go quiet after the last request",
            ))
        }
    }

    fn raises(&self) -> u64 {
        Self::raises(self)
    }

    fn prefetch(&self) {
        self.heap_regions(&mut crate::prefetch::bytes);
    }
}
