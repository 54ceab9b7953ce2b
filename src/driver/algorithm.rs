//! What the driver needs to know of an algorithm: whether its core runs over link sessions,
//! which of its messages are precious, and which peers exist.

use crate::codec::Wire;
use crate::{look_ahead, prioritized, reverse_link, ricart_agrawala, NodeId, Protocol, Status};

mod private {
    pub trait Sealed {}
}

/// An algorithm the [driver](super) can run: the four node types of this crate (sealed).
pub trait Algorithm: Protocol + Sized + private::Sealed
where
    Self::Message: Wire,
{
    /// Whether the core needs the link contract (token algorithms): its messages travel over
    /// a [`Session`](crate::session::Session) per node, which discovery or the embedder
    /// feeds. Otherwise (permission algorithms) they travel as datagrams, directly.
    const LINKED: bool;

    /// Whether a lost message matters most (a token, resources): the session's precious
    /// predicate.
    fn precious(msg: &Self::Message) -> bool;

    /// Whether `peer` is another host the core can hear from. The token cores learn their
    /// neighbours from the session, which decides (every id); the permission cores know
    /// their hosts, `0..hosts`.
    fn knows(&self, peer: NodeId) -> bool;

    /// How many hosts the network has, `0..hosts`, if the core knows: the permission cores
    /// do (they need every host's REPLY, so every host needs an address); the token cores
    /// do not (they learn their neighbours), `None`.
    fn hosts(&self) -> Option<u32>;

    /// Whether this node's waiting request waits on `peer` now: a permission core's
    /// outstanding REPLY from it, a token core's request sent towards it (its `next`).
    /// `false` while no request waits. Reads the core's state only (no allocation), for an
    /// embedder that reports who a request waits for (`manet_mutex_tokio`'s per-peer state).
    fn waits_on(&self, peer: NodeId) -> bool;
}

impl private::Sealed for reverse_link::Node {}
impl Algorithm for reverse_link::Node {
    const LINKED: bool = true;
    fn precious(msg: &reverse_link::Message) -> bool {
        msg.is_token()
    }
    fn knows(&self, peer: NodeId) -> bool {
        peer != self.id()
    }
    fn hosts(&self) -> Option<u32> {
        None
    }
    fn waits_on(&self, peer: NodeId) -> bool {
        self.status() == Status::Waiting && peer != self.id() && self.next() == Some(peer)
    }
}

impl private::Sealed for prioritized::Node {}
impl Algorithm for prioritized::Node {
    const LINKED: bool = true;
    fn precious(msg: &prioritized::Message) -> bool {
        msg.carries_resources()
    }
    fn knows(&self, peer: NodeId) -> bool {
        peer != self.id()
    }
    fn hosts(&self) -> Option<u32> {
        None
    }
    fn waits_on(&self, peer: NodeId) -> bool {
        self.status() == Status::Waiting && peer != self.id() && self.next() == Some(peer)
    }
}

impl private::Sealed for look_ahead::Node {}
impl Algorithm for look_ahead::Node {
    const LINKED: bool = false;
    fn precious(_: &look_ahead::Message) -> bool {
        false
    }
    fn knows(&self, peer: NodeId) -> bool {
        peer != self.id() && peer.0 < self.settings().hosts
    }
    fn hosts(&self) -> Option<u32> {
        Some(self.settings().hosts)
    }
    fn waits_on(&self, peer: NodeId) -> bool {
        self.status() == Status::Waiting && self.outstanding().any(|p| p == peer)
    }
}

impl private::Sealed for ricart_agrawala::Node {}
impl Algorithm for ricart_agrawala::Node {
    const LINKED: bool = false;
    fn precious(_: &ricart_agrawala::Message) -> bool {
        false
    }
    fn knows(&self, peer: NodeId) -> bool {
        peer != self.id() && peer.0 < self.settings().hosts
    }
    fn hosts(&self) -> Option<u32> {
        Some(self.settings().hosts)
    }
    fn waits_on(&self, peer: NodeId) -> bool {
        self.status() == Status::Waiting && self.outstanding().any(|p| p == peer)
    }
}
