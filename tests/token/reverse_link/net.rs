//! The KRL scenario and interleaving tests drive the test kit's [`TokenNet`] in hand-driven
//! mode (safety after every event) through this adapter: node numbers instead of ids, each
//! step's actions returned, link events applied to both ends, and every anomaly treated as a
//! failure (except `Stale` when allowed).

pub use manet_mutex_testkit::strategy::cases;

use std::ops::{Deref, DerefMut};

use manet_mutex::reverse_link::{invariants, Config, Message, Node, Settings};
use manet_mutex::token::Height;
use manet_mutex::{Action, Anomaly, CsRequest, Event, NodeId, Protocol};
use manet_mutex_sim::Graph;
use manet_mutex_testkit::TokenNet;

pub fn h(h1: i64, h2: i64, id: u32) -> Height {
    Height::new(h1, h2, NodeId(id))
}

pub fn send(to: u32, msg: Message) -> Action<Message> {
    Action::Send {
        to: NodeId(to),
        msg,
    }
}

pub use super::unit::enter;

/// Configurations for nodes `0..heights.len()` with the given initial heights.
pub fn configs(
    heights: &[Height],
    edges: &[(u32, u32)],
    holders: &[u32],
    fwd: bool,
) -> Vec<Config> {
    (0..heights.len() as u32)
        .map(|i| {
            Config::new(
                NodeId(i),
                Settings::new(holders.len() as u32).with_forwarding(fwd),
                u32::from(holders.contains(&i)),
                heights[i as usize],
                edges
                    .iter()
                    .filter_map(|&(a, b)| match (a == i, b == i) {
                        (true, _) => Some(heights[b as usize]),
                        (_, true) => Some(heights[a as usize]),
                        _ => None,
                    })
                    .collect(),
            )
            // Token ids in the order of `holders`.
            .with_first_token(holders.iter().position(|&x| x == i).unwrap_or(0) as u32)
        })
        .collect()
}

/// A hand-driven KRL network; derefs to the kit's [`TokenNet`].
pub struct Net {
    net: TokenNet<Node>,
    /// Accept `Anomaly::Stale` (a Request that crossed a token: legitimate in KRLF and under
    /// link changes).
    pub allow_stale: bool,
    /// How many `Stale` anomalies were reported.
    pub stale: u64,
}

impl Deref for Net {
    type Target = TokenNet<Node>;

    fn deref(&self) -> &TokenNet<Node> {
        &self.net
    }
}

impl DerefMut for Net {
    fn deref_mut(&mut self) -> &mut TokenNet<Node> {
        &mut self.net
    }
}

impl Net {
    /// The nodes of `configs`, linked as their neighbour lists say.
    pub fn new(configs: Vec<Config>) -> Self {
        let nodes: Vec<Node> = configs
            .into_iter()
            .map(|c| Node::new(c).expect("valid config"))
            .collect();
        let edges: Vec<(NodeId, NodeId)> = nodes
            .iter()
            .flat_map(|n| n.neighbors().members().map(move |m| (n.id(), m.id())))
            .filter(|&(a, b)| a < b)
            .collect();
        let graph = Graph::from_edges(nodes.len(), &edges);
        Net {
            net: TokenNet::with_nodes(nodes, graph).checked(),
            allow_stale: false,
            stale: 0,
        }
    }

    pub fn n(&self, i: u32) -> &Node {
        &self.net.nodes[i as usize]
    }

    pub fn fail(&self, why: String) -> ! {
        panic!("{why}\n{}", self.net.trace_text())
    }

    /// Apply `event` at node `at`; its actions. Panics on a rejection or an anomaly.
    pub fn handle(&mut self, at: u32, event: Event<Message>) -> Vec<Action<Message>> {
        if let Err(e) = self.net.apply(NodeId(at), event) {
            self.fail(format!("n{at} rejected the event: {e}"));
        }
        self.checked_last(at)
    }

    pub fn request(&mut self, i: u32) -> Vec<Action<Message>> {
        self.handle(i, Event::Request(CsRequest::ONE))
    }

    pub fn release(&mut self, i: u32) -> Vec<Action<Message>> {
        self.handle(i, Event::Release)
    }

    /// The messages in flight from `from` to `to`, oldest first.
    pub fn pending(&self, from: u32, to: u32) -> Vec<Message> {
        self.net
            .pending(NodeId(from), NodeId(to))
            .into_iter()
            .copied()
            .collect()
    }

    /// Deliver the oldest message on `from → to`.
    pub fn deliver(&mut self, from: u32, to: u32) -> (Message, Vec<Action<Message>>) {
        let Some(msg) = self.pending(from, to).first().copied() else {
            self.fail(format!("nothing in flight on n{from} -> n{to}"))
        };
        self.net.deliver(NodeId(from), NodeId(to));
        (msg, self.checked_last(to))
    }

    /// The last actions of node `at`, failing on anomalies as [`Net::handle`] does.
    fn checked_last(&mut self, at: u32) -> Vec<Action<Message>> {
        let actions = self.net.last.clone();
        for a in &actions {
            match a {
                Action::Anomaly {
                    kind: Anomaly::Stale,
                    ..
                } if self.allow_stale => self.stale += 1,
                Action::Anomaly { .. } => self.fail(format!("n{at} reported {a:?}")),
                _ => {}
            }
        }
        actions
    }

    /// Deliver every message on `from → to`.
    pub fn deliver_link(&mut self, from: u32, to: u32) {
        while !self.pending(from, to).is_empty() {
            self.deliver(from, to);
        }
    }

    /// Deliver the oldest message of the first busy link; false if nothing is in flight.
    pub fn step(&mut self) -> bool {
        match self.net.busy_links().first() {
            Some(&(f, t)) => {
                self.deliver(f.0, t.0);
                true
            }
            None => false,
        }
    }

    /// Deliver the oldest message still in flight; false if nothing is in flight.
    pub fn deliver_oldest(&mut self) -> bool {
        match self.net.deliver_oldest() {
            Some((_, to)) => {
                self.checked_last(to.0);
                true
            }
            None => false,
        }
    }

    pub fn deliver_all(&mut self) -> usize {
        self.deliver_while(|_| true)
    }

    /// Deliver everything but tokens (a token that heads a link blocks the link behind it).
    pub fn deliver_all_but_tokens(&mut self) -> usize {
        self.deliver_while(|m| !m.is_token())
    }

    /// Deliver, in link order, every message at the head of its link that `pick` accepts,
    /// until no head is accepted. Returns how many were delivered.
    fn deliver_while(&mut self, pick: impl Fn(&Message) -> bool) -> usize {
        let mut delivered = 0;
        while let Some((f, t)) = self
            .net
            .busy_links()
            .into_iter()
            .find(|&(f, t)| self.net.pending(f, t).first().is_some_and(|m| pick(m)))
        {
            self.deliver(f.0, t.0);
            delivered += 1;
            if delivered > 10_000 {
                self.fail("still not quiet after 10000 deliveries".into());
            }
        }
        delivered
    }

    /// The links that have a token in flight.
    pub fn tokens_in_flight(&self) -> Vec<(u32, u32)> {
        let mut links: Vec<(u32, u32)> = self
            .net
            .channels
            .iter()
            .filter(|(.., m)| m.is_token())
            .map(|(f, t, _)| (f.0, t.0))
            .collect();
        links.dedup();
        links
    }

    /// Both ends are told the link is up (a keepalive if it already was).
    pub fn link_up(&mut self, a: u32, b: u32) -> (Vec<Action<Message>>, Vec<Action<Message>>) {
        let (x, y) = (NodeId(a), NodeId(b));
        self.net.graph.add(x, y);
        self.net.up.insert((x, y));
        let at_a = self.handle(a, Event::LinkUp(y));
        self.net.up.insert((y, x));
        (at_a, self.handle(b, Event::LinkUp(x)))
    }

    /// The link fails (it must be idle); both ends are told.
    pub fn link_down(&mut self, a: u32, b: u32) -> (Vec<Action<Message>>, Vec<Action<Message>>) {
        if !self.pending(a, b).is_empty() || !self.pending(b, a).is_empty() {
            self.fail(format!("link n{a}-n{b} is not idle"));
        }
        let (x, y) = (NodeId(a), NodeId(b));
        self.net.graph.remove(x, y);
        self.net.up.remove(&(x, y));
        let at_a = self.handle(a, Event::LinkDown(y));
        self.net.up.remove(&(y, x));
        (at_a, self.handle(b, Event::LinkDown(x)))
    }

    pub fn queue(&self, i: u32) -> Vec<u32> {
        self.n(i).queue().map(|q| q.0).collect()
    }

    pub fn next(&self, i: u32) -> u32 {
        match self.n(i).next() {
            Some(next) => next.0,
            None => self.fail(format!("n{i} has no next")),
        }
    }

    pub fn height(&self, i: u32) -> Height {
        self.n(i).height()
    }

    pub fn visited(&self, i: u32) -> Vec<u32> {
        self.n(i)
            .neighbors()
            .members()
            .filter(|n| n.visited())
            .map(|n| n.id().0)
            .collect()
    }

    pub fn quiescent(&self) {
        assert!(self.net.channels.is_empty());
        if let Err(e) = invariants::check_quiescent(&self.net.nodes) {
            self.fail(e.to_string());
        }
    }
}
