//! One peer's entry and the state machine of one link incarnation: the handshake, reliable
//! in-order delivery (sequence numbers, cumulative acknowledgements, retransmission, a
//! bounded reorder buffer), keepalives, failure detection and the close handshake.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::cmp::Ordering;

use super::frame::{Epochs, Frame, Transmit};
use super::settings::{Settings, Stats};
use super::SessionEvent;
use crate::{Event, NodeId};

/// Where one link incarnation is, as its end sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkState {
    /// The handshake: `Hello`s until the peer shows it knows our epoch. The core knows nothing
    /// of the link yet.
    Connecting,
    /// The core was told `LinkUp`; data flows both ways.
    Up,
    /// Closing (the application asked, or the peer closed its direction): data still flows;
    /// once everything the core sent is acknowledged, the core is told `LinkDown`.
    Closing,
    /// Our direction is closed (`LinkDown` told, `Close` sent); the peer's last data are still
    /// delivered until its own `Close`, then the incarnation ends.
    Finished,
}

/// What ends an incarnation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// The close handshake completed: nothing is in flight either way.
    Retire,
    /// The peer fell silent or stopped acknowledging, or the handshake expired: what we sent
    /// unacknowledged is reported lost.
    Abandon,
}

/// How a frame relates to the current incarnation.
enum Class {
    /// It belongs to it.
    Current,
    /// An earlier incarnation's, or a `Hello` that can no longer matter.
    Stale,
    /// Impossible from a correct peer.
    Malformed,
    /// A `Hello` from a peer that does not know our epoch yet (we are still connecting).
    Answer,
    /// A newer epoch of the peer than the incarnation's: the peer restarted or moved on, or
    /// the frame is garbage. Nothing verifies it, so it ends nothing: the incarnation is
    /// verified by probing instead.
    Newer,
}

/// The session's shared state: settings, clock, outputs and counters.
#[derive(Debug, Clone)]
pub(super) struct Ctx<M> {
    pub(super) settings: Settings,
    pub(super) now: u64,
    pub(super) precious: fn(&M) -> bool,
    pub(super) transmits: VecDeque<Transmit<M>>,
    /// Events for the application, each tagged with the epoch of the incarnation a `LinkUp`
    /// or `LinkDown` is about (0 for the others), so the session knows which incarnation the
    /// core was told of when the event is handed out.
    pub(super) events: VecDeque<(u64, SessionEvent<M>)>,
    pub(super) stats: Stats,
    /// The last epoch taken.
    pub(super) epoch: u64,
}

impl<M> Ctx<M> {
    fn later(&self, delay: u64) -> u64 {
        self.now.saturating_add(delay)
    }

    pub(super) fn fresh_epoch(&mut self) -> u64 {
        self.epoch = self.epoch.saturating_add(1).max(1);
        self.epoch
    }

    pub(super) fn core(&mut self, tag: u64, event: Event<M>) {
        self.events.push_back((tag, SessionEvent::Core(event)));
    }

    /// Report `msgs`, sent by the core to `peer` and not acknowledged, as lost.
    pub(super) fn lost(&mut self, peer: NodeId, msgs: Vec<M>) {
        let precious = msgs.iter().filter(|m| (self.precious)(m)).count();
        self.stats.lost += msgs.len() as u64;
        self.stats.lost_precious += precious as u64;
        self.events.push_back((
            0,
            SessionEvent::Lost {
                peer,
                msgs,
                precious,
            },
        ));
    }
}

/// One peer: whether the application wants a link to it, the current incarnation, the last
/// one that came up (to recognise its stragglers and answer its `Close` again), and which
/// incarnation the core was told is up.
#[derive(Debug, Clone)]
pub(super) struct Peer<M> {
    pub(super) id: NodeId,
    pub(super) wanted: bool,
    pub(super) link: Option<Link<M>>,
    /// Our epoch (`sender`) and the peer's (`receiver`) in the last incarnation that came up.
    pub(super) retired: Option<Epochs>,
    /// The epoch of the incarnation whose `LinkUp` the core was handed, until its `LinkDown`
    /// is handed out (0: none).
    pub(super) core_epoch: u64,
}

impl<M: Clone> Peer<M> {
    pub(super) fn new(id: NodeId) -> Self {
        Peer {
            id,
            wanted: false,
            link: None,
            retired: None,
            core_epoch: 0,
        }
    }

    /// Whether the entry can be forgotten to make room: no link, not wanted, nothing the core
    /// still has to be told.
    pub(super) fn idle(&self) -> bool {
        self.link.is_none() && !self.wanted && self.core_epoch == 0
    }

    /// Start a new incarnation, with a fresh epoch, and say `Hello`; repeat it after
    /// `retransmit_after` if unanswered (the back-off starts over).
    pub(super) fn connect(&mut self, theirs: u64, ctx: &mut Ctx<M>) {
        let backoff = ctx.settings.retransmit_after;
        let mut link = Link::new(ctx.fresh_epoch(), theirs, ctx.now, backoff);
        link.greet(self.id, ctx);
        self.link = Some(link);
    }

    /// The forming incarnation `old` expired with the peer still wanted: start a new one, with
    /// a fresh epoch, that goes on with `old`'s back-off (its next `Hello` when `old`'s was
    /// due, or now if that is past), so an unanswering peer is not greeted faster for it.
    fn reconnect(&mut self, old: &Link<M>, ctx: &mut Ctx<M>) {
        let mut link = Link::new(ctx.fresh_epoch(), 0, ctx.now, old.backoff);
        link.retransmit_at = old.retransmit_at;
        if link.retransmit_at.is_none_or(|at| ctx.now >= at) {
            link.repeat(self.id, ctx);
        }
        self.link = Some(link);
    }

    /// End the current incarnation; start a new one if the application wants the peer (one
    /// that never came up keeps its back-off, see [`Peer::reconnect`]).
    pub(super) fn end(&mut self, how: End, ctx: &mut Ctx<M>) {
        let Some(mut link) = self.link.take() else {
            return;
        };
        if link.state != LinkState::Connecting {
            self.retired = Some(link.epochs());
        }
        match (how, link.state) {
            (End::Retire, _) => ctx.stats.links_closed += 1,
            (End::Abandon, LinkState::Connecting) => ctx.stats.handshakes_expired += 1,
            (End::Abandon, LinkState::Up | LinkState::Closing) => {
                ctx.stats.links_abandoned += 1;
                ctx.core(link.mine, Event::LinkDown(self.id));
                if !link.queue.is_empty() {
                    ctx.lost(self.id, link.queue.drain(..).collect());
                }
            }
            // Our direction was closed and acknowledged already: nothing of ours is lost.
            (End::Abandon, LinkState::Finished) => ctx.stats.links_abandoned += 1,
        }
        if !self.wanted {
            return;
        }
        if link.state == LinkState::Connecting {
            self.reconnect(&link, ctx);
        } else {
            self.connect(0, ctx);
        }
    }

    /// A frame from this peer.
    pub(super) fn on_frame(&mut self, frame: Frame<M>, ctx: &mut Ctx<M>) {
        let e = frame.epochs();
        if e.sender == 0 {
            ctx.stats.malformed += 1;
            return;
        }
        if let (Frame::Close { .. }, Some(r)) = (&frame, self.retired) {
            if (e.sender, e.receiver) == (r.receiver, r.sender) {
                // A retired incarnation's Close again: our CloseAck was lost.
                ctx.transmits.push_back(Transmit {
                    to: self.id,
                    frame: Frame::CloseAck { epochs: r },
                });
                return;
            }
        }
        if let Some(link) = &mut self.link {
            match link.classify(&frame) {
                Class::Current => {
                    if let Some(end) = link.on_current(self.id, frame, ctx) {
                        self.end(end, ctx);
                    }
                }
                Class::Answer => link.answer(self.id, ctx),
                Class::Newer => {
                    ctx.stats.newer_epoch += 1;
                    link.suspect(self.id, ctx);
                }
                Class::Stale => ctx.stats.stale += 1,
                Class::Malformed => ctx.stats.malformed += 1,
            }
            return;
        }
        // No incarnation: only a `Hello` starts one, and not a straggler of the last one.
        if !matches!(frame, Frame::Hello { .. })
            || self.retired.is_some_and(|r| e.sender <= r.receiver)
        {
            ctx.stats.stale += 1;
            return;
        }
        self.connect(e.sender, ctx);
    }
}

/// One incarnation of the link to a peer.
#[derive(Debug, Clone)]
pub(super) struct Link<M> {
    /// Our epoch: fresh for this incarnation.
    pub(super) mine: u64,
    /// The peer's epoch, once known (0 until then).
    pub(super) theirs: u64,
    pub(super) state: LinkState,
    /// The application closed the link while it was forming: stop saying `Hello`, and close
    /// at once if it comes up anyway (the peer may already be up).
    pub(super) close_wanted: bool,
    // Our direction.
    /// Sequence number acknowledged cumulatively.
    pub(super) acked: u64,
    /// What the core sent, not acknowledged yet, in order: the first `transmitted` were sent
    /// (numbered `acked + 1` on), the rest wait for room in the window.
    pub(super) queue: VecDeque<M>,
    pub(super) transmitted: usize,
    // The peer's direction.
    /// Sequence number delivered to the core, in order.
    pub(super) delivered: u64,
    /// Frames that arrived ahead of a gap, at `seq % window`; allocated on the first one.
    reorder: Vec<Option<M>>,
    pub(super) buffered: usize,
    /// The peer's last sequence number, from its `Close`.
    peer_last: Option<u64>,
    /// Our `Close` was answered.
    close_acked: bool,
    /// A frame named a newer epoch of the peer since the last frame of this incarnation:
    /// probe until the peer answers, as if its keepalive were overdue.
    suspect: bool,
    // Timing.
    since: u64,
    /// When the last frame of this incarnation arrived: silence is measured from here.
    heard: u64,
    progress: u64,
    last_sent: u64,
    last_probe: Option<u64>,
    retransmit_at: Option<u64>,
    /// While forming: how long after the last `Hello` to say it again if unanswered. From
    /// `retransmit_after`, doubled with each repetition up to `max_backoff`, and back to
    /// `retransmit_after` when the peer's `Hello` is answered.
    backoff: u64,
}

impl<M: Clone> Link<M> {
    fn new(mine: u64, theirs: u64, now: u64, backoff: u64) -> Self {
        Link {
            mine,
            theirs,
            state: LinkState::Connecting,
            close_wanted: false,
            acked: 0,
            queue: VecDeque::new(),
            transmitted: 0,
            delivered: 0,
            reorder: Vec::new(),
            buffered: 0,
            peer_last: None,
            close_acked: false,
            suspect: false,
            since: now,
            heard: now,
            progress: now,
            last_sent: now,
            last_probe: None,
            retransmit_at: None,
            backoff,
        }
    }

    pub(super) fn epochs(&self) -> Epochs {
        Epochs {
            sender: self.mine,
            receiver: self.theirs,
        }
    }

    fn send(&mut self, to: NodeId, frame: Frame<M>, ctx: &mut Ctx<M>) {
        self.last_sent = ctx.now;
        ctx.transmits.push_back(Transmit { to, frame });
    }

    fn hello(&mut self, to: NodeId, ctx: &mut Ctx<M>) {
        let epochs = self.epochs();
        ctx.stats.hellos += 1;
        self.send(to, Frame::Hello { epochs }, ctx);
    }

    /// A forming link says `Hello`, and repeats it `backoff` later if unanswered.
    fn greet(&mut self, to: NodeId, ctx: &mut Ctx<M>) {
        self.hello(to, ctx);
        self.retransmit_at = Some(ctx.later(self.backoff));
    }

    /// A forming link's `Hello` went unanswered for `backoff`: say it again (unless the
    /// application closed the link meanwhile), and wait twice as long for an answer this time,
    /// at most `max_backoff`.
    fn repeat(&mut self, to: NodeId, ctx: &mut Ctx<M>) {
        if self.close_wanted {
            self.retransmit_at = Some(ctx.later(self.backoff));
            return;
        }
        self.backoff = self.backoff.saturating_mul(2).min(ctx.settings.max_backoff);
        self.greet(to, ctx);
    }

    /// While forming, a `Hello` from the peer that does not name our epoch: the peer is in
    /// reach. Answer it at once; the back-off starts over.
    fn answer(&mut self, to: NodeId, ctx: &mut Ctx<M>) {
        self.backoff = ctx.settings.retransmit_after;
        self.greet(to, ctx);
    }

    fn ack(&mut self, to: NodeId, ctx: &mut Ctx<M>) {
        let (epochs, seq) = (self.epochs(), self.delivered);
        self.send(to, Frame::Ack { epochs, seq }, ctx);
    }

    fn close(&mut self, to: NodeId, ctx: &mut Ctx<M>) {
        let (epochs, last) = (self.epochs(), self.acked);
        self.send(to, Frame::Close { epochs, last }, ctx);
    }

    /// How `frame` relates to this incarnation; while connecting, take the peer's epoch from a
    /// frame that names ours.
    fn classify(&mut self, frame: &Frame<M>) -> Class {
        let e = frame.epochs();
        let hello = matches!(frame, Frame::Hello { .. });
        if e.receiver > self.mine || (e.receiver == 0 && !hello) {
            // Our epochs for the peer only grow, and only a `Hello` may not know ours.
            return Class::Malformed;
        }
        if self.state == LinkState::Connecting {
            // Only a frame naming our fresh epoch shows the peer heard this incarnation: its
            // sender's epoch is the peer's, whatever a `Hello` said before. Another `Hello`
            // is answered (our repeated `Hello`s name its epoch too), but trusted for nothing.
            let class = if e.receiver == self.mine {
                Class::Current
            } else if hello {
                Class::Answer
            } else {
                return Class::Stale;
            };
            self.theirs = e.sender;
            return class;
        }
        match e.sender.cmp(&self.theirs) {
            Ordering::Less => Class::Stale,
            Ordering::Greater => Class::Newer,
            Ordering::Equal if e.receiver == self.mine => Class::Current,
            Ordering::Equal => Class::Stale,
        }
    }

    /// A frame of this incarnation.
    fn on_current(&mut self, peer: NodeId, frame: Frame<M>, ctx: &mut Ctx<M>) -> Option<End> {
        self.heard = ctx.now;
        self.suspect = false;
        if self.state == LinkState::Connecting {
            self.state = if self.close_wanted {
                LinkState::Closing
            } else {
                LinkState::Up
            };
            self.retransmit_at = None;
            ctx.stats.links_up += 1;
            ctx.core(self.mine, Event::LinkUp(peer));
        }
        match frame {
            // The peer may not know we are up: confirm.
            Frame::Hello { .. } => self.ack(peer, ctx),
            Frame::Data { seq, msg, .. } => self.on_data(peer, seq, msg, ctx),
            Frame::Ack { seq, .. } => self.on_ack(peer, seq, ctx),
            Frame::Close { last, .. } => return self.on_close(peer, last, ctx),
            Frame::CloseAck { .. } => return self.on_close_ack(ctx),
        }
        None
    }

    fn on_data(&mut self, peer: NodeId, seq: u64, msg: M, ctx: &mut Ctx<M>) {
        if seq == 0 || self.peer_last.is_some_and(|last| seq > last) {
            ctx.stats.malformed += 1;
            return;
        }
        if seq <= self.delivered {
            // Our acknowledgement was lost or is late: repeat it.
            ctx.stats.duplicates += 1;
            return self.ack(peer, ctx);
        }
        let window = u64::from(ctx.settings.window);
        if seq - self.delivered > window {
            ctx.stats.out_of_window += 1;
            return;
        }
        if seq == self.delivered + 1 {
            self.deliver(peer, msg, ctx);
            while self.buffered > 0 {
                let slot = ((self.delivered + 1) % window) as usize;
                let Some(next) = self.reorder[slot].take() else {
                    break;
                };
                self.buffered -= 1;
                self.deliver(peer, next, ctx);
            }
        } else {
            if self.reorder.is_empty() {
                self.reorder.resize_with(window as usize, || None);
            }
            let slot = &mut self.reorder[(seq % window) as usize];
            if slot.is_some() {
                ctx.stats.duplicates += 1;
            } else {
                *slot = Some(msg);
                self.buffered += 1;
            }
        }
        self.ack(peer, ctx);
    }

    fn deliver(&mut self, peer: NodeId, msg: M, ctx: &mut Ctx<M>) {
        self.delivered += 1;
        ctx.stats.delivered += 1;
        ctx.core(0, Event::Receive { from: peer, msg });
    }

    fn on_ack(&mut self, peer: NodeId, seq: u64, ctx: &mut Ctx<M>) {
        if seq > self.acked + self.transmitted as u64 {
            ctx.stats.malformed += 1;
            return;
        }
        if seq <= self.acked {
            // A keepalive, or an acknowledgement overtaken by a later one.
            return;
        }
        let n = (seq - self.acked) as usize;
        for _ in 0..n {
            self.queue.pop_front();
        }
        self.transmitted -= n;
        self.acked = seq;
        self.progress = ctx.now;
        self.retransmit_at = None;
        self.fill_window(peer, ctx);
        if self.transmitted > 0 {
            self.retransmit_at = Some(ctx.later(ctx.settings.retransmit_after));
        }
    }

    fn on_close(&mut self, peer: NodeId, last: u64, ctx: &mut Ctx<M>) -> Option<End> {
        // The peer closes only once everything it sent is acknowledged, so we delivered
        // exactly up to `last` and hold nothing beyond it.
        if last != self.delivered || self.buffered > 0 || self.peer_last.is_some_and(|l| l != last)
        {
            ctx.stats.malformed += 1;
            return None;
        }
        self.peer_last = Some(last);
        let epochs = self.epochs();
        self.send(peer, Frame::CloseAck { epochs }, ctx);
        match self.state {
            LinkState::Up => self.state = LinkState::Closing,
            LinkState::Finished if self.close_acked => return Some(End::Retire),
            _ => {}
        }
        None
    }

    fn on_close_ack(&mut self, ctx: &mut Ctx<M>) -> Option<End> {
        if self.state != LinkState::Finished {
            ctx.stats.malformed += 1;
            return None;
        }
        self.close_acked = true;
        self.retransmit_at = None;
        self.peer_last.map(|_| End::Retire)
    }

    /// The core sent `msg`: number it and send it if the window has room.
    pub(super) fn push(&mut self, to: NodeId, msg: M, ctx: &mut Ctx<M>) {
        self.queue.push_back(msg);
        self.fill_window(to, ctx);
    }

    fn fill_window(&mut self, to: NodeId, ctx: &mut Ctx<M>) {
        let window = ctx.settings.window as usize;
        while self.transmitted < window && self.transmitted < self.queue.len() {
            if self.transmitted == 0 {
                self.progress = ctx.now;
                self.retransmit_at = Some(ctx.later(ctx.settings.retransmit_after));
            }
            let seq = self.acked + self.transmitted as u64 + 1;
            let msg = self.queue[self.transmitted].clone();
            self.transmitted += 1;
            ctx.stats.data_sent += 1;
            let epochs = self.epochs();
            self.send(to, Frame::Data { epochs, seq, msg }, ctx);
        }
    }

    /// Whether the close can complete: closing, and everything the core sent acknowledged.
    pub(super) fn can_finish(&self) -> bool {
        self.state == LinkState::Closing && self.queue.is_empty()
    }

    /// Close our direction: the core is told `LinkDown` now, and the peer our last number.
    pub(super) fn finish(&mut self, peer: NodeId, ctx: &mut Ctx<M>) {
        self.state = LinkState::Finished;
        ctx.core(self.mine, Event::LinkDown(peer));
        self.close(peer, ctx);
        self.retransmit_at = Some(ctx.later(ctx.settings.retransmit_after));
    }

    /// Timers due at `ctx.now`: failure, retransmission, keepalive.
    pub(super) fn on_timer(&mut self, peer: NodeId, ctx: &mut Ctx<M>) -> Option<End> {
        let now = ctx.now;
        let s = ctx.settings;
        let due = |at: Option<u64>| at.is_some_and(|at| now >= at);
        let rearm = Some(ctx.later(s.retransmit_after));
        if self.failed(now, &s) {
            return Some(End::Abandon);
        }
        match self.state {
            LinkState::Connecting => {
                if due(self.retransmit_at) {
                    self.repeat(peer, ctx);
                }
                return None;
            }
            LinkState::Up | LinkState::Closing => {
                if due(self.retransmit_at) {
                    for i in 0..self.transmitted {
                        let seq = self.acked + i as u64 + 1;
                        let msg = self.queue[i].clone();
                        ctx.stats.retransmitted += 1;
                        let epochs = self.epochs();
                        self.send(peer, Frame::Data { epochs, seq, msg }, ctx);
                    }
                    self.retransmit_at = rearm;
                }
            }
            LinkState::Finished => {
                if !self.close_acked && due(self.retransmit_at) {
                    self.close(peer, ctx);
                    self.retransmit_at = rearm;
                }
            }
        }
        if self.probe_at(&s).is_some_and(|at| now >= at) {
            self.probe(peer, ctx);
        } else if now >= self.last_sent.saturating_add(s.keepalive_after) {
            self.ack(peer, ctx);
        }
        None
    }

    /// A frame named a newer epoch of the peer: the peer restarted or moved on (then it will
    /// not answer in this incarnation, which ends by the liveness rule), or the frame is
    /// garbage. Verify the incarnation rather than trust the frame: probe now (at most once a
    /// retransmission timeout) and every retransmission timeout until the peer answers.
    fn suspect(&mut self, peer: NodeId, ctx: &mut Ctx<M>) {
        self.suspect = true;
        if self.probe_at(&ctx.settings).is_some_and(|at| ctx.now >= at) {
            self.probe(peer, ctx);
        }
    }

    /// Ask the peer whether this incarnation is alive: it answers a `Hello` at once.
    fn probe(&mut self, peer: NodeId, ctx: &mut Ctx<M>) {
        self.last_probe = Some(ctx.now);
        self.hello(peer, ctx);
    }

    /// When to probe the peer: once its keepalive is overdue by a retransmission timeout (or
    /// at once if a newer epoch put the incarnation in doubt), then every retransmission
    /// timeout.
    fn probe_at(&self, s: &Settings) -> Option<u64> {
        let overdue = if self.suspect {
            0
        } else {
            self.heard
                .saturating_add(s.keepalive_after)
                .saturating_add(s.retransmit_after)
        };
        let next = self
            .last_probe
            .map_or(0, |at| at.saturating_add(s.retransmit_after));
        (self.state != LinkState::Connecting).then_some(overdue.max(next))
    }

    /// Whether the incarnation has failed by `now`: a handshake that took too long, a peer
    /// silent too long, or data unacknowledged too long.
    fn failed(&self, now: u64, s: &Settings) -> bool {
        let after = |t: u64| now >= t.saturating_add(s.liveness_after);
        match self.state {
            LinkState::Connecting => after(self.since),
            _ => after(self.heard) || (self.transmitted > 0 && after(self.progress)),
        }
    }

    /// The earliest time `on_timer` has something to do.
    pub(super) fn deadline(&self, s: &Settings) -> u64 {
        let live = |t: u64| t.saturating_add(s.liveness_after);
        let mut at = match self.state {
            LinkState::Connecting => live(self.since),
            _ => {
                let mut at = live(self.heard);
                if self.transmitted > 0 {
                    at = at.min(live(self.progress));
                }
                let keepalive = self.last_sent.saturating_add(s.keepalive_after);
                at.min(keepalive).min(self.probe_at(s).unwrap_or(u64::MAX))
            }
        };
        let retransmits = match self.state {
            LinkState::Finished => !self.close_acked,
            _ => true,
        };
        if let Some(r) = self.retransmit_at.filter(|_| retransmits) {
            at = at.min(r);
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(settings: Settings) -> Ctx<u32> {
        Ctx {
            settings,
            now: 0,
            precious: |_| true,
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
            epoch: 0,
        }
    }

    /// The wait between repeated `Hello`s doubles with saturation, never overflows (with no
    /// cap short of `u64::MAX`, at the end of time too), and does not grow while the
    /// application has closed the forming link (no `Hello` then).
    #[test]
    fn the_backoff_doubles_and_saturates() {
        let mut ctx = context(Settings::new(3, 10, 1).with_max_backoff(u64::MAX));
        let mut link = Link::<u32>::new(1, 0, 0, 3);
        let waits: Vec<u64> = (0..70)
            .map(|_| {
                link.repeat(NodeId(1), &mut ctx);
                link.backoff
            })
            .collect();
        assert_eq!(waits[..3], [6, 12, 24]);
        assert!(waits.windows(2).all(|w| w[1] == w[0].saturating_mul(2)));
        assert_eq!(waits.last(), Some(&u64::MAX));
        assert_eq!((ctx.stats.hellos, ctx.transmits.len()), (70, 70));
        ctx.now = u64::MAX - 1;
        link.close_wanted = true;
        link.repeat(NodeId(1), &mut ctx);
        assert_eq!(link.retransmit_at, Some(u64::MAX));
        assert_eq!(ctx.stats.hellos, 70, "no Hello once closed");
        let mut ctx = context(Settings::new(3, 10, 1).with_max_backoff(20));
        let mut link = Link::<u32>::new(1, 0, 0, 3);
        link.close_wanted = true;
        link.repeat(NodeId(1), &mut ctx);
        assert_eq!((link.backoff, link.retransmit_at), (3, Some(3)));
        link.close_wanted = false;
        for want in [6, 12, 20, 20] {
            link.repeat(NodeId(1), &mut ctx);
            assert_eq!(link.backoff, want);
        }
    }
}
