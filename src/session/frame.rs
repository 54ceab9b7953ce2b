//! The frames sessions exchange, and the datagrams that carry them. Frames are plain data: a
//! codec (bytes on the wire, check sums) is the embedder's, or a separate module's, business.

use crate::NodeId;

/// The incarnation of a link a frame belongs to, as its sender names it: the sender's own
/// epoch for the link, and the receiver's epoch as far as the sender knows it (0 while it
/// does not). Every end takes a fresh epoch, larger than any it used before, for each new
/// incarnation, so the pair names one incarnation: a frame is taken only by the incarnation
/// whose pair it carries, never by an earlier or later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Epochs {
    /// The sender's epoch for this incarnation (never 0 from a correct session).
    pub sender: u64,
    /// The receiver's epoch, as the sender knows it; 0 if it does not know it yet.
    pub receiver: u64,
}

/// One frame between two sessions. `M` is the core's message type.
///
/// Sequence numbers count the data frames of one direction of one incarnation from 1; an
/// acknowledgement is cumulative (every data frame up to `seq` was delivered).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[non_exhaustive]
pub enum Frame<M> {
    /// Link formation: "here is my epoch; this is yours as I know it". Sent while forming a
    /// link, again until the peer confirms (after a retransmission timeout, then backing off:
    /// see [`crate::session::Settings::max_backoff`]), and in answer to a peer's `Hello` that
    /// does not know our epoch yet. Answered by an `Ack` once the link is up at the receiver;
    /// so it is also the probe of an up link whose peer's keepalive is overdue, or that a
    /// frame naming a newer epoch of the peer put in doubt.
    Hello {
        /// The incarnation.
        epochs: Epochs,
    },
    /// A core message, number `seq` (from 1) of the sender's direction of the incarnation.
    Data {
        /// The incarnation.
        epochs: Epochs,
        /// Its number.
        seq: u64,
        /// The core's message.
        msg: M,
    },
    /// Every data frame up to `seq` was delivered to the receiver's core, in order (cumulative;
    /// 0 when none was). Also the keepalive of an idle link and the answer to a `Hello` that
    /// completes a link.
    Ack {
        /// The incarnation.
        epochs: Epochs,
        /// The highest sequence number delivered in order.
        seq: u64,
    },
    /// The sender has closed its direction of the incarnation: its core was told the link is
    /// down, everything it sent was acknowledged, and `last` was its last data frame. Repeated
    /// every retransmission timeout until answered by a `CloseAck`.
    Close {
        /// The incarnation.
        epochs: Epochs,
        /// The sender's last sequence number (0 if it sent no data).
        last: u64,
    },
    /// The answer to a `Close`: the receiver knows the sender's direction is closed.
    CloseAck {
        /// The incarnation.
        epochs: Epochs,
    },
}

impl<M> Frame<M> {
    /// The incarnation the frame names.
    pub fn epochs(&self) -> Epochs {
        match *self {
            Frame::Hello { epochs }
            | Frame::Data { epochs, .. }
            | Frame::Ack { epochs, .. }
            | Frame::Close { epochs, .. }
            | Frame::CloseAck { epochs } => epochs,
        }
    }

    /// A short name for the frame kind, for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Frame::Hello { .. } => "Hello",
            Frame::Data { .. } => "Data",
            Frame::Ack { .. } => "Ack",
            Frame::Close { .. } => "Close",
            Frame::CloseAck { .. } => "CloseAck",
        }
    }
}

/// A frame that arrived from the transport, with its link-layer source.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Datagram<M> {
    /// The peer it came from (as the transport knows it).
    pub from: NodeId,
    /// The frame.
    pub frame: Frame<M>,
}

/// A frame for the transport to send to one peer (best effort: it may be lost, duplicated,
/// delayed or reordered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit<M> {
    /// The destination.
    pub to: NodeId,
    /// The frame.
    pub frame: Frame<M>,
}
