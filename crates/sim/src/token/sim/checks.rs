//! The safety checks after each step, and the final ones.

use super::Sim;
use crate::link::LinkModel;
use crate::token::TokenAlgorithm;
use crate::Failure;

impl<P: TokenAlgorithm, L: LinkModel> Sim<P, L> {
    /// The safety check after a step: incremental (the touched nodes and the running tally),
    /// or full on the first step and every `full_check_every` steps. A failure of the
    /// incremental check runs the full one, so a violation is reported as the full check
    /// words it (and an incremental failure the full check does not confirm is a simulator
    /// bug, reported as such).
    pub(super) fn check_step(&mut self) -> Result<(), Failure> {
        let full = self.until_full_check == 0;
        if full {
            self.until_full_check = self.config.full_check_every;
        } else {
            self.until_full_check -= 1;
        }
        let incremental = if full { Ok(()) } else { self.check_touched() };
        self.touched.clear();
        if full || incremental.is_err() {
            self.full_check()?;
            if let Err(m) = incremental {
                return Err(self.failure(format!(
                    "simulator bug: the incremental safety check fails ({m}) but the full one passes"
                )));
            }
        }
        // (b) is a count kept up to date: checked after every step.
        self.check_faults()
    }

    /// The nodes this step touched, and the running tally (in fault mode, recovery's checks
    /// instead of the tally's: the number of tokens changes with faults).
    fn check_touched(&self) -> Result<(), manet_mutex::Violation> {
        self.touched
            .iter()
            .map(|&v| &self.nodes[v.index()])
            .filter(|v| self.checks_node(v))
            .try_for_each(|v| v.check_node())?;
        if self.faults.is_some() {
            return Ok(());
        }
        P::check_tally(&self.nodes, self.tally)
    }

    /// The full safety check, and a recount of the running tally against it. In fault mode:
    /// every node's own invariants, (b), and once quiet at most one token of each id per
    /// connected part.
    fn full_check(&self) -> Result<(), Failure> {
        if self.faults.is_some() {
            self.nodes
                .iter()
                .filter(|v| self.checks_node(v))
                .try_for_each(|v| v.check_node())
                .map_err(|m| self.failure(m))?;
            self.check_faults()?;
            self.check_parts()?;
        } else {
            P::check_safety(&self.nodes, &self.channels).map_err(|m| self.failure(m))?;
        }
        let mut recount = P::Tally::default();
        for node in &self.nodes {
            recount += node.tally();
        }
        for (_, _, msg) in self.channels.iter() {
            recount += P::message_tally(&self.config.params.settings, msg);
        }
        if recount != self.tally {
            return Err(self.failure(format!(
                "simulator bug: the running tally {:?} differs from a recount {recount:?}",
                self.tally
            )));
        }
        Ok(())
    }

    /// After settling: the full check once more (the final cross-check of the incremental
    /// ones), then the algorithm's checks of a drained network.
    pub(super) fn final_checks(&self) -> Result<(), Failure> {
        if self.config.check_every_step {
            self.full_check()?;
        }
        P::check_drained(&self.nodes, &self.channels, self.channels.is_empty())
            .map_err(|m| self.failure(m))
    }
}
