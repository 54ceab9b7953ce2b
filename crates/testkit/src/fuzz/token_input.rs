//! What the token algorithms' single-node fuzz bodies share: arbitrary heights, and the local
//! misuse of a token node.

use arbitrary::Arbitrary;
use manet_mutex::token::Height;
use manet_mutex::{Action, Event, Protocol, Status};

use super::node_input::{drive, Peer};

/// A height component: mostly small, sometimes at or near the ends of the range.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub(super) enum Coord {
    Small(i8),
    Min,
    Max,
    Any(i64),
}

impl Coord {
    fn value(self) -> i64 {
        match self {
            Coord::Small(v) => i64::from(v),
            Coord::Min => i64::MIN,
            Coord::Max => i64::MAX,
            Coord::Any(v) => v,
        }
    }
}

/// The height `(h1, h2, owner)`.
pub(super) fn height(h1: Coord, h2: Coord, owner: Peer) -> Height {
    Height::new(h1.value(), h2.value(), owner.id())
}

/// The heights of the first eight `neighbors`.
pub(super) fn neighbor_heights(neighbors: &[(Peer, Coord, Coord)]) -> Vec<Height> {
    neighbors
        .iter()
        .take(8)
        .map(|&(p, h1, h2)| height(h1, h2, p))
        .collect()
}

/// Feed a token node its events and check them ([`drive`]). Local misuse is what a token
/// algorithm whose requests may ask for `1..=max_resources` refuses: token algorithms have no
/// timers or host modes, so those events are unsupported; `Leave` is taken once, in the
/// remainder section, and no `Request` after it (L4; `leaving` reads the node's state).
pub(super) fn drive_token_node<P>(
    node: P,
    events: impl IntoIterator<Item = Event<P::Message>>,
    max_resources: u32,
    leaving: impl Fn(&P) -> bool,
    consistent: impl Fn(&P, &[Action<P::Message>]) -> Result<(), String>,
) where
    P: Protocol + Clone + PartialEq + core::fmt::Debug,
{
    let misuse = |node: &P, event: &Event<P::Message>| {
        let status = node.status();
        match event {
            Event::Request(r) => {
                status != Status::Remainder
                    || r.resources == 0
                    || r.resources > max_resources
                    || leaving(node)
            }
            Event::Leave => status != Status::Remainder || leaving(node),
            Event::Release => status != Status::Critical,
            Event::Receive { .. } | Event::LinkUp(_) | Event::LinkDown(_) => false,
            _ => true,
        }
    };
    drive(node, events, misuse, consistent);
}
