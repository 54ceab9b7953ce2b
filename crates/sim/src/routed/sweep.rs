//! The section V experiment: MPCS and HPCS against the number of hosts, per load level, load
//! pattern, failure setting and mobility level, for look-ahead beside Ricart–Agrawala.

use super::world::run_algorithm;
use super::RoutedConfig;
use crate::experiment::{parallel_map, Row};
use crate::{Algorithm, Failure};

/// How requests are spread over the hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LoadPattern {
    /// Every host requests at rate λ.
    Uniform,
    /// 20% of the hosts make 80% of the requests (same total rate as `Uniform`).
    HotSpot,
}

impl LoadPattern {
    /// Per-host request rates with mean `lambda`.
    pub fn rates(self, hosts: u32, lambda: f64) -> Vec<f64> {
        let n = hosts as usize;
        match self {
            LoadPattern::Uniform => vec![lambda; n],
            LoadPattern::HotSpot => {
                // 20% of the hosts (at least one) make 80% of the requests.
                let hot = ((n as f64 * 0.2).round() as usize).clamp(1, n);
                let total = lambda * n as f64;
                let cold = n - hot;
                (0..n)
                    .map(|i| {
                        if cold == 0 {
                            lambda
                        } else if i < hot {
                            0.8 * total / hot as f64
                        } else {
                            0.2 * total / cold as f64
                        }
                    })
                    .collect()
            }
        }
    }

    /// The name used in tables.
    pub fn name(self) -> &'static str {
        match self {
            LoadPattern::Uniform => "uniform",
            LoadPattern::HotSpot => "hot20/80",
        }
    }
}

/// The grid to sweep; every combination is run once per seed.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepConfig {
    /// Algorithms, run on identical configurations (those of the routed simulator).
    pub algorithms: Vec<Algorithm>,
    /// Numbers of hosts.
    pub hosts: Vec<u32>,
    /// Requests per host per second.
    pub lambdas: Vec<f64>,
    /// Load patterns.
    pub loads: Vec<LoadPattern>,
    /// Without and/or with the paper's 10% host failures.
    pub failures: Vec<bool>,
    /// Fractions of time hosts move (1.0, 0.5, 0.1 in the paper).
    pub mobility: Vec<f64>,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Critical-section entries per run.
    pub target_entries: u64,
    /// Replay this ns-2 trace (with this transmission radius, in metres) instead of the
    /// random-waypoint model; `hosts` must then be its node count, and `mobility` only
    /// labels the rows.
    pub trace: Option<(std::sync::Arc<crate::ns2::Trace>, f64)>,
}

impl Default for SweepConfig {
    /// The paper's full grid with one seed and 100 entries per run.
    fn default() -> Self {
        SweepConfig {
            algorithms: vec![Algorithm::LookAhead, Algorithm::RicartAgrawala],
            hosts: vec![4, 8, 12, 16, 20],
            lambdas: vec![1e-2, 1e-3, 1e-4],
            loads: vec![LoadPattern::Uniform, LoadPattern::HotSpot],
            failures: vec![false, true],
            mobility: vec![1.0, 0.5, 0.1],
            seeds: vec![1],
            target_entries: 100,
            trace: None,
        }
    }
}

/// Run the grid on up to `threads` threads, one [`Row`] per run (coordinates `hosts`,
/// `lambda`, `load_pattern`, `failures`, `mobility`; extra column `hops_per_routed_message`),
/// in grid order. Stops at the first failed run (an invariant violated, a suspect anomaly, a
/// starved host).
pub fn sweep(cfg: &SweepConfig, threads: usize) -> Result<Vec<Row>, Failure> {
    sweep_with(cfg, threads, || {})
}

/// [`sweep`], calling `on_run` after each run finishes (e.g. to advance a progress bar).
pub fn sweep_with(
    cfg: &SweepConfig,
    threads: usize,
    on_run: impl Fn() + Sync,
) -> Result<Vec<Row>, Failure> {
    parallel_map(&jobs(cfg), threads, |job| {
        let report = run_algorithm(job.algorithm, &job.run);
        on_run();
        Ok(job.row(&report?))
    })
    .into_iter()
    .collect()
}

/// One run of a sweep, and the coordinates its row shows.
struct Job {
    algorithm: Algorithm,
    load: LoadPattern,
    failures: bool,
    mobility: f64,
    run: RoutedConfig,
}

/// Every run of the grid, in grid order (the algorithms innermost, on identical runs).
fn jobs(cfg: &SweepConfig) -> Vec<Job> {
    let mut jobs = Vec::new();
    for &seed in &cfg.seeds {
        for &failures in &cfg.failures {
            for &mobility in &cfg.mobility {
                for &load in &cfg.loads {
                    for &lambda in &cfg.lambdas {
                        for &hosts in &cfg.hosts {
                            let point = Point {
                                seed,
                                failures,
                                mobility,
                                load,
                                lambda,
                                hosts,
                            };
                            let run = point.run(cfg);
                            jobs.extend(cfg.algorithms.iter().map(|&algorithm| Job {
                                algorithm,
                                load,
                                failures,
                                mobility,
                                run: run.clone(),
                            }));
                        }
                    }
                }
            }
        }
    }
    jobs
}

/// A point of the grid.
struct Point {
    seed: u64,
    failures: bool,
    mobility: f64,
    load: LoadPattern,
    lambda: f64,
    hosts: u32,
}

impl Point {
    /// The paper's run at this point, `cfg.target_entries` long.
    fn run(&self, cfg: &SweepConfig) -> RoutedConfig {
        let mut run = RoutedConfig::paper(self.hosts, self.lambda, self.mobility, self.seed);
        run.load = self.load;
        run.target_entries = cfg.target_entries;
        run.max_time =
            4.0 * cfg.target_entries as f64 / (f64::from(self.hosts.max(1)) * self.lambda);
        if self.failures {
            run = run.with_paper_failures();
        }
        if let Some((trace, radius)) = &cfg.trace {
            run.trace = Some(trace.clone());
            run.mobility.radius = *radius;
        }
        run
    }
}

impl Job {
    /// This run's row.
    fn row(&self, report: &super::Report) -> Row {
        // The look-ahead paper's Fig. 4 counts hops of messages that reach their host.
        let hops_per_message = report.metrics.hops as f64 / report.routed.max(1) as f64;
        Row {
            algorithm: self.algorithm.name().into(),
            params: vec![
                ("hosts", self.run.hosts.to_string()),
                ("lambda", self.run.lambda.to_string()),
                ("load_pattern", self.load.name().into()),
                ("failures", self.failures.to_string()),
                ("mobility", self.mobility.to_string()),
            ],
            seed: self.run.seed,
            summary: report.metrics.summary(),
            extra: vec![("hops_per_routed_message", format!("{hops_per_message:.4}"))],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_spot_gives_80_percent_of_the_load_to_20_percent_of_the_hosts() {
        let rates = LoadPattern::HotSpot.rates(20, 0.01);
        let total: f64 = rates.iter().sum();
        let hot: f64 = rates[..4].iter().sum();
        assert!((total - 0.2).abs() < 1e-12);
        assert!((hot / total - 0.8).abs() < 1e-12);
        assert_eq!(LoadPattern::Uniform.rates(3, 0.5), vec![0.5; 3]);
        // Tiny systems keep at least one hot host, and a single host takes everything.
        assert_eq!(LoadPattern::HotSpot.rates(1, 0.5), vec![0.5]);
        let four = LoadPattern::HotSpot.rates(4, 1.0);
        assert!((four[0] - 3.2).abs() < 1e-12 && (four[3] - 0.8 / 3.0).abs() < 1e-12);
    }
}
