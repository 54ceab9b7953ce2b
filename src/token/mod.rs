//! What the token algorithms ([`crate::reverse_link`], [`crate::prioritized`]) share: height
//! triples and partial reversal ([`height`]), the neighbour table with its link handshake
//! ([`neighbors`]), the handlers of links and heights built on them, and the initial layout of
//! a network's heights, the pacing of raises ([`RaisePause`]), and the recovery of lost tokens
//! ([`Recovery`]).

pub mod height;
mod layout;
pub(crate) mod links;
pub mod neighbors;
mod pause;
pub(crate) mod recovery;

pub use height::{Height, Sealed};
pub(crate) use layout::layout;
pub use neighbors::{Neighbor, Neighbors};
pub use pause::RaisePause;
pub use recovery::{Promised, Recovery};

use crate::{Anomaly, Severity};

/// How the token algorithms read an anomaly (the reasons are on [`Anomaly`]'s variants): peers
/// that are not neighbours yet or any more are normal with one-sided link events; a value out
/// of range, or a second token, is not.
pub(crate) fn anomaly_severity(kind: Anomaly) -> Severity {
    match kind {
        Anomaly::Stale | Anomaly::RedundantLinkEvent | Anomaly::UnknownPeer => Severity::Noise,
        Anomaly::OutOfRange | Anomaly::Unexpected => Severity::Suspect,
    }
}
