//! Check words: how a receiver recognises a message field corrupted on the way.
//!
//! Range checks catch impossible values, but most corrupted values are possible ones. Where
//! a receiver cannot tell a wrong value from a right one and acting on it would cost safety or
//! liveness (a REQUEST's priority, an announcement, a height), the message carries a check
//! word over those fields, and a copy whose word does not match is treated as lost (or, for
//! a height, as impossible). See `docs/ALGORITHMS.md`, A4, A6 and T8.

/// A check word over `fields`: each field passes through an odd multiplier, a bijection of
/// `u64`, and the results are summed with `kind` (which keeps different messages' words
/// apart), so a message with any one field changed no longer matches its word. It detects
/// corruption, not forgery: a peer that rewrites a message consistently can recompute it.
pub(crate) fn check_word<const N: usize>(kind: u64, fields: [u64; N]) -> u64 {
    const MULTIPLIERS: [u64; 4] = [
        0x9E37_79B9_7F4A_7C15,
        0xBF58_476D_1CE4_E5B9,
        0x94D0_49BB_1331_11EB,
        0xD6E8_FEB8_6659_FD93,
    ];
    fields
        .iter()
        .zip(MULTIPLIERS.iter().cycle())
        .fold(kind, |sum, (field, m)| {
            sum.wrapping_add(field.wrapping_mul(*m))
        })
}

/// The tag the wire encoding of every message mixes into its check words: a different word
/// for every `variant` of one algorithm's message enum (`domain` names the algorithm).
///
/// A message's kind (its variant) is a field on the wire like any other: several kinds share
/// a layout, so one corrupted kind would otherwise make a message that passes every check as
/// another kind. So the serde encoding of every message stores each check word XOR the tag of
/// its variant, and decoding XORs the tag of the variant it read: a message read as another
/// kind than it was sent as fails its check and is treated like any other corrupted one
/// (`docs/ALGORITHMS.md`, W2). Distinct variants have distinct tags (the multiplier is odd, so
/// a bijection), which is all the XOR needs.
#[cfg(feature = "serde")]
pub(crate) const fn kind_tag(domain: u64, variant: u32) -> u64 {
    domain.wrapping_add((variant as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// `Serialize` and `Deserialize` for a message type whose derives are `remote = "Self"`
/// (inherent functions) and which has `fn tagged(self) -> Self`, an involution XORing each of
/// its check words with [`kind_tag`] of its variant: the encoding of every message binds its
/// kind into its check words, in any serde format.
#[cfg(feature = "serde")]
macro_rules! tagged_serde {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$t>::serialize(&self.clone().tagged(), s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$t>::deserialize(d).map(<$t>::tagged)
            }
        }
    };
}
#[cfg(feature = "serde")]
pub(crate) use tagged_serde;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_one_field_changed_changes_the_word() {
        let fields = [7, u64::MAX, 0, 1 << 40, 3];
        let word = check_word(1, fields);
        for i in 0..fields.len() {
            for v in [
                0,
                1,
                u64::MAX,
                fields[i].wrapping_add(1),
                fields[i] ^ (1 << 63),
            ] {
                if v != fields[i] {
                    let mut changed = fields;
                    changed[i] = v;
                    assert_ne!(check_word(1, changed), word, "field {i} = {v}");
                }
            }
        }
        assert_ne!(check_word(2, fields), word, "kinds keep words apart");
    }

    #[test]
    #[cfg(feature = "serde")]
    fn variants_have_distinct_tags() {
        for a in 0..64 {
            for b in 0..64 {
                assert_eq!(kind_tag(9, a) == kind_tag(9, b), a == b, "{a} {b}");
            }
        }
    }
}
