//! Runs of the token simulator: hand-computed metrics, the drain, replayed traces, the
//! incremental checks, the cache look-ahead, link models and anomalies.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::topology::Graph;
use crate::{Dist, Metrics};
use manet_mutex::{prioritized, reverse_link, NodeId};

/// A 12-node network under load with link changes (cut-offs allowed when `connected` is
/// false), its safety checked after every step.
fn config<S>(settings: S, holders: Vec<NodeId>, seed: u64, connected: bool) -> Config<Params<S>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let graph = Graph::random_connected(12, 20, &mut rng);
    let mut c = Config::new(graph, Params::new(settings, holders), seed);
    c.workload.lambda_req = 0.2;
    c.lambda_mob = 0.1;
    c.keep_connected = connected;
    c.duration = 300.0;
    c
}

/// Two nodes on one link, one token at node 0, checks on, and requests arriving almost
/// at once after each release (rate 1e9): the schedule is known by hand. Node 0 enters
/// at time 0 holding the token; from then on every entry costs exactly a REQUEST, the
/// TOKEN and its TOKEN-ACK, and the two nodes alternate: each waits 3 time units (its
/// request 1 to arrive, the holder's remaining 1 in the critical section, the token 1
/// to come back), except node 1's first wait of 2, and the resource is in use one time
/// unit in every two.
fn alternating_pair(forwarding: bool, settle_steps: Option<usize>) -> Metrics {
    let graph = Graph::from_edges(2, &[(NodeId(0), NodeId(1))]);
    let settings = reverse_link::Settings::new(1).with_forwarding(forwarding);
    let mut c = Config::new(graph, Params::first_nodes(settings, 1), 3);
    c.workload.lambda_req = 1e9;
    c.duration = 200.0;
    if let Some(steps) = settle_steps {
        c.settle_steps = steps;
    }
    run::<reverse_link::Node>(c).unwrap().metrics
}

#[test]
fn metrics_of_a_hand_computed_run() {
    let m = alternating_pair(false, None);
    let entries = m.cs_entries;
    // One entry per two time units over the 200-unit load phase, plus the drain's.
    assert!((100..=103).contains(&entries), "{entries}");
    assert_eq!(m.messages, 3 * (entries - 1));
    assert_eq!(m.hops, m.messages);
    assert_eq!((m.raises, m.link_changes), (0, 0));
    assert_eq!(m.waits.len() as u64, entries);
    assert!(m.waits[0] < 1e-6 && (m.waits[1] - 2.0).abs() < 1e-6);
    assert!(m.waits[2..].iter().all(|w| (w - 3.0).abs() < 1e-6));
    let s = m.summary();
    assert_eq!(
        s.messages_per_cs,
        3.0 * (entries - 1) as f64 / entries as f64
    );
    assert!((s.max_wait - 3.0).abs() < 1e-6 && (s.p99_wait - 3.0).abs() < 1e-6);
    // The window ends at the last release: in use one unit out of two, all along.
    assert!(
        (m.utilization(1) - 0.5).abs() < 0.01,
        "{}",
        m.utilization(1)
    );
    assert!(
        (m.sim_time - 2.0 * entries as f64).abs() < 3.0,
        "{}",
        m.sim_time
    );
}

/// The settle phase after the window is not measured: the same run with no settling
/// measures exactly the same, though with forwarding (the token circulates with nobody
/// asking) the settling runs until its bound. Before this was defined, KRLF's messages
/// per entry counted the whole settle phase (about twelve times too many at 30 nodes).
#[test]
fn settling_is_not_measured() {
    for forwarding in [false, true] {
        let settled = alternating_pair(forwarding, None);
        let cut = alternating_pair(forwarding, Some(0));
        assert_eq!(settled.cs_entries, cut.cs_entries);
        assert_eq!(settled.waits, cut.waits);
        assert_eq!((settled.messages, settled.hops), (cut.messages, cut.hops));
        assert_eq!(settled.raises, cut.raises);
        assert_eq!(settled.resource_time, cut.resource_time);
        assert_eq!(settled.sim_time, cut.sim_time);
        if forwarding {
            assert_eq!(settled.events, cut.events + 200, "50·2² settle steps");
        }
    }
}

#[test]
fn a_run_with_no_requests_measures_nothing() {
    let graph = Graph::from_edges(3, &[(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))]);
    let settings = reverse_link::Settings::new(1).with_forwarding(true);
    let mut c = Config::new(graph, Params::first_nodes(settings, 1), 1);
    c.workload.lambda_req = 0.0;
    let m = run::<reverse_link::Node>(c).unwrap().metrics;
    assert_eq!((m.cs_entries, m.messages), (0, 0));
    let s = m.summary();
    assert_eq!(
        (s.messages_per_cs, s.mean_wait, s.max_wait),
        (0.0, 0.0, 0.0)
    );
    assert_eq!(m.utilization(1), 0.0);
}

/// The committed ns-2 trace (20 random-waypoint nodes) replayed through KRL and the
/// prioritized algorithm, every invariant checked after every step: the links the
/// simulator applies follow the trace (a failure late only while its link is busy).
#[test]
fn an_ns2_trace_replays_through_both_token_algorithms() {
    let trace = crate::ns2::Trace::parse(include_str!("../../../../examples/data/waypoint-20.ns2"))
        .unwrap();
    let radius = 200.0;
    fn config<S>(
        trace: &crate::ns2::Trace,
        settings: S,
        holders: Vec<NodeId>,
    ) -> Config<Params<S>> {
        let replay = trace.replay(200.0, 600.0);
        let graph = Graph::from_edges(trace.nodes(), &replay.initial);
        let mut c = Config::new(graph, Params::new(settings, holders), 5);
        c.duration = 600.0;
        c.workload.lambda_req = 0.05;
        c.replay = replay.changes;
        c
    }
    let changes = trace.link_changes(radius, 600.0).len() as u64;
    assert!(changes > 50, "{changes}");
    let krl = config(
        &trace,
        reverse_link::Settings::new(3),
        vec![NodeId(0), NodeId(1), NodeId(2)],
    );
    let out = run::<reverse_link::Node>(krl).unwrap();
    // Every replayed change counts twice (both ends); the drain may add joins.
    assert!(
        out.metrics.link_changes >= 2 * changes - 20,
        "{}",
        out.metrics.link_changes
    );
    assert!(out.metrics.cs_entries > 150, "{:?}", out.metrics.summary());
    let prio = config(
        &trace,
        prioritized::Settings::new(4, prioritized::Policy::Equal),
        vec![NodeId(0)],
    );
    let out = run::<prioritized::Node>(prio).unwrap();
    assert!(out.metrics.cs_entries > 150, "{:?}", out.metrics.summary());
}

#[test]
fn the_build_time_is_part_of_the_run_time() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let graph = Graph::random_connected(20, 40, &mut rng);
    let settings = reverse_link::Settings::new(2);
    let mut config = Config::new(graph, Params::first_nodes(settings, 2), 4);
    config.duration = 50.0;
    let m = run::<reverse_link::Node>(config).unwrap().metrics;
    assert!(0.0 <= m.build_seconds && m.build_seconds <= m.wall_seconds);
}

/// With a full check after every step, the running tally must equal a recount after every
/// step (the full check compares them), and the outcome must not depend on how often the
/// full check runs.
#[test]
fn the_running_tally_matches_a_recount_after_every_step() {
    for seed in 0..8 {
        for forwarding in [false, true] {
            let settings = reverse_link::Settings::new(3).with_forwarding(forwarding);
            let holders = vec![NodeId(0), NodeId(1), NodeId(2)];
            let mut every = config(settings, holders.clone(), seed, seed % 2 == 0);
            every.full_check_every = 0;
            let mut once = every.clone();
            once.full_check_every = u64::MAX;
            let a = run::<reverse_link::Node>(every).expect("safe");
            let b = run::<reverse_link::Node>(once).expect("safe");
            assert_eq!(a.metrics.events, b.metrics.events);
            assert_eq!(a.metrics.waits, b.metrics.waits);
        }
        let settings = prioritized::Settings::new(4, prioritized::Policy::Explicit);
        let mut c = config(settings, vec![NodeId(0)], seed, seed % 2 == 1);
        c.workload.resources = Dist::Uniform { lo: 1, hi: 4 };
        c.full_check_every = 0;
        run::<prioritized::Node>(c).expect("safe");
    }
}

/// The cache hints change no result: the same runs (KRL and KRLF with link changes and
/// cut-offs, the prioritized algorithm with several resources, checks on) with the hints
/// on and off end with the same metrics, nodes and topology.
#[test]
fn looking_ahead_for_the_cache_changes_nothing() {
    fn same<P: TokenAlgorithm + PartialEq>(on: Config<Params<P::Settings>>) {
        let mut off = on.clone();
        off.prefetch_from = usize::MAX;
        let outcomes = [on, off].map(|c| {
            let mut o = run::<P>(c).expect("safe");
            o.metrics.wall_seconds = 0.0;
            o.metrics.build_seconds = 0.0;
            o
        });
        let [a, b] = &outcomes;
        assert!(a.metrics.events > 1_000, "a run worth comparing");
        assert_eq!(format!("{:?}", a.metrics), format!("{:?}", b.metrics));
        assert!(a.nodes == b.nodes);
        assert_eq!(a.graph, b.graph);
    }
    for seed in 0..6 {
        let settings = reverse_link::Settings::new(2).with_forwarding(seed % 2 == 1);
        let mut c = config(settings, vec![NodeId(0), NodeId(1)], seed, seed % 3 != 0);
        c.prefetch_from = 0;
        same::<reverse_link::Node>(c);
        let settings = prioritized::Settings::new(4, prioritized::Policy::Explicit);
        let mut c = config(settings, vec![NodeId(0)], seed, true);
        c.workload.resources = Dist::Uniform { lo: 1, hi: 4 };
        c.prefetch_from = 0;
        same::<prioritized::Node>(c);
    }
}

/// A link model of the tests: each message takes a random delay in `[0.5, 1.5)`, so
/// messages on one link would overtake each other if the simulator did not keep it FIFO.
#[derive(Debug, Clone, Copy)]
struct Jitter;

impl crate::link::LinkModel for Jitter {
    fn transit(
        &mut self,
        _: NodeId,
        _: NodeId,
        _: crate::Time,
        rng: &mut dyn rand::RngCore,
    ) -> crate::link::Transit {
        use rand::Rng;
        crate::link::Transit::Arrives {
            delay: 0.5 + rng.random::<f64>(),
            hops: 1,
        }
    }
}

/// A link model that loses every message.
#[derive(Debug, Clone, Copy)]
struct Void;

impl crate::link::LinkModel for Void {
    fn transit(
        &mut self,
        _: NodeId,
        _: NodeId,
        _: crate::Time,
        _: &mut dyn rand::RngCore,
    ) -> crate::link::Transit {
        crate::link::Transit::Lost { hops: None }
    }
}

/// A link model plugs in without touching the simulator: the default one given explicitly
/// changes nothing; random delays (every link still FIFO) keep KRL and the prioritized
/// algorithm safe, every step checked, and drain; a model that loses messages is refused.
#[test]
fn link_models_plug_in() {
    use crate::link::FixedDelay;
    for seed in 0..4 {
        let settings = reverse_link::Settings::new(2);
        let c = config(settings, vec![NodeId(0), NodeId(1)], seed, true);
        let same = c.clone().with_link(FixedDelay { delay: 1.0 });
        let a = run::<reverse_link::Node>(c.clone()).expect("safe").metrics;
        let b = run::<reverse_link::Node>(same).expect("safe").metrics;
        assert_eq!((a.events, &a.waits), (b.events, &b.waits));
        let jittered = run::<reverse_link::Node>(c.with_link(Jitter)).expect("safe");
        assert!(jittered.metrics.cs_entries > 50);
        let settings = prioritized::Settings::new(4, prioritized::Policy::Explicit);
        let c = config(settings, vec![NodeId(0)], seed, false).with_link(Jitter);
        run::<prioritized::Node>(c).expect("safe");
    }
    let settings = reverse_link::Settings::new(1);
    let lossy = config(settings, vec![NodeId(0)], 1, true).with_link(Void);
    let failure = run::<reverse_link::Node>(lossy).unwrap_err();
    assert!(failure.message.contains("did not deliver"), "{failure}");
}

/// KRL with its anomalies read as suspect: a stand-in for an algorithm whose node reports
/// a suspect anomaly.
#[derive(Debug, Clone, PartialEq)]
struct Strict(reverse_link::Node);

impl manet_mutex::Protocol for Strict {
    type Message = reverse_link::Message;
    fn id(&self) -> NodeId {
        self.0.id()
    }
    fn status(&self) -> manet_mutex::Status {
        self.0.status()
    }
    fn handle(
        &mut self,
        event: manet_mutex::Event<Self::Message>,
    ) -> Result<manet_mutex::Actions<'_, Self::Message>, manet_mutex::Error> {
        self.0.handle(event)
    }
    fn anomaly_severity(_: manet_mutex::Anomaly) -> manet_mutex::Severity {
        manet_mutex::Severity::Suspect
    }
}

impl crate::trace::Visible for Strict {}

impl crate::Plugin for Strict {
    type Shape = Graph;
    type Params = Params<reverse_link::Settings>;
    type InFlight = Channels<reverse_link::Message>;
    fn name(_: &Self::Params) -> &'static str {
        "strict"
    }
    fn build(graph: &Graph, params: &Self::Params) -> Result<Vec<Self>, manet_mutex::Error> {
        let nodes = reverse_link::Node::build(graph, params)?;
        Ok(nodes.into_iter().map(Strict).collect())
    }
    fn check_safety(
        nodes: &[Self],
        in_flight: &Self::InFlight,
    ) -> Result<(), manet_mutex::Violation> {
        let nodes: Vec<_> = nodes.iter().map(|n| n.0.clone()).collect();
        reverse_link::Node::check_safety(&nodes, in_flight)
    }
}

impl TokenAlgorithm for Strict {
    type Settings = reverse_link::Settings;
    type Tally = <reverse_link::Node as TokenAlgorithm>::Tally;
    fn tally(&self) -> Self::Tally {
        self.0.tally()
    }
    fn message_tally(settings: &Self::Settings, msg: &Self::Message) -> Self::Tally {
        reverse_link::Node::message_tally(settings, msg)
    }
    fn check_node(&self) -> Result<(), manet_mutex::Violation> {
        self.0.check_node()
    }
    fn check_tally(nodes: &[Self], total: Self::Tally) -> Result<(), manet_mutex::Violation> {
        let nodes: Vec<_> = nodes.iter().map(|n| n.0.clone()).collect();
        reverse_link::Node::check_tally(&nodes, total)
    }
    fn check_drained(
        nodes: &[Self],
        in_flight: &Self::InFlight,
        quiescent: bool,
    ) -> Result<(), manet_mutex::Violation> {
        let nodes: Vec<_> = nodes.iter().map(|n| n.0.clone()).collect();
        reverse_link::Node::check_drained(&nodes, in_flight, quiescent)
    }
}

/// Anomalies are counted by severity; KRL's under load and link changes are all noise, and
/// a suspect one fails a checked run, naming the node, the kind and the event (unchecked,
/// it is counted).
#[test]
fn anomalies_are_counted_and_a_suspect_one_fails_a_checked_run() {
    let settings = reverse_link::Settings::new(3);
    let mut c = config(settings, vec![NodeId(0), NodeId(1), NodeId(2)], 3, true);
    (c.workload.lambda_req, c.lambda_mob) = (1.0, 1.0);
    let a = run::<reverse_link::Node>(c.clone())
        .expect("safe")
        .metrics
        .anomalies;
    assert!(a.noise > 0 && a.suspect == 0, "{a:?}");
    let failure = run::<Strict>(c.clone()).unwrap_err();
    let named = failure.message.starts_with('n')
        && failure.message.contains(" reported a suspect anomaly: ")
        && failure.message.contains(", handling ");
    assert!(named, "{failure}");
    let mut unchecked = c;
    unchecked.check_every_step = false;
    let counted = run::<Strict>(unchecked)
        .expect("counted only")
        .metrics
        .anomalies;
    assert_eq!((counted.noise, counted.suspect), (0, a.noise));
}
