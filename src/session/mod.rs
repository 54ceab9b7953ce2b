//! A sans-IO link session: runs the token algorithms ([`crate::reverse_link`],
//! [`crate::prioritized`]) over an unreliable datagram transport, giving their cores the link
//! contract they need.
//!
//! One [`Session`] per node sits between the node's core and its datagram transport and
//! manages the links to all its neighbours. Datagrams may be lost, duplicated, reordered and
//! delayed, and peers come and go; the session turns that into what the token algorithms'
//! [link contract](crate::reverse_link#link-contract-the-weakest-this-module-needs) asks for:
//! `LinkUp` and `LinkDown` events, and every message delivered once, in order, within one
//! incarnation of a link. Like the cores it does no I/O and reads no clock: the embedder
//! passes `now` (in any unit, the unit of [`Settings`]) to every call, and asks
//! [`Session::poll_timeout`] when to call [`Session::handle_timeout`].
//!
//! # Inputs and outputs
//!
//! | in | out |
//! | --- | --- |
//! | [`Session::handle_datagram`]: a [`Datagram`] (a [`Frame`] and its source) from the transport | [`Session::poll_transmit`]: a [`Transmit`] (a frame and its destination) for the transport |
//! | [`Session::send`]: the core's [`Action::Send`](crate::Action::Send) | [`Session::poll_event`]: [`SessionEvent::Core`] (`LinkUp`, `LinkDown`, `Receive`) for the core, [`SessionEvent::Lost`] for the application |
//! | [`Session::handle_timeout`]: the time [`Session::poll_timeout`] asked for | |
//! | [`Session::connect`], [`Session::close`]: the application's view of its neighbours | |
//!
//! After every input, drain the events, one at a time: feed each `Core` event to the core and
//! pass the core's `Send` actions to [`Session::send`] before polling the next event (as the
//! cores' driving contract asks for their actions). Then drain the transmits. The session
//! relies on that order: a `LinkDown` is handed out only once the core has consumed every
//! earlier event, so nothing the core sends before it learns of the failure is stranded.
//!
//! # What the session guarantees
//!
//! - **Incarnations.** Each end takes a fresh epoch (a counter, larger than any it used
//!   before) for every new incarnation of a link; every frame names the pair ([`Epochs`]).
//!   A frame is taken only by the incarnation it names, so nothing of one incarnation is
//!   delivered in another, and a message is never sent again in a new incarnation.
//! - **Formation, each end at its own time.** A link forms with a `Hello` exchange; each end
//!   tells its core `LinkUp` once it knows the peer's epoch and that the peer knows its own.
//!   The first message over a new link never reaches the core before that core's `LinkUp`.
//! - **Once, in order.** Data frames are numbered per direction, acknowledged cumulatively and
//!   resent after [`Settings::retransmit_after`]; duplicates are dropped, frames ahead of a
//!   gap wait in a reorder buffer of [`Settings::window`] frames. Each message the core sent
//!   reaches the peer's core at most once, and in order, or is reported lost.
//! - **Closing: `LinkDown` with nothing in flight.** [`Session::close`], or the peer's
//!   `Close`, starts the close handshake. An end tells its core `LinkDown` only once
//!   everything its core sent over the link is acknowledged (delivered), then sends `Close`
//!   with its last number; the incarnation ends when both directions are closed and each
//!   `Close` is answered. The end that closes second does so with nothing in flight either
//!   way; the one that closes first may still receive the other's last messages after its
//!   `LinkDown`, which the link contract allows (a message sent before its sender learned of
//!   the failure: the core drops it, or keeps it if it is a token). Nothing is lost.
//! - **Failure: loss detected and reported, never duplicated.** A peer silent for
//!   [`Settings::liveness_after`] (no valid frame of the incarnation; keepalives go out every
//!   [`Settings::keepalive_after`] on an idle link, and a peer whose keepalive is overdue is
//!   probed every retransmission timeout, without back-off), or unacknowledged data without
//!   progress for that long, ends the incarnation: the core is told `LinkDown`, and
//!   everything it sent that was not acknowledged is handed to the application in
//!   [`SessionEvent::Lost`], with how many of those messages the precious predicate marks
//!   ([`Session::with_precious`]: tokens, resources). A lost message was not acknowledged: it may have reached the peer's
//!   core (an acknowledgement lost) or not; the session never sends it again, so the report
//!   is the only trace and a recovery that regenerates a token must first rule the first case
//!   out. A message the core sends after the failure but before it consumed its `LinkDown` is
//!   reported lost too.
//! - **No frame from outside an incarnation ends it.** An incarnation ends only by its own
//!   close handshake or by the liveness rule above (silence, or data without progress); no
//!   single frame naming another incarnation ends, resets or replaces it. A frame naming a
//!   newer epoch of the peer (the `Hello` of a peer that restarted or moved on, or garbage
//!   from its address) is not trusted but checked: the session treats the peer's keepalive as
//!   overdue and probes it at once (at most once a retransmission timeout), then every
//!   retransmission timeout, with a `Hello` of the current incarnation. A live peer answers
//!   within a round trip and the incarnation goes on; a peer that moved on stays silent in
//!   it, so it ends by the liveness rule, with the loss report above, and a new incarnation
//!   forms (the peer's next `Hello` is answered, or ours goes out if the application wants
//!   the peer). While a link forms, only a frame naming our new epoch is taken as the
//!   peer's: a `Hello` naming another is answered, and trusted for nothing else.
//!
//!   *The cost:* a peer that restarted is noticed by its silence, not by its first new
//!   frame. The old incarnation ends at the first [`Session::handle_timeout`] at or after
//!   `heard + liveness_after`, `heard` being when the last frame of that incarnation arrived
//!   (so at most `liveness_after` after the restart, plus however long the network held the
//!   old incarnation's last frames), or earlier if data it did not acknowledge saw no
//!   progress for `liveness_after`. If either end wants the link, a new incarnation forms
//!   within a retransmission timeout and a round trip after that, frames permitting (an end
//!   that wants the link says `Hello` as soon as its incarnation ends; a restarted peer's
//!   forming link answers our probes, and each answer keeps its back-off at one
//!   retransmission timeout). Until the old incarnation ends, what the core sends over it is
//!   reported lost with it.
//! - **Links come back, without a storm.** A peer the application wants
//!   ([`Session::connect`]) is contacted again after every end of an incarnation; a `Hello`
//!   from any peer is answered (a passive link), room permitting. A forming link repeats an
//!   unanswered `Hello` after [`Settings::retransmit_after`], then waits twice as long each
//!   time, up to [`Settings::max_backoff`]. Its handshake still starts over with a fresh
//!   epoch every [`Settings::liveness_after`], keeping the back-off (no `Hello` of its own at
//!   the restart: the next one when it was due). A `Hello` of the peer that the forming link
//!   answers starts the back-off over, and so does a link that was up (its next incarnation
//!   starts from `retransmit_after`: the peer was heard within `liveness_after`).
//!   [`Session::connect`] for a peer with no incarnation starts one with a `Hello` at once and
//!   a fresh back-off (the application's word that the peer is worth contacting counts as an
//!   answer); `connect` while a link forms or is up changes nothing, so calling it again and
//!   again cannot undo the back-off.
//!
//!   *The bound:* a wanted peer out of reach costs about
//!   `log2(max_backoff / retransmit_after) + T / max_backoff` `Hello`s over a time `T` (15
//!   over 10 s with [`Settings::DEFAULT`], where one per retransmission timeout made 500),
//!   and a link to a peer that comes back in reach is up at both ends within `max_backoff`
//!   and two round trips, frames permitting: the `Hello`s of an end that wants the link are
//!   never more than `max_backoff` apart, the first to arrive is answered at once, and the
//!   answer brings the link up (one more round trip if the forming link started over
//!   meanwhile and the answer names its old epoch). A peer that still holds an incarnation
//!   this end gave up (it heard us longer than we heard it) first ends it by the liveness
//!   rule, as above. Data retransmission, a `Close`'s repetition and the probes of an up
//!   link are not backed off: the liveness rule bounds each to about
//!   `liveness_after / retransmit_after` per incarnation, and backing the probes off would
//!   leave a lossy but live link fewer chances to answer before `liveness_after` (a silent
//!   peer is declared failed at the same time either way).
//!
//! # Bad input and limits
//!
//! Frames are untrusted: from unknown peers, of other incarnations, out of the window,
//! acknowledging data never sent, closing with the wrong number, duplicated or replayed. Such
//! frames are counted in [`Stats`] and dropped; no frame makes the session panic, allocate
//! without bound or act on the wrong incarnation. Memory is bounded by
//! [`Settings::max_peers`] entries, each with at most one incarnation holding a reorder buffer
//! of [`Settings::window`] messages and what its own core sent and the peer has not
//! acknowledged (bounded by what the core sends within [`Settings::liveness_after`]: a peer
//! that keeps the link alive without acknowledging is declared failed after that long);
//! checking a newer epoch of the peer keeps nothing of the frame (a flag per incarnation). A
//! frame received is answered by at most two (a new incarnation's `Hello` and the answer to
//! the peer's).
//!
//! Forgery is out of reach: a frame that names the current incarnation exactly (both epochs
//! right) can do what it says (acknowledge what was never delivered, slip in a message,
//! close the link), and while a link forms one naming our epoch is taken as the peer's
//! answer; only authentication in the codec can stop that. A frame naming any other
//! incarnation ends nothing and changes nothing of an incarnation that is up, nor delays its
//! failure detection (the liveness timeout runs from the incarnation's own last frame): it
//! is counted and dropped, and at most answered (a `Hello` while a link forms) or, naming a
//! newer epoch of the peer, it triggers probes (at most one a retransmission timeout,
//! counted in [`Stats::newer_epoch`]). A `Hello` from a peer's address starts the back-off
//! of a link forming with it over: forged ones can bring its `Hello`s back to the rate
//! without back-off (one per retransmission timeout), besides the one answer each gets (as
//! before), no more. One delay remains: a forming link's repeated `Hello`s
//! name the epoch of the last `Hello` it answered, so a garbage `Hello` that arrives just
//! after a peer came up and its confirmation was lost makes the link wait for that peer's
//! next keepalive (within [`Settings::keepalive_after`]) instead of its answer.
//!
//! The epoch counter starts at the value given to [`Session::with_epoch_base`] (default 0). A
//! node that restarts must start above every epoch it used before (a boot counter shifted
//! left, or a clock reading), or its peers take its `Hello`s for stragglers of an old
//! incarnation and ignore them. Its peers notice the restart by the old incarnation's
//! silence, within the bound above.
//!
//! A close completes at the first moment everything the core sent over the link is
//! acknowledged; a core that always has something unacknowledged on it delays the close (the
//! link stays up meanwhile, and nothing is lost).
//!
//! # Example: two sessions driven by hand
//!
//! ```
//! use manet_mutex::session::{Datagram, Session, SessionEvent, Settings};
//! use manet_mutex::{Event, NodeId};
//!
//! type Pair = [Session<&'static str>; 2];
//!
//! /// A transport that loses nothing: move every frame, record every event.
//! fn pump(nodes: &mut Pair, now: u64, seen: &mut Vec<(usize, SessionEvent<&'static str>)>) {
//!     loop {
//!         let mut quiet = true;
//!         for i in 0..2 {
//!             while let Some(event) = nodes[i].poll_event() {
//!                 // An embedder feeds `SessionEvent::Core` events to its core here, and
//!                 // passes the core's `Send` actions to `send`.
//!                 seen.push((i, event));
//!             }
//!             while let Some(t) = nodes[i].poll_transmit() {
//!                 quiet = false;
//!                 let from = nodes[i].id();
//!                 nodes[t.to.index()].handle_datagram(Datagram { from, frame: t.frame }, now);
//!             }
//!         }
//!         if quiet {
//!             return;
//!         }
//!     }
//! }
//!
//! // Resend after 10 time units, fail after 100 of silence, 8 frames in flight.
//! let settings = Settings::new(10, 100, 8);
//! let (a, b) = (NodeId(0), NodeId(1));
//! let mut nodes = [Session::new(a, settings)?, Session::new(b, settings)?];
//! let mut seen = Vec::new();
//!
//! nodes[0].connect(b, 0)?;
//! pump(&mut nodes, 0, &mut seen);
//! assert!(seen.contains(&(0, SessionEvent::Core(Event::LinkUp(b)))));
//! assert!(seen.contains(&(1, SessionEvent::Core(Event::LinkUp(a)))));
//!
//! nodes[0].send(b, "a token", 1)?;
//! pump(&mut nodes, 1, &mut seen);
//! let got = SessionEvent::Core(Event::Receive { from: a, msg: "a token" });
//! assert_eq!(seen.last(), Some(&(1, got)));
//!
//! // A graceful close: both cores are told, nothing is lost.
//! nodes[0].close(b, 2);
//! pump(&mut nodes, 2, &mut seen);
//! assert!(seen.contains(&(0, SessionEvent::Core(Event::LinkDown(b)))));
//! assert!(seen.contains(&(1, SessionEvent::Core(Event::LinkDown(a)))));
//!
//! // A new incarnation; then `b` vanishes with a message in flight.
//! nodes[0].connect(b, 3)?;
//! pump(&mut nodes, 3, &mut seen);
//! nodes[0].send(b, "another token", 4)?;
//! while nodes[0].poll_transmit().is_some() {} // the transport loses everything now
//! let mut lost = None;
//! while lost.is_none() {
//!     let at = nodes[0].poll_timeout().expect("a link is forming or up");
//!     nodes[0].handle_timeout(at); // the retransmissions are lost too
//!     while nodes[0].poll_transmit().is_some() {}
//!     while let Some(event) = nodes[0].poll_event() {
//!         if let SessionEvent::Lost { msgs, .. } = event {
//!             lost = Some((at, msgs));
//!         }
//!     }
//! }
//! // Reported 100 time units after `b` was last heard (at 3), and never sent again.
//! assert_eq!(lost, Some((103, vec!["another token"])));
//! assert_eq!(nodes[0].stats().lost, 1);
//! # Ok::<(), manet_mutex::session::SessionError>(())
//! ```

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;

use crate::{Event, NodeId};

mod frame;
mod link;
mod settings;

pub use frame::{Datagram, Epochs, Frame, Transmit};
pub use link::LinkState;
pub use settings::{SessionError, Settings, Stats};

use link::{Ctx, Peer};

/// What a session hands out: events for the core, and losses for the application.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionEvent<M> {
    /// Feed this to the core: `LinkUp`, `LinkDown` or `Receive`.
    Core(Event<M>),
    /// An incarnation of the link to `peer` ended without the close handshake, and `msgs`,
    /// sent by the core and not acknowledged, are given up, oldest first: each may or may not
    /// have reached the peer's core, and none will be sent again. `precious` of them are
    /// marked by the session's precious predicate (tokens, resources).
    Lost {
        /// The peer they were sent to.
        peer: NodeId,
        /// The messages, in the order the core sent them.
        msgs: Vec<M>,
        /// How many of them the precious predicate marks.
        precious: usize,
    },
}

/// A link's state as [`Session::link`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LinkStatus {
    /// Where the incarnation is.
    pub state: LinkState,
    /// Our epoch (`sender`) and the peer's (`receiver`, 0 while unknown).
    pub epochs: Epochs,
    /// Data frames sent and not acknowledged.
    pub in_flight: usize,
    /// Messages of the core waiting for room in the window.
    pub queued: usize,
    /// Messages delivered to the core from this incarnation.
    pub delivered: u64,
    /// Frames held in the reorder buffer, ahead of a gap.
    pub buffered: usize,
}

fn every<M>(_: &M) -> bool {
    true
}

/// One node's link sessions with all its neighbours (see the [module docs](self)).
///
/// `M` is the core's message type. Every method is non-blocking and never panics; bad frames
/// are counted ([`Session::stats`]) and dropped.
#[derive(Debug, Clone)]
pub struct Session<M> {
    id: NodeId,
    /// Sorted by id, at most `max_peers`.
    peers: Vec<Peer<M>>,
    ctx: Ctx<M>,
}

impl<M: Clone> Session<M> {
    /// The session of node `id`, with no peers yet. Every message counts as precious until
    /// [`Session::with_precious`] says otherwise.
    pub fn new(id: NodeId, settings: Settings) -> Result<Self, SessionError> {
        settings.validate()?;
        Ok(Session {
            id,
            peers: Vec::new(),
            ctx: Ctx {
                settings,
                now: 0,
                precious: every::<M>,
                transmits: VecDeque::new(),
                events: VecDeque::new(),
                stats: Stats::default(),
                epoch: 0,
            },
        })
    }

    /// With `precious` telling which lost messages matter most (counted in
    /// [`SessionEvent::Lost`] and [`Stats::lost_precious`]): for KRL
    /// `reverse_link::Message::is_token`, for the prioritized algorithm
    /// `prioritized::Message::carries_resources`.
    pub fn with_precious(mut self, precious: fn(&M) -> bool) -> Self {
        self.ctx.precious = precious;
        self
    }

    /// With epochs starting after `base` (see the [module docs](self#bad-input-and-limits) on
    /// restarts). Epochs must not reach `u64::MAX` (they stop growing there): leave room for
    /// every incarnation the node will start.
    pub fn with_epoch_base(mut self, base: u64) -> Self {
        self.ctx.epoch = self.ctx.epoch.max(base);
        self
    }

    /// This node.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The settings.
    pub fn settings(&self) -> Settings {
        self.ctx.settings
    }

    /// What the session counted so far.
    pub fn stats(&self) -> &Stats {
        &self.ctx.stats
    }

    fn advance(&mut self, now: u64) {
        self.ctx.now = self.ctx.now.max(now);
    }

    fn find(&self, peer: NodeId) -> Result<usize, usize> {
        self.peers.binary_search_by_key(&peer, |p| p.id)
    }

    /// An entry for `peer`, which has none (it would go at `at`): a new one if there is room,
    /// else in place of one that can be forgotten.
    fn admit(&mut self, peer: NodeId, mut at: usize) -> Option<usize> {
        if self.peers.len() >= self.ctx.settings.max_peers as usize {
            let idle = self.peers.iter().position(Peer::idle)?;
            self.peers.remove(idle);
            if idle < at {
                at -= 1;
            }
        }
        self.peers.insert(at, Peer::new(peer));
        Some(at)
    }

    /// The application wants a link to `peer` (a neighbour it knows of, or discovered): the
    /// session says `Hello` until the link is up, and starts a new incarnation whenever one
    /// ends, until [`Session::close`].
    pub fn connect(&mut self, peer: NodeId, now: u64) -> Result<(), SessionError> {
        if peer == self.id {
            return Err(SessionError::OwnId(peer));
        }
        self.advance(now);
        let i = match self.find(peer) {
            Ok(i) => i,
            Err(at) => self
                .admit(peer, at)
                .ok_or(SessionError::PeerTableFull(self.ctx.settings.max_peers))?,
        };
        let entry = &mut self.peers[i];
        entry.wanted = true;
        match &mut entry.link {
            None => entry.connect(0, &mut self.ctx),
            Some(link) => link.close_wanted = false,
        }
        Ok(())
    }

    /// The application closes the link to `peer` (it is leaving, or no longer wanted): the
    /// close handshake starts (at once if the link is up, as soon as it comes up if it is
    /// forming), and no new incarnation is started by this end. The peer may still start one.
    pub fn close(&mut self, peer: NodeId, now: u64) {
        self.advance(now);
        let Ok(i) = self.find(peer) else {
            return;
        };
        let entry = &mut self.peers[i];
        entry.wanted = false;
        if let Some(link) = &mut entry.link {
            match link.state {
                LinkState::Connecting => link.close_wanted = true,
                LinkState::Up => link.state = LinkState::Closing,
                _ => {}
            }
        }
    }

    /// The core sent `msg` to `to` ([`Action::Send`](crate::Action::Send)). It is numbered and
    /// sent (or waits for room in the window) over the incarnation the core was told is up;
    /// if that one has failed since (its `LinkDown` not yet handed out), it is reported lost.
    ///
    /// `Err(NotLinked)` if the core was not told the link is up: the cores never do that.
    pub fn send(&mut self, to: NodeId, msg: M, now: u64) -> Result<(), SessionError> {
        self.advance(now);
        let Ok(i) = self.find(to) else {
            return Err(SessionError::NotLinked(to));
        };
        let entry = &mut self.peers[i];
        if entry.core_epoch == 0 {
            return Err(SessionError::NotLinked(to));
        }
        match &mut entry.link {
            Some(link)
                if link.mine == entry.core_epoch
                    && matches!(link.state, LinkState::Up | LinkState::Closing) =>
            {
                link.push(to, msg, &mut self.ctx);
            }
            _ => self.ctx.lost(to, vec![msg]),
        }
        Ok(())
    }

    /// A datagram from the transport. Bad frames are counted and dropped.
    pub fn handle_datagram(&mut self, datagram: Datagram<M>, now: u64) {
        self.advance(now);
        let Datagram { from, frame } = datagram;
        if from == self.id {
            self.ctx.stats.malformed += 1;
            return;
        }
        let i = match self.find(from) {
            Ok(i) => i,
            Err(_) if !matches!(frame, Frame::Hello { .. }) => {
                self.ctx.stats.unknown_peer += 1;
                return;
            }
            Err(at) => match self.admit(from, at) {
                Some(i) => i,
                None => {
                    self.ctx.stats.refused += 1;
                    return;
                }
            },
        };
        self.peers[i].on_frame(frame, &mut self.ctx);
    }

    /// Time has come to `now`: retransmissions, keepalives, failures.
    pub fn handle_timeout(&mut self, now: u64) {
        self.advance(now);
        let ctx = &mut self.ctx;
        for peer in &mut self.peers {
            if let Some(end) = peer.link.as_mut().and_then(|l| l.on_timer(peer.id, ctx)) {
                peer.end(end, ctx);
            }
        }
    }

    /// When to call [`Session::handle_timeout`] next (a time in the past means now), or `None`
    /// if no link is forming or up.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.peers
            .iter()
            .filter_map(|p| p.link.as_ref())
            .map(|l| l.deadline(&self.ctx.settings))
            .min()
    }

    /// The next frame for the transport.
    pub fn poll_transmit(&mut self) -> Option<Transmit<M>> {
        self.ctx.transmits.pop_front()
    }

    /// The next event: for the core ([`SessionEvent::Core`]) or the application
    /// ([`SessionEvent::Lost`]). Feed a core event to the core, and pass the sends it causes
    /// to [`Session::send`], before polling again. A close whose data are all acknowledged
    /// completes here, once the core has consumed every earlier event: the `LinkDown` is
    /// handed out and the `Close` queued for [`Session::poll_transmit`].
    pub fn poll_event(&mut self) -> Option<SessionEvent<M>> {
        if self.ctx.events.is_empty() {
            for peer in &mut self.peers {
                if let Some(link) = peer.link.as_mut().filter(|l| l.can_finish()) {
                    link.finish(peer.id, &mut self.ctx);
                }
            }
        }
        let (epoch, event) = self.ctx.events.pop_front()?;
        if let SessionEvent::Core(Event::LinkUp(peer) | Event::LinkDown(peer)) = &event {
            if let Ok(i) = self.find(*peer) {
                let up = matches!(event, SessionEvent::Core(Event::LinkUp(_)));
                self.peers[i].core_epoch = if up { epoch } else { 0 };
            }
        }
        Some(event)
    }

    /// The state of the current incarnation of the link to `peer`, if any.
    pub fn link(&self, peer: NodeId) -> Option<LinkStatus> {
        let link = self.peers.get(self.find(peer).ok()?)?.link.as_ref()?;
        Some(LinkStatus {
            state: link.state,
            epochs: link.epochs(),
            in_flight: link.transmitted,
            queued: link.queue.len() - link.transmitted,
            delivered: link.delivered,
            buffered: link.buffered,
        })
    }

    /// How many peers the session keeps state for (linked, forming or remembered); at most
    /// [`Settings::max_peers`].
    pub fn table_len(&self) -> usize {
        self.peers.len()
    }

    /// Whether the core was told the link to `peer` is up (a `LinkUp` handed out, and no
    /// `LinkDown` since).
    pub fn is_linked(&self, peer: NodeId) -> bool {
        self.find(peer).is_ok_and(|i| self.peers[i].core_epoch != 0)
    }

    /// Every message the core sent that is not acknowledged yet (in flight or waiting for
    /// the window), with its destination: what is still in the session's hands.
    pub fn unconfirmed(&self) -> impl Iterator<Item = (NodeId, &M)> + '_ {
        self.peers.iter().flat_map(|p| {
            p.link
                .iter()
                .flat_map(move |l| l.queue.iter().map(move |m| (p.id, m)))
        })
    }
}
