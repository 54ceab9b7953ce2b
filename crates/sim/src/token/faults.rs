//! Crashes and partitions injected into a token-network run (issue 23), for algorithms that
//! recover lost tokens ([`super::TokenAlgorithm::recovery`]).

use crate::Time;

/// The faults of a run: hosts crash (and maybe restart with empty state), and the network
/// splits into two halves that merge again. [`Faults::NONE`], the default, injects nothing and
/// leaves a run exactly as it was before faults existed.
///
/// What a fault does, as the crate's failure model says (`docs/ALGORITHMS.md`, F2–F6):
///
/// - **Crash.** Each live host crashes at `crash_rate` (an exponential time between crashes,
///   drawn from a random stream of its own, so two algorithms run with one seed see the same
///   crash times). Its state is gone, and so is every message in flight to or from it (a
///   token among them: the "token lost on a breaking link" case); its neighbours learn
///   `LinkDown` at once. A pending request of the host is dropped unserved.
/// - **Restart.** With `restart_after`, the host comes back that long after its crash with
///   empty state (no token, no neighbour), and `LinkUp` on every link it has then, both ways.
///   Without it (`None`) a crashed host stays down: crash-stop.
/// - **Partition.** At `partition_rate` (per time unit, network-wide) the nodes are split into
///   two random halves for `partition_for`: every link between the halves goes down at once
///   (`LinkDown` at both ends, what was in flight on it lost), and comes back up (`LinkUp`)
///   when the partition ends. One partition stands at a time; one due while another stands
///   does not happen.
///
/// Crashes and partitions happen in the load phase only; restarts and merges due after it
/// still happen, so the drain serves every live requester. Mobility's link changes go on
/// under faults: they change the links as radios see them, and a link is up for the nodes
/// only while both its ends are live and on one side of a standing partition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Faults {
    /// Crashes per live host per time unit (0: none).
    pub crash_rate: f64,
    /// How long a crashed host stays down before it restarts with empty state; `None`: for
    /// good (crash-stop).
    pub restart_after: Option<Time>,
    /// Partitions per time unit (0: none).
    pub partition_rate: f64,
    /// How long each partition stands.
    pub partition_for: Time,
}

impl Default for Faults {
    fn default() -> Self {
        Faults::NONE
    }
}

impl Faults {
    /// No faults.
    pub const NONE: Faults = Faults {
        crash_rate: 0.0,
        restart_after: None,
        partition_rate: 0.0,
        partition_for: 0.0,
    };

    /// Whether any fault can happen.
    pub fn any(&self) -> bool {
        self.crash_rate > 0.0 || self.partition_rate > 0.0
    }

    /// Whether every value is usable; the problem otherwise.
    pub(crate) fn check(&self) -> Result<(), String> {
        let rate = |x: f64| x.is_finite() && x >= 0.0;
        if !rate(self.crash_rate) {
            return Err(format!("crash rate {}: must be ≥ 0", self.crash_rate));
        }
        if !rate(self.partition_rate) {
            return Err(format!(
                "partition rate {}: must be ≥ 0",
                self.partition_rate
            ));
        }
        if let Some(after) = self.restart_after.filter(|&t| !rate(t)) {
            return Err(format!("restart delay {after}: must be ≥ 0"));
        }
        if self.partition_rate > 0.0
            && !(self.partition_for.is_finite() && self.partition_for > 0.0)
        {
            return Err(format!(
                "partition duration {}: must be > 0",
                self.partition_for
            ));
        }
        Ok(())
    }
}
