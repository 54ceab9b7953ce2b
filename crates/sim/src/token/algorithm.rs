//! What a token algorithm plugs into the token simulator, and the network to build.

use std::fmt;
use std::ops::{AddAssign, SubAssign};

use super::Channels;
use crate::{Graph, Plugin};
use manet_mutex::token::Recovery;
use manet_mutex::{NodeId, Protocol};

/// A token network to build: what its nodes agree on, and where the tokens start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params<S> {
    /// The algorithm's settings.
    pub settings: S,
    /// The initial token holders.
    pub holders: Vec<NodeId>,
}

impl<S> Params<S> {
    /// `settings`, with tokens at `holders`.
    pub fn new(settings: S, holders: Vec<NodeId>) -> Self {
        Params { settings, holders }
    }

    /// `settings`, with one token at each of the first `count` nodes (the KRL paper's layout).
    pub fn first_nodes(settings: S, count: u32) -> Self {
        Params::new(settings, (0..count).map(NodeId).collect())
    }
}

/// What the token simulator needs from an algorithm besides [`Plugin`] (implemented for
/// both token algorithms in `sim::adapters`): a network built on a [`Graph`] from
/// [`Params`], checked with the messages in flight, and the tallies and drain checks below.
///
/// [`Plugin::check_safety`] must be equivalent to [`TokenAlgorithm::check_node`] on every
/// node and [`TokenAlgorithm::check_tally`] on the sum of every node's
/// [`TokenAlgorithm::tally`] and every in-flight message's [`TokenAlgorithm::message_tally`]:
/// the simulator's incremental check relies on it (see [`super::Config::check_every_step`]).
// The bounds name their traits: `Self::Settings` alone would ask for this trait's supertraits
// while they are being computed (a cycle).
pub trait TokenAlgorithm:
    Plugin<
    Shape = Graph,
    Params = Params<<Self as TokenAlgorithm>::Settings>,
    InFlight = Channels<<Self as Protocol>::Message>,
>
{
    /// What the network's nodes agree on (the algorithm's `Settings`).
    type Settings: Clone + fmt::Debug;

    /// What a node or a message contributes to the network-wide counts the safety invariants
    /// bound (tokens, resources, nodes in the critical section).
    type Tally: Copy + Default + PartialEq + fmt::Debug + AddAssign + SubAssign;

    /// This node's contribution to the network-wide counts.
    fn tally(&self) -> Self::Tally;

    /// The contribution of `msg` while it is in flight, in a network with `settings`.
    fn message_tally(settings: &Self::Settings, msg: &Self::Message) -> Self::Tally;

    /// The safety invariants about this node alone (they read its own state only).
    fn check_node(&self) -> Result<(), manet_mutex::Violation>;

    /// The safety invariants about the whole network, given the sum of every node's and every
    /// in-flight message's tally.
    fn check_tally(nodes: &[Self], total: Self::Tally) -> Result<(), manet_mutex::Violation>;

    /// Extra checks once the run has drained (no node waiting or in the critical section, no
    /// new requests or link changes); `quiescent` says whether no message is in flight.
    fn check_drained(
        nodes: &[Self],
        in_flight: &Channels<Self::Message>,
        quiescent: bool,
    ) -> Result<(), manet_mutex::Violation>;

    /// Height raises this node performed (for the raises-per-link-change metric).
    fn raises(&self) -> u64 {
        0
    }

    /// A hint: ask the CPU cache for the state outside the node's own struct that its next
    /// event will read (the simulator asks for the struct itself). It must change nothing;
    /// the default does nothing.
    fn prefetch(&self) {}

    /// The token recovery a network with `settings` runs, if any: only such a network may be
    /// run with [`super::Faults`], whose checks read its bounds. The default: none.
    fn recovery(_settings: &Self::Settings) -> Option<Recovery> {
        None
    }

    /// Node `id` of a network with `settings` as it restarts after a crash: empty state, no
    /// token, no neighbour. Needed for [`super::Faults`] (the default, `None`, refuses them).
    fn restarted(_settings: &Self::Settings, _id: NodeId) -> Option<Self> {
        None
    }

    /// Whether the node is in the critical section on a token that recovery destroyed under
    /// it (it was told `LeaseExpired` and holds nothing for the entry). The default: never.
    fn revoked(&self) -> bool {
        false
    }

    /// The ids of the tokens this node holds (for the per-part token check and the losses a
    /// fault causes). The default: none.
    fn held_lanes(&self) -> Vec<u32> {
        Vec::new()
    }

    /// The id of the token `msg` carries, if it carries one. The default: none.
    fn carried_lane(_msg: &Self::Message) -> Option<u32> {
        None
    }
}
