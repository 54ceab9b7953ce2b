//! KRL/KRLF recovery of lost tokens (`token::Recovery`, `docs/ALGORITHMS.md` F2–F6), on a
//! timed driver: every message takes 1 to 3 time units over FIFO links, timers are kept in a
//! `timers::Timers` per node, and the faults are the failure model's: a host crashes (its
//! neighbours learn `LinkDown` some time later), restarts with empty state, a link breaks with
//! a token on it, the network splits and merges.
//!
//! Checked after every step: (a) every entry's fence is admitted by one `fence::Fences`
//! unless its generation is older than the newest the resource admitted; (b) at most `k`
//! nodes in the critical section without an expired lease, in runs whose timing respects the
//! bounds; and that every live requester is served once the faults stop.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use manet_mutex::fence::Fences;
use manet_mutex::reverse_link::{network, Config, Message, Node, Settings};
use manet_mutex::timers::Timers;
use manet_mutex::token::{Height, Recovery};
use manet_mutex::{Action, CsRequest, Event, Fence, NodeId, Protocol, Report, Status};
use proptest::prelude::*;

/// Beacons every 40, leases of 30, messages within 3 hops' time each, parts up to 8 hops.
fn recovery() -> Recovery {
    Recovery::new(40, 30, 3, 8)
}

#[derive(Default)]
struct Counts {
    entries: u64,
    regenerated: u64,
    destroyed: u64,
    lease_expired: u64,
    refused_old: u64,
}

struct Net {
    nodes: Vec<Option<Node>>,
    timers: Vec<Timers>,
    edges: BTreeSet<(u32, u32)>,
    /// In flight per directed link, FIFO: (arrival, message).
    wires: BTreeMap<(u32, u32), VecDeque<(u64, Message)>>,
    now: u64,
    rng: u64,
    fences: Fences,
    newest_generation: BTreeMap<u32, u32>,
    /// Nodes in the critical section whose lease has not expired, with their fences.
    acting: BTreeMap<u32, Fence>,
    /// Requests to make: node → when.
    wanting: BTreeSet<u32>,
    counts: Counts,
    settings: Settings,
    /// Whether (b) is checked: off while a partition stands (lease mode does not promise it).
    check_b: bool,
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

impl Net {
    fn new(n: u32, edges: &[(u32, u32)], holders: &[u32], settings: Settings) -> Net {
        let e: Vec<_> = edges.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect();
        let h: Vec<_> = holders.iter().map(|&a| NodeId(a)).collect();
        let configs = network(n, &e, &h, settings).unwrap();
        let mut net = Net {
            nodes: configs
                .into_iter()
                .map(|c| Some(Node::new(c).unwrap()))
                .collect(),
            timers: vec![Timers::new(); n as usize],
            edges: edges.iter().map(|&(a, b)| key(a, b)).collect(),
            wires: BTreeMap::new(),
            now: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
            fences: Fences::new(),
            newest_generation: BTreeMap::new(),
            acting: BTreeMap::new(),
            wanting: BTreeSet::new(),
            counts: Counts::default(),
            settings,
            check_b: true,
        };
        // Every node's first event arms its timers: a keepalive LinkUp on each link.
        for &(a, b) in edges {
            net.feed(a, Event::LinkUp(NodeId(b)));
            net.feed(b, Event::LinkUp(NodeId(a)));
        }
        net
    }

    fn seed(mut self, seed: u64) -> Self {
        self.rng ^= seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
        self
    }

    fn random(&mut self, below: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % below
    }

    fn feed(&mut self, at: u32, event: Event<Message>) {
        let Some(node) = self.nodes[at as usize].as_mut() else {
            return;
        };
        let actions: Vec<_> = node.handle(event).unwrap().collect();
        for action in actions {
            self.carry_out(at, action);
        }
    }

    fn carry_out(&mut self, at: u32, action: Action<Message>) {
        if self.timers[at as usize].apply(&action, self.now) {
            return;
        }
        match action {
            Action::Send { to, msg } => {
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
            Action::EnterCritical { fence, .. } => {
                self.counts.entries += 1;
                let newest = self.newest_generation.entry(fence.lane).or_default();
                if fence.generation() < *newest {
                    self.counts.refused_old += 1;
                    assert!(
                        self.fences.admit(fence).is_err(),
                        "(a): an older generation admitted"
                    );
                } else {
                    *newest = fence.generation();
                    self.fences
                        .admit(fence)
                        .unwrap_or_else(|h| panic!("(a): {fence:?} refused after {h} at {at}"));
                }
                self.acting.insert(at, fence);
                let k = self.settings.k as usize;
                if self.check_b {
                    assert!(
                        self.acting.len() <= k,
                        "(b): {:?} acting at {}",
                        self.acting,
                        self.now
                    );
                }
            }
            Action::LeaseExpired { fence } => {
                self.counts.lease_expired += 1;
                assert_eq!(self.acting.remove(&at), Some(fence));
            }
            Action::Report(Report::TokenRegenerated { .. }) => self.counts.regenerated += 1,
            Action::Report(Report::TokenDestroyed { .. }) => self.counts.destroyed += 1,
            Action::Anomaly { kind, from } => {
                assert!(
                    Node::anomaly_severity(kind).is_noise(),
                    "{at}: suspect {kind:?} from {from:?}"
                );
            }
            other => panic!("unexpected action {other:?}"),
        }
    }

    /// Advance to the next event (a delivery or a timer), or the next time unit.
    fn step(&mut self) {
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
            if status == Some(Status::Critical) && self.random(4) == 0 {
                self.acting.remove(&i);
                self.feed(i, Event::Release);
            } else if status == Some(Status::Remainder) && self.wanting.remove(&i) {
                self.feed(i, Event::Request(CsRequest::ONE));
            }
        }
    }

    fn run(&mut self, until: u64) {
        while self.now < until {
            self.step();
        }
    }

    fn live(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes.len() as u32).filter(|&i| self.nodes[i as usize].is_some())
    }

    /// Cut link a–b: each end learns `LinkDown` at once; what was on it is lost.
    fn cut(&mut self, a: u32, b: u32) {
        if self.edges.remove(&key(a, b)) {
            self.wires.remove(&(a, b));
            self.wires.remove(&(b, a));
            self.feed(a, Event::LinkDown(NodeId(b)));
            self.feed(b, Event::LinkDown(NodeId(a)));
        }
    }

    fn join(&mut self, a: u32, b: u32) {
        if self.nodes[a as usize].is_some() && self.nodes[b as usize].is_some() {
            self.edges.insert(key(a, b));
            self.feed(a, Event::LinkUp(NodeId(b)));
            self.feed(b, Event::LinkUp(NodeId(a)));
        }
    }

    /// Crash-stop: the node and everything on its links are gone; its neighbours learn
    /// `LinkDown`.
    fn crash(&mut self, a: u32) {
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
    fn restart(&mut self, a: u32, neighbours: &[u32]) {
        let config = Config::new(
            NodeId(a),
            self.settings,
            0,
            Height::new(0, 0, NodeId(a)),
            vec![],
        );
        self.nodes[a as usize] = Some(Node::new(config).unwrap());
        for &b in neighbours {
            self.join(a, b);
        }
    }

    fn tokens(&self) -> u32 {
        let held: u32 = self
            .live()
            .map(|i| self.nodes[i as usize].as_ref().unwrap().tokens())
            .sum();
        let flying = self
            .wires
            .values()
            .flatten()
            .filter(|(_, m)| m.is_token())
            .count() as u32;
        held + flying
    }

    /// The tokens held in each connected part of the live graph (none in flight once quiet).
    fn tokens_per_part(&self) -> Vec<u32> {
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

    fn want_all(&mut self) {
        let live: Vec<_> = self.live().collect();
        self.wanting.extend(live);
    }

    /// Run until every live node that wanted the critical section entered it, or `limit`.
    fn serve_all(&mut self, limit: u64) -> u64 {
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

fn ring(n: u32) -> Vec<(u32, u32)> {
    (0..n).map(|i| (i, (i + 1) % n)).collect()
}

fn krl(k: u32) -> Settings {
    Settings::new(k).with_recovery(recovery())
}

#[test]
fn without_faults_nothing_is_made_again_and_beacons_keep_every_node_quiet() {
    for (k, forwarding) in [(1, false), (2, false), (2, true)] {
        let settings = krl(k).with_forwarding(forwarding);
        let mut net = Net::new(6, &ring(6), &[0, 3][..k as usize], settings);
        for round in 0..20 {
            net.serve_all(2_000);
            assert_eq!(net.tokens(), k, "round {round}");
        }
        assert_eq!(net.counts.regenerated, 0, "k {k}");
        assert_eq!(net.counts.destroyed, 0);
        assert_eq!(net.counts.refused_old, 0);
        net.run(net.now + 2_000);
        assert_eq!(net.counts.regenerated, 0, "idle for a long time, k {k}");
    }
}

#[test]
fn a_holder_that_crashes_in_the_critical_section_is_replaced_by_one_new_generation() {
    let mut net = Net::new(5, &ring(5), &[0], krl(1));
    net.feed(0, Event::Request(CsRequest::ONE));
    assert_eq!(net.nodes[0].as_ref().unwrap().status(), Status::Critical);
    net.crash(0);
    assert_eq!(net.tokens(), 0);
    let served = net.serve_all(5_000);
    assert_eq!(
        net.counts.regenerated, 1,
        "one node of the part makes it again"
    );
    assert_eq!(net.tokens(), 1);
    let bound = recovery().silence() + recovery().claim_wait() + 200;
    assert!(served < bound + 200, "served at {served}, bound {bound}");
}

#[test]
fn a_token_lost_on_a_breaking_link_is_made_again_and_one_delivered_is_not() {
    // Lost: the token is on the wire 0 → 1 when the link breaks.
    let mut net = Net::new(4, &ring(4), &[0], krl(1));
    net.feed(1, Event::Request(CsRequest::ONE));
    while !net
        .wires
        .get(&(0, 1))
        .is_some_and(|w| w.iter().any(|(_, m)| m.is_token()))
    {
        net.step();
    }
    net.cut(0, 1);
    assert_eq!(net.tokens(), 0);
    net.serve_all(5_000);
    assert_eq!((net.counts.regenerated, net.tokens()), (1, 1));

    // Delivered: the link breaks just after the token arrived (its acknowledgement lost).
    let mut net = Net::new(4, &ring(4), &[0], krl(1));
    net.feed(1, Event::Request(CsRequest::ONE));
    while net.nodes[1].as_ref().unwrap().tokens() == 0 {
        net.step();
    }
    net.cut(0, 1);
    net.serve_all(5_000);
    net.run(net.now + 3 * recovery().silence());
    assert_eq!((net.counts.regenerated, net.tokens()), (0, 1));
}

#[test]
fn a_partition_makes_one_generation_per_part_and_the_merge_destroys_the_older() {
    let mut net = Net::new(6, &ring(6), &[0], krl(1));
    net.check_b = false;
    // Two parts: {0, 1, 2} keeps the token, {3, 4, 5} makes one.
    net.cut(2, 3);
    net.cut(5, 0);
    net.serve_all(5_000);
    assert_eq!(net.counts.regenerated, 1);
    assert_eq!(net.tokens(), 2);
    net.join(2, 3);
    net.join(5, 0);
    net.run(net.now + 3 * recovery().silence());
    assert_eq!(net.tokens(), 1, "the merge left one token");
    assert_eq!(net.counts.destroyed, 1);
    net.check_b = true;
    net.acting.clear();
    for _ in 0..5 {
        net.serve_all(5_000);
    }
    assert_eq!(net.counts.regenerated, 1);
}

#[test]
fn a_restarted_host_rejoins_empty_and_one_that_claims_an_old_generation_is_refused() {
    let mut net = Net::new(5, &ring(5), &[0], krl(1));
    net.crash(2);
    net.serve_all(5_000);
    net.restart(2, &[1, 3]);
    for _ in 0..3 {
        net.serve_all(5_000);
    }
    assert_eq!((net.counts.regenerated, net.tokens()), (0, 1));

    // The holder crashes with the token; the rest make generation 1; it comes back with
    // host 0's initial configuration (the old token, generation 0), which is destroyed at
    // first contact, and its beacons are stale.
    net.run(net.now + 50);
    let holder = net
        .live()
        .find(|&i| net.nodes[i as usize].as_ref().unwrap().tokens() == 1);
    let holder = holder.expect("the token rests at a node");
    net.crash(holder);
    net.crash(0);
    net.serve_all(5_000);
    assert_eq!(net.counts.regenerated, 1);
    let configs = network(
        5,
        &ring(5)
            .iter()
            .map(|&(a, b)| (NodeId(a), NodeId(b)))
            .collect::<Vec<_>>(),
        &[NodeId(0)],
        krl(1),
    )
    .unwrap();
    net.nodes[0] = Some(Node::new(configs[0].clone()).unwrap());
    net.check_b = false;
    net.join(0, 1);
    net.join(0, 4);
    net.run(net.now + 3 * recovery().silence());
    assert_eq!(net.tokens(), 1, "the old generation was destroyed");
    assert!(net.counts.destroyed >= 1);
}

#[test]
fn leases_end_long_entries_and_recovery_settings_are_checked() {
    let mut net = Net::new(3, &ring(3), &[0], krl(1));
    net.feed(0, Event::Request(CsRequest::ONE));
    let lease = recovery().lease;
    let start = net.now;
    while net.counts.lease_expired == 0 {
        net.now += 1;
        while let Some(t) = net.timers[0].pop_expired(net.now) {
            net.feed(0, Event::Timeout(t));
        }
    }
    assert_eq!(net.now - start, lease);
    assert_eq!(net.nodes[0].as_ref().unwrap().status(), Status::Critical);

    let bad = Settings::new(1).with_recovery(Recovery::new(0, 1, 1, 1));
    let config = Config::new(NodeId(0), bad, 1, Height::new(0, 0, NodeId(0)), vec![]);
    assert!(Node::new(config.with_first_token(0)).is_err());
    let big_id = Config::new(
        NodeId(70_000),
        krl(1),
        0,
        Height::new(1, 0, NodeId(70_000)),
        vec![],
    );
    assert!(Node::new(big_id).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// One host crashes at a random time on a graph that stays connected without it (a wheel):
    /// (b) holds throughout, one generation is made if the token died with the host, and
    /// every live requester is served.
    #[test]
    fn one_crash_in_a_connected_part_keeps_k_exclusion(
        seed in any::<u64>(),
        k in 1u32..=2,
        victim in 0u32..7,
        after in 0u64..600,
    ) {
        let mut edges = ring(6);
        edges.extend((0..6).map(|i| (i, 6)));
        let mut net = Net::new(7, &edges, &[0, 3][..k as usize], krl(k)).seed(seed);
        net.want_all();
        net.run(after);
        let before = net.tokens();
        net.crash(victim);
        // Held there, or on one of its links.
        let lost = before - net.tokens();
        for _ in 0..3 {
            net.serve_all(20_000);
        }
        net.run(net.now + 3 * recovery().silence());
        prop_assert!(u64::from(lost) >= net.counts.regenerated);
        prop_assert_eq!(net.tokens_per_part(), vec![k]);
    }

    /// Random crashes, restarts and breaking links on a ring with chords: (a) always, (b)
    /// while no partition stands, and every live requester served after the faults.
    #[test]
    fn crashes_restarts_and_breaks_keep_the_fences_and_recover(
        seed in any::<u64>(),
        k in 1u32..=2,
        faults in proptest::collection::vec((0u8..3, 0u32..7, 0u64..400), 1..6),
    ) {
        let mut edges = ring(7);
        edges.extend([(0, 3), (2, 5)]);
        let mut net = Net::new(7, &edges, &[0, 4][..k as usize], krl(k)).seed(seed);
        net.check_b = false; // links break with tokens on them: parts may form
        for (kind, node, after) in faults {
            net.want_all();
            net.run(net.now + after);
            match kind {
                0 if net.live().count() > 3 => net.crash(node),
                1 if net.nodes[node as usize].is_none() => {
                    let around: Vec<_> = edges
                        .iter()
                        .filter_map(|&(a, b)| (a == node).then_some(b).or((b == node).then_some(a)))
                        .collect();
                    net.restart(node, &around);
                }
                _ => {
                    if let Some(&(a, b)) = edges.get(node as usize) {
                        net.cut(a, b);
                        net.join(a, b);
                    }
                }
            }
        }
        // Heal: every live pair of the original graph linked again.
        for &(a, b) in &edges {
            net.join(a, b);
        }
        net.run(net.now + 3 * recovery().silence());
        net.acting.clear();
        net.serve_all(20_000);
        net.run(net.now + 3 * recovery().silence());
        let parts = net.tokens_per_part();
        prop_assert!(parts.iter().all(|&t| t == k), "tokens per part {parts:?}, k = {k}");
    }
}
