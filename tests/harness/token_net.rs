//! A whole token network driven one step at a time, shared by the model checker
//! (`tests/model_*.rs`) and the fuzz bodies (`tests/harness/*_network.rs`, also compiled into
//! `fuzz/`). Unlike the simulator it has no clock: the caller chooses every step, so a model
//! checker can branch on each one and a fuzzer can pick them from its input.
//!
//! The network follows the token algorithms' driving contract: FIFO per directed link (only the
//! head of a channel can be delivered), a link fails only when nothing is in flight on it and
//! both ends learn it in the same step, and — as in the paper's mobility model — a failure never
//! disconnects the graph, so every waiting node can still be served.

use manet_mutex::sim::{busy, Channels, Graph, TokenAlgorithm};
use manet_mutex::{Action, CsRequest, Event, NodeId, Status};

/// Nodes, messages in flight, the current topology, and the first contract breach seen (a send
/// to a non-neighbour, or a valid event rejected): once set, the network stops changing.
#[derive(Clone, Debug)]
pub struct Net<P: TokenAlgorithm> {
    pub nodes: Vec<P>,
    pub channels: Channels<P::Msg>,
    pub graph: Graph,
    pub fault: Option<String>,
    /// The events applied and what they produced, when tracing (`MANET_MUTEX_TRACE=1`).
    pub trace: Option<Vec<String>>,
}

impl<P: TokenAlgorithm> Net<P> {
    pub fn new(graph: Graph, params: &P::Params) -> Result<Self, String> {
        let nodes = P::build(&graph, params).map_err(|e| format!("cannot build: {e}"))?;
        Ok(Net {
            nodes,
            channels: Channels::default(),
            graph,
            fault: None,
            trace: std::env::var_os("MANET_MUTEX_TRACE").map(|_| Vec::new()),
        })
    }

    /// Feed `event` to `at` and carry out its sends.
    pub fn apply(&mut self, at: NodeId, event: Event<P::Msg>) {
        if self.fault.is_some() {
            return;
        }
        let described = self.trace.is_some().then(|| format!("{at:?} <- {event:?}"));
        let outcome = self.nodes[at.index()]
            .handle(event)
            .map(|actions| actions.collect::<Vec<_>>());
        if let (Some(trace), Some(event)) = (&mut self.trace, described) {
            trace.push(format!("{event}\n     -> {outcome:?}"));
        }
        let actions = match outcome {
            Ok(actions) => actions,
            Err(e) => {
                self.fault = Some(format!("{at:?} rejected a valid event: {e}"));
                return;
            }
        };
        for action in actions {
            if let Action::Send { to, msg } = action {
                if !self.graph.has(at, to) {
                    self.fault = Some(format!("{at:?} sent {msg:?} to non-neighbour {to:?}"));
                    return;
                }
                self.channels.push(at, to, msg);
            }
        }
    }

    /// The trace, if one was kept (`MANET_MUTEX_TRACE=1`), for a failure message.
    pub fn trace_text(&self) -> String {
        match &self.trace {
            Some(trace) => trace.join("\n"),
            None => "(set MANET_MUTEX_TRACE=1 for the trace)".into(),
        }
    }

    pub fn status(&self, node: NodeId) -> Status {
        self.nodes[node.index()].status()
    }

    pub fn request(&mut self, node: NodeId, request: CsRequest) {
        self.apply(node, Event::Request(request));
    }

    pub fn release(&mut self, node: NodeId) {
        self.apply(node, Event::Release);
    }

    /// The directed links with a message in flight, in a fixed (sorted) order.
    pub fn busy_links(&self) -> Vec<(NodeId, NodeId)> {
        let mut links: Vec<_> = self.channels.iter().map(|(f, t, _)| (f, t)).collect();
        links.dedup();
        links
    }

    /// Deliver the oldest message on `from → to`, if any.
    pub fn deliver(&mut self, from: NodeId, to: NodeId) {
        if let Some(msg) = self.channels.pop(from, to) {
            self.apply(to, Event::Receive { from, msg });
        }
    }

    /// Links that may fail now: idle in both directions and not bridges.
    pub fn removable_links(&self) -> Vec<(NodeId, NodeId)> {
        let mut links: Vec<_> = self
            .graph
            .edges()
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .filter(|&(a, b)| {
                self.channels.idle(a, b) && self.graph.is_connected_without(Some((a, b)))
            })
            .collect();
        links.sort_unstable();
        links
    }

    /// Pairs of nodes that are not linked, in a fixed order.
    pub fn absent_links(&self) -> Vec<(NodeId, NodeId)> {
        let n = self.nodes.len() as u32;
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (NodeId(a), NodeId(b))))
            .filter(|&(a, b)| !self.graph.has(a, b))
            .collect()
    }

    /// The link fails; both ends are told in this one step.
    pub fn fail(&mut self, a: NodeId, b: NodeId) {
        self.graph.remove(a, b);
        self.apply(a, Event::LinkDown(b));
        self.apply(b, Event::LinkDown(a));
    }

    /// A link forms; both ends are told in this one step.
    pub fn form(&mut self, a: NodeId, b: NodeId) {
        self.graph.add(a, b);
        self.apply(a, Event::LinkUp(b));
        self.apply(b, Event::LinkUp(a));
    }

    /// The algorithm's safety invariants, plus the contract breaches recorded by `apply`.
    pub fn check_safety(&self) -> Result<(), String> {
        match &self.fault {
            Some(fault) => Err(fault.clone()),
            None => P::check_safety(&self.nodes, &self.channels),
        }
    }

    fn anyone_busy(&self) -> bool {
        busy(&self.nodes).next().is_some()
    }

    /// Liveness as a check on one state: with no further requests or link changes, deliver
    /// every channel's head in a fixed round-robin order (fair, so a token circulating between
    /// two KRLF nodes cannot starve a third channel) and release every node in the critical
    /// section, for at most `rounds` rounds. Every waiting node must have entered by then, and
    /// the algorithm's drained-state checks must hold (for KRL: quiet, with a token-oriented
    /// DAG). Safety is checked after every round.
    pub fn drain(&self, rounds: usize) -> Result<(), String> {
        let mut net = self.clone();
        net.drain_here(rounds)
            .map_err(|e| format!("{e}\n{}", net.trace_text()))
    }

    fn drain_here(&mut self, rounds: usize) -> Result<(), String> {
        let net = self;
        for _ in 0..rounds {
            if !net.anyone_busy() {
                if net.channels.is_empty() {
                    break;
                }
                // Every request is served. An algorithm that never goes quiet (KRLF keeps
                // idle tokens moving) accepts this state as drained; KRL must go quiet first.
                if P::check_drained(&net.nodes, &net.channels, false).is_ok() {
                    return Ok(());
                }
            }
            for i in 0..net.nodes.len() {
                let node = NodeId(i as u32);
                if net.status(node) == Status::Critical {
                    net.release(node);
                }
            }
            for (from, to) in net.busy_links() {
                net.deliver(from, to);
            }
            net.check_safety()?;
        }
        if net.anyone_busy() {
            let stuck: Vec<_> = busy(&net.nodes).map(|n| (n.id(), n.status())).collect();
            return Err(format!("starvation: {stuck:?} after {rounds} drain rounds"));
        }
        P::check_drained(&net.nodes, &net.channels, net.channels.is_empty())
    }
}
