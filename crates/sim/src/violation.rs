//! What a simulation reports when an invariant breaks.

use std::fmt;

use super::Time;

/// An invariant violation: everything needed to replay it.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The seed of the run.
    pub seed: u64,
    /// Virtual time of the violation.
    pub time: Time,
    /// What went wrong.
    pub message: String,
    /// The last events before it, oldest first.
    pub trace: Vec<String>,
    /// The whole run up to the violation, for the viewer ([`crate::trace::html::page`]), if
    /// the run was recording (`sim::token::Config::record`).
    pub recording: Option<Box<crate::trace::Recording>>,
}

impl fmt::Display for Violation {
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

impl std::error::Error for Violation {}
