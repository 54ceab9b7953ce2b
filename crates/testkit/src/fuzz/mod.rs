//! Fuzz bodies: arbitrary inputs (`arbitrary` decodes them from fuzzer bytes) and the runs
//! that check them. This is plumbing for the cargo-fuzz targets in `fuzz/` and for the
//! protocol crate's seeded tests, which run the same bodies; a property test of your own wants
//! the crate root instead (the drivers, [`crate::strategy`], [`crate::run_token_schedule`]).
//!
//! Each `*_network` body drives a whole small network through [`TokenNet`](crate::TokenNet) or
//! [`PermNet`](crate::PermNet) with a [schedule](crate::schedule); each `*_node` body feeds one
//! node arbitrary events, messages from strangers and out-of-range fields included. `decode`
//! feeds raw bytes to the wire codec.
//!
//! The input layouts are frozen: committed reproducers (`fuzz/regressions/`) and corpora
//! decode through them, so no byte ever changes meaning. The schedule steps that gained ways
//! to corrupt after reproducers were recorded decode through frozen layouts, all in
//! `src/fuzz/frozen.rs`; each network body's `run_as_recorded` replays a reproducer as it was
//! recorded. The token-network inputs select recovery ([`Recovering`]) by the byte after their
//! schedule, and then read free bits of their link faults as the failure model's faults;
//! `run_without_recovery` replays an input as every input recorded before issue 23 was read.

use alloc::vec::Vec;

use arbitrary::{Arbitrary, Result, Unstructured};
use manet_mutex::NodeId;
use manet_mutex_sim::Graph;

pub mod decode;
pub mod driver;
mod frozen;
pub mod look_ahead_node;
mod node_input;
mod perm_input;
pub mod permission_network;
pub mod prioritized_network;
pub mod prioritized_node;
pub mod reverse_link_network;
pub mod reverse_link_node;
pub mod ricart_agrawala_node;
mod token_input;
mod token_network;

pub use token_network::Recovering;

/// A vector whose length is read up front (from the end of the input, as `arbitrary` does for
/// lengths) instead of a "one more?" flag before each element: with the flag, uniformly random
/// bytes (the seeded tests) almost never make more than two or three elements.
fn sized_vec<'a, T: Arbitrary<'a>>(u: &mut Unstructured<'a>) -> Result<Vec<T>> {
    let len = u.arbitrary_len::<T>()?;
    (0..len).map(|_| T::arbitrary(u)).collect()
}

/// 2 to 6 nodes, connected: the token-network bodies' topology
/// ([`strategy::topology`](crate::strategy::topology) generates them too).
#[derive(Debug, Clone, Arbitrary)]
pub struct Topology {
    /// `2 + nodes % 5` nodes.
    pub nodes: u8,
    /// Node `i ≥ 1` is linked to node `parents[i - 1] % i`: a spanning tree, so the network
    /// starts connected.
    pub parents: [u8; 5],
    /// Extra links, one bit per unordered pair in lexicographic order.
    pub chords: u16,
}

impl Topology {
    /// The graph: a spanning tree plus the chords.
    pub fn graph(&self) -> Graph {
        let n = 2 + usize::from(self.nodes) % 5;
        let mut graph = Graph::empty(n);
        for i in 1..n {
            let parent = usize::from(self.parents[i - 1]) % i;
            graph.add(NodeId(i as u32), NodeId(parent as u32));
        }
        let pairs = (0..n as u32).flat_map(|a| (a + 1..n as u32).map(move |b| (a, b)));
        for (bit, (a, b)) in pairs.enumerate() {
            if self.chords >> bit & 1 == 1 {
                graph.add(NodeId(a), NodeId(b));
            }
        }
        graph
    }
}

/// A token node's leave after one step (L4): a leaving node with a neighbour keeps no token,
/// and `Left` is reported only by a node that left and holds none.
fn check_leave<M>(
    leaving: bool,
    has_left: bool,
    holds_token: bool,
    has_neighbour: bool,
    actions: &[manet_mutex::Action<M>],
) -> core::result::Result<(), String> {
    if leaving && holds_token && has_neighbour {
        return Err("a leaving node kept a token with a neighbour to hand it to (L4)".into());
    }
    let left = actions
        .iter()
        .any(|a| matches!(a, manet_mutex::Action::Report(manet_mutex::Report::Left)));
    if left && (holds_token || !has_left) {
        return Err("reported Left holding a token, or without leaving (L4)".into());
    }
    Ok(())
}
