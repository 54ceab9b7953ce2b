//! A minimal deterministic driver for the prioritized algorithm: reliable FIFO channels per
//! direction, link changes only on empty channels (the papers' contract), invariants checked
//! after every step. To be replaced by the shared simulator once it drives token algorithms.
#![allow(dead_code)] // each test crate uses a different part of the driver

pub mod unit;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use manet_mutex::prioritized::invariants::{check_quiescent, check_safety};
use manet_mutex::prioritized::{network, Message, Node, Settings};
use manet_mutex::{Action, Anomaly, CsRequest, Error, Event, NodeId, Protocol, Status};

#[path = "../cases/mod.rs"]
mod case_count;
#[allow(unused_imports)] // not every test file runs property tests
pub use case_count::cases;

pub fn n(i: u32) -> NodeId {
    NodeId(i)
}

/// Undirected edge key, smaller id first.
pub fn edge(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

pub struct Net {
    pub nodes: Vec<Node>,
    pub k: u32,
    pub links: BTreeSet<(u32, u32)>,
    pub chans: BTreeMap<(NodeId, NodeId), VecDeque<Message>>,
    /// Every CS entry, in order: (node, resources).
    pub entered: Vec<(NodeId, u32)>,
    pub anomalies: Vec<(NodeId, NodeId, Anomaly)>,
    pub delivered: u64,
}

impl Net {
    pub fn new(count: u32, edges: &[(u32, u32)], holder: u32, settings: Settings) -> Net {
        let e: Vec<_> = edges.iter().map(|&(a, b)| (n(a), n(b))).collect();
        let nodes = network(count, &e, &[n(holder)], settings)
            .unwrap()
            .into_iter()
            .map(|c| Node::new(c).unwrap())
            .collect();
        Net {
            nodes,
            k: settings.k,
            links: edges.iter().map(|&(a, b)| edge(a, b)).collect(),
            chans: BTreeMap::new(),
            entered: Vec::new(),
            anomalies: Vec::new(),
            delivered: 0,
        }
    }

    pub fn node(&self, i: u32) -> &Node {
        &self.nodes[i as usize]
    }

    pub fn status(&self, i: u32) -> Status {
        self.node(i).status()
    }

    pub fn in_cs(&self, i: u32) -> bool {
        self.status(i) == Status::Critical
    }

    pub fn check(&self) {
        let in_flight = self
            .chans
            .iter()
            .flat_map(|(&(from, to), q)| q.iter().map(move |m| (from, to, m)));
        if let Err(e) = check_safety(&self.nodes, in_flight, self.k) {
            panic!(
                "invariant violated: {e}\nnodes: {:#?}\nchannels: {:?}",
                self.nodes, self.chans
            );
        }
    }

    /// Feed `event` to node `i`, carry out its actions, check the invariants.
    pub fn apply(&mut self, i: u32, event: Event<Message>) -> Result<(), Error> {
        let from = n(i);
        let actions: Vec<Action<Message>> = self.nodes[i as usize].handle(event)?.collect();
        for a in actions {
            match a {
                Action::Send { to, msg } => {
                    assert!(
                        self.links.contains(&edge(i, to.0)),
                        "{from:?} sent {msg:?} to non-neighbour {to:?}"
                    );
                    self.chans.entry((from, to)).or_default().push_back(msg);
                }
                Action::EnterCritical { resources } => self.entered.push((from, resources)),
                Action::Anomaly { from: peer, kind } => self.anomalies.push((from, peer, kind)),
                other => panic!("unexpected action {other:?}"),
            }
        }
        self.check();
        Ok(())
    }

    pub fn request(&mut self, i: u32, resources: u32, priority: u32) {
        self.apply(
            i,
            Event::Request(CsRequest {
                resources,
                priority,
            }),
        )
        .unwrap();
    }

    pub fn release(&mut self, i: u32) {
        self.apply(i, Event::Release).unwrap();
    }

    /// Deliver the oldest message from `a` to `b`. Returns whether there was one.
    pub fn deliver(&mut self, a: u32, b: u32) -> bool {
        let Some(msg) = self
            .chans
            .get_mut(&(n(a), n(b)))
            .and_then(VecDeque::pop_front)
        else {
            return false;
        };
        self.delivered += 1;
        self.apply(b, Event::Receive { from: n(a), msg }).unwrap();
        true
    }

    /// Channels with messages in flight.
    pub fn busy(&self) -> Vec<(NodeId, NodeId)> {
        self.chans
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(&k, _)| k)
            .collect()
    }

    /// Deliver round-robin over the busy channels until none is left. Panics after
    /// `limit` deliveries (a livelock).
    pub fn run(&mut self) {
        let limit = self.delivered + 200_000;
        loop {
            let busy = self.busy();
            if busy.is_empty() {
                return;
            }
            for (a, b) in busy {
                self.deliver(a.0, b.0);
            }
            assert!(self.delivered < limit, "no quiescence: livelock?");
        }
    }

    /// Fail link a–b if both directions are empty (the contract). Returns whether it failed.
    pub fn link_down(&mut self, a: u32, b: u32) -> bool {
        let empty = |x: u32, y: u32| self.chans.get(&(n(x), n(y))).is_none_or(VecDeque::is_empty);
        if !self.links.contains(&edge(a, b)) || !empty(a, b) || !empty(b, a) {
            return false;
        }
        self.links.remove(&edge(a, b));
        self.apply(a, Event::LinkDown(n(b))).unwrap();
        self.apply(b, Event::LinkDown(n(a))).unwrap();
        true
    }

    pub fn link_up(&mut self, a: u32, b: u32) -> bool {
        if a == b || !self.links.insert(edge(a, b)) {
            return false;
        }
        self.apply(a, Event::LinkUp(n(b))).unwrap();
        self.apply(b, Event::LinkUp(n(a))).unwrap();
        true
    }

    /// Whether the graph stays connected without link a–b.
    pub fn connected_without(&self, a: u32, b: u32) -> bool {
        let count = self.nodes.len() as u32;
        let mut seen = vec![false; count as usize];
        let mut stack = vec![0u32];
        seen[0] = true;
        while let Some(u) = stack.pop() {
            for &(x, y) in &self.links {
                if (x, y) == edge(a, b) {
                    continue;
                }
                let v = if x == u {
                    y
                } else if y == u {
                    x
                } else {
                    continue;
                };
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    stack.push(v);
                }
            }
        }
        seen.into_iter().all(|s| s)
    }

    /// After churn and new requests stop: deliver everything and release every node in the
    /// CS, until nobody waits. Panics if some request is never served.
    pub fn drain(&mut self) {
        for _ in 0..10_000 {
            self.run();
            let in_cs: Vec<u32> = (0..self.nodes.len() as u32)
                .filter(|&i| self.in_cs(i))
                .collect();
            let waiting = (0..self.nodes.len() as u32).any(|i| self.status(i) == Status::Waiting);
            if in_cs.is_empty() && !waiting {
                if let Err(e) = check_quiescent(&self.nodes) {
                    panic!("not quiescent after the drain: {e}\n{:#?}", self.nodes);
                }
                return;
            }
            assert!(
                !in_cs.is_empty(),
                "deadlock: nodes wait, nobody is in the CS, nothing in flight\n{:#?}",
                self.nodes
            );
            for i in in_cs {
                self.release(i);
            }
        }
        panic!("requests not served after 10000 release rounds");
    }

    /// Nodes' CS entry order.
    pub fn entry_order(&self) -> Vec<u32> {
        self.entered.iter().map(|(i, _)| i.0).collect()
    }
}
