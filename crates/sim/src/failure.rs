//! What a simulation reports when a run fails.

use std::fmt;

use super::Time;

/// A failed run: an invariant broken, a suspect anomaly in a checked run, a starved or
/// deadlocked node, a message storm, or a configuration the simulator cannot run; everything
/// needed to replay it.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The seed of the run.
    pub seed: u64,
    /// Virtual time of the failure.
    pub time: Time,
    /// What went wrong.
    pub message: String,
    /// The last events before it, oldest first.
    pub trace: Vec<String>,
    /// The whole run up to the failure, for the viewer ([`crate::trace::html::page`]), if
    /// the run was recording (`sim::token::Config::record`).
    pub recording: Option<Box<crate::trace::Recording>>,
}

impl Failure {
    /// A failure at `time`: `message` is the broken invariant ([`manet_mutex::Violation`]) or
    /// what else went wrong; `trace` the last events, oldest first.
    pub(crate) fn new(
        seed: u64,
        time: Time,
        message: impl fmt::Display,
        trace: Vec<String>,
    ) -> Self {
        Failure {
            seed,
            time,
            message: message.to_string(),
            trace,
            recording: None,
        }
    }

    /// A failure at time 0, before the first event (a network that cannot be built, a
    /// configuration the simulator cannot run).
    pub(crate) fn at_start(seed: u64, message: String) -> Self {
        Failure::new(seed, 0.0, message, Vec::new())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "invariant violated at t={} (seed {}): {}",
            self.time, self.seed, self.message
        )?;
        for line in &self.trace {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}
