//! The routed-mode simulation loop.

use std::collections::{HashSet, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

use super::check::Host;
use super::{Algorithm, RoutedConfig, Unreachable};
use crate::waypoint::{RouteCache, Waypoint};
use crate::{busy, EventQueue, Metrics, Time, Violation};
use manet_mutex::fence::Fences;
use manet_mutex::{look_ahead, ricart_agrawala, Action, CsRequest, Event, NodeId, Status};

#[derive(Debug, Clone)]
enum Ev<M> {
    /// A message reaches `to`.
    Deliver {
        from: NodeId,
        to: NodeId,
        msg: M,
    },
    /// A parked message is routed again.
    Retry {
        from: NodeId,
        to: NodeId,
        msg: M,
    },
    Timer {
        host: NodeId,
        timer: manet_mutex::TimerId,
    },
    Arrival(NodeId),
    CsEnd(NodeId),
    Fail(NodeId),
    Recover(NodeId),
    ModeStart(NodeId),
    ModeEnd(NodeId),
}

/// What a successful run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Counters over the whole run, drain included.
    pub metrics: Metrics,
    /// Messages lost (in transit, to or from an unreachable or failed host).
    pub lost: u64,
    /// Messages that found a route when sent (`metrics.hops` counts their hops).
    pub routed: u64,
    /// Peer input the nodes ignored (stale, duplicate or unexpected messages).
    pub anomalies: u64,
    /// The whole run, if [`RoutedConfig::record`] was set.
    pub recording: Option<crate::trace::Recording>,
}

struct World<H: Host> {
    cfg: RoutedConfig,
    rng: ChaCha8Rng,
    q: EventQueue<Ev<H::Message>>,
    nodes: Vec<H>,
    mobility: Mobility,
    rates: Vec<f64>,
    up: Vec<bool>,
    dozing: Vec<bool>,
    away: Vec<bool>,
    requested_at: Vec<Option<Time>>,
    cancelled: HashSet<(NodeId, manet_mutex::TimerId)>,
    draining: bool,
    metrics: Metrics,
    lost: u64,
    routed: u64,
    anomalies: u64,
    /// The protected resource: every entry's fence must be above the last.
    fences: Fences,
    trace: VecDeque<(Time, Ev<H::Message>)>,
    /// The run so far, with [`RoutedConfig::record`], and the territory's side that scales
    /// positions into the page's unit square.
    recorder: Option<(crate::trace::Recorder, f64)>,
    /// The instant of the positions recorded last.
    moved_at: Option<Time>,
    /// Routes at the current instant (see [`RouteCache`]).
    routes: RouteCache,
    /// Changes whenever `up` or `away` does, so cached routes know when to go.
    live_generation: u64,
}

/// Run `cfg` with the given algorithm.
pub fn run_algorithm(algorithm: Algorithm, cfg: &RoutedConfig) -> Result<Report, Violation> {
    match algorithm {
        Algorithm::LookAhead => run::<look_ahead::Node>(cfg),
        Algorithm::RicartAgrawala => run::<ricart_agrawala::Node>(cfg),
    }
}

/// Run `cfg` with host type `H`: the main phase, then the drain.
pub fn run<H: Host>(cfg: &RoutedConfig) -> Result<Report, Violation> {
    let started = std::time::Instant::now();
    let mut w = World::<H>::new(cfg)?;
    if let Err(mut v) = w.main_phase().and_then(|()| w.drain()) {
        if let Some((mut r, _)) = w.recorder.take() {
            r.violation(v.message.clone());
            v.recording = Some(Box::new(r.finish()));
        }
        return Err(v);
    }
    w.metrics.sim_time = w.q.now();
    w.metrics.wall_seconds = started.elapsed().as_secs_f64();
    Ok(Report {
        metrics: w.metrics,
        lost: w.lost,
        routed: w.routed,
        anomalies: w.anomalies,
        recording: w.recorder.map(|(r, _)| r.finish()),
    })
}

/// Where the hosts are: the random-waypoint model, or an ns-2 trace replayed.
enum Mobility {
    Waypoint(Box<Waypoint>),
    Trace(std::sync::Arc<crate::ns2::Trace>),
}

impl Mobility {
    fn positions(&mut self, t: Time) -> Vec<crate::waypoint::Point> {
        match self {
            Mobility::Waypoint(w) => w.positions(t),
            Mobility::Trace(trace) => trace.positions(t),
        }
    }
}

fn exp(rng: &mut ChaCha8Rng, rate: f64) -> f64 {
    match Exp::new(rate) {
        Ok(d) if rate > 0.0 => d.sample(rng),
        _ => f64::INFINITY,
    }
}

impl<H: Host> World<H> {
    fn new(cfg: &RoutedConfig) -> Result<Self, Violation> {
        let n = cfg.hosts;
        if let Some(trace) = cfg.trace.as_ref().filter(|t| t.nodes() != n as usize) {
            return Err(Violation {
                seed: cfg.seed,
                time: 0.0,
                message: format!(
                    "bad configuration: the mobility trace has {} nodes, the run {n} hosts",
                    trace.nodes()
                ),
                trace: Vec::new(),
                recording: None,
            });
        }
        let ms = (cfg.retransmit_after * 1000.0).round().max(1.0) as u64;
        let mut nodes = Vec::new();
        for i in 0..n {
            let node = H::create(NodeId(i), n, cfg.seed, ms).map_err(|e| Violation {
                seed: cfg.seed,
                time: 0.0,
                message: format!("bad configuration: {e}"),
                trace: Vec::new(),
                recording: None,
            })?;
            nodes.push(node);
        }
        let mut w = World {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            q: EventQueue::new(),
            mobility: match &cfg.trace {
                Some(trace) => Mobility::Trace(trace.clone()),
                None => Mobility::Waypoint(Box::new(Waypoint::new(
                    n,
                    cfg.mobility,
                    cfg.seed ^ 0x05EE_D0F0_B11E,
                ))),
            },
            rates: cfg.load.rates(n, cfg.lambda),
            up: vec![true; n as usize],
            dozing: vec![false; n as usize],
            away: vec![false; n as usize],
            requested_at: vec![None; n as usize],
            cancelled: HashSet::new(),
            draining: false,
            metrics: Metrics::default(),
            lost: 0,
            routed: 0,
            anomalies: 0,
            fences: Fences::new(),
            trace: VecDeque::new(),
            recorder: None,
            moved_at: None,
            routes: RouteCache::new(),
            live_generation: 0,
            nodes,
            cfg: cfg.clone(),
        };
        for i in 0..n {
            let h = NodeId(i);
            let t = exp(&mut w.rng, w.rates[i as usize]);
            w.q.schedule(t, Ev::Arrival(h));
            if let Some(f) = w.cfg.failures {
                let up = f.mean_down * (1.0 - f.fraction) / f.fraction.max(1e-9);
                let t = exp(&mut w.rng, 1.0 / up.max(1e-9));
                w.q.schedule(t, Ev::Fail(h));
            }
            if let (true, Some(m)) = (H::MODES, w.cfg.modes) {
                let t = exp(&mut w.rng, m.rate);
                w.q.schedule(t, Ev::ModeStart(h));
            }
        }
        if cfg.record {
            // At time 0 no host has finished its first pause: no random draw happens here,
            // so a recorded run is the same run.
            let at_start = w.mobility.positions(0.0);
            let side = at_start
                .iter()
                .fold(cfg.mobility.side, |m, p| m.max(p.0).max(p.1))
                .max(1e-9);
            let positions = at_start.iter().map(|p| (p.0 / side, p.1 / side)).collect();
            let views = w.nodes.iter().map(crate::trace::Visible::view).collect();
            let name = w.nodes.first().map_or(String::new(), |n| n.algorithm());
            let r = crate::trace::Recorder::new(&name, positions, Vec::new(), views)
                .with_radius(cfg.mobility.radius / side);
            w.recorder = Some((r, side));
        }
        Ok(w)
    }

    fn violation(&self, message: String) -> Violation {
        Violation {
            seed: self.cfg.seed,
            time: self.q.now(),
            message,
            trace: self
                .trace
                .iter()
                .map(|(t, ev)| format!("t={t:.4} {ev:?}"))
                .collect(),
            recording: None,
        }
    }

    fn main_phase(&mut self) -> Result<(), Violation> {
        while self.metrics.cs_entries < self.cfg.target_entries {
            match self.q.peek_time() {
                Some(t) if t <= self.cfg.max_time => self.step()?,
                _ => break,
            }
        }
        Ok(())
    }

    /// Stop new requests, failures, loss and mode changes, bring everyone back, and run until
    /// every host is in its remainder section.
    fn drain(&mut self) -> Result<(), Violation> {
        self.draining = true;
        self.cfg.loss = 0.0;
        for i in 0..self.nodes.len() {
            let h = NodeId(i as u32);
            if !self.up[i] {
                self.recover(h)?;
            }
            self.end_mode(h)?;
        }
        let deadline = self.q.now() + self.cfg.drain_time;
        while busy(&self.nodes).next().is_some() {
            match self.q.peek_time() {
                Some(t) if t <= deadline => self.step()?,
                _ => {
                    let stuck: Vec<String> = busy(&self.nodes).map(|n| format!("{n:?}")).collect();
                    return Err(self.violation(format!(
                        "starvation: hosts still not served after the drain: {}",
                        stuck.join("; ")
                    )));
                }
            }
        }
        Ok(())
    }

    fn step(&mut self) -> Result<(), Violation> {
        let Some((now, ev)) = self.q.pop() else {
            return Ok(());
        };
        self.metrics.events += 1;
        if self.cfg.trace_len > 0 {
            if self.trace.len() == self.cfg.trace_len {
                self.trace.pop_front();
            }
            self.trace.push_back((now, ev.clone()));
        }
        self.dispatch(ev)?;
        if self.cfg.check_invariants {
            H::check_safety(&self.nodes).map_err(|e| self.violation(e.to_string()))?;
        }
        Ok(())
    }

    fn reachable(&self, h: NodeId) -> bool {
        self.up[h.index()] && !self.away[h.index()]
    }

    fn dispatch(&mut self, ev: Ev<H::Message>) -> Result<(), Violation> {
        match ev {
            Ev::Deliver { from, to, msg } => {
                if self.reachable(to) {
                    self.feed(to, Event::Receive { from, msg })?;
                } else {
                    self.lost += 1;
                    if let Some((r, _)) = &mut self.recorder {
                        r.lost_oldest(from.0, to.0, self.q.now());
                    }
                }
            }
            Ev::Retry { from, to, msg } => self.route(from, to, msg),
            Ev::Timer { host, timer } => {
                if !self.cancelled.remove(&(host, timer)) {
                    self.feed(host, Event::Timeout(timer))?;
                }
            }
            Ev::Arrival(h) => self.arrival(h)?,
            Ev::CsEnd(h) => {
                self.feed(h, Event::Release)?;
                if !self.draining {
                    let t = exp(&mut self.rng, self.rates[h.index()]);
                    self.q.schedule(t, Ev::Arrival(h));
                }
            }
            Ev::Fail(h) => {
                if !self.draining && self.up[h.index()] {
                    self.up[h.index()] = false;
                    self.live_generation += 1;
                    let down = self.cfg.failures.map_or(1.0, |f| f.mean_down);
                    let t = exp(&mut self.rng, 1.0 / down.max(1e-9));
                    self.q.schedule(t, Ev::Recover(h));
                }
            }
            Ev::Recover(h) => {
                if !self.up[h.index()] {
                    self.recover(h)?;
                }
            }
            Ev::ModeStart(h) => self.start_mode(h)?,
            Ev::ModeEnd(h) => self.end_mode(h)?,
        }
        Ok(())
    }

    fn arrival(&mut self, h: NodeId) -> Result<(), Violation> {
        if self.draining {
            return Ok(());
        }
        let i = h.index();
        let idle = self.nodes[i].status() == Status::Remainder;
        if idle && self.up[i] && !self.dozing[i] && !self.away[i] {
            self.requested_at[i] = Some(self.q.now());
            self.feed(h, Event::Request(CsRequest::ONE))
        } else {
            // Busy, asleep or away: this arrival is lost; the process goes on.
            let t = exp(&mut self.rng, self.rates[i]);
            self.q.schedule(t, Ev::Arrival(h));
            Ok(())
        }
    }

    fn recover(&mut self, h: NodeId) -> Result<(), Violation> {
        self.up[h.index()] = true;
        self.live_generation += 1;
        if let Some(f) = self.cfg.failures {
            if H::MODES && f.reconnect && !self.away[h.index()] && !self.dozing[h.index()] {
                self.feed(h, Event::Reconnect)?;
            }
            if !self.draining {
                let up = f.mean_down * (1.0 - f.fraction) / f.fraction.max(1e-9);
                let t = exp(&mut self.rng, 1.0 / up.max(1e-9));
                self.q.schedule(t, Ev::Fail(h));
            }
        }
        Ok(())
    }

    fn start_mode(&mut self, h: NodeId) -> Result<(), Violation> {
        let Some(m) = self.cfg.modes else {
            return Ok(());
        };
        if self.draining {
            return Ok(());
        }
        let i = h.index();
        let idle = self.nodes[i].status() == Status::Remainder;
        if idle && self.up[i] && !self.dozing[i] && !self.away[i] {
            if self.rng.random::<bool>() {
                self.dozing[i] = true;
                self.feed(h, Event::Doze)?;
            } else {
                self.feed(h, Event::Disconnect)?;
                self.away[i] = true;
                self.live_generation += 1;
            }
            let t = exp(&mut self.rng, 1.0 / m.mean_duration.max(1e-9));
            self.q.schedule(t, Ev::ModeEnd(h));
        } else {
            let t = exp(&mut self.rng, m.rate);
            self.q.schedule(t, Ev::ModeStart(h));
        }
        Ok(())
    }

    fn end_mode(&mut self, h: NodeId) -> Result<(), Violation> {
        let i = h.index();
        if self.dozing[i] {
            self.dozing[i] = false;
            self.feed(h, Event::Wake)?;
        } else if self.away[i] {
            self.away[i] = false;
            self.live_generation += 1;
            self.feed(h, Event::Reconnect)?;
        } else {
            return Ok(());
        }
        if let (false, Some(m)) = (self.draining, self.cfg.modes) {
            let t = exp(&mut self.rng, m.rate);
            self.q.schedule(t, Ev::ModeStart(h));
        }
        Ok(())
    }

    /// Hand `event` to host `h` and carry out its actions.
    fn feed(&mut self, h: NodeId, event: Event<H::Message>) -> Result<(), Violation> {
        let now = self.q.now();
        if let Some((r, _)) = &mut self.recorder {
            r.begin_event(now, h.0, &event);
        }
        let result = self.nodes[h.index()]
            .handle(event)
            .map(|a| a.collect::<Vec<Action<H::Message>>>());
        if let Some((r, _)) = &mut self.recorder {
            r.end_step(crate::trace::Visible::view(&self.nodes[h.index()]));
        }
        let actions = match result {
            Ok(a) => a,
            Err(e) => return Err(self.violation(format!("{h:?} rejected a simulator event: {e}"))),
        };
        for a in actions {
            match a {
                Action::Send { to, msg } => {
                    self.metrics.messages += 1;
                    let id = self
                        .recorder
                        .as_mut()
                        .map(|(r, _)| r.send(to.0, format!("{msg:?}")));
                    let lost = self.lost;
                    self.route(h, to, msg);
                    if let (Some((r, _)), Some(id)) = (&mut self.recorder, id) {
                        if self.lost > lost {
                            r.lost(id, now);
                        }
                    }
                }
                Action::EnterCritical { fence, .. } => {
                    if let Err(highest) = self.fences.admit(fence) {
                        return Err(self.violation(format!(
                            "{h:?} entered with {fence:?}, not above {highest}"
                        )));
                    }
                    let asked = self.requested_at[h.index()].take().unwrap_or(self.q.now());
                    self.metrics.entered(self.q.now() - asked, CsRequest::ONE);
                    self.q.schedule(self.cfg.cs_duration, Ev::CsEnd(h));
                }
                Action::SetTimer { timer, after } => {
                    self.q
                        .schedule(after as f64 / 1000.0, Ev::Timer { host: h, timer });
                }
                Action::CancelTimer { timer } => {
                    self.cancelled.insert((h, timer));
                }
                Action::Anomaly { .. } => self.anomalies += 1,
                other => {
                    return Err(self.violation(format!(
                        "{h:?} returned an action this simulator does not know: {other:?}"
                    )))
                }
            }
        }
        if let Some((r, side)) = &mut self.recorder {
            // Where the hosts are, when routing has just placed them (so recording draws
            // nothing the run would not), once per instant.
            if let Some((_, pos)) = self.routes.positions().filter(|&(at, _)| at == now) {
                if self.moved_at != Some(now) {
                    self.moved_at = Some(now);
                    r.moved(pos.iter().map(|p| (p.0 / *side, p.1 / *side)).collect());
                }
            }
        }
        Ok(())
    }

    /// Route a message over the current topology.
    fn route(&mut self, from: NodeId, to: NodeId, msg: H::Message) {
        let (f, t) = (from.index(), to.index());
        if t >= self.nodes.len() || !self.reachable(from) {
            self.lost += 1;
            return;
        }
        // Positions at most once per instant (so the waypoint model draws exactly as when they
        // were computed per message), routes per source and instant.
        let now = self.q.now();
        let (up, away, mobility) = (&self.up, &self.away, &mut self.mobility);
        let mut hops = self.routes.hops(
            now,
            || mobility.positions(now),
            self.cfg.mobility.radius,
            self.live_generation,
            |i| up[i] && !away[i],
            f,
            t,
        );
        if hops.is_none() && self.draining && matches!(self.mobility, Mobility::Trace(_)) {
            // A replayed trace ends, and a partition it ends in would last for ever: the
            // drain reaches such hosts in one hop (see `RoutedConfig::trace`).
            hops = Some(1);
        }
        match hops {
            Some(hops) => {
                self.routed += 1;
                self.metrics.hops += u64::from(hops);
                if self.rng.random::<f64>() < self.cfg.loss {
                    self.lost += 1;
                } else {
                    let delay = f64::from(hops) * self.cfg.hop_delay;
                    self.q.schedule(delay, Ev::Deliver { from, to, msg });
                }
            }
            None => match self.cfg.unreachable {
                Unreachable::Park { retry } => {
                    self.q
                        .schedule(retry.max(1e-3), Ev::Retry { from, to, msg });
                }
                Unreachable::Drop => self.lost += 1,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ns2::Trace;
    use std::sync::Arc;

    /// Three hosts standing in a line 150 m apart (radius 200 m): a message between the ends
    /// takes 2 hops, any other 1, so a run's mean hops per routed message lies strictly
    /// between 1 and 1.5 (each host sends to both others). All three within range of each
    /// other: exactly 1. The random-waypoint model would give neither.
    fn hops_per_message(spacing: f64, algorithm: Algorithm) -> f64 {
        let text: String = (0..3)
            .map(|i| {
                format!(
                    "$node_({i}) set X_ {}\n$node_({i}) set Y_ 0\n",
                    i as f64 * spacing
                )
            })
            .collect();
        let mut cfg = RoutedConfig::paper(3, 0.5, 1.0, 9);
        cfg.trace = Some(Arc::new(Trace::parse(&text).unwrap()));
        cfg.loss = 0.0;
        cfg.target_entries = 200;
        cfg.max_time = 10_000.0;
        let report = run_algorithm(algorithm, &cfg).unwrap();
        assert!(report.metrics.cs_entries >= 200 && report.lost == 0);
        report.metrics.hops as f64 / report.routed as f64
    }

    #[test]
    fn routes_follow_the_replayed_positions() {
        for algorithm in [Algorithm::LookAhead, Algorithm::RicartAgrawala] {
            let line = hops_per_message(150.0, algorithm);
            assert!(line > 1.2 && line < 1.5, "{algorithm:?}: {line}");
            assert_eq!(hops_per_message(90.0, algorithm), 1.0);
        }
    }

    #[test]
    fn a_trace_of_the_wrong_size_is_a_configuration_error() {
        let mut cfg = RoutedConfig::paper(4, 0.5, 1.0, 1);
        cfg.trace = Some(Arc::new(Trace::parse("$node_(1) set X_ 1").unwrap()));
        let e = run_algorithm(Algorithm::LookAhead, &cfg).unwrap_err();
        assert!(e.message.contains("2 nodes"), "{e}");
    }
}
