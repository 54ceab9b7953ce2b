//! The routed-mode simulation loop.

use std::collections::{HashSet, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

use super::check::{Host, HostParams};
use super::network::Network;
use super::RoutedConfig;
use crate::link::{LinkModel, Transit};
use crate::{busy, Algorithm, EventQueue, Failure, Metrics, Time};
use manet_mutex::fence::Fences;
use manet_mutex::{
    look_ahead, ricart_agrawala, Action, CsRequest, Event, Fence, NodeId, Status, TimerId,
};

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
        timer: TimerId,
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
    /// Counters over the whole run, drain included (the anomalies the hosts reported among
    /// them).
    pub metrics: Metrics,
    /// Messages lost (in transit, to or from an unreachable or failed host).
    pub lost: u64,
    /// Messages that found a route when sent (`metrics.hops` counts their hops).
    pub routed: u64,
    /// The whole run, if [`RoutedConfig::record`] was set.
    pub recording: Option<crate::trace::Recording>,
}

struct World<H: Host> {
    cfg: RoutedConfig,
    rng: ChaCha8Rng,
    q: EventQueue<Ev<H::Message>>,
    nodes: Vec<H>,
    /// How messages travel, and which hosts are up and present.
    net: Network,
    rates: Vec<f64>,
    dozing: Vec<bool>,
    requested_at: Vec<Option<Time>>,
    cancelled: HashSet<(NodeId, TimerId)>,
    draining: bool,
    metrics: Metrics,
    lost: u64,
    routed: u64,
    /// The protected resource: every entry's fence must be above the last.
    fences: Fences,
    trace: VecDeque<(Time, Ev<H::Message>)>,
    /// The run so far, with [`RoutedConfig::record`], and the territory's side that scales
    /// positions into the page's unit square.
    recorder: Option<(crate::trace::Recorder, f64)>,
    /// The instant of the positions recorded last.
    moved_at: Option<Time>,
}

/// Run `cfg` with the given algorithm (one the routed simulator runs,
/// [`crate::Simulator::Routed`]; any other is a configuration error).
pub fn run_algorithm(algorithm: Algorithm, cfg: &RoutedConfig) -> Result<Report, Failure> {
    match algorithm {
        Algorithm::LookAhead => run::<look_ahead::Node>(cfg),
        Algorithm::RicartAgrawala => run::<ricart_agrawala::Node>(cfg),
        other => Err(Failure::at_start(
            cfg.seed,
            format!(
                "bad configuration: {} runs on the token simulator",
                other.name()
            ),
        )),
    }
}

/// Run `cfg` with host type `H`: the main phase, then the drain.
pub fn run<H: Host>(cfg: &RoutedConfig) -> Result<Report, Failure> {
    let started = std::time::Instant::now();
    let mut w = World::<H>::new(cfg)?;
    if let Err(mut failure) = w.main_phase().and_then(|()| w.drain()) {
        if let Some((mut r, _)) = w.recorder.take() {
            r.violation(failure.message.clone());
            failure.recording = Some(Box::new(r.finish()));
        }
        return Err(failure);
    }
    w.metrics.sim_time = w.q.now();
    if let Some((r, _)) = &mut w.recorder {
        // The drain is measured: the window ends with the run.
        r.end_window(w.metrics.sim_time, false);
    }
    w.metrics.wall_seconds = started.elapsed().as_secs_f64();
    Ok(Report {
        metrics: w.metrics,
        lost: w.lost,
        routed: w.routed,
        recording: w.recorder.map(|(r, _)| r.finish()),
    })
}

fn exp(rng: &mut ChaCha8Rng, rate: f64) -> f64 {
    match Exp::new(rate) {
        Ok(d) if rate > 0.0 => d.sample(rng),
        _ => f64::INFINITY,
    }
}

/// The mean time a host stays up between failures, for a down `fraction` of the time.
fn mean_up(f: &super::Failures) -> f64 {
    f.mean_down * (1.0 - f.fraction) / f.fraction.max(1e-9)
}

impl<H: Host> World<H> {
    fn new(cfg: &RoutedConfig) -> Result<Self, Failure> {
        let n = cfg.hosts;
        if let Some(trace) = cfg.trace.as_ref().filter(|t| t.nodes() != n as usize) {
            return Err(Failure::at_start(
                cfg.seed,
                format!(
                    "bad configuration: the mobility trace has {} nodes, the run {n} hosts",
                    trace.nodes()
                ),
            ));
        }
        let ms = (cfg.retransmit_after * 1000.0).round().max(1.0) as u64;
        let nodes = H::build(&n, &HostParams::new(cfg.seed, ms))
            .map_err(|e| Failure::at_start(cfg.seed, format!("bad configuration: {e}")))?;
        let mut w = World {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            q: EventQueue::new(),
            net: Network::new(cfg),
            rates: cfg.load.rates(n, cfg.lambda),
            dozing: vec![false; n as usize],
            requested_at: vec![None; n as usize],
            cancelled: HashSet::new(),
            draining: false,
            metrics: Metrics::default(),
            lost: 0,
            routed: 0,
            fences: Fences::new(),
            trace: VecDeque::new(),
            recorder: None,
            moved_at: None,
            nodes,
            cfg: cfg.clone(),
        };
        w.schedule_first_events();
        if cfg.record {
            w.recorder = Some(w.new_recorder());
        }
        Ok(w)
    }

    /// Every host's first arrival, failure and mode change.
    fn schedule_first_events(&mut self) {
        for i in 0..self.cfg.hosts {
            let h = NodeId(i);
            let t = exp(&mut self.rng, self.rates[i as usize]);
            self.q.schedule(t, Ev::Arrival(h));
            if let Some(f) = self.cfg.failures {
                let t = exp(&mut self.rng, 1.0 / mean_up(&f).max(1e-9));
                self.q.schedule(t, Ev::Fail(h));
            }
            if let (true, Some(m)) = (H::MODES, self.cfg.modes) {
                let t = exp(&mut self.rng, m.rate);
                self.q.schedule(t, Ev::ModeStart(h));
            }
        }
    }

    /// A recorder of the hosts where they start, and the side that scales their positions.
    fn new_recorder(&mut self) -> (crate::trace::Recorder, f64) {
        // At time 0 no host has finished its first pause: no random draw happens here, so a
        // recorded run is the same run.
        let at_start = self.net.positions(0.0);
        let side = at_start
            .iter()
            .fold(self.cfg.mobility.side, |m, p| m.max(p.0).max(p.1))
            .max(1e-9);
        let positions = at_start.iter().map(|p| (p.0 / side, p.1 / side)).collect();
        let views = self.nodes.iter().map(crate::trace::Visible::view).collect();
        let name = self.nodes.first().map_or(String::new(), |n| n.algorithm());
        let r = crate::trace::Recorder::new(&name, positions, Vec::new(), views)
            .with_radius(self.cfg.mobility.radius / side);
        (r, side)
    }

    /// A failed run now, with the last events.
    fn failure(&self, message: impl core::fmt::Display) -> Failure {
        let trace = self.trace.iter().map(|(t, ev)| format!("t={t:.4} {ev:?}"));
        Failure::new(self.cfg.seed, self.q.now(), message, trace.collect())
    }

    fn main_phase(&mut self) -> Result<(), Failure> {
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
    fn drain(&mut self) -> Result<(), Failure> {
        self.draining = true;
        self.net.drain();
        for i in 0..self.nodes.len() {
            let h = NodeId(i as u32);
            if !self.net.is_up(h) {
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
                    return Err(self.failure(format!(
                        "starvation: hosts still not served after the drain: {}",
                        stuck.join("; ")
                    )));
                }
            }
        }
        Ok(())
    }

    fn step(&mut self) -> Result<(), Failure> {
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
            H::check_safety(&self.nodes, &()).map_err(|e| self.failure(e))?;
        }
        Ok(())
    }

    fn dispatch(&mut self, ev: Ev<H::Message>) -> Result<(), Failure> {
        match ev {
            Ev::Deliver { from, to, msg } => self.arrive(from, to, msg)?,
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
            Ev::Fail(h) => self.fail(h),
            Ev::Recover(h) => {
                if !self.net.is_up(h) {
                    self.recover(h)?;
                }
            }
            Ev::ModeStart(h) => self.start_mode(h)?,
            Ev::ModeEnd(h) => self.end_mode(h)?,
        }
        Ok(())
    }

    /// A message reaches `to`, or is lost if `to` is down or away now.
    fn arrive(&mut self, from: NodeId, to: NodeId, msg: H::Message) -> Result<(), Failure> {
        if self.net.reachable(to) {
            return self.feed(to, Event::Receive { from, msg });
        }
        self.lost += 1;
        if let Some((r, _)) = &mut self.recorder {
            r.lost_oldest(from.0, to.0, self.q.now());
        }
        Ok(())
    }

    fn arrival(&mut self, h: NodeId) -> Result<(), Failure> {
        if self.draining {
            return Ok(());
        }
        if self.available(h) {
            self.requested_at[h.index()] = Some(self.q.now());
            self.feed(h, Event::Request(CsRequest::ONE))
        } else {
            // Busy, asleep or away: this arrival is lost; the process goes on.
            let t = exp(&mut self.rng, self.rates[h.index()]);
            self.q.schedule(t, Ev::Arrival(h));
            Ok(())
        }
    }

    /// Whether `h` is in its remainder section, up, awake and present.
    fn available(&self, h: NodeId) -> bool {
        let idle = self.nodes[h.index()].status() == Status::Remainder;
        idle && self.net.is_up(h) && !self.dozing[h.index()] && !self.net.is_away(h)
    }

    /// Host `h` fails (outside the drain), to recover after an exponential outage.
    fn fail(&mut self, h: NodeId) {
        if self.draining || !self.net.is_up(h) {
            return;
        }
        self.net.set_up(h, false);
        let down = self.cfg.failures.map_or(1.0, |f| f.mean_down);
        let t = exp(&mut self.rng, 1.0 / down.max(1e-9));
        self.q.schedule(t, Ev::Recover(h));
    }

    fn recover(&mut self, h: NodeId) -> Result<(), Failure> {
        self.net.set_up(h, true);
        if let Some(f) = self.cfg.failures {
            let present = !self.net.is_away(h) && !self.dozing[h.index()];
            if H::MODES && f.reconnect && present {
                self.feed(h, Event::Reconnect)?;
            }
            if !self.draining {
                let t = exp(&mut self.rng, 1.0 / mean_up(&f).max(1e-9));
                self.q.schedule(t, Ev::Fail(h));
            }
        }
        Ok(())
    }

    fn start_mode(&mut self, h: NodeId) -> Result<(), Failure> {
        let Some(m) = self.cfg.modes else {
            return Ok(());
        };
        if self.draining {
            return Ok(());
        }
        if !self.available(h) {
            let t = exp(&mut self.rng, m.rate);
            self.q.schedule(t, Ev::ModeStart(h));
            return Ok(());
        }
        if self.rng.random::<bool>() {
            self.dozing[h.index()] = true;
            self.feed(h, Event::Doze)?;
        } else {
            self.feed(h, Event::Disconnect)?;
            self.net.set_away(h, true);
        }
        let t = exp(&mut self.rng, 1.0 / m.mean_duration.max(1e-9));
        self.q.schedule(t, Ev::ModeEnd(h));
        Ok(())
    }

    fn end_mode(&mut self, h: NodeId) -> Result<(), Failure> {
        if self.dozing[h.index()] {
            self.dozing[h.index()] = false;
            self.feed(h, Event::Wake)?;
        } else if self.net.is_away(h) {
            self.net.set_away(h, false);
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
    fn feed(&mut self, h: NodeId, event: Event<H::Message>) -> Result<(), Failure> {
        let now = self.q.now();
        if let Some((r, _)) = &mut self.recorder {
            r.begin_event::<H>(now, h.0, &event);
        }
        let handling = event.name();
        let result = self.nodes[h.index()]
            .handle(event)
            .map(|a| a.collect::<Vec<Action<H::Message>>>());
        if let Some((r, _)) = &mut self.recorder {
            r.end_step(crate::trace::Visible::view(&self.nodes[h.index()]));
        }
        let actions =
            result.map_err(|e| self.failure(format!("{h:?} rejected a simulator event: {e}")))?;
        for action in actions {
            self.carry_out(h, action, handling)
                .map_err(|m| self.failure(m))?;
        }
        self.record_positions(now);
        Ok(())
    }

    fn carry_out(
        &mut self,
        h: NodeId,
        action: Action<H::Message>,
        handling: &str,
    ) -> Result<(), String> {
        match action {
            Action::Send { to, msg } => {
                self.send(h, to, msg);
                Ok(())
            }
            Action::EnterCritical { fence, .. } => self.enter(h, fence),
            Action::SetTimer { timer, after } => {
                self.q
                    .schedule(after as f64 / 1000.0, Ev::Timer { host: h, timer });
                Ok(())
            }
            Action::CancelTimer { timer } => {
                self.cancelled.insert((h, timer));
                Ok(())
            }
            Action::Anomaly { from, kind } => {
                let checked = self.cfg.check_invariants;
                let anomalies = &mut self.metrics.anomalies;
                anomalies.report::<H>(checked, h, from, kind, handling)
            }
            other => Err(format!(
                "{h:?} returned an action this simulator does not know: {other:?}"
            )),
        }
    }

    /// Count and route a message, and record it (lost at once, if it is).
    fn send(&mut self, h: NodeId, to: NodeId, msg: H::Message) {
        self.metrics.messages += 1;
        let id = self
            .recorder
            .as_mut()
            .map(|(r, _)| r.send(to.0, H::message_text(&msg)));
        let lost = self.lost;
        self.route(h, to, msg);
        if let (Some((r, _)), Some(id)) = (&mut self.recorder, id) {
            if self.lost > lost {
                r.lost(id, self.q.now());
            }
        }
    }

    /// `h` enters the critical section, if its fence is admitted.
    fn enter(&mut self, h: NodeId, fence: Fence) -> Result<(), String> {
        if let Err(highest) = self.fences.admit(fence) {
            return Err(format!("{h:?} entered with {fence:?}, not above {highest}"));
        }
        let now = self.q.now();
        let asked = self.requested_at[h.index()].take().unwrap_or(now);
        self.metrics.entered(now - asked, CsRequest::ONE);
        self.q.schedule(self.cfg.cs_duration, Ev::CsEnd(h));
        Ok(())
    }

    /// Where the hosts are, when routing has just placed them (so recording draws nothing
    /// the run would not), once per instant.
    fn record_positions(&mut self, now: Time) {
        let Some((r, side)) = &mut self.recorder else {
            return;
        };
        if let Some((_, pos)) = self.net.routed_positions().filter(|&(at, _)| at == now) {
            if self.moved_at != Some(now) {
                self.moved_at = Some(now);
                r.moved(pos.iter().map(|p| (p.0 / *side, p.1 / *side)).collect());
            }
        }
    }

    /// Hand a message to the network, which delivers, loses or parks it.
    fn route(&mut self, from: NodeId, to: NodeId, msg: H::Message) {
        match self.net.transit(from, to, self.q.now(), &mut self.rng) {
            Transit::Arrives { delay, hops } => {
                self.count_route(hops);
                self.q.schedule(delay, Ev::Deliver { from, to, msg });
            }
            Transit::Lost { hops } => {
                if let Some(hops) = hops {
                    self.count_route(hops);
                }
                self.lost += 1;
            }
            Transit::Parked { retry } => self.q.schedule(retry, Ev::Retry { from, to, msg }),
        }
    }

    /// A message found a route of `hops` hops.
    fn count_route(&mut self, hops: u32) {
        self.routed += 1;
        self.metrics.hops += u64::from(hops);
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

    /// Ricart–Agrawala with its anomalies read as suspect: a stand-in for an algorithm whose
    /// host reports a suspect anomaly.
    #[derive(Debug, Clone)]
    struct Strict(ricart_agrawala::Node);

    impl manet_mutex::Protocol for Strict {
        type Message = ricart_agrawala::Message;
        fn id(&self) -> NodeId {
            self.0.id()
        }
        fn status(&self) -> Status {
            self.0.status()
        }
        fn handle(
            &mut self,
            event: Event<Self::Message>,
        ) -> Result<manet_mutex::Actions<'_, Self::Message>, manet_mutex::Error> {
            self.0.handle(event)
        }
        fn anomaly_severity(_: manet_mutex::Anomaly) -> manet_mutex::Severity {
            manet_mutex::Severity::Suspect
        }
    }

    impl crate::trace::Visible for Strict {}

    impl crate::Plugin for Strict {
        type Shape = u32;
        type Params = HostParams;
        type InFlight = ();
        fn name(_: &HostParams) -> &'static str {
            "strict"
        }
        fn build(hosts: &u32, params: &HostParams) -> Result<Vec<Self>, manet_mutex::Error> {
            let nodes = ricart_agrawala::Node::build(hosts, params)?;
            Ok(nodes.into_iter().map(Strict).collect())
        }
        fn check_safety(nodes: &[Self], (): &()) -> Result<(), manet_mutex::Violation> {
            let nodes: Vec<_> = nodes.iter().map(|n| n.0.clone()).collect();
            ricart_agrawala::Node::check_safety(&nodes, &())
        }
    }

    impl Host for Strict {
        const MODES: bool = false;
    }

    /// Anomalies are counted by severity; under loss and host failures Ricart–Agrawala's are
    /// all noise, and a suspect one fails a checked run, naming the host, the kind and the
    /// event (unchecked, it is counted).
    #[test]
    fn anomalies_are_counted_and_a_suspect_one_fails_a_checked_run() {
        // Retransmissions before the REPLYs can come back: duplicates and late REPLYs.
        let mut cfg = RoutedConfig::paper(6, 0.5, 1.0, 3).with_paper_failures();
        (cfg.loss, cfg.retransmit_after) = (0.2, 0.02);
        let a = run::<ricart_agrawala::Node>(&cfg)
            .unwrap()
            .metrics
            .anomalies;
        assert!(a.noise > 0 && a.suspect == 0, "{a:?}");
        let failure = run::<Strict>(&cfg).unwrap_err();
        let named = failure.message.starts_with('n')
            && failure.message.contains(" reported a suspect anomaly: ")
            && failure.message.contains(", handling Receive");
        assert!(named, "{failure}");
        cfg.check_invariants = false;
        let counted = run::<Strict>(&cfg).unwrap().metrics.anomalies;
        assert_eq!((counted.noise, counted.suspect), (0, a.noise));
    }

    #[test]
    fn a_token_algorithm_is_not_run_here() {
        let cfg = RoutedConfig::paper(4, 0.5, 1.0, 1);
        let e = run_algorithm(Algorithm::Krl, &cfg).unwrap_err();
        assert!(e.message.contains("KRL runs on the token simulator"), "{e}");
    }

    #[test]
    fn a_trace_of_the_wrong_size_is_a_configuration_error() {
        let mut cfg = RoutedConfig::paper(4, 0.5, 1.0, 1);
        cfg.trace = Some(Arc::new(Trace::parse("$node_(1) set X_ 1").unwrap()));
        let e = run_algorithm(Algorithm::LookAhead, &cfg).unwrap_err();
        assert!(e.message.contains("2 nodes"), "{e}");
    }
}
