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

/// Where a token node stands in leaving the system (`docs/ALGORITHMS.md`, L4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Departure {
    /// The node takes part as usual.
    #[default]
    Staying,
    /// `Leave` was accepted; `Report::Left` not yet emitted.
    Leaving,
    /// `Report::Left` was emitted (once).
    Left,
}

impl Departure {
    /// Whether `Leave` was accepted.
    pub(crate) fn gone(self) -> bool {
        self != Departure::Staying
    }

    /// The mode's name for [`crate::Error::WrongMode`].
    fn name(self) -> &'static str {
        match self {
            Departure::Staying => "staying",
            Departure::Leaving => "leaving (Leave was accepted)",
            Departure::Left => "gone (it reported Left)",
        }
    }

    /// The local misuse L4 adds, checked after the section (`check_local`): `Leave` outside
    /// the remainder section or a second time, and `Request` after `Leave`. `Err` changes
    /// nothing.
    pub(crate) fn check<M>(
        self,
        event: &crate::Event<M>,
        status: crate::Status,
    ) -> Result<(), crate::Error> {
        use crate::{Error, Event, Status};
        let event_name = event.name();
        match event {
            Event::Leave | Event::Request(_) if self.gone() => Err(Error::WrongMode {
                event: event_name,
                mode: self.name(),
            }),
            Event::Leave if status == Status::Waiting => Err(Error::WrongMode {
                event: event_name,
                mode: "waiting for the critical section (cancel first)",
            }),
            Event::Leave if status == Status::Critical => Err(Error::WrongMode {
                event: event_name,
                mode: "in the critical section (release first)",
            }),
            _ => Ok(()),
        }
    }
}
