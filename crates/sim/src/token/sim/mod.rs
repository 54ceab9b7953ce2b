//! The token simulator's loop: its events, in time order, until the run has drained and
//! settled. The nodes' actions are carried out in `deliver`, the safety checks are in
//! `checks`, link changes in `mobility`, crashes and partitions in `faults`, and the cache
//! look-ahead in `lookahead`.

mod checks;
mod deliver;
mod faults;
mod lookahead;
mod mobility;

use std::collections::{BTreeSet, VecDeque};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

use super::{Channels, Config, Outcome, Params, TokenAlgorithm};
use crate::link::LinkModel;
use crate::trace::Recorder;
use crate::{EventQueue, Failure, Graph, Metrics, Time};
use manet_mutex::fence::Fences;
use manet_mutex::{Action, CsRequest, Event, Fence, NodeId, Status, TimerId};

#[derive(Debug, Clone, Copy)]
enum SimEvent {
    /// The oldest message on a link ([`Channels::open`]'s id) arrives at `to`.
    Deliver {
        link: u32,
        to: NodeId,
    },
    /// A timer a node set expires (cancellations are not tracked: nodes ignore stale expiries).
    /// The node's incarnation when it set it: a crash voids it.
    Timeout {
        node: NodeId,
        timer: TimerId,
        incarnation: u32,
    },
    /// A request of a node's incarnation (`faults::ANY`: of whichever is up).
    Request(NodeId, u32),
    /// The end of a critical section of a node's incarnation.
    Release(NodeId, u32),
    Mobility,
    /// The next change of [`Config::replay`].
    Replay,
    /// A replayed failure of a link that was busy when it was due: try again.
    RetryDown(NodeId, NodeId),
    EndOfLoad,
    /// A host may crash ([`crate::token::Faults::crash_rate`]).
    Crash,
    /// A crashed host restarts.
    Restart(NodeId),
    /// The network may split in two.
    Partition,
    /// The standing partition ends.
    Merge,
}

impl SimEvent {
    /// The node this event is handed to, if one.
    fn node(&self) -> Option<NodeId> {
        match *self {
            SimEvent::Deliver { to: node, .. }
            | SimEvent::Timeout { node, .. }
            | SimEvent::Request(node, _)
            | SimEvent::Release(node, _) => Some(node),
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

struct Sim<P: TokenAlgorithm, L> {
    config: Config<Params<P::Settings>, L>,
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
    pending_down: BTreeSet<(NodeId, NodeId)>,
    /// The last events, as data (formatted only into a failure report).
    trace: VecDeque<(Time, NodeId, Event<P::Message>)>,
    /// With checks on: the nodes the current step handed an event to (maybe repeated).
    touched: Vec<NodeId>,
    /// The output buffer every node writes its actions into ([`manet_mutex::Protocol::handle_in`]):
    /// one burst's capacity for the whole network instead of one per node.
    out: Vec<Action<P::Message>>,
    /// With checks on: the sum of every node's and every in-flight message's tally.
    tally: P::Tally,
    /// Steps until the next full safety check.
    until_full_check: u64,
    /// The protected resource: per lane, every entry's fence must be above the last.
    fences: Fences,
    /// Per token id, the newest generation the protected resource admitted: a refusal is
    /// the fence rule at work only for an older generation than that.
    newest_generation: Vec<u32>,
    /// Entries the resource refused, not yet told to their node: `(node, fence, newest
    /// admitted)`, told (`Event::Refused`) when the event that entered is handled.
    refusals: Vec<(NodeId, Fence, Fence)>,
    /// Crashes and partitions, and the checks of recovery, in fault mode (`faults`).
    faults: Option<Box<faults::FaultState>>,
    /// The run so far, with [`Config::record`].
    recorder: Option<Recorder>,
    /// Whether to look ahead for the cache (`Sim::prefetch_upcoming`).
    prefetching: bool,
    /// The node of the heap's earliest event as last seen by `Sim::prefetch_upcoming`, and
    /// whether all its state has been asked for.
    heap_top: (Option<NodeId>, bool),
}

/// Run one simulation.
pub fn run<P: TokenAlgorithm>(
    config: Config<Params<P::Settings>, impl LinkModel>,
) -> Result<Outcome<P>, Failure> {
    let started = std::time::Instant::now();
    let mut sim = Sim::<P, _>::new(config)?;
    sim.metrics.build_seconds = started.elapsed().as_secs_f64();
    sim.start();
    if let Err(mut failure) = sim.run_to_end() {
        if let Some(mut r) = sim.recorder.take() {
            r.violation(failure.message.clone());
            failure.recording = Some(Box::new(r.finish()));
        }
        return Err(failure);
    }
    sim.metrics.wall_seconds = started.elapsed().as_secs_f64();
    Ok(Outcome {
        metrics: sim.metrics,
        nodes: sim.nodes,
        graph: sim.graph,
        recording: sim.recorder.map(Recorder::finish),
    })
}

fn exp_sample(rate: f64, rng: &mut ChaCha8Rng) -> Option<f64> {
    Exp::new(rate)
        .ok()
        .filter(|_| rate > 0.0 && rate.is_finite())
        .map(|e| e.sample(rng))
}

impl<P: TokenAlgorithm, L: LinkModel> Sim<P, L> {
    /// The network `config` describes, before its first event.
    fn new(mut config: Config<Params<P::Settings>, L>) -> Result<Self, Failure> {
        let nodes = P::build(&config.graph, &config.params).map_err(|e| {
            Failure::at_start(config.seed, format!("cannot build the network: {e}"))
        })?;
        let faults = faults::FaultState::new::<P, L>(&config)
            .map_err(|e| Failure::at_start(config.seed, e))?;
        let n = nodes.len();
        let mut tally = P::Tally::default();
        for node in &nodes {
            tally += node.tally();
        }
        // Messages of a fixed delay and critical sections take fixed times: FIFO lanes.
        let lanes: Vec<Time> = (config.link.fixed_delay().into_iter())
            .chain([config.workload.cs_duration])
            .collect();
        let mut sim = Sim {
            channels: Channels::for_graph(&config.graph),
            // The simulation changes its own copy; the configuration's is not read again.
            graph: std::mem::replace(&mut config.graph, Graph::empty(0)),
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            busy: crate::busy(&nodes).count(),
            nodes,
            queue: EventQueue::with_lanes(&lanes),
            metrics: Metrics::default(),
            requested_at: vec![None; n],
            usage: Usage {
                granted: vec![0; n],
                in_use: 0,
                since: 0.0,
            },
            loading: true,
            measuring: true,
            next_replay: 0,
            pending_down: BTreeSet::new(),
            trace: VecDeque::with_capacity(config.trace_len),
            touched: Vec::new(),
            out: Vec::new(),
            tally,
            until_full_check: 0,
            fences: Fences::new(),
            newest_generation: Vec::new(),
            refusals: Vec::new(),
            faults: faults.map(Box::new),
            recorder: None,
            prefetching: n >= config.prefetch_from,
            heap_top: (None, false),
            config,
        };
        if sim.config.record {
            sim.recorder = Some(sim.new_recorder());
        }
        Ok(sim)
    }

    /// A recorder of this network as it is now, drawn by a spring layout of its links.
    fn new_recorder(&self) -> Recorder {
        let links: Vec<(u32, u32)> = self.graph.edges().iter().map(|(a, b)| (a.0, b.0)).collect();
        let positions = crate::trace::spring_layout(self.nodes.len(), &links);
        let views = self.nodes.iter().map(|v| v.view()).collect();
        let name = self.nodes.first().map_or(String::new(), |v| v.algorithm());
        Recorder::new(&name, positions, links, views)
    }

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
            self.queue
                .schedule(at, SimEvent::Request(node, faults::ANY));
        }
        if let Some(first) = self.config.replay.first() {
            self.queue.schedule(first.time, SimEvent::Replay);
        }
        self.queue
            .schedule(self.config.duration, SimEvent::EndOfLoad);
        self.start_faults();
    }

    fn schedule_request(&mut self, node: NodeId) {
        if let Some(dt) = exp_sample(self.config.workload.lambda_req, &mut self.rng) {
            let incarnation = self.incarnation(node);
            self.queue
                .schedule(dt, SimEvent::Request(node, incarnation));
        }
    }

    /// A failed run now, with the last events.
    fn failure(&self, message: impl core::fmt::Display) -> Failure {
        let trace = self.trace.iter();
        let trace = trace.map(|(t, node, event)| format!("t={t:.3} {node:?} <- {event:?}"));
        Failure::new(self.config.seed, self.queue.now(), message, trace.collect())
    }

    /// The load phase and the drain, then the settling and the final checks.
    fn run_to_end(&mut self) -> Result<(), Failure> {
        self.load_and_drain()?;
        self.close_window();
        self.settle()?;
        self.final_checks()
    }

    /// Run until the load phase is over and nobody waits or is in the critical section.
    fn load_and_drain(&mut self) -> Result<(), Failure> {
        let end = self.config.duration + self.config.drain_limit;
        while let Some((time, event)) = self.queue.pop() {
            if time > end {
                let busy = self.busy();
                return Err(self.failure(format!(
                    "starvation: {busy:?} still waiting or in the critical section {} time units after requests stopped",
                    self.config.drain_limit
                )));
            }
            self.prefetch_upcoming();
            self.step(event)?;
            if !self.loading && self.busy == 0 {
                return Ok(());
            }
        }
        let busy = self.busy();
        if busy.is_empty() {
            return Ok(());
        }
        Err(self.failure(format!("deadlock: {busy:?} waiting with no event left")))
    }

    /// The measurement window closes: every request issued has been served.
    fn close_window(&mut self) {
        self.metrics.sim_time = self.queue.now();
        self.metrics.raises = self.nodes.iter().map(P::raises).sum();
        self.measuring = false;
        let now = self.queue.now();
        if let Some(r) = &mut self.recorder {
            r.end_window(now, self.config.record_all);
        }
    }

    /// Let the protocol deliver what is in flight, unmeasured (bounded: KRLF circulates
    /// tokens forever).
    fn settle(&mut self) -> Result<(), Failure> {
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
        Ok(())
    }

    /// The nodes waiting or in the critical section (for a report: it scans every node).
    fn busy(&self) -> Vec<NodeId> {
        crate::busy(&self.nodes).map(|n| n.id()).collect()
    }

    fn step(&mut self, event: SimEvent) -> Result<(), Failure> {
        self.metrics.events += 1;
        match event {
            // Link changes stop with the load phase: such a step changes nothing to check.
            SimEvent::Mobility | SimEvent::Replay if !self.loading => return Ok(()),
            // What a crashed host scheduled before it crashed does not happen.
            SimEvent::Timeout {
                node, incarnation, ..
            }
            | SimEvent::Request(node, incarnation)
            | SimEvent::Release(node, incarnation)
                if !self.is_current(node, incarnation) =>
            {
                return Ok(())
            }
            SimEvent::Deliver { link, .. } => self.arrive(link)?,
            SimEvent::Timeout { node, timer, .. } => self.deliver(node, Event::Timeout(timer))?,
            SimEvent::Request(node, _) => self.request(node)?,
            SimEvent::Release(node, _) => self.release(node)?,
            SimEvent::Mobility => self.mobility()?,
            SimEvent::Replay => self.replay()?,
            SimEvent::RetryDown(a, b) => self.retry_down(a, b)?,
            SimEvent::EndOfLoad => self.end_load()?,
            SimEvent::Crash => self.crash_due()?,
            SimEvent::Restart(node) => self.restart(node)?,
            SimEvent::Partition => self.partition_due()?,
            SimEvent::Merge => self.merge()?,
        }
        if self.config.check_every_step {
            self.check_step()?;
        }
        Ok(())
    }

    /// Whether an event of `node`'s incarnation `incarnation` still concerns it: always
    /// without faults.
    fn is_current(&self, node: NodeId, incarnation: u32) -> bool {
        self.faults
            .as_ref()
            .is_none_or(|f| f.current(node, incarnation))
    }

    /// The oldest message on `link` arrives (unless a fault destroyed it).
    fn arrive(&mut self, link: u32) -> Result<(), Failure> {
        if self.faults.as_mut().is_some_and(|f| f.lost_delivery(link)) {
            return Ok(());
        }
        let Some((from, to, msg)) = self.channels.pop_on(link) else {
            let (from, to) = self.channels.ends(link);
            return Err(self.failure(format!("delivery on empty link {from:?}->{to:?}")));
        };
        if self.config.check_every_step {
            self.tally -= P::message_tally(&self.config.params.settings, &msg);
        }
        self.deliver(to, Event::Receive { from, msg })
    }

    /// A Poisson request: asked in the load phase of a node in its remainder section.
    fn request(&mut self, node: NodeId) -> Result<(), Failure> {
        if !(self.loading && self.nodes[node.index()].status() == Status::Remainder) {
            return Ok(());
        }
        let request = self.config.workload.request(&mut self.rng);
        self.requested_at[node.index()] = Some((self.queue.now(), request));
        self.deliver(node, Event::Request(request))
    }

    /// The end of a critical section, and in the load phase the node's next request.
    fn release(&mut self, node: NodeId) -> Result<(), Failure> {
        self.usage
            .change(&mut self.metrics, node, 0, self.queue.now());
        self.stop_acting(node, None).map_err(|m| self.failure(m))?;
        self.deliver(node, Event::Release)?;
        if self.loading {
            self.schedule_request(node);
        }
        Ok(())
    }
}
