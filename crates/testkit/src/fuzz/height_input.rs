//! Arbitrary heights for the token algorithms' single-node fuzz bodies.

use arbitrary::Arbitrary;
use manet_mutex::token::Height;

use super::node_input::Peer;

/// A height component: mostly small, sometimes at or near the ends of the range.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Coord {
    Small(i8),
    Min,
    Max,
    Any(i64),
}

impl Coord {
    pub fn value(self) -> i64 {
        match self {
            Coord::Small(v) => i64::from(v),
            Coord::Min => i64::MIN,
            Coord::Max => i64::MAX,
            Coord::Any(v) => v,
        }
    }
}

pub fn height(h1: Coord, h2: Coord, owner: Peer) -> Height {
    Height::new(h1.value(), h2.value(), owner.id())
}
