//! A tiny hand-driven KRL network shared by the reverse_link scenario and interleaving tests: FIFO channels
//! per directed link, link events applied to both ends, the safety invariants checked after
//! every event, and every anomaly treated as a failure (except `Stale` when allowed).
#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};

pub use manet_mutex::testkit::strategy::cases;

use manet_mutex::reverse_link::{invariants, Config, Message, Node, Settings};
use manet_mutex::token::Height;
use manet_mutex::{Action, Anomaly, CsRequest, Event, NodeId, Protocol};

pub fn h(h1: i64, h2: i64, id: u32) -> Height {
    Height::new(h1, h2, NodeId(id))
}

pub fn send(to: u32, msg: Message) -> Action<Message> {
    Action::Send {
        to: NodeId(to),
        msg,
    }
}

pub fn enter() -> Action<Message> {
    Action::EnterCritical { resources: 1 }
}

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
        })
        .collect()
}

/// A tiny hand-driven network: FIFO channels per directed link, link events applied to both
/// ends, the safety invariants checked after every event, anomalies treated as failures.
pub struct Net {
    pub nodes: Vec<Node>,
    pub links: BTreeMap<(u32, u32), VecDeque<Message>>,
    pub trace: Vec<String>,
    /// Accept `Anomaly::Stale` (a Request that crossed a token: legitimate in KRLF and under
    /// link changes).
    pub allow_stale: bool,
    /// How many `Stale` anomalies were reported.
    pub stale: u64,
    /// The link of every message sent, in sending order (entries of links drained out of
    /// order are skipped): `deliver_oldest` is a fair, globally FIFO scheduler.
    pub order: VecDeque<(u32, u32)>,
}

impl Net {
    pub fn new(configs: Vec<Config>) -> Self {
        let nodes = configs
            .into_iter()
            .map(|c| Node::new(c).expect("valid config"))
            .collect();
        Net {
            nodes,
            links: BTreeMap::new(),
            trace: Vec::new(),
            allow_stale: false,
            stale: 0,
            order: VecDeque::new(),
        }
    }

    pub fn n(&self, i: u32) -> &Node {
        &self.nodes[i as usize]
    }

    pub fn fail(&self, why: String) -> ! {
        let from = self.trace.len().saturating_sub(400);
        panic!(
            "{why}\ntrace (last 400 lines):\n  {}",
            self.trace[from..].join("\n  ")
        )
    }

    pub fn handle(&mut self, at: u32, event: Event<Message>) -> Vec<Action<Message>> {
        if self.trace.len() > 4_000 {
            self.trace.drain(..2_000);
        }
        self.trace.push(format!("n{at} <- {event:?}"));
        let result = self.nodes[at as usize]
            .handle(event)
            .map(|a| a.collect::<Vec<_>>());
        let actions = match result {
            Ok(a) => a,
            Err(e) => self.fail(format!("n{at} rejected the event: {e}")),
        };
        self.trace.push(format!("   -> {actions:?}"));
        for a in &actions {
            match a {
                Action::Send { to, msg } => {
                    self.links.entry((at, to.0)).or_default().push_back(*msg);
                    self.order.push_back((at, to.0));
                }
                Action::Anomaly {
                    kind: Anomaly::Stale,
                    ..
                } if self.allow_stale => self.stale += 1,
                Action::Anomaly { .. } => self.fail(format!("n{at} reported {a:?}")),
                _ => {}
            }
        }
        let flying = self
            .links
            .iter()
            .flat_map(|(&(f, t), q)| q.iter().map(move |m| (NodeId(f), NodeId(t), m)));
        let safety = invariants::check_safety(&self.nodes, flying);
        if let Err(e) = safety {
            self.fail(e);
        }
        actions
    }

    pub fn request(&mut self, i: u32) -> Vec<Action<Message>> {
        self.handle(i, Event::Request(CsRequest::ONE))
    }

    pub fn release(&mut self, i: u32) -> Vec<Action<Message>> {
        self.handle(i, Event::Release)
    }

    /// The messages in flight from `from` to `to`, oldest first.
    pub fn pending(&self, from: u32, to: u32) -> Vec<Message> {
        self.links
            .get(&(from, to))
            .map(|q| q.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Deliver the oldest message on `from → to`.
    pub fn deliver(&mut self, from: u32, to: u32) -> (Message, Vec<Action<Message>>) {
        let Some(msg) = self
            .links
            .get_mut(&(from, to))
            .and_then(VecDeque::pop_front)
        else {
            self.fail(format!("nothing in flight on n{from} -> n{to}"))
        };
        let actions = self.handle(
            to,
            Event::Receive {
                from: NodeId(from),
                msg,
            },
        );
        (msg, actions)
    }

    /// Deliver every message on `from → to`.
    pub fn deliver_link(&mut self, from: u32, to: u32) {
        while !self.pending(from, to).is_empty() {
            self.deliver(from, to);
        }
    }

    /// Deliver, in link order, every message at the front of its link that `pick` accepts,
    /// until no link's front message is accepted. Returns how many were delivered.
    pub fn deliver_while(&mut self, pick: impl Fn(&Message) -> bool, limit: usize) -> usize {
        let mut delivered = 0;
        while let Some((f, t)) = self
            .links
            .iter()
            .find(|(_, q)| q.front().is_some_and(&pick))
            .map(|(&k, _)| k)
        {
            self.deliver(f, t);
            delivered += 1;
            if delivered > limit {
                self.fail(format!("still not quiet after {limit} deliveries"));
            }
        }
        delivered
    }

    /// Deliver the oldest message of the first busy link; false if nothing is in flight.
    pub fn step(&mut self) -> bool {
        let Some((f, t)) = self
            .links
            .iter()
            .find(|(_, q)| !q.is_empty())
            .map(|(&k, _)| k)
        else {
            return false;
        };
        self.deliver(f, t);
        true
    }

    /// Deliver the oldest message still in flight; false if nothing is in flight.
    pub fn deliver_oldest(&mut self) -> bool {
        while let Some((f, t)) = self.order.pop_front() {
            if !self.pending(f, t).is_empty() {
                self.deliver(f, t);
                return true;
            }
        }
        false
    }

    pub fn deliver_all(&mut self) -> usize {
        self.deliver_while(|_| true, 10_000)
    }

    /// Deliver everything but tokens (a token that heads a link blocks the link behind it).
    pub fn deliver_all_but_tokens(&mut self) -> usize {
        self.deliver_while(|m| !m.is_token(), 10_000)
    }

    /// The links that have a token at their front.
    pub fn tokens_in_flight(&self) -> Vec<(u32, u32)> {
        self.links
            .iter()
            .filter(|(_, q)| q.iter().any(Message::is_token))
            .map(|(&k, _)| k)
            .collect()
    }

    pub fn link_up(&mut self, a: u32, b: u32) -> (Vec<Action<Message>>, Vec<Action<Message>>) {
        (
            self.handle(a, Event::LinkUp(NodeId(b))),
            self.handle(b, Event::LinkUp(NodeId(a))),
        )
    }

    pub fn link_down(&mut self, a: u32, b: u32) -> (Vec<Action<Message>>, Vec<Action<Message>>) {
        if !self.pending(a, b).is_empty() || !self.pending(b, a).is_empty() {
            self.fail(format!("link n{a}-n{b} is not idle"));
        }
        (
            self.handle(a, Event::LinkDown(NodeId(b))),
            self.handle(b, Event::LinkDown(NodeId(a))),
        )
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
        assert!(self.links.values().all(VecDeque::is_empty));
        if let Err(e) = invariants::check_quiescent(&self.nodes) {
            self.fail(e);
        }
    }
}
