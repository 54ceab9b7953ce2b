//! A permission-based system (look-ahead, Ricart–Agrawala) driven one chosen step at a time,
//! shared by their models (`tests/model_look_ahead.rs`, `tests/model_ricart_agrawala.rs`) and
//! fuzz bodies. It follows their driving contract: any host can message any host; messages
//! in flight form a bag (any one may be delivered next), may be lost, and are recovered by the
//! retransmission timers, which may fire at any time while armed; a host that disconnected
//! receives nothing until it reconnects (its messages wait in flight).

use manet_mutex::look_ahead::{self, Mode};
use manet_mutex::sim::routed::{self, Host};
use manet_mutex::{ricart_agrawala, Action, CsRequest, Event, NodeId, Status, TimerId};

/// What the harness needs from an algorithm besides [`Host`].
pub trait Permission: Host {
    /// Whether the host can receive messages now.
    fn reachable(&self) -> bool {
        true
    }
}

impl Permission for ricart_agrawala::Node {}

impl Permission for look_ahead::Node {
    fn reachable(&self) -> bool {
        self.mode() != Mode::Disconnected
    }
}

/// Hosts, messages in flight, each host's armed timers (sorted), and the first contract breach
/// seen (a send to an unknown host or to itself, a valid event rejected, a timer id armed
/// twice): once set, the system stops changing.
#[derive(Clone, Debug)]
pub struct PermNet<H: Permission> {
    pub nodes: Vec<H>,
    pub in_flight: Vec<(NodeId, NodeId, H::Msg)>,
    pub timers: Vec<Vec<TimerId>>,
    pub fault: Option<String>,
}

impl<H: Permission> PermNet<H> {
    pub fn new(hosts: u32, seed: u64) -> Result<Self, String> {
        let nodes = (0..hosts)
            .map(|i| H::create(NodeId(i), hosts, seed, 1))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("cannot create: {e}"))?;
        Ok(PermNet {
            nodes,
            in_flight: Vec::new(),
            timers: vec![Vec::new(); hosts as usize],
            fault: None,
        })
    }

    /// Feed `event` to `at` and carry out its actions.
    pub fn apply(&mut self, at: NodeId, event: Event<H::Msg>) {
        if self.fault.is_some() {
            return;
        }
        let outcome = self.nodes[at.index()]
            .handle(event)
            .map(|actions| actions.collect::<Vec<_>>());
        let actions = match outcome {
            Ok(actions) => actions,
            Err(e) => {
                self.fault = Some(format!("{at:?} rejected a valid event: {e}"));
                return;
            }
        };
        let timers = &mut self.timers[at.index()];
        for action in actions {
            match action {
                Action::Send { to, msg } => {
                    if to == at || to.index() >= self.nodes.len() {
                        self.fault = Some(format!("{at:?} sent {msg:?} to {to:?}"));
                        return;
                    }
                    self.in_flight.push((at, to, msg));
                }
                // Restarting a timer is allowed: it stays armed once.
                Action::SetTimer { timer, .. } => {
                    if let Err(i) = timers.binary_search(&timer) {
                        timers.insert(i, timer);
                    }
                }
                Action::CancelTimer { timer } => timers.retain(|&t| t != timer),
                _ => {}
            }
        }
    }

    pub fn status(&self, node: NodeId) -> Status {
        self.nodes[node.index()].status()
    }

    /// The in-flight messages that can be delivered now (their destination is reachable).
    pub fn deliverable(&self) -> Vec<usize> {
        (0..self.in_flight.len())
            .filter(|&i| self.nodes[self.in_flight[i].1.index()].reachable())
            .collect()
    }

    /// Deliver the `i`-th message in flight.
    pub fn deliver(&mut self, i: usize) {
        let (from, to, msg) = self.in_flight.remove(i);
        self.apply(to, Event::Receive { from, msg });
    }

    /// Lose the `i`-th message in flight.
    pub fn lose(&mut self, i: usize) {
        self.in_flight.remove(i);
    }

    /// Every armed timer, as `(host, timer)`.
    pub fn armed(&self) -> Vec<(NodeId, TimerId)> {
        self.timers
            .iter()
            .enumerate()
            .flat_map(|(i, ts)| ts.iter().map(move |&t| (NodeId(i as u32), t)))
            .collect()
    }

    /// Timer `timer` of `node` expires.
    pub fn fire(&mut self, node: NodeId, timer: TimerId) {
        self.timers[node.index()].retain(|&t| t != timer);
        self.apply(node, Event::Timeout(timer));
    }

    pub fn request(&mut self, node: NodeId) {
        self.apply(node, Event::Request(CsRequest::ONE));
    }

    pub fn release(&mut self, node: NodeId) {
        self.apply(node, Event::Release);
    }

    /// `routed::check` (one host in the critical section, each host's own invariants,
    /// pairwise consistency of the sets), plus the contract breaches recorded by `apply`.
    pub fn check_safety(&self) -> Result<(), String> {
        match &self.fault {
            Some(fault) => Err(fault.clone()),
            None => routed::check(&self.nodes),
        }
    }

    fn busy(&self) -> Vec<NodeId> {
        self.nodes
            .iter()
            .filter(|n| n.status() != Status::Remainder)
            .map(|n| n.id())
            .collect()
    }

    /// Liveness as a check on one state: every disconnected host reconnects, and then, with
    /// no further requests, losses or mode changes, each round releases every host in the critical section and delivers every deliverable
    /// message; a round with nothing to deliver fires every armed timer instead (the
    /// retransmissions that recover lost messages). Within `rounds` rounds every waiting host
    /// must have entered. Safety is checked after every round.
    pub fn drain(&self, rounds: usize) -> Result<(), String> {
        let mut net = self.clone();
        // A host that disconnected comes back first. Without this, look-ahead can starve a
        // host that waits for the REPLY of a host that stays away (V4 in docs/ALGORITHMS.md,
        // open, pinned by an ignored test in tests/model_look_ahead.rs).
        for i in 0..net.nodes.len() {
            if !net.nodes[i].reachable() {
                net.apply(NodeId(i as u32), Event::Reconnect);
            }
        }
        for _ in 0..rounds {
            if net.busy().is_empty() {
                return Ok(());
            }
            for i in 0..net.nodes.len() {
                if net.status(NodeId(i as u32)) == Status::Critical {
                    net.release(NodeId(i as u32));
                }
            }
            let deliverable = net.deliverable();
            if deliverable.is_empty() {
                for (node, timer) in net.armed() {
                    net.fire(node, timer);
                }
            }
            // Highest index first, so earlier indices stay valid.
            for &i in deliverable.iter().rev() {
                net.deliver(i);
            }
            net.check_safety()?;
        }
        match net.busy() {
            busy if busy.is_empty() => Ok(()),
            busy => Err(format!("starvation: {busy:?} after {rounds} drain rounds")),
        }
    }
}
