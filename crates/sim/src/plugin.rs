//! What every algorithm plugged into a simulator provides.

use core::fmt;

use manet_mutex::{Error, Protocol};

use crate::trace::Visible;

/// An algorithm the simulators can run: how to build a network of its nodes, its safety
/// invariants, and its name. Each simulator asks for more through its own extension,
/// [`crate::TokenAlgorithm`] (the token simulator: tallies, the drain's checks) and
/// [`crate::routed::Host`] (the routed simulator: doze and disconnection).
///
/// The core crate's four node types implement it (the token algorithms in `adapters`, the
/// permission algorithms in `routed`); an algorithm of your own implements it and one
/// extension, and [`Visible`] (whose provided methods suffice).
pub trait Plugin: Protocol + Visible + Clone + Sized {
    /// The network's shape when it is built: the token simulator's initial topology (a
    /// [`crate::Graph`]), the routed simulator's number of hosts (they move, and any host
    /// may message any other).
    type Shape: ?Sized;

    /// What the network's nodes agree on besides its shape.
    type Params: Clone + fmt::Debug;

    /// What the safety invariants read besides the nodes: the token simulator's messages in
    /// flight ([`crate::Channels`]); nothing (`()`) for the routed hosts, whose invariants
    /// read the hosts alone.
    type InFlight: ?Sized;

    /// The name tables and CSV rows give a network of these nodes with `params` (one of the
    /// registry's names, [`crate::Algorithm::name`], for the core crate's algorithms).
    fn name(params: &Self::Params) -> &'static str;

    /// The network's nodes, `0..n` in order, in a consistent initial state.
    fn build(shape: &Self::Shape, params: &Self::Params) -> Result<Vec<Self>, Error>;

    /// The safety invariants over every node and what is in flight.
    fn check_safety(
        nodes: &[Self],
        in_flight: &Self::InFlight,
    ) -> Result<(), manet_mutex::Violation>;
}
