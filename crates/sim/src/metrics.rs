//! What a simulation run measures.

use std::collections::BTreeMap;

use manet_mutex::{Anomaly, CsRequest, NodeId, Protocol, Severity};

/// Counters and samples gathered during a run's measurement window.
///
/// **The window** is the same for every simulator and algorithm: from the start of the run
/// until every request issued has been served and released, i.e. the load phase (requests
/// arrive) plus the drain (no new requests; the waiting ones are served). What the protocol
/// does after that (the token simulator lets in-flight messages settle before its final
/// checks; KRLF tokens circulate there with nobody asking) is not measured. So every request
/// issued is counted exactly once, with its whole wait, and every message counted was sent
/// while some request was outstanding or about to be issued. Only [`Metrics::events`] and
/// [`Metrics::wall_seconds`], which measure the simulator rather than the algorithm, and
/// [`Metrics::anomalies`] and [`Metrics::recovery`], which are about correctness and faults
/// rather than cost, cover the whole run.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// Critical-section entries (one per request issued).
    pub cs_entries: u64,
    /// Waiting time of every entry (request to entry), in time units.
    pub waits: Vec<f64>,
    /// The request behind each entry of `waits` (resources and priority), same order.
    pub requests: Vec<CsRequest>,
    /// Resources in use integrated over virtual time (resource·time units).
    pub resource_time: f64,
    /// Protocol messages sent.
    pub messages: u64,
    /// Hops travelled by protocol messages (routed mode; equals `messages` on neighbour links).
    pub hops: u64,
    /// Height raises (partial reversals) performed by token algorithms.
    pub raises: u64,
    /// Topology changes (link failures and formations) applied.
    pub link_changes: u64,
    /// Simulator events processed, in the whole run (window and settling).
    pub events: u64,
    /// Anomalies the nodes reported, in the whole run, by severity.
    pub anomalies: Anomalies,
    /// Faults injected and what token recovery did about them, in the whole run (all zero
    /// without recovery).
    pub recovery: RecoveryCounts,
    /// Virtual time at the end of the window (the utilization's denominator).
    pub sim_time: f64,
    /// Wall-clock seconds the run took (measured by the caller, not asserted anywhere).
    pub wall_seconds: f64,
    /// Of [`Metrics::wall_seconds`], the part spent building the network before the first
    /// event (the token simulator: its nodes and links; 0 where not measured).
    pub build_seconds: f64,
}

/// A summary of [`Metrics`] for tables and CSV.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// Critical-section entries.
    pub cs_entries: u64,
    /// Mean wait per entry.
    pub mean_wait: f64,
    /// 99th-percentile wait per entry.
    pub p99_wait: f64,
    /// Largest wait.
    pub max_wait: f64,
    /// Messages per entry.
    pub messages_per_cs: f64,
    /// Hops per entry.
    pub hops_per_cs: f64,
    /// Height raises per link change.
    pub raises_per_link_change: f64,
    /// Simulator events processed (each followed by an invariant check when checks are on).
    pub events: u64,
    /// Simulator events per wall-clock second.
    pub events_per_second: f64,
    /// Anomalies reported (not a CSV column).
    pub anomalies: Anomalies,
}

/// Anomalies reported ([`manet_mutex::Action::Anomaly`]), counted by their severity as the
/// reporting algorithm reads them ([`manet_mutex::Protocol::anomaly_severity`]), over the
/// whole run: unlike the measured metrics, warm-up, drain and settling count too, since a
/// suspect one fails a checked run whenever it comes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Anomalies {
    /// [`Severity::Noise`]: what runs within the algorithm's contract produce.
    pub noise: u64,
    /// [`Severity::Suspect`] (and any graver severity a later version adds): never produced
    /// within the contract.
    pub suspect: u64,
}

impl Anomalies {
    /// Count one anomaly of `severity`.
    pub fn count(&mut self, severity: Severity) {
        if severity.is_noise() {
            self.noise += 1;
        } else {
            self.suspect += 1;
        }
    }

    /// Count an anomaly `node` reported about `from`'s input while handling a `handling`
    /// event, as `P` reads it. In a `checked` run a suspect one is also the run's failure,
    /// named here: the simulators inject no fault the algorithms' contracts exclude, so it
    /// means a bug in the algorithm or in the simulator.
    pub(crate) fn report<P: Protocol>(
        &mut self,
        checked: bool,
        node: NodeId,
        from: NodeId,
        kind: Anomaly,
        handling: &str,
    ) -> Result<(), String> {
        let severity = P::anomaly_severity(kind);
        self.count(severity);
        if checked && !severity.is_noise() {
            return Err(format!(
                "{node:?} reported a suspect anomaly: {kind:?} about {from:?}'s input, handling {handling}"
            ));
        }
        Ok(())
    }
}

impl core::ops::AddAssign for Anomalies {
    fn add_assign(&mut self, other: Anomalies) {
        self.noise += other.noise;
        self.suspect += other.suspect;
    }
}

/// Faults injected into a token-network run and what token recovery did (issue 23), over the
/// whole run: every count is about correctness or recovery, so warm-up, drain and settling
/// count, as for [`Anomalies`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecoveryCounts {
    /// Hosts crashed.
    pub crashes: u64,
    /// Crashed hosts restarted.
    pub restarts: u64,
    /// Partitions made.
    pub partitions: u64,
    /// Tokens lost to faults: held by a host that crashed, or in flight on a link that a
    /// crash or a partition cut.
    pub tokens_lost: u64,
    /// Tokens made again (`Report::TokenRegenerated`).
    pub regenerated: u64,
    /// Tokens moved to a new generation after the resource refused their fence
    /// (`Report::TokenRenumbered`).
    pub renumbered: u64,
    /// Tokens of an older generation destroyed (`Report::TokenDestroyed`).
    pub destroyed: u64,
    /// Entries whose lease ended while the host was in the critical section
    /// (`Action::LeaseExpired`).
    pub lease_expired: u64,
    /// Entries the protected resource refused because a newer generation of their token had
    /// been admitted: the fence rule at work (any other refusal fails the run).
    pub refused_stale: u64,
    /// Entries admitted by the protected resource (with `refused_stale`, every entry: a second
    /// count of [`Metrics::cs_entries`], kept where the fences are checked).
    pub admitted: u64,
    /// Entries that left more than `k` hosts acting while the network had been connected and
    /// unchanged for the quiet time (counted in a run without checks; a checked run fails).
    pub overlaps: u64,
    /// For each token lost to a fault that was used again: the time from its loss to the next
    /// entry with a token of its id, in time units.
    pub recover_times: Vec<f64>,
    /// For each token lost to a fault and made again: the time from its loss to the first
    /// regeneration of its id after it (the part of [`RecoveryCounts::recover_times`] that
    /// recovery bounds by a silence and a claim wait; the rest is service).
    pub regen_times: Vec<f64>,
}

impl RecoveryCounts {
    /// The mean and the largest time to recover, or `None` if no lost token was used again.
    pub fn recover(&self) -> Option<(f64, f64)> {
        mean_max(&self.recover_times)
    }

    /// The mean and the largest time to regenerate, or `None` if no lost token was made again.
    pub fn regen(&self) -> Option<(f64, f64)> {
        mean_max(&self.regen_times)
    }
}

/// The mean and the largest of `xs`, or `None` for no samples.
fn mean_max(xs: &[f64]) -> Option<(f64, f64)> {
    (!xs.is_empty()).then(|| (mean(xs), xs.iter().copied().fold(f64::MIN, f64::max)))
}

impl Metrics {
    /// Critical-section entries per time unit of the window (0 for an empty window).
    pub fn availability(&self) -> f64 {
        if self.sim_time > 0.0 {
            self.cs_entries as f64 / self.sim_time
        } else {
            0.0
        }
    }

    /// Record a critical-section entry for `request` after waiting `wait` time units.
    pub fn entered(&mut self, wait: f64, request: CsRequest) {
        self.cs_entries += 1;
        self.waits.push(wait);
        self.requests.push(request);
    }

    /// Mean resources in use divided by `k`, over the simulated time.
    pub fn utilization(&self, k: u32) -> f64 {
        if self.sim_time <= 0.0 || k == 0 {
            0.0
        } else {
            self.resource_time / (self.sim_time * f64::from(k))
        }
    }

    /// Mean and maximum wait per class, where `class` maps a request to its key (e.g. its
    /// priority or its resource count): `key -> (entries, mean wait, max wait)`.
    pub fn wait_by<K: Ord>(&self, class: impl Fn(&CsRequest) -> K) -> BTreeMap<K, (u64, f64, f64)> {
        let mut acc: BTreeMap<K, (u64, f64, f64)> = BTreeMap::new();
        for (w, r) in self.waits.iter().zip(&self.requests) {
            let e = acc.entry(class(r)).or_insert((0, 0.0, 0.0));
            e.0 += 1;
            e.1 += w;
            e.2 = e.2.max(*w);
        }
        for e in acc.values_mut() {
            e.1 /= e.0 as f64;
        }
        acc
    }

    /// Summarise the run.
    pub fn summary(&self) -> Summary {
        let per_cs = |x: u64| {
            if self.cs_entries == 0 {
                0.0
            } else {
                x as f64 / self.cs_entries as f64
            }
        };
        Summary {
            cs_entries: self.cs_entries,
            mean_wait: mean(&self.waits),
            p99_wait: percentile(&self.waits, 0.99),
            max_wait: self.waits.iter().copied().fold(0.0, f64::max),
            messages_per_cs: per_cs(self.messages),
            hops_per_cs: per_cs(self.hops),
            raises_per_link_change: if self.link_changes == 0 {
                0.0
            } else {
                self.raises as f64 / self.link_changes as f64
            },
            events: self.events,
            anomalies: self.anomalies,
            events_per_second: if self.wall_seconds > 0.0 {
                self.events as f64 / self.wall_seconds
            } else {
                0.0
            },
        }
    }
}

/// The mean of `xs` and the half-width of its 95% confidence interval (Student's t with
/// `n - 1` degrees of freedom; runs over seeds are independent samples). The half-width is 0
/// for fewer than two samples, where no interval can be estimated.
pub fn mean_ci95(xs: &[f64]) -> (f64, f64) {
    let m = mean(xs);
    if xs.len() < 2 {
        return (m, 0.0);
    }
    let n = xs.len() as f64;
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, t975(xs.len() - 1) * (var / n).sqrt())
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom (tabulated to
/// 30, then the normal 1.96 approached as `1.96 + 2.4 / df`, within 0.5% of the true value).
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => 1.96 + 2.4 / df as f64,
    }
}

/// Arithmetic mean (0 for no samples).
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// The `q`-quantile by the nearest-rank method (0 for no samples).
pub fn percentile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_divides_by_entries() {
        let mut m = Metrics::default();
        for (w, h) in [(1.0, 1), (2.0, 2), (3.0, 1), (10.0, 2)] {
            m.entered(w, CsRequest::resources(h));
        }
        assert_eq!(m.wait_by(|r| r.resources)[&2], (2, 6.0, 10.0));
        m.resource_time = 30.0;
        m.sim_time = 10.0;
        assert_eq!(m.utilization(3), 1.0);
        m.messages = 8;
        let s = m.summary();
        assert_eq!(s.cs_entries, 4);
        assert_eq!(s.mean_wait, 4.0);
        assert_eq!(s.messages_per_cs, 2.0);
        assert_eq!(s.p99_wait, 10.0);
        assert_eq!(s.max_wait, 10.0);
        assert_eq!(percentile(&[5.0, 1.0, 3.0], 0.5), 3.0);
        assert_eq!(Metrics::default().summary().mean_wait, 0.0);
    }

    #[test]
    fn anomalies_are_counted_by_severity() {
        let mut a = Anomalies::default();
        for s in [Severity::Noise, Severity::Suspect, Severity::Noise] {
            a.count(s);
        }
        a += Anomalies {
            noise: 1,
            suspect: 0,
        };
        assert_eq!((a.noise, a.suspect), (3, 1));
    }

    /// Checked by hand: samples 1, 2, 3, 4 have mean 2.5, sample standard deviation
    /// sqrt(5/3) = 1.29099, standard error 0.645497, t(3) = 3.182, half-width 2.05397.
    #[test]
    fn confidence_interval_by_hand() {
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        assert!((h - 2.05397).abs() < 1e-4, "{h}");
        assert_eq!(mean_ci95(&[7.0]), (7.0, 0.0));
        assert_eq!(mean_ci95(&[]), (0.0, 0.0));
        // Large samples: the interval tends to 1.96 standard errors.
        assert!((t975(1000) - 1.9624).abs() < 0.01);
        assert!((t975(30) - 2.042).abs() < 1e-9 && t975(31) < t975(30));
    }
}
