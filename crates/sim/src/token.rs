//! The simulator for token algorithms on neighbour-only links (the KRL paper's section 6
//! model): FIFO links with a fixed delay, Poisson requests, a fixed critical-section length, and
//! Poisson link changes that delete a random idle non-bridge link and form a random new one.
//!
//! Every step can be followed by the algorithm's safety check; after the load phase the run
//! drains (no new requests, no link changes) and must bring every waiting node into the
//! critical section. A failure returns a [`Violation`] with the seed and the last events.

use std::collections::VecDeque;
use std::fmt;
use std::ops::{AddAssign, SubAssign};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

use super::topology::{Graph, LinkPick};
use super::workload::Workload;
use super::{EventQueue, Metrics, Time, Violation};
use manet_mutex::fence::Fences;
use manet_mutex::{Action, CsRequest, Error, Event, NodeId, Protocol, Status, TimerId};

/// A token network to build: what its nodes agree on, and where the tokens start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params<S> {
    /// The algorithm's settings.
    pub settings: S,
    /// The initial token holders.
    pub holders: Vec<NodeId>,
}

impl<S> Params<S> {
    /// `settings`, with tokens at `holders`.
    pub fn new(settings: S, holders: Vec<NodeId>) -> Self {
        Params { settings, holders }
    }

    /// `settings`, with one token at each of the first `count` nodes (the KRL paper's layout).
    pub fn first_nodes(settings: S, count: u32) -> Self {
        Params::new(settings, (0..count).map(NodeId).collect())
    }
}

/// What the token simulator needs from an algorithm besides [`Protocol`] (implemented for
/// both token algorithms in `sim::adapters`).
pub trait TokenAlgorithm: Protocol + crate::trace::Visible + Clone + Sized {
    /// What the network's nodes agree on (the algorithm's `Settings`).
    type Settings: Clone + fmt::Debug;

    /// Nodes `0..graph.n()` in a consistent initial state.
    fn build(graph: &Graph, params: &Params<Self::Settings>) -> Result<Vec<Self>, Error>;

    /// Safety invariants over all nodes and every message in flight.
    ///
    /// It must be equivalent to [`TokenAlgorithm::check_node`] on every node and
    /// [`TokenAlgorithm::check_tally`] on the sum of every node's [`TokenAlgorithm::tally`]
    /// and every in-flight message's [`TokenAlgorithm::message_tally`]: the simulator's
    /// incremental check relies on it (see [`Config::check_every_step`]).
    fn check_safety(
        nodes: &[Self],
        in_flight: &Channels<Self::Message>,
    ) -> Result<(), manet_mutex::Violation>;

    /// What a node or a message contributes to the network-wide counts the safety invariants
    /// bound (tokens, resources, nodes in the critical section).
    type Tally: Copy + Default + PartialEq + fmt::Debug + AddAssign + SubAssign;

    /// This node's contribution to the network-wide counts.
    fn tally(&self) -> Self::Tally;

    /// The contribution of `msg` while it is in flight, in a network with `settings`.
    fn message_tally(settings: &Self::Settings, msg: &Self::Message) -> Self::Tally;

    /// The safety invariants about this node alone (they read its own state only).
    fn check_node(&self) -> Result<(), manet_mutex::Violation>;

    /// The safety invariants about the whole network, given the sum of every node's and every
    /// in-flight message's tally.
    fn check_tally(nodes: &[Self], total: Self::Tally) -> Result<(), manet_mutex::Violation>;

    /// Extra checks once the run has drained (no node waiting or in the critical section, no
    /// new requests or link changes); `quiescent` says whether no message is in flight.
    fn check_drained(
        nodes: &[Self],
        in_flight: &Channels<Self::Message>,
        quiescent: bool,
    ) -> Result<(), manet_mutex::Violation>;

    /// Height raises this node performed (for the raises-per-link-change metric).
    fn raises(&self) -> u64 {
        0
    }

    /// A hint: ask the CPU cache for the state outside the node's own struct that its next
    /// event will read (the simulator asks for the struct itself). It must change nothing;
    /// the default does nothing.
    fn prefetch(&self) {}
}

/// The messages in flight, per directed link, oldest first.
///
/// Each directed link used so far has an id: a record of its ends and the head and tail of a
/// FIFO list threaded through one shared slab of message slots. The links of the graph given
/// to [`Channels::for_graph`] (the simulator's initial topology) have theirs up front, numbered
/// in node order, so each sender's records form one block sorted by receiver, found by its
/// position alone; a link opened later is listed in a per-sender index of `(receiver, id)`
/// sorted by receiver (at most its degree over the run). A push by ends costs a binary search
/// of one node's block (and its index if that fails); a push or a pop by id ([`Channels::push_on`],
/// [`Channels::pop_on`]) costs nothing more than the slot, which is what the simulator's
/// deliveries use. Slots are reused through a free list and the ids of forgotten links
/// ([`Channels::forget`]) through a spare list, so steady-state traffic does not allocate;
/// memory is a few bytes per used link plus one slot per message at the peak of traffic (not a
/// buffer per link, nor anything `n²`). A count of messages in flight makes
/// [`Channels::is_empty`] constant time.
#[derive(Debug, Clone)]
pub struct Channels<M> {
    /// `blocks[from]`: `from`'s links given by [`Channels::for_graph`], as the ids
    /// `first..first + count` (sorted by receiver). A forgotten one keeps its place and its
    /// receiver, its `from` set to [`GONE`], until it is opened again.
    blocks: Vec<(u32, u32)>,
    /// `index[from]`: `(to, id)` of every other link `from → to` with an id, by `to`.
    index: Vec<Vec<(NodeId, u32)>>,
    /// The links, by id.
    links: Vec<Link>,
    /// Ids of forgotten links outside the blocks, to reuse.
    spare: Vec<u32>,
    /// Message slots: a message in flight and the slot of the next one on its link, or a free
    /// slot and the next free one.
    slots: Vec<(Option<M>, u32)>,
    /// The first free slot (`NONE`: none).
    free: u32,
    /// Messages in flight in all.
    count: usize,
}

/// No slot.
const NONE: u32 = u32::MAX;

/// The sender of a forgotten link in a block (no node has this id in a simulation).
const GONE: NodeId = NodeId(u32::MAX);

/// One directed link's ends and FIFO: its oldest and newest slots.
#[derive(Debug, Clone, Copy)]
struct Link {
    from: NodeId,
    to: NodeId,
    head: u32,
    tail: u32,
}

impl<M> Default for Channels<M> {
    fn default() -> Self {
        Channels {
            blocks: Vec::new(),
            index: Vec::new(),
            links: Vec::new(),
            spare: Vec::new(),
            slots: Vec::new(),
            free: NONE,
            count: 0,
        }
    }
}

impl<M> Channels<M> {
    /// Empty channels with room for `links` links, so that opening that many does not move
    /// the links already open (capacity costs address space, not memory, until it is used).
    pub fn with_capacity(links: usize) -> Self {
        let mut channels = Channels::default();
        channels.links.reserve_exact(links);
        channels
    }

    /// Channels with an id for every link of `graph` in both directions, numbered in node
    /// order (a node's links, and their records, lie together in memory).
    pub fn for_graph(graph: &Graph) -> Self {
        let mut channels = Channels::with_capacity(2 * graph.edges().len());
        channels.blocks = (0..graph.n())
            .map(|a| {
                let from = NodeId(a as u32);
                let first = channels.links.len() as u32;
                channels.links.extend(graph.neighbors(from).map(|to| Link {
                    from,
                    to,
                    head: NONE,
                    tail: NONE,
                }));
                (first, channels.links.len() as u32 - first)
            })
            .collect();
        channels
    }

    /// `from`'s block of links and the id of its first (empty without
    /// [`Channels::for_graph`]).
    #[inline]
    fn block(&self, from: NodeId) -> (u32, &[Link]) {
        let &(first, count) = self.blocks.get(from.index()).unwrap_or(&(0, 0));
        (first, &self.links[first as usize..(first + count) as usize])
    }

    /// The id and record of `from → to` in `from`'s block, forgotten or not.
    #[inline]
    fn in_block(&self, from: NodeId, to: NodeId) -> Option<(u32, &Link)> {
        let (first, block) = self.block(from);
        let i = block.binary_search_by_key(&to, |l| l.to).ok()?;
        Some((first + i as u32, &block[i]))
    }

    /// A cache hint: where `from`'s block is.
    fn prefetch_block_of(&self, from: NodeId) {
        if let Some(block) = self.blocks.get(from.index()) {
            crate::prefetch::value(block);
        }
    }

    /// A cache hint: `from`'s block of links (where it is must be cached by now, see
    /// [`Channels::prefetch_block_of`]).
    fn prefetch_block(&self, from: NodeId) {
        crate::prefetch::slice(self.block(from).1);
    }

    /// The id of the link `from → to`, if it has one (opened, or a link of the graph given to
    /// [`Channels::for_graph`], and not forgotten).
    #[inline]
    pub fn id(&self, from: NodeId, to: NodeId) -> Option<u32> {
        if let Some((id, link)) = self.in_block(from, to) {
            return (link.from == from).then_some(id);
        }
        let links = self.index.get(from.index())?;
        let i = links.binary_search_by_key(&to, |l| l.0).ok()?;
        Some(links[i].1)
    }

    /// The id of the link `from → to`, given one if it has none yet.
    pub fn open(&mut self, from: NodeId, to: NodeId) -> u32 {
        if let Some((id, _)) = self.in_block(from, to) {
            let link = &mut self.links[id as usize];
            if link.from == GONE {
                *link = Link {
                    from,
                    to,
                    head: NONE,
                    tail: NONE,
                };
            }
            return id;
        }
        if self.index.len() <= from.index() {
            self.index.resize_with(from.index() + 1, Vec::new);
        }
        let links = &mut self.index[from.index()];
        match links.binary_search_by_key(&to, |l| l.0) {
            Ok(i) => links[i].1,
            Err(i) => {
                let link = Link {
                    from,
                    to,
                    head: NONE,
                    tail: NONE,
                };
                let id = match self.spare.pop() {
                    Some(id) => {
                        self.links[id as usize] = link;
                        id
                    }
                    None => {
                        self.links.push(link);
                        (self.links.len() - 1) as u32
                    }
                };
                links.insert(i, (to, id));
                id
            }
        }
    }

    /// Forget the links between `a` and `b`, both idle (the link failed): their ids are
    /// reused, and [`Channels::id`] no longer knows them. Returns false (and forgets nothing)
    /// if a message is in flight between them.
    pub fn forget(&mut self, a: NodeId, b: NodeId) -> bool {
        if !self.idle(a, b) {
            return false;
        }
        for (from, to) in [(a, b), (b, a)] {
            if let Some((id, _)) = self.in_block(from, to) {
                self.links[id as usize].from = GONE;
            } else if let Some(links) = self.index.get_mut(from.index()) {
                if let Ok(i) = links.binary_search_by_key(&to, |l| l.0) {
                    self.spare.push(links.remove(i).1);
                }
            }
        }
        true
    }

    fn link(&self, from: NodeId, to: NodeId) -> Option<&Link> {
        self.id(from, to).map(|id| &self.links[id as usize])
    }

    /// The messages on one link, oldest first.
    fn walk(&self, link: &Link) -> impl Iterator<Item = &M> + '_ {
        let mut at = link.head;
        std::iter::from_fn(move || {
            let (msg, next) = self.slots.get(at as usize)?;
            at = *next;
            msg.as_ref()
        })
    }

    /// Every message in flight as `(from, to, msg)`, by `(from, to)` then oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, NodeId, &M)> {
        (0..self.blocks.len().max(self.index.len())).flat_map(move |from| {
            let from = NodeId(from as u32);
            let mut block = self
                .block(from)
                .1
                .iter()
                .filter(move |l| l.from == from)
                .peekable();
            let mut index = self
                .index
                .get(from.index())
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|&(_, id)| &self.links[id as usize])
                .peekable();
            // The two lists of `from`'s links merged by receiver.
            std::iter::from_fn(move || match (block.peek(), index.peek()) {
                (Some(b), Some(i)) if i.to < b.to => index.next(),
                (Some(_), _) => block.next(),
                (None, _) => index.next(),
            })
            .flat_map(move |link| self.walk(link).map(move |m| (link.from, link.to, m)))
        })
    }

    /// Whether nothing is in flight in either direction between `a` and `b`.
    pub fn idle(&self, a: NodeId, b: NodeId) -> bool {
        let empty = |from, to| self.link(from, to).is_none_or(|l| l.head == NONE);
        empty(a, b) && empty(b, a)
    }

    /// Whether nothing is in flight at all.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many messages are in flight in all.
    pub fn total(&self) -> usize {
        self.count
    }

    /// Append `msg` to the link `from → to`.
    pub fn push(&mut self, from: NodeId, to: NodeId, msg: M) {
        let id = self.open(from, to);
        self.push_on(id, msg);
    }

    /// Append `msg` to the link with id `id` (from [`Channels::open`]).
    #[inline]
    pub fn push_on(&mut self, id: u32, msg: M) {
        let slot = if self.free == NONE {
            self.slots.push((Some(msg), NONE));
            (self.slots.len() - 1) as u32
        } else {
            let slot = self.free;
            let entry = &mut self.slots[slot as usize];
            self.free = entry.1;
            *entry = (Some(msg), NONE);
            slot
        };
        let link = &mut self.links[id as usize];
        if link.tail == NONE {
            link.head = slot;
        } else {
            self.slots[link.tail as usize].1 = slot;
        }
        link.tail = slot;
        self.count += 1;
    }

    /// Take the oldest message on `from → to`.
    pub fn pop(&mut self, from: NodeId, to: NodeId) -> Option<M> {
        let id = self.id(from, to)?;
        self.pop_on(id).map(|(_, _, msg)| msg)
    }

    /// Take the oldest message on the link with id `id`, with the link's ends.
    #[inline]
    pub fn pop_on(&mut self, id: u32) -> Option<(NodeId, NodeId, M)> {
        let link = self.links.get_mut(id as usize)?;
        let slot = link.head;
        if slot == NONE {
            return None;
        }
        let entry = &mut self.slots[slot as usize];
        let msg = entry.0.take()?;
        let next = std::mem::replace(&mut entry.1, self.free);
        link.head = next;
        if next == NONE {
            link.tail = NONE;
        }
        self.free = slot;
        self.count -= 1;
        Some((link.from, link.to, msg))
    }

    /// The `i`-th oldest message on `from → to`, to rewrite it (test harnesses corrupt
    /// messages in flight).
    pub fn get_mut(&mut self, from: NodeId, to: NodeId, i: usize) -> Option<&mut M> {
        let mut at = self.link(from, to)?.head;
        for _ in 0..i {
            at = self.slots.get(at as usize)?.1;
        }
        self.slots.get_mut(at as usize)?.0.as_mut()
    }

    /// How many messages are in flight on `from → to` (a walk of its FIFO).
    pub fn len(&self, from: NodeId, to: NodeId) -> usize {
        self.link(from, to).map_or(0, |l| self.walk(l).count())
    }
}

/// A token-network simulation.
#[derive(Debug, Clone)]
pub struct Config<P> {
    /// The initial topology (must be connected for the drain guarantee).
    pub graph: Graph,
    /// Algorithm parameters.
    pub params: P,
    /// Requests and critical sections.
    pub workload: Workload,
    /// Link changes per time unit (`λ_mob`); 0 for a static network.
    pub lambda_mob: f64,
    /// Keep the graph connected during the load phase (the paper's model). When false, any
    /// idle link may fail — nodes can be cut off, even isolated — and when the load phase
    /// ends the simulator forms random links until the graph is connected again, so the drain
    /// still requires every request to be served.
    pub keep_connected: bool,
    /// How a link change picks the link that fails: [`LinkPick::Shuffled`] (the default, the
    /// paper's draws; linear in the links) or [`LinkPick::Sampled`] (expected constant time,
    /// for large networks; other draws, so other runs).
    pub link_pick: LinkPick,
    /// Message delay on every link.
    pub delay: f64,
    /// Networks of at least this many nodes look ahead for the cache: as each message is
    /// sent and one event before it is delivered, the simulator asks the CPU for the memory
    /// the receiver will read (`Sim::prefetch_upcoming`). It changes no result, only the time
    /// a large network takes: at 100,000 nodes the state (about 1 KiB a node) is far larger
    /// than the last-level cache and every event otherwise waits on a chain of misses, while
    /// up to 10,000 nodes it fits and the hints cost more than they save (measured on the
    /// 32 MiB cache of `docs/PERFORMANCE.md`'s machine). [`Config::new`] sets
    /// [`Config::PREFETCH_FROM`]; 0 always, `usize::MAX` never.
    pub prefetch_from: usize,
    /// Length of the load phase (requests and link changes happen only in it).
    pub duration: f64,
    /// Requests at fixed times, besides the Poisson ones of `workload` (set its `lambda_req`
    /// to 0 for these alone): a scripted scenario. A node asked while it is not in its
    /// remainder section ignores the request, as for a Poisson one.
    pub script: Vec<(Time, NodeId)>,
    /// Link changes to replay in the load phase, in time order (e.g. derived from an ns-2
    /// mobility file by [`super::ns2::Trace::link_changes`]), in addition to the random ones
    /// of `lambda_mob`. A link the schedule takes down while messages are in flight on it
    /// fails as soon as it is idle (a token algorithm's link layer reports a failure only
    /// when nothing is in flight; re-checked every message delay), unless the schedule
    /// brings it back first. `keep_connected` does not apply to them; after the load phase
    /// the simulator joins what they cut apart, as for random changes.
    pub replay: Vec<super::ns2::LinkChange>,
    /// After the load phase, how long waiting nodes may take to enter before it is starvation.
    pub drain_limit: f64,
    /// After the drain, at most how many events the protocol may take to settle (deliver
    /// what is in flight) before the final checks. Not measured: the measurement window
    /// ends when the last request issued has been served and released (see [`Metrics`]).
    /// [`Config::new`] sets `50 n²`; KRLF never settles (its tokens circulate), so the bound
    /// is what ends its run.
    pub settle_steps: usize,
    /// Check the safety invariants after every event.
    ///
    /// Incrementally: a step changes only the nodes it delivers events to and the links it
    /// pushes messages on or pops them from, so after a step the simulator runs
    /// [`TokenAlgorithm::check_node`] on the nodes it touched and
    /// [`TokenAlgorithm::check_tally`] on a running sum of tallies that it updates as each
    /// node is handled and each message is sent or delivered. Every other node passed its
    /// check when it was last touched and has not changed since, so this is exactly the full
    /// [`TokenAlgorithm::check_safety`] over the network (see `docs/PERFORMANCE.md`). The
    /// full check still runs after the first step, every [`Config::full_check_every`] steps
    /// and at the end, and there it also compares the running sum with a recount; a failure
    /// is always reported with the full check's message.
    pub check_every_step: bool,
    /// With [`Config::check_every_step`], how many incremental checks run between two full
    /// ones (every node, every message, and a recount of the running tally): 0 runs the full
    /// check after every step, `u64::MAX` only after the first step and at the end.
    /// [`Config::new`] sets `max(4096, 64 n)`, which keeps its cost a small constant per
    /// event.
    pub full_check_every: u64,
    /// How many recent events a violation report keeps (0: none, cheapest).
    pub trace_len: usize,
    /// Record the whole run for the viewer ([`crate::trace`]): [`Outcome::recording`], or the
    /// violation's. Costs a view of the node and the text of the event and of every message,
    /// per event.
    pub record: bool,
    /// The RNG seed: a run is a pure function of this configuration.
    pub seed: u64,
}

impl<P> Config<P> {
    /// The default [`Config::prefetch_from`]: 16,384 nodes, about 16 MiB of state, half the
    /// last-level cache of the machine it was measured on.
    pub const PREFETCH_FROM: usize = 16_384;

    /// The paper's defaults (delay 1, CS 1) on `graph`, with checks on and a 64-event trace.
    pub fn new(graph: Graph, params: P, seed: u64) -> Self {
        let full_check_every = (64 * graph.n() as u64).max(4096);
        let n = graph.n().max(1);
        Config {
            graph,
            params,
            workload: Workload::default(),
            lambda_mob: 0.0,
            keep_connected: true,
            link_pick: LinkPick::Shuffled,
            delay: 1.0,
            prefetch_from: Self::PREFETCH_FROM,
            duration: 1_000.0,
            replay: Vec::new(),
            script: Vec::new(),
            drain_limit: 100_000.0,
            settle_steps: 50 * n * n,
            check_every_step: true,
            full_check_every,
            trace_len: 64,
            record: false,
            seed,
        }
    }
}

/// The result of a run that kept every invariant.
#[derive(Debug, Clone)]
pub struct Outcome<N> {
    /// What was measured.
    pub metrics: Metrics,
    /// The nodes' final states.
    pub nodes: Vec<N>,
    /// The final topology.
    pub graph: Graph,
    /// The whole run, if [`Config::record`] was set.
    pub recording: Option<crate::trace::Recording>,
}

#[derive(Debug, Clone, Copy)]
enum SimEvent {
    /// The oldest message on a link ([`Channels::open`]'s id) arrives at `to`.
    Deliver {
        link: u32,
        to: NodeId,
    },
    /// A timer a node set expires (cancellations are not tracked: nodes ignore stale expiries).
    Timeout {
        node: NodeId,
        timer: TimerId,
    },
    Request(NodeId),
    Release(NodeId),
    Mobility,
    /// The next change of [`Config::replay`].
    Replay,
    /// A replayed failure of a link that was busy when it was due: try again.
    RetryDown(NodeId, NodeId),
    EndOfLoad,
}

impl SimEvent {
    /// The node this event is handed to, if one.
    fn node(&self) -> Option<NodeId> {
        match *self {
            SimEvent::Deliver { to: node, .. }
            | SimEvent::Timeout { node, .. }
            | SimEvent::Request(node)
            | SimEvent::Release(node) => Some(node),
            _ => None,
        }
    }
}

/// The resources held, for the utilization metric.
struct Usage {
    /// Per node, the resources it holds.
    granted: Vec<u32>,
    /// Resources held in all.
    in_use: u32,
    /// Since when `in_use` has been what it is.
    since: Time,
}

impl Usage {
    /// Account for `node` holding `resources` (0 on release) from `now` on.
    fn change(&mut self, metrics: &mut Metrics, node: NodeId, resources: u32, now: Time) {
        metrics.resource_time += f64::from(self.in_use) * (now - self.since);
        self.since = now;
        self.in_use = self.in_use - self.granted[node.index()] + resources;
        self.granted[node.index()] = resources;
    }
}

struct Sim<P: TokenAlgorithm> {
    config: Config<Params<P::Settings>>,
    nodes: Vec<P>,
    graph: Graph,
    channels: Channels<P::Message>,
    queue: EventQueue<SimEvent>,
    rng: ChaCha8Rng,
    metrics: Metrics,
    requested_at: Vec<Option<(Time, CsRequest)>>,
    usage: Usage,
    loading: bool,
    /// Whether the measurement window is open: from the start until every request issued
    /// in the load phase has been served and released (the settle phase after it is not
    /// measured: KRLF tokens circulate through it with nobody asking).
    measuring: bool,
    /// Nodes waiting or in the critical section.
    busy: usize,
    /// The next change of [`Config::replay`] to apply.
    next_replay: usize,
    /// Replayed failures waiting for their link to be idle.
    pending_down: std::collections::BTreeSet<(NodeId, NodeId)>,
    /// The last events, as data (formatted only into a violation report).
    trace: VecDeque<(Time, NodeId, Event<P::Message>)>,
    /// With checks on: the nodes the current step handed an event to (maybe repeated).
    touched: Vec<NodeId>,
    /// The output buffer every node writes its actions into ([`Protocol::handle_in`]): one
    /// burst's capacity for the whole network instead of one per node.
    out: Vec<Action<P::Message>>,
    /// With checks on: the sum of every node's and every in-flight message's tally.
    tally: P::Tally,
    /// Steps until the next full safety check.
    until_full_check: u64,
    /// The protected resource: per lane, every entry's fence must be above the last.
    fences: Fences,
    /// The run so far, with [`Config::record`].
    recorder: Option<crate::trace::Recorder>,
    /// Whether to look ahead for the cache (`Sim::prefetch_upcoming`).
    prefetching: bool,
    /// The node of the heap's earliest event as last seen by `Sim::prefetch_upcoming`, and
    /// whether all its state has been asked for.
    heap_top: (Option<NodeId>, bool),
}

/// Run one simulation.
pub fn run<P: TokenAlgorithm>(
    mut config: Config<Params<P::Settings>>,
) -> Result<Outcome<P>, Violation> {
    let started = std::time::Instant::now();
    let nodes = P::build(&config.graph, &config.params).map_err(|e| Violation {
        seed: config.seed,
        time: 0.0,
        message: format!("cannot build the network: {e}"),
        trace: Vec::new(),
        recording: None,
    })?;
    let n = nodes.len();
    let busy = super::busy(&nodes).count();
    let mut tally = P::Tally::default();
    for node in &nodes {
        tally += node.tally();
    }
    let channels = Channels::for_graph(&config.graph);
    let mut sim = Sim::<P> {
        // The simulation changes its own copy; the configuration's is not read again.
        graph: std::mem::replace(&mut config.graph, Graph::empty(0)),
        rng: ChaCha8Rng::seed_from_u64(config.seed),
        nodes,
        channels,
        // Every message takes `delay` and every critical section `cs_duration`: FIFO lanes.
        queue: EventQueue::with_lanes(&[config.delay, config.workload.cs_duration]),
        metrics: Metrics::default(),
        requested_at: vec![None; n],
        usage: Usage {
            granted: vec![0; n],
            in_use: 0,
            since: 0.0,
        },
        loading: true,
        measuring: true,
        busy,
        next_replay: 0,
        pending_down: Default::default(),
        trace: VecDeque::with_capacity(config.trace_len),
        touched: Vec::new(),
        out: Vec::new(),
        tally,
        until_full_check: 0,
        fences: Fences::new(),
        recorder: None,
        prefetching: n >= config.prefetch_from,
        heap_top: (None, false),
        config,
    };
    if sim.config.record {
        let links: Vec<(u32, u32)> = sim.graph.edges().iter().map(|(a, b)| (a.0, b.0)).collect();
        let positions = crate::trace::spring_layout(n, &links);
        let views = sim.nodes.iter().map(|v| v.view()).collect();
        let name = sim.nodes.first().map_or(String::new(), |v| v.algorithm());
        sim.recorder = Some(crate::trace::Recorder::new(&name, positions, links, views));
    }
    sim.metrics.build_seconds = started.elapsed().as_secs_f64();
    sim.start();
    if let Err(mut v) = sim.run_to_end() {
        if let Some(mut r) = sim.recorder.take() {
            r.violation(v.message.clone());
            v.recording = Some(Box::new(r.finish()));
        }
        return Err(v);
    }
    sim.metrics.wall_seconds = started.elapsed().as_secs_f64();
    Ok(Outcome {
        metrics: sim.metrics,
        nodes: sim.nodes,
        graph: sim.graph,
        recording: sim.recorder.map(crate::trace::Recorder::finish),
    })
}

/// The look-ahead's first stage for `node`: its struct and where its link block is.
fn prefetch_first<P: TokenAlgorithm>(nodes: &[P], channels: &Channels<P::Message>, node: NodeId) {
    crate::prefetch::value(&nodes[node.index()]);
    channels.prefetch_block_of(node);
}

/// The look-ahead's second stage for `node`, once its struct is cached: its own out-of-line
/// state ([`TokenAlgorithm::prefetch`]) and its link block.
fn prefetch_second<P: TokenAlgorithm>(nodes: &[P], channels: &Channels<P::Message>, node: NodeId) {
    nodes[node.index()].prefetch();
    channels.prefetch_block(node);
}

fn exp_sample(rate: f64, rng: &mut ChaCha8Rng) -> Option<f64> {
    Exp::new(rate)
        .ok()
        .filter(|_| rate > 0.0 && rate.is_finite())
        .map(|e| e.sample(rng))
}

impl<P: TokenAlgorithm> Sim<P> {
    fn start(&mut self) {
        if self.config.lambda_mob > 0.0 && self.config.keep_connected {
            // Each link change asks whether the graph is connected.
            self.graph.track_connectivity();
        }
        for i in 0..self.nodes.len() {
            self.schedule_request(NodeId(i as u32));
        }
        if let Some(dt) = exp_sample(self.config.lambda_mob, &mut self.rng) {
            self.queue.schedule(dt, SimEvent::Mobility);
        }
        for &(at, node) in &self.config.script {
            self.queue.schedule(at, SimEvent::Request(node));
        }
        if let Some(first) = self.config.replay.first() {
            self.queue.schedule(first.time, SimEvent::Replay);
        }
        self.queue
            .schedule(self.config.duration, SimEvent::EndOfLoad);
    }

    fn schedule_request(&mut self, node: NodeId) {
        if let Some(dt) = exp_sample(self.config.workload.lambda_req, &mut self.rng) {
            self.queue.schedule(dt, SimEvent::Request(node));
        }
    }

    fn violation(&self, message: String) -> Violation {
        Violation {
            seed: self.config.seed,
            time: self.queue.now(),
            message,
            trace: self
                .trace
                .iter()
                .map(|(t, node, event)| format!("t={t:.3} {node:?} <- {event:?}"))
                .collect(),
            recording: None,
        }
    }

    fn record(&mut self, node: NodeId, event: &Event<P::Message>) {
        if self.config.trace_len == 0 {
            return;
        }
        if self.trace.len() == self.config.trace_len {
            self.trace.pop_front();
        }
        self.trace
            .push_back((self.queue.now(), node, event.clone()));
    }

    /// Feed `event` to `node` and carry out its actions, straight from the node's output
    /// buffer. `Err` from the node is a violation here: the simulator only issues events that
    /// are valid in the node's state.
    fn deliver(&mut self, node: NodeId, event: Event<P::Message>) -> Result<(), Violation> {
        self.record(node, &event);
        if let Some(r) = &mut self.recorder {
            r.begin_event(self.queue.now(), node.0, &event);
        }
        let now = self.queue.now();
        let checks = self.config.check_every_step;
        // Split the borrow of the simulator by fields: the node, the buffer it writes its
        // actions into, and what carrying them out changes.
        let Sim {
            config,
            nodes,
            graph,
            channels,
            queue,
            metrics,
            requested_at,
            usage,
            measuring,
            tally,
            touched,
            fences,
            recorder,
            out,
            prefetching,
            ..
        } = self;
        let target = &mut nodes[node.index()];
        let was_busy = target.status() != Status::Remainder;
        if checks {
            *tally -= target.tally();
            touched.push(node);
        }
        let outcome = match target.handle_in(event, out) {
            Err(e) => Err(format!("{node:?} rejected a valid event: {e}")),
            Ok(()) => out.drain(..).try_for_each(|action| {
                match action {
                    Action::Send { to, msg } => {
                        // A link has an id in `channels` only while it is in the graph.
                        let link = match channels.id(node, to) {
                            Some(link) => link,
                            None if graph.has(node, to) => channels.open(node, to),
                            None => {
                                return Err(format!(
                                    "{node:?} sent {msg:?} to non-neighbour {to:?}"
                                ))
                            }
                        };
                        if *measuring {
                            metrics.messages += 1;
                            metrics.hops += 1;
                        }
                        if let Some(r) = recorder {
                            let _ = r.send(to.0, format!("{msg:?}"));
                        }
                        if checks {
                            *tally += P::message_tally(&config.params.settings, &msg);
                        }
                        channels.push_on(link, msg);
                        queue.schedule(config.delay, SimEvent::Deliver { link, to });
                        // The first stage of the look-ahead (`Sim::prefetch_upcoming`).
                        if *prefetching {
                            prefetch_first(nodes, channels, to);
                        }
                    }
                    Action::EnterCritical { resources, fence } => {
                        if let Err(highest) = fences.admit(fence) {
                            return Err(format!(
                                "{node:?} entered with {fence:?}, not above {highest} in its lane"
                            ));
                        }
                        let Some((at, request)) = requested_at[node.index()].take() else {
                            return Err(format!("{node:?} entered without a request"));
                        };
                        if resources != request.resources {
                            return Err(format!(
                                "{node:?} asked for {} resources but was granted {resources}",
                                request.resources
                            ));
                        }
                        metrics.entered(now - at, request);
                        usage.change(metrics, node, resources, now);
                        queue.schedule(config.workload.cs_duration, SimEvent::Release(node));
                    }
                    // Timer units are the simulator's time units.
                    Action::SetTimer { timer, after } => {
                        queue.schedule(after as f64, SimEvent::Timeout { node, timer });
                    }
                    _ => {}
                }
                Ok(())
            }),
        };
        let target = &nodes[node.index()];
        if checks {
            *tally += target.tally();
        }
        let is_busy = target.status() != Status::Remainder;
        self.busy = self.busy + usize::from(is_busy) - usize::from(was_busy);
        if let Some(r) = &mut self.recorder {
            r.end_step(target.view());
        }
        outcome.map_err(|m| self.violation(m))
    }

    fn step(&mut self, event: SimEvent) -> Result<(), Violation> {
        self.metrics.events += 1;
        match event {
            SimEvent::Deliver { link, .. } => {
                let Some((from, to, msg)) = self.channels.pop_on(link) else {
                    let Link { from, to, .. } = self.channels.links[link as usize];
                    return Err(self.violation(format!("delivery on empty link {from:?}->{to:?}")));
                };
                if self.config.check_every_step {
                    self.tally -= P::message_tally(&self.config.params.settings, &msg);
                }
                self.deliver(to, Event::Receive { from, msg })?;
            }
            SimEvent::Timeout { node, timer } => self.deliver(node, Event::Timeout(timer))?,
            SimEvent::Request(node) => {
                if self.loading && self.nodes[node.index()].status() == Status::Remainder {
                    let request = self.config.workload.request(&mut self.rng);
                    self.requested_at[node.index()] = Some((self.queue.now(), request));
                    self.deliver(node, Event::Request(request))?;
                }
            }
            SimEvent::Release(node) => {
                self.usage
                    .change(&mut self.metrics, node, 0, self.queue.now());
                self.deliver(node, Event::Release)?;
                if self.loading {
                    self.schedule_request(node);
                }
            }
            SimEvent::Mobility => {
                if !self.loading {
                    return Ok(());
                }
                self.change_a_link()?;
                if let Some(dt) = exp_sample(self.config.lambda_mob, &mut self.rng) {
                    self.queue.schedule(dt, SimEvent::Mobility);
                }
            }
            SimEvent::Replay => {
                if !self.loading {
                    return Ok(());
                }
                let c = self.config.replay[self.next_replay];
                self.next_replay += 1;
                if let Some(next) = self.config.replay.get(self.next_replay) {
                    let dt = (next.time - self.queue.now()).max(0.0);
                    self.queue.schedule(dt, SimEvent::Replay);
                }
                if c.up {
                    self.pending_down.remove(&(c.a, c.b));
                    if self.graph.add(c.a, c.b) {
                        self.metrics.link_changes += 2;
                        self.deliver(c.a, Event::LinkUp(c.b))?;
                        self.deliver(c.b, Event::LinkUp(c.a))?;
                    }
                } else if self.graph.has(c.a, c.b) {
                    self.pending_down.insert((c.a, c.b));
                    self.replayed_down(c.a, c.b)?;
                }
            }
            SimEvent::RetryDown(a, b) => {
                if self.loading && self.pending_down.contains(&(a, b)) {
                    self.replayed_down(a, b)?;
                }
            }
            SimEvent::EndOfLoad => {
                self.loading = false;
                self.pending_down.clear();
                while let Some((a, b)) = self.graph.pick_bridge_to_join(&mut self.rng) {
                    self.graph.add(a, b);
                    self.metrics.link_changes += 1;
                    self.deliver(a, Event::LinkUp(b))?;
                    self.deliver(b, Event::LinkUp(a))?;
                }
            }
        }
        if self.config.check_every_step {
            self.check_step()?;
        }
        Ok(())
    }

    /// The safety check after a step: incremental (the touched nodes and the running tally),
    /// or full on the first step and every `full_check_every` steps. A failure of the
    /// incremental check runs the full one, so a violation is reported as the full check
    /// words it (and an incremental failure the full check does not confirm is a simulator
    /// bug, reported as such).
    fn check_step(&mut self) -> Result<(), Violation> {
        let full = self.until_full_check == 0;
        if full {
            self.until_full_check = self.config.full_check_every;
        } else {
            self.until_full_check -= 1;
        }
        let incremental = if full {
            Ok(())
        } else {
            self.touched
                .iter()
                .try_for_each(|&v| self.nodes[v.index()].check_node())
                .and_then(|()| P::check_tally(&self.nodes, self.tally))
        };
        self.touched.clear();
        if full || incremental.is_err() {
            self.full_check()?;
            if let Err(m) = incremental {
                return Err(self.violation(format!(
                    "simulator bug: the incremental safety check fails ({m}) but the full one passes"
                )));
            }
        }
        Ok(())
    }

    /// The full safety check, and a recount of the running tally against it.
    fn full_check(&self) -> Result<(), Violation> {
        P::check_safety(&self.nodes, &self.channels).map_err(|m| self.violation(m.to_string()))?;
        let mut recount = P::Tally::default();
        for node in &self.nodes {
            recount += node.tally();
        }
        for (_, _, msg) in self.channels.iter() {
            recount += P::message_tally(&self.config.params.settings, msg);
        }
        if recount != self.tally {
            return Err(self.violation(format!(
                "simulator bug: the running tally {:?} differs from a recount {recount:?}",
                self.tally
            )));
        }
        Ok(())
    }

    /// The paper's mobility step: drop a random idle link whose loss keeps the graph
    /// connected, and form a random new one (so the link count, hence connectivity, is
    /// unchanged). If no link can go, nothing changes.
    fn change_a_link(&mut self) -> Result<(), Violation> {
        let channels = &self.channels;
        let how = self.config.link_pick;
        let Some(i) =
            self.graph
                .pick_removable(how, &mut self.rng, self.config.keep_connected, |a, b| {
                    channels.idle(a, b)
                })
        else {
            return Ok(());
        };
        let (a, b) = self.graph.remove_edge(i, how);
        self.channels.forget(a, b);
        let (c, d) = self.graph.pick_absent(&mut self.rng).unwrap_or((a, b));
        self.graph.add(c, d);
        self.metrics.link_changes += 2;
        self.deliver(a, Event::LinkDown(b))?;
        self.deliver(b, Event::LinkDown(a))?;
        self.deliver(c, Event::LinkUp(d))?;
        self.deliver(d, Event::LinkUp(c))
    }

    /// A replayed failure of link `a`–`b`: now if nothing is in flight on it, else retried
    /// one message delay later.
    fn replayed_down(&mut self, a: NodeId, b: NodeId) -> Result<(), Violation> {
        if !self.channels.idle(a, b) {
            self.queue
                .schedule(self.config.delay, SimEvent::RetryDown(a, b));
            return Ok(());
        }
        self.pending_down.remove(&(a, b));
        self.graph.remove(a, b);
        self.channels.forget(a, b);
        self.metrics.link_changes += 2;
        self.deliver(a, Event::LinkDown(b))?;
        self.deliver(b, Event::LinkDown(a))
    }

    /// The look-ahead for the cache. A large network's state does not fit in the cache and
    /// its next events are spread over the network, so without it every event waits on a
    /// chain of misses (node, then its table and links); results are the same either way.
    /// Two stages per event, the second reading addresses the first brought in: the first
    /// when a message is sent (in `Sim::deliver`), the second here for the event after the
    /// next one in the message lane (lane 0, `config.delay`'s). The heap's earliest event (a
    /// request, mostly) is known long before it is due: the first stage when it comes to
    /// the top, the second one step later.
    fn prefetch_upcoming(&mut self) {
        if !self.prefetching {
            return;
        }
        if let Some(node) = self.queue.lane_event(0, 1).and_then(SimEvent::node) {
            prefetch_second(&self.nodes, &self.channels, node);
        }
        let top = self.queue.heap_top().and_then(SimEvent::node);
        if top != self.heap_top.0 {
            self.heap_top = (top, false);
            if let Some(node) = top {
                prefetch_first(&self.nodes, &self.channels, node);
            }
        } else if let (Some(node), false) = self.heap_top {
            self.heap_top.1 = true;
            prefetch_second(&self.nodes, &self.channels, node);
        }
    }

    /// The nodes waiting or in the critical section (for a report: it scans every node).
    fn busy(&self) -> Vec<NodeId> {
        super::busy(&self.nodes).map(|n| n.id()).collect()
    }

    fn run_to_end(&mut self) -> Result<(), Violation> {
        let end = self.config.duration + self.config.drain_limit;
        while let Some((time, event)) = self.queue.pop() {
            if time > end {
                let busy = self.busy();
                return Err(self.violation(format!(
                    "starvation: {busy:?} still waiting or in the critical section {} time units after requests stopped",
                    self.config.drain_limit
                )));
            }
            self.prefetch_upcoming();
            self.step(event)?;
            if !self.loading && self.busy == 0 {
                break;
            }
        }
        let busy = self.busy();
        if !busy.is_empty() {
            return Err(self.violation(format!("deadlock: {busy:?} waiting with no event left")));
        }
        // The measurement window closes: every request issued has been served.
        self.metrics.sim_time = self.queue.now();
        self.metrics.raises = self.nodes.iter().map(P::raises).sum();
        self.measuring = false;
        // Let the protocol settle (bounded: KRLF circulates tokens forever), unmeasured.
        for _ in 0..self.config.settle_steps {
            if self.channels.is_empty() {
                break;
            }
            let Some((_, event)) = self.queue.pop() else {
                break;
            };
            self.prefetch_upcoming();
            self.step(event)?;
        }
        if self.config.check_every_step {
            // The final cross-check of the incremental one.
            self.full_check()?;
        }
        P::check_drained(&self.nodes, &self.channels, self.channels.is_empty())
            .map_err(|m| self.violation(m.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dist;
    use manet_mutex::prioritized;
    use manet_mutex::reverse_link;

    /// A 12-node network under load with link changes (cut-offs allowed when `connected` is
    /// false), its safety checked after every step.
    fn config<S>(
        settings: S,
        holders: Vec<NodeId>,
        seed: u64,
        connected: bool,
    ) -> Config<Params<S>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let graph = Graph::random_connected(12, 20, &mut rng);
        let mut c = Config::new(graph, Params::new(settings, holders), seed);
        c.workload.lambda_req = 0.2;
        c.lambda_mob = 0.1;
        c.keep_connected = connected;
        c.duration = 300.0;
        c
    }

    /// Two nodes on one link, one token at node 0, checks on, and requests arriving almost
    /// at once after each release (rate 1e9): the schedule is known by hand. Node 0 enters
    /// at time 0 holding the token; from then on every entry costs exactly a REQUEST, the
    /// TOKEN and its TOKEN-ACK, and the two nodes alternate: each waits 3 time units (its
    /// request 1 to arrive, the holder's remaining 1 in the critical section, the token 1
    /// to come back), except node 1's first wait of 2, and the resource is in use one time
    /// unit in every two.
    fn alternating_pair(forwarding: bool, settle_steps: Option<usize>) -> Metrics {
        let graph = Graph::from_edges(2, &[(NodeId(0), NodeId(1))]);
        let settings = reverse_link::Settings::new(1).with_forwarding(forwarding);
        let mut c = Config::new(graph, Params::first_nodes(settings, 1), 3);
        c.workload.lambda_req = 1e9;
        c.duration = 200.0;
        if let Some(steps) = settle_steps {
            c.settle_steps = steps;
        }
        run::<reverse_link::Node>(c).unwrap().metrics
    }

    #[test]
    fn metrics_of_a_hand_computed_run() {
        let m = alternating_pair(false, None);
        let entries = m.cs_entries;
        // One entry per two time units over the 200-unit load phase, plus the drain's.
        assert!((100..=103).contains(&entries), "{entries}");
        assert_eq!(m.messages, 3 * (entries - 1));
        assert_eq!(m.hops, m.messages);
        assert_eq!((m.raises, m.link_changes), (0, 0));
        assert_eq!(m.waits.len() as u64, entries);
        assert!(m.waits[0] < 1e-6 && (m.waits[1] - 2.0).abs() < 1e-6);
        assert!(m.waits[2..].iter().all(|w| (w - 3.0).abs() < 1e-6));
        let s = m.summary();
        assert_eq!(
            s.messages_per_cs,
            3.0 * (entries - 1) as f64 / entries as f64
        );
        assert!((s.max_wait - 3.0).abs() < 1e-6 && (s.p99_wait - 3.0).abs() < 1e-6);
        // The window ends at the last release: in use one unit out of two, all along.
        assert!(
            (m.utilization(1) - 0.5).abs() < 0.01,
            "{}",
            m.utilization(1)
        );
        assert!(
            (m.sim_time - 2.0 * entries as f64).abs() < 3.0,
            "{}",
            m.sim_time
        );
    }

    /// The settle phase after the window is not measured: the same run with no settling
    /// measures exactly the same, though with forwarding (the token circulates with nobody
    /// asking) the settling runs until its bound. Before this was defined, KRLF's messages
    /// per entry counted the whole settle phase (about twelve times too many at 30 nodes).
    #[test]
    fn settling_is_not_measured() {
        for forwarding in [false, true] {
            let settled = alternating_pair(forwarding, None);
            let cut = alternating_pair(forwarding, Some(0));
            assert_eq!(settled.cs_entries, cut.cs_entries);
            assert_eq!(settled.waits, cut.waits);
            assert_eq!((settled.messages, settled.hops), (cut.messages, cut.hops));
            assert_eq!(settled.raises, cut.raises);
            assert_eq!(settled.resource_time, cut.resource_time);
            assert_eq!(settled.sim_time, cut.sim_time);
            if forwarding {
                assert_eq!(settled.events, cut.events + 200, "50·2² settle steps");
            }
        }
    }

    #[test]
    fn a_run_with_no_requests_measures_nothing() {
        let graph = Graph::from_edges(3, &[(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))]);
        let settings = reverse_link::Settings::new(1).with_forwarding(true);
        let mut c = Config::new(graph, Params::first_nodes(settings, 1), 1);
        c.workload.lambda_req = 0.0;
        let m = run::<reverse_link::Node>(c).unwrap().metrics;
        assert_eq!((m.cs_entries, m.messages), (0, 0));
        let s = m.summary();
        assert_eq!(
            (s.messages_per_cs, s.mean_wait, s.max_wait),
            (0.0, 0.0, 0.0)
        );
        assert_eq!(m.utilization(1), 0.0);
    }

    /// The committed ns-2 trace (20 random-waypoint nodes) replayed through KRL and the
    /// prioritized algorithm, every invariant checked after every step: the links the
    /// simulator applies follow the trace (a failure late only while its link is busy).
    #[test]
    fn an_ns2_trace_replays_through_both_token_algorithms() {
        let trace =
            crate::ns2::Trace::parse(include_str!("../../../examples/data/waypoint-20.ns2"))
                .unwrap();
        let radius = 200.0;
        fn config<S>(
            trace: &crate::ns2::Trace,
            settings: S,
            holders: Vec<NodeId>,
        ) -> Config<Params<S>> {
            let replay = trace.replay(200.0, 600.0);
            let graph = Graph::from_edges(trace.nodes(), &replay.initial);
            let mut c = Config::new(graph, Params::new(settings, holders), 5);
            c.duration = 600.0;
            c.workload.lambda_req = 0.05;
            c.replay = replay.changes;
            c
        }
        let changes = trace.link_changes(radius, 600.0).len() as u64;
        assert!(changes > 50, "{changes}");
        let krl = config(
            &trace,
            reverse_link::Settings::new(3),
            vec![NodeId(0), NodeId(1), NodeId(2)],
        );
        let out = run::<reverse_link::Node>(krl).unwrap();
        // Every replayed change counts twice (both ends); the drain may add joins.
        assert!(
            out.metrics.link_changes >= 2 * changes - 20,
            "{}",
            out.metrics.link_changes
        );
        assert!(out.metrics.cs_entries > 150, "{:?}", out.metrics.summary());
        let prio = config(
            &trace,
            prioritized::Settings::new(4, prioritized::Policy::Equal),
            vec![NodeId(0)],
        );
        let out = run::<prioritized::Node>(prio).unwrap();
        assert!(out.metrics.cs_entries > 150, "{:?}", out.metrics.summary());
    }

    #[test]
    fn channels_are_fifo_per_link_and_reuse_their_slots() {
        let (a, b, c) = (NodeId(0), NodeId(1), NodeId(2));
        let mut ch = Channels::default();
        assert!(ch.is_empty() && ch.pop(a, b).is_none() && ch.get_mut(a, b, 0).is_none());
        ch.push(b, c, 10);
        ch.push(a, c, 20);
        ch.push(a, b, 30);
        ch.push(a, c, 21);
        ch.push(b, c, 11);
        assert_eq!(ch.total(), 5);
        assert_eq!((ch.len(a, c), ch.len(c, a), ch.len(a, b)), (2, 0, 1));
        assert!(!ch.idle(c, a) && ch.idle(b, a) == (ch.len(a, b) == 0));
        let all: Vec<_> = ch.iter().map(|(f, t, m)| (f.0, t.0, *m)).collect();
        assert_eq!(
            all,
            [(0, 1, 30), (0, 2, 20), (0, 2, 21), (1, 2, 10), (1, 2, 11)]
        );
        *ch.get_mut(a, c, 1).unwrap() = 22;
        assert!(ch.get_mut(a, c, 2).is_none());
        assert_eq!(ch.pop(a, c), Some(20));
        ch.push(a, c, 23);
        assert_eq!(ch.pop(a, c), Some(22));
        assert_eq!(ch.pop(a, c), Some(23));
        assert_eq!(ch.pop(a, c), None);
        assert_eq!(
            (ch.pop(b, c), ch.pop(b, c), ch.pop(a, b)),
            (Some(10), Some(11), Some(30))
        );
        assert!(ch.is_empty() && ch.iter().next().is_none());
        // Freed slots are reused: the slab does not grow past the peak of traffic.
        let peak = ch.slots.len();
        for i in 0..100 {
            ch.push(c, a, i);
            ch.push(a, c, i);
            assert_eq!(ch.pop(c, a), Some(i));
            assert_eq!(ch.pop(a, c), Some(i));
        }
        assert_eq!(ch.slots.len(), peak);
    }

    #[test]
    fn channel_ids_name_links_until_they_are_forgotten() {
        let (a, b, c) = (NodeId(0), NodeId(1), NodeId(2));
        let mut ch = Channels::default();
        assert_eq!(ch.id(a, b), None);
        let ab = ch.open(a, b);
        assert_eq!((ch.id(a, b), ch.open(a, b)), (Some(ab), ab));
        ch.push_on(ab, 1);
        ch.push(a, b, 2);
        let bc = ch.open(b, c);
        ch.push_on(bc, 3);
        assert_eq!(ch.pop_on(ab), Some((a, b, 1)));
        // Not forgotten while a message is in flight between the ends.
        assert!(!ch.forget(b, a) && ch.id(a, b) == Some(ab));
        assert_eq!(ch.pop(a, b), Some(2));
        assert_eq!(ch.pop_on(ab), None);
        assert!(ch.forget(b, a));
        assert_eq!((ch.id(a, b), ch.len(a, b)), (None, 0));
        // The id is reused for the next new link, which starts empty.
        let ca = ch.open(c, a);
        assert_eq!(ca, ab);
        assert_eq!(ch.pop_on(ca), None);
        ch.push(c, a, 4);
        let all: Vec<_> = ch.iter().map(|(f, t, m)| (f.0, t.0, *m)).collect();
        assert_eq!(all, [(1, 2, 3), (2, 0, 4)]);
        assert_eq!(ch.pop_on(ca), Some((c, a, 4)));
        assert_eq!(ch.pop_on(99), None);
        // Room reserved up front: opening that many links does not move them.
        let mut roomy = Channels::<u8>::with_capacity(6);
        let room = roomy.links.capacity();
        for (x, y) in [(a, b), (b, a), (a, c), (c, a), (b, c), (c, b)] {
            roomy.open(x, y);
        }
        assert!(room >= 6 && roomy.links.capacity() == room);
    }

    #[test]
    fn the_build_time_is_part_of_the_run_time() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let graph = Graph::random_connected(20, 40, &mut rng);
        let settings = reverse_link::Settings::new(2);
        let mut config = Config::new(graph, Params::first_nodes(settings, 2), 4);
        config.duration = 50.0;
        let m = run::<reverse_link::Node>(config).unwrap().metrics;
        assert!(0.0 <= m.build_seconds && m.build_seconds <= m.wall_seconds);
    }

    /// With a full check after every step, the running tally must equal a recount after every
    /// step (the full check compares them), and the outcome must not depend on how often the
    /// full check runs.
    #[test]
    fn the_running_tally_matches_a_recount_after_every_step() {
        for seed in 0..8 {
            for forwarding in [false, true] {
                let settings = reverse_link::Settings::new(3).with_forwarding(forwarding);
                let holders = vec![NodeId(0), NodeId(1), NodeId(2)];
                let mut every = config(settings, holders.clone(), seed, seed % 2 == 0);
                every.full_check_every = 0;
                let mut once = every.clone();
                once.full_check_every = u64::MAX;
                let a = run::<reverse_link::Node>(every).expect("safe");
                let b = run::<reverse_link::Node>(once).expect("safe");
                assert_eq!(a.metrics.events, b.metrics.events);
                assert_eq!(a.metrics.waits, b.metrics.waits);
            }
            let settings = prioritized::Settings::new(4, prioritized::Policy::Explicit);
            let mut c = config(settings, vec![NodeId(0)], seed, seed % 2 == 1);
            c.workload.resources = Dist::Uniform { lo: 1, hi: 4 };
            c.full_check_every = 0;
            run::<prioritized::Node>(c).expect("safe");
        }
    }

    /// The cache hints change no result: the same runs (KRL and KRLF with link changes and
    /// cut-offs, the prioritized algorithm with several resources, checks on) with the hints
    /// on and off end with the same metrics, nodes and topology.
    #[test]
    fn looking_ahead_for_the_cache_changes_nothing() {
        fn same<P: TokenAlgorithm + PartialEq>(on: Config<Params<P::Settings>>) {
            let mut off = on.clone();
            off.prefetch_from = usize::MAX;
            let outcomes = [on, off].map(|c| {
                let mut o = run::<P>(c).expect("safe");
                o.metrics.wall_seconds = 0.0;
                o.metrics.build_seconds = 0.0;
                o
            });
            let [a, b] = &outcomes;
            assert!(a.metrics.events > 1_000, "a run worth comparing");
            assert_eq!(format!("{:?}", a.metrics), format!("{:?}", b.metrics));
            assert!(a.nodes == b.nodes);
            assert_eq!(a.graph, b.graph);
        }
        for seed in 0..6 {
            let settings = reverse_link::Settings::new(2).with_forwarding(seed % 2 == 1);
            let mut c = config(settings, vec![NodeId(0), NodeId(1)], seed, seed % 3 != 0);
            c.prefetch_from = 0;
            same::<reverse_link::Node>(c);
            let settings = prioritized::Settings::new(4, prioritized::Policy::Explicit);
            let mut c = config(settings, vec![NodeId(0)], seed, true);
            c.workload.resources = Dist::Uniform { lo: 1, hi: 4 };
            c.prefetch_from = 0;
            same::<prioritized::Node>(c);
        }
    }

    #[test]
    fn channels_for_a_graph_name_every_link_in_node_order() {
        let graph = Graph::from_edges(4, &[(NodeId(2), NodeId(0)), (NodeId(1), NodeId(2))]);
        let mut channels = Channels::<u32>::for_graph(&graph);
        let ids: Vec<_> = [(0, 2), (1, 2), (2, 0), (2, 1)]
            .iter()
            .map(|&(a, b)| channels.id(NodeId(a), NodeId(b)))
            .collect();
        assert_eq!(ids, [Some(0), Some(1), Some(2), Some(3)]);
        assert_eq!(channels.id(NodeId(0), NodeId(1)), None);
        assert_eq!(channels.id(NodeId(3), NodeId(0)), None);
        assert!(channels.is_empty());
        channels.push_on(2, 7);
        assert_eq!(channels.pop(NodeId(2), NodeId(0)), Some(7));
        // A link formed later gets the next id.
        assert_eq!(channels.open(NodeId(3), NodeId(0)), 4);
    }

    /// Channels with blocks ([`Channels::for_graph`]) behave as channels that open every link
    /// on first use: the same links have ids, the same messages come out in the same order,
    /// and `iter` lists them in the same (sorted) order, through random opens, pushes, pops,
    /// failures and re-formations of links in and out of the blocks.
    #[test]
    fn blocks_change_nothing_channels_show() {
        use rand::Rng;
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = 6;
            let graph = Graph::random_connected(n, 8, &mut rng);
            let mut blocked = Channels::<u32>::for_graph(&graph);
            let mut plain = Channels::<u32>::default();
            let mut live: Vec<(NodeId, NodeId)> = graph
                .edges()
                .iter()
                .flat_map(|&(a, b)| [(a, b), (b, a)])
                .collect();
            for &(a, b) in &live {
                plain.open(a, b);
            }
            for step in 0..400u32 {
                let a = NodeId(rng.random_range(0..n as u32));
                let b = NodeId(rng.random_range(0..n as u32));
                match rng.random_range(0..4) {
                    0 if a != b => {
                        blocked.open(a, b);
                        plain.open(a, b);
                        live.push((a, b));
                    }
                    1 if live.contains(&(a, b)) => {
                        let ids = [blocked.id(a, b), plain.id(a, b)];
                        blocked.push_on(ids[0].expect("has an id"), step);
                        plain.push_on(ids[1].expect("has an id"), step);
                    }
                    2 => assert_eq!(blocked.pop(a, b), plain.pop(a, b)),
                    _ => {
                        assert_eq!(blocked.forget(a, b), plain.forget(a, b));
                        if plain.idle(a, b) {
                            live.retain(|&l| l != (a, b) && l != (b, a));
                        }
                    }
                }
                for x in 0..n as u32 {
                    for y in 0..n as u32 {
                        let (x, y) = (NodeId(x), NodeId(y));
                        assert_eq!(blocked.id(x, y).is_some(), plain.id(x, y).is_some());
                        assert_eq!(blocked.len(x, y), plain.len(x, y));
                        assert_eq!(blocked.idle(x, y), plain.idle(x, y));
                    }
                }
                let listed: Vec<_> = blocked.iter().collect();
                assert_eq!(listed, plain.iter().collect::<Vec<_>>());
                assert!(listed
                    .windows(2)
                    .all(|w| (w[0].0, w[0].1) <= (w[1].0, w[1].1)));
                assert_eq!(blocked.total(), plain.total());
            }
        }
    }
}
