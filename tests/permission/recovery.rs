//! Failures and recovery (issue 23): exclusion by a failure detector (`Event::Suspect`,
//! `Event::Trust`) or by a host's own timeout, leases, majority mode and restarts under a new
//! incarnation, in both permission algorithms (`docs/ALGORITHMS.md`, C1–C9).

mod bounds;
pub(crate) mod common;
mod majority;
mod properties;
mod regression;
mod restart;
mod rules;
mod timed;
