//! Decoding helpers shared by the fuzz bodies.

use arbitrary::{Arbitrary, Result, Unstructured};

/// A vector whose length is read up front (from the end of the input, as `arbitrary` does for
/// lengths) instead of a "one more?" flag before each element: with the flag, uniformly random
/// bytes (the seeded tests) almost never make more than two or three elements.
pub fn sized_vec<'a, T: Arbitrary<'a>>(u: &mut Unstructured<'a>) -> Result<Vec<T>> {
    let len = u.arbitrary_len::<T>()?;
    (0..len).map(|_| T::arbitrary(u)).collect()
}
