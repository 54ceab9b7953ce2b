//! A timed driver for the token algorithms with recovery (`token::Recovery`,
//! `docs/ALGORITHMS.md` F2–F7): every message takes 1 to 3 time units over FIFO links, timers
//! are kept in a `timers::Timers` per node, and the faults are the failure model's: a host
//! crashes (its neighbours learn `LinkDown`; what was on its links is lost), restarts with
//! empty state, a link breaks with a token on it, the network splits and merges.
//!
//! Checked after every step: (a) every entry's fence is admitted by one `fence::Fences`
//! unless its generation is older than the newest the resource admitted; (b) at most `k`
//! units held by nodes in the critical section without an expired lease, in runs whose timing
//! respects the bounds (`check_b`); and, by the tests, that every live requester is served
//! once the faults stop.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use std::fmt::Debug;

use manet_mutex::fence::Fences;
use manet_mutex::timers::Timers;
use manet_mutex::token::{Height, Promised, Recovery};
use manet_mutex::{
    prioritized, reverse_link, Action, CsRequest, Event, Fence, NodeId, Protocol, Report, Status,
};

/// Beacons every 40, leases of 30, messages within 3 hops' time each, parts up to 8 hops.
pub fn recovery() -> Recovery {
    Recovery::new(40, 30, 3, 8)
}

/// What the driver needs of a token algorithm.
pub trait Algo: Protocol + Sized
where
    Self::Message: Clone + Debug,
{
    /// What the network agrees on.
    type Settings: Copy;
    /// `k`: units (KRL: tokens) that may be held at once.
    fn k(settings: Self::Settings) -> u32;
    /// The nodes of `network(n, edges, holders, settings)`.
    fn build(
        n: u32,
        edges: &[(NodeId, NodeId)],
        holders: &[NodeId],
        s: Self::Settings,
    ) -> Vec<Self>;
    /// A node restarted with empty state: no token, no neighbours; its embedder kept the
    /// highest round it made and its promises if `kept` is some (`Config::restarted_after`,
    /// `with_promises`; `docs/ALGORITHMS.md` F8, F9), else nothing (`Config::restarted`).
    fn restarted(id: NodeId, settings: Self::Settings, kept: Option<(u16, Vec<Promised>)>) -> Self;
    /// Tokens held here.
    fn tokens(&self) -> u32;
    /// Whether `msg` is a token.
    fn is_token(msg: &Self::Message) -> bool;
    /// The request the application makes, given a random number.
    fn request(settings: Self::Settings, random: u64) -> CsRequest;
}

impl Algo for reverse_link::Node {
    type Settings = reverse_link::Settings;
    fn k(settings: Self::Settings) -> u32 {
        settings.k
    }
    fn build(
        n: u32,
        edges: &[(NodeId, NodeId)],
        holders: &[NodeId],
        s: Self::Settings,
    ) -> Vec<Self> {
        let configs = reverse_link::network(n, edges, holders, s).unwrap();
        configs.into_iter().map(|c| Self::new(c).unwrap()).collect()
    }
    fn restarted(id: NodeId, settings: Self::Settings, kept: Option<(u16, Vec<Promised>)>) -> Self {
        let config = reverse_link::Config::new(id, settings, 0, Height::new(0, 0, id), vec![]);
        let config = match kept {
            Some((round, promises)) => config.restarted_after(round).with_promises(promises),
            None => config.restarted(),
        };
        Self::new(config).unwrap()
    }
    fn tokens(&self) -> u32 {
        reverse_link::Node::tokens(self)
    }
    fn is_token(msg: &Self::Message) -> bool {
        msg.is_token()
    }
    fn request(_: Self::Settings, _: u64) -> CsRequest {
        CsRequest::ONE
    }
}

impl Algo for prioritized::Node {
    type Settings = prioritized::Settings;
    fn k(settings: Self::Settings) -> u32 {
        settings.k
    }
    fn build(
        n: u32,
        edges: &[(NodeId, NodeId)],
        holders: &[NodeId],
        s: Self::Settings,
    ) -> Vec<Self> {
        let configs = prioritized::network(n, edges, holders, s).unwrap();
        configs.into_iter().map(|c| Self::new(c).unwrap()).collect()
    }
    fn restarted(id: NodeId, settings: Self::Settings, kept: Option<(u16, Vec<Promised>)>) -> Self {
        let config = prioritized::Config::new(id, settings, false, Height::new(0, 0, id), vec![]);
        let config = match kept {
            Some((round, promises)) => config.restarted_after(round).with_promises(promises),
            None => config.restarted(),
        };
        Self::new(config).unwrap()
    }
    fn tokens(&self) -> u32 {
        u32::from(self.holds_token())
    }
    fn is_token(msg: &Self::Message) -> bool {
        msg.is_token()
    }
    fn request(settings: Self::Settings, random: u64) -> CsRequest {
        CsRequest {
            resources: 1 + (random % u64::from(settings.k)) as u32,
            priority: (random >> 8) as u32 % 4,
        }
    }
}

#[derive(Default)]
pub struct Counts {
    pub sent: u64,
    pub entries: u64,
    pub regenerated: u64,
    pub destroyed: u64,
    pub lease_expired: u64,
    pub refused_old: u64,
    pub renumbered: u64,
}

/// What is in flight on one directed link, in order: (arrival, message).
pub type Wire<M> = VecDeque<(u64, M)>;

/// A network of `A` nodes on a clock.
pub struct Net<A: Algo>
where
    A::Message: Clone + Debug,
{
    pub nodes: Vec<Option<A>>,
    pub timers: Vec<Timers>,
    pub edges: BTreeSet<(u32, u32)>,
    /// In flight per directed link, FIFO: (arrival, message).
    pub wires: BTreeMap<(u32, u32), Wire<A::Message>>,
    pub now: u64,
    rng: u64,
    fences: Fences,
    newest_generation: BTreeMap<u32, u32>,
    /// Refused entries not yet told to their node: (node, fence, newest admitted).
    refusals: Vec<(u32, Fence, Fence)>,
    /// The highest round each node made, as its embedder keeps it for a restart.
    made: BTreeMap<u32, u16>,
    /// The last promise each node persisted per token id (majority mode): (node, id) → ballot.
    pub promised: BTreeMap<(u32, u32), u32>,
    /// Nodes in the critical section whose lease has not expired, with their fences and units.
    pub acting: BTreeMap<u32, (Fence, u32)>,
    /// Nodes that will ask for the critical section when next in the remainder section.
    pub wanting: BTreeSet<u32>,
    /// Nodes whose application stays in the critical section until told otherwise.
    pub staying: BTreeSet<u32>,
    pub counts: Counts,
    settings: A::Settings,
    /// Whether (b) is checked: off while a partition stands (lease mode does not promise it).
    pub check_b: bool,
    /// Suspect anomalies a test expects (it corrupted a message): each one reported is
    /// counted off; one more fails the run.
    pub suspects_allowed: u32,
    /// The message being delivered, for a failure's report.
    delivering: Option<A::Message>,
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

impl<A: Algo> Net<A>
where
    A::Message: Clone + Debug,
{
    pub fn new(n: u32, edges: &[(u32, u32)], holders: &[u32], settings: A::Settings) -> Self {
        let e: Vec<_> = edges.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect();
        let h: Vec<_> = holders.iter().map(|&a| NodeId(a)).collect();
        Self::of(A::build(n, &e, &h, settings), edges, settings)
    }

    /// A network of the given nodes (configured by the caller, e.g. with their heights
    /// lifted), joined by `edges`.
    pub fn of(nodes: Vec<A>, edges: &[(u32, u32)], settings: A::Settings) -> Self {
        let n = nodes.len();
        let mut net = Net {
            nodes: nodes.into_iter().map(Some).collect(),
            timers: vec![Timers::new(); n],
            edges: edges.iter().map(|&(a, b)| key(a, b)).collect(),
            wires: BTreeMap::new(),
            now: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
            fences: Fences::new(),
            newest_generation: BTreeMap::new(),
            refusals: Vec::new(),
            made: BTreeMap::new(),
            promised: BTreeMap::new(),
            acting: BTreeMap::new(),
            wanting: BTreeSet::new(),
            staying: BTreeSet::new(),
            counts: Counts::default(),
            settings,
            check_b: true,
            suspects_allowed: 0,
            delivering: None,
        };
        // Every node's first event arms its timers: a keepalive LinkUp on each link.
        for &(a, b) in edges {
            net.feed(a, Event::LinkUp(NodeId(b)));
            net.feed(b, Event::LinkUp(NodeId(a)));
        }
        net
    }

    pub fn seed(mut self, seed: u64) -> Self {
        self.rng ^= seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
        self
    }

    fn random(&mut self, below: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % below
    }

    /// `at` made (or moved a token to) `fence`'s generation: keep its round for a restart.
    fn made_by(&mut self, at: u32, fence: Fence) {
        let round = (fence.generation() >> 16) as u16;
        let kept = self.made.entry(at).or_default();
        *kept = (*kept).max(round);
    }

    pub fn feed(&mut self, at: u32, event: Event<A::Message>) {
        let Some(node) = self.nodes[at as usize].as_mut() else {
            return;
        };
        let actions: Vec<_> = node.handle(event).unwrap().collect();
        for action in actions {
            self.carry_out(at, action);
        }
        for (node, fence, newest) in std::mem::take(&mut self.refusals) {
            self.feed(node, Event::Refused { fence, newest });
        }
    }

    fn carry_out(&mut self, at: u32, action: Action<A::Message>) {
        if self.timers[at as usize].apply(&action, self.now) {
            return;
        }
        match action {
            Action::Send { to, msg } => {
                self.counts.sent += 1;
                if self.nodes.get(to.index()).is_some_and(Option::is_none) {
                    return; // to a crashed host: lost
                }
                assert!(
                    self.edges.contains(&key(at, to.0)),
                    "{at} sent to non-neighbour {to:?}"
                );
                let delay = 1 + self.random(3);
                let wire = self.wires.entry((at, to.0)).or_default();
                let arrival = wire.back().map_or(0, |w| w.0).max(self.now + delay);
                wire.push_back((arrival, msg));
            }
            Action::EnterCritical { fence, resources } => {
                self.counts.entries += 1;
                let newest = self.newest_generation.entry(fence.lane).or_default();
                if fence.generation() < *newest {
                    self.counts.refused_old += 1;
                    let highest = self
                        .fences
                        .admit(fence)
                        .expect_err("(a): an older generation admitted");
                    // Told back, as a real resource's refusal would be (F10).
                    self.refusals
                        .push((at, fence, Fence::new(fence.lane, highest)));
                } else {
                    *newest = fence.generation();
                    self.fences
                        .admit(fence)
                        .unwrap_or_else(|h| panic!("(a): {fence:?} refused after {h} at {at}"));
                }
                self.acting.insert(at, (fence, resources));
                let units: u32 = self.acting.values().map(|a| a.1).sum();
                if self.check_b {
                    let k = A::k(self.settings);
                    assert!(units <= k, "(b): {:?} acting at {}", self.acting, self.now);
                }
            }
            Action::LeaseExpired { fence } => {
                self.counts.lease_expired += 1;
                assert_eq!(self.acting.remove(&at).map(|a| a.0), Some(fence));
            }
            Action::Report(Report::TokenRegenerated { fence }) => {
                self.counts.regenerated += 1;
                self.made_by(at, fence);
            }
            Action::Report(Report::TokenDestroyed { .. }) => self.counts.destroyed += 1,
            // Majority mode (F9): the embedder stores the promise before what follows is sent;
            // this driver carries actions out in order, so keeping the last is enough.
            Action::Persist { promised } => {
                self.promised.insert((at, promised.lane), promised.ballot);
            }
            Action::Report(Report::TokenRenumbered { fence }) => {
                self.counts.renumbered += 1;
                self.made_by(at, fence);
            }
            Action::Anomaly { kind, from } => {
                if A::anomaly_severity(kind).is_noise() {
                    return;
                }
                assert!(
                    self.suspects_allowed > 0,
                    "{at}: suspect {kind:?} from {from:?} at {} ({:?})",
                    self.now,
                    self.delivering
                );
                self.suspects_allowed -= 1;
            }
            other => panic!("unexpected action {other:?}"),
        }
    }

    /// Advance to the next event (a delivery or a timer), or the next time unit.
    pub fn step(&mut self) {
        let next_wire = self
            .wires
            .values()
            .filter_map(|w| w.front().map(|f| f.0))
            .min();
        let next_timer = (0..self.nodes.len())
            .filter_map(|i| self.timers[i].next_deadline())
            .min();
        let next = next_wire
            .into_iter()
            .chain(next_timer)
            .min()
            .unwrap_or(self.now + 1);
        self.now = self.now.max(next);
        for i in 0..self.nodes.len() as u32 {
            while let Some(timer) = self.timers[i as usize].pop_expired(self.now) {
                self.feed(i, Event::Timeout(timer));
            }
        }
        let due: Vec<_> = self
            .wires
            .iter()
            .filter(|(_, w)| w.front().is_some_and(|f| f.0 <= self.now))
            .map(|(&k, _)| k)
            .collect();
        for (from, to) in due {
            let (_, msg) = self
                .wires
                .get_mut(&(from, to))
                .unwrap()
                .pop_front()
                .unwrap();
            self.delivering = Some(msg.clone());
            self.feed(
                to,
                Event::Receive {
                    from: NodeId(from),
                    msg,
                },
            );
        }
        // The application: a node in the critical section leaves a few units later (drawn
        // each step), a node that wants to enter asks.
        for i in 0..self.nodes.len() as u32 {
            let status = self.nodes[i as usize].as_ref().map(|n| n.status());
            if status == Some(Status::Critical) && !self.staying.contains(&i) && self.random(4) == 0
            {
                self.acting.remove(&i);
                self.feed(i, Event::Release);
            } else if status == Some(Status::Remainder) && self.wanting.remove(&i) {
                let request = A::request(self.settings, self.random(1 << 16));
                self.feed(i, Event::Request(request));
            }
        }
    }

    pub fn run(&mut self, until: u64) {
        while self.now < until {
            self.step();
        }
    }

    pub fn live(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes.len() as u32).filter(|&i| self.nodes[i as usize].is_some())
    }

    /// Cut link a–b: each end learns `LinkDown` at once; what was on it is lost.
    pub fn cut(&mut self, a: u32, b: u32) {
        if self.edges.remove(&key(a, b)) {
            self.wires.remove(&(a, b));
            self.wires.remove(&(b, a));
            self.feed(a, Event::LinkDown(NodeId(b)));
            self.feed(b, Event::LinkDown(NodeId(a)));
        }
    }

    pub fn join(&mut self, a: u32, b: u32) {
        if self.nodes[a as usize].is_some() && self.nodes[b as usize].is_some() {
            self.edges.insert(key(a, b));
            self.feed(a, Event::LinkUp(NodeId(b)));
            self.feed(b, Event::LinkUp(NodeId(a)));
        }
    }

    /// Crash-stop: the node and everything on its links are gone; its neighbours learn
    /// `LinkDown`.
    pub fn crash(&mut self, a: u32) {
        let links: Vec<_> = self
            .edges
            .iter()
            .filter(|e| e.0 == a || e.1 == a)
            .copied()
            .collect();
        for (x, y) in links {
            self.cut(x, y);
        }
        self.nodes[a as usize] = None;
        self.timers[a as usize] = Timers::new();
        self.acting.remove(&a);
        self.wanting.remove(&a);
    }

    /// Crash-restart: a fresh node with empty state (no token, no neighbours), linked again.
    /// `a` restarts, its embedder having kept the highest round it made and its promises
    /// (majority mode), and links to the live ones of `neighbours`.
    pub fn restart(&mut self, a: u32, neighbours: &[u32]) {
        let made_up_to = self.made.get(&a).copied().unwrap_or(0);
        let promises = self
            .promised
            .range((a, 0)..=(a, u32::MAX))
            .map(|(&(_, lane), &ballot)| Promised::new(lane, ballot))
            .collect();
        self.restart_as(a, Some((made_up_to, promises)), neighbours);
    }

    /// [`Net::restart`] by an embedder that kept nothing (`Config::restarted`).
    pub fn restart_forgetting(&mut self, a: u32, neighbours: &[u32]) {
        self.restart_as(a, None, neighbours);
    }

    fn restart_as(&mut self, a: u32, kept: Option<(u16, Vec<Promised>)>, neighbours: &[u32]) {
        self.nodes[a as usize] = Some(A::restarted(NodeId(a), self.settings, kept));
        for &b in neighbours {
            self.join(a, b);
        }
    }

    pub fn tokens(&self) -> u32 {
        let held: u32 = self
            .live()
            .map(|i| self.nodes[i as usize].as_ref().unwrap().tokens())
            .sum();
        let flying = self
            .wires
            .values()
            .flatten()
            .filter(|(_, m)| A::is_token(m))
            .count() as u32;
        held + flying
    }

    /// The tokens held in each connected part of the live graph (none in flight once quiet).
    pub fn tokens_per_part(&self) -> Vec<u32> {
        let mut part: Vec<Option<usize>> = vec![None; self.nodes.len()];
        let mut counts = Vec::new();
        for start in self.live() {
            if part[start as usize].is_some() {
                continue;
            }
            let id = counts.len();
            counts.push(0);
            let mut stack = vec![start];
            part[start as usize] = Some(id);
            while let Some(a) = stack.pop() {
                counts[id] += self.nodes[a as usize].as_ref().unwrap().tokens();
                for &(x, y) in &self.edges {
                    let other = if x == a {
                        y
                    } else if y == a {
                        x
                    } else {
                        continue;
                    };
                    if part[other as usize].is_none() {
                        part[other as usize] = Some(id);
                        stack.push(other);
                    }
                }
            }
        }
        counts
    }

    /// Plays `faults` on the graph `edges` (each: a kind, a node or edge index, a wait): everyone
    /// asks, the net runs the wait, then kind 0 crashes the node (while more than 3 are
    /// live), kind 1 restarts it if it is down (with its neighbours in `edges`), any other
    /// breaks that edge with whatever is on it and forms it again. Then every pair of `edges`
    /// is linked again.
    pub fn play_faults(&mut self, edges: &[(u32, u32)], faults: &[(u8, u32, u64)]) {
        for &(kind, node, after) in faults {
            self.want_all();
            self.run(self.now + after);
            match kind {
                0 if self.live().count() > 3 => self.crash(node),
                1 if self.nodes[node as usize].is_none() => {
                    let around: Vec<_> = edges
                        .iter()
                        .filter_map(|&(a, b)| (a == node).then_some(b).or((b == node).then_some(a)))
                        .collect();
                    self.restart(node, &around);
                }
                _ => {
                    if let Some(&(a, b)) = edges.get(node as usize) {
                        self.cut(a, b);
                        self.join(a, b);
                    }
                }
            }
        }
        for &(a, b) in edges {
            self.join(a, b);
        }
    }

    pub fn want_all(&mut self) {
        let live: Vec<_> = self.live().collect();
        self.wanting.extend(live);
    }

    /// Run until every live node that wanted the critical section entered it, or `limit`.
    pub fn serve_all(&mut self, limit: u64) -> u64 {
        let start = self.counts.entries;
        let wanted = self.live().count() as u64;
        self.want_all();
        let deadline = self.now + limit;
        while self.now < deadline {
            self.step();
            let waiting = self.live().any(|i| {
                self.wanting.contains(&i)
                    || self.nodes[i as usize].as_ref().unwrap().status() == Status::Waiting
            });
            if !waiting && self.counts.entries >= start + wanted {
                return self.now;
            }
        }
        panic!(
            "not every live requester was served by {} (tokens {}, regenerated {})",
            self.now,
            self.tokens(),
            self.counts.regenerated
        );
    }
}

pub fn ring(n: u32) -> Vec<(u32, u32)> {
    (0..n).map(|i| (i, (i + 1) % n)).collect()
}
