//! What goes into a node ([`Event`]) and what comes out ([`Action`]).

use crate::NodeId;

/// Identifies a timer a node asked for with [`Action::SetTimer`]; it comes back in
/// [`Event::Timeout`]. Nodes key timers so that a stale or duplicate timeout is a no-op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct TimerId(pub u64);

/// The application's request for the critical section.
///
/// Single-resource algorithms (`reverse_link`, `look_ahead`, `ricart_agrawala`) require
/// `resources == 1` and ignore `priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct CsRequest {
    /// Number of resources wanted (`h` in h-out-of-k), `1..=k`.
    pub resources: u32,
    /// Application priority; larger is more urgent. Only the prioritized algorithm uses it.
    pub priority: u32,
}

impl CsRequest {
    /// A request for one resource at priority 0: the plain mutual-exclusion request.
    pub const ONE: CsRequest = CsRequest {
        resources: 1,
        priority: 0,
    };

    /// A request for `resources` resources at priority 0.
    pub const fn resources(resources: u32) -> Self {
        CsRequest {
            resources,
            priority: 0,
        }
    }
}

/// An input to [`crate::Protocol::handle`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Event<M> {
    /// The application asks for the critical section.
    Request(CsRequest),
    /// The application leaves the critical section, releasing everything it was granted.
    Release,
    /// A protocol message arrived from `from`.
    Receive {
        /// The sender.
        from: NodeId,
        /// The message.
        msg: M,
    },
    /// The link layer reports a new link to a peer (token algorithms).
    LinkUp(NodeId),
    /// The link layer reports that the link to a peer failed (token algorithms). The contract
    /// is that nothing is in flight on the link when this is reported.
    LinkDown(NodeId),
    /// A timer set with [`Action::SetTimer`] expired.
    Timeout(TimerId),
    /// The host enters doze mode (look-ahead).
    Doze,
    /// The host wakes from doze mode (look-ahead).
    Wake,
    /// The host disconnects voluntarily (look-ahead).
    Disconnect,
    /// The host reconnects after a voluntary or accidental disconnection (look-ahead).
    Reconnect,
}

impl<M> Event<M> {
    /// A short name for the event kind, for errors and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Request(_) => "Request",
            Event::Release => "Release",
            Event::Receive { .. } => "Receive",
            Event::LinkUp(_) => "LinkUp",
            Event::LinkDown(_) => "LinkDown",
            Event::Timeout(_) => "Timeout",
            Event::Doze => "Doze",
            Event::Wake => "Wake",
            Event::Disconnect => "Disconnect",
            Event::Reconnect => "Reconnect",
        }
    }
}

/// Why a node ignored (part of) a peer's input. Reported in [`Action::Anomaly`] so an embedder
/// can log or count it; the node's state stays consistent either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Anomaly {
    /// The sender is not a current neighbour (token algorithms) or not a known host.
    UnknownPeer,
    /// The message carries a value outside its valid range (e.g. a height triple naming another
    /// node, `t > k`).
    OutOfRange,
    /// The message is stale or a duplicate of one already processed.
    Stale,
    /// The message is valid but unexpected in the node's current state.
    Unexpected,
    /// A link event that does not change anything (link up to a neighbour, down to a stranger).
    RedundantLinkEvent,
}

/// An output of [`crate::Protocol::handle`]. Actions must be carried out in order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action<M> {
    /// Send `msg` to `to` (a neighbour for token algorithms, any host for permission ones).
    Send {
        /// The destination.
        to: NodeId,
        /// The message.
        msg: M,
    },
    /// The application may enter the critical section now, holding `resources` resources.
    EnterCritical {
        /// Resources granted (1 for single-resource algorithms).
        resources: u32,
    },
    /// Start (or restart) timer `timer`, to fire after `after`
    /// ([`Timers`](crate::timers::Timers) keeps such timers for an embedder).
    SetTimer {
        /// The timer.
        timer: TimerId,
        /// Delay in [the embedder's time unit](crate#timers).
        after: u64,
    },
    /// Stop timer `timer`; a later `Timeout(timer)` would be ignored anyway.
    CancelTimer {
        /// The timer.
        timer: TimerId,
    },
    /// The node ignored a peer's input (or part of it). Purely informational.
    Anomaly {
        /// The peer whose input was ignored.
        from: NodeId,
        /// What was wrong with it.
        kind: Anomaly,
    },
}
