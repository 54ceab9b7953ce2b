//! What goes into a node ([`Event`]) and what comes out ([`Action`]).

use crate::{Fence, NodeId};

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
    /// The application withdraws its waiting request (only while `Waiting`; the node returns
    /// to the remainder section and never enters for that request).
    Cancel,
    /// A failure detector suspects that `peer` crashed (permission algorithms): the node stops
    /// waiting for it. What a wrong suspicion costs: the crate's
    /// [failure model](crate#failure-model).
    Suspect(NodeId),
    /// A failure detector trusts `peer` again after a [`Suspect`](Event::Suspect): the node
    /// counts it again (permission algorithms).
    Trust(NodeId),
    /// The host leaves the system for good (`docs/ALGORITHMS.md`, L1–L4): this node object
    /// takes no further requests, and a host that comes back is a restart (a new
    /// incarnation). Only in the remainder section (release or cancel first). What the node
    /// does so that nobody waits for it: a token algorithm hands every token it holds to a
    /// neighbour; a permission algorithm tells every host that it is gone (look-ahead: its
    /// DISCONNECT). The node reports [`Report::Left`] once nothing it holds is needed by
    /// another host; the embedder may stop it then, and should keep driving it until then.
    Leave,
    /// The protected resource refused `fence` because it had admitted `newest`, a later fence
    /// of the same unit or `fence` itself (token algorithms with recovery). It happens when a
    /// newer generation of the token was made and used, then lost (its maker crashed, or is cut
    /// off) while an older one lived on: every fence of the older generation is refused from
    /// then on; and `newest == fence` when a second copy of the generation issued the fence
    /// first (a host restarted with its initial tokens, F14). The node
    /// moves the token it holds for that unit to a generation above `newest`'s (reported as
    /// [`Report::TokenRenumbered`]), so later entries are admitted (`docs/ALGORITHMS.md`,
    /// F10). The refused entry itself stays refused: leave and ask again.
    Refused {
        /// The fence the resource refused.
        fence: Fence,
        /// The latest fence it had admitted for the same unit.
        newest: Fence,
    },
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
            Event::Cancel => "Cancel",
            Event::Suspect(_) => "Suspect",
            Event::Trust(_) => "Trust",
            Event::Refused { .. } => "Refused",
            Event::Leave => "Leave",
        }
    }
}

/// Why a node ignored (part of) a peer's input. Reported in [`Action::Anomaly`] so an embedder
/// can log or count it; the node's state stays consistent either way.
///
/// Some kinds are everyday noise, others never occur while the contract holds; for two of them
/// which it is depends on the algorithm, so a node type answers it:
/// [`Protocol::anomaly_severity`](crate::Protocol::anomaly_severity). Each variant names its
/// [`Severity`] per algorithm family, with the evidence; the crate's
/// [driving contract](crate#anomalies) tables them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Anomaly {
    /// The sender is not a current neighbour (token algorithms) or not a host of the system
    /// (permission algorithms: an id from `hosts` up, or the node's own).
    ///
    /// Token algorithms: [`Noise`](Severity::Noise). Each end of a link learns of its
    /// formation and failure at its own time, so a peer's first message may arrive before the
    /// receiver's own `LinkUp`, and a message sent before the sender learned of a failure after
    /// the receiver's `LinkDown`; the crate's fault-free runs with one-sided link events report
    /// it hundreds of times. Permission algorithms: [`Suspect`](Severity::Suspect). Every host
    /// may message every host, so only a transport that names a sender outside the system (a
    /// driver bug, or a corrupted header) causes it; no fault-free run reports it.
    UnknownPeer,
    /// The message carries a value outside its valid range (e.g. a height triple naming another
    /// node, `t > k`, a KRL token id held already or not below `k`), fails its check word, or
    /// carries fence copies of which no two agree ([`FenceCopies`](crate::FenceCopies)).
    ///
    /// [`Suspect`](Severity::Suspect) in every algorithm: correct peers send only values in
    /// range, so it means corruption on the way or a forged message. The crate's runs report
    /// it only when they corrupt fields.
    OutOfRange,
    /// The message is stale or a duplicate of one already processed.
    ///
    /// [`Noise`](Severity::Noise) in every algorithm: a REQUEST crossing a token or a
    /// reversal, an uphill REQUEST, a late retransmission or duplicate, an announcement
    /// overtaken by a newer one. Fault-free runs of all four algorithms report it.
    Stale,
    /// The message is valid but unexpected in the node's current state.
    ///
    /// Permission algorithms: [`Noise`](Severity::Noise), a REPLY reaching a host that no
    /// longer waits. A host whose timer fires before a REPLY arrives asks again and gets a
    /// second REPLY after it entered; the crate's runs report it with reliable delivery as
    /// soon as timers fire. Prioritized: [`Suspect`](Severity::Suspect), a TOKEN reaching the
    /// token holder: there is one token, so it is a duplicate or a forgery (the fault-free
    /// churn proptest asserts it never happens). KRL does not report it.
    Unexpected,
    /// A link event that changes nothing: `LinkDown` for a peer without a link (a stranger, or
    /// a link already reported down), or `LinkUp` naming the node itself. (A `LinkUp` for a
    /// link that is up is a keepalive, not an anomaly.) Token algorithms only.
    ///
    /// [`Noise`](Severity::Noise): the node is left exactly as it was, and a link layer that
    /// reports a failure twice, or the failure of a link it never reported up, is within
    /// reason. A `LinkUp` naming the node itself is a driver bug, but the report tells it
    /// apart: its `from` is the node's own id.
    RedundantLinkEvent,
}

/// What an [`Anomaly`] says about the system, as an algorithm reads it
/// ([`Protocol::anomaly_severity`](crate::Protocol::anomaly_severity)): whether to count it or
/// to look into it. Ordered by concern, `Noise < Suspect`, so the worst of several is their
/// maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Severity {
    /// Harmless protocol noise: runs in which the driver, the network and every peer keep the
    /// algorithm's contract produce it (crossings, retransmissions, duplicates, one-sided link
    /// events). Count it; on its own it says nothing is wrong.
    Noise,
    /// Never produced while the contract holds: a corrupted or forged message, or a driver
    /// that breaks the contract (a sender outside the system, a duplicated token). The node
    /// ignored it and stays consistent, but something outside it is wrong.
    Suspect,
}

impl Severity {
    /// Whether this is [`Severity::Noise`].
    pub const fn is_noise(self) -> bool {
        matches!(self, Severity::Noise)
    }
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
        /// The fencing token of this entry: a protected resource keeps the highest `value` it
        /// accepted per `lane` and refuses anything not above it ([`crate::fence`] says what
        /// each algorithm guarantees).
        fence: Fence,
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
    /// The lease of the entry made under `fence` ended while the node is still in the critical
    /// section: the application must stop acting on the protected resource under this fence
    /// now, because from here on another holder may be granted the same unit
    /// (the crate's [failure model](crate#failure-model)). The node stays `Critical` until
    /// `Release`.
    LeaseExpired {
        /// The fence of the entry whose lease ended.
        fence: Fence,
    },
    /// Majority mode ([`Recovery::with_majority`](crate::token::Recovery::with_majority)):
    /// the node promised a claim. The embedder must store `promised` durably (replacing the
    /// node's earlier promise for its token id) before it carries out any action after this
    /// one, since the promise's messages follow, and give the stored promises back when the
    /// node restarts (`Config::with_promises`): a restarted node that forgot a promise could
    /// promise a second claim of the same round (`docs/ALGORITHMS.md`, F9).
    Persist {
        /// The promise to store.
        promised: crate::token::Promised,
    },
    /// Something the embedder should know about recovery happened (a token regenerated or
    /// destroyed, a peer excluded or readmitted). Informational, like `Anomaly`.
    Report(Report),
    /// The node ignored a peer's input (or part of it). Purely informational; whether it is
    /// noise: [`Protocol::anomaly_severity`](crate::Protocol::anomaly_severity).
    Anomaly {
        /// The peer whose input was ignored.
        from: NodeId,
        /// What was wrong with it.
        kind: Anomaly,
    },
}

/// What recovery did, reported in [`Action::Report`]
/// (the crate's [failure model](crate#failure-model)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Report {
    /// The node made a new generation of a token it concluded was lost: `fence` is the first
    /// fence of the new generation (its lane the token's id).
    TokenRegenerated {
        /// The new generation's first fence.
        fence: Fence,
    },
    /// The node moved the token it holds to a new generation after a refusal
    /// ([`Event::Refused`]): the same token, not a new one; `fence` is the new generation's
    /// first fence.
    TokenRenumbered {
        /// The new generation's first fence.
        fence: Fence,
    },
    /// The node destroyed a token of an older generation than one it knows (a token from
    /// before a regeneration, met after a merge or a late delivery): it is never used.
    TokenDestroyed {
        /// The destroyed token's fence.
        fence: Fence,
    },
    /// The node no longer waits for `peer` ([`Event::Suspect`], or a timeout of its own).
    PeerExcluded(NodeId),
    /// The node counts `peer` again ([`Event::Trust`], or a valid message from it).
    PeerReadmitted(NodeId),
    /// The node left ([`Event::Leave`]): nothing it holds is needed by another host any
    /// more (its tokens were handed over and acknowledged, or its departure announced), so
    /// the embedder may stop it.
    Left,
}

#[cfg(test)]
mod tests {
    use super::{Anomaly, Severity};
    use crate::{look_ahead, prioritized, reverse_link, ricart_agrawala, Protocol};

    const KINDS: [Anomaly; 5] = [
        Anomaly::UnknownPeer,
        Anomaly::OutOfRange,
        Anomaly::Stale,
        Anomaly::Unexpected,
        Anomaly::RedundantLinkEvent,
    ];

    fn noise<P: Protocol>() -> [bool; 5] {
        KINDS.map(|kind| P::anomaly_severity(kind).is_noise())
    }

    #[test]
    fn each_algorithm_family_reads_anomalies_by_its_contract() {
        // UnknownPeer, OutOfRange, Stale, Unexpected, RedundantLinkEvent.
        let token = [true, false, true, false, true];
        let permission = [false, false, true, true, false];
        assert_eq!(noise::<reverse_link::Node>(), token);
        assert_eq!(noise::<prioritized::Node>(), token);
        assert_eq!(noise::<look_ahead::Node>(), permission);
        assert_eq!(noise::<ricart_agrawala::Node>(), permission);
    }

    /// A protocol outside the crate gets the classification common to all four algorithms.
    #[test]
    fn the_provided_classification_takes_only_what_is_noise_everywhere() {
        struct Bare;
        impl Protocol for Bare {
            type Message = ();
            fn id(&self) -> crate::NodeId {
                crate::NodeId(0)
            }
            fn status(&self) -> crate::Status {
                crate::Status::Remainder
            }
            fn handle(
                &mut self,
                _: crate::Event<()>,
            ) -> Result<crate::Actions<'_, ()>, crate::Error> {
                Err(crate::Error::Unsupported("any"))
            }
        }
        assert_eq!(noise::<Bare>(), [false, false, true, false, true]);
        assert!(Severity::Noise < Severity::Suspect);
        assert!(!Severity::Suspect.is_noise());
    }
}
