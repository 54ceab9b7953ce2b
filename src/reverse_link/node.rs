//! The KRL/KRLF node: every handler of the appendix pseudocode.

use smallvec::SmallVec;

use super::{Config, Message, Settings};
use crate::node::Outbox;
use crate::queue::FifoQueue;
use crate::token::height::{Height, Sealed};
use crate::token::links::{LinkMessages, Links, Take, TokenNode};
use crate::token::neighbors::{Neighbors, Said};
use crate::token::recovery::{promise_word, Recover, Watch};
use crate::token::Departure;
use crate::{
    Action, Anomaly, Error, Event, Fence, FenceCopies, NodeId, Protocol, Report, Severity, Status,
    TimerId,
};

/// A KRL (or KRLF) node. `Clone` and `PartialEq` (which compares state) let tests snapshot it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub(super) id: NodeId,
    pub(super) settings: Settings,
    pub(super) status: Status,
    pub(super) links: Links,
    /// The tokens held, each as its id and the fence of the last entry made with it. While
    /// the node is in the critical section the first is the one in use: tokens leave from the
    /// end, and only spare ones leave.
    pub(super) held: SmallVec<[Fence; 2]>,
    pub(super) queue: FifoQueue<NodeId>,
    /// A LinkInfo made this holder lower itself, and nothing has happened since that could
    /// make another lowering useful; see `may_lower_on_link_info`.
    lowered_on_link_info: bool,
    /// The idle-pause timer is armed ([`Settings::idle_pause`]).
    pausing: bool,
    /// Recovery's state ([`Settings::recovery`]), `None` without it.
    pub(super) watch: Option<Watch>,
    /// Whether the node is leaving, or has left (`Event::Leave`, L4).
    departure: Departure,
    pub(super) outbox: Outbox<Message>,
}

/// The one timer a KRLF node with an idle pause sets.
pub const IDLE_PAUSE: TimerId = TimerId(0);

impl Node {
    /// A node in its initial state, or `Err` if the configuration is invalid.
    pub fn new(config: Config) -> Result<Self, Error> {
        let next = config.validate()?;
        let held = config.token_ids().map(|id| Fence::new(id, 0)).collect();
        Ok(Node {
            id: config.id,
            settings: config.settings,
            status: Status::Remainder,
            links: Links::new(
                config.height,
                config.neighbors,
                next,
                config.settings.raise_pause,
            )
            .jumping(config.restarted && config.tokens == 0),
            held,
            queue: FifoQueue::new(),
            lowered_on_link_info: false,
            pausing: false,
            watch: config.settings.recovery.map(|r| {
                let (made, promises) = (config.made_up_to, config.promises.as_deref());
                Watch::new(r, config.settings.k, config.restarted, made, promises)
            }),
            departure: Departure::Staying,
            outbox: Outbox::default(),
        })
    }

    /// Whether the node accepted [`Event::Leave`] (L4): it takes no further request, keeps
    /// no token and answers what still reaches it.
    pub fn leaving(&self) -> bool {
        self.departure.gone()
    }

    /// Whether the node reported [`Report::Left`] (L4).
    pub fn has_left(&self) -> bool {
        self.departure == Departure::Left
    }

    /// Tokens held.
    pub fn tokens(&self) -> u32 {
        self.held.len() as u32
    }

    /// The tokens held, each as its id (`lane`) and the last fence issued with it (`value`:
    /// its generation and count, 0 before any entry; with recovery, beacons raise it too).
    /// In the critical section the first is the one in use (unless [`Node::revoked`]).
    pub fn held_tokens(&self) -> impl ExactSizeIterator<Item = Fence> + '_ {
        self.held.iter().copied()
    }

    /// Whether the node holds at least one token.
    pub fn holds_token(&self) -> bool {
        !self.held.is_empty()
    }

    /// What the network agrees on.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// The node's own height.
    pub fn height(&self) -> Height {
        self.links.height
    }

    /// The neighbour table: the node's view of its neighbours' heights and handshake state.
    pub fn neighbors(&self) -> &Neighbors {
        &self.links.neighbors
    }

    /// Visit the heap memory an event at this node reads besides the node itself (the
    /// neighbour table and the request queue), as `(start, length in bytes)`: a simulator of
    /// large networks asks the cache for it ahead of time. Not part of the stable API.
    #[doc(hidden)]
    pub fn heap_regions(&self, visit: &mut impl FnMut(*const u8, usize)) {
        self.links.neighbors.heap_regions(visit);
        self.queue.heap_regions(visit);
    }

    /// Where the node last sent a request or token (itself while it holds a token); `None`
    /// when the link to it failed or no neighbour could be asked.
    pub fn next(&self) -> Option<NodeId> {
        self.links.next
    }

    /// The requests queued here, front first (the node itself for its own request).
    pub fn queue(&self) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        self.queue.iter()
    }

    /// Whether a LinkInfo may make this node lower itself now (if it holds a token and sees no
    /// higher neighbour). After one such lowering the node waits for an event that can change
    /// what lowering achieves (a request or release by the application, a token arriving, a
    /// link forming or failing): holders whose neighbours all hold tokens would otherwise
    /// lower below each other forever (`docs/ALGORITHMS.md`, V3).
    // Hidden: the workspace's tests and model checkers read it; not stable API.
    #[doc(hidden)]
    pub fn may_lower_on_link_info(&self) -> bool {
        !self.lowered_on_link_info
    }

    /// Height raises (partial reversals) performed so far.
    pub fn raises(&self) -> u64 {
        self.links.raises
    }

    /// Tokens not used by the node's own critical section.
    fn spare_tokens(&self) -> u32 {
        self.tokens() - u32::from(self.in_use())
    }

    /// `next` no longer leads downhill: it is unset (its link failed) or no longer lower.
    fn next_is_stale(&self) -> bool {
        self.links.live_next().is_none()
    }

    fn on_request(&mut self) {
        self.status = Status::Waiting;
        self.queue.enqueue(self.id);
        if self.holds_token() {
            self.serve();
        } else if self.queue.len() == 1 {
            self.forward_request();
        }
    }

    fn on_release(&mut self) {
        self.status = Status::Remainder;
        self.end_lease();
        self.pass_on_spare_tokens();
        if self.holds_token() && self.links.neighbors.all_lower(self.links.height) {
            self.lower_height();
        }
    }

    /// The application withdraws its waiting request. The REQUEST already sent stays valid for
    /// the rest of the queue; a token it brings with nobody left to serve is kept (KRL) or
    /// passed on idle (KRLF), as any.
    fn on_cancel(&mut self) {
        self.status = Status::Remainder;
        self.queue.delete(self.id);
        if self.holds_token() {
            self.pass_on_spare_tokens();
        }
    }

    /// Tokens the node no longer needs serve its queue, or (KRLF) move on idle.
    fn pass_on_spare_tokens(&mut self) {
        if !self.queue.is_empty() {
            self.serve();
        } else if self.settings.forwarding {
            self.idle_token();
        }
    }

    fn on_request_msg(&mut self, j: NodeId, h: Height) {
        match self.links.hear_request(j, h, &mut self.outbox) {
            None => {
                if !h.possible_from(j) {
                    // Dropped (a token to `j` unacknowledged, or a forming link) with an
                    // impossible height: it may have been a Probe of `j` whose kind changed,
                    // as for a redirected one below (V16 (KRL)).
                    self.ask_again(j);
                }
                return;
            }
            Some(Take::Queue) => {
                self.queue.enqueue(j);
            }
            Some(Take::Redirect { valid }) => {
                self.links.redirect(j, valid, &mut self.outbox);
                if !valid {
                    // It may have been a Probe of `j` whose kind changed (among them the one
                    // `ask_for_a_lost_request` sends): if `j` is our `next`, ask again, as a
                    // Probe from it makes us do (V12 (KRL)).
                    self.ask_again(j);
                }
            }
        }
        if self.holds_token() {
            self.serve();
        } else if self.links.neighbors.all_higher(self.links.height) {
            self.raise_height();
        } else if (self.queue.len() == 1 && self.queue.front() == Some(j))
            || (!self.queue.is_empty() && self.next_is_stale())
        {
            self.forward_request();
        }
    }

    fn on_token(&mut self, j: NodeId, h: Height, fence: FenceCopies) {
        let k = self.settings.k;
        let Some(token) = fence.read().filter(|t| t.lane < k) else {
            // An id outside `0..k`, or copies that disagree: impossible in a correct system,
            // and no single corrupted field causes it. Refusing keeps k-exclusion and the
            // fences' order locally, and the report makes the refusal visible (F1).
            return self.outbox.anomaly(j, Anomaly::OutOfRange);
        };
        let keep = self.admit_generation(token);
        if keep && self.held.iter().any(|mine| mine.lane == token.lane) {
            // A second copy of a token held here: more than k tokens (two holders configured
            // with the same ids, R14, or a forgery). Refused, as a suspect second token.
            return self.outbox.anomaly(j, Anomaly::Unexpected);
        }
        if keep {
            self.held.push(token);
        }
        if self.links.neighbors.get(j).is_some() {
            // The token is kept whatever its height says, and always acknowledged: until it
            // is, the sender ignores everything we say of our height.
            self.links.hear(j, h, Said::Info, &mut self.outbox);
            let valid = h.possible_from(j);
            if let Some(entry) = self.links.neighbors.get_mut(j).filter(|n| n.in_n && valid) {
                entry.visited = true;
            }
            // The paper tells only the neighbours that were below us: those above stay above,
            // so their (now too high) view of us still gives the right direction.
            // A destroyed token (an older generation) leaves the height alone: adopting one
            // below the sender would make this node a sink without a token.
            if keep {
                let old = self.links.height;
                self.links.adopt(j, h, |n| n.height < old, &mut self.outbox);
            }
            self.links.ack_token(j, &mut self.outbox);
        } else {
            // Keep the token (never lose capacity) but not the unverifiable height.
            self.outbox.anomaly(j, Anomaly::UnknownPeer);
        }
        if keep {
            self.heard_token(token);
            self.use_new_token();
        } else if !self.queue.is_empty() {
            // The sender served our request with a token that is no more: the requests
            // queued here are nowhere else, so send them on again (F8).
            self.token_gone();
        }
    }

    /// A token just arrived or was made again: serve the queue, or (KRLF) move it on idle, or
    /// keep it.
    pub(super) fn use_new_token(&mut self) {
        // A holder's raises are the paper's from now on (F12).
        self.links.jumps = false;
        if !self.queue.is_empty() {
            self.serve();
        } else if self.settings.forwarding {
            self.idle_token();
        } else {
            self.links.next = Some(self.id);
        }
    }

    /// KRLF with an idle token: forward it now (the paper), or hold it like a KRL holder
    /// until the idle pause expires.
    fn idle_token(&mut self) {
        let Some(after) = self.settings.idle_pause else {
            return self.forward_idle_token();
        };
        if self.spare_tokens() == 0 {
            return;
        }
        self.links.next = Some(self.id);
        if !self.pausing {
            self.pausing = true;
            self.outbox.push(Action::SetTimer {
                timer: IDLE_PAUSE,
                after,
            });
        }
    }

    /// The idle pause expired: forward a token that is still idle. A request served in the
    /// meantime used it, and a later one re-arms the pause when its token turns idle again.
    fn on_idle_pause(&mut self) {
        if !core::mem::take(&mut self.pausing) {
            return;
        }
        if self.queue.is_empty() {
            self.forward_idle_token();
        }
    }

    /// A LinkInfo, Probe or TokenAck from `j`.
    fn on_height_msg(&mut self, j: NodeId, h: Height, said: Said) {
        if !self.hear_height(j, h, said) {
            if !h.possible_from(j) {
                self.ask_for_a_lost_request(j);
                if said != Said::Probe {
                    // It may have been a Probe of `j` whose kind changed (among them the one
                    // `ask_for_a_lost_request` sends): do what one from our `next` does, as
                    // `hear_height` did for a Probe (V12 (KRL)).
                    self.ask_again(j);
                }
            }
            return;
        }
        if self.links.neighbors.is_lower(j, self.links.height) {
            // `j` is below us now, so it routes its requests elsewhere (LinkInfo line 7).
            self.queue.delete(j);
        }
        if self.holds_token()
            && !self.lowered_on_link_info
            && self.links.neighbors.all_lower(self.links.height)
        {
            self.lowered_on_link_info = true;
            self.lower_height();
        }
        if !self.holds_token() {
            self.reroute();
        }
    }

    /// A LinkInfo, Probe or TokenAck of `j` failed its check word (or carried an impossible
    /// height). It may have been `j`'s REQUEST with its kind changed: a REQUEST shares its
    /// layout with a LinkInfo and a Probe, and the kind tag (W2) makes the word fail, so
    /// nothing here shows the request. `j` would then wait on us while our queue does not
    /// hold it, until a keepalive made it ask again (`docs/ALGORITHMS.md`, V12 (KRL)). So ask
    /// `j` with a Probe: a Probe from its `next` makes a waiting node send its REQUEST again
    /// (T1), and the answer corrects our view of `j` if the message was a height. For a
    /// member of `N`, not while a token to `j` is unacknowledged: `doubt` has sent `j` a
    /// Probe then (R13). From a forming peer it may have been the LinkInfo that completes
    /// the link, so we ask for it (V15 (KRL)): otherwise, with the Probes of both ends spent,
    /// the link stays forming at both ends until a keepalive. Without a fault no message
    /// fails its check, so this sends nothing.
    fn ask_for_a_lost_request(&mut self, j: NodeId) {
        let Some(entry) = self.links.neighbors.get(j) else {
            return;
        };
        if !entry.in_n {
            // A forming link: the message may have been the peer's LinkInfo (or its answer
            // to our Probe), without which the link never joins `N` at either end. Ask for
            // its height, as an impossible REQUEST on a forming link does (V15 (KRL)).
            self.links.ask(j, &mut self.outbox);
        } else if entry.unacked == 0 {
            self.outbox
                .send(j, Message::Probe(self.links.height.into()));
        }
    }

    fn on_link_down(&mut self, j: NodeId) {
        if !self.links.link_down(j, &mut self.outbox) {
            return;
        }
        self.queue.delete(j);
        if !self.holds_token() {
            self.reroute();
        } else if self.links.neighbors.all_lower(self.links.height) {
            self.lower_height();
        }
    }

    /// A non-holder whose links changed: raise if no way down is left, else trim, and send
    /// the queue's request again if `next` no longer leads down.
    pub(super) fn reroute(&mut self) {
        if self.links.neighbors.all_higher(self.links.height) {
            self.raise_height();
        } else {
            self.links.trim(&mut self.outbox);
            if !self.queue.is_empty() && self.next_is_stale() {
                self.forward_request();
            }
        }
    }

    /// GiveTokenToNext, generalised to a loop: while the node has a token its own critical
    /// section is not using and someone is queued, serve the front of the queue.
    fn serve(&mut self) {
        while self.spare_tokens() > 0 {
            let Some(next) = self.queue.dequeue() else {
                break;
            };
            // A peer is queued only once in `N` and leaves the queue with its link: a bug
            // otherwise (caught in debug builds; release builds skip the entry).
            debug_assert!(next == self.id || self.links.neighbors.is_member(next));
            if next == self.id {
                // The first token held stays while the node is inside (see `held`).
                if let Some(token) = self.held.first_mut() {
                    *token = token.next();
                    self.status = Status::Critical;
                    let fence = *token;
                    self.outbox.push(Action::EnterCritical {
                        resources: 1,
                        fence,
                    });
                    self.start_lease(fence);
                }
            } else if self.links.neighbors.is_member(next) {
                self.send_token(next);
                if !self.holds_token() && !self.queue.is_empty() {
                    self.outbox
                        .send(next, Message::Request(self.links.height.into()));
                }
            }
        }
        if self.holds_token() {
            self.links.next = Some(self.id);
        }
    }

    /// Send the last token held (a spare one: see `held`) to `to`.
    fn send_token(&mut self, to: NodeId) {
        let Some(token) = self.held.pop() else {
            return;
        };
        self.links.token_sent(to);
        self.outbox
            .send(to, Message::Token(self.links.height.into(), token.into()));
    }

    /// KRLF PickLowest&ForwardToken: pass one idle token to the lowest unvisited neighbour,
    /// clearing the marks once every neighbour has been visited.
    fn forward_idle_token(&mut self) {
        if self.spare_tokens() == 0 {
            return;
        }
        let neighbors = &mut self.links.neighbors;
        if neighbors.members().all(|n| n.visited) {
            for n in neighbors.members_mut() {
                n.visited = false;
            }
        }
        let Some(next) = neighbors.lowest_where(|n| !n.visited) else {
            self.links.next = Some(self.id);
            return;
        };
        if let Some(entry) = neighbors.get_mut(next) {
            entry.visited = true;
        }
        self.send_token(next);
        if self.holds_token() {
            self.links.next = Some(self.id);
        }
    }

    /// Whether the node ever sets a timer (an idle pause, a raise pause or recovery): only
    /// then does it take `Timeout`s.
    fn sets_timers(&self) -> bool {
        let s = &self.settings;
        s.idle_pause.is_some() || s.raise_pause.is_some() || self.watch.is_some()
    }

    /// RaiseHeight: partial reversal, then drop queued requests from nodes now below us
    /// (their links reversed) and re-forward our own queue.
    fn raise_height(&mut self) {
        if !self.links.may_raise(&mut self.outbox) {
            // Paced: the pause's end looks again (R15); the queue waits, as it has no way down.
            return;
        }
        match self.links.raise(&mut self.outbox) {
            Some(_) => {
                let links = &self.links;
                self.queue.delete_where(|q| links.reversed(q));
                if !self.queue.is_empty() {
                    self.forward_request();
                }
            }
            // Isolated: wait for a link. Or the reversal would leave the height range, which
            // only a forged view at its edge causes: ask the lowest neighbour anyway, and let
            // its answer correct the view (T2).
            None => {
                if !self.queue.is_empty() && !self.links.neighbors.is_empty() {
                    self.forward_request();
                }
            }
        }
    }

    /// `Leave` (L4), in the remainder section: hand every token over, then rise above every
    /// neighbour so that routes move away from this node. Requests queued here stay: the node
    /// relays for them (a token that comes for them is passed on), so nobody waits on it.
    fn on_leave(&mut self) {
        self.departure = Departure::Leaving;
        self.hand_over();
        self.links.rise_to_leave(&mut self.outbox);
    }

    /// A leaving node keeps no token (L4): tokens serve the requests queued here first (the
    /// requesters' direction), and the rest go to the lowest member of `N`, each with its
    /// fence (id and generation) unchanged. With no member of `N` they stay until a link
    /// joins it.
    fn hand_over(&mut self) {
        if !self.holds_token() {
            return;
        }
        if !self.queue.is_empty() {
            self.serve();
        }
        while self.holds_token() {
            let Some(to) = self.links.neighbors.lowest() else {
                return;
            };
            self.send_token(to);
        }
    }

    /// What every event of a leaving node ends with (L4): hand over what it holds, and report
    /// `Left` once, when it holds no token, every token it sent is acknowledged and no
    /// request is queued here.
    fn leave_progress(&mut self) {
        if !self.departure.gone() {
            return;
        }
        self.hand_over();
        if self.departure == Departure::Leaving
            && !self.holds_token()
            && self.queue.is_empty()
            && self.links.all_acked()
        {
            self.departure = Departure::Left;
            self.outbox.push(Action::Report(Report::Left));
        }
    }

    /// LowerHeight, told to the neighbours now above us (as in the paper).
    fn lower_height(&mut self) {
        self.links.lower(|n, new| n.height > new, &mut self.outbox);
    }
}

impl LinkMessages for Message {
    fn link_info(height: Sealed) -> Self {
        Message::LinkInfo(height)
    }

    fn probe(height: Sealed) -> Self {
        Message::Probe(height)
    }

    fn token_ack(height: Height, tokens: u16) -> Self {
        Message::token_ack(height, tokens)
    }
}

impl TokenNode for Node {
    type Message = Message;

    fn links(&self) -> &Links {
        &self.links
    }

    fn links_mut(&mut self) -> (&mut Links, &mut Outbox<Message>) {
        (&mut self.links, &mut self.outbox)
    }

    fn waiting(&self) -> bool {
        !self.holds_token() && !self.queue.is_empty()
    }

    fn request(&self) -> Message {
        Message::Request(self.links.height.into())
    }
}

impl crate::node::Buffered for Node {
    fn outbox(&mut self) -> &mut Outbox<Message> {
        &mut self.outbox
    }

    fn step(&mut self, event: Event<Message>) -> Result<(), Error> {
        self.outbox.clear();
        // Each request is for one token.
        crate::node::check_local(&event, self.status, None)?;
        self.departure.check(&event, self.status)?;
        match event {
            Event::Request(_) => {
                self.lowered_on_link_info = false;
                self.on_request();
            }
            Event::Leave => {
                self.lowered_on_link_info = false;
                self.on_leave();
            }
            Event::Release => {
                self.lowered_on_link_info = false;
                self.on_release();
            }
            Event::Cancel => {
                self.lowered_on_link_info = false;
                self.on_cancel();
            }
            Event::Receive { from, msg } => match msg {
                Message::Request(h) => self.on_request_msg(from, h.open()),
                Message::Token(h, fence) => {
                    self.lowered_on_link_info = false;
                    self.on_token(from, h.open(), fence);
                }
                Message::LinkInfo(h) => self.on_height_msg(from, h.open(), Said::Info),
                Message::Probe(h) => self.on_height_msg(from, h.open(), Said::Probe),
                Message::TokenAck(h, tokens) => {
                    let tokens = u64::from(tokens);
                    let count = h.is_intact_with(tokens).then_some(tokens as u16);
                    self.on_height_msg(from, h.open_with(tokens), Said::Ack(count));
                }
                Message::Beacon(_, fence, hops) => self.on_beacon(from, fence, hops),
                Message::Claim(_, lane, generation) => self.on_claim(from, lane, generation),
                Message::Promise(h, lane, ballot, voter) => {
                    let intact = h.is_intact_with(promise_word(lane, voter, ballot));
                    self.on_promise(from, lane, ballot, voter, intact);
                }
            },
            Event::LinkUp(j) => {
                self.lowered_on_link_info = false;
                self.link_up(j);
            }
            Event::LinkDown(j) => {
                self.lowered_on_link_info = false;
                self.on_link_down(j);
            }
            Event::Refused { fence, newest } => self.on_refused(fence, newest)?,
            // Only the idle pause, the raise pause and recovery set timers; any other id is
            // stale or foreign.
            Event::Timeout(timer) if self.sets_timers() => {
                if self.links.paces(timer) {
                    if self.links.pause_ended(timer) && !self.holds_token() {
                        self.reroute();
                    }
                } else if timer == IDLE_PAUSE && self.settings.idle_pause.is_some() {
                    self.on_idle_pause();
                } else {
                    self.recovery_timer(timer);
                }
            }
            other => return Err(Error::Unsupported(other.name())),
        }
        self.leave_progress();
        self.arm();
        Ok(())
    }
}

impl Protocol for Node {
    type Message = Message;

    fn id(&self) -> NodeId {
        self.id
    }

    fn status(&self) -> Status {
        self.status
    }

    crate::node::buffered_handlers!(Message);

    fn anomaly_severity(kind: Anomaly) -> Severity {
        crate::token::anomaly_severity(kind)
    }
}
