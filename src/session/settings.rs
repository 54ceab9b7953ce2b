//! What a session is configured with ([`Settings`]), what it counts ([`Stats`]), and its
//! errors ([`SessionError`]).

use crate::NodeId;

/// A session's timeouts and bounds. Times are in the embedder's unit (whatever its `now`
/// counts); both ends of a link should use the same settings.
///
/// Build with [`Settings::new`] and the `with_*` methods; [`crate::session::Session::new`]
/// checks them ([`Settings::validate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Settings {
    /// Resend unacknowledged data frames (and an unanswered `Hello` or `Close`) this long after
    /// the last send or progress. At least 1; should exceed the round-trip time, or frames are
    /// sent twice (harmless: duplicates are dropped).
    pub retransmit_after: u64,
    /// A link whose peer sent nothing valid for this long, or whose oldest unacknowledged
    /// data made no progress for this long, has failed; a link still forming after this long
    /// starts over. Must exceed `retransmit_after` and `keepalive_after`.
    pub liveness_after: u64,
    /// An up link on which nothing was sent for this long gets a keepalive (an `Ack`); a peer
    /// not heard from for this long plus `retransmit_after` is probed with a `Hello` (which it
    /// answers) every `retransmit_after`. At least 1 and below `liveness_after`;
    /// [`Settings::new`] takes a quarter of the liveness timeout.
    pub keepalive_after: u64,
    /// Data frames in flight per link and direction (sent, not yet acknowledged), and the size
    /// of the receiver's reorder buffer. `1..=`[`Settings::MAX_WINDOW`]. A core's messages
    /// beyond it wait, in order, until acknowledgements make room.
    pub window: u32,
    /// Peers the session keeps state for (linked, forming or remembered), at least 1. A
    /// `Hello` from a new peer when the table is full is dropped (counted in
    /// [`Stats::refused`]), unless an entry without a link and not wanted can be forgotten.
    pub max_peers: u32,
}

impl Settings {
    /// The largest window.
    pub const MAX_WINDOW: u32 = 4096;
    /// The default peer table size.
    pub const DEFAULT_MAX_PEERS: u32 = 64;

    /// Retransmission after `retransmit_after`, failure after `liveness_after` of silence,
    /// `window` frames in flight; keepalives every quarter of the liveness timeout (at least
    /// 1), [`Settings::DEFAULT_MAX_PEERS`] peers.
    pub const fn new(retransmit_after: u64, liveness_after: u64, window: u32) -> Self {
        let keepalive_after = if liveness_after / 4 == 0 {
            1
        } else {
            liveness_after / 4
        };
        Settings {
            retransmit_after,
            liveness_after,
            keepalive_after,
            window,
            max_peers: Self::DEFAULT_MAX_PEERS,
        }
    }

    /// With keepalives after `after` idle time units.
    pub const fn with_keepalive(self, after: u64) -> Self {
        Settings {
            keepalive_after: after,
            ..self
        }
    }

    /// With room for `peers` peers.
    pub const fn with_max_peers(self, peers: u32) -> Self {
        Settings {
            max_peers: peers,
            ..self
        }
    }

    /// Whether the settings are usable; the first problem found otherwise.
    pub fn validate(&self) -> Result<(), SessionError> {
        let problem = if self.retransmit_after == 0 {
            "retransmit_after must be at least 1"
        } else if self.liveness_after <= self.retransmit_after {
            "liveness_after must exceed retransmit_after (a lost frame must get a retransmission before the link is declared failed)"
        } else if self.keepalive_after == 0 || self.keepalive_after >= self.liveness_after {
            "keepalive_after must be at least 1 and below liveness_after (an idle link must be confirmed before the peer declares it failed)"
        } else if self.window == 0 || self.window > Self::MAX_WINDOW {
            "window must be 1..=Settings::MAX_WINDOW"
        } else if self.max_peers == 0 {
            "max_peers must be at least 1"
        } else {
            return Ok(());
        };
        Err(SessionError::InvalidSettings(problem))
    }
}

/// Local misuse of a session, or invalid settings. Bad frames from peers never cause one: they
/// are counted in [`Stats`] and dropped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The settings are unusable; the reason says which rule they break.
    #[error("invalid session settings: {0}")]
    InvalidSettings(&'static str),
    /// The core sent to a peer it was not told is linked (no `LinkUp` handed out since the
    /// last `LinkDown`).
    #[error("no link to {0} is up as far as the core was told")]
    NotLinked(NodeId),
    /// The session's own id named as a peer.
    #[error("{0} is the session's own id, not a peer")]
    OwnId(NodeId),
    /// `connect` found the peer table full of peers that cannot be forgotten.
    #[error("the peer table is full ({0} peers)")]
    PeerTableFull(u32),
}

/// What a session counted: traffic, bad input (dropped, never acted on), links and losses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Stats {
    /// Data frames sent for the first time.
    pub data_sent: u64,
    /// Data frames sent again after a retransmission timeout.
    pub retransmitted: u64,
    /// Messages delivered to the core.
    pub delivered: u64,
    /// Data frames already delivered or already buffered (answered with an `Ack`).
    pub duplicates: u64,
    /// Data frames beyond the reorder window (dropped unanswered).
    pub out_of_window: u64,
    /// Frames of another (earlier) incarnation, or that cannot matter any more.
    pub stale: u64,
    /// Frames naming a newer epoch of the peer than the current incarnation's (a restarted
    /// peer's, or garbage): each makes the session probe the peer (at most once a
    /// retransmission timeout); none ends the incarnation.
    pub newer_epoch: u64,
    /// Frames other than `Hello` from peers without a link.
    pub unknown_peer: u64,
    /// `Hello`s from new peers dropped because the peer table was full.
    pub refused: u64,
    /// Impossible frames: from the session's own id, naming an epoch it never gave the
    /// sender, acknowledging data never sent, data numbered 0 or past the sender's `Close`,
    /// a `Close` that does not match what was delivered, a `CloseAck` for no `Close`.
    pub malformed: u64,
    /// Links that came up (`LinkUp` to the core).
    pub links_up: u64,
    /// Incarnations closed by the close handshake (both directions agreed, nothing lost).
    pub links_closed: u64,
    /// Incarnations abandoned: the peer fell silent or stopped acknowledging; whatever was
    /// unacknowledged is reported lost.
    pub links_abandoned: u64,
    /// Link formations that did not complete within the liveness timeout (started again if
    /// the peer is wanted).
    pub handshakes_expired: u64,
    /// Messages reported in [`crate::session::SessionEvent::Lost`].
    pub lost: u64,
    /// Of those, the ones the session's precious predicate marks (tokens, resources).
    pub lost_precious: u64,
}
