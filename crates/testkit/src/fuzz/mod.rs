//! Fuzz bodies: arbitrary inputs (`arbitrary` decodes them from fuzzer bytes) and the runs
//! that check them. Each `*_network` body drives a whole small network through
//! [`TokenNet`](super::TokenNet) or [`PermNet`](super::PermNet); each `*_node` body feeds one
//! node arbitrary events, messages from strangers and out-of-range fields included. The
//! cargo-fuzz targets in `fuzz/` and the crate's seeded tests run the same bodies, and the
//! input layouts are frozen: committed reproducers decode through them. With the `codec`
//! feature, `decode` feeds raw bytes to the wire codec.

use alloc::vec::Vec;

use arbitrary::{Arbitrary, Result, Unstructured};

use crate::corrupt::How;

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

/// The `u32` that `u32::arbitrary(u)` would read next (zeros past the end), without consuming
/// it: what a derived enum's variant choice reads.
fn peek_u32(u: &Unstructured) -> u32 {
    let mut buf = [0; 4];
    let n = u.len().min(4);
    buf[..n].copy_from_slice(u.peek_bytes(n).unwrap_or_default());
    u32::from_le_bytes(buf)
}

/// How the next enum value decoded by `arbitrary`'s derive with `variants` variants corrupts,
/// if it is a corruption: the derive chooses the variant from the top bits of a `u32`
/// (`(x * variants) >> 32`), so with a power of two the low bits are free. The frozen input
/// layouts keep every byte where it was and every variant as it was decoded; the free bits
/// choose between a field corruption (as before), a kind change and a bit flip
/// ([`How::from_bits`]).
fn how_from_free_bits(u: &Unstructured, variants: u32) -> How {
    debug_assert!(variants.is_power_of_two());
    How::from_bits(peek_u32(u) & (u32::MAX >> variants.trailing_zeros()))
}
