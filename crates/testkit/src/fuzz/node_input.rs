//! What the single-node fuzz bodies share: arbitrary ids, heights and local events, and the
//! driver that feeds one node its events and checks the core's rules (`DESIGN.md`) on each:
//! no panic; `handle` is deterministic; only local misuse returns `Err`, always does, and
//! leaves the node unchanged; peer input never returns `Err`; and the algorithm's local
//! consistency holds after every accepted event.

use std::fmt::Debug;

use arbitrary::Arbitrary;
use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol, TimerId};

/// Events beyond this are ignored, so one input is one bounded run.
const MAX_EVENTS: usize = 256;

/// A node id: mostly one of the first six (so that it is often a neighbour), sometimes any.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub(super) enum Peer {
    /// Node `v % 6`.
    Near(u8),
    /// Any node.
    Any(u32),
}

impl Peer {
    /// The node id.
    pub(super) fn id(self) -> NodeId {
        match self {
            Peer::Near(v) => NodeId(u32::from(v % 6)),
            Peer::Any(v) => NodeId(v),
        }
    }

    /// `msg` arriving from this peer.
    pub(super) fn sends<M>(self, msg: M) -> Event<M> {
        Event::Receive {
            from: self.id(),
            msg,
        }
    }
}

/// Events from the application, the link layer, timers and the host.
#[derive(Debug, Clone, Copy, Arbitrary)]
#[allow(missing_docs)] // one variant per `Event` variant of the same name
pub(super) enum Local {
    Request { resources: u32, priority: u32 },
    Release,
    LinkUp(Peer),
    LinkDown(Peer),
    Timeout(u64),
    Doze,
    Wake,
    Disconnect,
    Reconnect,
    Leave,
}

impl Local {
    /// The event.
    pub(super) fn event<M>(self) -> Event<M> {
        match self {
            Local::Request {
                resources,
                priority,
            } => Event::Request(CsRequest {
                resources,
                priority,
            }),
            Local::Release => Event::Release,
            Local::LinkUp(p) => Event::LinkUp(p.id()),
            Local::LinkDown(p) => Event::LinkDown(p.id()),
            Local::Timeout(t) => Event::Timeout(TimerId(t)),
            Local::Doze => Event::Doze,
            Local::Wake => Event::Wake,
            Local::Disconnect => Event::Disconnect,
            Local::Reconnect => Event::Reconnect,
            Local::Leave => Event::Leave,
        }
    }
}

/// Feed `events` to `node` one by one and check the rules above. `misuse` says whether an
/// event is local misuse in the node's state before it (the only case `Err` is allowed, and
/// required); `consistent` is the algorithm's local consistency after an accepted event, given
/// the actions it produced.
pub(super) fn drive<P>(
    mut node: P,
    events: impl IntoIterator<Item = Event<P::Message>>,
    misuse: impl Fn(&P, &Event<P::Message>) -> bool,
    consistent: impl Fn(&P, &[Action<P::Message>]) -> Result<(), String>,
) where
    P: Protocol + Clone + PartialEq + Debug,
{
    for (i, event) in events.into_iter().take(MAX_EVENTS).enumerate() {
        let misuse = misuse(&node, &event);
        let before = node.clone();
        let mut twin = node.clone();
        let outcome = node
            .handle(event.clone())
            .map(|actions| actions.collect::<Vec<_>>());
        let twin_outcome = twin
            .handle(event.clone())
            .map(|actions| actions.collect::<Vec<_>>());
        assert_eq!(
            outcome, twin_outcome,
            "event {i} ({event:?}): handle is not deterministic"
        );
        assert!(
            node == twin,
            "event {i} ({event:?}): handle is not deterministic"
        );
        match outcome {
            Err(e) => {
                assert!(misuse, "event {i} ({event:?}) rejected: {e}");
                assert!(
                    node == before,
                    "event {i} ({event:?}) returned {e} but changed the node"
                );
            }
            Ok(actions) => {
                assert!(
                    !misuse,
                    "event {i} ({event:?}) accepted although it is misuse"
                );
                if let Err(e) = consistent(&node, &actions) {
                    panic!("after event {i} ({event:?}): {e}\n{node:?}");
                }
            }
        }
    }
}
