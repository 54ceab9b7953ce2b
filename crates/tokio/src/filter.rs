//! The datagram filter ([`Builder::filter`](crate::Builder::filter)): fault injection and
//! firewalls, in front of the socket.

use std::net::SocketAddr;

/// Which way a filtered datagram goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Direction {
    /// Received by the socket, not yet handed to the driver.
    In,
    /// From the driver, not yet handed to the socket.
    Out,
}

/// What the filter decides for a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verdict {
    /// Let it through.
    Keep,
    /// Drop it (counted in [`Stats::filtered_in`](crate::Stats::filtered_in) or
    /// [`Stats::filtered_out`](crate::Stats::filtered_out)).
    Drop,
}

/// The filter as the task holds it: called with the direction, the peer's address (the
/// sender's for [`Direction::In`], the destination's for [`Direction::Out`]) and the bytes.
pub(crate) type Filter = Box<dyn FnMut(Direction, SocketAddr, &[u8]) -> Verdict + Send>;
