//! What a session is configured with ([`Settings`]), what it counts ([`Stats`]), and its
//! errors ([`SessionError`]).

use crate::NodeId;

/// A session's timeouts and bounds. Times are in the embedder's unit (whatever its `now`
/// counts); both ends of a link should use the same settings.
///
/// Start from [`Settings::DEFAULT`] (also what [`Settings::default`] returns: timers for a
/// radio network, in milliseconds) or build with [`Settings::new`]; adjust with the `with_*`
/// methods. [`crate::session::Session::new`] checks them ([`Settings::validate`]).
///
/// | field | unit | [`Settings::DEFAULT`] | [`Settings::new`] |
/// | --- | --- | --- | --- |
/// | [`retransmit_after`](Settings::retransmit_after) | time | 20 | given |
/// | [`liveness_after`](Settings::liveness_after) | time | 400 | given |
/// | [`keepalive_after`](Settings::keepalive_after) | time | 100 | `liveness_after / 4` (at least 1) |
/// | [`max_backoff`](Settings::max_backoff) | time | 1000 | `liveness_after * 5 / 2` (at least `retransmit_after`) |
/// | [`window`](Settings::window) | frames | 32 | given |
/// | [`max_peers`](Settings::max_peers) | peers | 64 | [`Settings::DEFAULT_MAX_PEERS`] |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Settings {
    /// Resend unacknowledged data frames (and an unanswered `Close`) this long after the last
    /// send or progress; the first repetition of an unanswered `Hello` comes this long after
    /// it, later ones back off up to [`Settings::max_backoff`]. In the embedder's time unit,
    /// at least 1; default 20 (ms: above the round trip of a few radio hops). Should exceed
    /// the round-trip time, or frames are sent twice (harmless: duplicates are dropped).
    pub retransmit_after: u64,
    /// A link whose peer sent nothing valid for this long, or whose oldest unacknowledged
    /// data made no progress for this long, has failed; a link still forming after this long
    /// starts over (keeping its `Hello`s' back-off). In the embedder's time unit; must exceed
    /// `retransmit_after` and `keepalive_after`. Default 400 (ms: twenty retransmission
    /// timeouts, so a link rides out a burst of nineteen lost frames, and a broken one is
    /// noticed within 0.4 s, well within how long links last between nodes at walking or
    /// driving speed with a radio range of tens of metres or more).
    pub liveness_after: u64,
    /// An up link on which nothing was sent for this long gets a keepalive (an `Ack`); a peer
    /// not heard from for this long plus `retransmit_after` is probed with a `Hello` (which it
    /// answers) every `retransmit_after`, without back-off. In the embedder's time unit, at
    /// least 1 and below `liveness_after`. Default 100 (ms: a quarter of the liveness
    /// timeout, the rule of [`Settings::new`]: an idle link is confirmed about four times
    /// before its peer would declare it failed).
    pub keepalive_after: u64,
    /// The longest wait between two unanswered `Hello`s to a peer that does not answer: a
    /// forming link repeats its `Hello` after `retransmit_after`, then after twice as long,
    /// and so on, doubling up to this cap; any frame the forming link takes or answers from
    /// the peer starts it over from `retransmit_after`. A wanted peer out of reach costs one
    /// `Hello` per `max_backoff` once backed off, and a link to it forms again within
    /// `max_backoff` and two round trips after it comes back in reach (see the
    /// [module docs](crate::session#what-the-session-guarantees)). In the embedder's time
    /// unit, at least `retransmit_after` (equal: no back-off). Default 1000 (ms: one `Hello`
    /// a second to an unreachable neighbour, a tenth of what an idle link's keepalives cost,
    /// and a returning neighbour linked again within about a second).
    pub max_backoff: u64,
    /// Data frames in flight per link and direction (sent, not yet acknowledged), and the size
    /// of the receiver's reorder buffer. `1..=`[`Settings::MAX_WINDOW`]. A core's messages
    /// beyond it wait, in order, until acknowledgements make room. Default 32 (frames: a burst
    /// of that many core messages on one link goes out at once; the reorder buffer, allocated
    /// on a link's first gap, holds 32 messages).
    pub window: u32,
    /// Peers the session keeps state for (linked, forming or remembered), at least 1. A
    /// `Hello` from a new peer when the table is full is dropped (counted in
    /// [`Stats::refused`]), unless an entry without a link and not wanted can be forgotten.
    /// Default [`Settings::DEFAULT_MAX_PEERS`] (64).
    pub max_peers: u32,
}

impl Settings {
    /// The largest window.
    pub const MAX_WINDOW: u32 = 4096;
    /// The default peer table size.
    pub const DEFAULT_MAX_PEERS: u32 = 64;
    /// Timers for a radio network with the embedder's time unit the millisecond: resend after
    /// 20, fail after 400 of silence, keepalives after 100 idle, `Hello`s to an unanswering
    /// peer backing off up to 1000 apart, 32 frames in flight,
    /// [`Settings::DEFAULT_MAX_PEERS`] peers (each field's documentation says why). The same
    /// as `Settings::new(20, 400, 32)`, and what [`Settings::default`] returns. In another
    /// unit, scale the times (or use [`Settings::new`]).
    pub const DEFAULT: Settings = Settings::new(20, 400, 32);

    /// Retransmission after `retransmit_after`, failure after `liveness_after` of silence,
    /// `window` frames in flight; keepalives every quarter of the liveness timeout (at least
    /// 1), `Hello` back-off up to two and a half liveness timeouts (at least
    /// `retransmit_after`), [`Settings::DEFAULT_MAX_PEERS`] peers.
    pub const fn new(retransmit_after: u64, liveness_after: u64, window: u32) -> Self {
        let keepalive_after = if liveness_after / 4 == 0 {
            1
        } else {
            liveness_after / 4
        };
        let backoff = liveness_after.saturating_mul(5) / 2;
        let max_backoff = if backoff < retransmit_after {
            retransmit_after
        } else {
            backoff
        };
        Settings {
            retransmit_after,
            liveness_after,
            keepalive_after,
            max_backoff,
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

    /// With unanswered `Hello`s backing off up to `after` time units apart
    /// ([`Settings::max_backoff`]; `retransmit_after` turns the back-off off).
    pub const fn with_max_backoff(self, after: u64) -> Self {
        Settings {
            max_backoff: after,
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
        } else if self.max_backoff < self.retransmit_after {
            "max_backoff must be at least retransmit_after (the back-off only ever lengthens the wait between Hellos)"
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

impl Default for Settings {
    /// [`Settings::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
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
    /// `Hello`s sent: a forming link's first and repeated ones (backing off, see
    /// [`Settings::max_backoff`]), answers to the peer's, and probes of an up link.
    pub hellos: u64,
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
