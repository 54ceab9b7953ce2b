//! What the driver hands out: datagrams for the transport and events for the application.

use alloc::vec::Vec;

use crate::token::Promised;
use crate::{Anomaly, Fence, NodeId, Report, Severity};

/// Where a [`Transmit`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Destination {
    /// One peer.
    Peer(NodeId),
    /// Everyone in range (discovery's hellos): a broadcast or multicast datagram.
    Broadcast,
}

/// A datagram for the transport to send, best effort (it may be lost, duplicated, delayed or
/// reordered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where to send it.
    pub to: Destination,
    /// Its bytes: a driver frame or a discovery hello.
    pub bytes: Vec<u8>,
}

/// What the driver tells the application ([`Driver::poll_event`](super::Driver::poll_event)).
///
/// Events the application must act on ([`Entered`](Self::Entered),
/// [`LeaseExpired`](Self::LeaseExpired), [`Persist`](Self::Persist)) are never dropped; the
/// informational ones are dropped, and counted in [`Stats::events_dropped`](super::Stats),
/// when [`Config::max_queued`](super::Config::max_queued) of them wait.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriverEvent {
    /// The application is in the critical section, holding `resources`, under `fence`
    /// (hand the fence to the protected resource with every operation).
    Entered {
        /// Resources granted.
        resources: u32,
        /// The entry's fencing token.
        fence: Fence,
    },
    /// The lease of the entry under `fence` ended: stop acting on the resource under it now,
    /// then [`release`](super::Driver::release).
    LeaseExpired {
        /// The fence of the entry whose lease ended.
        fence: Fence,
    },
    /// Majority mode: store `promised` durably before sending any datagram polled after this
    /// event ([`Action::Persist`](crate::Action::Persist)).
    Persist {
        /// The promise to store.
        promised: Promised,
    },
    /// An incarnation of the link to `peer` failed with `messages` of the core's messages
    /// unacknowledged, `precious` of them tokens or resources (possibly lost:
    /// [`SessionEvent::Lost`](crate::session::SessionEvent::Lost)).
    Lost {
        /// The peer.
        peer: NodeId,
        /// Messages given up.
        messages: usize,
        /// Of those, tokens or resources.
        precious: usize,
    },
    /// What recovery did: a token regenerated, renumbered or destroyed, a peer excluded
    /// (suspected) or readmitted.
    Report(Report),
    /// The session told the core the link to `peer` is up (token algorithms).
    LinkUp(NodeId),
    /// The session told the core the link to `peer` is down (token algorithms).
    LinkDown(NodeId),
    /// Discovery hears `peer` both ways.
    NeighbourUp(NodeId),
    /// Discovery lost `peer`.
    NeighbourDown(NodeId),
    /// The core ignored a peer's input that no run within the contract produces
    /// ([`Severity::Suspect`]; noise is only counted, in [`Stats`](super::Stats)).
    Anomaly {
        /// The peer.
        from: NodeId,
        /// What was wrong.
        kind: Anomaly,
        /// Always [`Severity::Suspect`] here.
        severity: Severity,
    },
}

impl DriverEvent {
    /// Whether the application must act on the event (it is never dropped).
    pub fn is_vital(&self) -> bool {
        matches!(
            self,
            DriverEvent::Entered { .. }
                | DriverEvent::LeaseExpired { .. }
                | DriverEvent::Persist { .. }
        )
    }
}
