//! Fuzz bodies: arbitrary inputs (`arbitrary` decodes them from fuzzer bytes) and the runs
//! that check them. Each `*_network` body drives a whole small network through
//! [`TokenNet`](super::TokenNet) or [`PermNet`](super::PermNet); each `*_node` body feeds one
//! node arbitrary events, messages from strangers and out-of-range fields included. The
//! cargo-fuzz targets in `fuzz/` and the crate's seeded tests run the same bodies, and the
//! input layouts are frozen: committed reproducers decode through them. With the `codec`
//! feature, `decode` feeds raw bytes to the wire codec.

use alloc::vec::Vec;

use arbitrary::{Arbitrary, Result, Unstructured};

#[cfg(feature = "codec")]
pub mod decode;
mod height_input;
pub mod look_ahead_node;
pub mod node_input;
mod perm_input;
pub mod permission_network;
pub mod prioritized_network;
pub mod prioritized_node;
pub mod reverse_link_network;
pub mod reverse_link_node;
pub mod ricart_agrawala_node;
pub mod token_ops;

/// A vector whose length is read up front (from the end of the input, as `arbitrary` does for
/// lengths) instead of a "one more?" flag before each element: with the flag, uniformly random
/// bytes (the seeded tests) almost never make more than two or three elements.
pub fn sized_vec<'a, T: Arbitrary<'a>>(u: &mut Unstructured<'a>) -> Result<Vec<T>> {
    let len = u.arbitrary_len::<T>()?;
    (0..len).map(|_| T::arbitrary(u)).collect()
}
