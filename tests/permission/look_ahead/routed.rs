//! The routed simulator: runs are deterministic, the sweep covers the paper's grid, look-ahead
//! beats Ricart–Agrawala on messages, and a violation reports the seed and the trace.

use manet_mutex::look_ahead;
use manet_mutex::{Actions, Error, Event, NodeId, Protocol, Status, Violation};
use manet_mutex::{Anomaly, Severity};
use manet_mutex_sim::routed::{
    run, run_algorithm, sweep, Failures, Host, HostParams, LoadPattern, ModeChanges, RoutedConfig,
    SweepConfig, Unreachable,
};
use manet_mutex_sim::{Algorithm, Plugin};

#[test]
fn runs_are_deterministic_per_seed() {
    let cfg = RoutedConfig::paper(8, 1e-2, 0.5, 9);
    let a = run_algorithm(Algorithm::LookAhead, &cfg).unwrap();
    let b = run_algorithm(Algorithm::LookAhead, &cfg).unwrap();
    assert_eq!(a.metrics.messages, b.metrics.messages);
    assert_eq!(a.metrics.waits, b.metrics.waits);
    assert!(a.metrics.cs_entries >= cfg.target_entries);
}

#[test]
fn look_ahead_needs_fewer_messages_and_hops_than_ricart_agrawala() {
    for load in [LoadPattern::Uniform, LoadPattern::HotSpot] {
        let mut cfg = RoutedConfig::paper(12, 1e-3, 1.0, 4);
        cfg.load = load;
        let la = run_algorithm(Algorithm::LookAhead, &cfg)
            .unwrap()
            .metrics
            .summary();
        let ra = run_algorithm(Algorithm::RicartAgrawala, &cfg)
            .unwrap()
            .metrics
            .summary();
        assert!(
            la.messages_per_cs < ra.messages_per_cs,
            "{load:?}: {la:?} vs {ra:?}"
        );
        assert!(la.hops_per_cs < ra.hops_per_cs);
        // Ricart–Agrawala never needs fewer than 2(n − 1) messages per entry.
        assert!(ra.messages_per_cs >= 22.0);
    }
}

#[test]
fn hot_spot_load_is_cheaper_for_look_ahead() {
    let mut cfg = RoutedConfig::paper(20, 1e-3, 1.0, 2);
    let uniform = run_algorithm(Algorithm::LookAhead, &cfg)
        .unwrap()
        .metrics
        .summary();
    cfg.load = LoadPattern::HotSpot;
    let hot = run_algorithm(Algorithm::LookAhead, &cfg)
        .unwrap()
        .metrics
        .summary();
    assert!(hot.messages_per_cs < uniform.messages_per_cs);
}

#[test]
fn parked_messages_failures_with_reconnect_and_modes_drain() {
    let mut cfg = RoutedConfig::paper(6, 1e-2, 0.1, 5);
    cfg.unreachable = Unreachable::Park { retry: 1.0 };
    cfg.failures = Some(Failures {
        fraction: 0.2,
        mean_down: 5.0,
        reconnect: true,
    });
    cfg.modes = Some(ModeChanges {
        rate: 0.02,
        mean_duration: 20.0,
    });
    cfg.loss = 0.1;
    let r = run::<look_ahead::Node>(&cfg).unwrap();
    assert!(r.metrics.cs_entries >= cfg.target_entries);
    assert!(r.lost > 0);
}

#[test]
fn small_sweep_returns_one_row_per_combination() {
    let cfg = SweepConfig {
        hosts: vec![4, 8],
        lambdas: vec![1e-2],
        mobility: vec![1.0],
        failures: vec![false, true],
        target_entries: 20,
        ..SweepConfig::default()
    };
    let rows = sweep(&cfg, 2).unwrap();
    assert_eq!(rows.len(), 2 * 2 * 2 * 2);
    assert!(rows
        .iter()
        .all(|r| r.summary.cs_entries >= 20 && r.summary.hops_per_cs > 0.0));
    let csv = manet_mutex_sim::experiment::to_csv(&rows);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("algorithm,hosts,lambda,load_pattern,failures,mobility,seed,"));
    assert!(lines
        .next()
        .unwrap()
        .starts_with("look_ahead,4,0.01,uniform,false,1,1,"));
    let again = sweep(&cfg, 1).unwrap();
    let key = |r: &manet_mutex_sim::experiment::Row| {
        (
            r.params.clone(),
            r.summary.cs_entries,
            r.summary.messages_per_cs.to_bits(),
        )
    };
    assert_eq!(
        rows.iter().map(key).collect::<Vec<_>>(),
        again.iter().map(key).collect::<Vec<_>>(),
        "results do not depend on the number of threads"
    );
}

/// A node that claims to be in the critical section whenever it is waiting: the checker must
/// catch the resulting double occupancy and report seed and trace.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Liar(look_ahead::Node);

impl Protocol for Liar {
    type Message = look_ahead::Message;
    fn id(&self) -> NodeId {
        self.0.id()
    }
    fn status(&self) -> Status {
        match self.0.status() {
            Status::Waiting => Status::Critical,
            s => s,
        }
    }
    fn handle(&mut self, event: Event<Self::Message>) -> Result<Actions<'_, Self::Message>, Error> {
        self.0.handle(event)
    }
    /// A look-ahead node's reading: the liar lies about its status only.
    fn anomaly_severity(kind: Anomaly) -> Severity {
        look_ahead::Node::anomaly_severity(kind)
    }
}

impl manet_mutex_sim::trace::Visible for Liar {}

impl Plugin for Liar {
    type Shape = u32;
    type Params = HostParams;
    type InFlight = ();
    fn name(_: &HostParams) -> &'static str {
        "liar"
    }
    fn build(hosts: &u32, params: &HostParams) -> Result<Vec<Self>, Error> {
        let nodes = look_ahead::Node::build(hosts, params)?;
        Ok(nodes.into_iter().map(Liar).collect())
    }
    /// Mutual exclusion as the liar's statuses tell it.
    fn check_safety(nodes: &[Self], (): &()) -> Result<(), Violation> {
        match nodes
            .iter()
            .filter(|n| n.status() == Status::Critical)
            .count()
        {
            0 | 1 => Ok(()),
            inside => Err(Violation::new(
                "mutual-exclusion",
                None,
                format!("{inside} hosts are in the critical section together"),
            )),
        }
    }
}

impl Host for Liar {
    const MODES: bool = true;
}

#[test]
fn a_violation_reports_the_seed_and_the_event_trace() {
    let mut cfg = RoutedConfig::paper(4, 0.5, 1.0, 77);
    cfg.trace_len = 10;
    let v = run::<Liar>(&cfg).unwrap_err();
    assert_eq!(v.seed, 77);
    assert!(
        v.message.contains("critical section together"),
        "{}",
        v.message
    );
    assert!(!v.trace.is_empty() && v.trace.len() <= 10);
    let shown = v.to_string();
    assert!(shown.starts_with("invariant violated at t=") && shown.contains("(seed 77)"));
    assert!(shown.contains("Arrival") || shown.contains("Deliver"));
}
