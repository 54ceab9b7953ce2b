//! Routed mode for the permission-based algorithms (`look_ahead`, `ricart_agrawala`).
//!
//! Any host can message any host. A message's delay and hop count are the shortest-path length
//! in the topology at send time (random-waypoint hosts, unit-disk links), so messages overtake
//! each other naturally. A message to an unreachable host is lost or parked until the host is
//! reachable ([`Unreachable`]); any message may also be lost with probability `loss`. Hosts fail
//! as a Poisson process with exponential durations; look-ahead hosts can also doze and
//! disconnect. Requests arrive per host as a Poisson process (one open request at a time).
//!
//! Timers are set by the cores in milliseconds of simulated time.
//!
//! The invariants are checked after every step ([`crate::Plugin::check_safety`]), and so is
//! every anomaly a host reports: a suspect one fails the run, as none of these faults is
//! outside the permission algorithms' contract. A run ends with a drain (no new requests,
//! failures, loss or mode changes; everyone back) that must serve every waiting host. A
//! [`crate::Failure`] carries the seed and the trace of the last events.

mod check;
mod network;
mod sweep;
mod world;

pub use check::{Host, HostParams};
pub use sweep::{sweep, sweep_with, LoadPattern, SweepConfig};
pub use world::{run, run_algorithm, Report};

use super::waypoint::WaypointConfig;

/// What happens to a message whose destination is unreachable at send time.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Unreachable {
    /// It is lost (the protocol's retransmission recovers).
    Drop,
    /// It waits at the sender and is retried every `retry` seconds until it can be routed.
    Park {
        /// Seconds between routing attempts.
        retry: f64,
    },
}

/// Host failures: each host alternates exponential up and down periods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failures {
    /// Long-run fraction of time a host is down (the paper's 10% is `0.1`).
    pub fraction: f64,
    /// Mean down time, in seconds.
    pub mean_down: f64,
    /// Report recovery to a look-ahead host as `Event::Reconnect` (an accidental
    /// disconnection); otherwise recovery is silent and only timeouts repair the damage.
    pub reconnect: bool,
}

/// Doze and voluntary disconnection schedule (look-ahead only): a host in its remainder
/// section starts one at rate `rate` per second, half of them dozes, for an exponential time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeChanges {
    /// Mode changes per host per second.
    pub rate: f64,
    /// Mean time dozing or disconnected, in seconds.
    pub mean_duration: f64,
}

/// A routed-mode run.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutedConfig {
    /// Number of hosts.
    pub hosts: u32,
    /// Seed of everything random in the run (and of the look-ahead initial matrix).
    pub seed: u64,
    /// Requests per host per second (the mean; see `load`).
    pub lambda: f64,
    /// How the request load is spread over the hosts.
    pub load: LoadPattern,
    /// Critical-section duration, in seconds.
    pub cs_duration: f64,
    /// Delay per hop, in seconds.
    pub hop_delay: f64,
    /// REQUEST retransmission timeout, in seconds.
    pub retransmit_after: f64,
    /// Probability that a message is lost in transit.
    pub loss: f64,
    /// Policy for unreachable destinations.
    pub unreachable: Unreachable,
    /// Host failures, if any.
    pub failures: Option<Failures>,
    /// Doze/disconnect schedule, if any (ignored by algorithms without modes).
    pub modes: Option<ModeChanges>,
    /// Mobility: the random-waypoint model, whose `radius` also decides links when `trace`
    /// replaces its movement.
    pub mobility: WaypointConfig,
    /// Node movement replayed from an ns-2 mobility file instead of the random-waypoint
    /// model (its times in seconds; it must describe `hosts` nodes). Hosts stand still after
    /// the trace ends. A partition the trace leaves would then never heal and no permission
    /// algorithm could finish, so in the drain (no new requests) a host that is out of reach
    /// is reached in one hop, as if the partition had healed.
    pub trace: Option<std::sync::Arc<crate::ns2::Trace>>,
    /// Stop generating requests after this many critical-section entries...
    pub target_entries: u64,
    /// ...or at this simulated time, whichever comes first.
    pub max_time: f64,
    /// Simulated seconds the drain may take before a waiting host counts as starved.
    pub drain_time: f64,
    /// Check the invariants after every step, and fail on a suspect anomaly.
    pub check_invariants: bool,
    /// Events kept for a failure report.
    pub trace_len: usize,
    /// Record the whole run for the viewer ([`crate::trace`]): [`Report::recording`], or the
    /// failure's. Hosts are drawn where they are (positions normalized by the territory),
    /// links are the pairs within the radius.
    pub record: bool,
}

impl RoutedConfig {
    /// The paper's setting for `hosts` hosts at `lambda` requests per host per second with
    /// hosts moving `moving_fraction` of the time; no failures, 2% message loss (what the
    /// paper measured from link failures), 100 ms critical sections, 2 s retransmission.
    pub fn paper(hosts: u32, lambda: f64, moving_fraction: f64, seed: u64) -> Self {
        let target_entries = 100;
        RoutedConfig {
            hosts,
            seed,
            lambda,
            load: LoadPattern::Uniform,
            cs_duration: 0.1,
            hop_delay: 0.005,
            retransmit_after: 2.0,
            loss: 0.02,
            unreachable: Unreachable::Drop,
            failures: None,
            modes: None,
            mobility: WaypointConfig::paper(hosts, moving_fraction),
            trace: None,
            target_entries,
            max_time: 4.0 * target_entries as f64 / (f64::from(hosts.max(1)) * lambda),
            drain_time: 5_000.0,
            check_invariants: true,
            trace_len: 200,
            record: false,
        }
    }

    /// The paper's 10% host-failure setting (mean outage 5 s, silent recovery).
    pub fn with_paper_failures(mut self) -> Self {
        self.failures = Some(Failures {
            fraction: 0.1,
            mean_down: 5.0,
            reconnect: false,
        });
        self
    }
}
