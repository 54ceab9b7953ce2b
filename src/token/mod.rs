//! What the token algorithms ([`crate::reverse_link`], [`crate::prioritized`]) share: height
//! triples and partial reversal ([`height`]), the neighbour table with its link handshake
//! ([`neighbors`]), the handlers of links and heights built on them, and the initial layout of
//! a network's heights.

pub mod height;
mod layout;
pub(crate) mod links;
pub mod neighbors;

pub use height::{Height, Sealed};
pub(crate) use layout::layout;
pub use neighbors::{Neighbor, Neighbors};
