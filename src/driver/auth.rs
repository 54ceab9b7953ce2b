//! Authentication of the driver's datagrams by a pre-shared key (feature `auth`):
//! HMAC-SHA-256 (RFC 2104; RustCrypto's `hmac` and `sha2`), its tag truncated to
//! [`TAG_LEN`] bytes and appended to every datagram the driver sends, hellos included.
//!
//! Why 16 bytes: RFC 2104 (section 5) advises a truncated tag of at least half the hash's
//! output and at least 80 bits; 128 bits is that half, and a forger's chance per try stays
//! 2^-128, out of reach of any flood, for 16 bytes a datagram (about as much as a session
//! frame without a message).

use hmac::{Mac, SimpleHmac};
use sha2::Sha256;

/// The length of the tag: the first 16 bytes of the HMAC-SHA-256 of the datagram.
pub const TAG_LEN: usize = 16;

/// A pre-shared key: every node of a network holds the same one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AuthKey(pub [u8; 32]);

impl core::fmt::Debug for AuthKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("AuthKey(..)")
    }
}

type HmacSha256 = SimpleHmac<Sha256>;

impl AuthKey {
    fn mac(&self, bytes: &[u8]) -> HmacSha256 {
        // An HMAC takes a key of any length.
        let mut mac = match HmacSha256::new_from_slice(&self.0) {
            Ok(mac) => mac,
            Err(_) => unreachable!("HMAC takes keys of any length"),
        };
        mac.update(bytes);
        mac
    }

    /// The tag of `bytes`.
    pub fn tag(&self, bytes: &[u8]) -> [u8; TAG_LEN] {
        let full = self.mac(bytes).finalize().into_bytes();
        let mut tag = [0; TAG_LEN];
        tag.copy_from_slice(&full[..TAG_LEN]);
        tag
    }

    /// Whether `tag` is the tag of `bytes` (compared in constant time).
    pub fn verify(&self, bytes: &[u8], tag: &[u8]) -> bool {
        tag.len() == TAG_LEN && self.mac(bytes).verify_truncated_left(tag).is_ok()
    }
}
