//! Every message kind the corrupt operation meets has fields it can rewrite. `corrupt::Fields`
//! lists the fields of each kind by hand and, as the message enums are `#[non_exhaustive]`,
//! gives a kind it does not list none: a kind added to an algorithm without its fields here
//! would never be corrupted, silently. Arbitrary messages reach every kind.

use arbitrary::{Arbitrary, Unstructured};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala};
use manet_mutex_testkit::corrupt::Fields;

/// Decode messages from `count` byte strings of a pseudo-random generator and check each
/// has a field; the number of distinct kinds seen.
fn every_kind_has_fields<M>(count: u64) -> usize
where
    M: for<'a> Arbitrary<'a> + Fields + Clone + core::fmt::Debug,
{
    let mut kinds = std::collections::BTreeSet::new();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..count {
        let bytes: Vec<u8> = (0..64)
            .map(|_| {
                // xorshift64: any bytes do, the point is to reach every kind.
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let Ok(msg) = M::arbitrary(&mut Unstructured::new(&bytes)) else {
            continue;
        };
        assert!(msg.field_count() > 0, "no fields to corrupt in {msg:?}");
        let name = format!("{msg:?}");
        kinds.insert(name[..name.find(['(', ' ', '{']).unwrap_or(name.len())].to_string());
    }
    kinds.len()
}

#[test]
fn every_message_kind_of_every_algorithm_has_fields() {
    // The kinds each algorithm has today; a new one raises the count and must be listed.
    assert_eq!(every_kind_has_fields::<reverse_link::Message>(2000), 8);
    assert_eq!(every_kind_has_fields::<prioritized::Message>(2000), 10);
    assert_eq!(every_kind_has_fields::<look_ahead::Message>(2000), 5);
    assert_eq!(every_kind_has_fields::<ricart_agrawala::Message>(2000), 3);
}
