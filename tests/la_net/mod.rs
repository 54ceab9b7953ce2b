//! A hand-driven network for the permission-based algorithms: the test decides which message
//! is delivered, duplicated or lost and which timer fires, so any delivery order can be staged.
#![allow(dead_code)] // each test binary uses a different part of the harness

use manet_mutex::look_ahead;
use manet_mutex::sim::busy;
use manet_mutex::sim::routed::Host;
use manet_mutex::{Action, Anomaly, CsRequest, Error, Event, NodeId, Protocol, Status, TimerId};
use proptest::prelude::*;

/// A message in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flight<M> {
    pub from: NodeId,
    pub to: NodeId,
    pub msg: M,
}

/// Nodes, the messages between them and their armed timers.
pub struct Net<N: Protocol> {
    pub nodes: Vec<N>,
    pub inflight: Vec<Flight<N::Message>>,
    /// The last messages sent, for late duplicates.
    pub history: Vec<Flight<N::Message>>,
    pub timers: Vec<(NodeId, TimerId)>,
    pub entries: Vec<NodeId>,
    pub anomalies: Vec<(NodeId, NodeId, Anomaly)>,
    pub trace: Vec<String>,
}

impl<N: Host + PartialEq> Net<N> {
    pub fn new(nodes: Vec<N>) -> Self {
        Net {
            nodes,
            inflight: Vec::new(),
            history: Vec::new(),
            timers: Vec::new(),
            entries: Vec::new(),
            anomalies: Vec::new(),
            trace: Vec::new(),
        }
    }

    pub fn node(&self, i: u32) -> &N {
        &self.nodes[i as usize]
    }

    /// Feed `event` to host `h`; on `Err`, check the node is unchanged.
    pub fn apply(&mut self, h: u32, event: Event<N::Message>) -> Result<(), Error> {
        self.trace.push(format!("n{h} <- {event:?}"));
        let before = self.nodes[h as usize].clone();
        let result = self.nodes[h as usize]
            .handle(event)
            .map(|a| a.collect::<Vec<Action<N::Message>>>());
        let actions = match result {
            Ok(a) => a,
            Err(e) => {
                assert!(
                    self.nodes[h as usize] == before,
                    "Err({e}) changed node {h}\n{}",
                    self.trace.join("\n")
                );
                return Err(e);
            }
        };
        for a in actions {
            match a {
                Action::Send { to, msg } => {
                    let f = Flight {
                        from: NodeId(h),
                        to,
                        msg,
                    };
                    if self.history.len() == 64 {
                        self.history.remove(0);
                    }
                    self.history.push(f.clone());
                    self.inflight.push(f);
                }
                Action::EnterCritical { .. } => self.entries.push(NodeId(h)),
                Action::SetTimer { timer, .. } => self.timers.push((NodeId(h), timer)),
                Action::CancelTimer { timer } => self.timers.retain(|&t| t != (NodeId(h), timer)),
                Action::Anomaly { from, kind } => self.anomalies.push((NodeId(h), from, kind)),
                other => panic!("unexpected action {other:?}"),
            }
        }
        self.check();
        Ok(())
    }

    /// The invariants, with the trace on failure.
    pub fn check(&self) {
        if let Err(e) = N::check_safety(&self.nodes) {
            panic!("invariant violated: {e}\ntrace:\n{}", self.trace.join("\n"));
        }
    }

    /// Deliver in-flight message `k` (modulo the number in flight); false if none.
    pub fn deliver(&mut self, k: usize) -> bool {
        if self.inflight.is_empty() {
            return false;
        }
        let f = self.inflight.remove(k % self.inflight.len());
        let _ = self.apply(
            f.to.0,
            Event::Receive {
                from: f.from,
                msg: f.msg,
            },
        );
        true
    }

    /// Deliver the first in-flight message matching `pred`; panics if there is none.
    pub fn deliver_where(&mut self, pred: impl Fn(&Flight<N::Message>) -> bool) {
        let k = self
            .inflight
            .iter()
            .position(pred)
            .expect("no such message in flight");
        self.deliver(k);
    }

    /// Lose in-flight message `k`.
    pub fn drop_msg(&mut self, k: usize) {
        if !self.inflight.is_empty() {
            let f = self.inflight.remove(k % self.inflight.len());
            self.trace.push(format!("lost {f:?}"));
        }
    }

    /// Deliver a copy of in-flight message `k`, keeping the original in flight.
    pub fn duplicate(&mut self, k: usize) {
        if !self.inflight.is_empty() {
            let f = self.inflight[k % self.inflight.len()].clone();
            self.inflight.push(f);
            let last = self.inflight.len() - 1;
            self.deliver(last);
        }
    }

    /// Deliver, arbitrarily late, a copy of one of the last messages sent.
    pub fn replay(&mut self, k: usize) {
        if !self.history.is_empty() {
            let f = self.history[k % self.history.len()].clone();
            self.trace.push(format!("replay {f:?}"));
            let _ = self.apply(
                f.to.0,
                Event::Receive {
                    from: f.from,
                    msg: f.msg,
                },
            );
        }
    }

    /// Fire armed timer `k`.
    pub fn fire(&mut self, k: usize) {
        if !self.timers.is_empty() {
            let (h, t) = self.timers.remove(k % self.timers.len());
            let _ = self.apply(h.0, Event::Timeout(t));
        }
    }

    /// Deliver everything in flight, oldest first, until nothing is left.
    pub fn deliver_all(&mut self) {
        let mut budget = 100_000;
        while self.deliver(0) {
            budget -= 1;
            assert!(budget > 0, "message storm");
        }
    }

    /// Deliver everything in flight except to `away`, whose messages stay in flight (a host
    /// that is disconnected receives nothing).
    pub fn deliver_all_except(&mut self, away: u32) {
        while let Some(k) = self.inflight.iter().position(|f| f.to != NodeId(away)) {
            self.deliver(k);
        }
    }

    /// Reliable delivery from now on: release hosts in the critical section, deliver, fire
    /// timers when quiet, until every host is back in its remainder section.
    pub fn drain(&mut self) {
        for _ in 0..500 {
            for i in 0..self.nodes.len() as u32 {
                if self.nodes[i as usize].status() == Status::Critical {
                    self.apply(i, Event::Release).expect("release in CS");
                }
            }
            self.deliver_all();
            let idle = self.nodes.iter().all(|n| n.status() == Status::Remainder);
            if idle && self.inflight.is_empty() {
                return;
            }
            if self.inflight.is_empty() {
                let armed = std::mem::take(&mut self.timers);
                for (h, t) in armed {
                    let _ = self.apply(h.0, Event::Timeout(t));
                }
            }
        }
        let stuck: Vec<String> = busy(&self.nodes).map(|n| format!("{n:?}")).collect();
        panic!("not drained: {stuck:?}\ntrace:\n{}", self.trace.join("\n"));
    }

    /// Messages in flight to `to` (for assertions).
    pub fn to(&self, to: u32) -> Vec<&Flight<N::Message>> {
        self.inflight
            .iter()
            .filter(|f| f.to == NodeId(to))
            .collect()
    }
}

// Fixtures for driving one look-ahead host by hand.

/// A look-ahead host with an explicit `Info_set` and retransmission timeout 50.
pub fn node(id: u32, n: u32, info: &[u32]) -> look_ahead::Node {
    let info = info.iter().map(|&i| NodeId(i)).collect();
    let config = look_ahead::Config::new(NodeId(id), look_ahead::Settings::new(n, 50));
    look_ahead::Node::new(config.with_info_set(info)).unwrap()
}

/// Feed an event that must be accepted; collect the actions.
pub fn run(
    node: &mut look_ahead::Node,
    event: Event<look_ahead::Message>,
) -> Vec<Action<look_ahead::Message>> {
    node.handle(event).expect("event accepted").collect()
}

/// Deliver `msg` from `from`.
pub fn recv(
    node: &mut look_ahead::Node,
    from: u32,
    msg: look_ahead::Message,
) -> Vec<Action<look_ahead::Message>> {
    run(
        node,
        Event::Receive {
            from: NodeId(from),
            msg,
        },
    )
}

/// Deliver `msg` from `from` and check that it is ignored: one `kind` anomaly, nothing else,
/// and the node unchanged.
pub fn assert_ignored(
    node: &mut look_ahead::Node,
    from: u32,
    msg: look_ahead::Message,
    kind: Anomaly,
) {
    let before = node.clone();
    let acts = recv(node, from, msg);
    assert_eq!(
        acts,
        vec![Action::Anomaly {
            from: NodeId(from),
            kind
        }]
    );
    assert_eq!(*node, before, "an ignored message changes nothing");
}

/// A Lamport timestamp.
pub fn ts(clock: u64, id: u32) -> manet_mutex::permission::Timestamp {
    manet_mutex::permission::Timestamp {
        clock,
        id: NodeId(id),
    }
}

/// An announcement stamped `ts` from a sender that had seen no announcement of ours and counts
/// us as present.
pub fn ann(ts: manet_mutex::permission::Timestamp) -> manet_mutex::look_ahead::Announcement {
    manet_mutex::look_ahead::Announcement::new(ts, 0, false)
}

/// One step of an adversarial schedule; hosts and messages are taken modulo what exists.
#[derive(Debug, Clone)]
pub enum Op {
    Request(u32),
    Release(u32),
    Deliver(usize),
    Duplicate(usize),
    Replay(usize),
    Lose(usize),
    Fire(usize),
    Doze(u32),
    Wake(u32),
    Disconnect(u32),
    Reconnect(u32),
}

/// Schedule steps, deliveries the most likely.
pub fn schedule_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u32>().prop_map(Op::Request),
        2 => any::<u32>().prop_map(Op::Release),
        10 => any::<usize>().prop_map(Op::Deliver),
        1 => any::<usize>().prop_map(Op::Duplicate),
        1 => any::<usize>().prop_map(Op::Replay),
        1 => any::<usize>().prop_map(Op::Lose),
        2 => any::<usize>().prop_map(Op::Fire),
        1 => any::<u32>().prop_map(Op::Doze),
        1 => any::<u32>().prop_map(Op::Wake),
        1 => any::<u32>().prop_map(Op::Disconnect),
        1 => any::<u32>().prop_map(Op::Reconnect),
    ]
}

/// Play `ops` on `n` hosts; mode changes only if `modes`. Errors are expected for steps that
/// do not fit a host's state; `Net::apply` checks that an `Err` changed nothing, and the
/// invariants after every step.
pub fn play<N: Host + PartialEq>(net: &mut Net<N>, n: u32, ops: &[Op], modes: bool) {
    for op in ops {
        let event = match *op {
            Op::Request(h) => (h, Event::Request(CsRequest::ONE)),
            Op::Release(h) => (h, Event::Release),
            Op::Doze(h) if modes => (h, Event::Doze),
            Op::Wake(h) if modes => (h, Event::Wake),
            Op::Disconnect(h) if modes => (h, Event::Disconnect),
            Op::Reconnect(h) if modes => (h, Event::Reconnect),
            Op::Deliver(k) => {
                net.deliver(k);
                continue;
            }
            Op::Duplicate(k) => {
                net.duplicate(k);
                continue;
            }
            Op::Replay(k) => {
                net.replay(k);
                continue;
            }
            Op::Lose(k) => {
                net.drop_msg(k);
                continue;
            }
            Op::Fire(k) => {
                net.fire(k);
                continue;
            }
            _ => continue,
        };
        let _ = net.apply(event.0 % n, event.1);
    }
}
