//! What the simulated applications ask for, and when.

use rand::Rng;

use manet_mutex::CsRequest;

/// A small distribution over `u32` values.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Dist {
    /// Always this value.
    Const(u32),
    /// Uniform over `lo..=hi`.
    Uniform {
        /// Smallest value.
        lo: u32,
        /// Largest value.
        hi: u32,
    },
}

impl Dist {
    /// Draw a value.
    pub fn sample(&self, rng: &mut impl Rng) -> u32 {
        match *self {
            Dist::Const(v) => v,
            Dist::Uniform { lo, hi } => rng.random_range(lo.min(hi)..=hi.max(lo)),
        }
    }
}

/// Request arrivals and critical-section lengths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Workload {
    /// Poisson request rate per node (`λ_req`): the time from leaving the critical section to
    /// the next request is exponential with mean `1 / λ_req`.
    pub lambda_req: f64,
    /// Time spent in the critical section.
    pub cs_duration: f64,
    /// Resources per request (`h`).
    pub resources: Dist,
    /// Priority per request.
    pub priority: Dist,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            lambda_req: 0.1,
            cs_duration: 1.0,
            resources: Dist::Const(1),
            priority: Dist::Const(0),
        }
    }
}

impl Workload {
    /// Draw a request.
    pub fn request(&self, rng: &mut impl Rng) -> CsRequest {
        CsRequest {
            resources: self.resources.sample(rng),
            priority: self.priority.sample(rng),
        }
    }
}
