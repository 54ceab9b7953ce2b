//! Steady-state `handle` allocates nothing for the prioritized, look-ahead and Ricart–Agrawala
//! cores either (KRL has its own, finer test in `reverse_link_alloc.rs`): after warm-up rounds
//! on a static network with reliable delivery, hundreds more rounds of every node requesting
//! and releasing make no heap allocation inside `handle` (called through `handle_into`, which
//! moves the actions into a buffer the run keeps, and through `handle_in`, which lends that
//! buffer to the node) or while its actions are consumed,
//! nor in the embedder's timer table ([`Timers`]) that records the permission nodes' timers.

use std::collections::VecDeque;

use crate::counting::counted;
use manet_mutex::timers::Timers;
use manet_mutex::{
    look_ahead, prioritized, ricart_agrawala, Action, CsRequest, Event, NodeId, Protocol, Status,
};

enum Step<M> {
    Deliver { from: NodeId, to: NodeId, msg: M },
    Release(NodeId),
}

struct Run<P: Protocol> {
    nodes: Vec<P>,
    steps: VecDeque<Step<P::Message>>,
    actions: Vec<Action<P::Message>>,
    timers: Vec<Timers>,
    allocations: u64,
    entries: u64,
    /// Call `handle_in` (the run's buffer lent to the node) instead of `handle_into`.
    lend: bool,
    /// Rounds so far; with `churn`, node 0 suspects a peer before each round's requests and
    /// trusts it again after (failure-detector input, issue 23).
    rounds: u32,
    churn: bool,
}

impl<P: Protocol> Run<P> {
    fn new(nodes: Vec<P>, lend: bool) -> Self {
        Run {
            lend,
            rounds: 0,
            churn: false,
            timers: vec![Timers::new(); nodes.len()],
            nodes,
            steps: VecDeque::with_capacity(1 << 14),
            actions: Vec::with_capacity(1 << 10),
            allocations: 0,
            entries: 0,
        }
    }

    fn feed(&mut self, at: NodeId, event: Event<P::Message>) {
        self.actions.clear();
        let (node, actions) = (&mut self.nodes[at.index()], &mut self.actions);
        let lend = self.lend;
        let (result, made) = counted(|| {
            if lend {
                node.handle_in(event, actions)
            } else {
                node.handle_into(event, actions)
            }
        });
        result.expect("the driver only issues valid events");
        self.allocations += made;
        for action in self.actions.drain(..) {
            let timers = &mut self.timers[at.index()];
            let (recorded, made) = counted(|| timers.apply(&action, 0));
            self.allocations += made;
            if recorded {
                continue;
            }
            match action {
                Action::Send { to, msg } => {
                    self.steps.push_back(Step::Deliver { from: at, to, msg })
                }
                Action::EnterCritical { .. } => {
                    self.entries += 1;
                    self.steps.push_back(Step::Release(at));
                }
                _ => {}
            }
        }
    }

    /// Every idle node requests, then everything is delivered and every entrant releases.
    fn round(&mut self, request: CsRequest) {
        self.rounds += 1;
        let suspect = NodeId(1 + self.rounds % (self.nodes.len() as u32 - 1));
        if self.churn {
            self.feed(NodeId(0), Event::Suspect(suspect));
        }
        for i in 0..self.nodes.len() {
            if self.nodes[i].status() == Status::Remainder {
                self.feed(NodeId(i as u32), Event::Request(request));
            }
        }
        while let Some(step) = self.steps.pop_front() {
            match step {
                Step::Deliver { from, to, msg } => self.feed(to, Event::Receive { from, msg }),
                Step::Release(at) => self.feed(at, Event::Release),
            }
        }
        if self.churn {
            self.feed(NodeId(0), Event::Trust(suspect));
        }
        assert!(self.nodes.iter().all(|n| n.status() == Status::Remainder));
        // Delivery is reliable and prompt: every timer was cancelled before it could fire.
        assert!(self.timers.iter().all(Timers::is_empty));
    }

    /// Allocations made by `rounds` rounds after `warmup` uncounted ones.
    fn measure(mut self, request: CsRequest, warmup: usize, rounds: usize) -> (u64, u64) {
        for _ in 0..warmup {
            self.round(request);
        }
        (self.allocations, self.entries) = (0, 0);
        for _ in 0..rounds {
            self.round(request);
        }
        (self.allocations, self.entries)
    }
}

/// `measure` through `handle_into` and through `handle_in` (the run's buffer lent), from the
/// same nodes: the allocations of both runs, and the entries, which must agree.
fn both<P: Protocol + Clone>(
    nodes: Vec<P>,
    request: CsRequest,
    warmup: usize,
    rounds: usize,
) -> (u64, u64) {
    both_with(nodes, request, warmup, rounds, false)
}

/// [`both`], with node 0 suspecting and trusting a peer every round if `churn`.
fn both_with<P: Protocol + Clone>(
    nodes: Vec<P>,
    request: CsRequest,
    warmup: usize,
    rounds: usize,
    churn: bool,
) -> (u64, u64) {
    let run = |lend| Run {
        churn,
        ..Run::new(nodes.clone(), lend)
    };
    let (into, entries) = run(false).measure(request, warmup, rounds);
    let (lent, lent_entries) = run(true).measure(request, warmup, rounds);
    assert_eq!(entries, lent_entries, "the same run either way");
    (into + lent, entries)
}

fn ring(n: u32) -> Vec<(NodeId, NodeId)> {
    (0..n).map(|i| (NodeId(i), NodeId((i + 1) % n))).collect()
}

#[test]
fn prioritized_steady_state_handle_does_not_allocate() {
    for policy in [
        prioritized::Policy::Explicit,
        prioritized::Policy::Equal,
        prioritized::Policy::MaxConcurrency,
    ] {
        let settings = prioritized::Settings::new(3, policy);
        let nodes = prioritized::network(5, &ring(5), &[NodeId(0)], settings)
            .unwrap()
            .into_iter()
            .map(|c| prioritized::Node::new(c).unwrap())
            .collect();
        let (allocations, entries) = both(
            nodes,
            CsRequest {
                resources: 2,
                priority: 1,
            },
            30,
            300,
        );
        assert_eq!(
            entries,
            300 * 5,
            "{policy:?}: every node enters every round"
        );
        assert_eq!(allocations, 0, "{policy:?}");
    }
}

#[test]
fn look_ahead_steady_state_handle_does_not_allocate() {
    let nodes = (0..5)
        .map(|i| {
            look_ahead::Node::new(look_ahead::Config::new(
                NodeId(i),
                look_ahead::Settings::new(5, 100).with_seed(7),
            ))
            .unwrap()
        })
        .collect();
    let (allocations, entries) = both(nodes, CsRequest::ONE, 30, 300);
    assert_eq!(entries, 300 * 5);
    assert_eq!(allocations, 0);
}

#[test]
fn ricart_agrawala_steady_state_handle_does_not_allocate() {
    let nodes = (0..5)
        .map(|i| {
            ricart_agrawala::Node::new(ricart_agrawala::Config::new(
                NodeId(i),
                ricart_agrawala::Settings::new(5, 100),
            ))
            .unwrap()
        })
        .collect();
    let (allocations, entries) = both(nodes, CsRequest::ONE, 30, 300);
    assert_eq!(entries, 300 * 5);
    assert_eq!(allocations, 0);
}

/// With the recovery settings (a lease, exclusion by timeout, majority mode) and a failure
/// detector's input every round (node 0 suspects a peer, which then asks it and is readmitted,
/// and trusts it again), steady-state `handle` still allocates nothing: every per-peer record
/// is sized at construction (issue 23).
#[test]
fn permission_recovery_steady_state_handle_does_not_allocate() {
    let la = (0..5)
        .map(|i| {
            let s = look_ahead::Settings::new(5, 100)
                .with_seed(7)
                .with_lease(1_000)
                .with_exclusion(3)
                .with_majority(true);
            look_ahead::Node::new(look_ahead::Config::new(NodeId(i), s)).unwrap()
        })
        .collect();
    let (allocations, entries) = both_with(la, CsRequest::ONE, 30, 300, true);
    assert_eq!(entries, 300 * 5);
    assert_eq!(allocations, 0, "look-ahead");
    let ra = (0..5)
        .map(|i| {
            let s = ricart_agrawala::Settings::new(5, 100)
                .with_lease(1_000)
                .with_exclusion(3)
                .with_majority(true);
            ricart_agrawala::Node::new(ricart_agrawala::Config::new(NodeId(i), s)).unwrap()
        })
        .collect();
    let (allocations, entries) = both_with(ra, CsRequest::ONE, 30, 300, true);
    assert_eq!(entries, 300 * 5);
    assert_eq!(allocations, 0, "Ricart-Agrawala");
}
