//! The prioritized h-out-of-k node: state, accessors and the application's events.

use crate::node::Outbox;
use crate::queue::{Priority, PriorityQueue};
use crate::token::height::Height;
use crate::token::links::{Links, TokenNode};
use crate::token::neighbors::Neighbors;
use crate::token::recovery::{Recover, Watch};
use crate::token::Departure;
use crate::{
    Action, Anomaly, CsRequest, Error, Event, Fence, NodeId, Protocol, Report, Severity, Status,
};

use super::Message;
use super::{Config, Settings};

/// A node of the prioritized h-out-of-k algorithm (one token carrying `t` free resources, a
/// priority queue with aging, partial reversal on the neighbour graph). `Clone` and `PartialEq`
/// (which compares state) let tests snapshot it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub(super) id: NodeId,
    pub(super) settings: Settings,
    pub(super) status: Status,
    /// Height, neighbours and `next` (the neighbour the last REQUEST went to, where the
    /// token is in our view).
    pub(super) links: Links,
    /// `Some(t)` while holding the token with `t` free resources.
    pub(super) token: Option<u32>,
    /// While holding the token, its grant counter: the fence of its last grant (lane 0; it
    /// travels with the token; with recovery, beacons raise it too and its generation is the
    /// token's).
    pub(super) grants: Fence,
    /// While holding the token, the resources it knows may have been lost to corrupted
    /// counts (it travels with the token; 0 without it): `k - lost` is what can ever be free,
    /// and a request above it waits without holding up the others (P15).
    pub(super) lost: u32,
    pub(super) queue: PriorityQueue<NodeId>,
    /// Resources of the open request (waiting) or held (critical); 0 in the remainder.
    pub(super) wanted: u32,
    /// Released resources that could not be forwarded yet because the node had no neighbour;
    /// sent on the next link, or added to `t` if the token arrives first.
    pub(super) backlog: u32,
    /// News of resources lost on the way that came with the backlog's releases, sent with
    /// them (P15).
    pub(super) backlog_lost: u32,
    /// The token generation that granted the backlog's resources (F7).
    pub(super) backlog_generation: u32,
    /// The token generation that granted the node's current entry (F7).
    pub(super) entry_generation: u32,
    /// Recovery's state ([`Settings::recovery`]), `None` without it.
    pub(super) watch: Option<Watch>,
    /// The turnover's watch (F7, F11): while the rebuild timer runs, the token's fence value
    /// as this node last knew it with no grant since the timer was armed (only beacons,
    /// one step each, raised it since); `None` while not watching. A token that comes back
    /// at that value keeps the timer running instead of re-arming it.
    pub(super) quiet: Option<u64>,
    /// The rebuild timer ran out while the token was away: a turnover is due when it comes
    /// back with no grant since (F11).
    pub(super) overdue: bool,
    /// Whether the node is leaving, or has left (`Event::Leave`, L4).
    departure: Departure,
    pub(super) outbox: Outbox<Message>,
}

impl Node {
    /// A node in its initial state, or `Err(Error::InvalidConfig)`.
    pub fn new(config: Config) -> Result<Self, Error> {
        let next = config.validate()?;
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
            .jumping(config.restarted && !config.holder),
            token: config.holder.then_some(config.settings.k),
            grants: Fence::new(0, 0),
            lost: 0,
            queue: PriorityQueue::new(),
            wanted: 0,
            backlog: 0,
            backlog_lost: 0,
            backlog_generation: 0,
            entry_generation: 0,
            watch: config.settings.recovery.map(|r| {
                let (made, promises) = (config.made_up_to, config.promises.as_deref());
                Watch::new(r, 1, config.restarted, made, promises)
            }),
            quiet: None,
            overdue: false,
            departure: Departure::Staying,
            outbox: Outbox::default(),
        })
    }

    /// Shared settings.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Whether the node accepted [`Event::Leave`] (L4): it takes no further request, keeps
    /// neither the token nor released resources, and answers what still reaches it.
    pub fn leaving(&self) -> bool {
        self.departure.gone()
    }

    /// Whether the node reported [`Report::Left`] (L4).
    pub fn has_left(&self) -> bool {
        self.departure == Departure::Left
    }

    /// Whether the node holds the token.
    pub fn holds_token(&self) -> bool {
        self.token.is_some()
    }

    /// `t`, the token's free resources, while holding the token.
    pub fn available(&self) -> Option<u32> {
        self.token
    }

    /// Resources held in the critical section (0 outside it).
    pub fn held(&self) -> u32 {
        if self.status == Status::Critical {
            self.wanted
        } else {
            0
        }
    }

    /// Resources of the open request while waiting.
    pub fn requested(&self) -> Option<u32> {
        (self.status == Status::Waiting).then_some(self.wanted)
    }

    /// Released resources waiting for a neighbour to be forwarded to (see the module docs).
    pub fn release_backlog(&self) -> u32 {
        self.backlog
    }

    /// While holding the token, what can ever be free: `k`, less the resources the token
    /// knows may have been lost to corrupted counts (reported when they were); `None` without
    /// the token. A request for more than this is not served until capacity comes back, and
    /// does not keep smaller requests waiting (P15).
    pub fn capacity(&self) -> Option<u32> {
        self.token
            .map(|_| self.settings.k.saturating_sub(self.lost))
    }

    /// Partial reversals (height raises) performed so far.
    pub fn raises(&self) -> u64 {
        self.links.raises
    }

    /// The node's height.
    pub fn height(&self) -> Height {
        self.links.height
    }

    /// `next`: the node itself while holding the token, else where its last request went
    /// (`None` if that link failed or the node had no neighbour to ask).
    pub fn next(&self) -> Option<NodeId> {
        self.links.next
    }

    /// The request queue, front first.
    pub fn queue(&self) -> impl ExactSizeIterator<Item = (NodeId, Priority)> + '_ {
        self.queue.iter()
    }

    /// Visit the heap memory an event at this node reads besides the node itself (the
    /// neighbour table and the request queue), as `(start, length in bytes)`: a simulator of
    /// large networks asks the cache for it ahead of time. Not part of the stable API.
    #[doc(hidden)]
    pub fn heap_regions(&self, visit: &mut impl FnMut(*const u8, usize)) {
        self.links.neighbors.heap_regions(visit);
        self.queue.heap_regions(visit);
    }

    /// The neighbour table.
    pub fn neighbors(&self) -> &Neighbors {
        &self.links.neighbors
    }

    /// The application asks for `req.resources` resources with priority `req.priority`.
    fn request(&mut self, req: CsRequest) {
        let k = self.settings.k;
        self.status = Status::Waiting;
        self.wanted = req.resources;
        let before = self.queue.front();
        let priority = self.settings.policy.priority(self.id, req, k);
        self.queue.upsert(self.id, priority);
        self.settle(before);
    }

    /// The application withdraws its waiting request. A waiting holder serves the rest of its
    /// queue; elsewhere the REQUEST already sent stays valid for the rest of the queue, and a
    /// token it brings with nobody left to serve is kept, as any.
    fn cancel(&mut self) {
        let before = self.queue.front();
        self.status = Status::Remainder;
        self.wanted = 0;
        self.queue.delete(self.id);
        self.settle(before);
    }

    /// The application leaves the critical section, releasing everything it held.
    fn release(&mut self) {
        let r = self.wanted;
        self.status = Status::Remainder;
        self.wanted = 0;
        self.end_lease();
        self.queue.age(self.settings.aging_step);
        let current = self.entry_generation == self.grants.generation();
        match self.token.as_mut() {
            // Cannot exceed k unless a peer already corrupted t (reported when it did).
            Some(t) if current => {
                *t = t.saturating_add(r).min(self.settings.k);
                self.serve();
            }
            // A later generation of the token counted them free already (F7).
            Some(_) => self.serve(),
            None => self.forward_release(r, 0, self.entry_generation),
        }
    }

    /// `Leave` (L4), in the remainder section: hand the token over, then rise above every
    /// neighbour so that routes (and RELEASEs, which go to the lowest neighbour) move away
    /// from this node. Requests queued here stay: the node relays for them.
    fn leave(&mut self) {
        self.departure = Departure::Leaving;
        self.hand_over();
        self.links.rise_to_leave(&mut self.outbox);
    }

    /// A leaving node keeps no token (L4): it serves the requests queued here first (the
    /// requesters' direction, with the REQUEST for the rest that brings it back), and
    /// otherwise goes to the lowest member of `N` with its count, its news of lost
    /// resources and its fence unchanged. With no member of `N` it stays until a link
    /// joins it.
    fn hand_over(&mut self) {
        if self.token.is_none() {
            return;
        }
        self.serve();
        if let Some(to) = self.links.neighbors.lowest() {
            self.give_token(to, crate::queue::Priority::new(0, 0));
        }
    }

    /// What every event of a leaving node ends with (L4): hand over what it holds, and report
    /// `Left` once, when it holds neither the token nor released resources, the token it
    /// sent is acknowledged and no request is queued here.
    fn leave_progress(&mut self) {
        if !self.departure.gone() {
            return;
        }
        self.hand_over();
        if self.departure == Departure::Leaving
            && self.token.is_none()
            && self.backlog == 0
            && self.backlog_lost == 0
            && self.queue.is_empty()
            && self.links.all_acked()
        {
            self.departure = Departure::Left;
            self.outbox.push(Action::Report(Report::Left));
        }
    }
}

impl crate::node::Buffered for Node {
    fn outbox(&mut self) -> &mut Outbox<Message> {
        &mut self.outbox
    }

    fn step(&mut self, event: Event<Message>) -> Result<(), Error> {
        crate::node::check_local(&event, self.status, Some(self.settings.k))?;
        self.departure.check(&event, self.status)?;
        match event {
            Event::Request(req) => self.request(req),
            Event::Leave => self.leave(),
            Event::Release => self.release(),
            Event::Cancel => self.cancel(),
            Event::Receive { from, msg } => self.receive(from, msg),
            Event::LinkUp(peer) => self.link_up(peer),
            Event::LinkDown(peer) => self.link_down(peer),
            // Only the raise pause and recovery set timers; any other id is stale or foreign.
            Event::Timeout(timer)
                if self.settings.raise_pause.is_some() || self.watch.is_some() =>
            {
                if self.links.paces(timer) {
                    if self.links.pause_ended(timer) {
                        self.settle(self.queue.front());
                    }
                } else {
                    self.on_timer(timer);
                }
            }
            Event::Refused { fence, newest } => self.on_refused(fence, newest)?,
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
