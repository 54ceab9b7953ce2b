//! The KRL/KRLF node: every handler of the appendix pseudocode.

use super::{Config, Message, Settings};
use crate::node::Outbox;
use crate::queue::FifoQueue;
use crate::token::height::{self, Height};
use crate::token::neighbors::{Heard, Neighbors, Said};
use crate::{Action, Actions, Anomaly, CsRequest, Error, Event, NodeId, Protocol, Status};

/// A KRL (or KRLF) node.
#[derive(Debug, Clone)]
pub struct Node {
    id: NodeId,
    settings: Settings,
    status: Status,
    height: Height,
    neighbors: Neighbors,
    tokens: u32,
    next: Option<NodeId>,
    queue: FifoQueue<NodeId>,
    /// A LinkInfo made this holder lower itself, and nothing has happened since that could
    /// make another lowering useful; see `may_lower_on_link_info`.
    lowered_on_link_info: bool,
    raises: u64,
    outbox: Outbox<Message>,
}

impl PartialEq for Node {
    /// Protocol state only: the output buffer is always empty between calls.
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.settings == other.settings
            && self.status == other.status
            && self.height == other.height
            && self.neighbors == other.neighbors
            && self.tokens == other.tokens
            && self.next == other.next
            && self.queue == other.queue
            && self.lowered_on_link_info == other.lowered_on_link_info
            && self.raises == other.raises
    }
}
impl Eq for Node {}

impl Node {
    /// A node in its initial state, or `Err` if the configuration is invalid.
    pub fn new(config: Config) -> Result<Self, Error> {
        let next = config.validate()?;
        let neighbors = Neighbors::with_known(config.neighbors.iter().copied(), config.height);
        Ok(Node {
            id: config.id,
            settings: config.settings,
            status: Status::Remainder,
            height: config.height,
            neighbors,
            tokens: config.tokens,
            next,
            queue: FifoQueue::new(),
            lowered_on_link_info: false,
            raises: 0,
            outbox: Outbox::default(),
        })
    }

    /// Tokens held.
    pub fn tokens(&self) -> u32 {
        self.tokens
    }

    /// Whether the node holds at least one token.
    pub fn holds_token(&self) -> bool {
        self.tokens > 0
    }

    /// What the network agrees on.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// The node's own height.
    pub fn height(&self) -> Height {
        self.height
    }

    /// The neighbour table: the node's view of its neighbours' heights and handshake state.
    pub fn neighbors(&self) -> &Neighbors {
        &self.neighbors
    }

    /// Where the node last sent a request or token (itself while it holds a token); `None`
    /// when the link to it failed or no neighbour could be asked.
    pub fn next(&self) -> Option<NodeId> {
        self.next
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
    pub fn may_lower_on_link_info(&self) -> bool {
        !self.lowered_on_link_info
    }

    /// Height raises (partial reversals) performed so far.
    pub fn raises(&self) -> u64 {
        self.raises
    }

    /// Tokens not used by the node's own critical section.
    fn spare_tokens(&self) -> u32 {
        self.tokens - u32::from(self.status == Status::Critical)
    }

    /// `next` no longer leads downhill: it is unset (its link failed) or no longer lower.
    fn next_is_stale(&self) -> bool {
        self.next
            .is_none_or(|next| !self.neighbors.is_lower(next, self.height))
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
        if !self.queue.is_empty() {
            self.serve();
        } else if self.settings.forwarding {
            self.forward_idle_token();
        }
        if self.holds_token() && self.neighbors.all_lower(self.height) {
            self.lower_height();
        }
    }

    /// Hear what `j` says of its height (`h`, used only if `j` can hold it), report what is
    /// wrong with it, and tell `j` our height if it asked or ours moved during the handshake.
    /// `None` if `j` has no link here.
    fn hear(&mut self, j: NodeId, h: Height, said: Said) -> Option<Heard> {
        let valid = h.possible_from(j).then_some(h);
        match self.neighbors.hear(j, valid, self.height, said) {
            Err(anomaly) => {
                self.outbox.anomaly(j, anomaly);
                None
            }
            Ok(heard) => {
                if valid.is_none() {
                    self.outbox.anomaly(j, Anomaly::OutOfRange);
                }
                if heard.tell {
                    self.outbox.send(j, Message::LinkInfo(self.height.into()));
                }
                Some(heard)
            }
        }
    }

    fn on_request_msg(&mut self, j: NodeId, h: Height) {
        let Some(entry) = self.neighbors.get(j) else {
            return self.outbox.anomaly(j, Anomaly::UnknownPeer);
        };
        if !entry.received_li() {
            // Sent before the peer received our token: the token already answered it.
            return self.outbox.anomaly(j, Anomaly::Stale);
        }
        let valid = h.possible_from(j);
        if !entry.in_n && !valid {
            // The peer's LinkInfo never reached us and this height is impossible: ask for it.
            // The peer answers and, since we are its `next`, sends the REQUEST again.
            self.outbox.anomaly(j, Anomaly::OutOfRange);
            if let Some(entry) = self.neighbors.get_mut(j) {
                entry.asked = true;
                entry.form_height = self.height;
            }
            return self.outbox.send(j, Message::Probe(self.height.into()));
        }
        // A REQUEST carries the sender's height: from a forming link it completes the handshake
        // its lost LinkInfo would have (T1). An impossible height leaves our view as it was.
        self.hear(j, h, Said::Info);
        if self
            .neighbors
            .get(j)
            .is_some_and(|n| n.height > self.height)
        {
            self.queue.enqueue(j);
        } else {
            // The peer takes us for lower than we are (our LinkInfo is on its way, or was
            // corrupted and dropped): tell it our height, and it routes its request elsewhere
            // (T2).
            if valid {
                self.outbox.anomaly(j, Anomaly::Stale);
            }
            self.outbox.send(j, Message::LinkInfo(self.height.into()));
        }
        if self.holds_token() {
            self.serve();
        } else if self.neighbors.all_higher(self.height) {
            self.raise_height();
        } else if (self.queue.len() == 1 && self.queue.front() == Some(j))
            || (!self.queue.is_empty() && self.next_is_stale())
        {
            self.forward_request();
        }
    }

    fn on_token(&mut self, j: NodeId, h: Height) {
        if self.tokens >= self.settings.k {
            // Holding more than k tokens is impossible in a correct system; refusing keeps
            // k-exclusion locally, and the report makes the refusal visible.
            return self.outbox.anomaly(j, Anomaly::OutOfRange);
        }
        self.tokens += 1;
        if self.neighbors.get(j).is_some() {
            // The token is kept whatever its height says, and always acknowledged: until it
            // is, the sender ignores everything we say of our height.
            self.hear(j, h, Said::Info);
            let valid = h.possible_from(j);
            if let Some(entry) = self.neighbors.get_mut(j).filter(|n| n.in_n && valid) {
                entry.visited = true;
            }
            let lowered = h.below(self.id).filter(|_| valid && self.height > h);
            if let Some(lowered) = lowered {
                // The paper tells only the neighbours that were below us: those above stay
                // above, so their (now too high) view of us still gives the right direction.
                for k in self.neighbors.outgoing(self.height) {
                    if k != j {
                        self.outbox.send(k, Message::LinkInfo(lowered.into()));
                    }
                }
                self.height = lowered;
            }
            self.outbox.send(j, Message::TokenAck(self.height.into()));
        } else {
            // Keep the token (never lose capacity) but not the unverifiable height.
            self.outbox.anomaly(j, Anomaly::UnknownPeer);
        }
        if !self.queue.is_empty() {
            self.serve();
        } else if self.settings.forwarding {
            self.forward_idle_token();
        } else {
            self.next = Some(self.id);
        }
    }

    /// A LinkInfo, Probe or TokenAck from `j`.
    fn on_height_msg(&mut self, j: NodeId, h: Height, said: Said) {
        // KRLF can send `j` a second token before the first is acknowledged; each TokenAck
        // settles one, so only the last restores trust in what `j` says.
        if self.hear(j, h, said).is_none() {
            return;
        }
        if said == Said::Probe {
            // Our `next` asks for our height: it may be the peer of a link it had not noticed
            // when our REQUEST came, which it then had to drop (T1).
            self.ask_again(j);
        }
        if !h.possible_from(j) {
            // Nothing can be concluded from an impossible height, but it may have been the
            // answer to our Probe (T1): ask again if we still need it.
            if self.needs_links() {
                self.ask_forming();
            }
            return;
        }
        if self.neighbors.is_lower(j, self.height) {
            // `j` is below us now, so it routes its requests elsewhere (LinkInfo line 7).
            self.queue.delete(j);
        }
        if self.holds_token() && !self.lowered_on_link_info && self.neighbors.all_lower(self.height)
        {
            self.lowered_on_link_info = true;
            self.lower_height();
        }
        if self.holds_token() {
            return;
        }
        if self.neighbors.all_higher(self.height) {
            self.raise_height();
        } else {
            self.trim_height();
            if !self.queue.is_empty() && self.next_is_stale() {
                self.forward_request();
            }
        }
    }

    /// A new link, or (for a link already known) the link layer confirming it: a keepalive,
    /// on which the node announces its height again, and asks again if the peer is its way to
    /// a token, so a view of it or a REQUEST to it corrupted on the way is corrected (T6).
    fn on_link_up(&mut self, j: NodeId) {
        if j == self.id {
            return self.outbox.anomaly(j, Anomaly::RedundantLinkEvent);
        }
        self.neighbors.link_up(j, self.height);
        if self.needs_links() && self.neighbors.get(j).is_some_and(|n| n.forming) {
            // No way down and a request to forward: this link may be the way, and the peer's
            // LinkInfo may already have come and gone (T1). Ask for it.
            self.ask_forming();
        } else {
            self.outbox.send(j, Message::LinkInfo(self.height.into()));
            self.ask_again(j);
        }
    }

    /// Send our REQUEST again if `j` is our way to a token: it may not have it (T1, T6).
    fn ask_again(&mut self, j: NodeId) {
        let waiting = !self.holds_token() && !self.queue.is_empty();
        if waiting && self.next == Some(j) && !self.next_is_stale() {
            self.outbox.send(j, Message::Request(self.height.into()));
        }
    }

    /// A non-holder with requests to forward and no member of `N` below it.
    fn needs_links(&self) -> bool {
        !self.holds_token() && !self.queue.is_empty() && self.neighbors.all_higher(self.height)
    }

    fn on_link_down(&mut self, j: NodeId) {
        if !self.neighbors.link_down(j) {
            return self.outbox.anomaly(j, Anomaly::RedundantLinkEvent);
        }
        self.queue.delete(j);
        if self.next == Some(j) {
            // Our request died with the link: even if the link re-forms, `j` has dropped it.
            self.next = None;
        }
        if !self.holds_token() {
            if self.neighbors.all_higher(self.height) {
                self.raise_height();
            } else {
                self.trim_height();
                if !self.queue.is_empty() && self.next_is_stale() {
                    self.forward_request();
                }
            }
        } else if self.neighbors.all_lower(self.height) {
            self.lower_height();
        }
    }

    /// ForwardRequest: ask the lowest neighbour. With no member of `N` the request waits for a
    /// link; links that are still forming are asked for their peer's height (T1).
    fn forward_request(&mut self) {
        self.next = self.neighbors.lowest();
        match self.next {
            Some(next) => self.outbox.send(next, Message::Request(self.height.into())),
            None => self.ask_forming(),
        }
    }

    /// Send a Probe to every forming link not asked yet: this node needs its links now.
    fn ask_forming(&mut self) {
        let own = self.height;
        for peer in self.neighbors.ask_forming(own) {
            self.outbox.send(peer, Message::Probe(own.into()));
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
            debug_assert!(next == self.id || self.neighbors.is_member(next));
            if next == self.id {
                self.status = Status::Critical;
                self.outbox.push(Action::EnterCritical { resources: 1 });
            } else if self.neighbors.is_member(next) {
                self.send_token(next);
                if !self.holds_token() && !self.queue.is_empty() {
                    self.outbox.send(next, Message::Request(self.height.into()));
                }
            }
        }
        if self.holds_token() {
            self.next = Some(self.id);
        }
    }

    fn send_token(&mut self, to: NodeId) {
        self.tokens -= 1;
        self.next = Some(to);
        let assumed = self.height.just_below(to);
        if let Some(entry) = self.neighbors.get_mut(to) {
            entry.token_sent(assumed);
        }
        self.outbox.send(to, Message::Token(self.height.into()));
    }

    /// KRLF PickLowest&ForwardToken: pass one idle token to the lowest unvisited neighbour,
    /// clearing the marks once every neighbour has been visited.
    fn forward_idle_token(&mut self) {
        if self.spare_tokens() == 0 {
            return;
        }
        if self.neighbors.members().all(|n| n.visited) {
            for n in self.neighbors.members_mut() {
                n.visited = false;
            }
        }
        let Some(next) = self.neighbors.lowest_where(|n| !n.visited) else {
            self.next = Some(self.id);
            return;
        };
        if let Some(entry) = self.neighbors.get_mut(next) {
            entry.visited = true;
        }
        self.send_token(next);
        if self.holds_token() {
            self.next = Some(self.id);
        }
    }

    /// RaiseHeight: partial reversal, then drop queued requests from nodes now below us
    /// (their links reversed) and re-forward our own queue. The node also asks its forming
    /// links (T1): the way down may lie through one of them, and without it nodes cut off from
    /// every token in `N` would raise over each other for ever.
    fn raise_height(&mut self) {
        let Some(new) = height::raise(self.height, self.neighbors.heights()) else {
            // Isolated: wait for a link. Or the reversal would leave the height range, which
            // only a forged view at its edge causes: ask the lowest neighbour anyway, and let
            // its answer correct the view (T2).
            self.ask_forming();
            if !self.queue.is_empty() && !self.neighbors.is_empty() {
                self.forward_request();
            }
            return;
        };
        self.height = new;
        self.raises += 1;
        self.announce();
        self.ask_forming();
        let (id, neighbors) = (self.id, &self.neighbors);
        self.queue
            .delete_where(|q| q != id && neighbors.is_lower(q, new));
        if !self.queue.is_empty() {
            self.forward_request();
        }
    }

    /// A non-holder far above every neighbour comes down to one level above them (T7).
    fn trim_height(&mut self) {
        if let Some(new) = height::trim(self.height, self.neighbors.heights()) {
            self.height = new;
            self.announce();
        }
    }

    /// Send our height to every member of `N`.
    fn announce(&mut self) {
        let height = self.height.into();
        for n in self.neighbors.members() {
            self.outbox.send(n.id, Message::LinkInfo(height));
        }
    }

    /// LowerHeight: the mirror of partial reversal, for a token holder with no incoming link.
    fn lower_height(&mut self) {
        let Some(new) = height::lower(self.height, self.neighbors.heights()) else {
            return;
        };
        self.height = new;
        for k in self.neighbors.incoming(new) {
            self.outbox.send(k, Message::LinkInfo(new.into()));
        }
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

    fn handle(&mut self, event: Event<Message>) -> Result<Actions<'_, Message>, Error> {
        self.outbox.clear();
        match event {
            Event::Request(CsRequest { resources, .. }) => {
                if self.status != Status::Remainder {
                    return Err(Error::AlreadyRequested(self.status));
                }
                if resources != 1 {
                    return Err(Error::InvalidResources {
                        requested: resources,
                        k: 1,
                    });
                }
                self.lowered_on_link_info = false;
                self.on_request();
            }
            Event::Release => {
                if self.status != Status::Critical {
                    return Err(Error::NotInCritical(self.status));
                }
                self.lowered_on_link_info = false;
                self.on_release();
            }
            Event::Receive { from, msg } => match msg {
                Message::Request(h) => self.on_request_msg(from, h.open()),
                Message::Token(h) => {
                    self.lowered_on_link_info = false;
                    self.on_token(from, h.open());
                }
                Message::LinkInfo(h) => self.on_height_msg(from, h.open(), Said::Info),
                Message::Probe(h) => self.on_height_msg(from, h.open(), Said::Probe),
                Message::TokenAck(h) => self.on_height_msg(from, h.open(), Said::Ack),
            },
            Event::LinkUp(j) => {
                self.lowered_on_link_info = false;
                self.on_link_up(j);
            }
            Event::LinkDown(j) => {
                self.lowered_on_link_info = false;
                self.on_link_down(j);
            }
            other => return Err(Error::Unsupported(other.name())),
        }
        Ok(self.outbox.drain())
    }
}
